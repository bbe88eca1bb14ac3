//! Defaults that depend on other fields, and the facts several places derive from a config (the
//! BDP, the bottleneck's byte limit): defined here once, used by the simulator's topology
//! builders, the front's summaries and the real-Linux backend alike.

use super::*;
use serde::Serialize;

/// A star switch port's drop-tail limit when none is given (a commodity 1 GbE ToR's per-port
/// share, the Waterloo study's drop-tail comparison point). Lossless ports have none.
pub const STAR_DEFAULT_BUFFER_BYTES: u64 = 128_000;
/// A dumbbell host's access link is this many times the bottleneck rate unless given, so the
/// bottleneck is the bottleneck.
pub const ACCESS_RATE_FACTOR: u64 = 10;

/// Facts derived from a config.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Derived {
    /// Rate of the link every flow shares: the dumbbell's bottleneck, the star's aggregator port.
    pub bottleneck_rate_bps: u64,
    /// Propagation RTT of a flow without extra delay (star: worker → aggregator → worker).
    pub base_rtt_ns: u64,
    /// bottleneck rate × base RTT, whole bytes (floor).
    pub bdp_bytes: u64,
    /// The shared queue's limit in bytes (None: unlimited, or a packet limit).
    pub buffer_bytes: Option<u64>,
    /// The shared queue's limit in packets (None: a byte limit or unlimited).
    pub buffer_packets: Option<u64>,
    /// Name of the shared queue in the `queue` table.
    pub main_queue: &'static str,
    /// Simulated flows (`count` expanded).
    pub flow_count: u64,
    /// Rows the sampled tables will hold: timeseries (flows × samples) plus queue (monitored
    /// queues × samples).
    pub sample_rows: u64,
}

/// The byte limit `buffer` sets on a path with this BDP (None for a packet limit).
pub(crate) fn buffer_limit_bytes(buffer: &Buffer, bdp_bytes: u64) -> Option<u64> {
    match *buffer {
        Buffer::Bytes(b) => Some(b),
        Buffer::Packets(_) => None,
        Buffer::Bdp(x) => Some(check::buffer_bytes_of_bdp(x, bdp_bytes)),
    }
}

impl Config {
    /// The config with every default that depends on other fields filled in and every
    /// algorithm by its canonical name (`bbr` → `bbr1`).
    pub fn resolved(&self) -> Config {
        let mut c = self.clone();
        let canonical = |f: &mut Flow| {
            if let Some(a) = cc::registry::lookup(&f.cc) {
                f.cc = a.name.to_string();
            }
        };
        c.flows.iter_mut().for_each(canonical);
        for a in &mut c.apps {
            match a {
                App::Query(q) => canonical(&mut q.flow),
                App::Workload(w) => {
                    if let Some(alg) = cc::registry::lookup(&w.cc) {
                        w.cc = alg.name.to_string();
                    }
                }
            }
        }
        match &mut c.topology {
            Topology::Dumbbell(d) => {
                let rate = d.bottleneck.rate_bps();
                d.access_rate_bps
                    .get_or_insert(rate.saturating_mul(ACCESS_RATE_FACTOR).min(MAX_RATE_BPS));
                // The discipline every backend reads: none named is the drop-tail FIFO.
                d.bottleneck.qdisc.get_or_insert_with(QdiscSpec::default);
            }
            Topology::Star(s) => {
                s.aggregator_rate_bps.get_or_insert(s.rate_bps);
                if let (Some(h), None) = (s.hosts_per_rack, s.uplink_rate_bps) {
                    s.uplink_rate_bps = Some(s.rate_bps.saturating_mul(h as u64).min(MAX_RATE_BPS));
                }
                if s.buffer_bytes.is_none() && !s.lossless {
                    s.buffer_bytes = Some(STAR_DEFAULT_BUFFER_BYTES);
                }
            }
        }
        c
    }

    /// BDP, the shared queue's limit and the like.
    pub fn derived(&self) -> Derived {
        let (rate, rtt, buffer_bytes, buffer_packets, main_queue) = match &self.topology {
            Topology::Dumbbell(d) => {
                let b = &d.bottleneck;
                // With a trace: the BDP at its mean rate (`Bottleneck::rate_bps`).
                let rate = b.rate_bps();
                let bdp = bdp_bytes(rate, b.rtt_ns);
                let packets = if let Buffer::Packets(p) = b.buffer { Some(p) } else { None };
                (rate, b.rtt_ns, buffer_limit_bytes(&b.buffer, bdp), packets, "bottleneck")
            }
            Topology::Star(s) => {
                let r = self.resolved();
                let Topology::Star(rs) = &r.topology else { unreachable!() };
                (
                    rs.aggregator_rate_bps.unwrap_or(s.rate_bps),
                    4 * s.delay_ns,
                    rs.buffer_bytes,
                    None,
                    "tor_to_agg",
                )
            }
        };
        let samples = self.duration_ns / self.sample_interval_ns.max(1) + 1;
        let queues = match &self.topology {
            Topology::Dumbbell(_) => 2,
            Topology::Star(s) => s.workers as u64 + 2,
        };
        Derived {
            sample_rows: (self.flow_count() + queues).saturating_mul(samples),
            bottleneck_rate_bps: rate,
            base_rtt_ns: rtt,
            bdp_bytes: bdp_bytes(rate, rtt),
            buffer_bytes,
            buffer_packets,
            main_queue,
            flow_count: self.flow_count(),
        }
    }
}

/// The largest frame on the wire: the largest MSS of any flow or application + TCP/IP headers +
/// Ethernet framing.
pub fn max_frame_bytes(cfg: &Config) -> u32 {
    let mss = cfg
        .flows
        .iter()
        .map(|f| f.mss_bytes)
        .chain(cfg.apps.iter().filter_map(|a| match a {
            App::Query(q) => Some(q.flow.mss_bytes),
            App::Workload(_) => None,
        }))
        .max();
    mss.unwrap_or(transport::DEFAULT_MSS_BYTES)
        + transport::TCP_IP_HEADER_BYTES
        + transport::ETHERNET_OVERHEAD_BYTES
}

/// Bytes that reach an ingress port after it crossed XOFF (IEEE 802.1Qbb Annex O's headroom):
/// the PAUSE frame waits behind at most one frame leaving the switch's port and takes
/// `delay_ns` to reach the host, the host finishes the frame it is sending, and what the host
/// sent meanwhile is on the wire for another `delay_ns`: 2 × rate × delay + 2 frames + the
/// 64-byte PAUSE frame itself (rounded up).
pub fn pfc_headroom_bytes(rate_bps: u64, delay_ns: u64, frame_bytes: u32) -> u64 {
    const PAUSE_FRAME_BYTES: u64 = 64;
    2 * (rate_bps as u128 * delay_ns as u128).div_ceil(8 * 1_000_000_000) as u64
        + 2 * frame_bytes as u64
        + PAUSE_FRAME_BYTES
}

/// rate × rtt in whole bytes (floor).
pub fn bdp_bytes(rate_bps: u64, rtt_ns: u64) -> u64 {
    (rate_bps as u128 * rtt_ns as u128 / 8 / 1_000_000_000) as u64
}
