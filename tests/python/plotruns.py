"""Small real runs for the across-runs figures and the report tests (each well under a second of
wall time): run directories written by `Result.save`, and a sweep directory laid out as `bbrlab
sweep` writes one (sweep.json, points.parquet + points.csv, runs/<point>-s<seed>/)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import bbrlab
import pandas as pd
from bbrlab.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

#: A 4-worker star with a query app (query latencies, flow completion times) and one sized flow.
QUERY_SCENARIO = {
    "name": "query",
    "duration": "0.3s",
    "sample_interval": "10ms",
    "topology": {"kind": "star", "workers": 4, "rate": "1Gbps"},
    "flows": [{"cc": "cubic", "bytes": "200KB"}],
    "apps": [
        {"kind": "query", "workers": 4, "size": "64KiB", "repetitions": 10, "gap": "5ms", "flow": {"cc": "dctcp"}}
    ],
}


def save_run(
    scenario: object,
    out: Path,
    overrides: list[str] | None = None,
    *,
    record_overrides: bool = True,
    plots: bool = False,
) -> Path:
    """Run and save; with ``record_overrides`` the summary carries run.overrides as `bbrlab run`
    writes them. ``plots``: the run's own PNGs (the report tests need them; drawing them is most
    of a tiny run's time)."""
    res = bbrlab.run(scenario)
    if record_overrides and overrides is not None:
        res.summary["run"]["overrides"] = list(overrides)
    return res.save(out, plots=plots)


def quick(out: Path, overrides: list[str], **kw: object) -> Path:
    return save_run(load_scenario(EXAMPLES / "quick.toml", overrides=overrides), out, overrides, **kw)


def bbr_vs_cubic(out: Path, overrides: list[str]) -> Path:
    """BBRv1 and CUBIC (CUBIC starting at 0.3 s) sharing 100 Mbit/s × 40 ms."""
    ov = ["duration=1s", "flows.1.start=0.3s", *overrides]
    return save_run(load_scenario(EXAMPLES / "bbr-vs-cubic.toml", overrides=ov), out, ov)


def incast(out: Path) -> Path:
    """The lossless 20-worker incast for 0.1 s: PAUSE frames."""
    ov = ["duration=0.1s", "sample_interval=10ms"]
    return save_run(load_scenario(EXAMPLES / "dc-incast.toml", overrides=ov), out, ov)


def query(out: Path) -> Path:
    return save_run(parse_scenario(QUERY_SCENARIO), out, [])


def sweep(out: Path, seeds: tuple[int, ...] = (1, 2)) -> Path:
    """2 buffer sizes × 2 seeds of bbr-vs-cubic, 0.6 s each, with 0.5 % loss so seeds differ."""
    axes = {"topology.bottleneck.buffer": ["0.5bdp", "2bdp"]}
    out.mkdir(parents=True)
    rows = []
    for i, values in enumerate(itertools.product(*axes.values())):
        for seed in seeds:
            ov = [f"{a}={v}" for a, v in zip(axes, values)] + [
                f"seed={seed}",
                "duration=0.6s",
                "flows.1.start=0.2s",
                "topology.bottleneck.loss=0.5%",
            ]
            run_dir = f"runs/p{i}-s{seed}"
            d = save_run(load_scenario(EXAMPLES / "bbr-vs-cubic.toml", overrides=ov), out / run_dir, ov)
            agg = json.loads((d / "summary.json").read_text())["aggregate"]
            rows.append(
                {
                    "point": f"p{i}",
                    **dict(zip(axes, values)),
                    "seed": seed,
                    "run_dir": run_dir,
                    "goodput_bps": agg["goodput_bps"],
                    "jain": agg["jain"],
                }
            )
    points = pd.DataFrame(rows)
    points.to_parquet(out / "points.parquet", index=False)
    points.to_csv(out / "points.csv", index=False)
    (out / "sweep.json").write_text(
        json.dumps(
            {
                "scenario": str(EXAMPLES / "bbr-vs-cubic.toml"),
                "axes": axes,
                "seeds": list(seeds),
                "engine": "sim",
                "bbrlab_version": bbrlab.__version__,
            }
        )
    )
    return out
