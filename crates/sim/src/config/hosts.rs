//! The end hosts' CPUs and NICs (`[hosts]`): interrupt moderation, NAPI polls, GRO and the CPU
//! cost of each step of sending and receiving, as `host.rs` models them. A scenario without the
//! table has hosts that cost nothing (every packet reaches TCP the moment it arrives).

use super::backends::*;
use super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Hosts as their CPUs and NICs shape a transfer. Every host has `cores` cores; a flow's
/// protocol work runs on core (flow id mod cores) at its sender and at its receiver (RSS/XPS
/// keep a flow on one queue and core, so one stream has a ceiling). Packets arriving at a host
/// wait in that core's receive ring until an interrupt (moderated by `irq_delay`/`irq_frames`)
/// starts a NAPI poll, which merges in-order segments of a flow into one skb (GRO) and hands
/// them to TCP: one ACK per merged skb (stretch ACKs). The costs are CPU time per event; a busy
/// core delays the next poll and the next offload chunk. Defaults: a 2020s server core with a
/// 100G NIC (mlx5's moderation and ring defaults; costs of the order Cai et al., "Understanding
/// Host Network Stack Overheads", SIGCOMM 2021, measured: one core receives a single 1500-byte
/// MTU stream at a few tens of Gbit/s, the copy to the application the largest share).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Hosts {
    /// Cores per host.
    #[serde(default = "const_u32::<8>")]
    #[schemars(range(min = 1, max = 1024))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub cores: u32,
    /// Interrupt moderation (`ethtool -C rx-usecs`): the interrupt fires this long after the first
    /// packet that finds none pending (mlx5 default 8 µs).
    #[serde(default = "const_u64::<8_000>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub irq_delay_ns: u64,
    /// ... or as soon as this many packets wait (`rx-frames`, mlx5 default 128).
    #[serde(default = "const_u32::<128>")]
    #[schemars(range(min = 1, max = 1_000_000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub irq_frames: u32,
    /// Packets one NAPI poll takes (Linux `NAPI_POLL_WEIGHT`); GRO flushes at the end of a poll.
    #[serde(default = "const_u32::<64>")]
    #[schemars(range(min = 1, max = 1_000_000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub napi_budget: u32,
    /// Receive offload: a poll merges a flow's in-order segments (same CE bit) into one skb.
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub gro: bool,
    /// Largest merged skb (Linux `gro_max_size`, 64 KB).
    #[serde(default = "const_u64::<65_536>")]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub gro_max_bytes: u64,
    /// Receive ring per core (packets; mlx5 default 1024); a packet that finds it full is dropped.
    #[serde(default = "const_u32::<1024>")]
    #[schemars(range(min = 1, max = 10_000_000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub rx_ring_pkts: u32,
    /// 802.3x flow control (`ethtool -A rx on`): a host with a ring 3/4 full pauses the link that
    /// feeds it until every ring is at most half full, so the last switch port queues (a
    /// dumbbell's port towards the host then has the bottleneck's buffer) instead of the ring
    /// dropping.
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub flow_control: bool,
    /// CPU per interrupt (entry, softirq, NAPI poll set-up).
    #[serde(default = "const_u64::<1_000>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub irq_cost_ns: u64,
    /// CPU per packet received (driver descriptor, buffer, GRO merge).
    #[serde(default = "const_u64::<100>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub rx_segment_cost_ns: u64,
    /// CPU per skb handed to TCP after GRO (IP/TCP receive, building the ACK, waking the reader).
    #[serde(default = "const_u64::<1_000>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub rx_skb_cost_ns: u64,
    /// Copy to the application (cache-cold DMA'd data), as a rate.
    #[serde(default = "const_u64::<80_000_000_000>")]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub rx_copy_rate_bps: u64,
    /// CPU per offload chunk sent (tcp_write_xmit, IP output, qdisc, driver doorbell).
    #[serde(default = "const_u64::<1_500>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub tx_chunk_cost_ns: u64,
    /// CPU per segment of a chunk (TSO descriptors).
    #[serde(default = "const_u64::<20>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub tx_segment_cost_ns: u64,
    /// Copy from the application (warm buffer), as a rate; new data only.
    #[serde(default = "const_u64::<160_000_000_000>")]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub tx_copy_rate_bps: u64,
    /// CPU per ACK processed by the sender (tcp_ack: clean the retransmit queue, RTT and rate
    /// samples, loss detection).
    #[serde(default = "const_u64::<500>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub ack_cost_ns: u64,
    /// CPU of the congestion control's per-ACK work, charged on ACKs it does not skip (BBRv2/v3's
    /// fast path, the window algorithms' not-cwnd-limited return).
    #[serde(default = "const_u64::<50>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub cc_ack_cost_ns: u64,
    /// CPU per timer that fires (pacing, retransmission, delayed ACK).
    #[serde(default = "const_u64::<500>")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub timer_cost_ns: u64,
}

impl Default for Hosts {
    fn default() -> Hosts {
        serde_json::from_value(serde_json::json!({})).expect("every field has a default")
    }
}
