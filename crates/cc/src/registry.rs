//! The algorithm registry: the one list of congestion-control algorithms bbrlab offers.
//!
//! Everything that names an algorithm is derived from [`ALGORITHMS`]: scenario validation (the
//! simulator's config and, through the core's JSON Schema, the Python front), `bbrlab cc`, the
//! kernel name the real-Linux backend asks for, the phase names a run's timeseries may show
//! ([`Algorithm::phases`]: the simulator's samples, the kernel backend's phase column), and the
//! algorithm tables in README.md and docs/core-api.md (generated, and checked by a test). Adding
//! an algorithm is its file, one line in [`crate::cc_types!`](crate) when it brings a new type,
//! and one entry here.

use crate::phases::{self, PhaseTable};
use crate::Cc;

/// One algorithm as scenarios name it.
#[derive(Clone, Copy, Debug)]
pub struct Algorithm {
    /// Canonical scenario name; also the `cc` label in results.
    pub name: &'static str,
    /// Other names a scenario may use (Linux calls BBRv1 `bbr`).
    pub aliases: &'static [&'static str],
    /// One line for `bbrlab cc` and the docs.
    pub summary: &'static str,
    /// What the implementation follows: specs and the code it matches.
    pub source: &'static str,
    /// The name in the kernel's `tcp_available_congestion_control` that runs the same algorithm
    /// on the real-Linux backend; `None` when a stock kernel has no such module.
    pub kernel_name: Option<&'static str>,
    /// The algorithm only works with ECN (Linux `TCP_CONG_NEEDS_ECN`): the connection negotiates
    /// ECN whatever the flow's `ecn` field says.
    pub needs_ecn: bool,
    /// The receiver runs the algorithm's ACK policy for CE changes (Linux runs the receiver's
    /// half of DCTCP in the same module, `dctcp_ece_ack_update`; Google's BBRv2/v3 call it too,
    /// `precise_ece_ack` — Google BBRv2 slides: "DCTCP, BBRv2 emit an ACK when incoming CE bits
    /// change").
    pub receiver_ce_ack: bool,
    /// The phases its state samples report, indexed by phase code (a table of
    /// [`crate::phases`]; the algorithm's `sample` takes its names from the same table).
    pub phases: PhaseTable,
    /// Build the algorithm; `seed` feeds any randomness it uses (BBR's cycle start).
    pub new: fn(seed: u64) -> Cc,
}

impl Algorithm {
    /// Does `name` (trimmed, any case) name this algorithm?
    pub fn answers_to(&self, name: &str) -> bool {
        let n = name.trim();
        self.name.eq_ignore_ascii_case(n) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(n))
    }
}

/// Every algorithm, in the order `bbrlab cc` lists them.
pub static ALGORITHMS: &[Algorithm] = &[
    Algorithm {
        name: "reno",
        aliases: &[],
        summary: "Reno/NewReno AIMD with SACK recovery and PRR",
        source: "RFC 5681, RFC 6675, RFC 9937; Linux tcp_cong.c",
        kernel_name: Some("reno"),
        needs_ecn: false,
        receiver_ce_ack: false,
        phases: phases::LOSS_BASED,
        new: |_| crate::reno::Reno::new().into(),
    },
    Algorithm {
        name: "cubic",
        aliases: &[],
        summary: "CUBIC with Linux's classic HyStart (ACK train + delay); Linux's default",
        source: "RFC 9438; Linux tcp_cubic.c",
        kernel_name: Some("cubic"),
        needs_ecn: false,
        receiver_ce_ack: false,
        phases: phases::LOSS_BASED,
        new: |_| crate::cubic::Cubic::new(crate::hystart::HyStartMode::Linux).into(),
    },
    Algorithm {
        name: "cubic_hspp",
        aliases: &[],
        summary: "CUBIC with HyStart++ instead of Linux's classic HyStart",
        source: "RFC 9438, RFC 9406",
        kernel_name: None,
        needs_ecn: false,
        receiver_ce_ack: false,
        phases: phases::CUBIC_HSPP,
        new: |_| crate::cubic::Cubic::new(crate::hystart::HyStartMode::PlusPlus).into(),
    },
    Algorithm {
        name: "bbr1",
        aliases: &["bbr"],
        summary: "BBRv1 as Linux mainline runs it",
        source: "Linux tcp_bbr.c; draft-cardwell-iccrg-bbr-congestion-control-00",
        kernel_name: Some("bbr"),
        needs_ecn: false,
        receiver_ce_ack: false,
        phases: phases::BBR1,
        new: |seed| crate::bbr::Bbr1::new(seed).into(),
    },
    Algorithm {
        name: "bbr1_linux413",
        aliases: &[],
        summary: "BBRv1 as Linux 4.13 ran it: no ACK-aggregation cwnd term, no pacing margin, no EDT accounting (the Waterloo DC study's kernel)",
        source: "Linux v4.13 tcp_bbr.c (the term came with 78dc70ebaa38, v5.1)",
        kernel_name: None,
        needs_ecn: false,
        receiver_ce_ack: false,
        phases: phases::BBR1,
        new: |seed| crate::bbr::Bbr1::with_variant(seed, crate::bbr::v1::Variant::Linux413).into(),
    },
    Algorithm {
        name: "bbr2",
        aliases: &[],
        summary: "BBRv2 as Google's v2alpha Linux release",
        source: "google/bbr v2alpha tcp_bbr2.c",
        kernel_name: None,
        needs_ecn: false,
        receiver_ce_ack: true,
        phases: phases::BBR2_3,
        new: |seed| crate::bbr::Bbr2::new(seed, crate::bbr::v2::Variant::V2alpha).into(),
    },
    Algorithm {
        name: "bbr2_new",
        aliases: &[],
        summary: "BBRv2 with the many-flows ECN changes of Google's BBRv2 slides (bw_lo cut by ECN, additive probing)",
        source: "google/bbr v2alpha tcp_bbr2.c + Google's BBRv2 optimization slides (docs/sources.md)",
        kernel_name: None,
        needs_ecn: false,
        receiver_ce_ack: true,
        phases: phases::BBR2_3,
        new: |seed| crate::bbr::Bbr2::new(seed, crate::bbr::v2::Variant::ManyFlows).into(),
    },
    Algorithm {
        name: "bbr3",
        aliases: &[],
        summary: "BBRv3 as the IETF draft specifies",
        source: "draft-ietf-ccwg-bbr-06",
        kernel_name: None,
        needs_ecn: false,
        receiver_ce_ack: true,
        phases: phases::BBR2_3,
        new: |seed| crate::bbr::Bbr3::new(seed, crate::bbr::v3::Variant::Draft).into(),
    },
    Algorithm {
        name: "bbr3_linux",
        aliases: &[],
        summary: "BBRv3 with Google's Linux v3 constants (drain 1/2.885, DOWN 0.91, DCTCP-style ECN)",
        source: "google/bbr v3 tcp_bbr.c; draft-ietf-ccwg-bbr-06",
        kernel_name: None,
        needs_ecn: false,
        receiver_ce_ack: true,
        phases: phases::BBR2_3,
        new: |seed| crate::bbr::Bbr3::new(seed, crate::bbr::v3::Variant::Linux).into(),
    },
    Algorithm {
        name: "dctcp",
        aliases: &[],
        summary: "DCTCP: cwnd cut by alpha/2 per window of CE marks",
        source: "RFC 8257; Linux tcp_dctcp.c",
        kernel_name: Some("dctcp"),
        needs_ecn: true,
        receiver_ce_ack: true,
        phases: phases::LOSS_BASED,
        new: |_| crate::dctcp::Dctcp::new().into(),
    },
    Algorithm {
        name: "bql",
        aliases: &[],
        summary: "BQL: delay-based, paired PID controllers hold a small bottleneck queue (bbrlab's reconstruction)",
        source: "the BQL-vs-BBR paper (docs/sources.md); equations in crates/cc/src/bql.rs",
        kernel_name: None,
        needs_ecn: false,
        receiver_ce_ack: false,
        phases: phases::BQL,
        new: |_| crate::bql::Bql::new().into(),
    },
];

/// The algorithm `name` names (canonical name or alias, any case), if any.
pub fn lookup(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.answers_to(name))
}

/// Every name a scenario may use: canonical names, then aliases.
pub fn valid_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = ALGORITHMS.iter().map(|a| a.name).collect();
    names.extend(ALGORITHMS.iter().flat_map(|a| a.aliases.iter().copied()));
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TcpCc;

    #[test]
    fn names_and_aliases_are_unique_lowercase_identifiers() {
        let names = valid_names();
        for (i, n) in names.iter().enumerate() {
            assert!(
                !n.is_empty()
                    && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{n}"
            );
            assert!(!names[..i].contains(n), "{n} appears twice");
        }
    }

    #[test]
    fn lookup_is_case_and_space_insensitive_and_resolves_aliases() {
        assert_eq!(lookup("bbr").unwrap().name, "bbr1");
        assert_eq!(lookup(" CUBIC ").unwrap().name, "cubic");
        assert!(lookup("bbr4").is_none());
        assert!(lookup("").is_none());
    }

    #[test]
    fn every_entry_builds_and_initializes() {
        for a in ALGORITHMS {
            let mut cc = (a.new)(1);
            let mut tp = TcpCc::new(1448, 10);
            cc.init(&mut tp);
            assert!(tp.snd_cwnd >= 1, "{}", a.name);
            if a.needs_ecn {
                assert!(tp.ecn_ok, "{} needs ECN but its init does not require it", a.name);
            }
        }
    }

    /// The unit-test bottleneck drives a `Cc` through the same hooks as the algorithm types.
    impl crate::CongestionOps for Cc {
        fn has_cong_control(&self) -> bool {
            Cc::has_cong_control(self)
        }
        fn init(&mut self, tp: &mut TcpCc) {
            Cc::init(self, tp)
        }
        fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
            Cc::ssthresh(self, tp)
        }
        fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
            Cc::cong_avoid(self, tp, acked)
        }
        fn cong_control(&mut self, tp: &mut TcpCc, rs: &crate::RateSample) {
            Cc::cong_control(self, tp, rs)
        }
        fn set_state(&mut self, tp: &mut TcpCc, s: crate::CaState) {
            Cc::set_state(self, tp, s)
        }
        fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
            Cc::undo_cwnd(self, tp)
        }
        fn pkts_acked(&mut self, tp: &mut TcpCc, acked: u32, rtt_ns: Option<u64>) {
            Cc::pkts_acked(self, tp, acked, rtt_ns)
        }
        fn cwnd_event(&mut self, tp: &mut TcpCc, ev: crate::CwndEvent) {
            Cc::cwnd_event(self, tp, ev)
        }
        fn in_ack_event(&mut self, tp: &mut TcpCc, flags: crate::AckFlags) {
            Cc::in_ack_event(self, tp, flags)
        }
        fn tso_segs(&self, tp: &TcpCc) -> Option<u32> {
            Cc::tso_segs(self, tp)
        }
        fn skb_marked_lost(&mut self, tp: &TcpCc, p: &crate::PacketRateState) {
            Cc::skb_marked_lost(self, tp, p)
        }
        fn sample(&self, tp: &TcpCc) -> crate::CcStateSample {
            Cc::sample(self, tp)
        }
    }
    impl crate::testkit::KitCc for Cc {}

    /// Every algorithm, 12 s over a 100 Mbit/s x 10 ms path with a one-BDP buffer: every
    /// sample's phase is the registry table's name of its code. The rate-based ones must also
    /// pass through the phases such a path takes them to (BBR's 10-s min_rtt window expires, so
    /// BBRv1 reaches PROBE_RTT). The kit grows windows only through `cong_control`, so the
    /// window-based ones stay in slow start here; their transitions are tested in their files
    /// (reno.rs, hystart.rs).
    #[test]
    fn every_sampled_phase_is_the_registry_name_of_its_code() {
        use crate::testkit::{Sim, MS, SEC};
        const RATE_PPS: u64 = 8_333; // 100 Mbit/s of 1500-byte packets
        for a in ALGORITHMS {
            let mut sim = Sim::new((a.new)(1), RATE_PPS, 10 * MS);
            sim.buf_pkts = (RATE_PPS * 10 / 1000) as usize;
            let mut seen = std::collections::BTreeSet::new();
            sim.run_until(
                |s, _| {
                    let smp = s.cc.sample(&s.tp);
                    assert_eq!(
                        a.phases.get(usize::from(smp.phase_code)),
                        Some(&smp.phase),
                        "{}: code {} reported as {:?}",
                        a.name,
                        smp.phase_code,
                        smp.phase
                    );
                    seen.insert(smp.phase);
                    s.now >= 12 * SEC
                },
                13 * SEC,
            );
            let must: &[&str] = match a.phases {
                t if t == phases::BBR1 => &["startup", "drain", "probe_bw", "probe_rtt"],
                t if t == phases::BBR2_3 => {
                    &["startup", "drain", "probe_down", "probe_cruise", "probe_refill", "probe_up"]
                }
                t if t == phases::BQL => &["gain", "control"],
                _ => &[],
            };
            for p in must {
                assert!(seen.contains(p), "{} never in {p}: saw {seen:?}", a.name);
            }
        }
    }
}
