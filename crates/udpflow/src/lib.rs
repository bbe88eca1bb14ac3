//! bbrlab's transport over real UDP: the simulator's sans-IO sender and receiver (the transport
//! crate: segment sequence numbers, SACK-style ACKs, RACK-TLP/RTO loss recovery, PRR, delayed
//! ACKs, pacing) driven by a real clock and a UDP socket instead of the simulator's event loop,
//! with any of bbrlab's algorithms as the congestion control — an RMDT-like user-space transport
//! (the Anhalt BQL paper ran BQL inside RMDT over UDP).
//!
//! One process per half, as the emu backend starts them in its namespaces
//! (`python -m bbrlab.emu.udpflow --config JSON`, or the `bbrlab-udpflow` binary):
//!
//! ```text
//!   sender (role "send")                              receiver (role "recv")
//!   hello ───────────────────────────────────────────▶ learns the peer, answers
//!   ◀────────────────────────────────────── hello-ack   (the RTT seeds srtt/min_rtt, as a
//!   Sender::poll_transmit → data ────────────────────▶  SYN-ACK does: set_handshake_rtt)
//!                                                    Receiver::on_data / on_timeout → ACK
//!   Sender::on_ack ◀──────────────────────────── ack
//!   Sender::on_timeout at next_timeout()
//!   fin (sized transfer acknowledged) ───────────────▶ exits
//! ```
//!
//! The loop is the simulator's, with the wall clock for the event heap: receive what the
//! socket holds (`recvmmsg`), fire due timers, send what the sender lets go now (one UDP GSO
//! message per offload burst, several per `sendmmsg`), then sleep in `ppoll` until the next
//! deadline (the pacer's release time, a recovery timer, a status line) or a datagram. Pacing
//! is the sender's own EDT pacer at the algorithm's pacing rate, released in the bursts Linux's
//! TSO autosizing allows (as the simulator does); no qdisc paces below it. The wire format is in
//! `wire.rs`; the transport's time is CLOCK_MONOTONIC less the run's t0.
//!
//! Output: JSON lines on stdout. Every `status_interval_ns` the sender writes the simulator's
//! timeseries quantities from its own state (cwnd, pacing rate, srtt/min_rtt, the per-ACK RTT
//! samples since the last line as a sum and count, the algorithm's phase, bandwidth estimate and
//! gains) and the receiver its delivered bytes; at the end each writes `{"final": {...}}` with
//! its counters and the CPU time its thread used. The emu backend reads both into its tables.
//!
//! What it leaves out: ECN (no ECT codepoint is set, no CE read: algorithms that need ECN are
//! refused), receive offload (each datagram is one `on_data`), and the kernel's TSQ (the
//! socket buffer is large; the stack below a UDP socket queues little).

mod recv;
mod send;
pub mod sock;
pub mod wire;

use serde::Deserialize;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

pub use recv::{run_receiver, ReceiverReport};
pub use send::{run_sender, SenderReport};

/// The process name once running (what `ps` and the cleanup tests see).
pub const PROCESS_NAME: &str = "bbrlab-udpflow";

/// Which half this process runs.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Send,
    Recv,
}

fn default_mss() -> u32 {
    transport::DEFAULT_MSS_BYTES
}
fn default_initial_cwnd() -> u32 {
    10
}
fn default_status_interval() -> u64 {
    10_000_000
}
fn default_min_rto() -> u64 {
    200_000_000
}
fn yes() -> bool {
    true
}

/// One half's configuration (`--config` JSON). Times are ns from `t0_ns`, an absolute
/// CLOCK_MONOTONIC time (0: when the process starts), the same in every namespace.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub role: Role,
    /// Address to bind, "ip:port" (port 0: any).
    pub local: String,
    /// The receiver's address (sender only).
    #[serde(default)]
    pub peer: Option<String>,
    /// The congestion-control algorithm (a registry name; sender only).
    #[serde(default)]
    pub cc: String,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "default_mss")]
    pub mss_bytes: u32,
    #[serde(default = "default_initial_cwnd")]
    pub initial_cwnd_segs: u32,
    /// Payload bytes to send (None: bulk until `stop_ns` or `end_ns`).
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default)]
    pub t0_ns: u64,
    #[serde(default)]
    pub start_ns: u64,
    /// Stop writing new data (the flow's `stop`).
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// The process ends here whatever is left (the run's duration).
    pub end_ns: u64,
    #[serde(default = "default_status_interval")]
    pub status_interval_ns: u64,
    /// Force pacing on or off (None: as the algorithm asks).
    #[serde(default)]
    pub pacing: Option<bool>,
    #[serde(default)]
    pub max_pacing_rate_bps: Option<u64>,
    #[serde(default = "default_min_rto")]
    pub min_rto_ns: u64,
    #[serde(default)]
    pub sndbuf_bytes: Option<u64>,
    #[serde(default = "yes")]
    pub delayed_ack: bool,
    #[serde(default)]
    pub rcvbuf_bytes: Option<u64>,
    /// Send offload bursts as UDP GSO messages when the kernel allows (false: one datagram per
    /// message, still batched by sendmmsg).
    #[serde(default = "yes")]
    pub gso: bool,
    /// Receiver, for tests: discard every Nth data datagram received, as a lossy path would.
    #[serde(default)]
    pub drop_every: Option<u64>,
    /// SCHED_FIFO priority for the process (0: normal scheduling). A normally scheduled half on
    /// a loaded 2-core machine answered 1–2 ms late, an RTT excess a delay-based algorithm (BQL)
    /// reads as its own queue (docs/emu.md); the emu backend runs it just below the emulator.
    #[serde(default)]
    pub realtime_priority: i32,
}

/// CLOCK_MONOTONIC, ns.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time (user, system) the calling thread has used, ns.
pub fn thread_cpu_ns() -> (u64, u64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

/// Write one JSON line (status output is best effort: a closed pipe does not stop the flow).
pub(crate) fn emit(out: &mut dyn Write, v: &serde_json::Value) {
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

/// Sleep until absolute monotonic time `until_ns`, waking early if `stop` is set.
pub(crate) fn sleep_until(until_ns: u64, stop: &AtomicBool) {
    loop {
        let now = mono_ns();
        if now >= until_ns || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_nanos((until_ns - now).min(50_000_000)));
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn fail(msg: String) -> i32 {
    eprintln!("{PROCESS_NAME}: {msg}");
    2
}

/// Entry point of the binary and of `bbrlab._core.udpflow_main(argv)`: `--config JSON` (or
/// `--config @file`). Names the process, asks for SIGKILL when its parent dies
/// (PR_SET_PDEATHSIG: the runner owns it), turns SIGTERM/SIGINT/SIGHUP into a clean stop with
/// the final line, and runs the configured half. Exit status 0, or 2 with one line on stderr.
/// Call it only as the whole job of a process.
pub fn run_main(args: Vec<String>) -> i32 {
    let text = match args.iter().position(|a| a == "--config") {
        Some(p) if p + 1 < args.len() => match args[p + 1].strip_prefix('@') {
            Some(path) => match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) => return fail(format!("cannot read {path}: {e}")),
            },
            None => args[p + 1].clone(),
        },
        _ => return fail("usage: bbrlab-udpflow --config '<json>' | --config @file".into()),
    };
    let cfg: Config = match serde_json::from_str(&text) {
        Ok(c) => c,
        Err(e) => return fail(format!("bad config: {e}")),
    };
    unsafe {
        let name = std::ffi::CString::new(PROCESS_NAME).unwrap();
        libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // Pacing and delayed-ACK timers are sub-millisecond; the default 50 us slack is not.
        libc::prctl(libc::PR_SET_TIMERSLACK, 1);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
        if libc::getppid() == 1 {
            return 1;
        }
        if cfg.realtime_priority > 0 {
            let sp = libc::sched_param { sched_priority: cfg.realtime_priority };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &sp) != 0 {
                eprintln!(
                    "{PROCESS_NAME}: no real-time priority: {}",
                    std::io::Error::last_os_error()
                );
            }
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let r = match cfg.role {
        Role::Send => run_sender(&cfg, &STOP, &mut out).map(|_| ()),
        Role::Recv => run_receiver(&cfg, &STOP, &mut out).map(|_| ()),
    };
    match r {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}
