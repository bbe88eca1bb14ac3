//! The algorithm registry: the one list of congestion-control algorithms bbrlab offers.
//!
//! Everything that names an algorithm is derived from [`ALGORITHMS`]: scenario validation (the
//! simulator's config and, through the core's JSON Schema, the Python front), `bbrlab cc`, the
//! kernel name the real-Linux backend asks for, and the algorithm tables in README.md and
//! docs/core-api.md (generated, and checked by a test). Adding an algorithm is its file, one line
//! in [`crate::cc_types!`](crate) when it brings a new type, and one entry here.

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
}
