"""The data-center studies of the Waterloo DC study (dc-query, dc-incast, dc-convergence), at size tiny."""

from __future__ import annotations

import pandas as pd
import pytest
from dc_rows import convergence_levels

pytest.importorskip("bbrlab._core")

NAMES = ["dc-query", "dc-incast", "dc-convergence"]


@pytest.fixture(scope="module")
def studies(tiny_study):
    dirs = {name: tiny_study(name) for name in NAMES}
    return dirs, {name: d / "REPORT.md" for name, d in dirs.items()}


def test_reports_and_figures(studies):
    roots, reports = studies
    for name, figs in {
        "dc-query": ["fig1-mean-no-bg.png", "fig3-cdf-no-bg.png", "fig6-cdf-bg.png", "queries.csv"],
        "dc-incast": ["fig7-throughput.png", "fig8-cdf.png", "samples.csv"],
        "dc-convergence": ["levels.csv", "bbr_converge_lossless.csv"],
    }.items():
        text = reports[name].read_text()
        assert "The Waterloo study's claims beside ours" in text and "PAUSE" in text
        for f in figs:
            assert (roots[name] / f).stat().st_size > 0, f


def test_lossless_query_latency_has_no_incast_collapse(studies):
    roots, _ = studies
    st = pd.read_csv(roots["dc-query"] / "stats.csv")
    d = st[(st["fabric"] == "lossless") & (~st["bg"])]
    floor = (1 << 20) * 1538 / 1448 * 8 / 1e9
    assert (d["mean_s"] >= floor).all()
    assert (d["mean_s"] < 1.5 * floor).all()  # n up to 20: no RTO anywhere


def test_convergence_csv_has_the_seed_schema(studies):
    roots, _ = studies
    c = pd.read_csv(roots["dc-convergence"] / "cubic_converge_lossless.csv")
    assert list(c.columns) == ["num_flows", "socket_fd", "throughput", "time"]
    assert set(c["socket_fd"]) == {5, 6, 7, 8, 9}
    assert c["throughput"].max() <= 941.5 * 1.01  # lossless: no stalls, so no catch-up bursts above the ceiling


def test_unfinished_queries_are_counted_as_censored_not_dropped():
    import math

    from bbrlab.reproduce import dc_query

    nan = math.nan
    # One (fabric, bg, cc, n) with 4 requested queries: 0 and 1 finished, 2 was running when the
    # run ended at 3.0 s (its transfers started at 1.2 and 1.25 s), 3 never started.
    rows = pd.DataFrame(
        {
            "fabric": "lossless",
            "bg": False,
            "cc": "bbr1",
            "n": 2,
            "reps": 4,
            "run": 0,
            "app": [0, 0, 0, 0, 0, 0, -1],
            "query": [0, 0, 1, 1, 2, 2, -1],
            "query_response_s": [0.010, 0.010, 0.030, 0.030, nan, nan, nan],
            "start_s": [0.30, 0.30, 0.33, 0.33, 1.20, 1.25, 0.0],
            "end_s": [0.31, 0.31, 0.36, 0.36, 2.0, 3.0, 3.0],
        }
    )
    q = dc_query._queries(rows)
    assert q["censored"].tolist() == [False, False, True]
    assert q["response_s"].iloc[2] == pytest.approx(3.0 - 1.2)  # a lower bound: run end − first start
    st = dc_query._stats(q, rows)
    r = st.iloc[0]
    assert (r["completed"], r["censored"], r["not_started"], r["requested"]) == (2, 1, 1, 4)
    assert r["mean_s"] == pytest.approx(0.020)  # the censored query is not averaged as if it had finished
    text = dc_query.rests_on(st, fabric="lossless", bg=False, cc="bbr1", n=2)
    assert text.startswith("rests on 2 of 4 queries") and "1 censored" in text and "1 never started" in text
    assert len(dc_query.completed(q)) == 2


def test_findings_table_is_computed_from_the_claims(tmp_path):
    from bbrlab.reproduce import dc_common as dc
    from bbrlab.reproduce import dc_findings
    from bbrlab.reproduce.claims import CSV_COLUMNS

    def claims(study: str, verdict_of) -> None:
        d = tmp_path / study
        d.mkdir()
        rows = [
            {
                "claim": f"{start} … — {dc.FABRIC_LABEL[fab]}",
                "paper_value": "yes",
                "bbrlab_value": f"{fab} 1.0",
                "rule": "r",
                "verdict": verdict_of(fab, start),
            }
            for f in dc_findings.FINDINGS
            if f.study == study
            for start in f.claims
            for fab in dc.FABRICS
        ]
        pd.DataFrame(rows, columns=list(CSV_COLUMNS)).to_csv(d / "claims.csv", index=False)

    shared, sf = "shared-dt", "store-and-forward"
    # (a) holds on the shared buffer only; (b) is partly there on 128 KB drop-tail (one claim not
    # testable); (c) holds on 128 KB drop-tail, and one claim disagrees on the shared buffer.
    claims("dc-query", lambda fab, start: "agrees" if fab == shared else "disagrees")
    claims(
        "dc-incast",
        lambda fab, start: ("not tested" if start.startswith("n = 20") else "agrees") if fab == sf else "disagrees",
    )
    assert dc_findings.write(tmp_path / "dc-incast") is None  # dc-convergence has not run yet
    claims(
        "dc-convergence",
        lambda fab, start: "agrees" if fab == sf or (fab == shared and start.startswith("CUBIC")) else "disagrees",
    )
    out = dc_findings.write(tmp_path / "dc-convergence")
    got = pd.read_csv(tmp_path / "dc-findings.csv").set_index(["fabric", "finding"])["verdict"]
    assert got[(shared, "a")] == "yes" and got[(shared, "c")] == "no" and got[(shared, "b")] == "no"
    assert got[(sf, "a")] == "no" and got[(sf, "b")] == "partly" and got[(sf, "c")] == "yes"
    assert got[("lossless", "a")] == "no"
    text = out.read_text()
    # The fabric with the most findings (store-and-forward: 1.5 of 3) is the one shown beside the paper.
    assert f"**{dc.FABRIC_LABEL[sf]}**" in text and "1.5 of 3" in text


def _mechanism(fabric: str) -> str:
    """A fabric's switch buffer mechanism, read from the topology it builds (not from its name)."""
    from bbrlab.reproduce import dc_common as dc

    star = dc.topology(fabric, 20)
    if star.pfc is not None:
        return f"PAUSE by {star.pfc.accounting}"
    if star.shared_buffer_bytes is not None:
        return "shared buffer"
    return f"{star.forwarding} drop-tail"


def test_quick_plans_run_the_baseline_and_every_lossy_mechanism():
    from bbrlab.reproduce import Size, dc_convergence, dc_incast, dc_query
    from bbrlab.reproduce import dc_common as dc

    quick = {m.__name__: m.PLANS[Size.QUICK].fabrics for m in (dc_query, dc_incast, dc_convergence)}
    # One set for all three studies, so each fabric's findings row is complete or wholly "not run".
    assert all(set(f) == set(dc.QUICK_FABRICS) for f in quick.values()), quick
    # The baseline every comparison is made against: egress PAUSE.
    assert "lossless" in dc.QUICK_FABRICS and _mechanism("lossless") == "PAUSE by egress"
    # Every switch mechanism without PAUSE (where drops can turn a finding on) has a fabric in --quick,
    # and so does the store-and-forward buffer the reports' explanations and the open question name.
    lossy = {_mechanism(f) for f in dc.FABRICS if dc.topology(f, 20).pfc is None}
    assert lossy == {"shared buffer", "store-and-forward drop-tail"}
    assert lossy <= {_mechanism(f) for f in dc.QUICK_FABRICS}
    assert "store-and-forward" in dc.QUICK_FABRICS
    # --full runs every fabric.
    assert set(dc_query.PLANS[Size.FULL].fabrics) == set(dc_incast.PLANS[Size.FULL].fabrics) == set(dc.FABRICS)
    assert set(dc_convergence.PLANS[Size.FULL].fabrics) == set(dc.ALL_FABRICS)


def test_findings_table_says_not_run_for_fabrics_a_quick_run_left_out(tmp_path):
    from bbrlab.reproduce import Size, dc_findings
    from bbrlab.reproduce import dc_common as dc
    from bbrlab.reproduce.claims import CSV_COLUMNS

    for study in dc_findings.STUDIES:
        d = tmp_path / study
        d.mkdir()
        rows = [
            {
                "claim": f"{start} … — {dc.FABRIC_LABEL[fab]}",
                "paper_value": "p",
                "bbrlab_value": "1.0",
                "rule": "r",
                "verdict": "agrees" if fab == "store-and-forward" else "disagrees",
            }
            for f in dc_findings.FINDINGS
            if f.study == study
            for start in f.claims
            for fab in dc.QUICK_FABRICS
        ]
        pd.DataFrame(rows, columns=list(CSV_COLUMNS)).to_csv(d / "claims.csv", index=False)
    out = dc_findings.write(tmp_path / "dc-convergence", Size.QUICK)
    got = pd.read_csv(tmp_path / "dc-findings.csv").set_index(["fabric", "finding"])["verdict"]
    for fab in dc.FABRICS:
        for f in dc_findings.FINDINGS:
            want = ("yes" if fab == "store-and-forward" else "no") if fab in dc.QUICK_FABRICS else dc_findings.NOT_RUN
            assert got[(fab, f.key)] == want, (fab, f.key)
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith(f"| {dc.FABRIC_LABEL['pause-ignored']} |"))
    assert row.count("not run in --quick") == 3 and "| no |" not in row
    # The best configuration is chosen among the fabrics that ran.
    assert f"**{dc.FABRIC_LABEL['store-and-forward']}**" in text and "3 of 3" in text


def test_reports_explain_a_quick_run_without_the_fabrics_it_left_out():
    from bbrlab.reproduce import Size, dc_convergence
    from bbrlab.reproduce import dc_common as dc

    rows = []
    for fabric in dc_convergence.PLANS[Size.QUICK].fabrics:
        for cc in dc.CCS:
            j = 0.5 if cc == dc.BBR and not dc.is_lossless(fabric) else 0.99
            rows += convergence_levels(fabric, cc, j)
    lv = pd.DataFrame(rows)
    text = dc_convergence._answer(lv)
    assert "128 KB drop-tail:* CUBIC 0.99, BBRv1 0.50" in text
    assert "1 MB drop-tail:* not run at this size" in text and "1 MB drop-tail:* CUBIC" not in text
    gaps = text.split("difference in that index:")[1].split(". In this model")[0]
    assert "lossless" in gaps and "128 KB -0.49" in gaps and "1 MB" not in gaps
    assert {c.claim.rsplit(" — ", 1)[1] for c in dc_convergence.claims(lv)[:-1]} == {
        dc.FABRIC_LABEL[f] for f in dc.QUICK_FABRICS
    }
