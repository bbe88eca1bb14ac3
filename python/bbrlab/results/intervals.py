"""`bbrlab show RUN --intervals 1s`: per-flow, per-interval transfer, bitrate, retransmits and
cwnd, laid out as iperf3 prints them, from a run's timeseries.parquet.

The time series holds one sample per flow every ``sample_interval`` (taken at the end of each
interval, cumulative ``delivered_bytes`` and ``retransmits``), so an interval here is a whole
number of sample intervals; the transfer in it is the difference of the cumulative counts at its
two ends. Intervals are on the run's clock (a flow that starts at 5 s first appears at 5.00),
clipped to each flow's active time, and the bitrate is over the clipped span. The total line
per flow is the flows table's (start to end of the flow), which also counts any tail after the
last sample.

Unlike iperf3's, bbrlab's prefixes are powers of 1000 ("MBytes" = 10^6 bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import UserError
from ..units import format_scaled, format_time

if TYPE_CHECKING:
    from .results import Result

__all__ = ["Intervals", "intervals", "interval_lines", "sample_interval_s"]

_EPS = 1e-9
_COUNTS = ("bytes", "delivered_bytes", "retransmits", "cwnd_bytes", "flow", "flows")


@dataclass
class Intervals:
    """Per-interval rows (``rows``: flow, cc, start_s, end_s, bytes, bitrate_bps, retransmits,
    cwnd_bytes, above_link_rate), per-interval sums over the flows shown (``sums``), and each
    flow's totals from the flows table (``totals``)."""

    interval_s: float
    sample_interval_s: float
    link_rate_bps: float | None
    rows: pd.DataFrame
    sums: pd.DataFrame
    totals: pd.DataFrame

    def to_json(self) -> dict[str, Any]:
        def value(k: str, v: Any) -> Any:
            if isinstance(v, (float, np.floating)):
                if not math.isfinite(v):
                    return None
                return int(v) if k in _COUNTS else float(v)
            return v.item() if isinstance(v, np.generic) else v

        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: value(k, v) for k, v in r.items()} for r in df.astype(object).to_dict("records")]

        return {
            "interval_s": self.interval_s,
            "sample_interval_s": self.sample_interval_s,
            "bottleneck_rate_bps": self.link_rate_bps,
            "intervals": records(self.rows),
            "sums": records(self.sums),
            "totals": records(self.totals),
        }


def sample_interval_s(result: Result) -> float:
    """The run's sample interval: the scenario's, or the time series' own spacing."""
    if result.scenario is not None:
        return result.scenario.sample_interval / 1e9
    times = np.unique(result.timeseries["t_s"].to_numpy(dtype=float)) if "t_s" in result.timeseries else np.array([])
    if times.size == 0:
        raise UserError("the run has no timeseries samples; --intervals needs them")
    # Samples are taken at the end of every interval, the first one at t = sample_interval.
    return float(np.min(np.diff(np.concatenate([[0.0], times]))))


def _check_interval(interval_s: float, si: float) -> int:
    """How many samples one interval spans, or a UserError naming what would work."""
    si_text = format_time(round(si * 1e9))
    if interval_s < si * (1 - 1e-9):
        raise UserError(
            f"--intervals {format_time(round(interval_s * 1e9))}: shorter than the run's sample interval "
            f"({si_text}); the time series has one sample every {si_text}, so use {si_text} or a multiple of it"
        )
    k = interval_s / si
    if abs(k - round(k)) > 1e-6 * k:
        lo, hi = math.floor(k), math.ceil(k)
        raise UserError(
            f"--intervals {format_time(round(interval_s * 1e9))}: not a multiple of the run's sample interval "
            f"({si_text}); use {format_time(round(lo * si * 1e9))} or {format_time(round(hi * si * 1e9))}"
        )
    return int(round(k))


def intervals(result: Result, interval_s: float, flows: list[int] | None = None) -> Intervals:
    """The per-interval table of ``result`` (every configured flow, or those in ``flows``)."""
    ts = result.timeseries
    if ts.empty or not {"t_s", "flow"} <= set(ts.columns):
        raise UserError("the run has no usable timeseries.parquet; --intervals needs it")
    si = sample_interval_s(result)
    k = _check_interval(interval_s, si)
    link = result.summary.get("scenario", {}).get("bottleneck_rate_bps")
    link_rate = float(link) if isinstance(link, (int, float)) and link > 0 else None
    known = sorted(int(f) for f in ts["flow"].unique())
    if flows:
        missing = sorted(set(flows) - set(known))
        if missing:
            raise UserError(
                f"--flow {missing[0]}: the run's time series has flows {known[0]}..{known[-1]}"
                if known
                else f"--flow {missing[0]}: the run has no flows"
            )
        ts = ts[ts["flow"].isin(flows)]
    fl = result.flows.set_index("flow") if "flow" in result.flows else pd.DataFrame()
    rows = []
    for flow, g in ts.sort_values(["flow", "t_s"]).groupby("flow", sort=True):
        t = g["t_s"].to_numpy(dtype=float)
        n = np.rint(t / si).astype(np.int64)  # sample number: t = n × sample interval
        if "delivered_bytes" in g:
            delivered = g["delivered_bytes"].to_numpy(dtype=float)
        else:  # older tables: integrate the per-sample goodput
            delivered = np.cumsum(g["goodput_bps"].to_numpy(dtype=float) * si / 8)
        retrans = g["retransmits"].to_numpy(dtype=float) if "retransmits" in g else np.full(len(g), np.nan)
        cwnd = g["cwnd_bytes"].to_numpy(dtype=float) if "cwnd_bytes" in g else np.full(len(g), np.nan)
        # Interval ends: every k-th sample, and the last sample when the run does not end on one.
        ends = np.flatnonzero(n % k == 0)
        if len(n) and (ends.size == 0 or ends[-1] != len(n) - 1):
            ends = np.append(ends, len(n) - 1)
        start_s = float(fl.at[flow, "start_s"]) if "start_s" in fl and flow in fl.index else 0.0
        end_s = float(fl.at[flow, "end_s"]) if "end_s" in fl and flow in fl.index else math.inf
        cc = str(g["cc"].iloc[0]) if "cc" in g else ""
        prev_t, prev_b, prev_r = 0.0, 0.0, 0.0
        for i in ends:
            lo, hi = max(prev_t, start_s), min(t[i], end_s)
            if hi - lo > _EPS:
                nbytes = delivered[i] - prev_b
                rows.append(
                    {
                        "flow": int(flow),
                        "cc": cc,
                        "start_s": lo,
                        "end_s": hi,
                        "bytes": int(round(nbytes)),
                        "bitrate_bps": nbytes * 8 / (hi - lo),
                        "retransmits": retrans[i] - prev_r,
                        "cwnd_bytes": cwnd[i],
                    }
                )
            prev_t, prev_b, prev_r = t[i], delivered[i], retrans[i]
    cols = ["flow", "cc", "start_s", "end_s", "bytes", "bitrate_bps", "retransmits", "cwnd_bytes"]
    df = pd.DataFrame(rows, columns=cols)
    df["above_link_rate"] = df["bitrate_bps"] > link_rate if link_rate else False
    # Sums over the flows shown, per interval of the run's clock (the flows' clipped spans aside).
    df["_slot"] = np.ceil(np.round(df["end_s"] / (k * si), 6)).astype(int)
    sums = (
        df.groupby("_slot")
        .agg(
            start_s=("start_s", "min"),
            end_s=("end_s", "max"),
            bytes=("bytes", "sum"),
            retransmits=("retransmits", "sum"),
            flows=("flow", "count"),
        )
        .reset_index(drop=True)
    )
    sums["bitrate_bps"] = sums["bytes"] * 8 / (sums["end_s"] - sums["start_s"])
    sums["above_link_rate"] = sums["bitrate_bps"] > link_rate if link_rate else False
    df = df.drop(columns="_slot")
    total_cols = ["flow", "cc", "start_s", "end_s", "delivered_bytes", "goodput_bps", "retransmits"]
    totals = (
        result.flows[[c for c in total_cols if c in result.flows]].copy() if not result.flows.empty else pd.DataFrame()
    )
    if "flow" in totals:
        totals = totals[totals["flow"].isin(df["flow"].unique())]
        if "cc" in totals:
            totals["cc"] = totals["cc"].astype(str)
    return Intervals(
        interval_s=k * si,
        sample_interval_s=si,
        link_rate_bps=link_rate,
        rows=df,
        sums=sums,
        totals=totals.reset_index(drop=True),
    )


def _bytes(n: Any) -> str:
    return format_scaled(n, "Bytes", digits=None, kilo="K")


def _bitrate(bps: Any) -> str:
    return format_scaled(bps, "bits/sec", digits=None, kilo="K")


def _count(x: Any) -> str:
    return "-" if x is None or not math.isfinite(float(x)) else f"{int(x)}"


def _span(a: float, b: float) -> str:
    return f"{a:6.2f}-{b:<6.2f} sec"


def interval_lines(iv: Intervals) -> list[str]:
    """iperf3's client report: a header, one line per flow per interval ([SUM] lines when several
    flows are shown), then each flow's totals; a footnote where an interval beat the link rate."""
    head = f"[ ID] {'Interval':<20}  {'Transfer':>12}  {'Bitrate':>15}  {'Retr':>5}  {'Cwnd':>12}"
    ccs = ", ".join(f"[{f:>3}] {cc}" for f, cc in iv.rows[["flow", "cc"]].drop_duplicates().itertuples(index=False))
    out = [f"flows: {ccs}" if ccs else "no flow was active in any interval", head]
    several = iv.rows["flow"].nunique() > 1
    mark = False

    def star(above: bool) -> str:
        nonlocal mark
        mark = mark or bool(above)
        return " *" if above else ""

    by_slot = iv.rows.assign(_end=iv.rows["end_s"]).sort_values(["_end", "flow"], kind="stable")
    slot_of = np.ceil(np.round(by_slot["end_s"].to_numpy() / iv.interval_s, 6)).astype(int)
    sums = iv.sums.itertuples(index=False)
    for slot in dict.fromkeys(slot_of):
        for r in by_slot[slot_of == slot].itertuples(index=False):
            out.append(
                f"[{r.flow:>3}] {_span(r.start_s, r.end_s)}  {_bytes(r.bytes):>12}  {_bitrate(r.bitrate_bps):>15}  "
                f"{_count(r.retransmits):>5}  {_bytes(r.cwnd_bytes):>12}{star(r.above_link_rate)}"
            )
        s = next(sums)
        if several:
            out.append(
                f"[SUM] {_span(s.start_s, s.end_s)}  {_bytes(s.bytes):>12}  {_bitrate(s.bitrate_bps):>15}  "
                f"{_count(s.retransmits):>5}{'':>14}{star(s.above_link_rate)}"
            )
    out.append("- " * 36)
    out.append(f"[ ID] {'Interval':<20}  {'Transfer':>12}  {'Bitrate':>15}  {'Retr':>5}")
    for r in iv.totals.to_dict("records"):
        out.append(
            f"[{int(r['flow']):>3}] {_span(r.get('start_s', 0.0), r.get('end_s', math.nan))}  "
            f"{_bytes(r.get('delivered_bytes')):>12}  {_bitrate(r.get('goodput_bps')):>15}  "
            f"{_count(r.get('retransmits', math.nan)):>5}  {r.get('cc', '')}"
        )
    if mark and iv.link_rate_bps:
        out.append(
            f"* above the bottleneck's {_bitrate(iv.link_rate_bps)}: after a loss is repaired, the bytes the "
            "receiver held behind the hole are delivered in order at once, so an interval can show more than "
            "the link carried in it"
        )
    return [line.rstrip() for line in out]
