"""The nsperf scenarios as bbrlab runs, and nsperf's three metrics per run and point.

nsperf's metrics (nsperf.py, from `ss -tinmo` every 0.1 s):
- throughput: netperf's, a flow's bytes over its own duration (``flows.goodput_bps``): coexist
  plots the BBR flow's; the other scenarios, all flows' bytes over the run;
- retransmit %: 100 * sum of retransmitted / sum of data segments sent (each flow's last ss sample);
- p50 RTT: the median of every srtt sample of every flow while it runs (the time series'
  ``srtt_ms`` at the 0.1 s sample interval);
repetitions are combined by their median, as nsperf's median.py does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..context import StudyContext
from ..scenarios import Dumbbell, Flow, QueueLimit, StudyRun, study_run
from .plan import Config, Scenario, buffer_packets

#: ss's sampling period in nsperf.
SAMPLE_INTERVAL_S = 0.1
#: ecn_bulk's bottleneck: `codel ce_threshold 242us limit 1000 target 100ms` (the 100 ms target
#: keeps CoDel from dropping: a FIFO that CE-marks what waited over 242 us).
ECN_BULK_LIMIT_PACKETS = 1000
ECN_BULK_QDISC = {"kind": "codel", "target": "100ms", "ce_threshold": "242us", "ecn": True}

#: The senders' links. nsperf's hosts are namespaces joined by veth pairs with no rate limit
#: (only crt's netem or HTB shapes), so a sender's burst reaches the bottleneck as fast as the
#: host copies packets, not at the dumbbell's default access rate (10x the bottleneck: 500
#: Mbit/s at nsperf's 50 Mbit/s). Measured on the emu backend's TUN path, which is the same kind
#: of path: a CUBIC flow's back-to-back packets leave the sender's namespace 0.72 us apart
#: (median, tcpdump with nanosecond stamps; about 17 Gbit/s of 1538-byte frames). It matters where
#: an unpaced flow shares the queue: in coexist at 1 BDP the BBR flow's share is flat from 10 to
#: 1000 Gbit/s of access rate and a third lower at 500 Mbit/s (docs/reproduce.md).
HOST_LINK_RATE_BPS = 17_000_000_000

POINT = ["scenario", "cc", "x"]


def _flows(sc: Scenario, cc: str, x: float) -> list[Flow]:
    """The scenario's flows: (start, stop) each, nsperf's netperf instances `interval` apart."""
    n = int(x) if sc.name in ("shallow", "ecn_bulk") else sc.flows
    ccs = ["cubic", cc] if sc.name == "coexist" else [cc] * n
    ecn = True if sc.name == "ecn_bulk" else None
    return [
        Flow(c, start_s=round(i * sc.interval_s, 6), stop_s=round(i * sc.interval_s + sc.duration_s, 6), ecn=ecn)
        for i, c in enumerate(ccs)
    ]


def _link(sc: Scenario, x: float) -> Dumbbell:
    if sc.name == "ecn_bulk":
        return Dumbbell(
            sc.rate_bps,
            sc.rtt_s,
            QueueLimit.of_packets(ECN_BULK_LIMIT_PACKETS),
            qdisc=ECN_BULK_QDISC,
            access_rate_bps=HOST_LINK_RATE_BPS,
        )
    bdp = x if sc.name in ("coexist", "bufferbloat") else sc.buffer_bdp
    loss = x / 100 if sc.name == "random_loss" else 0.0
    return Dumbbell(
        sc.rate_bps,
        sc.rtt_s,
        QueueLimit.of_packets(max(1, buffer_packets(sc.rate_bps, sc.rtt_s, bdp))),
        loss,
        access_rate_bps=HOST_LINK_RATE_BPS,
    )


def runs_of(sc: Scenario) -> list[StudyRun]:
    """Every run of one scenario: each algorithm, point and repetition."""
    out = []
    for cc in sc.ccs:
        for x in sc.sweep:
            flows = _flows(sc, cc, x)
            end = max(f.stop_s or 0.0 for f in flows)
            for rep in range(sc.reps):
                out.append(
                    study_run(
                        f"nsperf-{sc.name}-{cc}-{x:g}-{rep}",
                        duration_s=end,
                        seed=rep + 1,
                        sample_interval_s=SAMPLE_INTERVAL_S,
                        topology=_link(sc, x),
                        flows=flows,
                        tags={"scenario": sc.name, "cc": cc, "x": float(x), "rep": rep},
                    )
                )
    return out


def _p50_srtt_ms(ts: pd.DataFrame, flows: pd.DataFrame) -> float:
    """The median srtt sample over the flows while each runs."""
    if ts is None or not len(ts):
        return float("nan")
    span = flows.set_index("flow")[["start_s", "end_s"]]
    start = ts["flow"].map(span["start_s"]).to_numpy(dtype=float)
    end = ts["flow"].map(span["end_s"]).to_numpy(dtype=float)
    t = ts["t_s"].to_numpy(dtype=float)
    srtt = ts["srtt_ms"].to_numpy(dtype=float)
    keep = (t > start) & (t <= end + 1e-9) & np.isfinite(srtt) & (srtt > 0)
    return float(np.median(srtt[keep])) if keep.any() else float("nan")


def run_scenario(ctx: StudyContext, sc: Scenario) -> pd.DataFrame:
    """One row per run: the three metrics and the packets it cost."""
    rows = ctx.run_many(sc.name, runs_of(sc), keep_timeseries=True)
    series = ctx.series.pop(sc.name)
    out: list[dict[str, Any]] = []
    for i, (tags, ts, _) in enumerate(series):
        f = rows[rows["run"] == i].sort_values("flow")
        if sc.name == "coexist":
            throughput = float(f["goodput_bps"].iloc[1])  # the BBR flow, started second
        else:  # the flows together, over the run (their own spans overlap only in part)
            throughput = float(f["run_goodput_bps"].iloc[0])
        sent = float(f["data_packets_sent"].sum())
        out.append(
            {
                **tags,
                "throughput_bps": throughput,
                "retrans_pct": 100.0 * float(f["retransmits"].sum()) / sent if sent else float("nan"),
                "p50_srtt_ms": _p50_srtt_ms(ts, f),
                "packets": int(f["data_packets_delivered_run"].iloc[0]),
                "wall_s": float(f["wall_s"].iloc[0]),
            }
        )
    return pd.DataFrame(out)


def run_all(ctx: StudyContext, cfg: Config) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every run, the points: repetitions combined by their median)."""
    runs = pd.concat([run_scenario(ctx, sc) for sc in cfg.scenarios()], ignore_index=True)
    metrics = ["throughput_bps", "retrans_pct", "p50_srtt_ms"]
    points = runs.groupby(POINT, sort=False)[metrics].median().reset_index()
    return runs, points
