"""The report pages: a run, a sweep, a study (`bbrlab reproduce`'s OUT/<study>/) and the index of a
reproduce output directory. Each function returns the page's HTML; `bbrlab.report` writes it.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..errors import UserError
from ..results.display import facts_lines, fmt_bps, fmt_bytes, summary_table
from ..results.results import Result
from ..results.rundir import is_complete_run
from ..results.rundir import read_summary as _read_summary
from .cells import by_setting
from .html import INDEX_GENERATOR, Cell, Section, image, kv_table, page, paragraphs, pre, table, verdict_class
from .markdown import referenced_images, to_html

__all__ = ["run_page", "sweep_page", "study_page", "index_page", "study_title", "read_claims", "CLAIM_COLUMNS"]

#: claims.csv as `bbrlab reproduce` writes it (one row per comparison with the source); its
#: ``reason`` column (why the verdict, from the same numbers) is shown when present: a claims.csv
#: written before it had one still reads.
CLAIM_COLUMNS = ("claim", "paper_value", "bbrlab_value", "rule", "verdict")

ProgressFn = Callable[[int, int], None]


def _rel(target: Path, page_dir: Path) -> str:
    return os.path.relpath(target, page_dir)


def _figures(paths: Sequence[Path]) -> Markup:
    # No caption: every bbrlab figure carries its title.
    return Markup("").join(image(p, alt=p.stem.replace("_", " ")) for p in paths)


# ------------------------------------------------------------------ a run


def _rich_table(t: Any) -> Markup:
    """A rich `Table` (the terminal's summary table, display.summary_table) as HTML: the same
    columns, cells and footer, so the page and `bbrlab show` never disagree."""
    cols = list(t.columns)
    header = [str(c.header) for c in cols]
    align = ["right" if c.justify == "right" else "" for c in cols]
    cells = [[str(v) for v in c.cells] for c in cols]
    rows = [list(r) for r in zip(*cells)] if cells else []
    footer = [str(c.footer) for c in cols] if t.show_footer else None
    caption = paragraphs(str(t.title), cls="note") if t.title else Markup("")
    return caption + table(header, rows, footer=footer, align=align)


#: summary.json ``run`` keys in the order the page lists them (the rest follow, alphabetically).
_RUN_KEYS = (
    "backend",
    "seed",
    "overrides",
    "scenario_file",
    "git_commit",
    "bbrlab_version",
    "core_version",
    "python",
    "platform",
    "created",
    "wall_s",
    "sim_end_s",
    "complete",
    "events",
    "data_packets_sent",
    "data_packets_delivered",
    "drops",
    "pause_frames",
    "packets_per_wall_s",
    "events_per_wall_s",
)


#: summary.json ``run`` keys that the page's "How it ran" shows (so "Run facts" leaves them out).
_PROVENANCE_KEYS = frozenset(
    ("scenario_file", "overrides", "seed", "backend", "git_commit", "bbrlab_version", "core_version")
)


def _fact(key: str, value: Any) -> Any:
    if isinstance(value, list):
        return " ".join(str(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return Markup("<code>{}</code>").format(json.dumps(value, sort_keys=True))
    if isinstance(value, float):
        if key.endswith("_bps"):
            return fmt_bps(value)
        if key.endswith("_bytes"):
            return fmt_bytes(value)
        return f"{value:,.4g}" if abs(value) >= 1e4 or value != round(value, 4) else f"{value:g}"
    if isinstance(value, int) and not isinstance(value, bool) and key.endswith("_bytes"):
        return fmt_bytes(value)
    if isinstance(value, int) and not isinstance(value, bool) and key.endswith("_bps"):
        return fmt_bps(value)
    return "null" if value is None else value


def _scenario_facts(d: dict[str, Any]) -> Markup:
    """summary.json's ``scenario`` in words and units ("base RTT: 30 ms", "buffer: 100 packets"),
    the buffer as the one limit that is set; a key this page does not know is listed as it is."""
    from ..units import format_scaled

    def seconds(x: Any) -> str:
        return format_scaled(x, "s", digits=3) if isinstance(x, (int, float)) else str(x)

    def ms(x: Any) -> str:
        return f"{x:g} ms" if isinstance(x, (int, float)) else str(x)

    def pct(x: Any) -> str:
        return f"{100 * x:g} %" if isinstance(x, (int, float)) else str(x)

    def yes_no(x: Any) -> str:
        return "yes" if x is True else "no" if x is False else str(x)

    labels: dict[str, tuple[str, Callable[[Any], Any]]] = {
        "topology": ("topology", str),
        "duration_s": ("duration", seconds),
        "bottleneck_rate_bps": ("bottleneck rate", lambda v: fmt_bps(v, sig=3)),
        "rtt_ms": ("base RTT", ms),
        "bdp_bytes": ("bandwidth-delay product", fmt_bytes),
        "loss": ("random loss", pct),
        "flows": ("flows", str),
        "apps": ("applications", str),
        "workers": ("workers", str),
        "lossless": ("lossless (PAUSE)", yes_no),
        "forwarding": ("forwarding", str),
    }
    rows: list[tuple[str, Any]] = []
    for key, value in d.items():
        if key in ("buffer_bytes", "buffer_packets"):
            if key == "buffer_bytes" or "buffer_bytes" not in d:
                rows.append(("buffer", _buffer_words(d)))
        elif key in labels:
            label, fmt = labels[key]
            rows.append((label, "-" if value is None else fmt(value)))
        else:
            rows.append((key, _fact(key, value)))
    return kv_table(rows)


def _buffer_words(d: dict[str, Any]) -> str:
    """The shared queue's limit: in bytes or in packets, whichever the scenario set."""
    if d.get("buffer_bytes") is not None:
        return fmt_bytes(d["buffer_bytes"])
    if d.get("buffer_packets") is not None:
        return f"{d['buffer_packets']} packets"
    return "unlimited"


def _facts(d: dict[str, Any], order: Sequence[str] = ()) -> Markup:
    keys = [k for k in order if k in d] + sorted(k for k in d if k not in order)
    return kv_table([(k, _fact(k, d[k])) for k in keys])


def _ordered_pngs(d: Path) -> list[Path]:
    from ..plots.plots import PLOTS  # the run's own figures first, in the order the run draws them

    pngs = sorted(d.glob("*.png"))
    return sorted(pngs, key=lambda p: (PLOTS.index(p.name) if p.name in PLOTS else len(PLOTS), p.name))


def _run_summary(s: dict[str, Any]) -> Markup:
    return _rich_table(summary_table(s)) + paragraphs(*facts_lines(s))


def _embedded_runs(sweep_dir: Path, run_dirs: Sequence[str]) -> Markup:
    """Each run of a sweep as a folded part of its page (``report --self-contained``): the run
    page's summary and figures under an anchor the points table links to."""
    parts = []
    for v in dict.fromkeys(run_dirs):
        d = sweep_dir / v
        if not is_complete_run(d):
            continue
        s = _read_summary(d / "summary.json")
        overrides = " ".join((s.get("run") or {}).get("overrides") or []) or "no overrides"
        parts.append(
            Markup('<details id="{}"><summary><code>{}</code> · {}</summary>{}{}</details>').format(
                _run_anchor(v), v, overrides, _run_summary(s), _figures(_ordered_pngs(d))
            )
        )
    return Markup("").join(parts)


def _run_anchor(run_dir: str) -> str:
    return "run-" + re.sub(r"[^A-Za-z0-9_-]", "-", run_dir)


def run_page(run_dir: Path, out: Path) -> str:
    # The page needs summary.json, scenario.toml and the PNGs, not the tables (which can be GBs).
    if not is_complete_run(run_dir):
        Result.load(run_dir)  # raises the UserError that says what is wrong with the directory
    s = _read_summary(run_dir / "summary.json")
    run = s.get("run") or {}
    try:
        scenario_toml = (run_dir / "scenario.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        scenario_toml = None
    sections = []
    sections.append(Section("Summary", _run_summary(s), "summary"))
    pngs = _ordered_pngs(run_dir)
    if pngs:
        sections.append(Section("Figures", _figures(pngs), "figures"))
    overrides = run.get("overrides")
    provenance = [
        ("scenario file", run.get("scenario_file")),
        ("overrides", " ".join(overrides) if overrides else ("none" if overrides is not None else None)),
        ("seed", run.get("seed")),
        ("backend", run.get("backend")),
        ("git commit", run.get("git_commit")),
        ("bbrlab", run.get("bbrlab_version")),
        ("core", run.get("core_version")),
        ("run directory", str(run_dir)),
    ]
    sections.append(Section("How it ran", kv_table(provenance), "provenance"))
    if s.get("scenario"):
        sections.append(Section("Scenario facts", _scenario_facts(s["scenario"]), "scenario-facts"))
    if scenario_toml:
        sections.append(Section("Resolved scenario (scenario.toml)", pre(scenario_toml), "scenario"))
    # The rest of summary.json's ``run``: what "How it ran" lists already is not repeated.
    rest = {k: v for k, v in run.items() if k not in _PROVENANCE_KEYS}
    sections.append(Section("Run facts (the rest of summary.json's run)", _facts(rest, _RUN_KEYS), "run"))
    subtitle = f"run {run_dir.name} · {run.get('backend', 'sim')}, seed {run.get('seed', '-')}"
    return page(f"bbrlab run: {s.get('name') or run_dir.name}", sections, subtitle=subtitle)


# ------------------------------------------------------------------ a sweep


def _point_cell(col: str, value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value):
        if col.endswith("_bps"):
            return Cell(fmt_bps(value), "num", value)
        if col.endswith("_bytes"):
            return Cell(fmt_bytes(value), "num", value)
        return Cell(f"{value:.4g}", "num", value)
    return value


def _points_header(col: str) -> str:
    """A points-table column's name, with the one unit its cells are shown in."""
    from ..sweep.summary import DISPLAY, display

    unit = display(col).unit if col.rpartition(".")[2] in DISPLAY else ""
    return f"{col} ({unit})" if unit else col


def _points_cell(col: str, value: Any) -> Any:
    """A points-table cell in its column's unit (goodput in Mbit/s, shares in %: one unit per
    column, said in the header), sorting by the stored value."""
    from ..sweep.summary import DISPLAY, display

    if isinstance(value, float) and math.isfinite(value) and col.rpartition(".")[2] in DISPLAY:
        d = display(col)
        return Cell(f"{value * d.scale:.{d.digits}f}", "num", value)
    return _point_cell(col, value)


def _sweep_answer(sweep_dir: Path, points: Any) -> Markup | None:
    """The table `bbrlab sweep` prints (axes, then the key metrics as mean ± sd over the seeds, one
    unit per column) and the key metrics drawn against each axis; None for a sweep without axes."""
    from ..runs.runset import sweep_axes
    from ..runs.sweepplot import plot_sweep_metrics
    from ..sweep.summary import key_metrics, point_stats, table_rows

    axes = sweep_axes(sweep_dir, points)
    metrics = key_metrics(points)
    if not axes or not metrics:
        return None
    header, rows = table_rows(point_stats(points, axes, metrics), axes, metrics)
    align = ["left"] * len(axes) + ["right"] * (len(header) - len(axes))
    body = paragraphs("One row per point: mean ± standard deviation over its seeds.", cls="note")
    body += table(header, rows, align=align)
    with tempfile.TemporaryDirectory(prefix="bbrlab-report-") as tmp:
        body += _figures(plot_sweep_metrics(sweep_dir, Path(tmp)))  # embedded before tmp goes
    return body


def sweep_page(
    sweep_dir: Path,
    out: Path,
    progress: ProgressFn | None = None,
    warn: Callable[[str], None] | None = None,
    self_contained: bool = False,
) -> str:
    """The sweep's page; ``self_contained``: its runs' summaries and figures embedded, the points
    table linking to them, so the file stands alone (else it links to the run directories)."""
    from ..runs.multiplot import plot_runs
    from ..runs.runset import read_points

    sections = []
    info: dict[str, Any] = {}
    f = sweep_dir / "sweep.json"
    if f.is_file():
        try:
            info = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise UserError(f"{f}: damaged ({type(e).__name__}: {e})") from None
        if not isinstance(info, dict):
            raise UserError(f"{f}: damaged (a {type(info).__name__}, not an object)")
    axes = info.get("axes")
    if isinstance(axes, dict):
        info = {
            **info,
            "axes": Markup("<br>").join(
                Markup("<code>{}</code>: {}").format(k, ", ".join(map(str, v)) if isinstance(v, list) else v)
                for k, v in axes.items()
            ),
        }
    sections.append(
        Section(
            "Sweep",
            _facts({k: v for k, v in info.items()}) if info else paragraphs("no sweep.json", cls="note"),
            "sweep",
        )
    )
    points = read_points(sweep_dir)
    if points is not None and len(points):
        answer = _sweep_answer(sweep_dir, points)
        if answer is not None:
            sections.append(Section("What the sweep found", answer, "answer"))
        cols = list(points.columns)
        rows = []
        for rec in points.to_dict("records"):
            row = []
            for c in cols:
                v = rec[c]
                if c == "run_dir" and isinstance(v, str) and v and self_contained:
                    row.append(Markup('<a href="#{}">{}</a>').format(_run_anchor(v), v))
                elif c == "run_dir" and isinstance(v, str):
                    row.append(Markup('<a href="{}">{}</a>').format(_rel(sweep_dir / v, out.parent), v))
                else:
                    row.append(_points_cell(c, v))
            rows.append(row)
        header = [_points_header(c) for c in cols]
        sections.append(
            Section(
                f"Points ({len(points)} runs; click a column to sort)", table(header, rows, sortable=True), "points"
            )
        )
    with tempfile.TemporaryDirectory(prefix="bbrlab-report-") as tmp:
        files = plot_runs([sweep_dir], Path(tmp), progress=progress, warn=warn)
        pngs = [p for p in files if p.suffix == ".png"]
        csvs = [p for p in files if p.name == "throughput_delay.csv"]
        body = _figures(pngs)
        if csvs:
            with open(csvs[0], newline="") as fh:
                data = list(csv.reader(fh))
            body += Markup("<h3>Throughput vs delay, per point and algorithm</h3>") + table(
                data[0], [[_point_cell(c, _num(v)) for c, v in zip(data[0], r)] for r in data[1:]], sortable=True
            )
        sections.append(Section("Figures across the sweep's runs", body, "figures"))
    if self_contained and points is not None and "run_dir" in points:
        runs = [v for v in points["run_dir"].tolist() if isinstance(v, str) and v]
        sections.append(
            Section(f"The runs ({len(set(runs))}; click one to open)", _embedded_runs(sweep_dir, runs), "runs")
        )
    return page(f"bbrlab sweep: {sweep_dir.name}", sections, subtitle=str(sweep_dir))


def _num(v: str) -> Any:
    try:
        return float(v)
    except ValueError:
        return v


# ------------------------------------------------------------------ a study


def read_claims(study_dir: Path) -> list[dict[str, str]] | None:
    """claims.csv's rows, or None when the study has none."""
    f = study_dir / "claims.csv"
    if not f.is_file():
        return None
    try:
        with open(f, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise UserError(f"{f}: damaged ({type(e).__name__}: {e})") from None
    missing = [c for c in CLAIM_COLUMNS if rows and c not in rows[0]]
    if missing:
        raise UserError(f"{f}: no column {missing[0]!r}; claims.csv needs the columns {', '.join(CLAIM_COLUMNS)}")
    return rows


def _claim_value(text: str) -> Markup:
    """A value cell, one item a line (not a long semicolon-joined run), numbers as a reader reads them."""
    from .cells import shown_items, shown_unit

    unit = shown_unit(text)  # shared by every item: written once, above them
    head = Markup('<span class="rule">in {}</span><br>').format(unit) if unit else Markup("")
    return head + Markup("<br>").join(shown_items(text, unit=not unit))


def claims_table(rows: list[dict[str, str]]) -> Markup:
    pivot = by_setting(rows)
    if pivot is not None:
        settings, groups = pivot
        body = []
        for claim, first, per_setting in groups:
            # The rule under the claim: a column of its own would squeeze the settings' columns.
            rule = Markup('{}<div class="rule">rule: {}</div>').format(claim, first["rule"])
            cells: list[Any] = [rule, _claim_value(first["paper_value"])]
            for g in per_setting:
                if g is None:
                    cells.append("")
                    continue
                text = _claim_value(g["bbrlab_value"]) + Markup("<br><b>{}</b>").format(g["verdict"])
                cells.append(Cell(text + _reason(g), verdict_class(g["verdict"])))
            body.append(cells)
        wrap = [Markup('<span class="wrap">bbrlab: {}</span>').format(s) for s in settings]
        return table(["claim", "source", *wrap], body)
    body = [
        [
            r["claim"],
            _claim_value(r["paper_value"]),
            _claim_value(r["bbrlab_value"]),
            r["rule"],
            Cell(r["verdict"], f"verdict {verdict_class(r['verdict'])}".strip()),
            r.get("reason", ""),
        ]
        for r in rows
    ]
    return table(["claim", "source", "bbrlab", "rule", "verdict", "why"], body)


def _reason(row: dict[str, str]) -> Markup:
    """Why a setting's verdict, under it (the pivoted table has no column for it)."""
    why = row.get("reason", "")
    return Markup('<div class="rule">{}</div>').format(why) if why else Markup("")


def verdict_counts(rows: list[dict[str, str]]) -> str:
    counts = Counter(r["verdict"].strip() for r in rows)
    return " · ".join(f"{n} {v}" for v, n in counts.most_common()) or "no claims"


def claims_block(study_dir: Path) -> tuple[Markup, str]:
    """A study's claims table (or why there is none) and its verdicts counted in one line. A
    damaged claims.csv is said on the page, not raised: the index of a whole reproduce run must
    not fail on one study's file."""
    try:
        claims = read_claims(study_dir)
    except UserError as e:
        return paragraphs(str(e), cls="warn"), "claims.csv damaged"
    if claims is None:
        return paragraphs("no claims.csv", cls="note"), "no claims.csv"
    return (claims_table(claims) if claims else paragraphs("no claims", cls="note")), verdict_counts(claims)


def study_title(study_dir: Path) -> str:
    """REPORT.md's first heading (the study's title), or the directory's name."""
    f = study_dir / "REPORT.md"
    if f.is_file():
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return study_dir.name


def study_page(study_dir: Path, out: Path) -> str:
    sections = []
    claims, counts = claims_block(study_dir)
    sections.append(Section("Claims", claims + paragraphs(counts, cls="note"), "claims"))
    shown: set[str] = set()
    f = study_dir / "REPORT.md"
    if f.is_file():
        text = f.read_text(encoding="utf-8", errors="replace")
        shown = referenced_images(text)
        sections.append(
            Section("Report", to_html(text, base=study_dir, page_dir=out.parent, skip_first_heading=True), "report")
        )
    rest = [p for p in sorted(study_dir.glob("*.png")) if p.name not in shown]
    if rest:
        sections.append(Section("More figures", _figures(rest), "figures"))
    data = sorted(p for p in study_dir.glob("*.csv"))
    if data:
        links = Markup("").join(
            Markup('<li><a href="{}">{}</a></li>').format(_rel(p, out.parent), p.name) for p in data
        )
        sections.append(Section("Data", Markup("<ul>{}</ul>").format(links), "data"))
    return page(study_title(study_dir), sections, subtitle=f"bbrlab reproduce: {study_dir.name}")


# ------------------------------------------------------------------ a reproduce output directory


def study_dirs(out_dir: Path) -> list[Path]:
    """The studies in a reproduce output directory: its subdirectories with a REPORT.md."""
    return (
        sorted(d for d in out_dir.iterdir() if d.is_dir() and (d / "REPORT.md").is_file()) if out_dir.is_dir() else []
    )


def index_page(out_dir: Path, out: Path, report_name: str = "report.html") -> str:
    studies = study_dirs(out_dir)
    overview = []
    sections = []
    for d in studies:
        body, counts = claims_block(d)
        link = Markup('<a href="{}">{}</a>').format(_rel(d / report_name, out.parent), d.name)
        overview.append([link, study_title(d), counts])
        sections.append(
            Section(
                d.name,
                paragraphs(
                    Markup('{} — <a href="{}">full report</a>').format(
                        study_title(d), _rel(d / report_name, out.parent)
                    )
                )
                + body,
                f"study-{d.name}",
            )
        )
    head = Section(
        "Studies",
        table(["study", "title", "verdicts"], overview)
        if overview
        else paragraphs("no study has run in this directory yet", cls="note"),
        "studies",
    )
    return page("bbrlab reproduce", [head, *sections], subtitle=str(out_dir), generator=INDEX_GENERATOR)
