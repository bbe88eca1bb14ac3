"""nsperf (Google's BBR test scripts): its five scenarios on the simulator, its figures redrawn.

nsperf (google/bbr, gtests/net/tcp/bbr/nsperf) runs netperf flows through a chain of network
namespaces: netem adds RTT/2 each way, random loss on the data direction and the rate (or HTB at
the rate with a qdisc under it), the buffer is the one-way BDP plus `buf` packets; `ss` samples
every flow every 0.1 s. Its scenarios, with the parameters run_tests.sh gives them:

| scenario | flows | link | buffer | swept | each flow runs | reps | plotted |
|---|---|---|---|---|---|---|---|
| coexist | CUBIC, then a BBR 2 s later | 50 Mbit/s, 30 ms | 0.1–16 BDP | buffer | 180 s | 1 | the BBR flow's throughput |
| random_loss | 1 | 1 Gbit/s, 100 ms | 1 BDP | loss 0.00001–20 % | 60 s | 10 | throughput |
| shallow | 1–100 of one algorithm, 0.139 s apart | 1 Gbit/s, 100 ms | 0.02 BDP (165 pkts) | flows | 300 s | 1 | retransmit % |
| bufferbloat | 2, 2 s apart | 50 Mbit/s, 30 ms | 1–100 BDP | buffer | 120 s | 1 | p50 srtt |
| ecn_bulk | 1–100, 5 ms apart, ECN | 1 Gbit/s, 1 ms | CoDel ce_threshold 242 µs, target 100 ms, 1000 pkts | flows | 10 s | 10 | p50 srtt, retransmit % |

Here (bbrlab's dumbbell): the same rates, RTTs, loss (`loss`, data direction only), buffers in
nsperf's 1514-byte packets (`int(bw·RTT/(1514·8)·bdp)`), flow starts and durations (each flow
stops `dur` after it started; the run ends with the last), ss's 0.1 s sampling, and the metrics of
nsperf.py (`experiments.py`). Differences: nsperf's buffer is netem's limit, the one-way BDP plus
the buffer (it also holds the packets in flight on the delayed link); bbrlab's is the bottleneck
queue alone, the propagation delay being a separate wire. The sender's `fq` qdisc is not modelled
as a qdisc: TCP paces itself (Linux's internal pacing, the same departure times). Every BBR
version the simulator has is run where nsperf runs `bbr1` and `bbr` (v3); `bbr3_linux` has v3's
Linux constants and its DCTCP-style ECN response (nsperf's `ecn_low` route feature), which
ecn_bulk uses. nsperf publishes no numbers: this page states what the runs give, and the kernel
plan below is the comparison with real Linux.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ..claims import claims_table
from ..context import StudyContext
from ..report import md_table
from ..source_figures import beside
from .experiments import run_all
from .figures import FIGURES, SOURCE_FIGURES, draw
from .plan import KERNEL_PLAN, PLANS, SOURCE, Config, Scenario
from .verdicts import claims as statement_claims

__all__ = ["PLANS", "KERNEL_PLAN", "SOURCE", "SOURCE_FIGURES", "run"]


_STATEMENTS = (
    "nsperf publishes no numbers; run_tests.sh states above each scenario what it is meant to show for "
    "BBRv2 (the v3 copy runs the same for v3). Each statement is checked with a rule fixed in advance "
    "(`nsperf/verdicts.py`) for `bbr2` and `bbr3_linux`, where the plan runs them.\n\n"
)


def _fmt(v: float, col: str) -> str:
    if not math.isfinite(v):
        return "-"
    if col == "throughput_bps":
        return f"{v / 1e6:.1f}"
    return f"{v:.2f}"


def _table(points: pd.DataFrame, sc: Scenario, col: str, kernel: pd.DataFrame | None = None) -> str:
    rows = []
    for cc in sc.ccs:
        for backend, frame in (("sim", points), ("kernel", kernel)):
            if frame is None:
                continue
            d = frame[(frame["scenario"] == sc.name) & (frame["cc"] == cc)].set_index("x")[col]
            label = cc if kernel is None else f"{cc} ({backend})"
            rows.append([label] + [_fmt(float(d.get(float(x), math.nan)), col) for x in sc.sweep])
    return md_table(["algorithm", *[f"{x:g}" for x in sc.sweep]], rows)


def _backend_gap(points: pd.DataFrame, kernel: pd.DataFrame, sc: Scenario, col: str) -> str:
    """The point where simulator and kernel differ most, in words."""
    keys = ["scenario", "cc", "x"]
    both = points[points["scenario"] == sc.name].merge(kernel, on=keys, suffixes=("_sim", "_kernel"))
    both = both.dropna(subset=[f"{col}_sim", f"{col}_kernel"])
    if both.empty:
        return ""
    gap = (both[f"{col}_sim"] - both[f"{col}_kernel"]).abs()
    r = both.loc[gap.idxmax()]
    scale, unit = (1e-6, " Mbit/s") if col == "throughput_bps" else (1.0, " %" if col == "retrans_pct" else " ms")
    return (
        f"Largest difference between the backends: {r['cc']} at {r['x']:g}, simulator "
        f"{r[f'{col}_sim'] * scale:.3g}{unit} against kernel {r[f'{col}_kernel'] * scale:.3g}{unit}."
    )


def _plan_text(cfg: Config) -> str:
    rows = [
        [
            sc.name,
            f"{sc.rate_bps / 1e6:g} Mbit/s, {sc.rtt_s * 1e3:g} ms",
            ", ".join(f"{x:g}" for x in sc.sweep),
            f"{sc.duration_s:g} s",
            sc.reps,
            ", ".join(sc.ccs),
        ]
        for sc in cfg.scenarios()
    ]
    return md_table(["scenario", "link", "points", "each flow", "reps", "algorithms"], rows)


def _largest(points: pd.DataFrame, sc: Scenario, col: str) -> str:
    """The largest spread between algorithms at one point, in words."""
    d = points[points["scenario"] == sc.name].dropna(subset=[col])
    if d.empty or d["cc"].nunique() < 2:
        return ""
    spread = d.groupby("x")[col].agg(["min", "max", "idxmin", "idxmax"])
    spread["gap"] = spread["max"] - spread["min"]
    x = spread["gap"].idxmax()
    lo, hi = d.loc[spread.loc[x, "idxmin"]], d.loc[spread.loc[x, "idxmax"]]
    scale, unit = (1e-6, " Mbit/s") if col == "throughput_bps" else (1.0, " %" if col == "retrans_pct" else " ms")
    return (
        f"Largest spread at {x:g}: {hi['cc']} {hi[col] * scale:.3g}{unit} against {lo['cc']} "
        f"{lo[col] * scale:.3g}{unit}."
    )


def run(ctx: StudyContext) -> Path:
    if ctx.backend != "sim":
        return _run_kernel(ctx)
    cfg = PLANS[ctx.size]
    out = ctx.out_dir
    runs, points = run_all(ctx, cfg)
    runs.to_csv(out / "runs.csv", index=False)
    points.to_csv(out / "points.csv", index=False)
    figs = draw(points, cfg, out)
    by_name = {sc.name: sc for sc in cfg.scenarios()}
    sections = [("Source and setup", (__doc__ or "").split("\n", 2)[2])]
    plan = _plan_text(cfg)
    if cfg.reduced:
        plan += f"\n\nThis plan differs from nsperf's: {cfg.reduced}."
    sections.append(("This run's plan", plan))
    found = statement_claims(points, cfg)
    sections.append(("nsperf's statements beside ours", _STATEMENTS + claims_table(found, source_header="nsperf")))
    for (name, col, ylabel, _, _, xlabel, _), fname in zip(FIGURES, figs, strict=True):
        sc = by_name[name]
        body = f"{ylabel} against {xlabel} (columns), median over {sc.reps} repetition(s).\n\n"
        body += _table(points, sc, col) + "\n\n" + _largest(points, sc, col) + "\n\n"
        body += beside(
            SOURCE_FIGURES[fname], f"![bbrlab's {name} figure: {ylabel} against {xlabel}, per algorithm]({fname})"
        )
        sections.append((f"{name}: {ylabel}", body))
    sections.append(
        (
            "The kernel plan (`--backend emu`)",
            "`bbrlab reproduce nsperf --backend emu` runs a reduced plan on real Linux through bbrlab's link "
            "emulator and the simulator on the same points, sized to about 30 minutes on a 2-core machine: "
            + KERNEL_PLAN.reduced
            + ".\n\n"
            + _plan_text(KERNEL_PLAN),
        )
    )
    sections.append(("Every point", "All three metrics of every point: `points.csv`; every run: `runs.csv`."))
    return ctx.write_report(
        "nsperf: Google's BBR test scenarios on the simulator",
        sections,
        source=SOURCE,
        packets=int(runs["packets"].sum()),
        claims=found,
    )


def _run_kernel(ctx: StudyContext) -> Path:
    """The kernel plan on the kernel (ctx's backend) and on the simulator, on one page."""
    cfg = KERNEL_PLAN
    out = ctx.out_dir
    kernel_runs, kernel = run_all(ctx, cfg)
    sim_runs, points = run_all(replace(ctx, backend="sim"), cfg)
    for frame, fname in ((sim_runs, "runs.csv"), (points, "points.csv")):
        frame.to_csv(out / fname, index=False)
    kernel_runs.to_csv(out / "runs_kernel.csv", index=False)
    kernel.to_csv(out / "points_kernel.csv", index=False)
    figs = draw(points, cfg, out, kernel=kernel)
    by_name = {sc.name: sc for sc in cfg.scenarios()}
    sections = [
        ("Source and setup", (__doc__ or "").split("\n", 2)[2]),
        (
            "This run's plan: the kernel plan, on both backends",
            _plan_text(cfg) + f"\n\nThis plan differs from nsperf's: {cfg.reduced}. The kernel runs are real "
            "Linux TCP through bbrlab's link emulator (docs/emu.md), one at a time in real time; the simulator "
            "runs the same scenarios.",
        ),
    ]
    found = [replace(c, claim=f"{c.claim} (simulator)") for c in statement_claims(points, cfg)]
    found += [replace(c, claim=f"{c.claim} (kernel)") for c in statement_claims(kernel, cfg)]
    sections.append(("nsperf's statements beside ours", _STATEMENTS + claims_table(found, source_header="nsperf")))
    for (name, col, ylabel, _, _, xlabel, _), fname in zip(FIGURES, figs, strict=True):
        sc = by_name[name]
        body = f"{ylabel} against {xlabel} (columns); solid: simulator, dashed: kernel.\n\n"
        body += _table(points, sc, col, kernel) + "\n\n" + _backend_gap(points, kernel, sc, col)
        body += "\n\n" + beside(
            SOURCE_FIGURES[fname],
            f"![bbrlab's {name} figure: {ylabel} against {xlabel}, per algorithm; solid simulator, dashed "
            f"kernel]({fname})",
            "the same plot from the simulator (solid) and the kernel through the link emulator (dashed)",
        )
        sections.append((f"{name}: {ylabel}", body))
    sections.append(
        ("Every point", "Simulator: `points.csv`, `runs.csv`; kernel: `points_kernel.csv`, `runs_kernel.csv`.")
    )
    return ctx.write_report(
        "nsperf: Google's BBR test scenarios, simulator and kernel",
        sections,
        source=SOURCE,
        packets=int(sim_runs["packets"].sum() + kernel_runs["packets"].sum()),
        claims=found,
    )
