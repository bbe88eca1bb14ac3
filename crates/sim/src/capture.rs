//! A packet capture at the sender host, for flows with `pcap = true`: the headers `tcpdump` on
//! the sender would record of the flow's TCP segments — each data segment as the sender hands
//! it to its NIC, each ACK as it reaches the sender — as rows of the `packets` table
//! (`metrics::PACKETS`), which `bbrlab run` renders as a pcap file.
//!
//! The simulator numbers data in segments; a capture numbers it in bytes. Every segment but the
//! last of a sized transfer carries `mss` bytes (`transport::stream`), so segment `s` starts at
//! byte `s · mss`, and an offset at or past the end of a sized transfer is its size (the last
//! segment is short). The receive window, kept as a right edge in segments, becomes bytes above
//! the cumulative ACK the same way.
//!
//! Off (the default) a flow costs one branch on a flag per data segment sent and per ACK; nothing
//! else in the run depends on it, so a capture never changes a result.
//!
//! A capture at a link (`capture.links`) is the tap on the wire just downstream of the link's
//! queue: every TCP segment that leaves the link, data and ACKs of every flow that crosses it,
//! with the time its last bit leaves (`Simulation::depart`). What never leaves is not there:
//! packets the queue drops, and those the link's random loss takes (the loss acts as a packet
//! is offered to the link, before its queue: `network.rs`). A path's stages after the
//! transmitter (jitter, reordering, aggregation: `link/path.rs`) act downstream of the tap.
//! Packets of non-TCP sources (`traffic.rs`) are left out: they are no TCP segments. A captured
//! link gives up its speed-ups (`Link::timestamped_but_for_its_discipline`) so that each
//! departure is an event; the speed-ups are exact (`speedup/`), so the results are the same.
//! Uncaptured links pay nothing: the test of a link's capture sits on the event-driven
//! departure only, which no timestamped link takes.
//!
//! Every row names its capture point (`tap_code`): `TAP_SENDER` for the senders' captures,
//! `i + 1` for `capture.links[i]`.

use crate::metrics::PacketRow;
use crate::Simulation;
use cc::Nanos;
use transport::{Packet, SenderConfig};

/// The capture point of the flows' own captures (`pcap = true`): each flow's sender host. As a
/// link's `tap` it means none.
pub(crate) const TAP_SENDER: u16 = 0;
/// The `packets` table's `tap` labels: this, then the captured links' names.
pub(crate) const TAP_SENDER_LABEL: &str = "sender";

/// What a flow's segment numbers mean in bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ByteMap {
    pub mss_bytes: u32,
    /// The size of a sized transfer (None: bulk, or written by an application).
    pub total_bytes: Option<u64>,
}

impl ByteMap {
    /// The map of a flow whose sender is configured as `cfg`.
    pub(crate) fn of(cfg: &SenderConfig) -> ByteMap {
        ByteMap { mss_bytes: cfg.mss, total_bytes: cfg.total_bytes }
    }

    /// The stream offset of segment `seg`'s first byte (or of the end, for the edge past it).
    fn offset(self, seg: u64) -> i64 {
        let b = seg.saturating_mul(u64::from(self.mss_bytes));
        let b = self.total_bytes.map_or(b, |t| b.min(t));
        i64::try_from(b).unwrap_or(i64::MAX)
    }
}

/// A data segment captured at `tap` at `now` (at the sender: as it leaves).
pub(crate) fn data_row(now: Nanos, tap: u16, p: &Packet, map: ByteMap) -> PacketRow {
    PacketRow {
        t_ns: now as i64,
        tap_code: tap,
        flow: p.flow as i32,
        is_data: 1,
        seq_bytes: map.offset(p.seq),
        payload_bytes: p.payload_bytes as i32,
        retrans: p.is_retrans as u8,
        ecn: p.ecn as u8,
        ts_ns: p.ts_ns as i64,
        ack_bytes: 0,
        rwnd_bytes: 0,
        n_sack: 0,
        sack1_start: 0,
        sack1_end: 0,
        sack2_start: 0,
        sack2_end: 0,
        sack3_start: 0,
        sack3_end: 0,
        ce_count: 0,
    }
}

/// An ACK captured at `tap` at `now` (at the sender: as it arrives).
pub(crate) fn ack_row(now: Nanos, tap: u16, p: &Packet, map: ByteMap) -> PacketRow {
    let mut sack = [(0i64, 0i64); transport::MAX_SACK_BLOCKS];
    for (i, b) in sack.iter_mut().enumerate().take(p.n_sack as usize) {
        let (s, e) = p.sack_block(i);
        *b = (map.offset(s), map.offset(e));
    }
    let ack_bytes = map.offset(p.ack);
    let rwnd_bytes = if p.rwnd_end == u64::MAX {
        -1
    } else {
        let edge = p.rwnd_end.saturating_mul(u64::from(map.mss_bytes));
        let edge = i64::try_from(edge).unwrap_or(i64::MAX);
        edge.saturating_sub(p.ack as i64 * i64::from(map.mss_bytes)).max(0)
    };
    PacketRow {
        t_ns: now as i64,
        tap_code: tap,
        flow: p.flow as i32,
        is_data: 0,
        seq_bytes: 0,
        payload_bytes: 0,
        retrans: 0,
        ecn: 0,
        ts_ns: p.ts_ns as i64,
        ack_bytes,
        rwnd_bytes,
        n_sack: p.n_sack,
        sack1_start: sack[0].0,
        sack1_end: sack[0].1,
        sack2_start: sack[1].0,
        sack2_end: sack[1].1,
        sack3_start: sack[2].0,
        sack3_end: sack[2].1,
        ce_count: p.ce_count as i64,
    }
}

impl Simulation {
    /// Packet `p` leaves the link whose capture point is `tap`, now: its row, unless it is
    /// no TCP segment.
    #[cold]
    #[inline(never)]
    pub(crate) fn capture_departure(&mut self, tap: u16, p: &Packet) {
        let flow = &self.flows[p.flow as usize];
        if flow.traffic != crate::traffic::NOT_TRAFFIC {
            return;
        }
        let map = ByteMap::of(&flow.sender.cfg);
        let row = if p.is_data {
            data_row(self.now, tap, p, map)
        } else {
            ack_row(self.now, tap, p, map)
        };
        self.packets.push(row);
    }

    /// The `tap` labels of the `packets` table, by code.
    pub(crate) fn tap_labels(&self) -> Vec<String> {
        std::iter::once(TAP_SENDER_LABEL)
            .chain(self.cfg.capture.links.iter().map(String::as_str))
            .map(str::to_string)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const MSS: u32 = 1448;

    #[test]
    fn segment_numbers_become_stream_offsets_clamped_to_a_sized_transfer() {
        // 10 000 bytes: six full segments and a short seventh (1 312 bytes).
        let map = ByteMap { mss_bytes: MSS, total_bytes: Some(10_000) };
        let mut p = Packet::empty(3);
        p.is_data = true;
        p.seq = 6;
        p.payload_bytes = 10_000 - 6 * MSS;
        p.ts_ns = 123;
        let d = data_row(7, TAP_SENDER, &p, map);
        assert_eq!((d.flow, d.is_data, d.seq_bytes, d.payload_bytes), (3, 1, 6 * 1448, 1312));
        assert_eq!(d.ts_ns, 123);
        // The ACK of the whole transfer is its size, not 7 · mss.
        let mut a = Packet::empty(3);
        a.ack = 7;
        a.rwnd_end = u64::MAX;
        let r = ack_row(9, TAP_SENDER, &a, map);
        assert_eq!((r.is_data, r.ack_bytes, r.rwnd_bytes, r.n_sack), (0, 10_000, -1, 0));
    }

    #[test]
    fn sack_blocks_and_the_window_in_bytes() {
        let map = ByteMap { mss_bytes: MSS, total_bytes: None };
        let mut a = Packet::empty(0);
        a.ack = 10;
        a.rwnd_end = 40;
        a.ce_count = 5;
        a.push_sack_block((4, 5)); // below the ACK: a D-SACK block (first), kept as it is
        a.push_sack_block((12, 15));
        let r = ack_row(1, TAP_SENDER, &a, map);
        assert_eq!(r.ack_bytes, 10 * 1448);
        assert_eq!(r.rwnd_bytes, 30 * 1448);
        assert_eq!((r.n_sack, r.sack1_start, r.sack1_end), (2, 4 * 1448, 5 * 1448));
        assert_eq!((r.sack2_start, r.sack2_end, r.sack3_start), (12 * 1448, 15 * 1448, 0));
        assert_eq!(r.ce_count, 5);
    }

    /// A run of `cfg` with `capture.links = links`, to its end.
    fn run(cfg: &Value, links: &[&str]) -> Simulation {
        let mut cfg = cfg.clone();
        cfg["capture"] = json!({ "links": links });
        let mut sim = Simulation::from_json(&cfg.to_string()).expect("a valid scenario");
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        sim
    }

    /// The bytes a captured segment took on the wire, from its row alone: payload, TCP/IP headers
    /// with timestamps, Ethernet framing, and an ACK's SACK option (2 + 8 per block, padded).
    fn wire_bytes(c: &crate::metrics::PacketCols, i: usize) -> u64 {
        let sack = match c.n_sack[i] {
            0 => 0,
            n => (2 + 8 * n as u64).div_ceil(4) * 4,
        };
        let headers = transport::TCP_IP_HEADER_BYTES + transport::ETHERNET_OVERHEAD_BYTES;
        c.payload_bytes[i] as u64 + headers as u64 + sack
    }

    /// Capturing `links` changes no result table, and each link's capture holds its departures:
    /// in time order, their wire bytes the link's own count of bytes sent.
    fn captures_are_the_departures(cfg: Value, links: &[&str]) {
        let plain = run(&cfg, &[]);
        let tapped = run(&cfg, links);
        let (a, b) = (plain.results(), tapped.results());
        for (x, y) in [(&a.flows, &b.flows), (&a.timeseries, &b.timeseries), (&a.queue, &b.queue)] {
            assert!(format!("{x:?}") == format!("{y:?}"), "a capture changed a result: {links:?}");
        }
        assert_eq!(b.tap_labels[1..], links.iter().map(|l| l.to_string()).collect::<Vec<_>>());
        let c = &tapped.packets;
        for (i, name) in links.iter().enumerate() {
            let tap = (i + 1) as u16;
            let rows: Vec<usize> = (0..c.len()).filter(|&r| c.tap_code[r] == tap).collect();
            assert!(rows.len() > 1_000, "{name}: {} rows", rows.len());
            assert!(rows.windows(2).all(|w| c.t_ns[w[0]] <= c.t_ns[w[1]]), "{name}: time order");
            let lid = tapped.monitored.iter().find(|m| m.1 == *name).unwrap().0;
            let sent: u64 = rows.iter().map(|&r| wire_bytes(c, r)).sum();
            assert_eq!(sent, tapped.links[lid as usize].stats.tx_bytes, "{name}");
        }
    }

    fn dumbbell(bottleneck: Value) -> Value {
        json!({"seed": 5, "duration_ns": 3_000_000_000u64,
            "topology": {"kind": "dumbbell", "bottleneck": bottleneck},
            "flows": [{"cc": "cubic"}, {"cc": "bbr1", "start_ns": 500_000_000}]})
    }

    #[test]
    fn a_drop_tail_bottleneck_with_random_loss_both_ways() {
        // Overflow drops and random losses: neither leaves the link.
        let b = json!({"rate_bps": 50_000_000, "rtt_ns": 20_000_000,
            "buffer": {"bytes": 60_000}, "loss": 0.002});
        captures_are_the_departures(dumbbell(b), &["bottleneck", "bottleneck_rev"]);
    }

    #[test]
    fn a_bottleneck_with_a_discipline_of_the_path_model() {
        // fq_codel holds the packets itself (`link/aqm.rs`): an event-driven link already.
        let b = json!({"rate_bps": 50_000_000, "rtt_ns": 20_000_000,
            "buffer": {"bytes": 500_000}, "qdisc": {"kind": "fq_codel"}});
        captures_are_the_departures(dumbbell(b), &["bottleneck"]);
    }

    #[test]
    fn graph_links_and_a_sender_nic() {
        // s0, s1 → r1 → r2 → rx: the bottleneck, its reverse and s0's NIC, whose departures
        // TSQ counts (captured, its departures are events).
        let mut nodes = vec![
            json!({"name": "r1", "kind": "switch"}),
            json!({"name": "r2", "kind": "switch"}),
            json!({"name": "rx", "kind": "host"}),
        ];
        let mut links = vec![
            json!({"from": "r1", "to": "r2", "rate_bps": 50_000_000u64, "delay_ns": 5_000_000,
                "buffer": {"bytes": 80_000}}),
            json!({"from": "r2", "to": "rx", "rate_bps": 1_000_000_000u64}),
        ];
        let mut flows = vec![json!({"cc": "cubic"}), json!({"cc": "bbr1"})];
        for (i, f) in flows.iter_mut().enumerate() {
            let h = format!("s{i}");
            nodes.push(json!({"name": h, "kind": "host"}));
            links.push(json!({"from": h, "to": "r1", "rate_bps": 1_000_000_000u64,
                "delay_ns": 1_000}));
            f["src"] = h.into();
            f["dst"] = "rx".into();
        }
        let cfg = json!({"seed": 2, "duration_ns": 3_000_000_000u64,
            "topology": {"kind": "graph", "nodes": nodes, "links": links}, "flows": flows});
        captures_are_the_departures(cfg, &["r1-r2", "r2-r1", "s0-r1"]);
    }

    #[test]
    fn an_unknown_or_repeated_link_is_named_with_the_links_there_are() {
        let cfg = |links: Value| {
            let mut c = dumbbell(json!({"rate_bps": 50_000_000, "rtt_ns": 20_000_000}));
            c["capture"] = json!({ "links": links });
            crate::config::Config::check_json(&c.to_string()).err().map(|e| e.to_string())
        };
        assert_eq!(
            cfg(json!(["bottleneck", "r1-r2"])).as_deref(),
            Some(
                "capture.links.1: unknown link \"r1-r2\"; the links are bottleneck, bottleneck_rev"
            )
        );
        assert!(cfg(json!(["bottleneck", "bottleneck"])).unwrap().contains("named twice"));
        assert_eq!(cfg(json!(["bottleneck_rev"])), None);
    }
}
