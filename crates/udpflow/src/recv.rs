//! The receiving half: a [`transport::Receiver`] driven by the wall clock and a bound UDP
//! socket. It answers the sender's hello (and learns its address from it), ACKs data as the
//! receiver decides (delayed ACKs, SACK blocks, D-SACK), and stops at the sender's fin,
//! `end_ns`, or `stop`.

use crate::sock::{Sock, RECV_BATCH};
use crate::wire::{self, Msg};
use crate::{emit, mono_ns, thread_cpu_ns, Config};
use serde_json::json;
use std::io::Write;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, Ordering};
use transport::receiver::ReceiverConfig;
use transport::Receiver;

/// What the receiver reports at the end (also its final JSON line).
#[derive(Clone, Debug, Default)]
pub struct ReceiverReport {
    pub delivered_bytes: u64,
    pub segs_received: u64,
    pub dup_segs: u64,
    pub acks_sent: u64,
    /// Data datagrams discarded by `drop_every`.
    pub dropped: u64,
    pub got_fin: bool,
    pub cpu_user_ns: u64,
    pub cpu_sys_ns: u64,
}

/// Run the receiving half. Binds `cfg.local` (prints `{"ready": port}` once bound, so a caller
/// that asked for port 0 learns it).
pub fn run_receiver(
    cfg: &Config,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<ReceiverReport, String> {
    let local: SocketAddrV4 =
        cfg.local.parse().map_err(|e| format!("local {:?}: {e}", cfg.local))?;
    let mut sock = Sock::bind(local).map_err(|e| format!("bind {local}: {e}"))?;
    let port = sock.udp.local_addr().map_err(|e| e.to_string())?.port();
    emit(out, &json!({"ready": port}));
    let t0 = if cfg.t0_ns == 0 { mono_ns() } else { cfg.t0_ns };
    let now_ns = || mono_ns().saturating_sub(t0);
    let mut r = Receiver::new(ReceiverConfig {
        mss: cfg.mss_bytes,
        rcvbuf_bytes: cfg.rcvbuf_bytes,
        delayed_ack: cfg.delayed_ack,
        ..ReceiverConfig::default()
    });
    let mut report = ReceiverReport::default();
    let mut rx = crate::sock::RecvBatch::default();
    let mut acks: Vec<[u8; wire::MAX_CONTROL_BYTES]> = Vec::with_capacity(RECV_BATCH + 2);
    let mut ack_lens: Vec<usize> = Vec::with_capacity(RECV_BATCH + 2);
    let mut peer: Option<SocketAddrV4> = None;
    let mut data_seen = 0u64;
    let interval = cfg.status_interval_ns.max(1);
    let mut next_status = (now_ns() / interval + 1) * interval;
    let push = |acks: &mut Vec<_>, lens: &mut Vec<usize>, a: &transport::Packet| {
        let mut b = [0u8; wire::MAX_CONTROL_BYTES];
        lens.push(wire::encode_ack(a, &mut b));
        acks.push(b);
    };
    while !stop.load(Ordering::Relaxed) && !report.got_fin {
        let now = now_ns();
        if now >= cfg.end_ns {
            break;
        }
        let got = sock.recv_batch(&mut rx);
        // Arrivals are dated when the read returns (as the sender dates its ACKs, send.rs).
        let now = now_ns();
        for i in 0..got {
            match wire::decode(rx.datagram(i)) {
                Some(Msg::Hello(ts)) => {
                    peer = Some(rx.source(i));
                    let mut b = [0u8; wire::MAX_CONTROL_BYTES];
                    let n = wire::encode_hello(true, ts, &mut b);
                    sock.send_all(&[&b[..n]], peer);
                }
                Some(Msg::Data(p)) => {
                    data_seen += 1;
                    if cfg.drop_every.is_some_and(|k| k > 0 && data_seen.is_multiple_of(k)) {
                        report.dropped += 1;
                        continue;
                    }
                    peer = peer.or(Some(rx.source(i)));
                    let ack = r.on_data(now, &p);
                    if let Some(a) = r.take_pending_ack() {
                        push(&mut acks, &mut ack_lens, &a);
                    }
                    if let Some(a) = ack {
                        push(&mut acks, &mut ack_lens, &a);
                    }
                }
                Some(Msg::Fin) => report.got_fin = true,
                _ => {}
            }
        }
        if r.next_timeout().is_some_and(|d| d <= now) {
            if let Some(a) = r.on_timeout(now) {
                push(&mut acks, &mut ack_lens, &a);
            }
        }
        if let (Some(to), false) = (peer, acks.is_empty()) {
            let msgs: Vec<&[u8]> = acks.iter().zip(&ack_lens).map(|(b, &l)| &b[..l]).collect();
            sock.send_all(&msgs, Some(to));
        }
        acks.clear();
        ack_lens.clear();
        if now >= next_status {
            emit(out, &json!({"t_ns": now, "delivered_bytes": r.delivered_bytes}));
            next_status = (now / interval + 1) * interval;
        }
        if got == RECV_BATCH {
            continue;
        }
        let wake = r.next_timeout().unwrap_or(u64::MAX).min(next_status).min(cfg.end_ns);
        let now = now_ns();
        if wake > now {
            sock.wait(libc::POLLIN, wake - now);
        }
    }
    let (user, sys) = thread_cpu_ns();
    report.delivered_bytes = r.delivered_bytes;
    report.segs_received = r.segs_received;
    report.dup_segs = r.dup_segs;
    report.acks_sent = r.acks_sent;
    report.cpu_user_ns = user;
    report.cpu_sys_ns = sys;
    emit(
        out,
        &json!({"final": {
            "role": "recv",
            "delivered_bytes": r.delivered_bytes,
            "segs_received": r.segs_received,
            "dup_segs": r.dup_segs,
            "acks_sent": r.acks_sent,
            "dsacks_sent": r.dsacks_sent,
            "dropped_by_test": report.dropped,
            "got_fin": report.got_fin,
            "cpu_user_ns": user,
            "cpu_sys_ns": sys,
        }}),
    );
    Ok(report)
}
