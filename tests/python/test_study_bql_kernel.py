"""bql-vs-bbr's real-host column (`reproduce bql-vs-bbr --backend emu`, reproduce/bql_kernel.py):
the plan, verdicts that follow the numbers, and the `--quick` form on real namespaces.

The run on the kernel needs root and network namespaces; it skips with the reason when those
are missing."""

from __future__ import annotations

import csv
import math
import subprocess
import sys

import pandas as pd
import pytest

pytest.importorskip("bbrlab._core")

from bbrlab.reproduce import bql_kernel as bk  # noqa: E402  # only once the core is known to be there
from bbrlab.reproduce import bql_vs_bbr  # noqa: E402
from bbrlab.reproduce.catalog import get_study  # noqa: E402
from bbrlab.reproduce.claims import Verdict  # noqa: E402
from bbrlab.reproduce.context import Size  # noqa: E402
from test_emu import _emu_unavailable  # noqa: E402

PLAN = bk.KERNEL_PLANS[Size.QUICK]


def test_the_plan_runs_the_zero_ms_point_at_1_gbits_and_says_why_100_ms_is_scaled() -> None:
    by_rtt = {p.rtt_ms: p for p in PLAN.points}
    assert by_rtt[bql_vs_bbr.ZERO_RTT_MS].rate_bps == bql_vs_bbr.GIG and by_rtt[bql_vs_bbr.ZERO_RTT_MS].scaled is None
    assert by_rtt[100].rate_bps < bql_vs_bbr.GIG and by_rtt[100].scaled
    assert "300 Mbit/s" in by_rtt[100].label
    text = bk.plan_text(PLAN)
    assert by_rtt[100].scaled in text and "500 and 1000 ms" in text
    # The catalog runs this module for `--backend emu`.
    st = get_study("bql-vs-bbr")
    assert st.kernel_module == "bql_kernel" and st.has_kernel_plan


def test_bql_runs_over_udp_and_over_kernel_tcp_at_every_point() -> None:
    runs = bk.kernel_runs(PLAN)
    seen = {(r.tags["key"], r.tags["rtt_ms"], r.scenario.flows[0].cc, r.scenario.flows[0].transport) for r in runs}
    for p in PLAN.points:
        assert ("bql-udp", p.rtt_ms, "bql", "udp") in seen
        assert ("bql-tcp", p.rtt_ms, "bql", "tcp") in seen
        assert ("bbr", p.rtt_ms, "bbr1", "tcp") in seen
    for r in runs:
        bn = r.scenario.topology.bottleneck
        assert bn.buffer.value == 80_000_000 and bn.loss == 0
        assert bn.rate == r.tags["rate_bps"]


def _rows(values: dict[str, tuple[float, float]]) -> pd.DataFrame:
    """Per-flow rows as run_many gives them: key -> (goodput, mean queue) at every plan point."""
    return pd.DataFrame(
        [
            {
                "key": key,
                "rtt_ms": p.rtt_ms,
                "rate_bps": p.rate_bps,
                "goodput_bps": g * p.rate_bps,
                "queue_mean_bytes": q,
            }
            for p in PLAN.points
            for key, (g, q) in values.items()
        ]
    )


def test_the_papers_claim_on_each_backend_follows_the_numbers() -> None:
    sim = _rows({"bql": (0.93, 30e3), "bbr1": (0.93, 700e3), bql_vs_bbr.BBR: (0.92, 900e3)})
    # Over UDP BQL keeps its queue and rate; over kernel TCP it falls to half the rate.
    kernel = _rows({"bql-udp": (0.92, 32e3), "bql-tcp": (0.46, 10e3), "bbr": (0.93, 600e3)})
    got = {c.claim.split(" — ")[1]: c for c in bk.pairing_claims(PLAN, sim, kernel)}
    assert [c.verdict for c in got.values()] == [Verdict.AGREES, Verdict.AGREES, Verdict.AGREES, Verdict.DISAGREES]
    assert "49.5 %" in got["real hosts, BQL over kernel TCP (BPF) vs the kernel's BBR"].reason
    # The contrary numbers give the contrary verdict.
    kernel2 = _rows({"bql-udp": (0.92, 800e3), "bql-tcp": (0.93, 10e3), "bbr": (0.93, 600e3)})
    got2 = {c.claim.split(" — ")[1]: c.verdict for c in bk.pairing_claims(PLAN, sim, kernel2)}
    assert got2["real hosts, BQL over UDP vs the kernel's BBR"] is Verdict.DISAGREES
    assert got2["real hosts, BQL over kernel TCP (BPF) vs the kernel's BBR"] is Verdict.AGREES


@pytest.mark.parametrize(
    ("sim", "real", "within"),
    [
        ((109.0, 30e3), (100.0, 30e3), True),
        ((111.0, 30e3), (100.0, 30e3), False),
        ((100.0, 37.4e3), (100.0, 30e3), True),
        ((100.0, 38e3), (100.0, 30e3), False),
        ((100.0, 30e3), (math.nan, 30e3), None),
    ],
)
def test_the_bar_is_10_percent_goodput_and_25_percent_queue(sim, real, within) -> None:
    assert bk.within_bar(sim[0], real[0], sim[1], real[1]) is within


def test_the_side_by_side_table_marks_only_bql_rows_against_the_bar() -> None:
    sim = _rows({"bql": (0.93, 30e3), "bbr1": (0.93, 700e3), bql_vs_bbr.BBR: (0.92, 900e3)})
    kernel = _rows({"bql-udp": (0.92, 32e3), "bql-tcp": (0.46, 10e3), "bbr": (0.93, 600e3)})
    t = bk.side_by_side(PLAN, sim, kernel)
    assert len(t) == len(PLAN.points) * (len(bk.KERNEL_FLOWS) + 1)
    udp = t[t["flow"].str.startswith("BQL over UDP")]
    assert udp["within_bar"].tolist() == [True] * len(PLAN.points)
    tcp = t[t["flow"].str.startswith("BQL over kernel TCP")]
    assert tcp["within_bar"].tolist() == [False] * len(PLAN.points)
    assert t[~t["flow"].str.startswith("BQL")]["within_bar"].isna().all()
    assert "in 2 of 4 BQL rows" in bk._bar_sentence(t)


_REASON = _emu_unavailable()


@pytest.mark.skipif(_REASON is not None, reason=f"emu backend unavailable: {_REASON}")
def test_quick_real_host_column_on_the_kernel(tmp_path) -> None:
    """`reproduce bql-vs-bbr --backend emu --quick`: every real-host row has numbers, the page says
    which point is scaled, and the claims are verdicts, not "not tested"."""
    r = subprocess.run(
        [sys.executable, "-m", "bbrlab", "reproduce", "bql-vs-bbr", "--backend", "emu", "--quick"]
        + ["--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    d = tmp_path / "bql-vs-bbr"
    t = pd.read_csv(d / "real-host.csv")
    real = t[t["sim_cc"] != bql_vs_bbr.BBR]
    assert len(real) == len(PLAN.points) * len(bk.KERNEL_FLOWS)
    ceiling = real["rate_bps"] * 1448 / 1538
    assert ((real["real_goodput_bps"] > 0.05 * ceiling) & (real["real_goodput_bps"] <= 1.01 * ceiling)).all(), t
    assert (real["real_queue_mean_bytes"] >= 0).all() and (real["real_queue_mean_bytes"] < 80e6).all()
    udp = real[real["flow"].str.startswith("BQL over UDP")]
    assert (udp["udp_sender_cpu_s"] > 0).all() and (udp["udp_receiver_cpu_s"] > 0).all()
    text = (d / "REPORT.md").read_text()
    assert "at 300 Mbit/s" in text and "same RTT and 80 MB buffer" in text
    with (d / "claims.csv").open() as f:
        verdicts = [row["verdict"] for row in csv.DictReader(f)]
    assert len(verdicts) == 4 and "not tested" not in verdicts


@pytest.mark.parametrize("udp", [None, {"flows": [{"flow": 1, "sender_cpu_s": 2.5, "receiver_cpu_s": 3.0}]}])
def test_a_kernel_runs_own_figures_reach_the_rows(udp) -> None:
    """The emulator's lateness for every flow, the UDP transport's CPU for its own flow only (a
    kernel TCP run's summary has ``udp`` null)."""
    from bbrlab.reproduce.pool import emu_columns

    emu = {"emulator": {"late_mean_ns": 35e3, "late_max_ns": 4e6}, "udp": udp}
    got = emu_columns(emu, pd.Series([0, 1]))
    assert got["emu_late_mean_ns"] == 35e3 and got["emu_late_max_ns"] == 4e6
    cpu = got["udp_sender_cpu_s"]
    assert math.isnan(cpu[0]) and (math.isnan(cpu[1]) if udp is None else cpu[1] == 2.5)
    assert emu_columns(None, pd.Series([0])) == {}
