"""transperf's metrics for any run (Google's transperf, `__init__.py` and `metric.py`, commit
3b41313): summary.json's ``transperf`` block, what a scenario's ``[checks]`` bound.

Every score runs from 0 to 100, higher better; ``convergence_sec`` is in seconds. BW is the
bottleneck's rate (a schedule's first rate; a policer's rate when lower), on the wire as
transperf's HTB rate is; goodput is payload, so a full link scores about 94.

- **tput**: each 1 s bucket scores 100 * sum over flows of (delivered bytes * 8) / BW; tput is the
  mean over the buckets that end in (0, duration]. (transperf also asks that no flow get nothing:
  ``flows_without_goodput`` counts those.)
- **rtt_med**, per flow: 100 * (minRTT + s) / (medRTT + s), s = 3 * median packet * 8 / BW (a
  serialization allowance; the packet is MSS + 52 B of TCP/IP headers, as the IP length transperf
  reads). minRTT: the least of the flow's ``min_rtt_ms`` samples; medRTT: its median RTT sample
  (``flows.rtt_p50_ms``). ``rtt_bound_exceeded`` counts the flows whose medRTT + s is not below
  transperf's second bound, 1.1 * (RTT + ceil(buffer_pkts * 1514 * 8 / BW in ms)).
- **lock_on_bw**, per flow: 100 * (the flow's bandwidth estimate when it leaves STARTUP) / (BW /
  flows). transperf reads the bw of the kernel debug log's first record in PROBE_BW mode, which
  its README calls the STARTUP exit; here the first state-trace row (``trace = true``) or else
  time-series sample whose phase is not STARTUP. A flow that never leaves STARTUP scores 0, as
  in transperf; one whose backend exports no estimate there (the kernel backend's BPF ports
  report their phase but not BBR.bw) has none.
- **loss_avoid**, per flow: 100 * (1 - retransmitted / sent segments), transperf's ``retx``.
- **fairness**: Jain's index * 100 over all configured flows (n counts them all, as transperf's
  ``nconns``) in each 1 s bucket that ends at or after the warm-up, averaged. None for one flow.
- **convergence_fairness**: the least of those per-bucket indexes (transperf's check is that
  every bucket meets the target). None for one flow or a run of 2 s or less.
- **convergence_sec**: the end of the first bucket from which every bucket to the end of the run
  meets both convergence targets (aggregate tput, and with several flows the per-bucket Jain
  index); None if the last bucket does not. A check ``convergence_sec <= C`` then passes exactly
  when transperf's per-second convergence check with warm-up C would (C whole seconds).

transperf's defect, fixed here: its per-second convergence check compares each bucket's
aggregate throughput in raw bit/s (``metric.py``, ConvergenceMetricPublisher) with the ``tput``
target, a percentage, so it passes at any rate above 80 bit/s. Here each bucket's throughput is a
percentage of BW before it is compared.

rtt_med, lock_on_bw and loss_avoid are judged per flow on BBR flows only in transperf; the
run's value here is the worst flow's among the flows whose algorithm has a STARTUP (every BBR
version), or among all flows when none has (transperf judges none then; bbrlab still reports).

The warm-up and the convergence targets are transperf's ``scores`` entries: a scenario's
``[checks]`` gives them (``convergence_sec``, ``tput``, ``convergence_fairness``), else
transperf's defaults for the run (``default_target_score``: warm-up 4 s, tput 80,
convergence_fairness 90 with several flows, 85 behind a policer, 70 with a shallow buffer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..scenario import Scenario
    from ..scenario.checks import Check
    from .columns import Table

__all__ = ["BUCKET_S", "Targets", "targets_for", "link_rate_bps", "transperf_metrics", "transperf_summary"]

#: transperf's CONVERGENCE_BUCKET: throughput and fairness are judged per 1 s.
BUCKET_S = 1.0
#: transperf's serialization allowance: 3 median packets at BW on each RTT.
SERIAL_PACKETS = 3
#: transperf's medRTT bound: 1.1 * (RTT + the full buffer's delay, 1514-byte packets).
RTT_BOUND_SLACK = 1.1
BOUND_PACKET_BYTES = 1514
#: transperf's defaults (``default_target_score``), used where a scenario's [checks] gives none.
DEFAULT_WARMUP_S = 4.0
DEFAULT_TPUT = 80.0
DEFAULT_CONVERGENCE_FAIRNESS_ONE_FLOW = 100.0
DEFAULT_CONVERGENCE_FAIRNESS = 90.0
DEFAULT_CONVERGENCE_FAIRNESS_POLICER = 85.0
DEFAULT_CONVERGENCE_FAIRNESS_SHALLOW = 70.0
#: transperf's shallow buffer: under 3 packets or under 0.1 BDP.
SHALLOW_PACKETS = 3
SHALLOW_BDP = 0.1
#: A run must be longer than two buckets for the convergence check (transperf skips it otherwise).
CONVERGENCE_MIN_DURATION_S = 2 * BUCKET_S

_EPS = 1e-9


@dataclass(frozen=True)
class Targets:
    """The scores the convergence metrics are measured against (transperf's scores dict)."""

    warmup_s: float
    tput: float
    convergence_fairness: float


def targets_for(scenario: Scenario, checks: tuple[Check, ...] = ()) -> Targets:
    """The warm-up and convergence targets: the [checks] bounds where given, else transperf's
    defaults for this scenario (flow count, policer, shallow buffer)."""
    from ..scenario.checks import bound

    n = scenario.flow_count
    cf = DEFAULT_CONVERGENCE_FAIRNESS_ONE_FLOW if n <= 1 else DEFAULT_CONVERGENCE_FAIRNESS
    if getattr(getattr(scenario.topology, "bottleneck", None), "policer", None) is not None:
        cf = DEFAULT_CONVERGENCE_FAIRNESS_POLICER
    d = scenario.derived()
    pkts = d.get("buffer_packets")
    if pkts is None and d.get("buffer_bytes") is not None:
        pkts = d["buffer_bytes"] / BOUND_PACKET_BYTES
    bdp_pkts = d["bdp_bytes"] / BOUND_PACKET_BYTES
    if n > 1 and pkts is not None and (pkts < SHALLOW_PACKETS or pkts < SHALLOW_BDP * bdp_pkts):
        cf = DEFAULT_CONVERGENCE_FAIRNESS_SHALLOW
    warmup = bound(checks, "convergence_sec")
    tput = bound(checks, "tput")
    given_cf = bound(checks, "convergence_fairness")
    return Targets(
        warmup_s=DEFAULT_WARMUP_S if warmup is None else warmup,
        tput=DEFAULT_TPUT if tput is None else tput,
        convergence_fairness=cf if given_cf is None else given_cf,
    )


def link_rate_bps(scenario: Scenario) -> float:
    """transperf's BW: the bottleneck's (first) rate, or its policer's when lower."""
    rate = float(scenario.derived()["bottleneck_rate_bps"])
    b = getattr(scenario.topology, "bottleneck", None)
    if b is not None and b.rate is not None:
        rate = float(b.rate)  # a schedule's first rate
    policer = getattr(b, "policer", None)
    if policer is not None and 0 < policer.rate < rate:
        rate = float(policer.rate)
    return rate


def _is_bbr(cc: str) -> bool:
    """Whether ``cc`` has a STARTUP (every BBR version; a kernel:NAME by its name)."""
    from ..core.algorithms import lookup
    from ..scenario.fields import KERNEL_PREFIX

    name = cc.removeprefix(KERNEL_PREFIX)
    algo = lookup(name)
    if algo is not None:
        return "startup" in algo.phases
    return name.startswith("bbr")


def _flow_rows(table: Table | None) -> dict[int, np.ndarray]:
    """Each flow's row indices in ``table``, in time order (one sort: a run may have 10^3 flows
    and 10^6 rows, so nothing here scans the table once per flow)."""
    if table is None or not len(table) or "flow" not in table or "t_s" not in table:
        return {}
    flows = np.asarray(table["flow"])
    order = np.lexsort((np.asarray(table["t_s"], dtype=float), flows))
    ids, starts = np.unique(flows[order], return_index=True)
    return {int(f): rows for f, rows in zip(ids, np.split(order, starts[1:]), strict=True)}


def _bucket_bytes(ts: Table, rows: dict[int, np.ndarray], flow_ids: list[int], duration_s: float) -> np.ndarray:
    """Bytes each flow delivered in each 1 s bucket ending in (0, duration]: shape (flows,
    buckets). A bucket's bytes are the cumulative count at the last sample at or before its end
    minus the same at its start (transperf's ss log deltas)."""
    ends = np.arange(1, int(math.floor(duration_s / BUCKET_S + _EPS)) + 1) * BUCKET_S
    out = np.zeros((len(flow_ids), len(ends)))
    if not len(ends) or not len(ts):
        return out
    t = np.asarray(ts["t_s"], dtype=float)
    cum = np.asarray(ts["delivered_bytes"], dtype=float)
    for row, fid in enumerate(flow_ids):
        r = rows.get(fid, np.zeros(0, dtype=np.int64))
        ft, fc = t[r], cum[r]
        at = np.searchsorted(ft, ends + _EPS, side="right") - 1
        level = np.where(at >= 0, fc[np.maximum(at, 0)], 0.0) if len(ft) else np.zeros(len(ends))
        out[row] = np.diff(np.concatenate(([0.0], level)))
    return out


def _jain_pct(per_flow: np.ndarray, n: int) -> np.ndarray:
    """Jain's index * 100 per bucket over ``n`` flows (a bucket where nobody delivered: 0)."""
    s = per_flow.sum(axis=0)
    s2 = (per_flow**2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(s2 > 0, 100.0 * s * s / (n * s2), 0.0)


def _lock_on_bps(
    fid: int,
    state: Table | None,
    ts: Table,
    rows: tuple[dict[int, np.ndarray], dict[int, np.ndarray]] | None = None,
) -> float:
    """The flow's bandwidth estimate at its first record outside STARTUP (the state trace's, else
    the time series'); 0 if it has none (it never left STARTUP), NaN if that record has no
    estimate. ``rows``: :func:`_flow_rows` of (state, ts), when the caller has them."""
    state_rows, ts_rows = rows if rows is not None else (_flow_rows(state), _flow_rows(ts))
    for table, by_flow in ((state, state_rows), (ts, ts_rows)):
        if table is None or fid not in by_flow or "phase" not in table or "bw_bps" not in table:
            continue
        r = by_flow[fid]
        if "phase" in table.categories:  # codes: no label array of the whole table
            labels = table.categories["phase"]
            codes = np.asarray(table.codes("phase"))[r]
            left = (codes >= 0) & (codes != (labels.index("startup") if "startup" in labels else -2))
        else:
            names = np.asarray(table["phase"], dtype=object)[r]
            left = (names != "startup") & (names != "") & (names != None)  # noqa: E711  # elementwise
        out = np.flatnonzero(left)
        if len(out):
            value = float(np.asarray(table["bw_bps"], dtype=float)[r[out[0]]])
            # NaN: the backend exports no estimate (the kernel backend's BPF ports): unknown, not 0.
            return value if math.isfinite(value) else math.nan
        return 0.0
    return 0.0


def _worst(values: list[float]) -> float | None:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return min(finite) if finite else None


def _fairness_and_convergence(
    out: dict[str, Any],
    notes: dict[str, str],
    per_bucket: np.ndarray,
    tput_buckets: np.ndarray,
    targets: Targets,
    duration_s: float,
) -> np.ndarray:
    """fairness, convergence_fairness and convergence_sec into ``out`` (why one is missing into
    ``notes``); returns the per-second Jain index (%) of the configured flows."""
    n = int(out["flows"])
    ends = (np.arange(tput_buckets.size) + 1) * BUCKET_S
    jain = _jain_pct(per_bucket, n) if n > 1 else np.zeros(0)
    judged = ends >= targets.warmup_s - _EPS
    if n <= 1:
        out["fairness"] = out["convergence_fairness"] = None
        notes["fairness"] = notes["convergence_fairness"] = "one flow: no fairness to judge"
    elif not judged.any():
        out["fairness"] = out["convergence_fairness"] = None
        notes["fairness"] = notes["convergence_fairness"] = "no whole second after the warm-up"
    else:
        out["fairness"] = float(jain[judged].mean())
        if duration_s <= CONVERGENCE_MIN_DURATION_S:
            out["convergence_fairness"] = None
            notes["convergence_fairness"] = "a run of 2 s or less: not judged"
        else:
            out["convergence_fairness"] = float(jain[judged].min())

    # Convergence: every bucket from some point on meets the targets, tput as a percentage
    # (transperf compares raw bit/s here: the fixed defect).
    ok = tput_buckets >= targets.tput
    if n > 1:
        ok &= jain >= targets.convergence_fairness
    if not ok.size or not ok[-1]:
        out["convergence_sec"] = None
        notes["convergence_sec"] = "the last second misses the convergence targets"
    else:
        failing = np.flatnonzero(~ok)
        first_good = int(failing[-1]) + 1 if len(failing) else 0
        out["convergence_sec"] = float(ends[first_good])
    return jain


def transperf_metrics(
    scenario: Scenario,
    flows: Table,
    ts: Table,
    state: Table | None = None,
    checks: tuple[Check, ...] = (),
    *,
    header_bytes: int,
) -> dict[str, Any]:
    """The ``transperf`` block of summary.json (see the module docstring); ``header_bytes``:
    what a segment carries besides its MSS up to the IP header (results.TCP_IP_HEADER_BYTES)."""
    targets = targets_for(scenario, checks)
    bw = link_rate_bps(scenario)
    duration_s = scenario.duration / 1e9
    d = scenario.derived()
    rtt_ms = d["base_rtt_ns"] / 1e6
    buf_pkts = d.get("buffer_packets")
    if buf_pkts is None and d.get("buffer_bytes") is not None:
        buf_pkts = d["buffer_bytes"] / BOUND_PACKET_BYTES
    mss = {i: int(f.mss) for i, f in enumerate(scenario.flows)}
    configured = [i for i in range(len(flows)) if int(flows["spec"][i]) >= 0] if "spec" in flows else []
    flow_ids = [int(flows["flow"][i]) for i in configured]
    n = len(flow_ids)
    notes: dict[str, str] = {}
    out: dict[str, Any] = {
        "bw_bps": bw,
        "flows": n,
        "warmup_s": targets.warmup_s,
        "convergence_targets": {"tput": targets.tput, "convergence_fairness": targets.convergence_fairness},
    }

    ts_rows, state_rows = _flow_rows(ts), _flow_rows(state)
    per_bucket = _bucket_bytes(ts, ts_rows, flow_ids, duration_s) * 8 / BUCKET_S  # bit/s
    tput_buckets = 100.0 * per_bucket.sum(axis=0) / bw if per_bucket.size else np.zeros(0)
    out["tput"] = float(tput_buckets.mean()) if tput_buckets.size else None
    out["flows_without_goodput"] = int(sum(1 for i in configured if int(flows["delivered_bytes"][i]) == 0))

    jain = _fairness_and_convergence(out, notes, per_bucket, tput_buckets, targets, duration_s)

    per_flow: list[dict[str, Any]] = []
    serial_ms: dict[int, float] = {}
    for i, fid in zip(configured, flow_ids, strict=True):
        cc = str(flows["cc"][i]) if "cc" in flows else ""
        spec = int(flows["spec"][i])
        packet = mss.get(spec, 1448) + header_bytes
        s_ms = SERIAL_PACKETS * packet * 8 / bw * 1e3
        serial_ms[fid] = s_ms
        r = ts_rows.get(fid, np.zeros(0, dtype=np.int64))
        mins = np.asarray(ts["min_rtt_ms"], dtype=float)[r] if "min_rtt_ms" in ts else np.zeros(0)
        mins = mins[np.isfinite(mins) & (mins > 0)]
        min_rtt = float(mins.min()) if mins.size else math.nan
        med_rtt = float(flows["rtt_p50_ms"][i]) if "rtt_p50_ms" in flows else math.nan
        rtt_score = 100.0 * (min_rtt + s_ms) / (med_rtt + s_ms) if math.isfinite(min_rtt + med_rtt) else math.nan
        bound_ms = math.nan
        if buf_pkts is not None:
            bound_ms = RTT_BOUND_SLACK * (rtt_ms + math.ceil(1000.0 * buf_pkts * BOUND_PACKET_BYTES * 8 / bw))
        sent = int(flows["data_packets_sent"][i])
        retx = int(flows["retransmits"][i])
        bbr = _is_bbr(cc)
        lock_bps = _lock_on_bps(fid, state, ts, (state_rows, ts_rows)) if bbr else math.nan
        per_flow.append(
            {
                "flow": fid,
                "cc": cc,
                "bbr": bbr,
                "min_rtt_ms": min_rtt,
                "med_rtt_ms": med_rtt,
                "serial_ms": s_ms,
                "rtt_med": rtt_score,
                "med_rtt_bound_ms": bound_ms,
                "lock_on_bw_bps": lock_bps,
                "lock_on_bw": 100.0 * lock_bps / (bw / n) if bbr and n else math.nan,
                "loss_avoid": 100.0 * (1.0 - retx / sent) if sent else math.nan,
            }
        )
    judged_flows = [f for f in per_flow if f["bbr"]] or per_flow
    out["judged_flows"] = "bbr" if any(f["bbr"] for f in per_flow) else "all"
    out["rtt_med"] = _worst([f["rtt_med"] for f in judged_flows])
    out["rtt_bound_exceeded"] = sum(
        1
        for f in judged_flows
        if math.isfinite(f["med_rtt_bound_ms"]) and not f["med_rtt_ms"] + f["serial_ms"] < f["med_rtt_bound_ms"]
    )
    out["lock_on_bw"] = _worst([f["lock_on_bw"] for f in per_flow if f["bbr"]])
    if out["lock_on_bw"] is None:
        notes["lock_on_bw"] = (
            "the backend reports no bandwidth estimate for these flows"
            if any(f["bbr"] for f in per_flow)
            else "no flow with a STARTUP"
        )
    out["loss_avoid"] = _worst([f["loss_avoid"] for f in judged_flows])
    out["per_flow"] = per_flow
    out["per_second"] = {"tput": tput_buckets.tolist(), "fairness": jain.tolist()}
    if notes:
        out["notes"] = notes
    return out


def transperf_summary(
    scenario: Scenario, flows: Table, ts: Table, state: Table | None, *, header_bytes: int
) -> dict[str, Any]:
    """summary.json's ``transperf`` block and, when the scenario has [checks], their outcomes
    (``checks``); nothing on a graph (no one bottleneck whose rate "% of the link" could mean)."""
    from ..scenario.checks import evaluate

    if scenario.is_graph:
        return {}
    metrics = transperf_metrics(scenario, flows, ts, state, scenario.checks, header_bytes=header_bytes)
    out: dict[str, Any] = {"transperf": metrics}
    if scenario.checks:
        out["checks"] = [o.to_json() for o in evaluate(scenario.checks, metrics)]
    return out
