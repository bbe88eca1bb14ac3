"""`bbrlab compare`: the same scenario on the simulator and on the kernel, side by side.

For every grid point and algorithm it runs ``--backend sim`` and ``--backend emu`` and tabulates
goodput, mean RTT and retransmission rate of both, with the simulator's relative error
``(sim - emu) / emu``. Outputs in the directory: ``compare.csv``, ``compare.md`` (the table),
``compare.png`` (errors per point) and every run directory under ``runs/``.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ..errors import UserError
from ..scenario import load_scenario

__all__ = ["run_compare", "FIDELITY_GRID", "AXES"]

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
            raise UserError(f'--grid {k}: unknown axis; use one of {", ".join(AXES)}')
        vals = [x.strip() for x in v.split(",") if x.strip()]
        if not vals:
            raise UserError(f"--grid {k}: no values")
        axes.append((k, vals))
    return [dict(zip([a for a, _ in axes], combo)) for combo in itertools.product(*[v for _, v in axes])]


def _label(point: dict[str, str]) -> str:
    return " ".join(f"{point[k]}" for k in AXES if k in point) or "scenario"


def _metrics(result: Any) -> dict[str, float]:
    agg = result.summary["aggregate"]
    fl = result.flows
    return {
        "goodput_mbps": agg["goodput_bps"] / 1e6 if agg.get("goodput_bps") is not None else math.nan,
        "rtt_mean_ms": float(fl["rtt_mean_ms"].mean()) if len(fl) else math.nan,
        "retrans_rate": float(agg.get("retrans_rate") or 0.0),
    }


def run_compare(scenario: str, *, sets: list[str], grid: list[str], ccs: list[str], duration: str | None,
                out: Path | None, echo: Callable[[str], Any] = print) -> tuple[pd.DataFrame, Path]:
    from ..runner import run as run_scenario

    base = load_scenario(scenario, overrides=sets)
    points = _grid_points(grid)
    n_flows = len(base.flows)
    cc_list = list(ccs) or [None]
    if out is None:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = Path("runs") / f"compare-{base.name}-{stamp}"
    if out.exists():
        raise UserError(f"--out {out}: already exists; choose another directory")
    (out / "runs").mkdir(parents=True)
    rows = []
    for pi, point in enumerate(points):
        for cc in cc_list:
            ov = list(sets) + [f"{AXES[k]}={v}" for k, v in point.items()]
            if duration:
                ov.append(f"duration={duration}")
            if cc:
                ov += [f"flows.{i}.cc={cc}" for i in range(n_flows)]
            scn = load_scenario(scenario, overrides=ov)
            algs = ",".join(sorted({f.cc for f in scn.flows}))
            row: dict[str, Any] = {"point": pi, "label": _label(point), "cc": algs, **point}
            for backend in ("sim", "emu"):
                res = run_scenario(scn, backend=backend)
                res.save(out / "runs" / f"p{pi}-{algs.replace(',', '+')}-{backend}", plots=False)
                for k, v in _metrics(res).items():
                    row[f"{backend}_{k}"] = v
            for k in ("goodput_mbps", "rtt_mean_ms", "retrans_rate"):
                e, s = row[f"emu_{k}"], row[f"sim_{k}"]
                row[f"err_{k}"] = (s - e) / e if e and math.isfinite(e) and e != 0 else math.nan
            rows.append(row)
            echo(
                f"[{pi + 1}/{len(points)}] {row['label']:<32} {algs:<6} goodput sim {row['sim_goodput_mbps']:8.2f} "
                f"emu {row['emu_goodput_mbps']:8.2f} Mbit/s ({100 * row['err_goodput_mbps']:+6.1f} %)  "
                f"rtt sim {row['sim_rtt_mean_ms']:7.2f} emu {row['emu_rtt_mean_ms']:7.2f} ms  "
                f"retx sim {100 * row['sim_retrans_rate']:.2f} emu {100 * row['emu_retrans_rate']:.2f} %"
            )
    table = pd.DataFrame(rows)
    table.to_csv(out / "compare.csv", index=False)
    (out / "compare.md").write_text(markdown_table(table))
    _plot(table, out / "compare.png")
    return table, out


def markdown_table(t: pd.DataFrame) -> str:
    head = ("| point | cc | goodput sim | goodput emu | error | RTT sim | RTT emu | error | retx sim | retx emu |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    lines = []
    for r in t.to_dict("records"):
        lines.append(
            f"| {r['label']} | {r['cc']} | {r['sim_goodput_mbps']:.1f} | {r['emu_goodput_mbps']:.1f} | "
            f"{100 * r['err_goodput_mbps']:+.1f} % | {r['sim_rtt_mean_ms']:.1f} | {r['emu_rtt_mean_ms']:.1f} | "
            f"{100 * r['err_rtt_mean_ms']:+.1f} % | {100 * r['sim_retrans_rate']:.2f} % | {100 * r['emu_retrans_rate']:.2f} % |"
        )
    return "Goodput in Mbit/s, RTT in ms (mean), error = (sim - emu) / emu.\n\n" + head + "\n".join(lines) + "\n"


def _plot(t: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, (k, title) in zip(axes, (("goodput_mbps", "goodput"), ("rtt_mean_ms", "mean RTT"), ("retrans_rate", "retransmission rate"))):
        for cc, g in t.groupby("cc"):
            ax.plot(g["point"], 100 * g[f"err_{k}"], "o-", label=str(cc))
        ax.axhline(0, color="k", lw=0.8)
        ax.set_title(f"simulator error: {title}")
        ax.set_xlabel("grid point")
        ax.set_ylabel("(sim - emu) / emu  [%]")
        ax.set_xticks(sorted(t["point"].unique()))
        ax.legend()
    labels = dict(zip(t["point"], t["label"]))
    fig.text(0.01, 0.01, "  ".join(f"{p}: {l}" for p, l in sorted(labels.items())), fontsize=7)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
