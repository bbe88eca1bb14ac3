"""The markdown of a study's REPORT.md as HTML: headings, paragraphs, tables, lists, code, images,
links, emphasis — what `reproduce.report` writes, not all of CommonMark.

All text is escaped; only the tags made here are markup, so a report cannot inject HTML. Images
are embedded as data URIs (a report page is one file) and relative links are rebased from the
report's directory to the page's.

One extension: a side-by-side block, the source's figure beside bbrlab's
(`bbrlab.reproduce.source_figures`). Three marker lines, HTML comments that markdown viewers do
not show, open the source's side (`BESIDE_SOURCE`), then bbrlab's (`BESIDE_BBRLAB`), and close
the block (`BESIDE_END`); the page sets the two sides in two columns (``div.beside``) that wrap
to one on a narrow screen.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from markupsafe import Markup, escape

from .html import data_uri, verdict_class

__all__ = ["to_html", "referenced_images", "BESIDE_SOURCE", "BESIDE_BBRLAB", "BESIDE_END"]

#: The marker lines of a side-by-side block, each on a line of its own.
BESIDE_SOURCE = "<!-- beside: source -->"
BESIDE_BBRLAB = "<!-- beside: bbrlab -->"
BESIDE_END = "<!-- beside: end -->"
#: What each marker opens or closes on the page (the only raw HTML a report's text produces).
_BESIDE_HTML = {
    BESIDE_SOURCE: '<div class="beside"><div class="beside-source">',
    BESIDE_BBRLAB: '</div><div class="beside-bbrlab">',
    BESIDE_END: "</div></div>",
}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_SEP = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(\s*([^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EM = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_IMAGE_ONLY = re.compile(r"^\s*!\[[^\]]*\]\([^)]*\)\s*$")


class _Ctx:
    """Where the markdown file lives (images, links) and where the page will be."""

    def __init__(self, base: Path | None, page_dir: Path | None) -> None:
        self.base = base
        self.page_dir = page_dir

    def href(self, url: str) -> str | None:
        """A link's target as seen from the page; None for a scheme we do not link (javascript:)."""
        if url.startswith("#"):
            return url
        if _SCHEME.match(url):
            return url if url.split(":", 1)[0].lower() in ("http", "https", "mailto") else None
        if self.base is None or self.page_dir is None:
            return url
        path, _, frag = url.partition("#")
        rel = os.path.relpath(os.path.normpath(self.base / path), self.page_dir)
        return rel + (f"#{frag}" if frag else "")

    def image(self, url: str, alt: str) -> Markup:
        base = self.base
        f = (base / url) if base is not None and not _SCHEME.match(url) else None
        if base is not None and f is not None and f.is_file() and f.resolve().is_relative_to(base.resolve()):
            return Markup('<img src="{}" alt="{}">').format(Markup(data_uri(f)), alt)
        # Never fetched: a remote or missing image is named, not loaded.
        return Markup('<span class="note">[image not embedded: {}]</span>').format(url)


def _emphasis(escaped: str) -> str:
    text = _STRONG.sub(r"<strong>\1</strong>", escaped)
    return _EM.sub(r"<em>\1</em>", text)


def _inline(text: str, ctx: _Ctx) -> Markup:
    """One line of text: code spans and links are set aside as placeholders first (their insides
    are not emphasis), the rest is escaped and emphasised, then the placeholders go back."""
    held: list[str] = []

    def hold(html: str) -> str:
        held.append(html)
        return f"\x00{len(held) - 1}\x00"

    def link(m: re.Match[str]) -> str:
        bang, label, url = m.groups()
        if bang:
            return hold(str(ctx.image(url, label)))
        href = ctx.href(url)
        inner = _emphasis(str(escape(label)))
        return hold(str(Markup('<a href="{}">{}</a>').format(href, Markup(inner))) if href else inner)

    text = text.replace("\x00", "")
    text = _CODE.sub(lambda m: hold(str(Markup("<code>{}</code>").format(m.group(2).strip()))), text)
    text = _LINK.sub(link, text)
    html = _emphasis(str(escape(text)))
    while "\x00" in html:  # a link's label may hold a code span: restore until none is left
        html = re.sub("\x00(\\d+)\x00", lambda m: held[int(m.group(1))], html)
    return Markup(html)


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)]


def _table(lines: list[str], ctx: _Ctx) -> Markup:
    header = _cells(lines[0])
    aligns = ["right" if c.strip().endswith(":") and not c.strip().startswith(":") else "" for c in _cells(lines[1])]
    html = ['<div class="scroll"><table><thead><tr>']
    html += [str(Markup("<th>{}</th>").format(_inline(h, ctx))) for h in header]
    html.append("</tr></thead><tbody>")
    for line in lines[2:]:
        html.append("<tr>")
        for i, c in enumerate(_cells(line)):
            classes = " ".join(
                x
                for x in (
                    verdict_class(c) and f"verdict {verdict_class(c)}",
                    "num" if i < len(aligns) and aligns[i] == "right" else "",
                )
                if x
            )
            attr = Markup(' class="{}"').format(classes) if classes else ""
            html.append(str(Markup("<td{}>{}</td>").format(attr, _inline(c, ctx))))
        html.append("</tr>")
    html.append("</tbody></table></div>")
    return Markup("".join(html))


def to_html(
    text: str, *, base: Path | None = None, page_dir: Path | None = None, skip_first_heading: bool = False
) -> Markup:
    """``text`` (markdown) as HTML. ``base``: the markdown file's directory (images, links);
    ``page_dir``: where the page is written (links are rebased to it)."""
    ctx = _Ctx(base, page_dir)
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    i = 0
    skipped = not skip_first_heading

    def block(pred: Callable[[str], bool]) -> list[str]:
        nonlocal i
        got = []
        while i < len(lines) and pred(lines[i]):
            got.append(lines[i])
            i += 1
        return got

    side = ""  # the side of a side-by-side block that is open ("" outside one): closed at the end
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.strip() in _BESIDE_HTML:
            i += 1
            marker = line.strip()
            if marker == BESIDE_SOURCE:
                if side:  # a block not closed before the next one opens
                    out.append(_BESIDE_HTML[BESIDE_END])
                side = "source"
            elif marker == BESIDE_BBRLAB and side == "source":
                side = "bbrlab"
            elif marker == BESIDE_END and side:
                side = ""
            else:
                continue  # a marker out of order (outside a block, bbrlab's side twice): ignored
            out.append(_BESIDE_HTML[marker])
        elif line.lstrip().startswith("```"):
            i += 1
            code = block(lambda s: not s.lstrip().startswith("```"))
            i += 1  # the closing fence
            out.append(str(Markup("<pre><code>{}</code></pre>").format("\n".join(code))))
        elif m := _HEADING.match(line):
            i += 1
            level = len(m.group(1))
            if not skipped and level == 1:
                skipped = True  # the page's own title
                continue
            # The page's title is its h1: the report's headings go one level down.
            tag = f"h{min(level + 1, 6)}"
            out.append(f"<{tag}>{_inline(m.group(2), ctx)}</{tag}>")
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]):
            out.append(str(_table(block(lambda s: s.lstrip().startswith("|")), ctx)))
        elif _ITEM.match(line):
            items: list[str] = []
            while i < len(lines) and lines[i].strip() and lines[i].strip() not in _BESIDE_HTML:
                m = _ITEM.match(lines[i])
                if m:
                    items.append(m.group(1))
                else:
                    items[-1] += " " + lines[i].strip()  # a continuation line
                i += 1
            tag = "ol" if re.match(r"^\s*\d", line) else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{_inline(t, ctx)}</li>" for t in items) + f"</{tag}>")
        elif line.lstrip().startswith(">"):
            quote = block(lambda s: s.lstrip().startswith(">"))
            inner = " ".join(q.lstrip()[1:].strip() for q in quote)
            out.append(f"<blockquote><p>{_inline(inner, ctx)}</p></blockquote>")
        else:
            para = block(
                lambda s: (
                    bool(s.strip())
                    and s.strip() not in _BESIDE_HTML
                    and not _HEADING.match(s)
                    and not s.lstrip().startswith(("```", "|"))
                    and not _ITEM.match(s)
                )
            )
            if not para:  # a table row without a separator line: show it as text
                para = [line]
                i += 1
            joined = " ".join(p.strip() for p in para)
            if _IMAGE_ONLY.match(joined):
                out.append(f"<figure>{_inline(joined, ctx)}</figure>")
            else:
                out.append(f"<p>{_inline(joined, ctx)}</p>")
    if side:
        out.append(_BESIDE_HTML[BESIDE_END])
    return Markup("\n".join(out))


def referenced_images(text: str) -> set[str]:
    """The image paths a markdown text shows (so the page does not show them twice)."""
    return {os.path.normpath(m.group(3)) for m in _LINK.finditer(text) if m.group(1)}
