//! Columnar metric buffers, filled on the sampling timer (never per packet).

use cc::{CcStateSample, Nanos};

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    U8(Vec<u8>),
}

impl Column {
    /// numpy dtype string and little-endian bytes.
    pub fn to_le_bytes(&self) -> (&'static str, Vec<u8>) {
        match self {
            Column::F64(v) => ("<f8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::I64(v) => ("<i8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::I32(v) => ("<i4", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::U8(v) => ("|u1", v.clone()),
        }
    }
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::I32(v) => v.len(),
            Column::U8(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn as_f64(&self) -> Option<&[f64]> {
        if let Column::F64(v) = self { Some(v) } else { None }
    }
    pub fn as_i64(&self) -> Option<&[i64]> {
        if let Column::I64(v) = self { Some(v) } else { None }
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &'static str, c: Column) {
        self.columns.push((name, c));
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
}

pub struct FlowRow<'a> {
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
    pub phase: &'static str,
    pub state: &'a CcStateSample,
    pub ca_state: u8,
    pub rwnd_limited: u8,
    pub sndbuf_limited: u8,
}

pub struct QueueRow {
    pub t_ns: Nanos,
    pub name: &'static str,
    pub occupancy_bytes: i64,
    pub occupancy_pkts: i64,
    pub mean_occupancy_bytes: f64,
    pub max_occupancy_bytes: i64,
    pub drops: i64,
    pub random_losses: i64,
    pub ce_marks: i64,
    pub tx_bytes: i64,
    pub utilization: f64,
    /// PAUSE/XON frames sent (switch output port) or received (paused link), cumulative.
    pub pause_frames: i64,
}

#[derive(Default)]
struct FlowCols {
    t_s: Vec<f64>,
    flow: Vec<i32>,
    delivered_bytes: Vec<i64>,
    goodput_bps: Vec<f64>,
    cwnd_pkts: Vec<i64>,
    cwnd_bytes: Vec<i64>,
    inflight_bytes: Vec<i64>,
    pacing_rate_bps: Vec<f64>,
    delivery_rate_bps: Vec<f64>,
    srtt_ms: Vec<f64>,
    min_rtt_ms: Vec<f64>,
    rtt_ms: Vec<f64>,
    retransmits: Vec<i64>,
    ssthresh_pkts: Vec<i64>,
    phase_code: Vec<u8>,
    bw_bps: Vec<f64>,
    pacing_gain: Vec<f64>,
    cwnd_gain: Vec<f64>,
    w_max_pkts: Vec<f64>,
    inflight_hi_pkts: Vec<f64>,
    inflight_lo_pkts: Vec<f64>,
    ecn_alpha: Vec<f64>,
    ca_state: Vec<u8>,
    rwnd_limited: Vec<u8>,
    sndbuf_limited: Vec<u8>,
}

#[derive(Default)]
struct QueueCols {
    t_s: Vec<f64>,
    queue_code: Vec<u8>,
    occupancy_bytes: Vec<i64>,
    occupancy_pkts: Vec<i64>,
    mean_occupancy_bytes: Vec<f64>,
    max_occupancy_bytes: Vec<i64>,
    drops: Vec<i64>,
    random_losses: Vec<i64>,
    ce_marks: Vec<i64>,
    tx_bytes: Vec<i64>,
    utilization: Vec<f64>,
    pause_frames: Vec<i64>,
}

pub struct Recorder {
    f: FlowCols,
    q: QueueCols,
    phase_labels: Vec<&'static str>,
    queue_labels: Vec<&'static str>,
    pub last_sample_ns: Nanos,
}

impl Recorder {
    pub fn new(n_flows: usize, n_queues: usize, n_samples: usize) -> Recorder {
        let cap = n_flows.saturating_mul(n_samples).min(50_000_000);
        let mut f = FlowCols::default();
        f.t_s.reserve(cap);
        f.flow.reserve(cap);
        let mut q = QueueCols::default();
        q.t_s.reserve(n_queues * n_samples);
        Recorder { f, q, phase_labels: Vec::new(), queue_labels: Vec::new(), last_sample_ns: 0 }
    }

    fn code(labels: &mut Vec<&'static str>, s: &'static str) -> u8 {
        match labels.iter().position(|&l| l == s) {
            Some(i) => i as u8,
            None => {
                labels.push(s);
                (labels.len() - 1) as u8
            }
        }
    }

    pub fn flow_row(&mut self, r: FlowRow<'_>) {
        let f = &mut self.f;
        f.t_s.push(r.t_ns as f64 / 1e9);
        f.flow.push(r.flow);
        f.delivered_bytes.push(r.delivered_bytes);
        f.goodput_bps.push(r.goodput_bps);
        f.cwnd_pkts.push(r.cwnd_pkts);
        f.cwnd_bytes.push(r.cwnd_pkts * r.mss);
        f.inflight_bytes.push(r.inflight_bytes);
        f.pacing_rate_bps.push(r.pacing_rate_bps);
        f.delivery_rate_bps.push(r.delivery_rate_bps);
        f.srtt_ms.push(r.srtt_ms);
        f.min_rtt_ms.push(r.min_rtt_ms);
        f.rtt_ms.push(r.rtt_ms);
        f.retransmits.push(r.retransmits);
        f.ssthresh_pkts.push(r.ssthresh_pkts);
        let code = Self::code(&mut self.phase_labels, if r.phase.is_empty() { "-" } else { r.phase });
        f.phase_code.push(code);
        f.bw_bps.push(r.state.bw_bps);
        f.pacing_gain.push(r.state.pacing_gain);
        f.cwnd_gain.push(r.state.cwnd_gain);
        f.w_max_pkts.push(r.state.w_max_segs);
        f.inflight_hi_pkts.push(r.state.inflight_hi_segs);
        f.inflight_lo_pkts.push(r.state.inflight_lo_segs);
        f.ecn_alpha.push(r.state.ecn_alpha);
        f.ca_state.push(r.ca_state);
        f.rwnd_limited.push(r.rwnd_limited);
        f.sndbuf_limited.push(r.sndbuf_limited);
    }

    pub fn queue_row(&mut self, r: QueueRow) {
        let code = Self::code(&mut self.queue_labels, r.name);
        let q = &mut self.q;
        q.t_s.push(r.t_ns as f64 / 1e9);
        q.queue_code.push(code);
        q.occupancy_bytes.push(r.occupancy_bytes);
        q.occupancy_pkts.push(r.occupancy_pkts);
        q.mean_occupancy_bytes.push(r.mean_occupancy_bytes);
        q.max_occupancy_bytes.push(r.max_occupancy_bytes);
        q.drops.push(r.drops);
        q.random_losses.push(r.random_losses);
        q.ce_marks.push(r.ce_marks);
        q.tx_bytes.push(r.tx_bytes);
        q.utilization.push(r.utilization);
        q.pause_frames.push(r.pause_frames);
    }

    pub fn timeseries_table(&self) -> (Table, Vec<String>) {
        let f = &self.f;
        let mut t = Table::default();
        t.push("t_s", Column::F64(f.t_s.clone()));
        t.push("flow", Column::I32(f.flow.clone()));
        t.push("delivered_bytes", Column::I64(f.delivered_bytes.clone()));
        t.push("goodput_bps", Column::F64(f.goodput_bps.clone()));
        t.push("cwnd_pkts", Column::I64(f.cwnd_pkts.clone()));
        t.push("cwnd_bytes", Column::I64(f.cwnd_bytes.clone()));
        t.push("inflight_bytes", Column::I64(f.inflight_bytes.clone()));
        t.push("pacing_rate_bps", Column::F64(f.pacing_rate_bps.clone()));
        t.push("delivery_rate_bps", Column::F64(f.delivery_rate_bps.clone()));
        t.push("srtt_ms", Column::F64(f.srtt_ms.clone()));
        t.push("min_rtt_ms", Column::F64(f.min_rtt_ms.clone()));
        t.push("rtt_ms", Column::F64(f.rtt_ms.clone()));
        t.push("retransmits", Column::I64(f.retransmits.clone()));
        t.push("ssthresh_pkts", Column::I64(f.ssthresh_pkts.clone()));
        t.push("phase_code", Column::U8(f.phase_code.clone()));
        t.push("bw_bps", Column::F64(f.bw_bps.clone()));
        t.push("pacing_gain", Column::F64(f.pacing_gain.clone()));
        t.push("cwnd_gain", Column::F64(f.cwnd_gain.clone()));
        t.push("w_max_pkts", Column::F64(f.w_max_pkts.clone()));
        t.push("inflight_hi_pkts", Column::F64(f.inflight_hi_pkts.clone()));
        t.push("inflight_lo_pkts", Column::F64(f.inflight_lo_pkts.clone()));
        t.push("ecn_alpha", Column::F64(f.ecn_alpha.clone()));
        t.push("ca_state", Column::U8(f.ca_state.clone()));
        t.push("rwnd_limited", Column::U8(f.rwnd_limited.clone()));
        t.push("sndbuf_limited", Column::U8(f.sndbuf_limited.clone()));
        (t, self.phase_labels.iter().map(|s| s.to_string()).collect())
    }

    pub fn queue_table(&self) -> Table {
        let q = &self.q;
        let mut t = Table::default();
        t.push("t_s", Column::F64(q.t_s.clone()));
        t.push("queue_code", Column::U8(q.queue_code.clone()));
        t.push("occupancy_bytes", Column::I64(q.occupancy_bytes.clone()));
        t.push("occupancy_pkts", Column::I64(q.occupancy_pkts.clone()));
        t.push("mean_occupancy_bytes", Column::F64(q.mean_occupancy_bytes.clone()));
        t.push("max_occupancy_bytes", Column::I64(q.max_occupancy_bytes.clone()));
        t.push("drops", Column::I64(q.drops.clone()));
        t.push("random_losses", Column::I64(q.random_losses.clone()));
        t.push("ce_marks", Column::I64(q.ce_marks.clone()));
        t.push("tx_bytes", Column::I64(q.tx_bytes.clone()));
        t.push("utilization", Column::F64(q.utilization.clone()));
        t.push("pause_frames", Column::I64(q.pause_frames.clone()));
        t
    }

    pub fn queue_labels(&self) -> Vec<String> {
        self.queue_labels.iter().map(|s| s.to_string()).collect()
    }
}
