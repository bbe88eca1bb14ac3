"""Which switch mechanism produces which of the Waterloo DC study's findings: a mechanism × finding
table built from the three data-center studies' claims (dc-query, dc-incast, dc-convergence).

The paper's three findings, each the conjunction of claims the studies already check per fabric
(so a finding's verdict is computed by the same rules as the claims, never written by hand):

- (a) with one background flow BBR's query latency is far below CUBIC's — dc-query's "with
  background: BBR below CUBIC …" claim;
- (b) incast throughput falls with n for both, BBR ahead for n ≥ 10, fewer than half of CUBIC's
  20-sender samples reach 75 % of the link — dc-incast's "throughput falls …", "BBR significantly
  ahead …" and "fraction of samples ≥ 75 %" claims;
- (c) with ≥ 3 staggered flows BBR converges poorly while CUBIC converges — dc-convergence's
  "CUBIC converges well" and "BBR converges poorly …" claims.

A finding *appears* on a fabric when every one of its claims agrees there; it is *partly* there
when none disagrees but not all agree (or one was not testable at this size); it is *not run*
where its study did not run the fabric (``--quick`` runs ``dc_common.QUICK_FABRICS``). Each study calls
:func:`write` after writing its own ``claims.csv``; once all three are present beside each other
it writes ``dc-findings.md`` and ``dc-findings.csv`` into their common parent directory.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from . import dc_common as dc
from .claims import Verdict, read_claims_csv
from .context import Size
from .report import md_table

STUDIES = ("dc-query", "dc-incast", "dc-convergence")


@dataclass(frozen=True)
class Finding:
    key: str
    paper: str
    study: str
    #: how each of its claims begins (the fabric's label ends it)
    claims: tuple[str, ...]


FINDINGS = (
    Finding(
        "a",
        "with one background flow BBR's query latency is far below CUBIC's",
        "dc-query",
        ("with background: BBR below CUBIC",),
    ),
    Finding(
        "b",
        "incast throughput falls with n for both; BBR ahead for n ≥ 10; < half of CUBIC's n = 20 samples "
        "reach 75 % of the link",
        "dc-incast",
        ("throughput falls as n grows", "BBR significantly ahead of CUBIC", "n = 20: fraction of samples"),
    ),
    Finding(
        "c",
        "with ≥ 3 staggered flows BBR converges poorly (flows starve or alternate), CUBIC converges",
        "dc-convergence",
        ("CUBIC converges well", "BBR converges poorly"),
    ),
)


#: The verdict of a (fabric, finding) whose study has no claim on that fabric: its size's plan left
#: the fabric out. Never counted as a verdict (not "no"): nothing was measured.
NOT_RUN = "not run"


def _verdict(verdicts: list[str]) -> str:
    """yes (every claim agrees), no (one disagrees or is missing), partly (otherwise); not checked
    when the claims were not (a study at size tiny)."""
    if verdicts and all(v == Verdict.NOT_CHECKED.value for v in verdicts):
        return Verdict.NOT_CHECKED.value
    if not verdicts or any(v == "disagrees" for v in verdicts):
        return "no"
    return "yes" if all(v == "agrees" for v in verdicts) else "partly"


def table(rows_by_study: dict[str, list[dict[str, str]]], fabrics: list[str]) -> list[dict[str, str]]:
    """One row per (fabric, finding): verdict, and the claims' numbers it rests on; the verdict is
    `NOT_RUN` where the finding's study has no claim at all on the fabric."""
    out = []
    for fabric in fabrics:
        label = dc.FABRIC_LABEL[fabric]
        for f in FINDINGS:
            study = rows_by_study.get(f.study, [])
            got = [
                r for start in f.claims for r in study if r["claim"].startswith(start) and r["claim"].endswith(label)
            ]
            verdicts = [r["verdict"] for r in got] + ["missing"] * (len(f.claims) - len(got))
            ran = any(r["claim"].endswith(label) for r in study)
            out.append(
                {
                    "fabric": fabric,
                    "finding": f.key,
                    "verdict": _verdict(verdicts) if ran else NOT_RUN,
                    "paper_value": "; ".join(r["paper_value"] for r in got),
                    "bbrlab_value": "; ".join(r["bbrlab_value"] for r in got),
                }
            )
    return out


def _not_run(size: Size | None) -> str:
    """How the table's cells say NOT_RUN: with the size that left the fabric out."""
    if size is Size.QUICK:
        return "not run in --quick"
    return f"not run at size {size.value}" if size else NOT_RUN


def write(study_dir: Path, size: Size | None = None) -> Path | None:
    """The joint table, once all three studies have written their claims beside `study_dir`
    (`size`: the size of the study that calls, named where a fabric was not run)."""
    root = study_dir.parent
    paths = {s: root / s / "claims.csv" for s in STUDIES}
    if not all(p.exists() for p in paths.values()):
        return None
    rows = table({s: read_claims_csv(p) for s, p in paths.items()}, dc.FABRICS)
    with (root / "dc-findings.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    verdict = {(r["fabric"], r["finding"]): r["verdict"] for r in rows}
    shown = {v: v for v in verdict.values()} | {NOT_RUN: _not_run(size)}
    grid = [[dc.FABRIC_LABEL[fab]] + [shown[verdict[(fab, f.key)]] for f in FINDINGS] for fab in dc.FABRICS]
    # The best configuration among the fabrics every study ran (a fabric not run has no verdict).
    ran = [fab for fab in dc.FABRICS if all(verdict[(fab, f.key)] != NOT_RUN for f in FINDINGS)]
    left_out = [fab for fab in dc.FABRICS if fab not in ran]
    score = {fab: sum({"yes": 1.0, "partly": 0.5}.get(verdict[(fab, f.key)], 0.0) for f in FINDINGS) for fab in ran}
    if ran:
        best = max(ran, key=lambda fab: score[fab])
        beside = [
            [f"({r['finding']})", r["verdict"], r["paper_value"], r["bbrlab_value"]]
            for r in rows
            if r["fabric"] == best
        ]
        best_text = [
            f"Most findings jointly ({score[best]:g} of {len(FINDINGS)}, partly = ½) among the fabrics every "
            f"study ran: **{dc.FABRIC_LABEL[best]}**. Its numbers beside the paper's:",
            "",
            md_table(["finding", "verdict", "paper", "bbrlab"], beside),
            "",
        ]
    else:
        best_text = ["No fabric was run by all three studies, so no configuration can be compared across findings.", ""]
    not_run_text = (
        [
            f"{_not_run(size).capitalize()}: {'; '.join(dc.FABRIC_SHORT[fab] for fab in left_out)} (`--quick` "
            "runs the baseline and one fabric per lossy buffer mechanism, `dc_common.QUICK_FABRICS`; "
            "`--full` runs every fabric): a cell of a fabric its study did not run holds no verdict.",
            "",
        ]
        if left_out
        else []
    )
    text = "\n".join(
        [
            "# The Waterloo DC study's findings by switch mechanism",
            "",
            __doc__.split("\n\n", 1)[1].split("A finding *appears*")[0].strip(),
            "",
            "A finding is **yes** on a fabric when every one of its claims agrees there, **partly** when none "
            "disagrees but not all agree (or one was not testable at this size), **no** otherwise; **not run** where "
            "its study did not run the fabric at this size. Every "
            "verdict comes from the studies' `claims.csv` (their rules are in each REPORT.md).",
            "",
            md_table(["fabric (mechanism)"] + [f"({f.key})" for f in FINDINGS], grid),
            "",
            *not_run_text,
            *best_text,
            "Every row with its numbers: `dc-findings.csv`.",
            "",
        ]
    )
    out = root / "dc-findings.md"
    out.write_text(text, encoding="utf-8")
    return out


__all__ = ["FINDINGS", "NOT_RUN", "table", "write"]
