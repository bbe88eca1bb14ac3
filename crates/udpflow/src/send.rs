//! The sending half: a [`transport::Sender`] driven by the wall clock and a connected UDP
//! socket (see the crate header for the loop).

use crate::sock::{Sock, GSO_MAX_BYTES, GSO_MAX_SEGMENTS};
use crate::wire::{self, Msg};
use crate::{emit, mono_ns, sleep_until, thread_cpu_ns, Config};
use cc::registry;
use serde_json::json;
use std::io::Write;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, Ordering};
use transport::{Sender, SenderConfig};

/// The hello is repeated this often until answered (a receiver not yet up, a lost hello).
const HELLO_RETRY_NS: u64 = 200_000_000;
/// Fins sent when a sized transfer is acknowledged (the receiver also stops at `end_ns`).
const FIN_COPIES: usize = 3;
/// GSO messages gathered before a `sendmmsg` (16 × 64 KB: ~8 ms at 1 Gbit/s, more than a
/// pacing burst).
const MSGS_PER_SEND: usize = 16;
/// Packets sent per loop turn at most, so ACKs are read between long bursts.
const PACKETS_PER_TURN: usize = 512;
/// Shortest sleep when a deadline is already due but nothing could be done (no spinning).
const MIN_WAIT_NS: u64 = 20_000;

/// What the sender reports at the end (also its final JSON line).
#[derive(Clone, Debug, Default)]
pub struct SenderReport {
    pub acked_bytes: u64,
    pub data_packets_sent: u64,
    pub retransmits: u64,
    pub completed_ns: Option<u64>,
    pub handshake_rtt_ns: Option<u64>,
    pub gso: bool,
    pub send_calls: u64,
    pub cpu_user_ns: u64,
    pub cpu_sys_ns: u64,
}

fn parse_addr(s: &str, what: &str) -> Result<SocketAddrV4, String> {
    s.parse().map_err(|e| format!("{what} {s:?}: {e}"))
}

/// Send datagrams gathered into GSO messages (or one per message without GSO).
struct Burst {
    bufs: Vec<Vec<u8>>,
    lens: Vec<usize>,
    segs_in_last: usize,
    seg_bytes: usize,
    max_segs: usize,
}

impl Burst {
    fn new(seg_bytes: usize, gso: bool) -> Burst {
        let max_segs = if gso { GSO_MAX_SEGMENTS.min(GSO_MAX_BYTES / seg_bytes) } else { 1 };
        let room = seg_bytes * max_segs;
        Burst {
            bufs: (0..MSGS_PER_SEND).map(|_| vec![0u8; room]).collect(),
            lens: Vec::with_capacity(MSGS_PER_SEND),
            segs_in_last: 0,
            seg_bytes,
            max_segs,
        }
    }

    fn full(&self) -> bool {
        self.lens.len() == MSGS_PER_SEND && self.segs_in_last == 0
    }

    /// Append a data packet; a message closes when full or after a short (last) segment,
    /// which GSO allows only at a message's end.
    fn push(&mut self, p: &transport::Packet) {
        if self.segs_in_last == 0 {
            self.lens.push(0);
        }
        let m = self.lens.len() - 1;
        let at = self.lens[m];
        let n = wire::encode_data(p, &mut self.bufs[m][at..]);
        self.lens[m] += n;
        self.segs_in_last += 1;
        if self.segs_in_last == self.max_segs || n < self.seg_bytes {
            self.segs_in_last = 0;
        }
    }

    fn flush(&mut self, sock: &mut Sock) {
        if self.lens.is_empty() {
            return;
        }
        let msgs: Vec<&[u8]> = self.lens.iter().zip(&self.bufs).map(|(&l, b)| &b[..l]).collect();
        sock.send_all(&msgs, None);
        self.lens.clear();
        self.segs_in_last = 0;
    }
}

/// Run the sending half until the transfer is acknowledged, `end_ns`, or `stop`.
pub fn run_sender(
    cfg: &Config,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<SenderReport, String> {
    let alg = registry::lookup(&cfg.cc).ok_or_else(|| {
        format!("unknown algorithm {:?} (valid: {})", cfg.cc, registry::valid_names().join(", "))
    })?;
    if alg.needs_ecn {
        return Err(format!("{} needs ECN, which the UDP transport does not carry", alg.name));
    }
    let peer = parse_addr(cfg.peer.as_deref().ok_or("the sender needs a peer")?, "peer")?;
    let mut sock = Sock::bind(parse_addr(&cfg.local, "local")?).map_err(|e| e.to_string())?;
    sock.udp.connect(peer).map_err(|e| format!("connect {peer}: {e}"))?;
    let seg_bytes = wire::DATA_HEADER_BYTES + cfg.mss_bytes as usize;
    let gso = cfg.gso && sock.enable_gso(seg_bytes);
    let clock = Clock { t0: if cfg.t0_ns == 0 { mono_ns() } else { cfg.t0_ns } };

    sleep_until(clock.t0 + cfg.start_ns, stop);
    let rtt = handshake(&mut sock, &clock, cfg.end_ns, stop);
    let mut s = Sender::new(sender_config(cfg), (alg.new)(cfg.seed));
    s.stop_ns = cfg.stop_ns;
    if let Some(rtt) = rtt {
        let now = clock.now_ns();
        s.set_handshake_rtt(now, rtt);
        s.start(now);
    }
    let mut burst = Burst::new(seg_bytes, gso);
    let completed_ns = transfer(&mut s, &mut sock, &mut burst, cfg, &clock, stop, out);
    let (user, sys) = thread_cpu_ns();
    let report = SenderReport {
        acked_bytes: acked_bytes(&s, cfg),
        data_packets_sent: s.stats.data_packets_sent,
        retransmits: s.stats.retransmits,
        completed_ns,
        handshake_rtt_ns: rtt,
        gso,
        send_calls: sock.send_calls,
        cpu_user_ns: user,
        cpu_sys_ns: sys,
    };
    emit(out, &final_line(&s, &sock, alg.name, &report));
    Ok(report)
}

/// The run's clock: monotonic time since `t0` (the experiment's start, shared with the
/// receiver when given), ns.
struct Clock {
    t0: u64,
}

impl Clock {
    fn now_ns(&self) -> u64 {
        mono_ns().saturating_sub(self.t0)
    }
}

/// The handshake: hellos every `HELLO_RETRY_NS` until one is echoed (its RTT seeds the
/// estimator, as the SYN-ACK's does in Linux), `end_ns` or `stop` (None: no answer).
fn handshake(sock: &mut Sock, clock: &Clock, end_ns: u64, stop: &AtomicBool) -> Option<u64> {
    let mut rx = crate::sock::RecvBatch::default();
    let mut ctl = [0u8; wire::MAX_CONTROL_BYTES];
    let mut next_hello = 0;
    loop {
        let now = clock.now_ns();
        if now >= end_ns || stop.load(Ordering::Relaxed) {
            return None;
        }
        if now >= next_hello {
            let n = wire::encode_hello(false, now, &mut ctl);
            sock.send_all(&[&ctl[..n]], None);
            next_hello = now + HELLO_RETRY_NS;
        }
        sock.wait(libc::POLLIN, next_hello.min(end_ns).saturating_sub(now));
        let got = sock.recv_batch(&mut rx);
        let echo = (0..got).find_map(|i| match wire::decode(rx.datagram(i)) {
            Some(Msg::HelloAck(ts)) => Some(ts),
            _ => None,
        });
        if let Some(ts) = echo {
            return Some(clock.now_ns().saturating_sub(ts).max(1));
        }
    }
}

/// The transport's sender as the scenario configures it.
fn sender_config(cfg: &Config) -> SenderConfig {
    SenderConfig {
        mss: cfg.mss_bytes,
        initial_cwnd: cfg.initial_cwnd_segs,
        total_bytes: cfg.bytes,
        pacing: cfg.pacing,
        max_pacing_rate_bytes_per_s: cfg.max_pacing_rate_bps.map(|r| r / 8),
        sndbuf_bytes: cfg.sndbuf_bytes,
        min_rto_ns: cfg.min_rto_ns,
        ..SenderConfig::default()
    }
}

/// The transfer: each turn reads the ACKs that arrived, runs a due timer, sends what the sender
/// releases (at most `PACKETS_PER_TURN`), writes a status line on the status grid, and sleeps
/// to the next deadline. Returns when a sized transfer completed (then sends the fins), at
/// `end_ns`, or on `stop`: the completion time, if any.
fn transfer(
    s: &mut Sender,
    sock: &mut Sock,
    burst: &mut Burst,
    cfg: &Config,
    clock: &Clock,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Option<u64> {
    let mut rx = crate::sock::RecvBatch::default();
    let interval = cfg.status_interval_ns.max(1);
    let mut next_status = (clock.now_ns() / interval + 1) * interval;
    while s.is_started() && !stop.load(Ordering::Relaxed) {
        let mut now = clock.now_ns();
        if now >= cfg.end_ns {
            break;
        }
        let mut acted = false;
        loop {
            let got = sock.recv_batch(&mut rx);
            // An ACK's arrival time is when the read returns, not the turn's start: a thread
            // preempted between the two (a loaded host) would otherwise date the ACKs that
            // arrived meanwhile too early, and their RTT samples fall below the path's (a run
            // at 500 Mbit/s x 10 ms took min_rtt 7.3 ms, which BQL then read as 2.7 ms of queue).
            now = clock.now_ns();
            for i in 0..got {
                if let Some(Msg::Ack(a)) = wire::decode(rx.datagram(i)) {
                    s.on_ack(now, &a);
                    acted = true;
                }
            }
            if got < crate::sock::RECV_BATCH {
                break;
            }
        }
        if s.next_timer_deadline().is_some_and(|d| d <= now) {
            s.on_timeout(now);
            acted = true;
        }
        let mut sent = 0;
        while sent < PACKETS_PER_TURN {
            let Some(p) = s.poll_transmit(now) else { break };
            burst.push(&p);
            sent += 1;
            if burst.full() {
                burst.flush(sock);
            }
        }
        burst.flush(sock);
        acted |= sent > 0;
        if let (Some(_), Some(done)) = (cfg.bytes, s.completed_ns) {
            let mut ctl = [0u8; wire::MAX_CONTROL_BYTES];
            let n = wire::encode_fin(&mut ctl);
            for _ in 0..FIN_COPIES {
                sock.send_all(&[&ctl[..n]], None);
            }
            return Some(done);
        }
        let now = clock.now_ns();
        if now >= next_status {
            emit(out, &status(s, now));
            next_status = (now / interval + 1) * interval;
        }
        let wake = s.next_timeout().unwrap_or(u64::MAX).min(next_status).min(cfg.end_ns);
        if sent == PACKETS_PER_TURN {
            continue;
        }
        let wait = if wake > now {
            wake - now
        } else if acted {
            continue;
        } else {
            MIN_WAIT_NS
        };
        sock.wait(libc::POLLIN, wait);
    }
    None
}

/// The sender's final JSON line: the report and the transport's counters and RTT quantiles.
fn final_line(s: &Sender, sock: &Sock, cc: &str, report: &SenderReport) -> serde_json::Value {
    let n = s.stats.rtt_count.max(1) as u128;
    json!({"final": {
        "role": "send",
        "cc": cc,
        "acked_bytes": report.acked_bytes,
        "data_packets_sent": report.data_packets_sent,
        "retransmits": report.retransmits,
        "retrans_fast": s.stats.retrans_fast,
        "retrans_rto": s.stats.retrans_rto,
        "retrans_tlp": s.stats.retrans_tlp,
        "tlp_probes": s.stats.tlp_probes,
        "lost_retrans": s.lost_retransmits(),
        "dsack_recv_segs": s.stats.dsack_recv_segs,
        "spurious_rtos": s.stats.spurious_rtos,
        "rto_count": s.stats.rto_count,
        "recoveries": s.stats.recoveries,
        "spurious_undos": s.stats.spurious_undos,
        "rtt_count": s.stats.rtt_count,
        "rtt_mean_ns": (s.stats.rtt_sum_ns / n) as u64,
        "rtt_p50_ns": s.rtt_hist.quantile_ns(0.5),
        "rtt_p95_ns": s.rtt_hist.quantile_ns(0.95),
        "rtt_p99_ns": s.rtt_hist.quantile_ns(0.99),
        "min_rtt_ns": (s.tp.min_rtt_ns != u64::MAX).then_some(s.tp.min_rtt_ns),
        "completed_ns": report.completed_ns,
        "handshake_rtt_ns": report.handshake_rtt_ns,
        "gso": report.gso,
        "send_calls": sock.send_calls,
        "send_errors": sock.send_errors,
        "cpu_user_ns": report.cpu_user_ns,
        "cpu_sys_ns": report.cpu_sys_ns,
    }})
}

/// Payload bytes cumulatively acknowledged.
fn acked_bytes(s: &Sender, cfg: &Config) -> u64 {
    let b = s.snd_una() * cfg.mss_bytes as u64;
    cfg.bytes.map_or(b, |t| b.min(t))
}

/// One status line: the simulator's timeseries quantities from the sender's own state
/// (crates/sim/src/sampling.rs reads the same fields), and the per-ACK RTT samples since the
/// last line, which it then resets as the simulator does at each sample.
fn status(s: &mut Sender, now: u64) -> serde_json::Value {
    let st = s.cc.sample(&s.tp);
    let v = json!({
        "t_ns": now,
        "acked_bytes": s.snd_una() * s.tp.mss as u64,
        "cwnd_pkts": s.tp.snd_cwnd,
        "mss": s.tp.mss,
        "inflight_bytes": s.inflight_bytes(),
        "pacing_rate_bps":
            s.tp.pacing_rate_bytes_per_s.min(s.tp.max_pacing_rate_bytes_per_s) as f64 * 8.0,
        "delivery_rate_bps": s.stats.last_delivery_rate_bytes_per_s as f64 * 8.0,
        "srtt_ns": s.tp.srtt_ns,
        "min_rtt_ns": (s.tp.min_rtt_ns != u64::MAX).then_some(s.tp.min_rtt_ns),
        "rtt_sum_ns": s.stats.interval_rtt_sum_ns as u64,
        "rtt_count": s.stats.interval_rtt_count,
        "retransmits": s.stats.retransmits,
        "ssthresh_pkts": (s.tp.snd_ssthresh < cc::TCP_INFINITE_SSTHRESH)
            .then_some(s.tp.snd_ssthresh),
        "phase": st.phase,
        "bw_bps": st.bw_bps,
        "pacing_gain": st.pacing_gain,
        "cwnd_gain": st.cwnd_gain,
        "ca_state": s.tp.ca_state as u8,
        "rwnd_limited": s.stats.rwnd_limited,
        "sndbuf_limited": s.stats.sndbuf_limited,
    });
    s.stats.interval_rtt_sum_ns = 0;
    s.stats.interval_rtt_count = 0;
    v
}
