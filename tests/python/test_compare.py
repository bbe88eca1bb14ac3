"""`bbrlab compare` bookkeeping: several simulator seeds (and kernel runs) per point, means and
ranges in compare.csv / compare.md. The kernel side is replaced by the simulator here (``run_fn``),
so this runs without root; the real emu path is exercised by test_emu.py."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from bbrlab.cli import cli
from bbrlab.emu.compare import markdown_table, run_compare

QUICK = Path(__file__).resolve().parents[2] / "examples" / "quick.toml"


def _fake_backends(calls: list[tuple[str, int]]):  # type: ignore[no-untyped-def]
    from bbrlab.runner import run

    def run_fn(scn, backend="sim"):  # type: ignore[no-untyped-def]
        calls.append((backend, scn.seed))
        return run(scn, backend="sim")  # stand-in for the kernel

    return run_fn


def test_compare_runs_several_seeds_and_reports_mean_and_range(tmp_path: Path) -> None:
    calls: list[tuple[str, int]] = []
    table, out = run_compare(str(QUICK), sets=["topology.bottleneck.loss=1.5%"], grid=[], ccs=["cubic"],
                             duration="3s", out=tmp_path / "cmp", echo=lambda s: None, seeds=3, emu_runs=2,
                             run_fn=_fake_backends(calls))
    assert sorted(calls) == [("emu", 1), ("emu", 2), ("sim", 1), ("sim", 2), ("sim", 3)]
    assert len(table) == 1
    row = table.iloc[0]
    assert row["sim_runs"] == 3 and row["emu_runs"] == 2

    # the mean is the mean of the saved runs, with their min and max
    goodputs = []
    for seed in (1, 2, 3):
        d = out / "runs" / f"p0-cubic-sim-s{seed}"
        summary = json.loads((d / "summary.json").read_text())
        assert summary["run"]["seed"] == seed
        goodputs.append(summary["aggregate"]["goodput_bps"] / 1e6)
    assert len(set(goodputs)) > 1, "different seeds must give different runs at 1.5 % loss"
    assert row["sim_goodput_mbps"] == pytest.approx(sum(goodputs) / 3)
    assert row["sim_goodput_mbps_min"] == pytest.approx(min(goodputs))
    assert row["sim_goodput_mbps_max"] == pytest.approx(max(goodputs))
    # error against the means
    assert row["err_goodput_mbps"] == pytest.approx((row["sim_goodput_mbps"] - row["emu_goodput_mbps"]) / row["emu_goodput_mbps"])

    csv = pd.read_csv(out / "compare.csv")
    assert {"sim_goodput_mbps_min", "sim_goodput_mbps_max", "sim_runs", "emu_runs"} <= set(csv.columns)
    md = (out / "compare.md").read_text()
    assert "3 seeds" in md and "2 kernel runs" in md
    assert f"{row['sim_goodput_mbps']:.2f} ({min(goodputs):.2f}–{max(goodputs):.2f})" in md
    assert (out / "compare.png").stat().st_size > 0


def test_markdown_single_run_has_no_range() -> None:
    t = pd.DataFrame([{"label": "x", "cc": "cubic", "sim_runs": 1, "emu_runs": 1,
                       **{f"{side}_{k}{suf}": 2.0 for side in ("sim", "emu")
                          for k in ("goodput_mbps", "rtt_mean_ms", "retrans_rate") for suf in ("", "_min", "_max")},
                       "err_goodput_mbps": 0.0, "err_rtt_mean_ms": 0.0}])
    md = markdown_table(t)
    assert "1 seed," in md and "1 kernel run;" in md
    assert "| 2.00 | 2.00 |" in md and "(" not in md.split("\n")[-2]


def test_cli_compare_has_seed_options() -> None:
    r = CliRunner().invoke(cli, ["compare", "--help"])
    assert r.exit_code == 0 and "--seeds" in r.output and "--emu-runs" in r.output
    r = CliRunner().invoke(cli, ["compare", str(QUICK), "--seeds", "0"])
    assert r.exit_code == 2 and "--seeds" in r.output
