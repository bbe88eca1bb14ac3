"""`bbrlab report`: self-contained HTML pages for a run, a sweep, a study, and a reproduce index —
their contents checked against the run's own files, and the pages opened in headless Chromium."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd
import plotruns
import pytest
from bbrlab.cli import cli
from bbrlab.report import write_index, write_report
from bbrlab.report.html import is_index
from bbrlab.report.markdown import BESIDE_BBRLAB, BESIDE_END, BESIDE_SOURCE, to_html
from bbrlab.results.display import fmt_bps
from click.testing import CliRunner

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: Text a summary could carry (an override as typed) that would run or load something if a page
#: printed it unescaped.
EVIL = 'x=<img src="nowhere.png" onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'

SYNTHETIC_REPORT = """# synthetic: a study written by hand for the tests

Source: [the sources](../docs/sources.md#x) — *a note with `code` inside*.

## Numbers

| claim | source | bbrlab | rule | verdict |
|---|---|---|---|---|
| a \\| b | 1 | 2 | a < b | agrees |
| c | 3 | 2 | c < 2 | disagrees |

**Bold lead.** A paragraph
over two lines with <b>raw html</b>.

- one item
- another with `x < y`

![the figure](figure.png)

![missing](nothere.png)
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = plotruns.quick(tmp_path_factory.mktemp("report-run") / "run", ["duration=1s", "flows.0.cc=cubic"], plots=True)
    # What `bbrlab run` records about provenance, plus an override no page may print unescaped.
    summary = json.loads((d / "summary.json").read_text())
    summary["run"].update(
        overrides=["duration=1s", "flows.0.cc=cubic", EVIL],
        scenario_file="examples/quick.toml",
        git_commit="0123abcd+dirty",
    )
    (d / "summary.json").write_text(json.dumps(summary))
    return d


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return plotruns.sweep(tmp_path_factory.mktemp("report-sweep") / "sweep")


def _claims(path: Path, rows: list[tuple[str, str, str, str, str]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["claim", "paper_value", "bbrlab_value", "rule", "verdict"])
        w.writerows(rows)


@pytest.fixture(scope="module")
def study_out(tiny_study, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reproduce output directory: the tiny wan-loss study (with a claims.csv written here) and
    a hand-written study without one."""
    out = tmp_path_factory.mktemp("report-studies") / "out"
    shutil.copytree(tiny_study("wan-loss"), out / "wan-loss")
    _claims(
        out / "wan-loss" / "claims.csv",
        [
            ("140 ms, no loss: CUBIC", "347 Mbit/s", "14.7 Mbit/s", "within ±25%", "agrees"),
            ("140 ms, 1.5 % loss: BBR", "153 Mbit/s", "6.0 Mbit/s", "within ±25%", "disagrees"),
            ("below 15 % loss BBR fully uses the path", "yes", "61%", "≥ 90 %", "partly"),
            ("<script>not a claim</script>", "-", "-", "-", "not tested"),
        ],
    )
    (out / "synthetic").mkdir()
    (out / "synthetic" / "REPORT.md").write_text(SYNTHETIC_REPORT)
    shutil.copy(next((out / "wan-loss").glob("*.png")), out / "synthetic" / "figure.png")
    (out / "damaged").mkdir()  # a claims.csv without the agreed columns must not stop the index
    (out / "damaged" / "REPORT.md").write_text("# damaged\n")
    (out / "damaged" / "claims.csv").write_text("a,b\n1,2\n")
    write_index(out)
    return out


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _assert_self_contained(page: str) -> None:
    srcs = re.findall(r'<(?:img|script|link|iframe)[^>]*\s(?:src|href)="([^"]*)"', page)
    assert srcs and all(s.startswith("data:") for s in srcs), [s[:40] for s in srcs if not s.startswith("data:")]
    assert "<script>document.title" not in page and '<img src="nowhere.png"' not in page


def test_run_report_shows_the_summary_figures_provenance_and_scenario(run_dir):
    out = write_report(run_dir)
    assert out == run_dir / "report.html"
    page = out.read_text()
    _assert_self_contained(page)
    text = _text(page)
    flows = pd.read_parquet(run_dir / "flows.parquet")
    assert fmt_bps(float(flows["goodput_bps"].iloc[0])) in text  # the terminal table's figure
    assert "0123abcd+dirty" in text and "examples/quick.toml" in text and "flows.0.cc=cubic" in text
    assert EVIL in text  # shown, as text
    assert (run_dir / "scenario.toml").read_text().strip() in text
    pngs = sorted(run_dir.glob("*.png"))
    assert len(pngs) >= 4 and page.count('src="data:image/png;base64,') == len(pngs)


def test_run_report_out_option_and_errors(run_dir, tmp_path):
    r = CliRunner().invoke(cli, ["report", str(run_dir), "--out", str(tmp_path / "x" / "page.html")])
    assert r.exit_code == 0 and (tmp_path / "x" / "page.html").is_file(), r.output
    for args, text in (
        (["report", str(tmp_path / "none")], "no such directory"),
        (["report", str(tmp_path)], "not a run directory"),
        (["report", str(run_dir), "--out", str(tmp_path)], "a directory"),
    ):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and "Traceback" not in r.output and text in r.output, r.output


def test_study_report_colours_verdicts_from_claims_csv(study_out):
    study = study_out / "wan-loss"
    page = (study / "report.html").read_text()
    _assert_self_contained(page)
    assert re.search(r'<td class="verdict agrees">agrees</td>', page)
    assert re.search(r'<td class="verdict partly">partly</td>', page)
    assert "&lt;script&gt;not a claim" in page
    # REPORT.md's figures are embedded once each (the report shows them, "More figures" does not).
    assert page.count("data:image/png;base64,") == len(list(study.glob("*.png")))
    # The verdict follows claims.csv: flip one and the colour flips with it.
    with open(study / "claims.csv") as f:
        rows = list(csv.reader(f))
    rows[1][4] = "disagrees"
    _claims(study / "claims.csv", [tuple(r) for r in rows[1:]])
    page = Path(write_report(study)).read_text()
    cubic_row = page[page.index("140 ms, no loss: CUBIC") :]
    assert re.match(r'.*?<td class="verdict disagrees">disagrees</td>', cubic_row, re.S)
    assert page.count('class="verdict agrees"') == 0


def test_markdown_rendering_escapes_and_keeps_the_structure(study_out):
    page = (study_out / "synthetic" / "report.html").read_text()
    assert "<h3>Numbers</h3>" in page  # REPORT.md's ## is the page's h3 (its # is the page title)
    assert "<td>a | b</td>" in page and '<td class="verdict disagrees">disagrees</td>' in page
    assert "<strong>Bold lead.</strong>" in page and "&lt;b&gt;raw html&lt;/b&gt;" in page
    assert "<em>a note with <code>code</code> inside</em>" in page
    assert "<li>another with <code>x &lt; y</code></li>" in page
    assert page.count("data:image/png;base64,") == 1 and "image not embedded: nothere.png" in page
    assert 'href="../docs/sources.md#x"' in page  # rebased from the study to the page: same directory
    moved = to_html("[s](../docs/sources.md#x)", base=study_out / "synthetic", page_dir=study_out)
    assert 'href="docs/sources.md#x"' in moved
    assert "javascript" not in to_html("[x](javascript:alert(1))")


def test_side_by_side_blocks_become_two_columns(study_out):
    """REPORT.md's marker comments (the source's figure, then bbrlab's) become one div.beside with
    the two sides in it; the markers themselves never show, a stray one opens or closes nothing,
    and a block left open is closed, so the page stays well formed."""
    md = "\n\n".join(
        [
            BESIDE_SOURCE,
            "**Source, Figure 1**: what it shows",
            "- a list item",
            BESIDE_BBRLAB,
            "**bbrlab**: ours",
            BESIDE_END,
            "after the block",
        ]
    )
    html = str(to_html(md))
    assert html.count('<div class="beside">') == 1 and "<!--" not in html
    source = html.index('<div class="beside-source">')
    ours = html.index('<div class="beside-bbrlab">')
    assert source < html.index("what it shows") < html.index("a list item") < ours < html.index("ours</p>")
    assert html.index("</div></div>") < html.index("after the block")
    assert html.count("<div") == html.count("</div>") == 3
    stray = str(to_html(f"{BESIDE_END}\n\ntext\n\n{BESIDE_BBRLAB}\n\n{BESIDE_SOURCE}\n\nleft open"))
    assert stray.count("<div") == stray.count("</div>") == 2 and stray.index("text") < stray.index("<div")
    # A real study's page: the blog's table beside bbrlab's heatmaps, its numbers re-plotted.
    page = (study_out / "wan-loss" / "report.html").read_text()
    block = page[page.index('<div class="beside">') :]
    block = block[: block.index('<div class="beside-bbrlab">')]
    assert "Toonk BBR blog, results table" in block and 'alt="Toonk BBR blog, results table, re-plotted' in block


def test_reproduce_writes_an_index_of_every_study(tiny_study, study_out):
    # The hook: run_studies (what `bbrlab reproduce` calls) left an index beside the study.
    assert is_index(tiny_study("wan-loss").parent / "index.html")
    assert (tiny_study("wan-loss") / "report.html").is_file()
    page = (study_out / "index.html").read_text()
    text = _text(page)
    assert "no claims.csv" in text and "1 agrees" in text and "1 disagrees" in text and "1 not tested" in text
    links = re.findall(r'href="([^"]+report\.html)"', page)
    assert {Path(link).parts[0] for link in links} == {"wan-loss", "synthetic", "damaged"}
    assert "claims.csv damaged" in text and "no column 'claim'" in text
    assert all((study_out / link).is_file() for link in links)
    r = CliRunner().invoke(cli, ["report", str(study_out)])
    assert r.exit_code == 0 and "index.html" in r.output, r.output


def test_sweep_report_lists_points_and_draws_across_runs(sweep_dir):
    page = write_report(sweep_dir).read_text()
    _assert_self_contained(page)
    assert 'class="sortable"' in page and "topology.bottleneck.buffer" in page
    links = re.findall(r'<a href="([^"]+)">runs/', page)
    assert len(links) == 4 and all((sweep_dir / link / "summary.json").is_file() for link in links)
    assert page.count("data:image/png;base64,") >= 6  # goodput, cwnd, RTT, queue, Jain, scatter, CDF


def test_self_contained_sweep_report_embeds_its_runs(sweep_dir, tmp_path):
    """`report --self-contained`: the points table links into the page, where each run's summary
    and figures are, so the file works sent on its own (nothing links to runs/ beside it)."""
    out = tmp_path / "alone" / "sweep.html"
    out.parent.mkdir()
    r = CliRunner().invoke(cli, ["report", str(sweep_dir), "--out", str(out), "--self-contained"])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    _assert_self_contained(page)
    links = re.findall(r'<a href="([^"]+)">(runs/[^<]+)</a>', page)
    assert len(links) == 4 and all(h.startswith("#run-") for h, _ in links)
    for h, run in links:
        ids = re.findall(rf'<details id="{re.escape(h[1:])}">(.*?)</details>', page, flags=re.S)
        assert len(ids) == 1 and "goodput" in ids[0] and f"<code>{run}</code>" in ids[0]
        # the run's own figures, embedded (as many as it drew)
        assert ids[0].count("data:image/png;base64,") == len(list((sweep_dir / run).glob("*.png")))
    # the plain page still links to the run directories; a study has no self-contained form
    assert all(
        not h.startswith("#") for h in re.findall(r'<a href="([^"]+)">runs/', write_report(sweep_dir).read_text())
    )
    study = tmp_path / "study"
    study.mkdir()
    (study / "REPORT.md").write_text("# a study\n")
    r = CliRunner().invoke(cli, ["report", str(study), "--self-contained"])
    assert r.exit_code == 2 and "--self-contained: for a run or a sweep" in r.output


def test_sweep_report_leads_with_the_points_mean_and_sd_and_metric_figures(sweep_dir):
    page = write_report(sweep_dir).read_text()
    found, points = page.index("What the sweep found"), page.index("Points (")
    assert found < points and "goodput (Mbit/s)" in page[found:points] and " ± " in page[found:points]
    assert 'alt="by buffer"' in page[found:points] and page[found:points].count("data:image/png;base64,") == 1
    # The full table: one unit per column, in its header (not "46.39 Mbit/s" beside 0.9277).
    full = page[points : page.index("Figures across")]
    assert "goodput_bps (Mbit/s)" in full and "Mbit/s</td>" not in full


# ------------------------------------------------------------------ in a real browser


def _browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    missing = (
        "playwright (pip install -e '.[test]')"
        if sync_playwright is None
        else (None if os.access(CHROMIUM, os.X_OK) else f"{CHROMIUM} (apt-get install chromium)")
    )
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} is missing; .ci/run installs it, so CI must have it")
        pytest.skip(f"{missing} is not installed here")
    return sync_playwright


def _non_blank(png: bytes) -> bool:
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    colours = img.getcolors(maxcolors=img.width * img.height)
    top = max(n for n, _ in colours)
    return len(colours) > 50 and top < 0.95 * img.width * img.height


def _beside_layout(tab) -> str:
    """Where the first side-by-side block's two sides are on the page: "side by side" (the same
    top, the source's left of bbrlab's) or "stacked" (bbrlab's below the source's)."""
    src, ours = (tab.locator(f".beside > .beside-{side}").first.bounding_box() for side in ("source", "bbrlab"))
    if abs(src["y"] - ours["y"]) < 1 and src["x"] + src["width"] <= ours["x"]:
        return "side by side"
    if ours["y"] >= src["y"] + src["height"]:
        return "stacked"
    return f"neither: {src} {ours}"


def test_pages_render_in_headless_chromium(run_dir, sweep_dir, study_out, tmp_path):
    sync_playwright = _browser()
    pages = {
        "run": write_report(run_dir),
        "study": study_out / "wan-loss" / "report.html",
        "synthetic": study_out / "synthetic" / "report.html",
        "index": study_out / "index.html",
        "sweep": write_report(sweep_dir),
        "sweep-self-contained": write_report(sweep_dir, tmp_path / "alone.html", self_contained=True),
    }
    # BBRLAB_SCREENSHOTS=DIR keeps the screenshots (the report pages as a reader sees them).
    keep = Path(os.environ["BBRLAB_SCREENSHOTS"]) if os.environ.get("BBRLAB_SCREENSHOTS") else None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bbrlab-chromium-") as profile, sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            for name, path in pages.items():
                tab = ctx.new_page()
                errors: list[str] = []
                requests: list[str] = []
                tab.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
                tab.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                tab.on("request", lambda r, requests=requests: requests.append(r.url))
                tab.goto(path.resolve().as_uri(), wait_until="load")
                widths = tab.evaluate("Array.from(document.images).map(i => i.complete ? i.naturalWidth : 0)")
                shot = tab.screenshot(full_page=True)
                (tmp_path / f"{name}.png").write_bytes(shot)
                if keep is not None:
                    keep.mkdir(parents=True, exist_ok=True)
                    (keep / f"report-{name}.png").write_bytes(shot)
                assert not errors, (name, errors)
                assert all(w > 0 for w in widths), (name, widths)
                assert name == "index" or widths, name
                assert [u for u in requests if not u.startswith(("data:", path.resolve().as_uri()))] == [], name
                assert tab.title() != "pwned", name
                assert _non_blank(shot), name
                if name == "study":  # the source's figure and bbrlab's: side by side, stacked when narrow
                    assert _beside_layout(tab) == "side by side", name
                    tab.set_viewport_size({"width": 600, "height": 900})
                    assert _beside_layout(tab) == "stacked", name
                if name == "sweep":  # a click on a column header sorts the points table
                    column = tab.locator("table.sortable").first.locator("thead th", has_text="seed")
                    column.click()
                    first = tab.locator("table.sortable").first.locator("tbody tr td:nth-child(3)").all_inner_texts()
                    column.click()
                    second = tab.locator("table.sortable").first.locator("tbody tr td:nth-child(3)").all_inner_texts()
                    assert first == sorted(first) and second == sorted(second, reverse=True) and first != second
                tab.close()
        finally:
            ctx.close()
    print(f"{len(pages)} pages rendered and checked in {time.monotonic() - started:.1f} s")
