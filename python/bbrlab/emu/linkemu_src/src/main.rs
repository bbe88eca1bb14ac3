//! `bbrlab-linkemu`: a userspace dumbbell link emulator between TUN devices.
//!
//! ```text
//! sender TUN 0 --[access fwd: extra delay 0]--\                                /--> receiver TUN
//! sender TUN 1 --[access fwd: extra delay 1]---> bottleneck (shared queue) --+
//!   ...                                                                        (forward direction)
//! receiver TUN --> bottleneck_rev (shared) --> [access rev: extra delay i] --> sender TUN i
//! ```
//!
//! Usage: `bbrlab-linkemu --config '<json>'` (or `--config @file`). It creates the TUN devices
//! (IFF_TUN | IFF_NO_PI, non-persistent: they vanish when this process exits), prints one JSON line
//! `{"ready": true, ...}` on stdout and forwards packets until stdin says `stop`, stdin closes, or
//! SIGTERM/SIGINT arrives (and it dies with its parent: PR_SET_PDEATHSIG). Commands on stdin:
//! `start <t0_monotonic_ns>` zeroes the counters and starts the statistics grid at t0;
//! `stop` writes the final line and exits. Statistics: JSON lines appended to `stats_path`.
//!
//! Single-threaded epoll loop. It sleeps in epoll_pwait2 (timerfd armed at the wake time on
//! kernels without it) until the next deadline rounded up to `timer_quantum_ns` (default 20 us:
//! one wake-up per packet cost a clock-event reprogramming each, which under virtualization is a
//! VM exit, and kept the emulator ~95 % busy at 1 Gbit/s), with the timer slack set to 1 ns,
//! optionally followed by a busy-poll for the last `spin_ns` before a deadline. Departure and
//! delivery times stay exact in the link model; only the wake-up is coarsened.

use std::collections::HashMap;
use std::ffi::CString;
use std::io::{BufWriter, Write};
use std::os::fd::RawFd;

use linkemu::{ecn_bits, ipv4_dst, set_ce, Link, LinkParams, QueueSample, Verdict};

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
    /// so at high rates one wake-up delivers several packets (see [`linkemu::wake_time`]).
    #[serde(default = "timer_quantum")]
    timer_quantum_ns: u64,
}
fn timer_quantum() -> u64 {
    linkemu::DEFAULT_TIMER_QUANTUM_NS
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

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn die(msg: String) -> ! {
    eprintln!("bbrlab-linkemu: {msg}");
    std::process::exit(2)
}

fn errno_str() -> String {
    std::io::Error::last_os_error().to_string()
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

fn open_tun(name: &str) -> RawFd {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        die(format!("bad TUN name {name:?}"));
    }
    let path = CString::new("/dev/net/tun").unwrap();
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        die(format!("cannot open /dev/net/tun: {}", errno_str()));
    }
    let mut ifr = [0u8; 40];
    ifr[..name.len()].copy_from_slice(name.as_bytes());
    let flags: i16 = (libc::IFF_TUN | libc::IFF_NO_PI) as i16;
    ifr[16..18].copy_from_slice(&flags.to_ne_bytes());
    if unsafe { libc::ioctl(fd, TUNSETIFF as _, ifr.as_mut_ptr()) } < 0 {
        die(format!("TUNSETIFF {name}: {}", errno_str()));
    }
    fd
}

/// Fixed-size packet slots, recycled through a free list (no allocation per packet).
struct Pool {
    slot: usize,
    data: Vec<u8>,
    len: Vec<u32>,
    free: Vec<u32>,
}

impl Pool {
    fn new(slot: usize) -> Self {
        Pool { slot, data: Vec::new(), len: Vec::new(), free: Vec::new() }
    }
    fn get(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        let i = self.len.len() as u32;
        self.data.resize(self.data.len() + self.slot, 0);
        self.len.push(0);
        i
    }
    fn put(&mut self, i: u32) {
        self.free.push(i);
    }
    fn buf(&mut self, i: u32) -> &mut [u8] {
        let s = i as usize * self.slot;
        &mut self.data[s..s + self.slot]
    }
    fn pkt(&mut self, i: u32) -> &mut [u8] {
        let s = i as usize * self.slot;
        let n = self.len[i as usize] as usize;
        &mut self.data[s..s + n]
    }
}

fn parse_ipv4(s: &str) -> u32 {
    let v: Vec<u32> = s.split('.').filter_map(|x| x.parse().ok()).collect();
    if v.len() != 4 || v.iter().any(|&x| x > 255) {
        die(format!("bad IPv4 address {s:?}"));
    }
    (v[0] << 24) | (v[1] << 16) | (v[2] << 8) | v[3]
}

fn sample_json(name: &str, t0: u64, s: &QueueSample) -> String {
    let util = if s.utilization.is_finite() { format!("{:.6}", s.utilization) } else { "null".into() };
    format!(
        "{{\"queue\":\"{name}\",\"t_ns\":{},\"occupancy_bytes\":{},\"occupancy_pkts\":{},\"mean_occupancy_bytes\":{:.3},\"max_occupancy_bytes\":{},\"drops\":{},\"random_losses\":{},\"ce_marks\":{},\"tx_bytes\":{},\"utilization\":{util}}}",
        s.t_ns - t0,
        s.occupancy_bytes,
        s.occupancy_pkts,
        s.mean_occupancy_bytes,
        s.max_occupancy_bytes,
        s.drops,
        s.random_losses,
        s.ce_marks,
        s.tx_bytes
    )
}

struct Emu {
    pool: Pool,
    sender_fds: Vec<RawFd>,
    recv_fd: RawFd,
    addr_to_sender: HashMap<u32, u16>,
    access_fwd: Vec<Option<Link<u32>>>,
    access_rev: Vec<Option<Link<u32>>>,
    fwd: Link<u32>,
    rev: Link<u32>,
    // loop statistics
    write_errors: u64,
    unroutable: u64,
    late_sum_ns: u128,
    late_max_ns: u64,
    late_n: u64,
    reads: u64,
    max_batch: usize,
}

impl Emu {
    fn write_pkt(&mut self, fd: RawFd, i: u32) {
        let n = self.pool.len[i as usize] as usize;
        let buf = self.pool.buf(i);
        let r = unsafe { libc::write(fd, buf.as_ptr() as *const _, n) };
        if r < 0 {
            self.write_errors += 1;
        }
        self.pool.put(i);
    }

    fn note_late(&mut self, now: u64, due: u64) {
        let late = now.saturating_sub(due);
        self.late_sum_ns += late as u128;
        self.late_n += 1;
        self.late_max_ns = self.late_max_ns.max(late);
    }

    fn into_bottleneck(&mut self, now: u64, i: u32, origin: u16) {
        let (len, ect) = {
            let p = self.pool.pkt(i);
            (p.len() as u32, matches!(ecn_bits(p), Some(1) | Some(2)))
        };
        match self.fwd.enqueue(now, i, len, ect, origin) {
            Ok(Verdict::Queued { ce: true }) => {
                set_ce(self.pool.pkt(i));
            }
            Ok(_) => {}
            Err((_, i)) => self.pool.put(i),
        }
    }

    fn from_sender(&mut self, now: u64, s: usize, i: u32) {
        match self.access_fwd[s].as_mut() {
            Some(a) => {
                let len = self.pool.len[i as usize];
                if let Err((_, i)) = a.enqueue(now, i, len, false, s as u16) {
                    self.pool.put(i);
                }
            }
            None => self.into_bottleneck(now, i, s as u16),
        }
    }

    fn from_receiver(&mut self, now: u64, i: u32) {
        let dst = ipv4_dst(self.pool.pkt(i));
        let Some(&s) = dst.and_then(|d| self.addr_to_sender.get(&d)) else {
            self.unroutable += 1;
            self.pool.put(i);
            return;
        };
        let (len, ect) = {
            let p = self.pool.pkt(i);
            (p.len() as u32, matches!(ecn_bits(p), Some(1) | Some(2)))
        };
        match self.rev.enqueue(now, i, len, ect, s) {
            Ok(Verdict::Queued { ce: true }) => {
                set_ce(self.pool.pkt(i));
            }
            Ok(_) => {}
            Err((_, i)) => self.pool.put(i),
        }
    }

    /// Deliver everything due by `now`, in order through the stages.
    fn run_timers(&mut self, now: u64) {
        for s in 0..self.access_fwd.len() {
            while let Some((i, due, _)) = self.access_fwd[s].as_mut().and_then(|a| a.pop_ready(now)) {
                // Enter the bottleneck at the scheduled time, not the (later) wake-up time.
                self.into_bottleneck(due, i, s as u16);
            }
        }
        while let Some((i, due, _)) = self.fwd.pop_ready(now) {
            self.note_late(now, due);
            let fd = self.recv_fd;
            self.write_pkt(fd, i);
        }
        while let Some((i, due, s)) = self.rev.pop_ready(now) {
            let s = s as usize;
            match self.access_rev[s].as_mut() {
                Some(a) => {
                    let len = self.pool.len[i as usize];
                    let _ = a.enqueue(due, i, len, false, s as u16);
                }
                None => {
                    let fd = self.sender_fds[s];
                    self.write_pkt(fd, i);
                }
            }
        }
        for s in 0..self.access_rev.len() {
            while let Some((i, _, _)) = self.access_rev[s].as_mut().and_then(|a| a.pop_ready(now)) {
                let fd = self.sender_fds[s];
                self.write_pkt(fd, i);
            }
        }
    }

    fn next_deadline(&self) -> Option<u64> {
        let mut d = [self.fwd.next_deadline(), self.rev.next_deadline()].into_iter().flatten().min();
        for a in self.access_fwd.iter().chain(self.access_rev.iter()).flatten() {
            if let Some(t) = a.next_deadline() {
                d = Some(d.map_or(t, |x: u64| x.min(t)));
            }
        }
        d
    }

    /// Read up to `budget` packets from `fd`; returns how many were read.
    fn drain(&mut self, fd: RawFd, from: Option<usize>, budget: usize) -> usize {
        let mut n = 0;
        while n < budget {
            let i = self.pool.get();
            let buf = self.pool.buf(i);
            let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut _, buf.len()) };
            if r <= 0 {
                self.pool.put(i);
                break;
            }
            self.pool.len[i as usize] = r as u32;
            self.reads += 1;
            let now = now_ns();
            match from {
                Some(s) => self.from_sender(now, s, i),
                None => self.from_receiver(now, i),
            }
            n += 1;
        }
        self.max_batch = self.max_batch.max(n);
        n
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cfg_text = match args.iter().position(|a| a == "--config") {
        Some(p) if p + 1 < args.len() => {
            let v = &args[p + 1];
            if let Some(path) = v.strip_prefix('@') {
                std::fs::read_to_string(path).unwrap_or_else(|e| die(format!("cannot read {path}: {e}")))
            } else {
                v.clone()
            }
        }
        _ => {
            if args.iter().any(|a| a == "--version") {
                println!("bbrlab-linkemu {}", env!("CARGO_PKG_VERSION"));
                return;
            }
            die("usage: bbrlab-linkemu --config '<json>' | --config @file".into())
        }
    };
    let cfg: Config = serde_json::from_str(&cfg_text).unwrap_or_else(|e| die(format!("bad config: {e}")));
    if cfg.senders.len() != cfg.sender_addrs.len() || cfg.senders.is_empty() {
        die("senders and sender_addrs must be non-empty lists of the same length".into());
    }
    let n = cfg.senders.len();
    unsafe {
        // Die with the parent (the Python runner), and let timers fire on time.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        libc::prctl(libc::PR_SET_TIMERSLACK, 1);
        if libc::getppid() == 1 {
            std::process::exit(1);
        }
    }
    let mut rt_ok = false;
    if cfg.realtime_priority > 0 {
        let sp = libc::sched_param { sched_priority: cfg.realtime_priority };
        rt_ok = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &sp) } == 0;
    }
    let sender_fds: Vec<RawFd> = cfg.senders.iter().map(|s| open_tun(s)).collect();
    let recv_fd = open_tun(&cfg.receiver);
    let extra = |i: usize| cfg.sender_extra_delay_ns.get(i).copied().unwrap_or(0);
    let mut emu = Emu {
        pool: Pool::new((cfg.mtu + 64).max(2048)),
        sender_fds,
        recv_fd,
        addr_to_sender: cfg.sender_addrs.iter().enumerate().map(|(i, a)| (parse_ipv4(a), i as u16)).collect(),
        access_fwd: (0..n).map(|i| (extra(i) > 0).then(|| Link::new(LinkParams::delay_line(extra(i)), 0))).collect(),
        access_rev: (0..n).map(|i| (extra(i) > 0).then(|| Link::new(LinkParams::delay_line(extra(i)), 0))).collect(),
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

    // Signals -> signalfd, so SIGTERM/SIGINT end the loop cleanly with a final stats line.
    let sigfd = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC)
    };
    let tfd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if sigfd < 0 || tfd < 0 || ep < 0 {
        die(format!("epoll/timerfd/signalfd: {}", errno_str()));
    }
    // epoll data: 0..n senders, n receiver, n+1 stdin, n+2 timer, n+3 signals.
    let add = |fd: RawFd, tag: u64| {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tag };
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            die(format!("epoll_ctl: {}", errno_str()));
        }
    };
    for (i, &fd) in emu.sender_fds.iter().enumerate() {
        add(fd, i as u64);
    }
    add(recv_fd, n as u64);
    let stdin_ok = unsafe { libc::fcntl(0, libc::F_GETFD) } >= 0;
    if stdin_ok {
        unsafe { libc::fcntl(0, libc::F_SETFL, libc::fcntl(0, libc::F_GETFL) | libc::O_NONBLOCK) };
        add(0, n as u64 + 1);
    }
    add(tfd, n as u64 + 2);
    add(sigfd, n as u64 + 3);

    let mut stats: Option<BufWriter<std::fs::File>> = cfg.stats_path.as_ref().map(|p| {
        BufWriter::new(std::fs::File::create(p).unwrap_or_else(|e| die(format!("cannot create {p}: {e}"))))
    });
    let epoch = now_ns();
    println!(
        "{{\"ready\":true,\"pid\":{},\"epoch_ns\":{epoch},\"senders\":{},\"realtime\":{rt_ok},\"version\":\"{}\"}}",
        std::process::id(),
        n,
        env!("CARGO_PKG_VERSION")
    );
    let _ = std::io::stdout().flush();

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
        let deadline = [emu.next_deadline(), (next_sample != u64::MAX).then_some(next_sample)].into_iter().flatten().min();
        let now = now_ns();
        // Sleep until the next deadline (rounded up to the timer quantum) or until a TUN is
        // readable. epoll_pwait2 (Linux >= 5.11) takes the timeout itself: one syscall and one
        // hrtimer per sleep instead of a timerfd_settime per deadline (each costs a clock-event
        // reprogramming, a VM exit under virtualization); timerfd is the fallback.
        // A nearly idle emulator wakes early and busy-polls to the deadline (`spin_window`).
        let mut timeout: Option<u64> = None; // relative ns; None = block
        let mut poll = false;
        let spin = deadline.map_or(cfg.spin_ns, |d| linkemu::spin_window(d, now, cfg.spin_ns, spin_target));
        match deadline {
            Some(d) if d <= now + spin => poll = true, // due now or within the spin window
            Some(d) => {
                if spin > cfg.spin_ns {
                    spin_target = d;
                }
                let wake = linkemu::wake_time(d, spin, cfg.timer_quantum_ns);
                if use_pwait2 {
                    timeout = Some(wake.saturating_sub(now));
                } else if armed_for == 0 || wake < armed_for {
                    let its = libc::itimerspec {
                        it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
                        it_value: libc::timespec { tv_sec: (wake / 1_000_000_000) as _, tv_nsec: (wake % 1_000_000_000) as _ },
                    };
                    unsafe { libc::timerfd_settime(tfd, libc::TFD_TIMER_ABSTIME, &its, std::ptr::null_mut()) };
                    armed_for = wake;
                }
            }
            None => {}
        }
        let nev = if poll {
            unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 0) }
        } else if let Some(t) = timeout {
            let ts = libc::timespec { tv_sec: (t / 1_000_000_000) as _, tv_nsec: (t % 1_000_000_000) as _ };
            let r = unsafe {
                libc::syscall(libc::SYS_epoll_pwait2, ep, events.as_mut_ptr(), events.len() as libc::c_int, &ts as *const libc::timespec, std::ptr::null::<libc::sigset_t>(), 0usize)
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
            die(format!("epoll_wait: {}", errno_str()));
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
    let per = |l: &Link<u32>| {
        (0..n)
            .map(|i| {
                let c = l.per_origin.get(i).copied().unwrap_or_default();
                format!("{{\"rx_pkts\":{},\"drops\":{},\"random_losses\":{},\"ce_marks\":{}}}", c.rx_pkts, c.drops, c.random_losses, c.ce_marks)
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let fin = format!(
        "{{\"final\":true,\"reason\":\"{exit_reason}\",\"forward_per_sender\":[{}],\"reverse_per_sender\":[{}],\"forward_tx_bytes\":{},\"reverse_tx_bytes\":{},\"forward_tx_pkts\":{},\"reverse_tx_pkts\":{},\"write_errors\":{},\"unroutable\":{},\"reads\":{},\"max_batch\":{},\"late_mean_ns\":{:.1},\"late_max_ns\":{},\"pool_slots\":{}}}",
        per(&emu.fwd),
        per(&emu.rev),
        emu.fwd.stats.tx_bytes,
        emu.rev.stats.tx_bytes,
        emu.fwd.stats.tx_pkts,
        emu.rev.stats.tx_pkts,
        emu.write_errors,
        emu.unroutable,
        emu.reads,
        emu.max_batch,
        if emu.late_n > 0 { emu.late_sum_ns as f64 / emu.late_n as f64 } else { 0.0 },
        emu.late_max_ns,
        emu.pool.len.len()
    );
    if let Some(w) = stats.as_mut() {
        let _ = writeln!(w, "{fin}");
        let _ = w.flush();
    } else {
        println!("{fin}");
    }
}
