//! The sampled tables of a run: the flows' timeseries, the monitored queues, and the per-ACK
//! state trace of flows with `trace`, with the category labels their `*_code` columns index.

use super::{QueueCols, QueueRow, StateCols, StateRow, Table, TimeseriesCols, TimeseriesRow};
use cc::bbr::ModelView;
use cc::{CcStateSample, Nanos, TcpCc};

/// A category label's code in `labels`, added on first use.
fn code_of(labels: &mut Vec<&'static str>, s: &'static str) -> usize {
    match labels.iter().position(|&l| l == s) {
        Some(i) => i,
        None => {
            labels.push(s);
            labels.len() - 1
        }
    }
}

/// What a flow's sample says, before it becomes a timeseries row.
pub struct FlowSample<'a> {
    pub t_ns: Nanos,
    pub flow: i32,
    pub delivered_bytes: i64,
    pub goodput_bps: f64,
    pub cwnd_pkts: i64,
    pub mss: i64,
    pub inflight_bytes: i64,
    pub pacing_rate_bps: f64,
    pub delivery_rate_bps: f64,
    pub srtt_ms: f64,
    pub min_rtt_ms: f64,
    pub rtt_ms: f64,
    pub retransmits: i64,
    pub ssthresh_pkts: i64,
    pub state: &'a CcStateSample,
    pub ca_state: u8,
    pub rwnd_limited: u8,
    pub sndbuf_limited: u8,
    pub app_limited: f64,
}

/// A monitored queue's sample: its position in the run's list of monitored queues, and name.
pub struct QueueSample {
    pub index: usize,
    pub name: &'static str,
    pub row: QueueRow,
}

/// The sampled tables of a run.
pub struct Recorder {
    ts: TimeseriesCols,
    /// The per-ACK state trace of flows with `trace` (`state_row`).
    state: StateCols,
    q: QueueCols,
    phase_labels: Vec<&'static str>,
    queue_labels: Vec<&'static str>,
    pub last_sample_ns: Nanos,
}

impl Recorder {
    pub fn new(n_flows: usize, n_queues: usize, n_samples: usize) -> Recorder {
        let mut ts = TimeseriesCols::default();
        ts.reserve(n_flows.saturating_mul(n_samples).min(1 << 20));
        let mut q = QueueCols::default();
        q.reserve(n_queues.saturating_mul(n_samples).min(1 << 20));
        Recorder {
            ts,
            state: StateCols::default(),
            q,
            phase_labels: Vec::new(),
            queue_labels: Vec::new(),
            last_sample_ns: 0,
        }
    }

    pub fn flow_row(&mut self, r: FlowSample<'_>) {
        let phase = if r.state.phase.is_empty() { "-" } else { r.state.phase };
        let phase_code = code_of(&mut self.phase_labels, phase);
        self.ts.push(TimeseriesRow {
            t_s: r.t_ns as f64 / 1e9,
            flow: r.flow,
            delivered_bytes: r.delivered_bytes,
            goodput_bps: r.goodput_bps,
            cwnd_pkts: r.cwnd_pkts,
            cwnd_bytes: r.cwnd_pkts * r.mss,
            inflight_bytes: r.inflight_bytes,
            pacing_rate_bps: r.pacing_rate_bps,
            delivery_rate_bps: r.delivery_rate_bps,
            srtt_ms: r.srtt_ms,
            min_rtt_ms: r.min_rtt_ms,
            rtt_ms: r.rtt_ms,
            retransmits: r.retransmits,
            ssthresh_pkts: r.ssthresh_pkts,
            phase_code: u8::try_from(phase_code).expect("fewer than 256 phase names"),
            bw_bps: r.state.bw_bps,
            pacing_gain: r.state.pacing_gain,
            cwnd_gain: r.state.cwnd_gain,
            w_max_pkts: r.state.w_max_segs,
            inflight_hi_pkts: r.state.inflight_hi_segs,
            inflight_lo_pkts: r.state.inflight_lo_segs,
            ecn_alpha: r.state.ecn_alpha,
            ca_state: r.ca_state,
            rwnd_limited: r.rwnd_limited,
            sndbuf_limited: r.sndbuf_limited,
            app_limited: r.app_limited,
        });
    }

    /// Every sample walks the same list of monitored queues (names unique) in order, so the first
    /// sample adds the labels in that order and a queue's code is its index: no lookup by name,
    /// which was quadratic in a star's workers (10 000 workers: 32 s for 100 samples).
    pub fn queue_row(&mut self, s: QueueSample) {
        if s.index == self.queue_labels.len() {
            self.queue_labels.push(s.name);
        }
        debug_assert_eq!(self.queue_labels[s.index], s.name);
        let mut row = s.row;
        // Star fabrics have up to MAX_WORKERS + 2 queues: u16 codes never wrap.
        row.queue_code = u16::try_from(s.index).expect("fewer than 65536 queues");
        self.q.push(row);
    }

    /// One row of the state trace: flow `flow`'s algorithm state after an ACK at `t_ns`
    /// (`sample`: what every algorithm exports; `view`: a BBR's model, None for the others).
    pub fn state_row(
        &mut self,
        t_ns: Nanos,
        flow: i32,
        tp: &TcpCc,
        sample: &CcStateSample,
        view: Option<&ModelView>,
        delivery_rate_bps: f64,
    ) {
        let phase = if sample.phase.is_empty() { "-" } else { sample.phase };
        let phase_code = code_of(&mut self.phase_labels, phase);
        let bps = |bw: u64| ModelView::bw_bps(bw, tp.mss);
        let pkts = |v: u32| if v == u32::MAX { f64::NAN } else { f64::from(v) };
        let nan = f64::NAN;
        self.state.push(StateRow {
            t_s: t_ns as f64 / 1e9,
            flow,
            phase_code: u8::try_from(phase_code).expect("fewer than 256 phase names"),
            cycle_idx: view.map_or(0, |v| v.cycle_idx),
            round_count: view.map_or(-1, |v| v.round_count as i64),
            round_start: view.is_some_and(|v| v.round_start) as u8,
            max_bw_bps: view.map_or(nan, |v| bps(v.max_bw)),
            bw_bps: view.map_or(sample.bw_bps, |v| bps(v.bw)),
            bw_lo_bps: view.map_or(nan, |v| bps(v.bw_shortterm)),
            bw_hi_bps: view.map_or(nan, |v| bps(v.bw_hi)),
            lt_bw_bps: view.map_or(0.0, |v| bps(v.lt_bw)),
            inflight_hi_pkts: view.map_or(nan, |v| pkts(v.inflight_longterm)),
            inflight_lo_pkts: view.map_or(nan, |v| pkts(v.inflight_shortterm)),
            min_rtt_ms: match view.map_or(sample.min_rtt_ns, |v| v.min_rtt_ns) {
                0 | u64::MAX => nan,
                ns => ns as f64 / 1e6,
            },
            pacing_gain: sample.pacing_gain,
            cwnd_gain: sample.cwnd_gain,
            extra_acked_pkts: view.map_or(0, |v| i64::from(v.extra_acked)),
            full_bw_reached: view.is_some_and(|v| v.full_bw_reached) as u8,
            full_bw_count: view.map_or(0, |v| v.full_bw_count as i32),
            full_bw_bps: view.map_or(nan, |v| bps(v.full_bw)),
            idle_restart: view.is_some_and(|v| v.idle_restart) as u8,
            cwnd_pkts: i64::from(tp.snd_cwnd),
            inflight_pkts: i64::from(tp.packets_in_flight()),
            next_departure_ms: tp.wstamp_ns.saturating_sub(t_ns) as f64 / 1e6,
            pacing_rate_bps: tp.pacing_rate_bytes_per_s.min(tp.max_pacing_rate_bytes_per_s) as f64
                * 8.0,
            delivery_rate_bps,
            delivered_pkts: tp.delivered as i64,
            lost_pkts: tp.lost as i64,
            delivered_ce_pkts: tp.delivered_ce as i64,
            ecn_alpha: sample.ecn_alpha,
            ca_state: tp.ca_state as u8,
            app_limited: (tp.app_limited != 0) as u8,
        });
    }

    pub fn state_table(&self) -> Table {
        self.state.table()
    }

    pub fn timeseries_table(&self) -> (Table, Vec<String>) {
        (self.ts.table(), self.phase_labels.iter().map(|s| s.to_string()).collect())
    }

    pub fn queue_table(&self) -> Table {
        self.q.table()
    }

    pub fn queue_labels(&self) -> Vec<String> {
        self.queue_labels.iter().map(|s| s.to_string()).collect()
    }
}
