"""Study claims and commentary computed from numbers: contrary numbers flip both the verdict and the
sentence; claims.csv round-trips and matches the REPORT.md tables; the value cells parse back."""

from __future__ import annotations

import html
import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from bbrlab.reproduce import (
    STUDIES,
    Size,
    bql_vs_bbr,
    dc_convergence,
    dc_incast,
    dc_query,
    esnet_100g,
    many_flows_ecn,
    wan_loss,
)
from bbrlab.reproduce.analysis import Estimate, mean_ci, sign_of_difference, t975
from bbrlab.reproduce.claims import (
    CSV_COLUMNS,
    TINY_REASON,
    Check,
    Claim,
    Outcome,
    Verdict,
    all_of,
    cell,
    check,
    check_within,
    num,
    parse_cell,
    pct,
    read_claims_csv,
    verdict,
    verdict_of_all,
    verdicts_unchecked,
    write_claims_csv,
)
from bbrlab.reproduce.dc_common import BBR as DC_BBR
from bbrlab.reproduce.dc_common import FABRIC_LABEL, is_lossless
from bbrlab.reproduce.sentences import at, change, compare
from bbrlab.results.display import fmt_bps, fmt_bytes, fmt_seconds
from dc_rows import convergence_levels
from scipy import stats

LOSSLESS = FABRIC_LABEL["lossless"]

VERDICTS = {v.value for v in Verdict}


def by_name(claims: list[Claim]) -> dict[str, Verdict]:
    return {c.claim: c.verdict for c in claims}


def one(claims: list[Claim], *parts: str) -> Claim:
    [c] = [c for c in claims if all(p in c.claim for p in parts)]
    return c


# ------------------------------------------------------------------ the pieces


def test_value_cells_round_trip():
    c = cell(
        num(941.25, "Mbit/s", label="cubic n = 1 → 10", to=932.5),
        num(-9.2, "Mbit/s", label="n = 10", ci=33.8),
        num(float("nan"), "%"),
        num(1.5e-7),
    )
    assert c == "cubic n = 1 → 10: 941.25 → 932.5 Mbit/s; n = 10: -9.2 ± 33.8 Mbit/s; nan %; 1.5e-07"
    items = parse_cell(c)
    assert [(i.label, i.value, i.to, i.ci, i.unit) for i in items[:2]] == [
        ("cubic n = 1 → 10", 941.25, 932.5, None, "Mbit/s"),
        ("n = 10", -9.2, None, 33.8, "Mbit/s"),
    ]
    assert math.isnan(items[2].value) and items[2].unit == "%" and items[3].value == 1.5e-7 and items[3].unit == ""
    assert parse_cell("drastic increase") is None and parse_cell("") is None
    with pytest.raises(ValueError):  # a label with a colon would not parse back
        str(num(1, label="a: b"))
    with pytest.raises(TypeError):
        cell("yes", num(1))


def test_claims_tables_show_three_significant_digits_and_csv_keeps_all(tmp_path):
    """Issue 36: the reproduction pages printed raw floats (`Jain per level: 0.999997`,
    `-166.709 Mbit/s`, `7.24441 ×`); a rule compares at ±5 % or coarser, so a page shows three
    significant digits (1 % at worst), and claims.csv (for machines) every digit."""
    from bbrlab.reproduce.claims import Claim, Verdict, claims_table, shown_cell, write_claims_csv

    assert shown_cell("Jain per level: 0.999997") == "Jain per level: 1.00"
    assert shown_cell("BQL − BBR goodput: -166.709 Mbit/s") == "BQL − BBR goodput: −167 Mbit/s"
    assert shown_cell("7.24441 ×; nan ms; 12345.6 KB") == "7.24 ×; —; 12346 KB"
    assert shown_cell("a: 941.25 → 932.5 Mbit/s") == "a: 941 → 932 Mbit/s"
    assert shown_cell("drastic increase") == "drastic increase" and shown_cell("") == ""
    raw = "Jain per level: 0.999997; 7.24441 ×"
    claim = Claim(
        "Jain stays near 1", "1", raw, "≥ 0.9", Outcome(Verdict.AGREES, "Jain 1.00"), paper_value="1", bbrlab_value=raw
    )
    md = claims_table([claim])
    assert "Jain per level: 1.00; 7.24 ×" in md and "0.999997" not in md
    write_claims_csv(tmp_path / "claims.csv", [claim])
    rows = read_claims_csv(tmp_path / "claims.csv")
    assert rows[0]["bbrlab_value"] == "Jain per level: 0.999997; 7.24441 ×"
    from bbrlab.report.pages import claims_table as html_claims_table

    page = str(html_claims_table(rows))  # one item a line on the page
    assert "Jain per level: 1.00<br>7.24 ×" in page and "0.999997" not in page


def test_a_unit_shared_by_every_item_is_written_once():
    """Issue 36: "units once": a cell whose items share a unit writes it once (at the end in
    REPORT.md, above the items on the page); items in different units keep their own."""
    from bbrlab.report.pages import claims_table as html_claims_table
    from bbrlab.reproduce.claims import shown_cell

    same = cell(num(-195.3, "Mbit/s", label="0 ms"), num(11.74, "Mbit/s", label="100 ms"))
    assert shown_cell(same) == "0 ms: −195; 100 ms: 11.7 Mbit/s"
    assert shown_cell(cell(num(7.2, "×"), num(-169.6, "Mbit/s"))) == "7.20 ×; −170 Mbit/s"
    assert shown_cell(cell(num(97.2, "%", label="a"), num(math.nan, "%", label="b"))) == "a: 97.2 %; b: —"
    row = dict(claim="c", paper_value="yes", bbrlab_value=same, rule="r", verdict="agrees", reason="why")
    page = str(html_claims_table([row]))
    assert "in Mbit/s</span><br>0 ms: −195<br>100 ms: 11.7</td>" in page


def test_report_md_pivots_claims_in_several_settings_as_the_page_does():
    """Issue 36 ("fabrics/variants as columns of one row per claim rather than rows"): REPORT.md's
    table too has one row per claim and a column per setting, each cell our value, its verdict
    and the reason; a table without settings keeps its verdict and why columns."""
    from bbrlab.reproduce.claims import Claim, Verdict, claims_table

    def claim(text: str, ours: str, verdict: Verdict, why: str) -> Claim:
        return Claim(
            text,
            "falls",
            ours,
            "mean at n = 20 below n = 1",
            Outcome(verdict, why),
            paper_value="falls",
            bbrlab_value=ours,
        )

    md = claims_table(
        [
            claim("throughput falls — lossy", "941.25 → 512.5 Mbit/s", Verdict.AGREES, "falls by 46 %"),
            claim("throughput falls — lossless (PFC)", "940 → 939.9 Mbit/s", Verdict.DISAGREES, "stays within 1 %"),
        ]
    )
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(lines) == 3  # header, separator, one row for the claim
    assert "bbrlab: lossy" in lines[0] and "bbrlab: lossless (PFC)" in lines[0]
    assert "941 → 512 Mbit/s: **agrees** — falls by 46 %" in lines[2]
    assert "**disagrees** — stays within 1 %" in lines[2]
    single = claims_table([claim("throughput falls", "941.25 → 512.5 Mbit/s", Verdict.AGREES, "falls by 46 %")])
    assert "| verdict | why |" in single and "| agrees | falls by 46 % |" in single


def test_claims_in_several_settings_are_one_row_with_a_column_per_setting():
    """Issue 36: dc-incast's page had a row per claim × fabric (24 rows); a claim checked on each
    fabric is one row, the fabrics columns, each with our value and its verdict."""
    from bbrlab.report.pages import claims_table as html_claims_table

    def row(claim: str, ours: str, verdict: str) -> dict[str, str]:
        return dict(
            claim=claim, paper_value="falls", bbrlab_value=ours, rule="mean at n = 20 below n = 1", verdict=verdict
        )

    rows = [
        row("throughput falls — lossy", "cubic: 941.25 → 512.5 Mbit/s", "agrees"),
        row("BBR ahead — lossy", "n = 10: 12.345 Mbit/s", "partly"),
        row("throughput falls — lossless (PFC)", "cubic: 940 → 939.9 Mbit/s", "disagrees"),
        row("BBR ahead — lossless (PFC)", "n = 10: -3.21 Mbit/s", "agrees"),
    ]
    page = str(html_claims_table(rows))
    body = re.findall(r"<tr>(.*?)</tr>", page, flags=re.S)
    assert len(body) == 1 + 2  # the header and one row per claim
    header = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", body[0])]
    assert header == ["claim", "source", "bbrlab: lossy", "bbrlab: lossless (PFC)"]
    first = re.findall(r"<td[^>]*>(.*?)</td>", body[1], flags=re.S)
    assert first[0].startswith("throughput falls<div") and "rule: mean at n = 20 below n = 1" in first[0]
    assert "941 → 512 Mbit/s<br><b>agrees</b>" in first[2]
    assert "940 → 940 Mbit/s<br><b>disagrees</b>" in first[3]
    # Settings that do not line up (a source value that differs) keep a row per claim and setting.
    rows[2]["paper_value"] = "stays"
    assert len(re.findall(r"<tr>", str(html_claims_table(rows)))) == 1 + 4


def test_claims_csv_round_trips(tmp_path):
    cl = [
        Claim(
            "a, with a comma",
            "yes",
            "x",
            'rule; with "quotes"',
            Outcome(Verdict.PARTLY, "holds for a; fails for b: 3, with a comma"),
            paper_value="yes",
            bbrlab_value=cell(num(1, "ms", label="n = 1")),
        ),
        Claim(
            "b",
            "1 Mbit/s",
            "-",
            "r",
            Outcome(Verdict.UNTESTED, "no n = 10 in this grid"),
            paper_value=cell(num(1, "Mbit/s")),
            bbrlab_value="",
        ),
    ]
    rows = read_claims_csv(write_claims_csv(tmp_path / "claims.csv", cl))
    assert rows == [c.csv_row() for c in cl]
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert rows[1]["verdict"] == "not tested"


def test_student_t_and_welch_match_scipy():
    assert t975(1) == pytest.approx(12.706, abs=1e-3) and t975(5) == pytest.approx(2.571, abs=1e-3)
    assert math.isnan(t975(0))
    rng = np.random.default_rng(7)
    decided = set()
    for shift in np.linspace(0, 2, 21):
        x, y = rng.normal(0, 1, 8), rng.normal(shift, 2, 5)
        ex, ey = (Estimate(*mean_ci(v), len(v)) for v in (x, y))
        assert ex.sd == pytest.approx(np.std(x, ddof=1))
        p = stats.ttest_ind(y, x, equal_var=False).pvalue
        sign = sign_of_difference(ey, ex)
        assert (sign != 0) == (p < 0.05), (shift, p, sign)
        decided.add(sign)
    assert decided >= {0, 1}  # both outcomes occurred: the check can fail
    assert sign_of_difference(Estimate(1.0, math.nan, 1), ex) is None


def test_sentence_builders_never_print_empty_sets():
    assert (
        at("n", []) == "at no n"
        and at("n", [10]) == "at n = 10"
        and at("n", [10, 20], [10, 20]) == "at every n (10, 20)"
    )
    s = compare("BBRv1", "CUBIC", {10: 1, 20: -1, 30: 0, 40: None})
    assert s == (
        "BBRv1 is significantly ahead of CUBIC at n = 10, significantly behind it at n = 20 and not "
        "significantly different from it at n = 30 (undecided at n = 40)"
    )
    assert (
        compare("BBRv1", "CUBIC", {10: 0, 20: 0}) == "BBRv1 is not significantly different from CUBIC at any n (10, 20)"
    )
    assert compare("BBRv1", "CUBIC", {10: -1, 20: -1}) == "BBRv1 is significantly behind CUBIC at every n (10, 20)"
    for text in (compare("A", "B", {}), compare("A", "B", {1: None})):
        assert "none" not in text and "[]" not in text

    def mbps(x: float) -> str:
        return fmt_bps(x, 0, unit="Mbit/s")

    assert change("CUBIC", 941e6, 500e6, mbps, sign=-1) == "CUBIC falls from 941 Mbit/s to 500 Mbit/s"
    assert change("CUBIC", 500e6, 941e6, mbps, sign=1) == "CUBIC rises from 500 Mbit/s to 941 Mbit/s"
    assert change("CUBIC", 941e6, 932e6, mbps, sign=0) == "CUBIC stays within 1 % (941 Mbit/s → 932 Mbit/s)"
    assert "not significantly" in change("CUBIC", 941e6, 700e6, mbps, sign=0)


def test_one_formatter_per_quantity():
    assert fmt_bps(941.2e6, 0, unit="Mbit/s") == "941 Mbit/s" and fmt_bps(9407e6, 0, unit="Mbit/s") == "9407 Mbit/s"
    assert [fmt_bps(x, sig=3) for x in (14.71e6, 2.183e9, 306.9e3)] == ["14.7 Mbit/s", "2.18 Gbit/s", "307 kbit/s"]
    assert fmt_bps(94_310_000) == "94.31 Mbit/s" and fmt_bps(float("nan")) == "-"  # the run summary's form
    assert [fmt_bytes(x, sig=3) for x in (405e3, 23.82e6, 68)] == ["405 KB", "23.8 MB", "68 B"]
    assert fmt_bytes(128_000, 0) == "128 KB" and fmt_bytes(1_500_000) == "1.5 MB"
    assert fmt_seconds(0.00898) == "9.0 ms" and fmt_seconds(2.96) == "2.96 s"
    with pytest.raises(ValueError):
        fmt_bps(1e6, unit="Mbps")


# ------------------------------------------------------------------ why: each verdict's reason, from its numbers


def test_a_single_threshold_says_the_number_and_the_limit():
    """Issue 36: a verdict said "disagrees" with no reason; the reason is computed from the same
    number and limit, so other numbers give another reason."""
    share = "BQL's goodput is {} of BBR's"
    bad, good = verdict(check(0.8183, "≥", 0.98, share, pct)), verdict(check(0.991, "≥", 0.98, share, pct))
    assert bad.verdict is Verdict.DISAGREES and bad.reason == "BQL's goodput is 81.8 % of BBR's (rule: ≥ 98 %)"
    assert good.verdict is Verdict.AGREES and good.reason == "BQL's goodput is 99.1 % of BBR's (rule: ≥ 98 %)"
    kb = verdict(check_within(665e3, 125e3, 500e3, "mean queue {}", lambda b: fmt_bytes(b, sig=3)))
    assert kb.verdict is Verdict.DISAGREES and kb.reason == "mean queue 665 KB (rule: 125 KB to 500 KB)"
    # A limit that is a number of ours too is told in the sentence, not as a rule.
    both = verdict(check(3.5, "<", 3.4, "BBR's stddev {} vs CUBIC's {limit}", "Gbit/s"))
    assert both.reason == "BBR's stddev 3.50 Gbit/s vs CUBIC's 3.40 Gbit/s" and both.verdict is Verdict.DISAGREES


def test_a_rule_over_points_names_where_it_fails_and_by_how_much():
    def at(rtt: str, x: float) -> Check:
        return check(x, "≥", 0.98, "BQL's goodput is {} of BBR's", pct, where=rtt)

    partly = verdict_of_all([at("0 ms", 0.818), at("100 ms", 1.02), at("500 ms", 0.99), at("1000 ms", 1.1)])
    assert partly.verdict is Verdict.PARTLY
    assert partly.reason == (
        "holds for 100, 500 and 1000 ms — nearest its limit, 500 ms: BQL's goodput is 99.0 % of BBR's "
        "(rule: ≥ 98 %); fails for 0 ms: BQL's goodput is 81.8 % of BBR's (rule: ≥ 98 %)"
    )
    agrees = verdict_of_all([at("0 ms", 0.985), at("100 ms", 1.02)])
    assert (
        agrees.verdict is Verdict.AGREES
        and "fails" not in agrees.reason
        and "0 ms: BQL's goodput is 98.5 %" in agrees.reason
    )
    many = verdict_of_all([at(f"n = {n}", 0.5 + n / 100) for n in (1, 2, 3, 4, 5)])
    assert many.verdict is Verdict.DISAGREES
    assert many.reason.startswith("fails for n = 1, 2, 3, 4 and 5 — furthest, n = 1: BQL's goodput is 51.0 %")
    # Undecided points say their number is missing; none decided: not tested, and why.
    some = verdict_of_all([at("0 ms", math.nan), at("100 ms", 0.5)])
    assert some.verdict is Verdict.DISAGREES
    assert some.reason.endswith("; undecided for 0 ms: BQL's goodput is — of BBR's (rule: ≥ 98 %)")
    none = verdict_of_all([at("0 ms", math.nan), at("100 ms", math.nan)])
    assert none.verdict is Verdict.UNTESTED and none.reason.startswith("undecided for 0 ms: BQL's goodput is —")


def test_conditions_at_one_point_tell_the_one_that_fails():
    queue_ok = check(179e3, "<", 1.16e6, "BQL's mean queue {} vs BBR's {limit}", lambda b: fmt_bytes(b, sig=3))
    rate_bad = check(0.818, "≥", 0.98, "BQL's goodput is {} of BBR's", pct)
    c = all_of(queue_ok, rate_bad, where="0 ms")
    assert c.holds is False and c.said == "BQL's goodput is 81.8 % of BBR's (rule: ≥ 98 %)"
    assert all_of(queue_ok, check(1.02, "≥", 0.98, "{}", pct)).holds is True
    assert all_of(queue_ok, check(math.nan, "≥", 0.98, "{}", pct)).holds is None


def test_the_studies_reasons_follow_their_numbers():
    """Contrary numbers: each study's reason names the failing point and its number."""
    ns = [1, 10, 20]
    behind = one(dc_incast.claims(_incast(False), ns), "BBR significantly ahead", "drop-tail")
    assert behind.verdict is Verdict.DISAGREES
    assert behind.reason.startswith("fails for n = 10: BBR − CUBIC -300 ± 6 Mbit/s, significantly behind; for n = 20")
    ahead = one(dc_incast.claims(_incast(True), ns), "BBR significantly ahead", "drop-tail")
    assert ahead.reason.startswith("holds for n = 10: BBR − CUBIC +300 ± 6 Mbit/s, a significant lead; for n = 20")
    falls = one(dc_incast.claims(_incast(True), ns), "throughput falls", "drop-tail")
    assert falls.verdict is Verdict.PARTLY and "fails for BBRv1: the mean stays within 1 % (940 Mbit/s" in falls.reason

    slow = one(esnet_100g.claims(_esnet(20.0), 12.0, "100G", buffer_ms=5.0), "100G: throughput")
    assert slow.reason.startswith("fails for 1 stream unpaced: BBR 20.0 Gbit/s vs CUBIC 30.0 Gbit/s; for 8 streams")
    fast = one(esnet_100g.claims(_esnet(45.0), 12.0, "100G", buffer_ms=5.0), "100G: throughput")
    assert fast.reason.startswith("holds for 1 stream unpaced, 8 streams unpaced and 8 streams paced at 12 Gbit/s")

    def tengig(bql: float, bbr: float) -> Claim:
        rows = [dict(cc="bql", rtt_ms=r, goodput_bps=bql) for r in (0.15, 100)]
        rows += [
            dict(cc=bql_vs_bbr.BBR, rtt_ms=0.15, goodput_bps=bbr),
            dict(cc=bql_vs_bbr.BBR, rtt_ms=100, goodput_bps=1e9),
        ]
        [cl] = bql_vs_bbr.tengig_claims(pd.DataFrame(rows))
        return cl

    cl = tengig(8e9, 9.4e9)
    assert cl.verdict is Verdict.PARTLY
    assert cl.reason == (
        "holds for 100 ms: BQL − BBR goodput 7.00 Gbit/s (rule: > 0); "
        "fails for 0 ms (150 µs): BQL − BBR goodput -1.40 Gbit/s (rule: > 0)"
    )
    assert tengig(9.5e9, 9.4e9).verdict is Verdict.AGREES and "fails" not in tengig(9.5e9, 9.4e9).reason

    lacking = esnet_100g.buffer_claims(_esnet(45.0), (5.0,))[0]
    assert lacking.verdict is Verdict.UNTESTED and lacking.reason.startswith("one buffer (5 ms) in this configuration")


def test_the_pages_show_each_verdicts_reason():
    """REPORT.md and the HTML page show claims.csv's reason beside the verdict; a claims.csv written
    before the column existed still reads."""
    from bbrlab.report.pages import claims_table as html_claims_table
    from bbrlab.reproduce.claims import claims_table

    cl = Claim(
        "BQL at BBR's rate",
        "yes",
        "x",
        "≥ 98 %",
        verdict_of_all(
            check(x, "≥", 0.98, "BQL's goodput is {} of BBR's", pct, where=w)
            for w, x in (("0 ms", 0.8), ("100 ms", 1.0))
        ),
        paper_value="yes",
        bbrlab_value=cell(num(80, "%", label="0 ms"), num(100, "%", label="100 ms")),
    )
    why = "holds for 100 ms: BQL's goodput is 100 % of BBR's (rule: ≥ 98 %); fails for 0 ms: BQL's goodput is 80.0 %"
    assert f"| partly | {why}" in claims_table([cl])
    page = html.unescape(str(html_claims_table([cl.csv_row()])))
    assert "<th>why</th>" in page and why in page
    old = {k: v for k, v in cl.csv_row().items() if k != "reason"}
    assert "partly" in str(html_claims_table([old]))
    # A claim checked in several settings: the reason under each setting's verdict.
    rows = [{**cl.csv_row(), "claim": f"BQL at BBR's rate — {f}"} for f in ("lossy", "lossless")]
    rows[1]["reason"] = "holds for 0 and 100 ms"
    pivot = html.unescape(str(html_claims_table(rows)))
    assert why in pivot and "holds for 0 and 100 ms" in pivot


def test_tiny_reasons_say_that_tiny_tests_nothing():
    c = Claim("c", "1", "2", "r", verdict(check(2.0, "<", 1.0, "x {}")), paper_value="1", bbrlab_value="2")
    u = Claim("u", "1", "—", "r", Outcome(Verdict.UNTESTED, "no n = 10 in this grid"), paper_value="1", bbrlab_value="")
    with verdicts_unchecked():
        assert c.csv_row()["reason"] == TINY_REASON + "x 2.00 (rule: < 1)"
        assert u.csv_row()["reason"] == "no n = 10 in this grid"
    assert c.csv_row()["reason"] == "x 2.00 (rule: < 1)"


# ------------------------------------------------------------------ dc-incast


def _incast(bbr_ahead: bool, cubic_falls: bool = True) -> pd.DataFrame:
    """BBR keeps the link busy while CUBIC falls with n — or the reverse; or both flat."""
    rows = []
    for fabric in ("lossless", "store-and-forward"):
        for n in (1, 10, 20):
            for cc in ("cubic", DC_BBR):
                good, bad = 940e6, (940e6 - 30e6 * n if cubic_falls else 940e6)
                mean = (good if cc == DC_BBR else bad) if bbr_ahead else (bad if cc == DC_BBR else good)
                rows.append(
                    dict(
                        fabric=fabric,
                        cc=cc,
                        n=n,
                        mean_bps=mean,
                        ci_bps=5e6,
                        samples=5,
                        frac75=0.9 if mean == good else 0.2,
                        rto=1.0,
                        drops=10.0,
                        min_flow_bps=mean / n,
                        slow_quarter_bps=mean / n,
                    )
                )
    d = pd.DataFrame(rows)
    # The exact aggregate: what the reading would be without the Waterloo DC study's integer
    # division.
    return d.assign(true_mean_bps=d["mean_bps"], true_ci_bps=d["ci_bps"], true_frac75=d["frac75"])


def test_incast_verdict_and_sentence_flip_with_the_lead():
    ns = [1, 10, 20]
    ahead, behind = dc_incast.claims(_incast(True), ns), dc_incast.claims(_incast(False), ns)
    for cl, want in ((ahead, Verdict.AGREES), (behind, Verdict.DISAGREES)):
        assert one(cl, "BBR significantly ahead", "drop-tail").verdict is want
        assert one(cl, "n = 20: fraction", "drop-tail").verdict is want
    text_ahead, text_behind = dc_incast._explain(_incast(True), ns), dc_incast._explain(_incast(False), ns)
    assert "BBRv1 is ahead of CUBIC at every n (10, 20)" in text_ahead
    assert "BBR ahead for n ≥ 10) appears on this fabric" in text_ahead
    assert "BBRv1 is behind CUBIC at every n (10, 20): the reverse of the Waterloo Figure 7" in text_behind
    assert "CUBIC's mean falls from 910 Mbit/s at n = 1 to 340 Mbit/s at n = 20" in text_ahead
    assert "BBRv1's mean falls from 910 Mbit/s" in text_behind and "CUBIC's mean stays within 1 %" in text_behind
    for text in (text_ahead, text_behind):
        assert " none" not in text and "[" not in text


def test_incast_falling_vs_flat_throughput():
    ns = [1, 10, 20]
    flat = _incast(True, cubic_falls=False)
    falls = _incast(True, cubic_falls=True)
    # Both flat: the decline claim disagrees and the text says both stay; CUBIC falling: partly.
    assert one(dc_incast.claims(flat, ns), "throughput falls", "drop-tail").verdict is Verdict.DISAGREES
    assert one(dc_incast.claims(falls, ns), "throughput falls", "drop-tail").verdict is Verdict.PARTLY
    both_fall = falls.copy()
    both_fall.loc[both_fall["cc"] == DC_BBR, "mean_bps"] = 940e6 - 20e6 * both_fall["n"]
    assert one(dc_incast.claims(both_fall, ns), "throughput falls", "drop-tail").verdict is Verdict.AGREES
    t_flat, t_falls, t_both = (dc_incast._explain(d, ns) for d in (flat, falls, both_fall))
    assert "CUBIC's mean stays within 1 % (940 Mbit/s at n = 1 → 940 Mbit/s at n = 20)" in t_flat
    assert "does not reproduce the Waterloo study's decline" in t_flat
    assert "reproduces only partly the Waterloo study's decline" in t_falls
    assert "bbrlab reproduces the Waterloo study's decline" in t_both
    assert "What the model leaves out" in t_flat and "What the model leaves out" not in t_both
    # A difference inside the confidence intervals is not a lead, whatever its sign.
    noisy = _incast(True)
    noisy["ci_bps"] = 2e9
    assert one(dc_incast.claims(noisy, ns), "BBR significantly ahead", "drop-tail").verdict is Verdict.DISAGREES
    assert "BBRv1 is level with CUBIC at every n (10, 20)" in dc_incast._explain(noisy, ns)
    # ... nor is a significant difference of 0.5 % near the ceiling (tiny intervals), nor such a decline.
    tight = _incast(True, cubic_falls=False)
    tight["ci_bps"] = 1e5
    tight.loc[(tight["cc"] == DC_BBR) & (tight["n"] > 1), "mean_bps"] = 945e6
    tight.loc[(tight["cc"] == "cubic") & (tight["n"] > 1), "mean_bps"] = 936e6
    assert one(dc_incast.claims(tight, ns), "BBR significantly ahead", "drop-tail").verdict is Verdict.DISAGREES
    assert one(dc_incast.claims(tight, ns), "throughput falls", "drop-tail").verdict is Verdict.DISAGREES
    text = dc_incast._explain(tight, ns)
    assert "BBRv1 is level with CUBIC at every n (10, 20)" in text and "CUBIC's mean stays within 1 %" in text


# ------------------------------------------------------------------ dc-query


def _query(lossless_ratio: float, bbr_bg: float, cubic_bg: float = 0.5) -> pd.DataFrame:
    rows = []
    for fabric in ("lossless", "store-and-forward"):
        for bg in (False, True):
            for n in (1, 5, 20):
                for cc in ("cubic", DC_BBR):
                    mean = 0.009 * (2 if bg else 1) * (lossless_ratio if cc == DC_BBR and fabric == "lossless" else 1)
                    if fabric != "lossless" and bg:
                        mean = bbr_bg if cc == DC_BBR else cubic_bg
                    rows.append(
                        dict(
                            fabric=fabric,
                            bg=bg,
                            cc=cc,
                            n=n,
                            mean_s=mean,
                            ci_s=0.001,
                            p95_s=mean * 1.1,
                            median_s=mean,
                            completed=10,
                            requested=10,
                        )
                    )
    return pd.DataFrame(rows)


def test_query_agrees_vs_disagrees():
    plan = dc_query.Plan(reps=10, ns_nobg=(1, 5, 20), ns_bg=(1, 5, 20), n_cdf=20)
    same, faster = _query(1.0, 0.05), _query(0.5, 0.05)
    claim = "with background: BBR below CUBIC in mean and p95, most at small n"
    assert one(dc_query.claims(same, plan), claim, LOSSLESS).verdict is Verdict.DISAGREES
    assert one(dc_query.claims(faster, plan), claim, LOSSLESS).verdict is Verdict.AGREES
    t_same, t_faster = dc_query._explain(same, plan), dc_query._explain(faster, plan)
    assert "algorithm-blind" in t_same and "cannot come from the PAUSE mechanism" in t_same
    assert "algorithm-blind" not in t_faster and "cannot come from the PAUSE mechanism" not in t_faster
    assert "BBRv1's mean latency is below CUBIC's at every n (1, 5, 20) with one background" in t_faster
    # Store-and-forward with a background flow: BBR far below CUBIC, or far above.
    below_, above_ = _query(1.0, 0.05, 0.5), _query(1.0, 0.5, 0.05)
    assert one(dc_query.claims(below_, plan), claim, "drop-tail").verdict is Verdict.AGREES
    assert one(dc_query.claims(above_, plan), claim, "drop-tail").verdict is Verdict.DISAGREES
    assert "BBRv1's mean latency is below CUBIC's at every n (1, 5, 20)." in dc_query._explain(below_, plan)
    assert "BBRv1's mean latency is above CUBIC's at every n (1, 5, 20)." in dc_query._explain(above_, plan)


# ------------------------------------------------------------------ dc-convergence


def _levels(bbr_droptail: float, bbr_lossless: float = 0.99) -> pd.DataFrame:
    rows = []
    for fabric in dc_convergence.FABRICS:
        for cc in ("cubic", DC_BBR):
            j = (bbr_lossless if is_lossless(fabric) else bbr_droptail) if cc == DC_BBR else 0.99
            rows += convergence_levels(fabric, cc, j)
    return pd.DataFrame(rows)


def test_convergence_open_question_flips():
    question = "open question"
    worse, better = _levels(0.5), _levels(0.95, bbr_lossless=0.5)
    assert one(dc_convergence.claims(worse), question).verdict is Verdict.DISAGREES
    assert one(dc_convergence.claims(better), question).verdict is Verdict.AGREES
    assert one(dc_convergence.claims(worse), "BBR converges poorly", "128 KB").verdict is Verdict.AGREES
    assert one(dc_convergence.claims(_levels(0.98)), "BBR converges poorly", "128 KB").verdict is Verdict.DISAGREES
    a_worse, a_better, a_same = (dc_convergence._answer(x) for x in (worse, better, _levels(0.98)))
    assert "not in the direction the Waterloo authors suspected" in a_worse and "Drops are what break" in a_worse
    assert "in the direction the Waterloo authors suspected: BBRv1 converges better with drops" in a_better
    assert "In bbrlab, no" in a_same and "Drops are what break" not in a_same
    # The deep-buffer mechanism (overflow, RTOs) is told only where BBRv1 converges poorly there.
    assert "the port overflows" in a_worse and "the port overflows" not in a_same
    assert "With PAUSE BBRv1 already converges poorly" in a_better
    # Better with one drop-tail buffer only: the claim holds partly, and the answer names both.
    mixed = better.copy()
    others = [f for f in dc_convergence.FABRICS if not is_lossless(f) and f != "store-and-forward-deep"]
    mixed.loc[mixed["fabric"].isin(others) & (mixed["cc"] == DC_BBR), "jain_per_second"] = 0.5
    assert one(dc_convergence.claims(mixed), question).verdict is Verdict.PARTLY
    assert (
        "converges better with drops (1 MB drop-tail); with the PAUSE to hosts only (racks), PAUSE ignored by NICs, "
        "1 MB shared, α = 1 and 128 KB drop-tail buffer it moves by less than 0.1" in dc_convergence._answer(mixed)
    )


# ------------------------------------------------------------------ wan-loss


def _grid(cubic0: float, bbr0: float, bbr15: float = 150e6, cubic15: float = 1.3e6) -> pd.DataFrame:
    rows = []
    for buffers in ("blog", "unlimited"):
        for loss, c, b in ((0.0, cubic0, bbr0), (1.5, cubic15, bbr15)):
            for cc, g in (("cubic", c), ("bbr1", b)):
                rows.append(dict(buffers=buffers, rtt_ms=140, loss_pct=loss, cc=cc, goodput_bps=g, retransmits=0))
    return pd.DataFrame(rows)


def test_wan_loss_verdicts_and_sentences_flip():
    like, unlike = _grid(340e6, 335e6), _grid(100e6, 900e6, bbr15=1.5e6)
    cl_like, cl_unlike = by_name(wan_loss.claims(like)), by_name(wan_loss.claims(unlike))
    far = "140 ms, 1.5 % loss: BBR keeps far more throughput than CUBIC"
    assert cl_like[far] is Verdict.AGREES and cl_unlike[far] is Verdict.DISAGREES
    assert (
        cl_like["140 ms, no loss: CUBIC"] is Verdict.AGREES and cl_unlike["140 ms, no loss: CUBIC"] is Verdict.DISAGREES
    )
    t_like, t_unlike = wan_loss._commentary(like, 10), wan_loss._commentary(unlike, 10)
    assert "**The loss-free plateau is the receive window.**" in t_like and "as in the blog" in t_like
    assert "**The loss-free plateau.**" in t_unlike and "Only BBRv1 comes within 20 %" in t_unlike
    assert "bbrlab reproduces the blog's finding that BBR keeps far more" in t_like
    assert "bbrlab does not reproduce the blog's finding" in t_unlike
    lossy = _grid(340e6, 335e6)
    lossy["retransmits"] = 5
    assert "slow start fills it without a loss" in t_like and "slow start overflows it" in wan_loss._commentary(
        lossy, 10
    )


def test_wan_loss_patch_series_claims():
    assert wan_loss.patch_claims(None)[0].verdict is Verdict.UNTESTED
    b = pd.DataFrame([dict(cc="cubic", goodput_bps=3.0e6), dict(cc="bbr1", goodput_bps=9.0e9)])
    assert wan_loss.patch_claims(b)[0].verdict is Verdict.AGREES
    b.loc[1, "goodput_bps"] = 2e9
    assert wan_loss.patch_claims(b)[0].verdict is Verdict.PARTLY
    sweep = pd.DataFrame(
        [dict(cc="cubic", loss_pct=p, goodput_bps=g) for p, g in ((1.0, 20e6), (15.0, 0.1e6))]
        + [dict(cc="bbr1", loss_pct=p, goodput_bps=g) for p, g in ((1.0, 92e6), (15.0, 79e6))]
    )
    got = by_name(wan_loss.sweep_claims(sweep, ("cubic", "bbr1"), (1.0, 15.0)))
    assert got["CUBIC drops by orders of magnitude"] is Verdict.AGREES
    assert got["below 15 % loss BBR fully uses the path, link · (1 − p)"] is Verdict.AGREES
    sweep.loc[(sweep["cc"] == "cubic") & (sweep["loss_pct"] == 15.0), "goodput_bps"] = 10e6
    assert (
        by_name(wan_loss.sweep_claims(sweep, ("cubic", "bbr1"), (1.0, 15.0)))["CUBIC drops by orders of magnitude"]
        is Verdict.DISAGREES
    )


# ------------------------------------------------------------------ many-flows-ecn


def _sweep(new_better: bool, drops: float = 0.0) -> pd.DataFrame:
    rows = []
    for n in (160, 320, 1000):
        for cc in ("dctcp", "bbr2", "bbr2_new"):
            good = cc == "bbr2_new" if new_better else cc != "bbr2_new"
            rows.append(
                dict(
                    algo=cc,
                    num_flows=n,
                    retrans_rate=0.001 if good else 0.01,
                    rtt_avg_ms=0.1 if good else 0.3,
                    rtt_p95_ms=0.2 if good else 0.5,
                    throughput_bps=47e9,
                    ce_rate=0.95 if cc == "bbr2" else 0.3,
                    jain=0.95,
                    drops=drops,
                    queue_mean_kb=100.0 if good else 900.0,
                    cwnd_mean_pkts=4.0,
                    inflight_pkts=4.0 * n,
                    tso_chunk_segs=2.0,
                )
            )
    return pd.DataFrame(rows)


def test_many_flows_verdicts_and_sentences_flip():
    cfg = replace(many_flows_ecn.PLANS[Size.FULL], ns=(160, 320, 1000), shallow_ns=(1000,))
    better, worse = _sweep(True), _sweep(False)
    key = ("bbr2_new much lower retransmission rate than DCTCP", "16 MB")
    assert one(many_flows_ecn.claims(better, cfg, better), *key).verdict is Verdict.AGREES
    assert one(many_flows_ecn.claims(worse, cfg, worse), *key).verdict is Verdict.DISAGREES
    assert one(many_flows_ecn.claims(better, cfg, better), "lower average RTT than DCTCP").verdict is Verdict.AGREES
    small = replace(cfg, ns=(4, 12))
    small_df = better[better["num_flows"] == 160].assign(num_flows=12)
    assert one(many_flows_ecn.claims(small_df, small, small_df), *key).verdict is Verdict.UNTESTED
    assert "is below DCTCP's" in many_flows_ecn._why_rtt(better, cfg)
    assert "is not below DCTCP's" in many_flows_ecn._why_rtt(worse, cfg)
    clean = better.assign(retrans_rate=0.0)
    assert "nothing is dropped" in many_flows_ecn._shallow_text(clean, better, cfg)
    dropped = many_flows_ecn._shallow_text(_sweep(True, drops=7.0), better, cfg)
    assert "nothing is dropped" not in dropped and "drops 63 packets" in dropped
    assert "below N · min_cwnd for N = 1000" in many_flows_ecn._shallow_text(better, better, cfg)
    big_buffer = replace(cfg, shallow_buffer_bytes=50_000_000)
    assert "above N · min_cwnd for N = 1000" in many_flows_ecn._shallow_text(better, better, big_buffer)


def test_many_flows_tso_and_ack_claims_flip():
    def tso(on_segs: float) -> pd.DataFrame:
        return pd.DataFrame(
            [
                dict(
                    setup="host-bottleneck",
                    num_flows=1000,
                    algo=cc,
                    autosize=auto,
                    tso_goal_segs=on_segs if auto else 4.0,
                )
                for cc in ("bbr2", "bbr2_new")
                for auto in (False, True)
            ]
        )

    assert many_flows_ecn.tso_claims(tso(44.0))[0].verdict is Verdict.AGREES
    assert many_flows_ecn.tso_claims(tso(4.0))[0].verdict is Verdict.DISAGREES
    cfg = many_flows_ecn.PLANS[Size.TINY]

    def acks(old_p99: float) -> pd.DataFrame:
        return pd.DataFrame(
            [
                dict(algo=cc, faster_acks=fast, rpc_p99_ms_median_flow=1.0 if fast else old_p99, rpc_mean_ms=0.5)
                for cc in cfg.ack_ccs
                for fast in (False, True)
            ]
        )

    assert many_flows_ecn.ack_claims(acks(2.0), cfg)[0].verdict is Verdict.AGREES
    assert many_flows_ecn.ack_claims(acks(1.0), cfg)[0].verdict is Verdict.DISAGREES


def test_many_flows_host_claims_flip():
    """Each optimization compared off → on with the other one on: only the both-on rows differ, so
    reading any other pair of rows finds no saving."""

    def hosts(cpu_on: float, rpc_ms_on: float) -> pd.DataFrame:
        return pd.DataFrame(
            [
                dict(
                    setup=setup,
                    algo=cc,
                    autosize=auto,
                    fast_path=fast,
                    num_flows=1000,
                    sender_cpu_ns_per_mb=cpu_on if auto and fast else 10e3,
                    rpc_mean_ms=rpc_ms_on if auto and fast else 1.0,
                )
                for setup in ("host-bottleneck", "rpc")
                for cc in ("bbr2", "bbr2_new")
                for auto, fast in ((True, True), (False, True), (True, False))
            ]
        )

    def verdicts(h: pd.DataFrame) -> list[Verdict]:
        return [c.verdict for c in many_flows_ecn.host_claims(h)]

    assert verdicts(hosts(8e3, 1.0)) == [Verdict.AGREES, Verdict.AGREES]
    assert verdicts(hosts(12e3, 1.2)) == [Verdict.DISAGREES, Verdict.DISAGREES]
    # cheaper but slower RPCs, or dearer at the same latency: the fast path's claim holds in part
    assert verdicts(hosts(8e3, 1.2))[1] is Verdict.PARTLY
    assert verdicts(hosts(12e3, 1.0))[1] is Verdict.PARTLY


# ------------------------------------------------------------------ esnet-100g, bql-vs-bbr


def _esnet(bbr_gbps: float, buffers: tuple[float, ...] = (5.0,)) -> pd.DataFrame:
    rows = []
    for buf in buffers:
        for streams, cap in ((1, 0.0), (8, 0.0), (8, 12.0)):
            for cc in ("bbr3_linux", "cubic"):
                t = (bbr_gbps if buf == min(buffers) else 31.0) if cc == "bbr3_linux" else 30.0
                rows.append(
                    dict(
                        buffer_ms=buf,
                        cc_name=cc,
                        streams=streams,
                        cap_gbps=cap,
                        tput_mean=t * 1e9,
                        tput_std=1e9 if cc == "bbr3_linux" else 2e9,
                        retr_mean=1e4 if cc == "bbr3_linux" else 1e3,
                        wall_max=1.0,
                    )
                )
    return pd.DataFrame(rows)


def test_esnet_verdicts_flip():
    key = "100G: throughput slightly better with BBR"
    assert one(esnet_100g.claims(_esnet(45.0), 12.0, "100G", buffer_ms=5.0), key).verdict is Verdict.AGREES
    assert one(esnet_100g.claims(_esnet(20.0), 12.0, "100G", buffer_ms=5.0), key).verdict is Verdict.DISAGREES
    assert esnet_100g.buffer_claims(_esnet(45.0), (5.0,))[0].verdict is Verdict.UNTESTED
    # Deep buffer: BBR 31 vs CUBIC 30 (minor) after 45 vs 30 with the shallow one; and the reverse.
    assert esnet_100g.buffer_claims(_esnet(45.0, (5.0, 50.0)), (5.0, 50.0))[0].verdict is Verdict.AGREES
    assert esnet_100g.buffer_claims(_esnet(30.0, (50.0, 5.0)), (5.0, 50.0))[0].verdict is Verdict.PARTLY
    full, tiny = (
        esnet_100g._window_text(esnet_100g.PLANS[Size.FULL]),
        esnet_100g._window_text(esnet_100g.PLANS[Size.TINY]),
    )
    assert "so the window limits one stream" in full and "so the member limits one stream" in tiny


def test_bql_tengig_claim_and_sentence_flip():
    def c(bql: float, bbr: float) -> pd.DataFrame:
        return pd.DataFrame(
            [dict(cc="bql", rtt_ms=0.15, goodput_bps=bql), dict(cc=bql_vs_bbr.BBR, rtt_ms=0.15, goodput_bps=bbr)]
        )

    ahead, behind = c(9e9, 5e9), c(8e9, 9.4e9)
    [cl_a], [cl_b] = bql_vs_bbr.tengig_claims(ahead), bql_vs_bbr.tengig_claims(behind)
    assert cl_a.verdict is Verdict.AGREES and cl_b.verdict is Verdict.DISAGREES
    assert "Even so BQL is ahead of BBR" in bql_vs_bbr._tengig_text(ahead, cl_a)
    assert "Here BBR is not behind BQL at 0 ms (150 µs): bbrlab does not reproduce" in bql_vs_bbr._tengig_text(
        behind, cl_b
    )


# ------------------------------------------------------------------ every study, tiny: claims.csv and REPORT.md agree


def _report_claim_rows(text: str) -> list[tuple[str, str, str, str]]:
    """(claim, rule, verdict, reason) of every claims-table row of REPORT.md: a plain table's rows
    (claim | source | bbrlab | rule | verdict | why), and a table pivoted by setting (claim (rule:
    …) | source | bbrlab: S1 | …, each cell "value: **verdict** — reason") unfolded into one row
    per claim and setting, "<claim> — <setting>" as in claims.csv."""
    rows: list[tuple[str, str, str, str]] = []
    settings: list[str] = []
    for line in text.splitlines():
        if not (line.startswith("| ") and line.rstrip().endswith(" |")):
            settings = [] if not line.startswith("|") else settings
            continue
        cells = [c.replace("\\|", "|") for c in re.split(r" (?<!\\)\| ", line.strip()[2:-2])]
        if cells[0] == "claim":  # a header: a pivoted table's names "<ours>: <setting>" columns
            settings = [] if cells[-1] == "why" else [c.split(": ", 1)[1] for c in cells[2:]]
        elif settings and len(cells) == 2 + len(settings):
            claim, _, rule = cells[0].partition(" (rule: ")
            for setting, told in zip(settings, cells[2:]):
                m = re.search(r"\*\*([^*]+)\*\*(?: — (.*))?$", told)
                if m and m.group(1) in VERDICTS:
                    rows.append((f"{claim} — {setting}", rule.removesuffix(")"), m.group(1), m.group(2) or ""))
        elif len(cells) == 6 and cells[4] in VERDICTS:
            rows.append((cells[0], cells[3], cells[4], cells[5]))
    return rows


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_claims_csv_matches_the_report(tiny_study, name):
    d = tiny_study(name)
    rows = read_claims_csv(d / "claims.csv")
    assert rows and list(rows[0]) == list(CSV_COLUMNS)
    # (sorted: a table pivoted by setting lists a claim's settings together, claims.csv its rows)
    assert sorted((r["claim"], r["rule"], r["verdict"], r["reason"]) for r in rows) == sorted(
        _report_claim_rows((d / "REPORT.md").read_text())
    )
    for r in rows:
        assert r["verdict"] in VERDICTS and r["paper_value"], r
        # Every claim says why: tested ones, that tiny tests nothing and what the numbers gave;
        # untested ones, what is missing.
        assert r["reason"], r
        assert r["reason"].startswith(TINY_REASON) == (r["verdict"] != "not tested"), r
        # Our side is numbers wherever the claim was tested.
        assert (r["bbrlab_value"] == "") == (r["verdict"] == "not tested"), r
        if r["bbrlab_value"]:
            assert parse_cell(r["bbrlab_value"]) is not None, r["bbrlab_value"]
    report = (d / "REPORT.md").read_text()
    assert not re.search(r"\bin (none|\[\])", report) and "n in [" not in report


def test_incast_tool_reading_is_the_study_aggregators_integer_division():
    # One flow at the goodput ceiling reads 936 Mbit/s, as every one of the Waterloo DC study's 100
    # n = 1 samples did for both algorithms (its CSVs): the ceiling and the division agree with its
    # measurement.
    one_flow = dc_incast._equal_shares_reading_bps(1) / 1e6
    assert one_flow == 936 == dc_incast.SEED_READINGS["cubic"][1][0] == dc_incast.SEED_READINGS[DC_BBR][1][0]
    # 20 equal shares of 117.7 bytes/µs: 5.88 → 5 bytes/µs each, 40 Mbit/s, 800 in all.
    assert dc_incast._equal_shares_reading_bps(20) == 800e6
    # Whole bytes per µs: 7.999 bytes/µs over 10 s reads 56 Mbit/s, 8.0 reads 64.
    assert dc_incast.tool_reading_bps(79_990_000, 10.0) == 56e6 and dc_incast.tool_reading_bps(80_000_000, 10.0) == 64e6


def test_incast_measurement_text_bounds_the_seeds_idle_link():
    ns = [1, 10, 20]
    text = dc_incast._measurement(_incast(True), ns)
    # CUBIC's seed reading at n = 20 (698.5) + at most 8 Mbit/s per flow (160) = 858.5 < 941.5:
    # its link lost at least 83 Mbit/s; BBR's (805 + 160) is above the ceiling: no bound.
    assert "CUBIC's seed reading at n = 20, 698 Mbit/s, means at most 858 Mbit/s was delivered" in text
    assert "its link lost at least 83 Mbit/s (9%)" in text
    assert "BBRv1's seed reading" not in text
    assert "20 equal shares of the 941 Mbit/s ceiling would read 800 Mbit/s" in text
    assert "a sample's 5 slowest flows" in text and "0.0 Mbit/s for CUBIC and 0.1 Mbit/s for BBRv1" in text
