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

use crate::forward::{now_ns, sample_json, Emu, Pool};
use crate::tun::open_tun;
use crate::{Link, LinkParams};

/// The process name the emulator gives itself (at most 15 bytes: the kernel's TASK_COMM_LEN).
pub const PROCESS_NAME: &str = "bbrlab-linkemu";

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// TUN names of the senders (one per sender host).
    senders: Vec<String>,
    /// IPv4 address of each sender (dotted), to route reverse-direction packets.
    sender_addrs: Vec<String>,
    receiver: String,
    forward: LinkParams,
    reverse: LinkParams,
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

fn parse_ipv4(s: &str) -> Result<u32, String> {
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
    senders: Vec<OwnedFd>,
    receiver: OwnedFd,
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

fn run(cfg: Config) -> Result<i32, String> {
    if cfg.senders.len() != cfg.sender_addrs.len() || cfg.senders.is_empty() {
        return Err("senders and sender_addrs must be non-empty lists of the same length".into());
    }
    let n = cfg.senders.len();
    let Some(rt_ok) = setup_process(cfg.realtime_priority) else {
        return Ok(1);
    };
    let sigfd = signal_fd()?;
    let fds = Fds {
        senders: cfg.senders.iter().map(|s| open_tun(s)).collect::<Result<_, _>>()?,
        receiver: open_tun(&cfg.receiver)?,
        _signal: sigfd,
        _timer: owned(
            unsafe {
                libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
            },
            "timerfd",
        )?,
        _epoll: owned(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll")?,
    };
    let (sigfd, tfd, ep) =
        (fds._signal.as_raw_fd(), fds._timer.as_raw_fd(), fds._epoll.as_raw_fd());
    let recv_fd = fds.receiver.as_raw_fd();
    let extra = |i: usize| cfg.sender_extra_delay_ns.get(i).copied().unwrap_or(0);
    let mut emu = Emu {
        pool: Pool::new((cfg.mtu + 64).max(2048)),
        sender_fds: fds.senders.iter().map(|f| f.as_raw_fd()).collect(),
        recv_fd,
        addr_to_sender: cfg
            .sender_addrs
            .iter()
            .enumerate()
            .map(|(i, a)| parse_ipv4(a).map(|a| (a, i as u16)))
            .collect::<Result<_, _>>()?,
        access_fwd: (0..n)
            .map(|i| (extra(i) > 0).then(|| Link::new(LinkParams::delay_line(extra(i)), 0)))
            .collect(),
        access_rev: (0..n)
            .map(|i| (extra(i) > 0).then(|| Link::new(LinkParams::delay_line(extra(i)), 0)))
            .collect(),
        fwd: Link::new(cfg.forward.clone(), cfg.seed),
        rev: Link::new(cfg.reverse.clone(), cfg.seed ^ 0x5851_F42D_4C95_7F2D),
        write_errors: 0,
        unroutable: 0,
        late_sum_ns: 0,
        late_max_ns: 0,
        late_n: 0,
        reads: 0,
        max_batch: 0,
    };

    // epoll data: 0..n senders, n receiver, n+1 stdin, n+2 timer, n+3 signals.
    let add = |fd: RawFd, tag: u64| -> Result<(), String> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tag };
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            return Err(format!("epoll_ctl: {}", errno_str()));
        }
        Ok(())
    };
    for (i, &fd) in emu.sender_fds.iter().enumerate() {
        add(fd, i as u64)?;
    }
    add(recv_fd, n as u64)?;
    let stdin_ok = unsafe { libc::fcntl(0, libc::F_GETFD) } >= 0;
    if stdin_ok {
        unsafe { libc::fcntl(0, libc::F_SETFL, libc::fcntl(0, libc::F_GETFL) | libc::O_NONBLOCK) };
        add(0, n as u64 + 1)?;
    }
    add(tfd, n as u64 + 2)?;
    add(sigfd, n as u64 + 3)?;

    let mut stats: Option<BufWriter<std::fs::File>> = match cfg.stats_path.as_ref() {
        Some(p) => Some(BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("cannot create {p}: {e}"))?,
        )),
        None => None,
    };
    let epoch = now_ns();
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{{\"ready\":true,\"pid\":{},\"epoch_ns\":{epoch},\"senders\":{},\"realtime\":{rt_ok},\"version\":\"{}\"}}",
            std::process::id(),
            n,
            env!("CARGO_PKG_VERSION")
        );
        let _ = out.flush();
    }

    let mut t0: Option<u64> = None;
    let mut next_sample = u64::MAX;
    let mut stdin_buf: Vec<u8> = Vec::new();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
    let mut armed_for = 0u64;
    let mut use_pwait2 = true;
    let mut spin_target = 0u64; // the deadline an early (idle) wake-up was for
    let mut stop = false;
    let mut exit_reason = "stop";
    while !stop {
        let now = now_ns();
        emu.run_timers(now);
        if now >= next_sample {
            let t0v = t0.unwrap();
            // Sample exactly at the grid point (links are advanced to it; nothing later is seen).
            while next_sample <= now {
                let a = emu.fwd.sample(next_sample);
                let b = emu.rev.sample(next_sample);
                if let Some(w) = stats.as_mut() {
                    let _ = writeln!(w, "{}", sample_json("bottleneck", t0v, &a));
                    let _ = writeln!(w, "{}", sample_json("bottleneck_rev", t0v, &b));
                }
                next_sample += cfg.stats_interval_ns;
            }
            if let Some(w) = stats.as_mut() {
                let _ = w.flush();
            }
        }
        let deadline = [emu.next_deadline(), (next_sample != u64::MAX).then_some(next_sample)]
            .into_iter()
            .flatten()
            .min();
        let now = now_ns();
        // Sleep until the next deadline (rounded up to the timer quantum) or until a TUN is
        // readable. epoll_pwait2 (Linux >= 5.11) takes the timeout itself: one syscall and one
        // hrtimer per sleep instead of a timerfd_settime per deadline (each costs a clock-event
        // reprogramming, a VM exit under virtualization); timerfd is the fallback.
        // A nearly idle emulator wakes early and busy-polls to the deadline (`spin_window`).
        let mut timeout: Option<u64> = None; // relative ns; None = block
        let mut poll = false;
        let spin =
            deadline.map_or(cfg.spin_ns, |d| crate::spin_window(d, now, cfg.spin_ns, spin_target));
        match deadline {
            Some(d) if d <= now + spin => poll = true, // due now or within the spin window
            Some(d) => {
                if spin > cfg.spin_ns {
                    spin_target = d;
                }
                let wake = crate::wake_time(d, spin, cfg.timer_quantum_ns);
                if use_pwait2 {
                    timeout = Some(wake.saturating_sub(now));
                } else if armed_for == 0 || wake < armed_for {
                    let its = libc::itimerspec {
                        it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
                        it_value: libc::timespec {
                            tv_sec: (wake / 1_000_000_000) as _,
                            tv_nsec: (wake % 1_000_000_000) as _,
                        },
                    };
                    unsafe {
                        libc::timerfd_settime(
                            tfd,
                            libc::TFD_TIMER_ABSTIME,
                            &its,
                            std::ptr::null_mut(),
                        )
                    };
                    armed_for = wake;
                }
            }
            None => {}
        }
        let nev = if poll {
            unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 0) }
        } else if let Some(t) = timeout {
            let ts = libc::timespec {
                tv_sec: (t / 1_000_000_000) as _,
                tv_nsec: (t % 1_000_000_000) as _,
            };
            let r = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    ep,
                    events.as_mut_ptr(),
                    events.len() as libc::c_int,
                    &ts as *const libc::timespec,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            } as i32;
            if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                use_pwait2 = false;
                continue;
            }
            r
        } else {
            unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, -1) }
        };
        if nev < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(format!("epoll_wait: {}", errno_str()));
        }
        for k in 0..nev as usize {
            let tag = events[k].u64 as usize;
            if tag < n {
                let fd = emu.sender_fds[tag];
                emu.drain(fd, Some(tag), 64);
            } else if tag == n {
                emu.drain(recv_fd, None, 64);
            } else if tag == n + 1 {
                let mut b = [0u8; 4096];
                loop {
                    let r = unsafe { libc::read(0, b.as_mut_ptr() as *mut _, b.len()) };
                    if r == 0 {
                        stop = true;
                        exit_reason = "stdin closed";
                        break;
                    }
                    if r < 0 {
                        break;
                    }
                    stdin_buf.extend_from_slice(&b[..r as usize]);
                }
                while let Some(p) = stdin_buf.iter().position(|&c| c == b'\n') {
                    let line: Vec<u8> = stdin_buf.drain(..=p).collect();
                    let line = String::from_utf8_lossy(&line).trim().to_string();
                    let mut it = line.split_whitespace();
                    match it.next() {
                        Some("start") => {
                            let t = it.next().and_then(|x| x.parse().ok()).unwrap_or_else(now_ns);
                            emu.fwd.reset_counters(t.min(now_ns()));
                            emu.rev.reset_counters(t.min(now_ns()));
                            t0 = Some(t);
                            next_sample = t + cfg.stats_interval_ns;
                        }
                        Some("stop") => {
                            stop = true;
                            exit_reason = "stop";
                        }
                        _ => {}
                    }
                }
            } else if tag == n + 2 {
                let mut b = [0u8; 8];
                unsafe { libc::read(tfd, b.as_mut_ptr() as *mut _, 8) };
                armed_for = 0;
            } else {
                let mut b = [0u8; 128];
                unsafe { libc::read(sigfd, b.as_mut_ptr() as *mut _, 128) };
                stop = true;
                exit_reason = "signal";
            }
        }
    }
    let fin = emu.final_json(exit_reason);
    if let Some(w) = stats.as_mut() {
        let _ = writeln!(w, "{fin}");
        let _ = w.flush();
    } else {
        println!("{fin}");
    }
    drop(fds);
    Ok(0)
}
