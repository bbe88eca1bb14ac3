"""The page every report is: one self-contained HTML file (CSS inline, images as data URIs, no
request leaves the file), built with jinja2 with autoescaping on, so no text from a run, a
scenario or a report reaches the page unescaped; only the HTML built here is marked safe.
"""

from __future__ import annotations

import base64
import datetime as _dt
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from .._version import __version__
from ..errors import UserError

__all__ = [
    "Section",
    "page",
    "is_index",
    "INDEX_GENERATOR",
    "table",
    "kv_table",
    "image",
    "data_uri",
    "paragraphs",
    "pre",
    "write_page",
    "verdict_class",
    "VERDICTS",
]

#: A claim's verdicts (bbrlab.reproduce.claims.Verdict values) and their colour classes.
VERDICTS = {
    "agrees": "agrees",
    "partly": "partly",
    "disagrees": "disagrees",
    "not tested": "untested",
    "not checked at this size": "untested",
}

_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
    ".gif": "image/gif",
}

_CSS = Markup("""
:root { --fg: #1d2330; --muted: #5d6778; --line: #d9dee7; --bg: #ffffff; --head: #f3f5f9; --accent: #2357a5; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); }
header { padding: 22px 32px 12px; border-bottom: 3px solid var(--accent); background: var(--head); }
header h1 { margin: 0 0 4px; font-size: 24px; }
header .sub { margin: 0; color: var(--muted); }
main { padding: 8px 32px 32px; max-width: 1200px; }
section { margin-top: 26px; }
h2 { font-size: 19px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin-top: 22px; }
a { color: var(--accent); }
table { border-collapse: collapse; margin: 10px 0 14px; font-size: 13.5px; }
th, td { border: 1px solid var(--line); padding: 4px 9px; vertical-align: top; }
th { background: var(--head); text-align: left; }
thead th { white-space: nowrap; }
thead th .wrap { white-space: normal; }
.rule { color: var(--muted); font-size: 12px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tfoot td { font-weight: 600; background: #fafbfd; }
table.kv th { width: 14em; }
.scroll { overflow-x: auto; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th:after { content: " \\2195"; color: #a0a8b8; font-size: 11px; }
td.verdict { font-weight: 600; white-space: nowrap; }
.agrees { background: #dcf3e0; color: #165c26; }
.partly { background: #fff3cd; color: #7a5800; }
.disagrees { background: #f9dcdc; color: #8a1c1c; }
.untested { background: #eceef2; color: #4d5565; }
figure { margin: 14px 0 22px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 13px; }
.beside { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; margin: 14px 0 22px; }
.beside > div { flex: 1 1 420px; min-width: 0; padding: 8px 12px; border: 1px solid var(--line); border-radius: 4px; }
.beside > .beside-source { background: #fafafa; border-left: 4px solid var(--fg); }
.beside > .beside-bbrlab { border-left: 4px solid var(--accent); }
.beside figure { margin: 8px 0; }
pre { background: #f6f8fa; border: 1px solid var(--line); padding: 10px 12px; overflow-x: auto; font-size: 12.5px;
      line-height: 1.4; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
p code, li code, td code { background: #f0f2f5; padding: 0 3px; border-radius: 3px; }
.note { color: var(--muted); }
.warn { background: #fff3cd; border-left: 4px solid #d9a400; padding: 6px 10px; }
footer { color: var(--muted); font-size: 12px; padding: 12px 32px 24px; border-top: 1px solid var(--line); }
""")

# Sorting a table by a header click: numbers by their data-sort value, text otherwise. Inline, so
# the page stays one file; the page reads fully without it.
_SORT_JS = Markup("""
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("thead th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute("data-dir") !== "asc";
      table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("data-dir"); });
      th.setAttribute("data-dir", asc ? "asc" : "desc");
      function key(row) {
        var cell = row.cells[col], v = cell.getAttribute("data-sort");
        return v !== null && !isNaN(parseFloat(v)) ? parseFloat(v) : cell.textContent;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), r = (typeof x === "number" && typeof y === "number") ? x - y
          : String(x).localeCompare(String(y));
        return asc ? r : -r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
""")

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<link rel="icon" href="data:,">
<meta name="generator" content="{{ generator }}">
<title>{{ title }}</title>
<style>{{ css }}</style>
</head>
<body>
<header><h1>{{ title }}</h1>{% if subtitle %}<p class="sub">{{ subtitle }}</p>{% endif %}</header>
<main>
{% for s in sections %}<section{% if s.anchor %} id="{{ s.anchor }}"{% endif %}>
{% if s.heading %}<h2>{{ s.heading }}</h2>{% endif %}
{{ s.body }}
</section>
{% endfor %}
</main>
<footer>Written by bbrlab {{ version }} on {{ written }}.</footer>
{% if sortable %}<script>{{ sort_js }}</script>{% endif %}
</body>
</html>
"""

_TABLE = """<div class="scroll"><table{% if classes %} class="{{ classes }}"{% endif %}>
{% if header %}<thead><tr>{% for h in header %}<th{% if align[loop.index0] == "right" %} class="num"{% endif %}>{{ h }}</th>{% endfor %}</tr></thead>{% endif %}
<tbody>
{% for row in rows %}<tr>{% for c in row %}<td{% if c.cls %} class="{{ c.cls }}"{% endif %}{% if c.sort is not none %} data-sort="{{ c.sort }}"{% endif %}>{{ c.text }}</td>{% endfor %}</tr>
{% endfor %}</tbody>
{% if footer %}<tfoot><tr>{% for c in footer %}<td{% if c.cls %} class="{{ c.cls }}"{% endif %}>{{ c.text }}</td>{% endfor %}</tr></tfoot>{% endif %}
</table></div>"""

_KV = """<table class="kv"><tbody>
{% for k, v in rows %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>
{% endfor %}</tbody></table>"""

_env = Environment(autoescape=True, keep_trailing_newline=True)
_page_template = _env.from_string(_PAGE)
_table_template = _env.from_string(_TABLE)
_kv_template = _env.from_string(_KV)


@dataclass(frozen=True)
class Section:
    heading: str
    body: Markup
    anchor: str = ""


@dataclass(frozen=True)
class Cell:
    """A table cell: its text (escaped unless Markup), a CSS class, a value to sort by."""

    text: Any
    cls: str = ""
    sort: Any = None


def _cell(value: Any, align: str) -> Cell:
    if isinstance(value, Cell):
        return value
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if numeric and isinstance(value, float) and not math.isfinite(value):
        return Cell("–", "num" if align == "right" else "")
    return Cell(
        value if value is not None else "", "num" if align == "right" or numeric else "", value if numeric else None
    )


def table(
    header: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    *,
    footer: Sequence[Any] | None = None,
    align: Sequence[str] | None = None,
    sortable: bool = False,
) -> Markup:
    """An HTML table; a cell is a value (escaped) or a `Cell`. ``align``: "left"/"right" per column."""
    align = list(align or [""] * len(header))
    align += [""] * (len(header) - len(align))
    body = [[_cell(v, align[i] if i < len(align) else "") for i, v in enumerate(r)] for r in rows]
    foot = [_cell(v, align[i] if i < len(align) else "") for i, v in enumerate(footer)] if footer else None
    return Markup(
        _table_template.render(
            header=list(header), rows=body, footer=foot, align=align, classes="sortable" if sortable else ""
        )
    )


def kv_table(items: Sequence[tuple[str, Any]]) -> Markup:
    """Facts as a two-column table, the name in the first (None and "" values left out)."""
    rows = [(k, v) for k, v in items if v is not None and v != ""]
    return Markup(_kv_template.render(rows=rows)) if rows else Markup("")


def data_uri(path: Path) -> str:
    mime = _IMAGE_TYPES.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def image(path: Path, caption: str = "", alt: str = "") -> Markup:
    """A figure with the image embedded (nothing is fetched when the page opens)."""
    return Markup('<figure><img src="{}" alt="{}">{}</figure>').format(
        Markup(data_uri(path)),
        alt or caption or path.name,
        Markup("<figcaption>{}</figcaption>").format(caption) if caption else "",
    )


def paragraphs(*texts: Any, cls: str = "") -> Markup:
    attr = Markup(' class="{}"').format(cls) if cls else ""
    return Markup("").join(Markup("<p{}>{}</p>\n").format(attr, t) for t in texts if t)


def pre(text: str) -> Markup:
    return Markup("<pre><code>{}</code></pre>").format(text)


def verdict_class(text: Any) -> str:
    return VERDICTS.get(str(text).strip().lower(), "")


#: The generator tag of a reproduce index page: how `bbrlab report DIR` knows DIR is one.
INDEX_GENERATOR = "bbrlab reproduce index"


def page(title: str, sections: Sequence[Section], *, subtitle: str = "", generator: str = "bbrlab") -> str:
    written = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    sortable = any("sortable" in str(s.body) for s in sections)
    return _page_template.render(
        title=title,
        subtitle=subtitle,
        sections=sections,
        css=_CSS,
        sort_js=_SORT_JS,
        sortable=sortable,
        version=__version__,
        written=written,
        generator=generator,
    )


def is_index(path: Path) -> bool:
    """Whether ``path`` is a reproduce index page that bbrlab wrote."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f'<meta name="generator" content="{INDEX_GENERATOR}">' in f.read(4096)
    except OSError:
        return False


def write_page(path: Path, html: str) -> Path:
    """Write atomically: a page is either the old one or the whole new one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UserError(f"--out {path}: cannot write the report ({e.strerror})") from None
    return path
