"""The host model of the esnet-100g study's part D: ESnet's data-transfer nodes as bbrlab's
default hosts with ESnet's NIC tuning (ring size, flow control) and a receive copy rate fitted to
ESnet's own single-stream figure, every CPU cost scaled with the plan's rate scale so that a scaled
run's hosts stand to its links as full-size hosts to 100G. `host_model` returns the `[hosts]` table."""

from __future__ import annotations

from typing import Any

from ..report import MSS
from .plan import Plan

#: ESnet's own figure for its hosts (fasterdata.es.net, "40G/100G Network Tuning"): "On the ESnet
#: 100G perfSONAR nodes we typically see around 30 Gbps single stream"; and its NIC tuning: "Increase
#: the ring buffer size to the max (8192)", "Make sure that flow control (pause frames) is turned on".
ESNET_STREAM_BPS = 30e9


ESNET_RX_RING_PKTS = 8192


ESNET_FLOW_CONTROL = True


def _receive_copy_rate_bps(defaults: dict[str, Any], stream_bps: float) -> float:
    """The receive copy rate that puts one stream's receiving core at `stream_bps`, the other
    receive costs at bbrlab's defaults, with full 64 KB GRO skbs and full NAPI polls: a stream
    needs MSS·8/stream_bps of CPU per segment, of which the copy takes what the per-packet, per-skb
    and per-interrupt costs leave. (Cai et al. 2021 measured the copy as the receiver's largest
    cost; a slower core shows there first.)"""
    segs_per_skb = defaults["gro_max"] // MSS
    other_ns = (
        defaults["rx_segment_cost"]
        + defaults["rx_skb_cost"] / segs_per_skb
        + defaults["irq_cost"] / defaults["napi_budget"]
    )
    copy_ns = MSS * 8 / stream_bps * 1e9 - other_ns
    return MSS * 8 / copy_ns * 1e9


def host_model(p: Plan) -> dict[str, Any]:
    """The `[hosts]` table of the host-model runs: ESnet's DTNs as bbrlab's default hosts with
    ESnet's ring size and a receive copy rate that gives its single-stream figure
    (`ESNET_STREAM_BPS`), slowed by the plan's rate scale (every CPU cost and the interrupt delay
    × 1/scale, copy rates × scale) so that a scaled run's hosts stand to its links as full-size
    hosts to 100G."""
    from ...scenario.model import Hosts

    defaults = {name: f.default for name, f in Hosts.model_fields.items()}
    defaults["rx_copy_rate"] = _receive_copy_rate_bps(defaults, ESNET_STREAM_BPS)
    slow = 1 / p.rate_scale
    out: dict[str, Any] = {"rx_ring_pkts": ESNET_RX_RING_PKTS, "flow_control": ESNET_FLOW_CONTROL}
    for name, v in defaults.items():
        if name.endswith("_cost") or name == "irq_delay":
            out[name] = f"{round(v * slow)}ns"
        elif name.endswith("_rate"):
            out[name] = f"{round(v * p.rate_scale)}bps"
    return out
