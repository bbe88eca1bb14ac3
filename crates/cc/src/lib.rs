//! Sans-IO congestion control for bbrlab.
//!
//! The model follows Linux's `struct tcp_congestion_ops`, because bbrlab's users compare it with
//! Linux: the transport owns the connection state an algorithm may read and write ([`TcpCc`], the
//! congestion-relevant part of Linux's `struct tcp_sock`) and calls the algorithm at the same points
//! the Linux stack does:
//!
//! | Linux hook          | here                          | when                                          |
//! |---------------------|-------------------------------|-----------------------------------------------|
//! | `init`              | [`Cc::init`]                  | connection start                              |
//! | `ssthresh`          | [`Cc::ssthresh`]              | entering Recovery / Loss / CWR                |
//! | `cong_avoid`        | [`Cc::cong_avoid`]            | per ACK, window-based algorithms, not in Recovery/CWR |
//! | `cong_control`      | [`Cc::cong_control`]          | per ACK, rate-based algorithms (BBR), always   |
//! | `set_state`         | [`Cc::set_state`]             | on `ca_state` changes                         |
//! | `undo_cwnd`         | [`Cc::undo_cwnd`]             | spurious recovery detected                    |
//! | `pkts_acked`        | [`Cc::pkts_acked`]            | per ACK that acks data, with an RTT sample    |
//! | `cwnd_event`        | [`Cc::cwnd_event`]            | tx start after idle, CE transitions, …        |
//! | `in_ack_event`      | [`Cc::in_ack_event`]          | per ACK, with ECE flag (DCTCP)                |
//! | `tso_segs`          | [`Cc::tso_segs`]              | BBR's offload sizing                          |
//!
//! Volumes are in segments (packets of `mss` bytes) as in Linux, so `snd_cwnd` compares directly
//! with `ss -tni`'s `cwnd:`; time is integer nanoseconds passed in by the caller; there is no clock,
//! no I/O and no allocation after construction. Algorithms are dispatched statically through the
//! [`Cc`] enum (no trait objects on the per-ACK path).

pub mod filter;
pub mod rate;
pub mod rng;
#[cfg(test)]
mod testkit;

pub mod bbr;
pub mod bql;
pub mod cubic;
pub mod dctcp;
pub mod hystart;
pub mod phases;
pub mod registry;
pub mod reno;

pub use rate::{PacketRateState, RateSample};

/// Nanoseconds of simulated (or real) time.
pub type Nanos = u64;

pub const NSEC_PER_SEC: u64 = 1_000_000_000;
pub const NSEC_PER_MSEC: u64 = 1_000_000;
pub const NSEC_PER_USEC: u64 = 1_000;

/// Linux's `icsk_ca_state` (include/net/inet_connection_sock.h, `enum tcp_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum CaState {
    /// Nothing bad has been observed.
    #[default]
    Open = 0,
    /// SACKs or dupACKs seen, nothing marked lost yet.
    Disorder = 1,
    /// cwnd reduced by ECN (CE echoed) without loss.
    Cwr = 2,
    /// Fast recovery after loss marked by RACK / dupthresh.
    Recovery = 3,
    /// After an RTO: everything outstanding is presumed lost.
    Loss = 4,
}

/// Linux's `enum tcp_ca_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndEvent {
    /// First transmission when no packets are in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of a CWR episode.
    CompleteCwr,
    /// RTO fired (`CA_EVENT_LOSS`).
    Loss,
    /// A CE-marked segment arrived at the receiver where the previous one was not (receiver side).
    EcnNoCe,
    /// A non-CE segment arrived where the previous one was CE (receiver side).
    EcnIsCe,
}

/// Linux's `CA_ACK_*` flags for `in_ack_event`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckFlags {
    /// The ACK carried ECE (or, with accurate ECN, newly CE-marked bytes).
    pub ece: bool,
    /// The ACK advanced snd_una or updated the window ("slow path" in Linux terms).
    pub window_update: bool,
    /// The ACK acknowledged data.
    pub acked_data: bool,
}

/// The part of Linux's `struct tcp_sock` that congestion control reads and writes.
///
/// Owned by the transport; algorithms get `&mut TcpCc` on every hook, exactly as Linux passes `sk`.
#[derive(Clone, Debug)]
pub struct TcpCc {
    /// Congestion window in segments (`tp->snd_cwnd`).
    pub snd_cwnd: u32,
    /// Slow-start threshold in segments (`tp->snd_ssthresh`); `u32::MAX >> 1` = infinite.
    pub snd_ssthresh: u32,
    /// Upper clamp of the congestion window (`tp->snd_cwnd_clamp`).
    pub snd_cwnd_clamp: u32,
    /// Counter for linear increase (`tp->snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    /// Sender maximum segment size in bytes.
    pub mss: u32,
    /// Pacing rate in bytes per second (`sk->sk_pacing_rate`).
    pub pacing_rate_bytes_per_s: u64,
    /// Cap on the pacing rate, bytes/s (`sk->sk_max_pacing_rate`, SO_MAX_PACING_RATE); u64::MAX = none.
    pub max_pacing_rate_bytes_per_s: u64,
    /// True when the socket paces (BBR sets this in init, as `sk_pacing_status = SK_PACING_NEEDED`).
    pub pacing_enabled: bool,
    /// Smoothed RTT in ns (0 = no sample yet).
    pub srtt_ns: u64,
    /// Windowed (10 s) minimum RTT kept by the transport (`tcp_min_rtt`), ns; u64::MAX = none.
    pub min_rtt_ns: u64,
    /// Segments sent and not yet cumulatively acked (`tp->packets_out`).
    pub packets_out: u32,
    /// Segments SACKed (`tp->sacked_out`).
    pub sacked_out: u32,
    /// Segments marked lost and not yet retransmitted-and-acked (`tp->lost_out`).
    pub lost_out: u32,
    /// Retransmitted segments still in flight (`tp->retrans_out`).
    pub retrans_out: u32,
    /// Total segments delivered (acked or sacked) so far (`tp->delivered`).
    pub delivered: u64,
    /// Total delivered segments that were CE-marked (`tp->delivered_ce`).
    pub delivered_ce: u64,
    /// Total segments marked lost so far (`tp->lost`).
    pub lost: u64,
    /// Time of the most recent delivery, ns (`tp->delivered_mstamp`).
    pub delivered_mstamp_ns: Nanos,
    /// Start of the current send window for rate sampling (`tp->first_tx_mstamp`).
    pub first_tx_mstamp_ns: Nanos,
    /// Non-zero: `delivered` value at which the app-limited period ends (`tp->app_limited`).
    pub app_limited: u64,
    /// Congestion state (`icsk_ca_state`).
    pub ca_state: CaState,
    /// cwnd saved when a reduction started, for undo (`tp->prior_cwnd`).
    pub prior_cwnd: u32,
    /// The flow used its whole cwnd at some point since `cwnd_usage_seq` (`tp->is_cwnd_limited`,
    /// kept by the transport as Linux `tcp_cwnd_validate` does: latched for a round).
    pub is_cwnd_limited: bool,
    /// Largest `packets_out` in the current cwnd-usage round (`tp->max_packets_out`).
    pub max_packets_out: u32,
    /// Bytes per offload burst requested by the algorithm (0 = transport default autosizing).
    pub tso_segs: u32,
    /// Total retransmitted segments (`tp->total_retrans`).
    pub total_retrans: u64,
    /// Data sent so far, segments (`tp->data_segs_out`).
    pub data_segs_out: u64,
    /// Number of RTO-driven recoveries (`icsk_retransmits` summed).
    pub rto_count: u64,
    /// Set by the transport when the receiver window or send buffer, not cwnd, limited sending.
    pub rwnd_limited: bool,
    /// Time now (`tp->tcp_mstamp`), ns, refreshed by the transport before each hook.
    pub now_ns: Nanos,
    /// ECN negotiated on this connection.
    pub ecn_ok: bool,
    /// BBRv2/v3 TSO autosizing adds `64 KB >> (min_rtt / 512 µs)` to the pacing-rate budget
    /// (Google BBRv2 slides, optimisation 2); false reverts to rate-only sizing for the
    /// before/after study.
    pub tso_minrtt_autosize: bool,
    /// BBRv2/v3 fast path (Google BBRv2 slides, optimisation 1; Google's `bbr_run_fast_path`): on
    /// an app-limited ACK below max_bw with no loss or CE in the round and cwnd at its target, skip
    /// the model update (and the control update when mode and min_rtt did not change).
    pub fast_path: bool,
    /// ACKs on which the algorithm skipped its per-ACK work (BBR: the fast path skipped model
    /// and control; window algorithms: not cwnd-limited, the `if (!tcp_is_cwnd_limited) return`
    /// every `cong_avoid` starts with). The host model charges the others the algorithm's cost.
    pub cc_fast_acks: u64,
    /// Time of the most recent data transmission, ns (`tp->lsndtime`); the transport sets it on
    /// every (re)transmission. CUBIC uses it on `CwndEvent::TxStart` to measure the idle time.
    pub lsndtime_ns: Nanos,
    /// Earliest departure time of the next packet the pacer will release, ns (`tp->tcp_wstamp_ns`,
    /// EDT); 0 or anything <= `now_ns` means "now". BBR uses it to estimate packets in the network
    /// at that departure (`bbr_packets_in_net_at_edt`).
    pub wstamp_ns: Nanos,
}

/// Infinite ssthresh as Linux's `TCP_INFINITE_SSTHRESH`.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux `sk_pacing_shift` default: an offload burst or a TSQ budget holds 2^-10 s ≈ 1 ms of the
/// pacing rate.
pub const PACING_SHIFT: u32 = 10;
/// Linux `GSO_LEGACY_MAX_SIZE` (64 KB): the largest offload buffer (`sk_gso_max_size`, no BIG TCP).
pub const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// Linux `sysctl_tcp_min_tso_segs` default: a burst is at least this many segments.
pub const MIN_TSO_SEGS: u32 = 2;

/// Segments per offload burst for algorithms without a `tso_segs` hook: Linux
/// `tcp_tso_autosize` without its min_rtt term, `max(min(rate >> 10, 64 KB) / mss, 2)`.
///
/// There is no upper bound in segments, as in Linux (only `sk_gso_max_segs`, 65535): when one
/// segment is more than half of 64 KB (mss > 32 KB), the 2-segment minimum is a burst above 64 KB.
#[inline]
pub fn tso_autosize(pacing_rate_bytes_per_s: u64, mss: u32) -> u32 {
    let bytes = (pacing_rate_bytes_per_s >> PACING_SHIFT).min(GSO_LEGACY_MAX_SIZE);
    ((bytes / u64::from(mss.max(1))) as u32).max(MIN_TSO_SEGS)
}

impl TcpCc {
    /// A fresh connection: IW segments, infinite ssthresh, no RTT yet.
    pub fn new(mss: u32, initial_cwnd: u32) -> Self {
        TcpCc {
            snd_cwnd: initial_cwnd,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_clamp: u32::MAX >> 1,
            snd_cwnd_cnt: 0,
            mss,
            pacing_rate_bytes_per_s: 0,
            max_pacing_rate_bytes_per_s: u64::MAX,
            pacing_enabled: false,
            srtt_ns: 0,
            min_rtt_ns: u64::MAX,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            delivered_mstamp_ns: 0,
            first_tx_mstamp_ns: 0,
            app_limited: 0,
            ca_state: CaState::Open,
            prior_cwnd: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            tso_segs: 0,
            total_retrans: 0,
            data_segs_out: 0,
            rto_count: 0,
            rwnd_limited: false,
            now_ns: 0,
            ecn_ok: false,
            tso_minrtt_autosize: true,
            fast_path: true,
            cc_fast_acks: 0,
            lsndtime_ns: 0,
            wstamp_ns: 0,
        }
    }

    /// Segments presumed in the network (`tcp_packets_in_flight`, RFC 6675 "pipe").
    #[inline]
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_in_slow_start`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }

    /// Linux `tcp_is_cwnd_limited`: in slow start, cwnd-limited if cwnd < 2·max_packets_out.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        self.in_slow_start() && self.snd_cwnd < 2 * self.max_packets_out
    }

    /// Set cwnd respecting the clamp (`tcp_snd_cwnd_set`).
    #[inline]
    pub fn set_cwnd(&mut self, cwnd: u32) {
        self.snd_cwnd = cwnd.min(self.snd_cwnd_clamp).max(1);
    }
}

/// Linux `tcp_slow_start`: grow cwnd by the acked segments up to ssthresh; return what is left.
#[inline]
pub fn tcp_slow_start(tp: &mut TcpCc, acked: u32) -> u32 {
    let cwnd = (tp.snd_cwnd.saturating_add(acked)).min(tp.snd_ssthresh);
    let left = acked - (cwnd - tp.snd_cwnd).min(acked);
    tp.set_cwnd(cwnd);
    left
}

/// Linux `tcp_cong_avoid_ai`: one segment of increase per `w` segments acked.
#[inline]
pub fn tcp_cong_avoid_ai(tp: &mut TcpCc, w: u32, acked: u32) {
    let w = w.max(1);
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd += 1;
    }
    tp.snd_cwnd_cnt += acked;
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd += delta;
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// An algorithm as a scenario names it: a handle to its [`registry`] entry.
#[derive(Clone, Copy, Debug)]
pub struct CcKind(&'static registry::Algorithm);

impl PartialEq for CcKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl CcKind {
    /// Parse a scenario name (canonical or alias, any case); see [`registry::lookup`].
    pub fn from_name(name: &str) -> Option<CcKind> {
        registry::lookup(name).map(CcKind)
    }

    /// The registry entry.
    pub fn algorithm(&self) -> &'static registry::Algorithm {
        self.0
    }

    /// Canonical name (`tcp_congestion_ops.name`).
    pub fn name(&self) -> &'static str {
        self.0.name
    }
}

/// Internal algorithm state exported for sampling (`ss -tni`, `tcp_cc_info`, timeseries columns).
/// Fields an algorithm does not have are left at their defaults (0 / empty).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcStateSample {
    /// Phase name: `phases[phase_code]` of the algorithm's registry entry (a table of
    /// [`phases`]; empty only in a default sample).
    pub phase: &'static str,
    /// The phase's index in the algorithm's phase table.
    pub phase_code: u8,
    /// Bandwidth estimate in bits/s (BBR max_bw / bw).
    pub bw_bps: f64,
    /// Min RTT held by the algorithm, ns.
    pub min_rtt_ns: u64,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    /// CUBIC W_max (segments), Reno/CUBIC ssthresh are in TcpCc.
    pub w_max_segs: f64,
    /// BBRv2/v3 inflight_hi / inflight_lo (segments); 0 = unset.
    pub inflight_hi_segs: f64,
    pub inflight_lo_segs: f64,
    /// DCTCP / BBR ECN alpha in [0,1].
    pub ecn_alpha: f64,
}

/// Declares [`Cc`], one variant per algorithm type, and its statically dispatched hooks: the
/// per-ACK path goes through a `match`, never a trait object. A new algorithm type adds one line.
macro_rules! cc_types {
    ($d:tt; $($variant:ident($ty:ty)),* $(,)?) => {
        /// The algorithms, dispatched statically.
        #[derive(Clone, Debug)]
        pub enum Cc {
            $($variant($ty)),*
        }

        $(impl From<$ty> for Cc {
            fn from(a: $ty) -> Cc {
                Cc::$variant(a)
            }
        })*

        macro_rules! dispatch {
            ($d self_:ident, $d a:ident => $d e:expr) => {
                match $d self_ {
                    $(Cc::$variant($d a) => $d e),*
                }
            };
        }
    };
}

// `$` is passed in so the generated `dispatch!` macro can have metavariables of its own.
cc_types! { $;
    Reno(reno::Reno),
    Cubic(cubic::Cubic),
    Bbr1(bbr::Bbr1),
    Bbr2(bbr::Bbr2),
    Bbr3(bbr::Bbr3),
    Dctcp(dctcp::Dctcp),
    Bql(bql::Bql),
}

impl Cc {
    /// Build an algorithm. `seed` feeds any randomness the algorithm uses (BBR's cycle start).
    pub fn new(kind: &CcKind, seed: u64) -> Cc {
        (kind.0.new)(seed)
    }

    /// True for algorithms that implement `cong_control` (rate-based; the transport then does not
    /// apply PRR nor call `cong_avoid`/`ssthresh`-driven reductions itself).
    #[inline]
    pub fn has_cong_control(&self) -> bool {
        dispatch!(self, a => a.has_cong_control())
    }

    pub fn init(&mut self, tp: &mut TcpCc) {
        dispatch!(self, a => a.init(tp))
    }

    /// New ssthresh on a congestion event (loss or ECN).
    #[inline]
    pub fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        dispatch!(self, a => a.ssthresh(tp))
    }

    /// Window growth for `acked` newly delivered segments.
    #[inline]
    pub fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        dispatch!(self, a => a.cong_avoid(tp, acked))
    }

    /// Full control on every ACK (rate-based algorithms only).
    #[inline]
    pub fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        dispatch!(self, a => a.cong_control(tp, rs))
    }

    #[inline]
    pub fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        dispatch!(self, a => a.set_state(tp, new_state))
    }

    /// cwnd to restore after a spurious recovery.
    #[inline]
    pub fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        dispatch!(self, a => a.undo_cwnd(tp))
    }

    #[inline]
    pub fn pkts_acked(&mut self, tp: &mut TcpCc, acked: u32, rtt_ns: Option<u64>) {
        dispatch!(self, a => a.pkts_acked(tp, acked, rtt_ns))
    }

    #[inline]
    pub fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CwndEvent) {
        dispatch!(self, a => a.cwnd_event(tp, ev))
    }

    #[inline]
    pub fn in_ack_event(&mut self, tp: &mut TcpCc, flags: AckFlags) {
        dispatch!(self, a => a.in_ack_event(tp, flags))
    }

    /// Offload burst size in segments, or None for the transport's default autosizing.
    #[inline]
    pub fn tso_segs(&self, tp: &TcpCc) -> Option<u32> {
        dispatch!(self, a => a.tso_segs(tp))
    }

    /// Per-packet loss notification (BBRv2/v3's inflight-at-loss estimate).
    #[inline]
    pub fn skb_marked_lost(&mut self, tp: &TcpCc, p: &PacketRateState) {
        dispatch!(self, a => a.skb_marked_lost(tp, p))
    }

    /// Export internal state for sampling.
    pub fn sample(&self, tp: &TcpCc) -> CcStateSample {
        dispatch!(self, a => a.sample(tp))
    }

    /// Run with one rule changed, for a conformance test (BBRv3's [`bbr::v3::Params::mutate`]);
    /// Ok(false): the algorithm has no such rules and runs unchanged.
    pub fn mutate_for_test(&mut self, spec: &str) -> Result<bool, String> {
        match self {
            Cc::Bbr3(a) => a.mutate_for_test(spec).map(|()| true),
            _ => Ok(false),
        }
    }

    /// A BBR version's model and controls (the per-ACK state trace reads it); None for the
    /// algorithms outside the BBR family.
    pub fn model_view(&self, tp: &TcpCc) -> Option<bbr::ModelView> {
        match self {
            Cc::Bbr1(a) => Some(a.model_view()),
            Cc::Bbr2(a) => Some(a.model_view(tp)),
            Cc::Bbr3(a) => Some(a.model_view()),
            _ => None,
        }
    }
}

/// The hooks every algorithm implements; [`Cc`] dispatches to them statically.
/// Default methods do what Linux does when an op is NULL.
pub trait CongestionOps {
    /// The algorithm implements `cong_control` (Linux: `.cong_control` is set): it sets cwnd and
    /// pacing itself on every ACK, and the transport applies no PRR or ssthresh-driven cut.
    fn has_cong_control(&self) -> bool {
        false
    }
    fn init(&mut self, _tp: &mut TcpCc) {}
    fn ssthresh(&mut self, tp: &TcpCc) -> u32;
    fn cong_avoid(&mut self, _tp: &mut TcpCc, _acked: u32) {}
    fn cong_control(&mut self, _tp: &mut TcpCc, _rs: &RateSample) {}
    fn set_state(&mut self, _tp: &mut TcpCc, _new_state: CaState) {}
    /// Linux `tcp_reno_undo_cwnd`: max(cwnd, prior_cwnd); algorithms that keep more state override.
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }
    fn pkts_acked(&mut self, _tp: &mut TcpCc, _acked: u32, _rtt_ns: Option<u64>) {}
    fn cwnd_event(&mut self, _tp: &mut TcpCc, _ev: CwndEvent) {}
    fn in_ack_event(&mut self, _tp: &mut TcpCc, _flags: AckFlags) {}
    fn tso_segs(&self, _tp: &TcpCc) -> Option<u32> {
        None
    }
    /// A packet was just marked lost (Linux `.skb_marked_lost`, BBRv2/v3); `p` is its send-time
    /// snapshot and `tp.lost` already counts it.
    fn skb_marked_lost(&mut self, _tp: &TcpCc, _p: &PacketRateState) {}
    fn sample(&self, tp: &TcpCc) -> CcStateSample;
}
