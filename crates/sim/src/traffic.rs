//! Non-TCP traffic beside the flows (`[[traffic]]`): UDP constant-bit-rate and on/off sources,
//! and ping probes.
//!
//! Model: a source is a flow entry (`Flow::traffic` names it) without TCP: it borrows the
//! flow's route (its data path, and its ACK path for a ping's echo), so its packets go through
//! the same links, queues, disciplines, ECN marking (they are not ECN-capable: a marking queue
//! drops them) and losses as TCP's. Nothing reacts to a loss: UDP sends on.
//! - `udp_cbr`: packet k leaves at `start + k · wire_bits / rate` (exact in integer ns: no drift
//!   however long the run). `rate` is the wire rate, framing included, as a link's.
//! - `udp_onoff`: the same schedule while on; the clock restarts at each on period. Periods are
//!   fixed or exponential (a Markov on/off source) with the given means.
//! - `ping`: an echo request every `interval`; the far host answers at once with an echo of the
//!   same size over the ACK path; its RTT (request sent to echo back) is a row of the `pings`
//!   table.
//!
//! Sizes: `packet_size` is the IP packet; on the wire it is `packet + ETHERNET_OVERHEAD_BYTES`;
//! the payload counted in the `traffic` table is `packet − 28` (IP + UDP or ICMP headers).
//!
//! The simulator calls in when the source starts (`FlowStart`), on its sender timer (the next
//! departure, `Flow`'s timer slot), when a packet of it reaches a host (`deliver_data` for a
//! request or datagram, `deliver_ack` for an echo): one branch on the flow, nothing on the TCP
//! path otherwise.

use crate::rng::Rng;
use crate::{config, metrics, Simulation};
use cc::Nanos;
use transport::{Ecn, Packet, ETHERNET_OVERHEAD_BYTES};

/// IP (20 B) + UDP or ICMP (8 B) headers: what a packet carries besides its payload.
pub const IP_L4_HEADER_BYTES: u32 = 28;

/// `Flow::traffic` of a TCP flow.
pub(crate) const NOT_TRAFFIC: u32 = u32::MAX;

/// Random stream ids of the sources' on/off draws (`Rng::new(seed, TRAFFIC_STREAM + i)`), clear
/// of the links' (1..4, 100 + 2·flow) and the query apps' (7000 + app).
const TRAFFIC_STREAM: u64 = 8_000_000;

pub(crate) struct Source {
    pub cfg: config::Traffic,
    /// The flow entry that carries it.
    pub flow: u32,
    rng: Rng,
    wire_bytes: u32,
    /// Start of the current burst of evenly spaced packets (CBR: the source's start; on/off:
    /// the on period's start) and packets sent in it.
    burst_start_ns: Nanos,
    burst_pkts: u64,
    /// On/off: end of the current on period.
    on_until_ns: Nanos,
    /// When the next packet leaves (Nanos::MAX: no more).
    pub next_send_ns: Nanos,
    pub sent_pkts: u64,
    pub received_pkts: u64,
    first_rx_ns: Option<Nanos>,
    last_rx_ns: Nanos,
    /// Ping: echoes back, the sum of their RTTs, and their distribution.
    rtt_sum_ns: u128,
    rtt_hist: transport::RttHistogram,
}

impl Source {
    pub(crate) fn new(cfg: config::Traffic, flow: u32, seed: u64, i: usize) -> Source {
        let wire_bytes = cfg.packet_size_bytes() + ETHERNET_OVERHEAD_BYTES;
        Source {
            rng: Rng::new(seed, TRAFFIC_STREAM + i as u64),
            cfg,
            flow,
            wire_bytes,
            burst_start_ns: 0,
            burst_pkts: 0,
            on_until_ns: Nanos::MAX,
            next_send_ns: Nanos::MAX,
            sent_pkts: 0,
            received_pkts: 0,
            first_rx_ns: None,
            last_rx_ns: 0,
            rtt_sum_ns: 0,
            rtt_hist: transport::RttHistogram::new(),
        }
    }

    fn payload_bytes(&self) -> u32 {
        self.cfg.packet_size_bytes().saturating_sub(IP_L4_HEADER_BYTES)
    }

    /// Time between packets within a burst, exactly, as (numerator, denominator) ns: packet k
    /// of a burst leaves `k · num / den` after its start.
    fn spacing(&self) -> (u128, u128) {
        match &self.cfg {
            config::Traffic::UdpCbr(t) => {
                (self.wire_bytes as u128 * 8_000_000_000, t.rate_bps as u128)
            }
            config::Traffic::UdpOnoff(t) => {
                (self.wire_bytes as u128 * 8_000_000_000, t.rate_bps as u128)
            }
            config::Traffic::Ping(t) => (t.interval_ns as u128, 1),
        }
    }

    /// A period of mean `mean_ns` as the source's `durations` draw it (at least 1 ns).
    fn period(&mut self, mean_ns: u64, exponential: bool) -> Nanos {
        if !exponential {
            return mean_ns;
        }
        let u = self.rng.next_f64();
        ((-(1.0 - u).ln() * mean_ns as f64) as Nanos).max(1)
    }

    /// Start a burst at `t`: the first packet leaves then.
    fn start_burst(&mut self, t: Nanos) {
        self.burst_start_ns = t;
        self.burst_pkts = 0;
        self.next_send_ns = t;
        if let config::Traffic::UdpOnoff(o) = &self.cfg {
            let exp = o.durations == config::Durations::Exponential;
            let on = self.period(o.on_ns, exp);
            self.on_until_ns = t.saturating_add(on);
        }
    }

    /// After a packet: when the next leaves (an on/off source past its on period waits out an
    /// off period first), or Nanos::MAX past the stop time.
    fn schedule_next(&mut self, end_ns: Nanos) {
        self.burst_pkts += 1;
        let (num, den) = self.spacing();
        let mut next = self.burst_start_ns + (self.burst_pkts as u128 * num / den) as Nanos;
        if let config::Traffic::UdpOnoff(o) = &self.cfg {
            if next >= self.on_until_ns {
                let exp = o.durations == config::Durations::Exponential;
                let off = self.period(o.off_ns, exp);
                next = self.on_until_ns.saturating_add(off);
                self.start_burst(next);
            }
        }
        let stop = self.cfg.route().stop_ns.unwrap_or(end_ns).min(end_ns);
        self.next_send_ns = if next < stop { next } else { Nanos::MAX };
    }
}

impl Simulation {
    /// Source `si` starts (its flow's `FlowStart`).
    #[inline(never)]
    pub(crate) fn traffic_start(&mut self, si: usize) {
        let now = self.now;
        self.traffic[si].start_burst(now);
        self.traffic_send(si);
    }

    /// The source's timer: send what is due.
    pub(crate) fn traffic_timer(&mut self, si: usize) {
        if self.traffic[si].next_send_ns <= self.now {
            self.traffic_send(si);
        }
    }

    /// Send the packet due now, and arm the timer for the next.
    fn traffic_send(&mut self, si: usize) {
        let now = self.now;
        let end = self.end_ns;
        let src = &mut self.traffic[si];
        let fi = src.flow as usize;
        let p = Packet {
            flow: src.flow,
            hop: 0,
            is_data: true,
            wire_bytes: src.wire_bytes,
            seq: src.sent_pkts,
            payload_bytes: src.payload_bytes(),
            ts_ns: now,
            ecn: Ecn::NotEct,
            ..Packet::default()
        };
        src.sent_pkts += 1;
        src.schedule_next(end);
        let next = src.next_send_ns;
        let flow = &mut self.flows[fi];
        flow.data_tx += 1;
        let nic = flow.data_path.first();
        if self.links[nic as usize].is_sender_nic {
            // A sender NIC gives the bytes back as they leave (TSQ's accounting, unused here).
            self.flows[fi].nic_bytes += p.wire_bytes as u64;
        }
        self.enqueue(nic, p);
        if next != Nanos::MAX {
            self.flows[fi].sender_timer_at = Some(next);
            self.arm_timer(2 * fi as u32, next);
        }
    }

    /// A datagram or echo request of source `si` reaches its destination host.
    pub(crate) fn traffic_rx(&mut self, si: usize, p: Packet) {
        let now = self.now;
        let fi = p.flow as usize;
        self.flows[fi].data_rx += 1;
        if let Some(ic) = self.ictcp.as_mut() {
            ic.on_host_rx(now, p.wire_bytes); // the host's ICTCP sees all its traffic
        }
        let src = &mut self.traffic[si];
        if let config::Traffic::Ping(_) = src.cfg {
            // The echo: the same size and timestamp, back over the ACK path.
            let echo = Packet { is_data: false, hop: 0, ..p };
            let first = self.flows[fi].ack_path.first();
            self.enqueue(first, echo);
            return;
        }
        src.received_pkts += 1;
        src.first_rx_ns.get_or_insert(now);
        src.last_rx_ns = now;
    }

    /// An echo of source `si` is back at its sender: one RTT sample.
    pub(crate) fn traffic_echo(&mut self, si: usize, p: Packet) {
        let now = self.now;
        let src = &mut self.traffic[si];
        let rtt = now - p.ts_ns;
        src.received_pkts += 1;
        src.rtt_sum_ns += rtt as u128;
        src.rtt_hist.record(rtt);
        self.pings.push(metrics::PingRow {
            source: si as i32,
            seq: p.seq as i64,
            t_s: p.ts_ns as f64 / 1e9,
            rtt_ms: rtt as f64 / 1e6,
        });
    }

    /// The `traffic` table: one row per source.
    pub(crate) fn traffic_table(&self, in_network: &[u64]) -> metrics::Table {
        let mut t = metrics::TrafficCols::default();
        for (i, s) in self.traffic.iter().enumerate() {
            let r = s.cfg.route();
            let start = r.start_ns.min(self.now);
            let stop = r.stop_ns.unwrap_or(self.now).min(self.now);
            let active = stop.saturating_sub(start);
            let payload = s.payload_bytes() as u64;
            // A ping's request or echo still on its way is neither received nor lost.
            let inside = in_network[s.flow as usize];
            let lost = s.sent_pkts.saturating_sub(s.received_pkts + inside);
            let rx_span = s.first_rx_ns.map_or(0, |f| s.last_rx_ns.saturating_sub(f));
            let is_ping = matches!(s.cfg, config::Traffic::Ping(_));
            t.push(metrics::TrafficRow {
                source: i as i32,
                kind_code: match s.cfg {
                    config::Traffic::UdpCbr(_) => 0,
                    config::Traffic::UdpOnoff(_) => 1,
                    config::Traffic::Ping(_) => 2,
                },
                reverse: r.reverse as u8,
                flow: s.flow as i32,
                sent_packets: s.sent_pkts as i64,
                sent_bytes: (s.sent_pkts * payload) as i64,
                received_packets: s.received_pkts as i64,
                received_bytes: (s.received_pkts * payload) as i64,
                lost_packets: lost as i64,
                lost_bytes: (lost * payload) as i64,
                send_rate_bps: if active > 0 {
                    (s.sent_pkts * payload) as f64 * 8e9 / active as f64
                } else {
                    f64::NAN
                },
                recv_rate_bps: if is_ping || active == 0 {
                    f64::NAN
                } else {
                    // Over the same span as the sending: what got through of what was sent.
                    (s.received_pkts * payload) as f64 * 8e9 / active.max(rx_span) as f64
                },
                rtt_mean_ms: if is_ping && s.received_pkts > 0 {
                    (s.rtt_sum_ns / s.received_pkts as u128) as f64 / 1e6
                } else {
                    f64::NAN
                },
                rtt_p50_ms: if is_ping { s.rtt_hist.quantile_ns(0.5) / 1e6 } else { f64::NAN },
                rtt_p99_ms: if is_ping { s.rtt_hist.quantile_ns(0.99) / 1e6 } else { f64::NAN },
            });
        }
        t.table()
    }
}

/// Labels of the `traffic` table's `kind_code`, in code order.
pub const KIND_LABELS: [&str; 3] = ["udp_cbr", "udp_onoff", "ping"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{f64s, i64s};

    /// A dumbbell at `rate` bit/s, 20 ms, access links at 100× (their queues stay empty: a
    /// 1538 B packet takes 2.46 µs there, less than any gap the bottleneck leaves), with `flows`
    /// and `traffic` (JSON lists).
    fn dumbbell(rate: u64, buffer: u64, secs: u64, flows: &str, traffic: &str) -> Simulation {
        Simulation::from_json(&format!(
            r#"{{"seed":7,"duration_ns":{},"sample_interval_ns":100000000,
                "topology":{{"kind":"dumbbell","access_rate_bps":{},
                  "bottleneck":{{"rate_bps":{rate},"rtt_ns":20000000,"buffer":{{"bytes":{buffer}}}}}}},
                "flows":[{flows}],"traffic":[{traffic}]}}"#,
            secs * 1_000_000_000,
            rate * 100
        ))
        .unwrap()
    }

    /// UDP CBR at 30 Mbit/s beside one CUBIC flow on 50 Mbit/s: UDP ignores its losses, so
    /// CUBIC gets what UDP leaves of the link, in payload: (link − UDP's delivered wire rate)
    /// × 1448 / 1538 (a full segment's payload over its wire size).
    #[test]
    fn cubic_beside_udp_cbr_gets_the_rest_of_the_link() {
        let rate = 50_000_000u64;
        let mut sim = dumbbell(
            rate,
            125_000,
            20,
            r#"{"cc":"cubic"}"#,
            r#"{"kind":"udp_cbr","rate_bps":30000000}"#,
        );
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        let r = sim.results();
        let t = &r.traffic;
        let (sent, recv, lost) = (
            i64s(t, "sent_packets")[0],
            i64s(t, "received_packets")[0],
            i64s(t, "lost_packets")[0],
        );
        // 30 Mbit/s of 1538 B frames for 20 s.
        assert_eq!(sent, (30_000_000u64 * 20 / (1538 * 8)) as i64 + 1);
        assert!(lost > 0 && recv + lost <= sent, "sent {sent} received {recv} lost {lost}");
        // Measured after CUBIC's start-up (2 s) from the cumulative delivered bytes.
        let ts = &r.timeseries;
        let (tt, del) = (f64s(ts, "t_s"), i64s(ts, "delivered_bytes"));
        let at = |s: f64| del[tt.iter().position(|&x| (x - s).abs() < 1e-9).unwrap()] as f64;
        let cubic_bps = (at(20.0) - at(2.0)) * 8.0 / 18.0;
        let udp_wire_bps = recv as f64 * 1538.0 * 8.0 / 20.0;
        let rest = (rate as f64 - udp_wire_bps) * 1448.0 / 1538.0;
        let err = (cubic_bps - rest) / rest;
        println!(
            "UDP delivered {:.3} Mbit/s on the wire (lost {lost} of {sent}); CUBIC {:.3} Mbit/s, \
             rest {:.3} Mbit/s: {:+.2} %",
            udp_wire_bps / 1e6,
            cubic_bps / 1e6,
            rest / 1e6,
            err * 100.0
        );
        assert!(err.abs() < 0.05, "CUBIC {cubic_bps} vs the rest {rest}");
        let recv_rate = f64s(t, "recv_rate_bps")[0];
        assert!((recv_rate - recv as f64 * 1472.0 * 8.0 / 20.0).abs() < 1.0);
    }

    /// Every ping RTT is the path's base RTT, the serialization of the request and the echo at
    /// every hop, and the time they waited in the bottleneck queues: the request in the
    /// forward one (CUBIC's data), the echo in the reverse one (CUBIC's ACKs, larger with SACK
    /// blocks). Each wait is read from that queue's serializer (when it frees) the moment
    /// before the packet arrives, sample by sample, while CUBIC's sawtooth moves the queue.
    #[test]
    fn a_ping_rtt_is_base_rtt_plus_the_sojourn_its_packets_saw() {
        use std::collections::BTreeMap;
        let rate = 50_000_000u64;
        // 87 B packets: 125 B = 1000 bits on the wire, 200 ns at the access rate, 20 µs at the
        // bottleneck (whole ns: no rounding carried).
        let mut sim = dumbbell(
            rate,
            150_000,
            6,
            r#"{"cc":"cubic"}"#,
            r#"{"kind":"ping","interval_ns":10000000,"packet_size_bytes":87,"start_ns":1000}"#,
        );
        let ping_nic = sim.flows[1].data_path.first();
        let (bn, bn_rev) = (sim.flows[1].data_path.links[1], sim.flows[1].ack_path.links[1]);
        assert_eq!(bn, sim.flows[0].data_path.links[1], "one bottleneck");
        assert_eq!(bn_rev, sim.flows[0].ack_path.links[1]);
        assert!(sim.links[bn as usize].fast.timestamped);
        assert!(sim.links[bn_rev as usize].fast.timestamped);
        assert!(sim.links[ping_nic as usize].is_sender_nic);
        let (nic_ns, bn_ns, half_rtt) = (200, 20_000, 10_000_000);
        let cubic_pkt_ns = 1538 * 8 * 1_000_000_000 / rate;
        // Base RTT + the request's and the echo's serialization at 3 hops each.
        let base = 2 * half_rtt + 2 * (nic_ns + bn_ns + nic_ns);
        let probes = 599u64;
        // Moments to read a queue at, in time order: (time, probe, reverse queue?).
        let mut reads: BTreeMap<(u64, u64, bool), ()> =
            (0..probes).map(|k| ((1000 + k * 10_000_000 + nic_ns, k, false), ())).collect();
        let mut fwd_wait = vec![0u64; probes as usize];
        let mut expected = vec![0u64; probes as usize];
        while let Some(((t, k, rev), ())) = reads.pop_first() {
            sim.run_until(t - 1);
            let link = if rev { bn_rev } else { bn };
            let wait = sim.links[link as usize].ser.free_at_ns.saturating_sub(t);
            if rev {
                expected[k as usize] = base + fwd_wait[k as usize] + wait;
            } else {
                fwd_wait[k as usize] = wait;
                // The echo reaches the reverse queue after the request's bottleneck and the
                // receiver's two access hops.
                let t_rev = t + wait + bn_ns + half_rtt + 2 * nic_ns;
                reads.insert((t_rev, k, true), ());
            }
        }
        sim.run_until(u64::MAX);
        let r = sim.results();
        let (seq, rtt) = (i64s(&r.pings, "seq"), f64s(&r.pings, "rtt_ms"));
        let (mut checked, mut same_ns, mut max_fwd, mut rev_waits) = (0, 0, 0, 0);
        for (&s, &rtt_ms) in seq.iter().zip(&rtt) {
            let Some(&want) = expected.get(s as usize) else { continue };
            let got = (rtt_ms * 1e6).round() as u64;
            // ±1 ns per access hop the residual of CUBIC's 2460.8 ns frames can carry.
            let ok = got.abs_diff(want) <= 2;
            // A CUBIC packet arriving in the very nanosecond of the request goes first.
            let behind_one = got.abs_diff(want + cubic_pkt_ns) <= 2;
            assert!(ok || behind_one, "probe {s}: RTT {got} ns, base + sojourns {want} ns");
            same_ns += behind_one as u32;
            checked += 1;
            max_fwd = max_fwd.max(fwd_wait[s as usize]);
            rev_waits += (want > base + fwd_wait[s as usize]) as u32;
        }
        println!(
            "{checked} probes match base RTT + sojourns ({same_ns} behind a same-ns arrival, \
             {rev_waits} waited in the reverse queue); largest forward sojourn {:.3} ms",
            max_fwd as f64 / 1e6
        );
        assert!(checked >= 590, "{checked} echoes");
        assert!(same_ns <= 3);
        // The queue did move: the check covered sojourns from none to several ms.
        assert!(max_fwd > 5_000_000, "largest sojourn {max_fwd} ns");
        assert!(fwd_wait.contains(&0));
    }

    /// On/off at 20 Mbit/s, 50 ms on, 150 ms off: a quarter of the rate on average, in the
    /// receiver-to-sender direction (the reverse bottleneck, where TCP's ACKs are).
    #[test]
    fn an_onoff_source_sends_its_duty_cycle_in_either_direction() {
        for (durations, reverse) in [("fixed", true), ("exponential", false)] {
            let mut sim = dumbbell(
                100_000_000,
                250_000,
                20,
                r#"{"cc":"bbr"}"#,
                &format!(
                    r#"{{"kind":"udp_onoff","rate_bps":20000000,"on_ns":50000000,
                         "off_ns":150000000,"durations":"{durations}","reverse":{reverse}}}"#
                ),
            );
            sim.run_until(u64::MAX);
            sim.check_conservation().unwrap();
            let r = sim.results();
            let sent = f64s(&r.traffic, "send_rate_bps")[0];
            let want = 5_000_000.0 * 1472.0 / 1538.0;
            println!("{durations}: {:.3} Mbit/s of {:.3}", sent / 1e6, want / 1e6);
            // Fixed: 82 packets fit in each 50 ms on period (one per 615 µs), 0.9 % above a
            // quarter of the rate; exponential: 100 draws of each period.
            let tol = if durations == "fixed" { 0.02 } else { 0.15 };
            assert!((sent / want - 1.0).abs() < tol, "{durations}: {sent}");
            if reverse {
                // Alone with the ACKs in the reverse queue: nothing lost.
                assert_eq!(i64s(&r.traffic, "lost_packets")[0], 0);
            }
            // The reverse bottleneck carried it (its bytes) or the forward one did.
            let q = &r.queue;
            let codes = q.get("queue_code").unwrap().as_codes().unwrap();
            let tx = i64s(q, "tx_bytes");
            let last = |name: &str| {
                let code = r.queue_labels.iter().position(|l| l == name).unwrap();
                tx[codes.iter().rposition(|&c| c == code).unwrap()]
            };
            let udp_bytes = i64s(&r.traffic, "sent_packets")[0] * 1538;
            if reverse {
                assert!(last("bottleneck_rev") > udp_bytes, "{}", last("bottleneck_rev"));
            } else {
                // BBR's ACKs alone: 78 B per one or two 1538 B segments, at most 5.1 % of its
                // data (3.9 % measured).
                assert!(last("bottleneck_rev") < last("bottleneck") / 19);
            }
        }
    }
}
