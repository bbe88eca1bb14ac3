//! PROBE_RTT as the versions' tests watch it on the testkit's link: run until the flow enters
//! it, run through the hold at the PROBE_RTT cwnd, and check that the hold lasted
//! max(200 ms, one round) from when inflight first reached that cwnd (`bbr/probe_rtt.rs`).

use crate::testkit::{Ev, KitCc, Sim, MS};

/// Where inflight first reached the PROBE_RTT cwnd on an ACK: (time ns, delivered, inflight).
pub type Reached = (u64, u64, u32);

/// Run until the flow enters PROBE_RTT (by `limit_ns`); returns the cwnd on the event before
/// and `refresh(sim)` (the stamp of the filter that schedules PROBE_RTT) as of then.
pub fn run_into_probe_rtt<A: KitCc>(
    sim: &mut Sim<A>,
    in_probe_rtt: impl Fn(&A) -> bool,
    refresh: impl Fn(&Sim<A>) -> u64,
    limit_ns: u64,
) -> (u32, u64) {
    let mut cwnd_before = 0;
    let mut last_refresh = refresh(sim);
    sim.run_until(
        |s, _| {
            if in_probe_rtt(&s.cc) {
                return true;
            }
            cwnd_before = s.tp.snd_cwnd;
            last_refresh = refresh(s);
            false
        },
        limit_ns,
    );
    (cwnd_before, last_refresh)
}

/// Run until the flow leaves PROBE_RTT (by `limit_ns`), checking cwnd ≤ `cap_pkts` on every
/// event; returns where inflight first reached `cap_pkts` on an ACK.
pub fn run_through_probe_rtt<A: KitCc>(
    sim: &mut Sim<A>,
    in_probe_rtt: impl Fn(&A) -> bool,
    cap_pkts: u32,
    limit_ns: u64,
    what: &str,
) -> Option<Reached> {
    let mut reached: Option<Reached> = None;
    sim.run_until(
        |s, ev| {
            if !in_probe_rtt(&s.cc) {
                return true;
            }
            assert!(s.tp.snd_cwnd <= cap_pkts, "{what}: cwnd {} > {cap_pkts}", s.tp.snd_cwnd);
            if reached.is_none()
                && matches!(ev, Ev::Ack { .. })
                && s.tp.packets_in_flight() <= cap_pkts
            {
                reached = Some((s.now, s.tp.delivered, s.tp.packets_in_flight()));
            }
            false
        },
        limit_ns,
    );
    reached
}

/// The hold lasted at least 200 ms and one round (the inflight of `reached` delivered) from
/// `reached`, and ended less than `slack_ns` after the 200 ms; returns when it began.
pub fn assert_held<A: KitCc>(
    sim: &Sim<A>,
    reached: Option<Reached>,
    slack_ns: u64,
    what: &str,
) -> u64 {
    let (t, d, f) = reached.unwrap_or_else(|| panic!("{what}: inflight reached the cwnd"));
    assert!(sim.now - t >= 200 * MS, "{what}: held only {} ms", (sim.now - t) / MS);
    assert!(sim.tp.delivered - d >= f as u64, "{what}: less than one round");
    assert!(sim.now - t < 200 * MS + slack_ns, "{what}: held {} ms", (sim.now - t) / MS);
    t
}
