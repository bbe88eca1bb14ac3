"""Time each BBR flow spent in each phase, from the phase the time series samples.

The time series records every flow's phase at each sample (``sample_interval``, 100 ms by
default), on both backends and with the same names (the registry's phase table). A flow's time in
a phase is the number of its samples in that phase times the interval, over the samples of its
active time (from its first sample after its start to its last before its end). Phases shorter
than the interval are counted only when a sample falls in them: a BBRv3 REFILL of one round trip
appears about as often as its share of the time, not at each visit. So the figures are said
with their resolution (``phase_time_resolution_s``); `conform`'s per-ACK state trace has every
transition.

Only flows whose algorithm has a STARTUP (every BBR version) get the figures; a loss-based
flow's recoveries last a round trip each and would mostly fall between samples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .columns import Table

__all__ = ["phase_times", "phase_time_line"]


def _has_startup(cc: str) -> bool:
    from .transperf import _is_bbr

    return _is_bbr(cc)


def phase_times(ts: Table, flows: Table, interval_s: float) -> dict[int, dict[str, float]]:
    """Flow id → {phase: seconds} for every BBR flow with samples, phases in the order first met."""
    import numpy as np  # here: `show` prints phase_time_line without loading numpy

    from .transperf import _flow_rows

    out: dict[int, dict[str, float]] = {}
    if not len(ts) or "phase" not in ts or "cc" not in flows or interval_s <= 0:
        return out
    rows = _flow_rows(ts)
    if "phase" in ts.categories:
        labels = list(ts.categories["phase"])
        codes = np.asarray(ts.codes("phase"))
        names = np.array([*labels, ""], dtype=object)  # a code < 0 (no phase) reads ""
        phase_of = names[np.where(codes >= 0, codes, len(labels))]
    else:
        phase_of = np.asarray(ts["phase"], dtype=object)
    t = np.asarray(ts["t_s"], dtype=float)
    start = np.asarray(flows["start_s"], dtype=float) if "start_s" in flows else None
    end = np.asarray(flows["end_s"], dtype=float) if "end_s" in flows else None
    for i in range(len(flows)):
        fid = int(flows["flow"][i])
        if not _has_startup(str(flows["cc"][i])) or fid not in rows:
            continue
        r = rows[fid]
        active = np.ones(len(r), dtype=bool)
        if start is not None:
            active &= t[r] > start[i]
        if end is not None and np.isfinite(end[i]):
            active &= t[r] <= end[i]
        seen: dict[str, float] = {}
        for name in phase_of[r[active]]:
            if name and name != "-":
                seen[str(name)] = seen.get(str(name), 0.0) + interval_s
        if seen:
            out[fid] = {k: round(v, 9) for k, v in seen.items()}
    return out


def phase_time_line(summary: dict[str, Any]) -> str | None:
    """One line for `run`/`show`: each BBR algorithm's mean time per flow in each phase, with the
    sampling it comes from; None when no flow has the figures."""
    by_cc: dict[str, list[dict[str, float]]] = {}
    for f in summary.get("flows", []):
        times = f.get("phase_time_s")
        if isinstance(times, dict) and times:
            by_cc.setdefault(str(f.get("cc", "")), []).append(times)
    if not by_cc:
        return None
    resolution = summary.get("run", {}).get("phase_time_resolution_s")
    parts = []
    for cc, entries in by_cc.items():
        phases: dict[str, float] = {}
        for e in entries:
            for k, v in e.items():
                phases[k] = phases.get(k, 0.0) + v / len(entries)
        each = " per flow" if len(entries) > 1 else ""
        parts.append(f"{cc}{each}: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()))
    at = f"sampled every {resolution * 1e3:g} ms" if isinstance(resolution, (int, float)) else "sampled"
    return f"time in phase ({at}): " + " · ".join(parts)
