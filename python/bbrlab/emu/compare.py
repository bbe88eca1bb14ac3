"""`bbrlab compare`: the same scenario on the simulator and on the kernel, side by side.

For every grid point and algorithm it runs ``--backend sim`` with ``seeds`` seeds (the simulator is
cheap, and one 20 s run of a loss-limited flow can be 30 % off its own multi-seed mean) and
``--backend emu`` ``emu_runs`` times (seeds ``seed``, ``seed+1``, ...: the emulator's loss pattern
is seeded too), and tabulates goodput, mean RTT and retransmission rate of both sides as mean and
min-max range, with the simulator's relative error ``(sim mean - emu mean) / emu mean``; beside them
the retransmitted segments (all flows' sum per run) and, in the table, their split by cause: fast
(RACK, outside the Loss state), after an RTO, loss probe (the flows table's ``retrans_fast``,
``retrans_rto``, ``retrans_tlp``; on the kernel from its MIB counters, docs/fidelity.md). Each
kernel run's emulator stalls and the bottleneck's overflow drops that fell in them
(bbrlab.emu.stalls) are printed under the point, their means go to compare.csv
(``emu_stall_count``, ``emu_stall_max_ms``, ``emu_late_wake_stalls``, ``emu_late_wake_max_ms``,
``emu_late_sleep_stalls``: those of the stalls that were the machine waking the emulator late, and
those that were a sleep returning late with a packet ready, ``emu_overflow_drops``,
``emu_stall_drops``, ``emu_stall_drop_share``) and a line per point under compare.md's table: how much of a
retransmission gap the testbed's own bursts can explain. Outputs in
the directory: ``compare.csv`` (means as ``sim_<metric>``/``emu_<metric>``, ranges as
``..._min``/``..._max``, run counts ``sim_runs``/``emu_runs``), ``compare.md`` (the table),
``compare.png`` (errors per point, with the sim range as error bars) and every run directory under
``runs/`` (``p<N>-<cc>-<backend>-s<seed>``).

A scenario with several flows also gets one row per flow (algorithm, goodput, share of the sum of
the flows' goodputs — each over its own active time — and retransmissions; each side's mean over
its runs), printed under the point's aggregate line, in ``compare_flows.csv`` and as a second
table in ``compare.md``: a coexistence point (BBR against CUBIC) is read from the shares, which
the aggregate hides.

``sim_only`` (``--sim-only``) leaves the kernel out: no root, no namespaces; the same grid and
algorithms on the simulator alone, the table and the figure showing its figures (mean, min–max)
per point and algorithm. Kernel runs take minutes as root, so the CLI asks before starting them
(``confirm``), once every point has been validated.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import UserError
from ..plots.figures import subplots
from ..scenario import load_scenario
from .stalls import (
    STALL_METRICS,
    late_wake_note,
    late_wake_split,
    run_stall_threshold_ms,
    run_stalls,
    stall_drops_of_run,
)

if TYPE_CHECKING:
    from ..scenario import Scenario

__all__ = ["run_compare", "FIDELITY_GRID", "AXES", "NotConfirmed"]

#: The grid axes compare's fidelity points use (the same paths as sweep/aliases.py's short names;
#: importing that table here would close an import cycle emu -> sweep -> engine -> emu).
AXES = {
    "rate": "topology.bottleneck.rate",
    "rtt": "topology.bottleneck.rtt",
    "loss": "topology.bottleneck.loss",
    "buffer": "topology.bottleneck.buffer",
}

# 8 points spanning rates 50-500 Mbit/s, RTT 10-100 ms, loss 0-2 %, buffer 0.5-2 BDP.
FIDELITY_GRID: list[dict[str, str]] = [
    {"rate": "50Mbps", "rtt": "10ms", "loss": "0%", "buffer": "1bdp"},
    {"rate": "100Mbps", "rtt": "40ms", "loss": "0%", "buffer": "1bdp"},
    {"rate": "100Mbps", "rtt": "40ms", "loss": "1.5%", "buffer": "1bdp"},
    {"rate": "200Mbps", "rtt": "20ms", "loss": "0.1%", "buffer": "0.5bdp"},
    {"rate": "200Mbps", "rtt": "100ms", "loss": "0%", "buffer": "2bdp"},
    {"rate": "500Mbps", "rtt": "10ms", "loss": "0%", "buffer": "1bdp"},
    {"rate": "500Mbps", "rtt": "40ms", "loss": "1%", "buffer": "1bdp"},
    {"rate": "50Mbps", "rtt": "100ms", "loss": "2%", "buffer": "0.5bdp"},
]


def _grid_points(grid: list[str]) -> list[dict[str, str]]:
    if not grid:
        return [{}]
    if grid == ["fidelity"]:
        return [dict(p) for p in FIDELITY_GRID]
    axes: list[tuple[str, list[str]]] = []
    for g in grid:
        if "=" not in g:
            raise UserError(f'--grid {g}: expected AXIS=V1,V2 (axes: {", ".join(AXES)}) or "fidelity"')
        k, v = (x.strip() for x in g.split("=", 1))
        if k not in AXES:
            raise UserError(f"--grid {k}: unknown axis; use one of {', '.join(AXES)}")
        vals = [x.strip() for x in v.split(",") if x.strip()]
        if not vals:
            raise UserError(f"--grid {k}: no values")
        axes.append((k, vals))
    return [dict(zip([a for a, _ in axes], combo)) for combo in itertools.product(*[v for _, v in axes])]


def _label(point: dict[str, str]) -> str:
    return " ".join(f"{point[k]}" for k in AXES if k in point) or "scenario"


#: Retransmissions by cause, the flows table's columns (their sum is ``retransmits``).
RETRANS_CAUSES = ("retrans_fast", "retrans_rto", "retrans_tlp")


def _cause_total(fl: Any, col: str) -> float:
    """All flows' ``col``; NaN where a flow could not count it (−1: the kernel's counters were not
    read) or the results have no such column (an older run)."""
    if col not in fl or not len(fl) or (fl[col] < 0).any():
        return math.nan
    return float(fl[col].sum())


def _metrics(result: Any) -> dict[str, float]:
    agg = result.summary["aggregate"]
    fl = result.flows
    return {
        "goodput_mbps": agg["goodput_bps"] / 1e6 if agg.get("goodput_bps") is not None else math.nan,
        "rtt_mean_ms": float(fl["rtt_mean_ms"].mean()) if len(fl) else math.nan,
        "retrans_rate": float(agg.get("retrans_rate") or 0.0),
        "retransmits": float(agg.get("retransmits") or 0),
        **{c: _cause_total(fl, c) for c in RETRANS_CAUSES},
    }


METRICS = ("goodput_mbps", "rtt_mean_ms", "retrans_rate", "retransmits", *RETRANS_CAUSES)
FLOW_METRICS = ("goodput_mbps", "share", "retransmits", "retrans_rate", *RETRANS_CAUSES)


def _flow_metrics(result: Any) -> list[dict[str, Any]]:
    """Per flow: algorithm, goodput, share of the flows' total goodput, retransmissions."""
    fl = result.flows
    total = float(fl["goodput_bps"].fillna(0).sum())
    return [
        {
            "cc": str(r["cc"]),
            "goodput_mbps": r["goodput_bps"] / 1e6,
            "share": r["goodput_bps"] / total if total > 0 else math.nan,
            "retransmits": float(r["retransmits"]),
            "retrans_rate": float(r["retrans_rate"]),
            # −1: the kernel's counters were not read; absent: a run from before the columns.
            **{c: float(r[c]) if r.get(c, -1) >= 0 else math.nan for c in RETRANS_CAUSES},
        }
        for r in fl.sort_values("flow").to_dict("records")
    ]


def _stall_metrics(result: Any) -> dict[str, float]:
    """A kernel run's emulator stalls and the bottleneck's overflow drops in them
    (bbrlab.emu.stalls); NaN for a run without stall records (the simulator, an older run)."""
    st = run_stalls(result.summary)
    if st is None:
        return {k: math.nan for k in STALL_METRICS}
    return stall_drops_of_run(result.queue, *st, run_stall_threshold_ms(result.summary))


def _stall_run_line(seed: int, retransmits: float, m: dict[str, float]) -> str:
    """One kernel run's stall attribution, printed under its point."""
    if not math.isfinite(m["stall_count"]):
        return f"    emu seed {seed}: retx {retransmits:.0f}; no stall records"
    return (
        f"    emu seed {seed}: retx {retransmits:.0f}, overflow drops {m['overflow_drops']:.0f}, "
        f"{m['stall_drops']:.0f} in stalled intervals ({_pct_plain(m['stall_drop_share'])}); "
        f"{m['stall_count']:.0f} stalls{late_wake_note(m)}, "
        f"longest {m['stall_max_ms']:.1f} ms"
    )


def _pct_plain(x: float) -> str:
    return f"{100 * x:.0f} %" if math.isfinite(x) else "–"


def _mean(vals: list[float]) -> float:
    finite = [v for v in vals if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


def _flow_line(r: dict[str, Any], sides: tuple[str, ...]) -> str:
    def both(k: str, fmt: str, scale: float = 1.0) -> str:
        return " ".join(f"{side} {format(scale * r[f'{side}_{k}'], fmt)}" for side in sides)

    return (
        f"    flow {r['flow']:<3} {r['cc']:<10} goodput {both('goodput_mbps', '8.2f')} Mbit/s  "
        f"share {both('share', '5.1f', 100)} %  retx {both('retransmits', '.0f')} "
        f"({both('retrans_rate', '.2f', 100)} %; fast/rto/tlp "
        + " ".join(f"{side} {_causes(r, side)}" for side in sides)
        + ")"
    )


class NotConfirmed(UserError):
    """The user answered no to the kernel runs: nothing ran (exit code 1, not a usage error)."""

    exit_code = 1


def run_compare(
    scenario: str,
    *,
    sets: list[str],
    grid: list[str],
    ccs: list[str],
    duration: str | None,
    out: Path | None,
    run_fn: Callable[..., Any],
    echo: Callable[[str], Any] = print,
    seeds: int = 3,
    emu_runs: int = 1,
    sim_only: bool = False,
    confirm: Callable[[str], bool] | None = None,
) -> tuple[pd.DataFrame, Path]:
    """``seeds`` simulator runs and ``emu_runs`` kernel runs per point and algorithm, with seeds
    ``seed .. seed+n-1`` (``seed`` from the scenario / ``--set seed=N``). ``run_fn(scenario,
    backend=...)`` runs one scenario: ``bbrlab.engine.runner.run``, passed in by the caller so that this
    package does not import the runner that dispatches to it (tests pass a stand-in).

    ``sim_only``: no kernel runs; the table has the simulator's figures per point and algorithm.
    ``confirm(question)``: asked once, after every point is validated and before anything runs,
    when there are kernel runs; False raises :class:`NotConfirmed`."""
    if seeds < 1 or emu_runs < 1:
        raise UserError("--seeds and --emu-runs must be at least 1")

    base = load_scenario(scenario, overrides=sets)
    points = _grid_points(grid)
    n_flows = len(base.flows)
    cc_list: list[str | None] = [*ccs] or [None]
    backends = (("sim", seeds),) if sim_only else (("sim", seeds), ("emu", emu_runs))
    # Every point is validated before anything runs (and before the question is asked).
    plan = _plan_points(scenario, sets, points, cc_list, n_flows, duration)
    if not sim_only and confirm is not None:
        kernel_s = sum(scn.duration for *_, scn in plan) * emu_runs / 1e9
        n = len(plan) * emu_runs
        if not confirm(
            f"{n} kernel run{'s' * (n != 1)} ({kernel_s:.0f} s of traffic, plus the simulator's) in network "
            "namespaces, as root. Start them?"
        ):
            raise NotConfirmed("compare: not confirmed; nothing ran")
    if out is None:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = Path("runs") / f"compare-{base.name}-{stamp}"
    if out.exists():
        raise UserError(f"--out {out}: already exists; choose another directory")
    (out / "runs").mkdir(parents=True)
    rows = []
    flow_rows: list[dict[str, Any]] = []
    sides = tuple(b for b, _ in backends)
    for pi, point, ov, scn in plan:
        algs = ",".join(sorted({f.cc for f in scn.flows}))
        row: dict[str, Any] = {"point": pi, "label": _label(point), "cc": algs, **point}
        multi = scn.flow_count > 1
        point_flows: list[dict[str, Any]] = []
        stall_lines: list[str] = []
        for backend, n in backends:
            per_run: dict[str, list[float]] = {k: [] for k in METRICS}
            per_flow: list[list[dict[str, Any]]] = []
            per_stall: dict[str, list[float]] = {k: [] for k in STALL_METRICS}
            for i in range(n):
                seed = base.seed + i
                scn_i = load_scenario(scenario, overrides=ov + [f"seed={seed}"])
                res = run_fn(scn_i, backend=backend)
                res.save(out / "runs" / f"p{pi}-{algs.replace(',', '+')}-{backend}-s{seed}", plots=False)
                m = _metrics(res)
                for k, v in m.items():
                    per_run[k].append(v)
                if multi:
                    per_flow.append(_flow_metrics(res))
                if backend == "emu":
                    st = _stall_metrics(res)
                    for k, v in st.items():
                        per_stall[k].append(v)
                    stall_lines.append(_stall_run_line(seed, m["retransmits"], st))
            if backend == "emu":
                # The kernel runs' emulator stalls and the drops in them: each the mean over the runs.
                for k, vals in per_stall.items():
                    row[f"emu_{k}"] = _mean(vals)
            for fi, runs in enumerate(zip(*per_flow)):
                if len(point_flows) <= fi:
                    point_flows.append({"point": pi, "label": row["label"], "flow": fi, "cc": runs[0]["cc"]})
                point_flows[fi][f"{backend}_runs"] = n
                for k in FLOW_METRICS:
                    point_flows[fi][f"{backend}_{k}"] = _mean([r[k] for r in runs])
            row[f"{backend}_runs"] = n
            for k, vals in per_run.items():
                finite = [v for v in vals if math.isfinite(v)]
                row[f"{backend}_{k}"] = sum(finite) / len(finite) if finite else math.nan
                row[f"{backend}_{k}_min"] = min(finite) if finite else math.nan
                row[f"{backend}_{k}_max"] = max(finite) if finite else math.nan
        if not sim_only:
            for k in METRICS:
                e, s = row[f"emu_{k}"], row[f"sim_{k}"]
                row[f"err_{k}"] = (s - e) / e if e and math.isfinite(e) and e != 0 else math.nan
        echo(f"[{pi + 1}/{len(points)}] {_point_line(row, algs, seeds, sim_only)}")
        for line in stall_lines:
            echo(line)
        for fr in point_flows:
            echo(_flow_line(fr, sides))
        flow_rows.extend(point_flows)
        rows.append(row)
    table = pd.DataFrame(rows)
    _write_outputs(out, table, flow_rows, sides, sim_only)
    return table, out


def _plan_points(
    scenario: str,
    sets: list[str],
    points: list[dict[str, str]],
    cc_list: list[str | None],
    n_flows: int,
    duration: str | None,
) -> list[tuple[int, dict[str, str], list[str], Scenario]]:
    """Every run's point: (point index, point, its overrides, the scenario they load), one per
    point and algorithm (``None``: the scenario's own). Loading each is what validates it."""
    plan = []
    for pi, point in enumerate(points):
        for cc in cc_list:
            ov = list(sets) + [f"{AXES[k]}={v}" for k, v in point.items()]
            if duration:
                ov.append(f"duration={duration}")
            if cc:
                ov += [f"flows.{i}.cc={cc}" for i in range(n_flows)]
            plan.append((pi, point, ov, load_scenario(scenario, overrides=ov)))
    return plan


def _write_outputs(
    out: Path, table: pd.DataFrame, flow_rows: list[dict[str, Any]], sides: tuple[str, ...], sim_only: bool
) -> None:
    """compare.csv, compare_flows.csv (several flows only), compare.md and compare.png in ``out``."""
    table.to_csv(out / "compare.csv", index=False)
    md = markdown_table(table)
    if flow_rows:
        flows = pd.DataFrame(flow_rows)
        flows.to_csv(out / "compare_flows.csv", index=False)
        md += "\n" + markdown_flows(flows, sides)
    (out / "compare.md").write_text(md)
    (_plot_sim if sim_only else _plot)(table, out / "compare.png")


def _point_line(row: dict[str, Any], algs: str, seeds: int, sim_only: bool) -> str:
    """One point's progress line: the simulator's figures, and the kernel's with the error."""
    sim_part = (
        f"goodput sim {row['sim_goodput_mbps']:8.2f} ({row['sim_goodput_mbps_min']:.2f}-"
        f"{row['sim_goodput_mbps_max']:.2f}, {seeds} seeds)"
    )
    if sim_only:
        return (
            f"{row['label']:<32} {algs:<6} {sim_part} Mbit/s  "
            f"rtt {row['sim_rtt_mean_ms']:7.2f} ms  retx {100 * row['sim_retrans_rate']:.2f} % "
            f"{row['sim_retransmits']:.0f} ({_causes(row, 'sim')})"
        )
    return (
        f"{row['label']:<32} {algs:<6} {sim_part} "
        f"emu {row['emu_goodput_mbps']:8.2f} Mbit/s ({100 * row['err_goodput_mbps']:+6.1f} %)  "
        f"rtt sim {row['sim_rtt_mean_ms']:7.2f} emu {row['emu_rtt_mean_ms']:7.2f} ms  "
        f"retx sim {row['sim_retransmits']:.0f} ({_causes(row, 'sim')}) "
        f"emu {row['emu_retransmits']:.0f} ({_causes(row, 'emu')}) ({_pct(row.get('err_retransmits'))})"
    )


def _pct(err: Any) -> str:
    """A relative error as ``+1.2 %``; ``–`` where there is none (nothing to compare against)."""
    return f"{100 * err:+.1f} %" if isinstance(err, float) and math.isfinite(err) else "–"


def _causes(r: dict[str, Any], side: str) -> str:
    """One side's mean retransmissions by cause, ``fast/rto/tlp`` (``–`` for one not counted)."""
    vals = [r.get(f"{side}_{c}", math.nan) for c in RETRANS_CAUSES]
    return "/".join(f"{v:.0f}" if isinstance(v, float) and math.isfinite(v) else "–" for v in vals)


def _cell(r: dict[str, Any], side: str, k: str, fmt: str, scale: float = 1.0) -> str:
    """``mean`` or, with more than one run, ``mean (min–max)``."""
    mean = format(scale * r[f"{side}_{k}"], fmt)
    if int(r.get(f"{side}_runs", 1)) <= 1:
        return mean
    return f"{mean} ({format(scale * r[f'{side}_{k}_min'], fmt)}–{format(scale * r[f'{side}_{k}_max'], fmt)})"


def _runs_phrase(t: pd.DataFrame, side: str, what: str) -> str:
    ns = sorted({int(n) for n in t[f"{side}_runs"]}) if f"{side}_runs" in t and len(t) else [1]
    n = "/".join(str(x) for x in ns)
    return f"{n} {what}{'' if ns == [1] else 's'}"


def markdown_table(t: pd.DataFrame) -> str:
    """compare.md: both sides and the error per point and algorithm, or the simulator's figures alone
    (a table without kernel runs, from ``--sim-only``)."""
    if "emu_runs" not in t:
        return _markdown_sim(t)
    head = (
        "| point | cc | goodput sim | goodput emu | error | RTT sim | RTT emu | error | retx sim | retx emu "
        "| retx segs sim | retx segs emu | error | fast/rto/tlp sim | fast/rto/tlp emu |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    for r in t.to_dict("records"):
        lines.append(
            f"| {r['label']} | {r['cc']} | {_cell(r, 'sim', 'goodput_mbps', '.2f')} | {_cell(r, 'emu', 'goodput_mbps', '.2f')} | "
            f"{100 * r['err_goodput_mbps']:+.1f} % | {_cell(r, 'sim', 'rtt_mean_ms', '.1f')} | {_cell(r, 'emu', 'rtt_mean_ms', '.1f')} | "
            f"{100 * r['err_rtt_mean_ms']:+.1f} % | {_cell(r, 'sim', 'retrans_rate', '.2f', 100)} % | "
            f"{_cell(r, 'emu', 'retrans_rate', '.2f', 100)} % | {_cell(r, 'sim', 'retransmits', '.0f')} | "
            f"{_cell(r, 'emu', 'retransmits', '.0f')} | {_pct(r.get('err_retransmits'))} | "
            f"{_causes(r, 'sim')} | {_causes(r, 'emu')} |"
        )
    return _markdown_intro(t) + head + "\n".join(lines) + "\n" + _markdown_stalls(t)


def _markdown_stalls(t: pd.DataFrame) -> str:
    """The lines under compare.md's table: per point, the kernel runs' emulator stalls and the
    bottleneck's overflow drops in them, beside the retransmission gap (none without records)."""
    if "emu_stall_drops" not in t:
        return ""
    lines = []
    for r in t.to_dict("records"):
        if not math.isfinite(r.get("emu_stall_count", math.nan)):
            continue
        gap = r["emu_retransmits"] - r["sim_retransmits"]
        lines.append(
            f"- {r['label']} {r['cc']}: {r['emu_stall_count']:.1f} stalls (longest {r['emu_stall_max_ms']:.1f} ms"
            f"{_late_wakes_md(r)}); "
            f"{r['emu_stall_drops']:.0f} of {r['emu_overflow_drops']:.0f} overflow drops in stalled intervals "
            f"({_pct_plain(r['emu_stall_drop_share'])}); retx emu − sim {gap:+.0f}"
        )
    if not lines:
        return ""
    return (
        "\nEmulator stalls in the kernel runs (a statistics interval in which a packet left the emulator "
        "1 ms or more late; means over the runs): the bottleneck's overflow drops in a stalled interval "
        "or the one after it (the sender's burst after the stall), beside the gap in retransmitted "
        'segments. docs/emu.md, "Stalls".\n\n' + "\n".join(lines) + "\n"
    )


def _late_wakes_md(r: dict[str, Any]) -> str:
    """How a point's stalls split (means over the runs, :func:`late_wake_split`), for
    compare.md; empty for runs that did not record it."""
    split = late_wake_split({k: r.get(f"emu_{k}", math.nan) for k in STALL_METRICS}, digits=1)
    return f"; {split}" if split else ""


def _markdown_intro(t: pd.DataFrame) -> str:
    """What compare.md's table shows."""
    return (
        f"Goodput in Mbit/s, RTT in ms (mean), retransmissions in % of the data segments sent and as "
        f"segments (all flows), then the segments' means by cause: fast (RACK) / after an RTO / loss "
        f"probe. sim = mean of {_runs_phrase(t, 'sim', 'seed')}, emu = mean of "
        f"{_runs_phrase(t, 'emu', 'kernel run')}; with more than one run the min–max range follows in "
        "brackets. error = (sim mean - emu mean) / emu mean.\n\n"
    )


def markdown_flows(t: pd.DataFrame, sides: tuple[str, ...]) -> str:
    """compare.md's per-flow table (multi-flow scenarios): each side's mean over its runs."""
    cols = [
        (k, title)
        for k, title in (
            ("goodput_mbps", "goodput"),
            ("share", "share"),
            ("retransmits", "retx"),
            ("retrans_rate", "retx rate"),
        )
    ]
    titles = [f"{title} {side}" for _, title in cols for side in sides] + [f"fast/rto/tlp {side}" for side in sides]
    head = "| point | flow | cc | " + " | ".join(titles) + " |\n"
    head += "|---|---|---|" + "---:|" * len(titles) + "\n"
    fmt = {
        "goodput_mbps": ("{:.2f}", 1.0, ""),
        "share": ("{:.1f}", 100.0, " %"),
        "retransmits": ("{:.0f}", 1.0, ""),
        "retrans_rate": ("{:.2f}", 100.0, " %"),
    }
    lines = []
    for r in t.to_dict("records"):
        cells = [fmt[k][0].format(fmt[k][1] * r[f"{side}_{k}"]) + fmt[k][2] for k, _ in cols for side in sides]
        cells += [_causes(r, side) for side in sides]
        lines.append(f"| {r['label']} | {r['flow']} | {r['cc']} | " + " | ".join(cells) + " |")
    intro = (
        "Per flow: goodput in Mbit/s, share of the flows' total goodput, retransmitted segments (count and "
        "rate, then the count by cause: fast (RACK) / after an RTO / loss probe); each side the mean over "
        "its runs.\n\n"
    )
    return intro + head + "\n".join(lines) + "\n"


def _markdown_sim(t: pd.DataFrame) -> str:
    head = (
        "| point | cc | goodput | RTT mean | retransmissions | retx segs | fast/rto/tlp |\n"
        "|---|---|---:|---:|---:|---:|---:|\n"
    )
    lines = [
        f"| {r['label']} | {r['cc']} | {_cell(r, 'sim', 'goodput_mbps', '.2f')} | {_cell(r, 'sim', 'rtt_mean_ms', '.1f')} | "
        f"{_cell(r, 'sim', 'retrans_rate', '.2f', 100)} % | {_cell(r, 'sim', 'retransmits', '.0f')} | {_causes(r, 'sim')} |"
        for r in t.to_dict("records")
    ]
    intro = (
        f"Simulator only. Goodput in Mbit/s, RTT in ms (mean), retransmissions in % and as segments "
        f"(with their means by cause: fast / after an RTO / loss probe); each the mean of "
        f"{_runs_phrase(t, 'sim', 'seed')}, with the min–max range in brackets when more than one.\n\n"
    )
    return intro + head + "\n".join(lines) + "\n"


def _save_with_point_key(fig: Any, t: pd.DataFrame, path: Path) -> None:
    """Save a per-point figure with the key of its grid points ("0: rate=50Mbps …") below it."""
    labels = dict(zip(t["point"], t["label"]))
    fig.text(0.01, 0.01, "  ".join(f"{p}: {label}" for p, label in sorted(labels.items())), fontsize=7)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)


def _plot_sim(t: pd.DataFrame, path: Path) -> None:
    """The simulator's figures per point, one line per algorithm, the seeds' min–max as error bars."""
    fig, axes = subplots(1, 3, figsize=(15, 4.5))
    for ax, (k, title, scale) in zip(
        axes,
        (
            ("goodput_mbps", "goodput [Mbit/s]", 1.0),
            ("rtt_mean_ms", "mean RTT [ms]", 1.0),
            ("retrans_rate", "retransmissions [%]", 100.0),
        ),
    ):
        for cc, g in t.groupby("cc"):
            mean = scale * g[f"sim_{k}"]
            err = [(mean - scale * g[f"sim_{k}_min"]).clip(lower=0), (scale * g[f"sim_{k}_max"] - mean).clip(lower=0)]
            ax.errorbar(g["point"], mean, yerr=err, fmt="o-", capsize=3, label=str(cc))
        ax.set_title(title)
        ax.set_xlabel("grid point")
        ax.set_xticks(sorted(t["point"].unique()))
        ax.legend()
    _save_with_point_key(fig, t, path)


def _plot(t: pd.DataFrame, path: Path) -> None:
    fig, axes = subplots(1, 3, figsize=(15, 4.5))
    for ax, (k, title) in zip(
        axes, (("goodput_mbps", "goodput"), ("rtt_mean_ms", "mean RTT"), ("retrans_rate", "retransmission rate"))
    ):
        for cc, g in t.groupby("cc"):
            # error bars: where the sim's min and max seeds fall against the emu mean
            e = g[f"emu_{k}"].where(g[f"emu_{k}"] != 0)
            lo = 100 * ((g[f"sim_{k}"] - g.get(f"sim_{k}_min", g[f"sim_{k}"])) / e).fillna(0).clip(lower=0)
            hi = 100 * ((g.get(f"sim_{k}_max", g[f"sim_{k}"]) - g[f"sim_{k}"]) / e).fillna(0).clip(lower=0)
            ax.errorbar(g["point"], 100 * g[f"err_{k}"], yerr=[lo, hi], fmt="o-", capsize=3, label=str(cc))
        ax.axhline(0, color="k", lw=0.8)
        ax.set_title(f"simulator error: {title}")
        ax.set_xlabel("grid point")
        ax.set_ylabel("(sim - emu) / emu  [%]")
        ax.set_xticks(sorted(t["point"].unique()))
        ax.legend()
    _save_with_point_key(fig, t, path)
