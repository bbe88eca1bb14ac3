//! The emulator's entry point, [`run_main`]: parse the command line, set up the process, run the
//! event loop until told to stop, write the final statistics.
//!
//! One entry point, two ways in: the `bbrlab-linkemu` binary (`src/main.rs`, for development)
//! and `bbrlab._core.linkemu_main(argv)`, which the Python package starts as a child process
//! (`python -m bbrlab.emu.linkemu`; see `python/bbrlab/emu/launch.py`). Either way the emulator
//! owns its process: it names it `bbrlab-linkemu` (so `ps`, `top` and the tests see that name
//! rather than `python3`), asks for SIGTERM when its parent dies (PR_SET_PDEATHSIG), sets its
//! timer slack to 1 ns, takes SCHED_FIFO priority if asked, and blocks SIGTERM/SIGINT/SIGHUP to
//! read them from a signalfd. None of that is undone on return; call it only as the whole job of
//! a process, from the thread that will run the loop.
//!
//! Usage: `bbrlab-linkemu --config '<json>'` (or `--config @file`). It creates the TUN devices
//! (non-persistent: they vanish when this process exits), prints one JSON line
//! `{"ready": true, ...}` on stdout and forwards packets until stdin says `stop`, stdin closes, or
//! SIGTERM/SIGINT/SIGHUP arrives. Commands on stdin: `start <t0_monotonic_ns>` zeroes the counters
//! and starts the statistics grid at t0; `stop` writes the final line and exits. Statistics: JSON
//! lines appended to `stats_path` (the final line goes to stdout when there is none).
//!
//! Single-threaded epoll loop. It sleeps in epoll_pwait2 (timerfd armed at the wake time on
//! kernels without it) until the next deadline rounded up to `timer_quantum_ns` (default 20 us:
//! one wake-up per packet cost a clock-event reprogramming each, which under virtualization is a
//! VM exit, and kept the emulator ~95 % busy at 1 Gbit/s), with the timer slack set to 1 ns,
//! optionally followed by a busy-poll for the last `spin_ns` before a deadline. Departure and
//! delivery times stay exact in the link model; only the wake-up is coarsened.

use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::forward::{now_ns, sample_json, Emu, Forwarder, LoopStats, Pool};
use crate::graph::{GraphEmu, GraphSpec};
use crate::tun::open_tun;
use crate::wait::Waiter;
use crate::{Link, LinkParams};

/// The process name the emulator gives itself (at most 15 bytes: the kernel's TASK_COMM_LEN).
pub const PROCESS_NAME: &str = "bbrlab-linkemu";

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// TUN names of the senders (one per sender host; a dumbbell).
    #[serde(default)]
    senders: Vec<String>,
    /// IPv4 address of each sender (dotted), to route reverse-direction packets.
    #[serde(default)]
    sender_addrs: Vec<String>,
    #[serde(default)]
    receiver: String,
    #[serde(default)]
    forward: LinkParams,
    #[serde(default)]
    reverse: LinkParams,
    /// A graph instead of the dumbbell (`graph.rs`): its hosts, links and routes. The dumbbell's
    /// fields above are then left out.
    #[serde(default)]
    graph: Option<GraphSpec>,
    /// Senders (indices) whose flow is sent as L4S: their ECT(0) packets are rewritten to ECT(1)
    /// as the emulator reads them (Linux TCP sends ECT(0); docs/emu.md).
    #[serde(default)]
    ect1_senders: Vec<u16>,
    /// Per-sender extra one-way delay (each direction gets this much).
    #[serde(default)]
    sender_extra_delay_ns: Vec<u64>,
    #[serde(default = "one")]
    seed: u64,
    #[serde(default = "hundred_ms")]
    stats_interval_ns: u64,
    #[serde(default)]
    stats_path: Option<String>,
    #[serde(default = "mtu")]
    mtu: usize,
    /// Busy-poll this long before a deadline instead of sleeping (0 = timerfd only).
    #[serde(default)]
    spin_ns: u64,
    /// SCHED_FIFO priority for the emulator (0 = normal scheduling). Under CPU contention a
    /// normally scheduled emulator wakes milliseconds late; real-time priority keeps it on time.
    /// It never busy-waits longer than `spin_ns`, and the kernel's RT throttling still applies.
    #[serde(default)]
    realtime_priority: i32,
    /// Timer granularity: timed wake-ups are rounded up to a multiple of this (0 or 1 = exact),
    /// so at high rates one wake-up delivers several packets (see [`crate::wake_time`]).
    #[serde(default = "timer_quantum")]
    timer_quantum_ns: u64,
}
fn timer_quantum() -> u64 {
    crate::DEFAULT_TIMER_QUANTUM_NS
}
fn one() -> u64 {
    1
}
fn hundred_ms() -> u64 {
    100_000_000
}
fn mtu() -> usize {
    1500
}

pub(crate) fn errno_str() -> String {
    std::io::Error::last_os_error().to_string()
}

pub(crate) fn parse_ipv4(s: &str) -> Result<u32, String> {
    let v: Vec<u32> = s.split('.').filter_map(|x| x.parse().ok()).collect();
    if v.len() != 4 || v.iter().any(|&x| x > 255) {
        return Err(format!("bad IPv4 address {s:?}"));
    }
    Ok((v[0] << 24) | (v[1] << 16) | (v[2] << 8) | v[3])
}

/// Run the emulator with command line `args` (`args[0]` is the program name); returns the exit
/// status: 0 after `stop`/end of stdin/a signal, 1 when the parent was already gone, 2 on an
/// error (one line `bbrlab-linkemu: ...` on stderr).
pub fn run_main(args: Vec<String>) -> i32 {
    let cfg_text = match args.iter().skip(1).position(|a| a == "--config").map(|p| p + 1) {
        Some(p) if p + 1 < args.len() => {
            let v = &args[p + 1];
            match v.strip_prefix('@') {
                Some(path) => match std::fs::read_to_string(path) {
                    Ok(t) => t,
                    Err(e) => return fail(format!("cannot read {path}: {e}")),
                },
                None => v.clone(),
            }
        }
        _ => {
            if args.iter().any(|a| a == "--version") {
                println!("{PROCESS_NAME} {}", env!("CARGO_PKG_VERSION"));
                return 0;
            }
            return fail("usage: bbrlab-linkemu --config '<json>' | --config @file".into());
        }
    };
    let cfg: Config = match serde_json::from_str(&cfg_text) {
        Ok(c) => c,
        Err(e) => return fail(format!("bad config: {e}")),
    };
    match run(cfg) {
        Ok(code) => code,
        Err(msg) => fail(msg),
    }
}

fn fail(msg: String) -> i32 {
    eprintln!("{PROCESS_NAME}: {msg}");
    2
}

/// Owned descriptors of one run; closing them (on any return) removes the TUN devices.
struct Fds {
    /// The TUN devices, in the forwarder's input order (dumbbell: the senders', then the
    /// receiver's; graph: one per host).
    tuns: Vec<OwnedFd>,
    _signal: OwnedFd,
    _timer: OwnedFd,
    _epoll: OwnedFd,
}

fn owned(fd: RawFd, what: &str) -> Result<OwnedFd, String> {
    if fd < 0 {
        return Err(format!("{what}: {}", errno_str()));
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Process-wide set-up (see the module header). Returns whether real-time priority was granted,
/// or None when the parent is already gone.
fn setup_process(realtime_priority: i32) -> Option<bool> {
    unsafe {
        let name = std::ffi::CString::new(PROCESS_NAME).unwrap();
        libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0);
        // Die with the parent (the Python runner), and let timers fire on time.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        libc::prctl(libc::PR_SET_TIMERSLACK, 1);
        if libc::getppid() == 1 {
            return None;
        }
    }
    if realtime_priority <= 0 {
        return Some(false);
    }
    // pid 0 = the calling thread: the one that runs the loop.
    let sp = libc::sched_param { sched_priority: realtime_priority };
    Some(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &sp) } == 0)
}

/// Signals -> signalfd, so SIGTERM/SIGINT/SIGHUP end the loop cleanly with a final stats line.
/// Blocked with pthread_sigmask (this thread; the process has no other thread that could take
/// them: the binary's main thread, or a `python -m bbrlab.emu.linkemu` that started none).
fn signal_fd() -> Result<OwnedFd, String> {
    let fd = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC)
    };
    owned(fd, "signalfd")
}

// epoll data tags: 0..n the forwarder's inputs (TUNs), then stdin, the timer and the signals.
const TAG_STDIN: usize = 0;
const TAG_TIMER: usize = 1;
const TAG_SIGNAL: usize = 2;

fn run(mut cfg: Config) -> Result<i32, String> {
    if let Some(g) = cfg.graph.take() {
        return run_graph(cfg, g);
    }
    if cfg.senders.len() != cfg.sender_addrs.len() || cfg.senders.is_empty() {
        return Err("senders and sender_addrs must be non-empty lists of the same length".into());
    }
    if let Some(s) = cfg.ect1_senders.iter().find(|&&s| s as usize >= cfg.senders.len()) {
        return Err(format!("ect1_senders: no sender {s}"));
    }
    let n = cfg.senders.len();
    // The bottleneck's two directions first: a bad parameter (a trace's line) is one line
    // before any device exists.
    let fwd = Link::try_new(cfg.forward.clone(), cfg.seed).map_err(|e| format!("forward: {e}"))?;
    let rev = Link::try_new(cfg.reverse.clone(), cfg.seed ^ 0x5851_F42D_4C95_7F2D)
        .map_err(|e| format!("reverse: {e}"))?;
    let Some(rt_ok) = setup_process(cfg.realtime_priority) else {
        return Ok(1);
    };
    let names: Vec<&String> = cfg.senders.iter().chain(std::iter::once(&cfg.receiver)).collect();
    let fds = Fds::open(&names)?;
    let emu = new_emu(&cfg, &fds, fwd, rev)?;
    event_loop(&cfg, fds, emu, n, rt_ok)
}

/// A graph run: its links built first (a bad parameter is one line before any device exists),
/// one TUN per host.
fn run_graph(cfg: Config, g: GraphSpec) -> Result<i32, String> {
    if !cfg.senders.is_empty() || !cfg.receiver.is_empty() {
        return Err("graph: a graph run names its hosts, not senders and a receiver".into());
    }
    let links = g.build_links(cfg.seed)?;
    let Some(rt_ok) = setup_process(cfg.realtime_priority) else {
        return Ok(1);
    };
    let names: Vec<&String> = g.hosts.iter().map(|h| &h.tun).collect();
    let fds = Fds::open(&names)?;
    let fd_list: Vec<RawFd> = fds.tuns.iter().map(|f| f.as_raw_fd()).collect();
    let n = g.hosts.len();
    let emu = GraphEmu::new(g, links, fd_list, Pool::new((cfg.mtu + 64).max(2048)))?;
    event_loop(&cfg, fds, emu, n, rt_ok)
}

/// The loop every run shares: wait, deliver what is due, read what arrived, sample, until told
/// to stop; then the final line.
fn event_loop<F: Forwarder>(
    cfg: &Config,
    fds: Fds,
    mut emu: F,
    n: usize,
    rt_ok: bool,
) -> Result<i32, String> {
    let inputs = emu.inputs();
    fds.watch_all(&inputs)?;
    let mut stats = open_stats(cfg)?;
    announce_ready(n, rt_ok);

    let mut control = Control::default();
    let mut waiter = Waiter::new(
        fds._epoll.as_raw_fd(),
        fds._timer.as_raw_fd(),
        cfg.spin_ns,
        cfg.timer_quantum_ns,
    );
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
    let m = inputs.len();
    // The wake time the latest timed sleep asked for, and whether its timeout ended it
    // (LoopStats::note_sleep).
    let mut slept: Option<(u64, bool)> = None;
    while control.exit_reason.is_none() {
        let now = now_ns();
        if let Some((asked, by_timeout)) = slept.take() {
            emu.loop_stats().note_sleep(now, asked, by_timeout);
        }
        emu.run_timers(now);
        control.write_samples(&mut emu, stats.as_mut(), now, cfg.stats_interval_ns);
        let deadline = [emu.next_deadline(), control.next_sample()].into_iter().flatten().min();
        let Some(nev) = waiter.wait(deadline, &mut events)? else {
            continue;
        };
        slept = waiter.slept(&events[..nev], (m + TAG_TIMER) as u64);
        for ev in &events[..nev] {
            let tag = ev.u64 as usize;
            if tag < m {
                emu.drain_input(tag);
            } else {
                match tag - m {
                    TAG_STDIN => control.read_stdin(&mut emu, cfg.stats_interval_ns),
                    TAG_TIMER => waiter.timer_fired(),
                    _ => {
                        let mut b = [0u8; 128];
                        unsafe {
                            libc::read(fds._signal.as_raw_fd(), b.as_mut_ptr() as *mut _, 128)
                        };
                        control.exit_reason = Some("signal");
                    }
                }
            }
        }
    }
    let fin = emu.final_json(control.exit_reason.unwrap_or("stop"));
    if let Some(w) = stats.as_mut() {
        let _ = writeln!(w, "{fin}");
        let _ = w.flush();
    } else {
        println!("{fin}");
    }
    drop(fds);
    Ok(0)
}

impl Fds {
    fn open(tuns: &[&String]) -> Result<Fds, String> {
        let signal = signal_fd()?;
        let timer = unsafe {
            libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
        };
        Ok(Fds {
            tuns: tuns.iter().map(|s| open_tun(s)).collect::<Result<_, _>>()?,
            _signal: signal,
            _timer: owned(timer, "timerfd")?,
            _epoll: owned(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll")?,
        })
    }

    /// Register every descriptor with epoll: the forwarder's inputs by their index, the others
    /// as the TAG_* constants say after them (stdin only when the process has one; it is made
    /// non-blocking).
    fn watch_all(&self, inputs: &[RawFd]) -> Result<(), String> {
        let ep = self._epoll.as_raw_fd();
        let add = |fd: RawFd, tag: usize| -> Result<(), String> {
            let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tag as u64 };
            if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
                return Err(format!("epoll_ctl: {}", errno_str()));
            }
            Ok(())
        };
        let n = inputs.len();
        for (i, &fd) in inputs.iter().enumerate() {
            add(fd, i)?;
        }
        if unsafe { libc::fcntl(0, libc::F_GETFD) } >= 0 {
            unsafe {
                libc::fcntl(0, libc::F_SETFL, libc::fcntl(0, libc::F_GETFL) | libc::O_NONBLOCK)
            };
            add(0, n + TAG_STDIN)?;
        }
        add(self._timer.as_raw_fd(), n + TAG_TIMER)?;
        add(self._signal.as_raw_fd(), n + TAG_SIGNAL)
    }
}

/// The forwarding state: the bottleneck's two directions (built), and a delay line each way for
/// every sender with an extra delay.
fn new_emu(cfg: &Config, fds: &Fds, fwd: Link<u32>, rev: Link<u32>) -> Result<Emu, String> {
    let n = cfg.senders.len();
    let extra = |i: usize| cfg.sender_extra_delay_ns.get(i).copied().unwrap_or(0);
    let access = || -> Vec<Option<Link<_>>> {
        (0..n)
            .map(|i| (extra(i) > 0).then(|| Link::new(LinkParams::delay_line(extra(i)), 0)))
            .collect()
    };
    Ok(Emu {
        pool: Pool::new((cfg.mtu + 64).max(2048)),
        sender_fds: fds.tuns[..n].iter().map(|f| f.as_raw_fd()).collect(),
        recv_fd: fds.tuns[n].as_raw_fd(),
        addr_to_sender: cfg
            .sender_addrs
            .iter()
            .enumerate()
            .map(|(i, a)| parse_ipv4(a).map(|a| (a, i as u16)))
            .collect::<Result<_, _>>()?,
        ect1: (0..n).map(|i| cfg.ect1_senders.contains(&(i as u16))).collect(),
        access_fwd: access(),
        access_rev: access(),
        fwd,
        rev,
        stats: LoopStats::default(),
    })
}

fn open_stats(cfg: &Config) -> Result<Option<BufWriter<std::fs::File>>, String> {
    cfg.stats_path
        .as_ref()
        .map(|p| {
            std::fs::File::create(p)
                .map(BufWriter::new)
                .map_err(|e| format!("cannot create {p}: {e}"))
        })
        .transpose()
}

/// The one `{"ready": true, ...}` line the parent waits for.
fn announce_ready(n_senders: usize, realtime: bool) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{{\"ready\":true,\"pid\":{},\"epoch_ns\":{},\"senders\":{n_senders},\
         \"realtime\":{realtime},\"version\":\"{}\"}}",
        std::process::id(),
        now_ns(),
        env!("CARGO_PKG_VERSION")
    );
    let _ = out.flush();
}

/// What the parent asked for on stdin: the statistics grid (from `start`) and whether to stop.
#[derive(Default)]
struct Control {
    /// The `start` time: the statistics grid's origin (None before `start`).
    t0: Option<u64>,
    next_sample_ns: u64,
    stdin_buf: Vec<u8>,
    /// Why the loop ends: `stop`, `stdin closed` or `signal` (None: keep running).
    exit_reason: Option<&'static str>,
}

impl Control {
    fn next_sample(&self) -> Option<u64> {
        self.t0.map(|_| self.next_sample_ns)
    }

    /// Sample every link exactly at each grid point that has passed (links are advanced to it;
    /// nothing later is seen), and close the loop's stall interval there. Called after each
    /// wake-up's deliveries: [`LoopStats`] relies on that order.
    fn write_samples(
        &mut self,
        emu: &mut impl Forwarder,
        mut stats: Option<&mut BufWriter<std::fs::File>>,
        now: u64,
        interval_ns: u64,
    ) {
        let Some(t0) = self.t0 else { return };
        if now < self.next_sample_ns {
            return;
        }
        while self.next_sample_ns <= now {
            emu.close_interval(self.next_sample_ns, t0, &mut |name, s| {
                if let Some(w) = stats.as_mut() {
                    let _ = writeln!(w, "{}", sample_json(name, t0, s));
                }
            });
            self.next_sample_ns += interval_ns;
        }
        if let Some(w) = stats {
            let _ = w.flush();
        }
    }

    /// Read what stdin has and act on each complete line (`start [t0_ns]`, `stop`).
    fn read_stdin(&mut self, emu: &mut impl Forwarder, interval_ns: u64) {
        let mut b = [0u8; 4096];
        loop {
            let r = unsafe { libc::read(0, b.as_mut_ptr() as *mut _, b.len()) };
            if r == 0 {
                self.exit_reason = Some("stdin closed");
                break;
            }
            if r < 0 {
                break;
            }
            self.stdin_buf.extend_from_slice(&b[..r as usize]);
        }
        while let Some(p) = self.stdin_buf.iter().position(|&c| c == b'\n') {
            let line: Vec<u8> = self.stdin_buf.drain(..=p).collect();
            let line = String::from_utf8_lossy(&line).trim().to_string();
            let mut it = line.split_whitespace();
            match it.next() {
                Some("start") => {
                    let t = it.next().and_then(|x| x.parse().ok()).unwrap_or_else(now_ns);
                    emu.start_run(t);
                    self.t0 = Some(t);
                    self.next_sample_ns = t + interval_ns;
                }
                Some("stop") => self.exit_reason = Some("stop"),
                _ => {}
            }
        }
    }
}
