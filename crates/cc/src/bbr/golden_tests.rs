//! Golden traces of every BBR version and variant: the refactoring net.
//!
//! Each algorithm registered as a BBR (bbr1, bbr1_linux413, bbr2, bbr2_new, bbr3, bbr3_linux)
//! runs a fixed set of scenarios on the unit tests' bottleneck (`testkit`), and on every ACK the
//! test records what the algorithm exposes: cwnd, ssthresh, pacing rate, offload burst, fast-path
//! count, and its [`ModelView`] (state, round start, max_bw, bw, min_rtt, the short/long-term
//! bounds, extra_acked, the full-pipe detector, gains, saved cwnd, ECN alpha).
//!
//! The golden file of an algorithm (`crates/cc/tests/golden/bbr/<name>.txt`) holds, per scenario,
//! an FNV-1a hash of every ACK's line and the ACK count, then the lines of every
//! `STRIDE`-th ACK and of the first `MAX_CHANGES` ACKs on which the state changed, so a
//! difference can be located by reading. A run that differs in any ACK's state fails (hash), and the first differing
//! recorded line is shown.
//!
//! Regenerate (only for an intended behaviour change, never for a refactor):
//! `BBRLAB_BLESS=1 cargo test -p bbrlab-cc --release golden`.

use super::{Bbr1, Bbr2, Bbr3, ModelView};
use crate::testkit::{CwndLimited, KitCc, Recovery, Sim, MS, MSS, SEC};
use crate::TcpCc;
use std::fmt::Write as _;

/// Every STRIDE-th ACK's line is kept in the golden file (besides state changes).
const STRIDE: u64 = 500;
/// At most this many state-change lines per scenario (small-BDP ECN runs cycle every few ms).
const MAX_CHANGES: u32 = 200;

/// What the test needs from each version beyond the kit's hooks.
trait Traced: KitCc {
    fn view(&self, tp: &TcpCc) -> ModelView;
}

impl Traced for Bbr1 {
    fn view(&self, _tp: &TcpCc) -> ModelView {
        self.model_view()
    }
}

impl Traced for Bbr2 {
    fn view(&self, tp: &TcpCc) -> ModelView {
        self.model_view(tp)
    }
}

impl Traced for Bbr3 {
    fn view(&self, _tp: &TcpCc) -> ModelView {
        self.model_view()
    }
}

/// One scenario: a path and a sender, and how long to run.
struct Scenario {
    name: &'static str,
    rate_pps: u64,
    prop_ns: u64,
    buf_pkts: usize,
    loss_p: f64,
    ce_above_pkts: usize,
    ecn: bool,
    /// Propagation delay growth, ns per second.
    drift_ns_per_s: u64,
    /// Phases of the application: (duration, packets/s or None = bulk, pause before it).
    app: &'static [(u64, Option<f64>, u64)],
}

/// What most scenarios share: 24 Mbit/s (2000 packets/s), 40 ms, no random loss, no CE marking,
/// no ECN, a fixed propagation delay. Each scenario names its buffer and application phases.
const PATH_24M_40MS: Scenario = Scenario {
    name: "",
    rate_pps: 2000,
    prop_ns: 40 * MS,
    buf_pkts: 0,
    loss_p: 0.0,
    ce_above_pkts: usize::MAX,
    ecn: false,
    drift_ns_per_s: 0,
    app: &[],
};

const SCENARIOS: &[Scenario] = &[
    // 24 Mbit/s, 40 ms: BDP 80 packets, a 1-BDP buffer; 12 s reaches PROBE_RTT in every version
    // (5 s in v2/v3, 10 s in v1).
    Scenario { name: "clean_1bdp", buf_pkts: 80, app: &[(12 * SEC, None, 0)], ..PATH_24M_40MS },
    // A 1/4-BDP buffer: STARTUP overflows it, the loss-driven bounds engage.
    Scenario { name: "shallow_loss", buf_pkts: 20, app: &[(6 * SEC, None, 0)], ..PATH_24M_40MS },
    // 1 % random loss before a deep buffer (v1's policer detector, v2/v3's loss thresholds).
    Scenario {
        name: "random_loss",
        buf_pkts: 400,
        loss_p: 0.01,
        app: &[(6 * SEC, None, 0)],
        ..PATH_24M_40MS
    },
    // 120 Mbit/s, 2 ms (ECN-eligible min_rtt ≤ 5 ms): BDP 20 packets, CE above 10 queued.
    Scenario {
        name: "ecn_marking",
        rate_pps: 10_000,
        prop_ns: 2 * MS,
        buf_pkts: 200,
        ce_above_pkts: 10,
        ecn: true,
        app: &[(3 * SEC, None, 0)],
        ..PATH_24M_40MS
    },
    // App-limited at 1/4 of the link, idle 1 s (restart from idle), bulk again.
    Scenario {
        name: "app_limited_idle",
        buf_pkts: 160,
        app: &[(3 * SEC, Some(500.0), 0), (2 * SEC, Some(300.0), SEC), (3 * SEC, None, 0)],
        ..PATH_24M_40MS
    },
    // The propagation delay grows 1 ms per second (a route change the min filters cannot see):
    // no sample refreshes min_rtt, so v2 (whose `<=` refresh keeps a constant-RTT path out of
    // PROBE_RTT) enters it too.
    Scenario {
        name: "rtt_drift",
        buf_pkts: 80,
        drift_ns_per_s: MS,
        app: &[(12 * SEC, None, 0)],
        ..PATH_24M_40MS
    },
];

/// FNV-1a, 64 bit: a stable hash of the trace text (std's hasher is not stable across releases).
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// One ACK's observable state as a line.
fn line(t_ns: u64, ack: u64, rounds: u64, tp: &TcpCc, segs: Option<u32>, v: &ModelView) -> String {
    let mut s = String::with_capacity(200);
    let unset64 = |x: u64| if x == u64::MAX { "-".to_string() } else { x.to_string() };
    let unset32 = |x: u32| if x == u32::MAX { "-".to_string() } else { x.to_string() };
    write!(
        s,
        "t={t_ns} ack={ack} st={} cy={} rs={} rc={rounds} cwnd={} ssth={} pace={} tso={} fast={} \
         maxbw={} bw={} minrtt={} bwst={} bwhi={} ltbw={} ilt={} ist={} xa={} fbr={} fbw={} \
         fbc={} pg={} cg={} prior={} alpha={}",
        v.state_code,
        v.cycle_idx,
        v.round_start as u8,
        tp.snd_cwnd,
        tp.snd_ssthresh,
        tp.pacing_rate_bytes_per_s,
        segs.unwrap_or(0),
        tp.cc_fast_acks,
        v.max_bw,
        v.bw,
        unset64(v.min_rtt_ns),
        unset64(v.bw_shortterm),
        unset64(v.bw_hi),
        v.lt_bw,
        unset32(v.inflight_longterm),
        unset32(v.inflight_shortterm),
        v.extra_acked,
        v.full_bw_reached as u8,
        v.full_bw,
        v.full_bw_count,
        v.pacing_gain,
        v.cwnd_gain,
        v.prior_cwnd,
        v.ecn_alpha,
    )
    .unwrap();
    s
}

/// Run `sc` with `cc`; returns the scenario's section of the golden file.
fn trace<A: Traced>(cc: A, sc: &Scenario) -> String {
    let mut tp = TcpCc::new(MSS, 10);
    tp.ecn_ok = sc.ecn;
    let mut sim = Sim::with_tp(cc, tp, sc.rate_pps, sc.prop_ns);
    sim.buf_pkts = sc.buf_pkts;
    sim.loss_p = sc.loss_p;
    sim.ce_above_pkts = sc.ce_above_pkts;
    sim.drift_ns_per_s = sc.drift_ns_per_s;
    sim.recovery = Recovery::ExtendedByEachLoss;
    sim.cwnd_limited = CwndLimited::Round;
    sim.tx_start_events = true;
    let (mut hash, mut acks, mut rounds) = (0xcbf2_9ce4_8422_2325u64, 0u64, 0u64);
    let mut kept = String::new();
    let (mut last_state, mut changes) = (u8::MAX, 0u32);
    for &(dur, pps, pause) in sc.app {
        sim.pause_until = sim.now + pause;
        sim.set_app_rate(pps);
        let end = sim.now + pause + dur;
        while sim.now < end {
            if let crate::testkit::Ev::Ack { .. } = sim.step() {
                acks += 1;
                let v = sim.cc.view(&sim.tp);
                rounds += v.round_start as u64;
                let segs = sim.cc.tso_segs(&sim.tp);
                let l = line(sim.now, acks, rounds, &sim.tp, segs, &v);
                fnv1a(&mut hash, l.as_bytes());
                fnv1a(&mut hash, b"\n");
                let changed = v.state_code != last_state && changes < MAX_CHANGES;
                changes += changed as u32;
                if acks % STRIDE == 1 || changed {
                    kept.push_str(&l);
                    kept.push('\n');
                }
                last_state = v.state_code;
            }
        }
    }
    format!("== {} acks={acks} hash={hash:016x}\n{kept}", sc.name)
}

/// The golden text of one algorithm: every scenario's section.
fn golden_text<A: Traced>(make: impl Fn() -> A) -> String {
    SCENARIOS.iter().map(|sc| trace(make(), sc)).collect()
}

/// Compare with (or, with BBRLAB_BLESS=1, write) `tests/golden/bbr/<name>.txt`.
fn check(name: &str, got: String) {
    let path = format!("{}/tests/golden/bbr/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("BBRLAB_BLESS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(&path).parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (generate with BBRLAB_BLESS=1)"));
    if got == want {
        return;
    }
    // Point at the first difference (a scenario header: its hash), and at the first kept line
    // that differs, which says in which state and field the traces part.
    let first = |kept_only: bool| {
        got.lines()
            .zip(want.lines())
            .enumerate()
            .filter(|(_, (g, _))| !kept_only || !g.starts_with("=="))
            .find(|(_, (g, w))| g != w)
            .map(|(i, (g, w))| format!("line {}:\n  want {w}\n  got  {g}\n", i + 1))
            .unwrap_or_default()
    };
    let diff = format!("{}{}", first(false), first(true));
    panic!("{name}: per-ACK state differs from {path}\n{diff}");
}

/// One test per golden file, so each version's trace passes or fails on its own:
/// `test name: golden file name => the flow it traces`.
macro_rules! golden_tests {
    ($($test:ident: $name:literal => $make:expr;)*) => {
        $(
            #[test]
            fn $test() {
                check($name, golden_text(|| $make));
            }
        )*
    };
}

golden_tests! {
    golden_bbr1: "bbr1" => Bbr1::new(42);
    golden_bbr1_linux413: "bbr1_linux413" => Bbr1::with_variant(42, super::v1::Variant::Linux413);
    golden_bbr2: "bbr2" => Bbr2::new(42, super::v2::Variant::V2alpha);
    golden_bbr2_new: "bbr2_new" => Bbr2::new(42, super::v2::Variant::ManyFlows);
    golden_bbr3: "bbr3" => Bbr3::new(42, super::v3::Variant::Draft);
    golden_bbr3_linux: "bbr3_linux" => Bbr3::new(42, super::v3::Variant::Linux);
}
