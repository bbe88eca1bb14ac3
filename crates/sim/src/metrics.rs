//! The result tables: each defined once, here, with every column's type, unit and meaning.
//!
//! A [`table!`] declaration produces the row struct the simulator fills, the columnar buffers
//! rows are appended to, and the table's [`TableSpec`]. The specs are exported (`_core.
//! result_schema()`): the real-Linux backend builds its tables from them, the Python test stub
//! and the column reference in docs/core-api.md are generated from them, and a test checks that
//! a run's tables match their specs exactly.
//!
//! Buffers are filled on the sampling timer or at the end of the run, never per packet.

use cc::bbr::ModelView;
use cc::{CcStateSample, Nanos, TcpCc};

/// A column's element type (numpy dtype on the Python side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F64,
    I64,
    I32,
    U16,
    U8,
}

impl Dtype {
    /// numpy's dtype string.
    pub fn numpy(self) -> &'static str {
        match self {
            Dtype::F64 => "<f8",
            Dtype::I64 => "<i8",
            Dtype::I32 => "<i4",
            Dtype::U16 => "<u2",
            Dtype::U8 => "|u1",
        }
    }
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    U16(Vec<u16>),
    U8(Vec<u8>),
}

/// Rust element types a column can hold.
pub trait Elem: Copy {
    const DTYPE: Dtype;
    fn column(v: Vec<Self>) -> Column;
}

macro_rules! elem {
    ($($t:ty => $d:ident),*) => {
        $(impl Elem for $t {
            const DTYPE: Dtype = Dtype::$d;
            fn column(v: Vec<Self>) -> Column {
                Column::$d(v)
            }
        })*
    };
}
elem!(f64 => F64, i64 => I64, i32 => I32, u16 => U16, u8 => U8);

impl Column {
    /// numpy dtype string and little-endian bytes.
    pub fn to_le_bytes(&self) -> (&'static str, Vec<u8>) {
        match self {
            Column::F64(v) => {
                (Dtype::F64.numpy(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
            }
            Column::I64(v) => {
                (Dtype::I64.numpy(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
            }
            Column::I32(v) => {
                (Dtype::I32.numpy(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
            }
            Column::U16(v) => {
                (Dtype::U16.numpy(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
            }
            Column::U8(v) => (Dtype::U8.numpy(), v.clone()),
        }
    }
    pub fn dtype(&self) -> Dtype {
        match self {
            Column::F64(_) => Dtype::F64,
            Column::I64(_) => Dtype::I64,
            Column::I32(_) => Dtype::I32,
            Column::U16(_) => Dtype::U16,
            Column::U8(_) => Dtype::U8,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::I32(v) => v.len(),
            Column::U16(v) => v.len(),
            Column::U8(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn as_f64(&self) -> Option<&[f64]> {
        if let Column::F64(v) = self {
            Some(v)
        } else {
            None
        }
    }
    pub fn as_i64(&self) -> Option<&[i64]> {
        if let Column::I64(v) = self {
            Some(v)
        } else {
            None
        }
    }
    /// A `*_code` column's label indices, whatever its width.
    pub fn as_codes(&self) -> Option<Vec<usize>> {
        match self {
            Column::U8(v) => Some(v.iter().map(|&c| c as usize).collect()),
            Column::U16(v) => Some(v.iter().map(|&c| c as usize).collect()),
            _ => None,
        }
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

/// A column as documented and exported.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub dtype: Dtype,
    /// Unit ("" for counts, codes and flags).
    pub unit: &'static str,
    pub description: &'static str,
}

/// A table as documented and exported. Columns named `*_code` index the `labels` list of the
/// same stem (`phase_code` → `labels.phase`): categoricals without per-row strings.
#[derive(Clone, Copy, Debug)]
pub struct TableSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub columns: &'static [ColumnSpec],
}

/// Declares a table: `$Row` (one row), `$Cols` (columnar buffers with `push(row)` and
/// `table()`), and `$SPEC` (its [`TableSpec`]), from one list of `name: type, "unit", "meaning";`.
macro_rules! table {
    ($SPEC:ident, $Row:ident, $Cols:ident, $name:literal, $desc:literal {
        $($field:ident: $ty:ty, $unit:literal, $fdesc:literal;)*
    }) => {
        /// One row of the table (see its spec for the columns).
        #[derive(Clone, Debug)]
        pub struct $Row {
            $(pub $field: $ty),*
        }

        /// The table's columnar buffers.
        #[derive(Clone, Debug, Default)]
        pub struct $Cols {
            $(pub $field: Vec<$ty>),*
        }

        impl $Cols {
            pub fn push(&mut self, r: $Row) {
                $(self.$field.push(r.$field);)*
            }
            pub fn reserve(&mut self, n: usize) {
                $(self.$field.reserve(n);)*
            }
            pub fn len(&self) -> usize {
                [$(self.$field.len()),*][0]
            }
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            pub fn table(&self) -> Table {
                let mut t = Table::default();
                $(t.push(stringify!($field), <$ty as Elem>::column(self.$field.clone()));)*
                t
            }
        }

        pub static $SPEC: TableSpec = TableSpec {
            name: $name,
            description: $desc,
            columns: &[$(ColumnSpec { name: stringify!($field), dtype: <$ty as Elem>::DTYPE, unit: $unit, description: $fdesc }),*],
        };
    };
}

table!(FLOWS, FlowSummaryRow, FlowSummaryCols, "flows", "One row per flow: the configured flows (`count` expanded), then one per application transfer." {
    flow: i32, "", "flow id (configured flows in order, `count` expanded, then application transfers)";
    spec: i32, "", "index of the `flows` entry the flow comes from (−1 for application transfers)";
    cc_code: u8, "", "algorithm → labels.cc";
    start_s: f64, "s", "when the application started writing";
    end_s: f64, "s", "end of sending (stop, completion or the end of the run)";
    fct_s: f64, "s", "flow completion time (NaN unless `bytes` is set and the transfer completed)";
    delivered_bytes: i64, "B", "payload delivered in order to the receiver";
    goodput_bps: f64, "bit/s", "delivered_bytes · 8 / active time (start to end)";
    data_packets_sent: i64, "", "data segments sent, retransmissions included";
    retransmits: i64, "", "retransmitted segments";
    retrans_rate: f64, "", "retransmits / data_packets_sent";
    lost_packets: i64, "", "data packets dropped in the network";
    rtt_mean_ms: f64, "ms", "mean of every per-ACK RTT sample";
    rtt_p50_ms: f64, "ms", "median RTT sample";
    rtt_p95_ms: f64, "ms", "95th percentile RTT sample";
    rtt_p99_ms: f64, "ms", "99th percentile RTT sample";
    rto_count: i64, "", "retransmission timeouts";
    retrans_fast: i64, "", "retransmissions outside the Loss state of segments marked lost (RACK; Linux TCPFastRetrans)";
    retrans_rto: i64, "", "retransmissions in the Loss state, after an RTO (Linux TCPSlowStartRetrans + TCPTimeouts)";
    retrans_tlp: i64, "", "tail loss probes that resent a segment (retrans_fast + retrans_rto + retrans_tlp = retransmits)";
    tlp_probes: i64, "", "tail loss probes sent, new data or a retransmission (Linux TCPLossProbes)";
    lost_retrans: i64, "", "retransmissions marked lost again (Linux TCPLostRetransmit)";
    recoveries: i64, "", "fast-recovery episodes entered (Linux TCPSackRecovery)";
    undos: i64, "", "congestion reductions undone as spurious, by timestamps or D-SACKs (Linux TCPFullUndo + TCPPartialUndo + TCPDSACKUndo + TCPLossUndo)";
    spurious_rtos: i64, "", "RTOs undone as spurious (Linux TCPSpuriousRTOs)";
    dsack_dups: i64, "", "segments the receiver reported received twice by D-SACK (Linux tcpi_dsack_dups)";
    ce_packets: i64, "", "CE-marked data segments received";
    tso_bursts: i64, "", "offload chunks sent: segments handed to the NIC back to back at one instant (loss probes not counted)";
    tso_burst_mean_segs: f64, "segments", "segments per chunk actually sent";
    tso_goal_mean_segs: f64, "segments", "the sizing rule's chunk size at chunk starts (e.g. BBRv2's tso_segs_goal)";
    rpc_count: i64, "", "completed RPC messages (0 unless `rpc`)";
    rpc_mean_ms: f64, "ms", "mean RPC latency, write to full acknowledgement (NaN unless `rpc`)";
    rpc_p50_ms: f64, "ms", "median RPC latency";
    rpc_p99_ms: f64, "ms", "99th percentile RPC latency";
    acks_withheld: i64, "", "every-2nd-segment ACKs the old Linux rule withheld (`faster_acks = false`)";
    acks_sent: i64, "", "ACKs the receiver sent (−1: not known, the emu backend)";
    cc_fast_acks: i64, "", "ACKs on which the algorithm skipped its per-ACK work (BBRv2/v3 fast path; window algorithms when not cwnd-limited; −1: not known)";
    app: i32, "", "application of an application transfer (−1 for configured flows)";
    query: i32, "", "query of an application transfer (−1 for configured flows)";
    rx_done_s: f64, "s", "when the receiver held a sized transfer's last byte (NaN if not)";
});

table!(TIMESERIES, TimeseriesRow, TimeseriesCols, "timeseries", "One row per configured flow per sample interval, sampled at the interval's end." {
    t_s: f64, "s", "sample time";
    flow: i32, "", "flow id";
    delivered_bytes: i64, "B", "payload delivered in order, cumulative";
    goodput_bps: f64, "bit/s", "delivered over the interval (in-order release after a recovery can exceed the link rate)";
    cwnd_pkts: i64, "segments", "congestion window";
    cwnd_bytes: i64, "B", "congestion window × MSS";
    inflight_bytes: i64, "B", "data in flight";
    pacing_rate_bps: f64, "bit/s", "pacing rate (capped by max_pacing_rate)";
    delivery_rate_bps: f64, "bit/s", "latest valid delivery-rate sample";
    srtt_ms: f64, "ms", "smoothed RTT";
    min_rtt_ms: f64, "ms", "windowed minimum RTT (NaN before the first sample)";
    rtt_ms: f64, "ms", "mean of the RTT samples in the interval (NaN if none)";
    retransmits: i64, "", "retransmitted segments, cumulative";
    ssthresh_pkts: i64, "segments", "slow-start threshold (−1 = infinite)";
    phase_code: u8, "", "algorithm phase → labels.phase";
    bw_bps: f64, "bit/s", "the algorithm's bandwidth estimate (BBR)";
    pacing_gain: f64, "", "BBR pacing gain";
    cwnd_gain: f64, "", "BBR cwnd gain";
    w_max_pkts: f64, "segments", "CUBIC W_max";
    inflight_hi_pkts: f64, "segments", "BBRv2/v3 inflight_hi (0 = unset)";
    inflight_lo_pkts: f64, "segments", "BBRv2/v3 inflight_lo (0 = unset)";
    ecn_alpha: f64, "", "DCTCP / BBR ECN alpha in [0, 1]";
    ca_state: u8, "", "Linux ca_state: 0 open, 1 disorder, 2 cwr, 3 recovery, 4 loss";
    rwnd_limited: u8, "", "the receive window limited sending in the interval (0/1)";
    sndbuf_limited: u8, "", "the send buffer limited sending in the interval (0/1)";
    app_limited: f64, "", "fraction of the interval's delivery-rate samples marked app-limited (the writer had nothing to send; NaN if no sample)";
});

table!(QUEUE, QueueRow, QueueCols, "queue", "One row per monitored queue per sample interval (dumbbell: bottleneck, bottleneck_rev; star: tor_to_agg, agg_nic, nic_<w>)." {
    t_s: f64, "s", "sample time";
    queue_code: u16, "", "queue → labels.queue";
    occupancy_bytes: i64, "B", "queued bytes at sample time";
    occupancy_pkts: i64, "", "queued packets at sample time";
    mean_occupancy_bytes: f64, "B", "time-weighted mean over the interval";
    max_occupancy_bytes: i64, "B", "maximum over the interval";
    drops: i64, "", "every drop of the queue (drops_overflow + drops_aqm), cumulative";
    drops_overflow: i64, "", "drops at a full buffer (or shared buffer), cumulative";
    drops_aqm: i64, "", "drops the discipline chose (RED's early drops, an AQM's control law), cumulative";
    random_losses: i64, "", "Bernoulli losses, cumulative";
    ce_marks: i64, "", "CE marks (step, RED, the discipline's), cumulative";
    sojourn_mean_ms: f64, "ms", "mean time from enqueue to dequeue in the discipline (qdisc), since the start; NaN on the native drop-tail, which does not measure it";
    sojourn_p50_ms: f64, "ms", "median sojourn (log-binned, within 4.4 %), since the start; NaN as sojourn_mean_ms";
    sojourn_p99_ms: f64, "ms", "99th-percentile sojourn, since the start; NaN as sojourn_mean_ms";
    l4s_sojourn_p99_ms: f64, "ms", "99th-percentile sojourn of the L4S class (DualPI2's ECT(1)/CE queue), since the start; NaN without one";
    l4s_drops: i64, "", "drops (overflow + discipline) in the L4S class, cumulative; 0 without one";
    l4s_ce_marks: i64, "", "CE marks in the L4S class, cumulative; 0 without one";
    tx_bytes: i64, "B", "bytes sent on the link, cumulative";
    utilization: f64, "", "link busy fraction over the interval";
    pause_frames: i64, "", "802.3x PAUSE + XON frames sent (switch port) or received (paused link), cumulative";
    policer_drops: i64, "", "packets a policer dropped before the queue, cumulative";
    rate_bps: i64, "bit/s", "the link's rate at sample time (a schedule's or a trace's, over 100 ms)";
});

table!(GAPS, GapRow, GapCols, "gaps", "NIC inter-departure gap histograms of flows with `gap_histogram` (log-spaced, 10 buckets per decade from 1 ns to 10 s plus under/overflow; every bucket listed)." {
    flow: i32, "", "flow id";
    lo_ns: f64, "ns", "bucket's lower edge";
    hi_ns: f64, "ns", "bucket's upper edge";
    count: i64, "", "gaps in the bucket";
});

table!(EVENTS, QueryEventRow, QueryEventCols, "events", "One row per completed application query (queries still running at the end have none)." {
    app: i32, "", "application index";
    query: i32, "", "query number";
    n: i32, "", "workers asked";
    bytes: i64, "B", "bytes asked for";
    start_s: f64, "s", "query start";
    end_s: f64, "s", "when the aggregator held every byte";
    response_time_s: f64, "s", "end_s − start_s";
});

table!(HOSTS, HostRow, HostCols, "hosts", "One row per end host when the scenario models hosts (`[hosts]`): senders (named by their NIC, in order of first flow), then receivers. Rates are per second of the run." {
    host_code: i32, "", "host → labels.host (sender0…, receiver0…)";
    is_sender: u8, "", "1: the host sends data (and receives ACKs); 0: it receives data (and sends ACKs)";
    cores: i32, "", "cores of the host";
    cpu_util: f64, "", "busy time of all its cores / (cores × run time)";
    cpu_util_max_core: f64, "", "busy fraction of its busiest core (one stream's work stays on one core)";
    cpu_ns_per_mb: f64, "ns", "CPU time per MB (10⁶ B) of payload sent (sender) or received (receiver)";
    interrupts_per_s: f64, "1/s", "receive interrupts (NAPI re-polls not counted)";
    packets_per_interrupt: f64, "", "packets taken per poll";
    data_packets_per_s: f64, "1/s", "data segments sent (sender) or received (receiver)";
    acks_per_s: f64, "1/s", "ACKs processed (sender) or sent (receiver)";
    chunk_mean_segs: f64, "segments", "segments per offload chunk sent (senders; NaN for receivers)";
    gro_mean_segs: f64, "segments", "segments per skb handed to TCP after receive offload (receivers; NaN for senders)";
    timers_per_s: f64, "1/s", "pacing, retransmission and delayed-ACK timers that fired";
    rx_ring_drops: i64, "", "packets dropped because the core's receive ring was full";
    pause_frames: i64, "", "PAUSE and XON frames the host's NIC sent (`flow_control`)";
    payload_bytes: i64, "B", "payload sent (sender: new data) or delivered in order (receiver)";
});

table!(STATE, StateRow, StateCols, "state", "The per-ACK state trace of flows with `trace = true`: one row per ACK the sender processed, after the algorithm ran (BBR's model and controls; other algorithms fill the transport's columns and leave BBR's NaN/0)." {
    t_s: f64, "s", "time of the ACK";
    flow: i32, "", "flow id";
    phase_code: u8, "", "algorithm phase → labels.phase (BBRv2/v3: PROBE_BW's sub-phase)";
    cycle_idx: u8, "", "BBRv1's PROBE_BW gain-cycle index (0 for other versions)";
    round_count: i64, "", "BBR.round_count: packet-timed rounds since the start";
    round_start: u8, "", "this ACK started a round (0/1)";
    max_bw_bps: f64, "bit/s", "BBR.max_bw (payload rate)";
    bw_bps: f64, "bit/s", "BBR.bw, the estimate pacing and the BDP use";
    bw_lo_bps: f64, "bit/s", "BBR.bw_shortterm (Linux bw_lo); NaN = unset or not kept";
    bw_hi_bps: f64, "bit/s", "bbr2_new's bw_hi; NaN = unset or not kept";
    lt_bw_bps: f64, "bit/s", "BBRv1's long-term (policer) bandwidth while in use, else 0";
    inflight_hi_pkts: f64, "segments", "BBR.inflight_longterm (Linux inflight_hi); NaN = unset";
    inflight_lo_pkts: f64, "segments", "BBR.inflight_shortterm (Linux inflight_lo); NaN = unset";
    min_rtt_ms: f64, "ms", "BBR.min_rtt (NaN before the first sample)";
    pacing_gain: f64, "", "pacing gain";
    cwnd_gain: f64, "", "cwnd gain";
    extra_acked_pkts: i64, "segments", "BBR.extra_acked as the cwnd uses it";
    full_bw_reached: u8, "", "BBR.full_bw_reached (0/1)";
    full_bw_count: i32, "", "rounds without 25 % growth (full_bw_now once it reaches 3)";
    full_bw_bps: f64, "bit/s", "the plateau detector's baseline bandwidth";
    idle_restart: u8, "", "BBR.idle_restart (0/1)";
    cwnd_pkts: i64, "segments", "congestion window after the ACK";
    inflight_pkts: i64, "segments", "packets in flight after the ACK";
    next_departure_ms: f64, "ms", "time until the pacer's next departure (Linux tcp_wstamp_ns − now; 0 if due): Linux BBR counts inflight at that time";
    pacing_rate_bps: f64, "bit/s", "pacing rate (payload bytes · 8)";
    delivery_rate_bps: f64, "bit/s", "latest valid delivery-rate sample";
    delivered_pkts: i64, "", "segments delivered, cumulative (C.delivered)";
    lost_pkts: i64, "", "segments marked lost, cumulative";
    delivered_ce_pkts: i64, "", "delivered segments that were CE-marked, cumulative";
    ecn_alpha: f64, "", "ECN alpha in [0, 1] (0 where the version keeps none)";
    ca_state: u8, "", "Linux ca_state: 0 open, 1 disorder, 2 cwr, 3 recovery, 4 loss";
    app_limited: u8, "", "the connection is app-limited (tp->app_limited ≠ 0)";
});

table!(TRAFFIC, TrafficRow, TrafficCols, "traffic", "One row per non-TCP source (`[[traffic]]`: UDP CBR, UDP on/off, ping), in scenario order. Bytes are payload (IP packet − 28 B of headers)." {
    source: i32, "", "source index (its `[[traffic]]` entry)";
    kind_code: u8, "", "kind → labels.kind (udp_cbr, udp_onoff, ping)";
    reverse: u8, "", "1: sent from the receiver side to the sender side";
    flow: i32, "", "the route's internal flow id (not a row of the flows table)";
    sent_packets: i64, "", "packets sent (ping: echo requests)";
    sent_bytes: i64, "B", "payload sent";
    received_packets: i64, "", "packets received (ping: echoes back at the sender)";
    received_bytes: i64, "B", "payload received";
    lost_packets: i64, "", "sent − received − still in the network at the end (ping: request or echo lost)";
    lost_bytes: i64, "B", "payload lost";
    send_rate_bps: f64, "bit/s", "sent_bytes · 8 / active time (start to stop or the end)";
    recv_rate_bps: f64, "bit/s", "received_bytes · 8 / the same time (NaN for ping)";
    rtt_mean_ms: f64, "ms", "ping: mean RTT of the echoes (NaN for UDP)";
    rtt_p50_ms: f64, "ms", "ping: median RTT";
    rtt_p99_ms: f64, "ms", "ping: 99th percentile RTT";
});

table!(PINGS, PingRow, PingCols, "pings", "One row per ping echo that came back, in arrival order: the RTT series of every probe." {
    source: i32, "", "source index (its `[[traffic]]` entry)";
    seq: i64, "", "echo request number (0, 1, …; a missing number was lost)";
    t_s: f64, "s", "when the request left";
    rtt_ms: f64, "ms", "request sent to echo back";
});

table!(FCT, FctRow, FctCols, "fct", "One row per completed flow of a workload app (`[[apps]] kind = \"workload\"`), in completion order: its flow completion time and slowdown (handshake excluded from both)." {
    app: i32, "", "workload app index";
    flow: i32, "", "flow id (a row of the flows table)";
    size_bytes: i64, "B", "flow size drawn from the CDF";
    start_s: f64, "s", "arrival (the flow starts sending)";
    fct_s: f64, "s", "arrival to the receiver holding the last byte";
    ideal_fct_s: f64, "s", "the same on an empty network: every segment store-and-forward through the data path's FIFOs, all at the sender from the arrival";
    slowdown: f64, "", "fct_s / ideal_fct_s";
});

table!(PACKETS, PacketRow, PacketCols, "packets", "The headers of every TCP segment of flows with `pcap = true`, as a capture at the sender host sees them (`capture.rs`): data as it leaves for the NIC, ACKs as they arrive; in capture order. Sequence numbers are byte offsets in the flow's stream; `bbrlab run` renders the table as packets.pcap." {
    t_ns: i64, "ns", "capture time";
    flow: i32, "", "flow id";
    is_data: u8, "", "1: a data segment (sender to receiver); 0: an ACK (receiver to sender)";
    seq_bytes: i64, "B", "data: the stream offset of its first payload byte (0 for ACKs)";
    payload_bytes: i32, "B", "data: payload bytes (0 for ACKs)";
    retrans: u8, "", "data: a retransmission (0/1)";
    ecn: u8, "", "the IP header's ECN field: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE (ACKs: 0)";
    ts_ns: i64, "ns", "data: TSval (when it was sent); ACK: TSecr (the TSval it echoes)";
    ack_bytes: i64, "B", "ACK: the cumulative ACK as a stream offset (bytes the receiver holds in order); data: 0";
    rwnd_bytes: i64, "B", "ACK: the advertised window above ack_bytes (−1: no receive-window limit)";
    n_sack: u8, "", "ACK: SACK blocks (0–3, the most recent first; a first block below ack_bytes is a D-SACK)";
    sack1_start: i64, "B", "first SACK block's start offset (0 when absent)";
    sack1_end: i64, "B", "first SACK block's end offset, exclusive";
    sack2_start: i64, "B", "second SACK block's start offset";
    sack2_end: i64, "B", "second SACK block's end offset, exclusive";
    sack3_start: i64, "B", "third SACK block's start offset";
    sack3_end: i64, "B", "third SACK block's end offset, exclusive";
    ce_count: i64, "", "ACK: CE-marked data segments the receiver has seen, cumulative";
});

/// Every table the core returns, in the order `results()` lists them.
pub static TABLES: [&TableSpec; 11] =
    [&FLOWS, &TIMESERIES, &QUEUE, &GAPS, &EVENTS, &HOSTS, &STATE, &TRAFFIC, &PINGS, &FCT, &PACKETS];

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
