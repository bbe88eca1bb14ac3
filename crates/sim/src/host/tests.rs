//! The host model's tests.

use super::*;

mod gro_tests {
    use super::*;
    use crate::metrics::Column;

    /// `flows` on a 10 Gbit/s, 1 ms dumbbell with a 2 MB buffer, with `hosts` (JSON object body).
    pub(super) fn run(flows: &str, hosts: &str, secs: u64) -> Simulation {
        let mut sim = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":{},"sample_interval_ns":100000000,
                "topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":10000000000,"rtt_ns":1000000,
                "buffer":{{"bytes":2000000}}}}}},"flows":[{flows}],"hosts":{{{hosts}}}}}"#,
            secs * 1_000_000_000
        ))
        .unwrap();
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        sim
    }

    pub(super) fn col(t: &metrics::Table, name: &str) -> Vec<f64> {
        match t.get(name).unwrap_or_else(|| panic!("no column {name}")) {
            Column::F64(v) => v.clone(),
            Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Column::I32(v) => v.iter().map(|&x| x as f64).collect(),
            Column::U16(v) => v.iter().map(|&x| x as f64).collect(),
            Column::U8(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    pub(super) fn goodput_bps(sim: &Simulation) -> f64 {
        col(&sim.results().flows, "goodput_bps").iter().sum()
    }

    #[test]
    fn gro_merges_segments_and_the_receiver_sends_stretch_acks() {
        let with = run(r#"{"cc":"cubic"}"#, "", 1);
        let without = run(r#"{"cc":"cubic"}"#, r#""gro":false"#, 1);
        let (rw, ro) = (with.results(), without.results());
        let segs = |s: &Simulation| s.flows[0].receiver.segs_received as f64;
        let acks = |s: &Simulation| s.flows[0].receiver.acks_sent as f64;
        let gro_w = col(&rw.hosts, "gro_mean_segs")[1];
        let gro_o = col(&ro.hosts, "gro_mean_segs")[1];
        eprintln!(
            "gro {gro_w:.2} vs {gro_o:.2}; acks/seg {:.3} vs {:.3}; goodput {:.3e} vs {:.3e}",
            acks(&with) / segs(&with),
            acks(&without) / segs(&without),
            goodput_bps(&with),
            goodput_bps(&without)
        );
        // Without GRO every segment is its own skb: an ACK per 2 segments (delayed ACKs).
        assert_eq!(gro_o, 1.0);
        assert!((acks(&without) / segs(&without) - 0.5).abs() < 0.05);
        // 8 µs of moderation at 10 Gbit/s gathers ~7 segments: merged skbs, one ACK each.
        assert!(gro_w > 3.0, "GRO merged {gro_w} segments per skb");
        assert!(acks(&with) / segs(&with) < 0.3);
        assert!((acks(&with) / segs(&with) - 1.0 / gro_w).abs() < 0.1, "one ACK per merged skb");
        // The ACK clock: an unpaced, cwnd-limited sender that does not defer (`tso_defer`
        // false) sends what each ACK frees, so with about one stretch ACK per sender interrupt
        // (57k ACKs/s, 8 µs moderation) its realized offload chunks follow the receiver's GRO.
        // Linux's TSO deferral (the default) waits for a full 64-KB frame instead: 45 segments.
        let eager = run(r#"{"cc":"cubic","tso_defer":false}"#, "", 1).results();
        let chunk_e = col(&eager.hosts, "chunk_mean_segs")[0];
        let chunk_w = col(&rw.hosts, "chunk_mean_segs")[0];
        eprintln!("chunks {chunk_e:.2} eager, {chunk_w:.2} deferring");
        assert!((chunk_e / gro_w - 1.0).abs() < 0.3, "chunks of {chunk_e} for skbs of {gro_w}");
        assert!(chunk_w > 0.9 * (65_536 / 1448) as f64, "deferred chunks of {chunk_w}");
    }
}

mod ceiling_tests {
    use super::tests_support::*;

    /// Only the receive copy costs CPU: 1 ns per byte, i.e. a core copies 8 Gbit/s. One stream
    /// (one core) cannot deliver faster; two streams on two cores can.
    const COPY_ONLY: &str = r#""rx_copy_rate_bps":8000000000,"irq_cost_ns":0,"rx_segment_cost_ns":0,"rx_skb_cost_ns":0,
        "tx_chunk_cost_ns":0,"tx_segment_cost_ns":0,"ack_cost_ns":0,"cc_ack_cost_ns":0,"timer_cost_ns":0,
        "tx_copy_rate_bps":10000000000000"#;

    #[test]
    fn one_stream_is_capped_by_its_core_and_two_streams_use_two() {
        let one = run(r#"{"cc":"bbr3"}"#, COPY_ONLY, 2);
        let two = run(r#"{"cc":"bbr3","count":2}"#, COPY_ONLY, 2);
        let (g1, g2) = (goodput_bps(&one), goodput_bps(&two));
        let busiest = col(&one.results().hosts, "cpu_util_max_core")[1];
        eprintln!("one {g1:.3e} two {g2:.3e} busiest core {busiest:.3}");
        // Payload at 8 Gbit/s of copy is the ceiling (startup included, so below it).
        assert!(g1 <= 8.0e9 * 1.001, "one stream delivered {g1} bit/s past its core's copy rate");
        assert!(g1 > 6.0e9, "one stream delivered only {g1} bit/s");
        assert!(busiest > 0.85, "the stream's receiver core was busy {busiest}");
        // Two streams: flows 0 and 1 run on cores 0 and 1; the 10 Gbit/s link is the limit.
        assert!(g2 > 8.5e9, "two streams delivered only {g2} bit/s");
    }
}

mod tests_support {
    pub(super) use super::gro_tests::{col, goodput_bps, run};
}

mod fast_path_tests {
    use super::tests_support::*;

    /// App-limited BBR (an RPC every 100 µs, 64 KB each, ~5 Gbit/s on a 10 Gbit/s path): the
    /// fast path answers most ACKs, saves their algorithm CPU and changes nothing else much.
    #[test]
    fn the_fast_path_skips_app_limited_acks_and_saves_sender_cpu() {
        for cc in ["bbr2", "bbr3"] {
            let flow = |fp: bool| {
                format!(
                    r#"{{"cc":"{cc}","fast_path":{fp},"rpc":{{"size_bytes":65536,"gap_ns":100000}}}}"#
                )
            };
            let on = run(&flow(true), r#""cc_ack_cost_ns":1000"#, 1);
            let off = run(&flow(false), r#""cc_ack_cost_ns":1000"#, 1);
            let (ron, roff) = (on.results(), off.results());
            let fast_on = col(&ron.flows, "cc_fast_acks")[0];
            let fast_off = col(&roff.flows, "cc_fast_acks")[0];
            let acks = on.flows[0].receiver.acks_sent as f64;
            let cpu = |r: &crate::Results| col(&r.hosts, "cpu_ns_per_mb")[0];
            let rpc = |r: &crate::Results| col(&r.flows, "rpc_mean_ms")[0];
            eprintln!("{cc}: fast acks {fast_on} of {acks}; cpu/MB {:.0} vs {:.0} ns; rpc {:.4} vs {:.4} ms",
                cpu(&ron), cpu(&roff), rpc(&ron), rpc(&roff));
            assert_eq!(fast_off, 0.0, "{cc}: fast path off, yet ACKs took it");
            assert!(fast_on > 0.3 * acks, "{cc}: only {fast_on} of {acks} ACKs took the fast path");
            assert!(cpu(&ron) < cpu(&roff), "{cc}: the fast path saved no CPU");
            assert!((rpc(&ron) / rpc(&roff) - 1.0).abs() < 0.1, "{cc}: RPC latency moved");
        }
    }
}

mod tsq_tests {
    use super::tests_support::*;
    use crate::Simulation;

    fn nic_bottleneck(hosts: Option<&str>) -> Simulation {
        let hosts = hosts.map_or(String::new(), |h| format!(r#","hosts":{{{h}}}"#));
        let mut sim = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":1000000000,"sample_interval_ns":100000000,
                "topology":{{"kind":"dumbbell","access_rate_bps":10000000000,"bottleneck":{{"rate_bps":40000000000,
                "rtt_ns":1000000,"buffer":{{"bytes":4000000}}}}}},"flows":[{{"cc":"bbr2","count":20,"sender":0}}]{hosts}}}"#
        ))
        .unwrap();
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        sim
    }

    fn chunks(sim: &Simulation) -> (f64, f64) {
        let f = sim.results().flows;
        let (n, segs, goal) =
            (col(&f, "tso_bursts"), col(&f, "tso_burst_mean_segs"), col(&f, "tso_goal_mean_segs"));
        let total: f64 = n.iter().sum();
        let w = |v: &[f64]| v.iter().zip(&n).map(|(a, b)| a * b).sum::<f64>() / total;
        (w(&segs), w(&goal))
    }

    /// 20 paced flows share one 10 Gbit/s sender NIC (the bottleneck): TSQ holds each back. Linux
    /// frees TSQ budget when an skb's TX completes, whole, and checks TSQ per skb; freeing it per
    /// departing segment (no host model) lets a flow in one segment at a time.
    #[test]
    fn tsq_limited_flows_send_whole_chunks_with_the_host_model() {
        let (per_seg, goal0) = chunks(&nic_bottleneck(None));
        let sim = nic_bottleneck(Some(
            r#""rx_copy_rate_bps":10000000000000,"tx_copy_rate_bps":10000000000000"#,
        ));
        let (per_skb, goal1) = chunks(&sim);
        eprintln!(
            "realized {per_seg:.2} of {goal0:.1} per segment; {per_skb:.2} of {goal1:.1} per skb"
        );
        assert!(per_seg < 2.0, "per-segment TSQ release realized {per_seg}");
        assert!(per_skb > 3.0 * per_seg, "per-skb TSQ release realized only {per_skb}");
        assert!(per_skb <= goal1 + 1e-9);
        assert!(goodput_bps(&sim) > 0.9 * 10e9 * 1448.0 / 1538.0, "the NIC stays busy");
    }
}

mod flow_control_tests {
    use super::tests_support::*;

    /// The receiver's core copies 4 Gbit/s and its ring holds 64 packets; a 10 Gbit/s path.
    /// Without flow control the ring drops what the core cannot take; with it the NIC pauses the
    /// port towards it and the port's queue (the bottleneck's 2 MB here) takes the excess.
    #[test]
    fn flow_control_moves_the_excess_from_the_ring_to_the_switch_port() {
        let host = r#""rx_copy_rate_bps":4000000000,"rx_ring_pkts":64"#;
        let off = run(r#"{"cc":"cubic"}"#, host, 1);
        let on = run(r#"{"cc":"cubic"}"#, &format!(r#"{host},"flow_control":true"#), 1);
        let (ro, rn) = (off.results(), on.results());
        let drops = |r: &crate::Results| col(&r.hosts, "rx_ring_drops")[1];
        let pauses = |r: &crate::Results| col(&r.hosts, "pause_frames")[1];
        eprintln!(
            "ring drops {} vs {}; pauses {} vs {}; goodput {:.3e} vs {:.3e}",
            drops(&ro),
            drops(&rn),
            pauses(&ro),
            pauses(&rn),
            goodput_bps(&off),
            goodput_bps(&on)
        );
        assert!(drops(&ro) > 0.0, "the ring must overflow without flow control");
        assert_eq!(pauses(&ro), 0.0);
        assert_eq!(drops(&rn), 0.0, "a quarter of the ring is room for what is on its way");
        assert!(pauses(&rn) > 0.0);
        // The core is the bottleneck either way: at most its copy rate.
        assert!(goodput_bps(&on) <= 4.0e9 * 1.001 && goodput_bps(&on) > 3.0e9);
    }
}
