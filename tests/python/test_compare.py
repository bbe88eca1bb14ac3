"""`bbrlab compare` bookkeeping: several simulator seeds (and kernel runs) per point, means and
ranges in compare.csv / compare.md. The kernel side is replaced by the simulator here (``run_fn``),
so this runs without root; the real emu path is exercised by test_emu.py."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from bbrlab.cli import cli
from bbrlab.emu.compare import markdown_table, run_compare
from click.testing import CliRunner

QUICK = Path(__file__).resolve().parents[2] / "examples" / "quick.toml"


def _fake_backends(calls: list[tuple[str, int]]):
    from bbrlab.engine.runner import run

    def run_fn(scn, backend="sim"):
        calls.append((backend, scn.seed))
        return run(scn, backend="sim")  # stand-in for the kernel

    return run_fn


def _compare(
    tmp_path: Path,
    calls: list[tuple[str, int]],
    *,
    scenario: Path = QUICK,
    sets: tuple[str, ...] = (),
    grid: tuple[str, ...] = (),
    ccs: tuple[str, ...] = ("cubic",),
    **kw,
):
    """run_compare of ``scenario`` into tmp_path/cmp with the fake backends (each run recorded in
    ``calls``), printing nothing unless ``echo`` is given."""
    kw.setdefault("echo", lambda s: None)
    return run_compare(
        str(scenario),
        sets=list(sets),
        grid=list(grid),
        ccs=list(ccs),
        out=tmp_path / "cmp",
        run_fn=_fake_backends(calls),
        **kw,
    )


def test_compare_runs_several_seeds_and_reports_mean_and_range(tmp_path: Path) -> None:
    calls: list[tuple[str, int]] = []
    table, out = _compare(tmp_path, calls, sets=("topology.bottleneck.loss=1.5%",), duration="3s", seeds=3, emu_runs=2)
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
    assert row["err_goodput_mbps"] == pytest.approx(
        (row["sim_goodput_mbps"] - row["emu_goodput_mbps"]) / row["emu_goodput_mbps"]
    )

    # retransmitted segments: the mean of the runs' totals, split by cause without remainder
    retx = [json.loads((out / "runs" / f"p0-cubic-sim-s{s}" / "summary.json").read_text()) for s in (1, 2, 3)]
    totals = [r["aggregate"]["retransmits"] for r in retx]
    assert min(totals) > 0, "1.5 % loss must retransmit"
    assert row["sim_retransmits"] == pytest.approx(sum(totals) / 3)
    by_cause = [sum(f[c] for f in r["flows"]) for r in retx for c in ("retrans_fast", "retrans_rto", "retrans_tlp")]
    assert sum(by_cause) == sum(totals)
    assert row["sim_retrans_fast"] + row["sim_retrans_rto"] + row["sim_retrans_tlp"] == pytest.approx(
        row["sim_retransmits"]
    )
    assert row["err_retransmits"] == pytest.approx(
        (row["sim_retransmits"] - row["emu_retransmits"]) / row["emu_retransmits"]
    )

    csv = pd.read_csv(out / "compare.csv")
    assert {"sim_goodput_mbps_min", "sim_goodput_mbps_max", "sim_runs", "emu_runs"} <= set(csv.columns)
    md = (out / "compare.md").read_text()
    assert "3 seeds" in md and "2 kernel runs" in md
    assert f"{row['sim_goodput_mbps']:.2f} ({min(goodputs):.2f}–{max(goodputs):.2f})" in md
    assert (out / "compare.png").stat().st_size > 0


def test_markdown_single_run_has_no_range() -> None:
    t = pd.DataFrame(
        [
            {
                "label": "x",
                "cc": "cubic",
                "sim_runs": 1,
                "emu_runs": 1,
                **{
                    f"{side}_{k}{suf}": 2.0
                    for side in ("sim", "emu")
                    for k in ("goodput_mbps", "rtt_mean_ms", "retrans_rate", "retransmits")
                    for suf in ("", "_min", "_max")
                },
                **{f"{side}_{c}": 1.0 for side in ("sim", "emu") for c in ("retrans_fast", "retrans_rto")},
                "sim_retrans_tlp": 0.0,
                "emu_retrans_tlp": float("nan"),
                "err_goodput_mbps": 0.0,
                "err_rtt_mean_ms": 0.0,
                "err_retransmits": -0.25,
            }
        ]
    )
    md = markdown_table(t)
    assert "1 seed," in md and "1 kernel run;" in md
    assert "| 2.00 | 2.00 |" in md and "(" not in md.split("\n")[-2]
    # the segment counts, their error, and the causes (one the kernel did not count: "–")
    assert "| 2 | 2 | -25.0 % | 1/1/0 | 1/1/– |" in md


def test_cli_compare_has_seed_options() -> None:
    r = CliRunner().invoke(cli, ["compare", "--help"])
    assert r.exit_code == 0 and "--seeds" in r.output and "--emu-runs" in r.output
    r = CliRunner().invoke(cli, ["compare", str(QUICK), "--seeds", "0"])
    assert r.exit_code == 2 and "--seeds" in r.output


def test_sim_only_runs_no_kernel_and_tabulates_the_simulator(tmp_path: Path) -> None:
    calls: list[tuple[str, int]] = []
    table, out = _compare(
        tmp_path,
        calls,
        grid=("loss=0%,2%",),
        ccs=("cubic", "bbr1"),
        duration="1s",
        seeds=2,
        sim_only=True,
        confirm=lambda q: pytest.fail("nothing to confirm without kernel runs"),
    )
    assert sorted(calls) == [("sim", 1)] * 4 + [("sim", 2)] * 4
    assert not any(c.startswith(("emu_", "err_")) for c in table.columns)
    assert len(table) == 4 and set(table["cc"]) == {"cubic", "bbr1"}
    # the simulator's figures per point and algorithm: 2 % loss costs CUBIC most of its goodput
    cubic = table[table["cc"] == "cubic"].set_index("loss")["sim_goodput_mbps"]
    assert cubic["2%"] < 0.6 * cubic["0%"]
    md = (out / "compare.md").read_text()
    assert md.startswith("Simulator only.") and "emu" not in md and "2 seeds" in md
    assert md.count("\n| ") == 5  # header + 4 rows
    assert (out / "compare.png").stat().st_size > 0


def test_declined_confirmation_runs_nothing(tmp_path: Path) -> None:
    from bbrlab.emu.compare import NotConfirmed

    asked: list[str] = []
    calls: list[tuple[str, int]] = []
    with pytest.raises(NotConfirmed):
        _compare(
            tmp_path,
            calls,
            grid=("loss=0%,1%",),
            duration="2s",
            seeds=1,
            emu_runs=3,
            confirm=lambda q: asked.append(q) or False,
        )
    assert calls == [] and not (tmp_path / "cmp").exists()
    assert asked and asked[0].startswith("6 kernel runs (12 s of traffic")  # 2 points × 3 runs × 2 s


def test_cli_asks_before_kernel_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bbrlab.cli.sweep_compare as cli_mod
    import bbrlab.emu.netns as netns
    import bbrlab.engine.runner as runner

    def no_run(*a, **k):
        raise AssertionError("nothing may run before the user agrees")

    monkeypatch.setattr(runner, "run", no_run)
    monkeypatch.setattr(netns, "check_environment", lambda: None)
    args = ["compare", str(QUICK), "--duration", "1s", "--out", str(tmp_path / "c")]
    # no terminal, no --yes: one line saying what to pass
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and "pass --yes" in r.output and "Traceback" not in r.output
    # a terminal: the question, and "no" runs nothing
    monkeypatch.setattr(cli_mod, "_stdin_is_terminal", lambda: True)
    r = CliRunner().invoke(cli, args, input="n\n")
    assert "1 kernel run (1 s of traffic" in r.output and "Start them?" in r.output
    assert r.exit_code == 1 and "not confirmed; nothing ran" in r.output
    assert not (tmp_path / "c").exists()


def test_cli_sim_only_needs_neither_root_nor_confirmation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bbrlab.emu.netns as netns

    def no_root() -> None:
        raise AssertionError("--sim-only must not check for root or namespaces")

    monkeypatch.setattr(netns, "check_environment", no_root)
    r = CliRunner().invoke(
        cli, ["compare", str(QUICK), "--sim-only", "--duration", "1s", "--seeds", "1", "--out", str(tmp_path / "c")]
    )
    assert r.exit_code == 0, r.output
    t = pd.read_csv(tmp_path / "c" / "compare.csv")
    assert t["sim_runs"].tolist() == [1] and "emu_runs" not in t
    r = CliRunner().invoke(cli, ["compare", str(QUICK), "--sim-only", "--emu-runs", "2"])
    assert r.exit_code == 2 and "--emu-runs" in r.output


def test_multi_flow_point_has_per_flow_rows(tmp_path: Path) -> None:
    """A coexistence point gets one row per flow (cc, goodput, share, retransmits) for each side,
    the means of the saved runs' flows; the shares of a side add up to 1."""
    calls: list[tuple[str, int]] = []
    lines: list[str] = []
    scenario = QUICK.parent / "bbr-vs-cubic.toml"
    # 8 s: the CUBIC flow joins at 5 s.
    _, out = _compare(tmp_path, calls, scenario=scenario, ccs=(), duration="8s", echo=lines.append, seeds=2, emu_runs=1)
    flows = pd.read_csv(out / "compare_flows.csv")
    runs = sorted((out / "runs").iterdir())
    sim_runs = [d for d in runs if "-sim-" in d.name]
    assert len(sim_runs) == 2
    per_run = [pd.read_parquet(d / "flows.parquet") for d in sim_runs]
    assert len(flows) == len(per_run[0]) == 2
    assert (flows["sim_goodput_mbps"] > 0).all()
    assert sorted(flows["cc"]) == sorted(per_run[0]["cc"].astype(str))
    for side in ("sim", "emu"):
        assert flows[f"{side}_share"].sum() == pytest.approx(1.0)
    for fi, r in flows.iterrows():
        expect = sum(float(p.loc[p["flow"] == fi, "goodput_bps"].iloc[0]) for p in per_run) / 2 / 1e6
        assert r["sim_goodput_mbps"] == pytest.approx(expect)
        assert r["sim_retransmits"] == pytest.approx(
            sum(float(p.loc[p["flow"] == fi, "retransmits"].iloc[0]) for p in per_run) / 2
        )
        # by cause, each the mean of the runs' counts, together the retransmissions
        for c in ("retrans_fast", "retrans_rto", "retrans_tlp"):
            assert r[f"sim_{c}"] == pytest.approx(sum(float(p.loc[p["flow"] == fi, c].iloc[0]) for p in per_run) / 2)
        assert r["sim_retrans_fast"] + r["sim_retrans_rto"] + r["sim_retrans_tlp"] == pytest.approx(
            r["sim_retransmits"]
        )
    assert sum("share sim" in line and "fast/rto/tlp sim" in line for line in lines) == len(flows)
    md = (out / "compare.md").read_text()
    assert "| point | flow | cc |" in md and "share sim" in md
    # the causes close the per-flow table: as many cells in its rule and rows as in its header
    table_lines = md[md.index("| point | flow") :].splitlines()
    assert table_lines[0].endswith("| fast/rto/tlp sim | fast/rto/tlp emu |")
    assert {line.count("|") for line in table_lines} == {table_lines[0].count("|")}
    assert len(table_lines) == 2 + len(flows)


def test_single_flow_point_has_no_per_flow_rows(tmp_path: Path) -> None:
    _, out = _compare(tmp_path, [], duration="2s", seeds=1, emu_runs=1)
    assert not (out / "compare_flows.csv").exists()
    assert "| point | flow |" not in (out / "compare.md").read_text()
