"""`bbrlab show RUN --ss`: per-flow sender state at one instant, in the style of `ss -tni`.

Read from timeseries.parquet: the sample taken at the end of the interval that contains the chosen
time (samples are taken every `sample_interval`, so the state shown is at most one interval later).
Field names follow ss where there is an ss equivalent, so seasoned readers can compare directly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..errors import UserError
from ..units import format_scaled

__all__ = ["pick_time", "ss_lines"]


def _ss_rate(bps: Any) -> str:
    """ss prints rates as "354.1Mbps"."""
    return format_scaled(bps, "bps", digits=1, sep="", kilo="K")


def _ms(x: Any) -> str:
    """ss prints milliseconds with up to 3 decimals ("141.401", "140")."""
    if x is None or not math.isfinite(float(x)):
        return "-"
    return f"{float(x):.3f}".rstrip("0").rstrip(".")


def _g(x: Any) -> str:
    return "-" if x is None or not math.isfinite(float(x)) else f"{float(x):g}"


def pick_time(ts: pd.DataFrame, at_s: float | None) -> float:
    """The sample time shown for a requested time: the first sample at or after it (or the last)."""
    if ts.empty:
        raise UserError("the run has no timeseries samples")
    times = np.unique(ts["t_s"].to_numpy())
    if at_s is None:
        return float(times[-1])
    if at_s < 0 or at_s > times[-1] + 1e-9:
        raise UserError(f"--at {at_s:g}s is outside the run (samples from {times[0]:g}s to {times[-1]:g}s)")
    i = int(np.searchsorted(times, at_s - 1e-9, side="left"))
    return float(times[min(i, len(times) - 1)])


def _flow_line(r: dict[str, Any]) -> str:
    cc = str(r.get("cc", "?"))
    parts = [cc]
    if "cwnd_pkts" in r:
        parts.append(f"cwnd:{int(r['cwnd_pkts'])}")
    ssthresh = r.get("ssthresh_pkts")
    if ssthresh is not None and int(ssthresh) >= 0:  # -1 = infinite; ss omits it too
        parts.append(f"ssthresh:{int(ssthresh)}")
    parts.append(f"rtt:{_ms(r.get('srtt_ms'))}")
    parts.append(f"minrtt:{_ms(r.get('min_rtt_ms'))}")
    if "inflight_bytes" in r:
        parts.append(f"bytes_in_flight:{int(r['inflight_bytes'])}")
    parts.append(f"pacing_rate {_ss_rate(r.get('pacing_rate_bps'))}")
    parts.append(f"delivery_rate {_ss_rate(r.get('delivery_rate_bps'))}")
    parts.append(f"goodput {_ss_rate(r.get('goodput_bps'))}")
    if "retransmits" in r:
        parts.append(f"retrans:{int(r['retransmits'])}")
    if cc.startswith("bbr"):
        bbr = [
            f"bw:{_ss_rate(r.get('bw_bps'))}",
            f"mrtt:{_ms(r.get('min_rtt_ms'))}",
            f"pacing_gain:{_g(r.get('pacing_gain'))}",
            f"cwnd_gain:{_g(r.get('cwnd_gain'))}",
        ]
        # BBRv2/v3 bound inflight by a long-term (hi) and short-term (lo) model; v1 has neither (NaN or 0).
        for key, name in (("inflight_hi_pkts", "inflight_hi"), ("inflight_lo_pkts", "inflight_lo")):
            v = r.get(key)
            if v is not None and math.isfinite(float(v)) and float(v) > 0:
                bbr.append(f"{name}:{_g(v)}")
        parts.append(f"bbr:({','.join(bbr)})")
    elif cc == "cubic" and r.get("w_max_pkts") is not None and math.isfinite(float(r["w_max_pkts"])):
        parts.append(f"cubic:(w_max:{_g(r['w_max_pkts'])})")
    elif cc == "dctcp" and r.get("ecn_alpha") is not None and math.isfinite(float(r["ecn_alpha"])):
        parts.append(f"dctcp:(alpha:{_g(r['ecn_alpha'])})")
    limited = [
        name for key, name in (("rwnd_limited", "rwnd_limited"), ("sndbuf_limited", "sndbuf_limited")) if r.get(key)
    ]
    parts.extend(limited)
    return " ".join(parts)


def ss_lines(
    timeseries: pd.DataFrame, queue: pd.DataFrame | None, at_s: float | None, flows: pd.DataFrame | None = None
) -> list[str]:
    """Lines describing every flow (and the bottleneck queue) at the chosen time."""
    for name, table, need in (("timeseries", timeseries, {"t_s", "flow"}), ("queue", queue, {"t_s"})):
        if table is not None and not table.empty and not need <= set(table.columns):
            raise UserError(
                f"{name}.parquet is not bbrlab's {name} table (it lacks {', '.join(sorted(need - set(table.columns)))})"
            )
    if not timeseries.empty and (timeseries["flow"].isna().any() or timeseries["t_s"].isna().any()):
        raise UserError("timeseries.parquet is damaged (missing flow ids or times)")
    t = pick_time(timeseries, at_s)
    starts: dict[int, float] = {}
    if flows is not None and not flows.empty and "start_s" in flows:
        starts = dict(zip(flows["flow"].astype(int).tolist(), flows["start_s"].astype(float).tolist()))
    rows = timeseries[np.isclose(timeseries["t_s"].to_numpy(), t)].sort_values("flow")
    out = [
        f"state at t={t:g}s"
        + (f" (sample for --at {at_s:g}s)" if at_s is not None and not math.isclose(t, at_s) else "")
    ]
    for r in rows.to_dict("records"):
        start = starts.get(int(r["flow"]))
        if start is not None and t < start:
            out.append(f"flow {int(r['flow'])}  cc:{r.get('cc', '?')}  not started yet (starts at {start:g}s)")
            continue
        phase = str(r.get("phase", "")) or "-"
        ca = str(r.get("ca_state", "-"))  # a category (results.CA_STATES)
        out.append(f"flow {int(r['flow'])}  cc:{r.get('cc', '?')}  phase:{phase}  ca_state:{ca}")
        out.append(f"\t {_flow_line(r)}")
    if queue is not None and not queue.empty:
        q = queue[np.isclose(queue["t_s"].to_numpy(), t)]
        for r in q.to_dict("records"):
            out.append(
                f"queue {r.get('queue', '?')}: {int(r.get('occupancy_bytes', 0))} B "
                f"({int(r.get('occupancy_pkts', 0))} pkts) drops:{int(r.get('drops', 0))} "
                f"ce_marks:{int(r.get('ce_marks', 0))} utilization:{100 * float(r.get('utilization', math.nan)):.1f}%"
            )
    return out
