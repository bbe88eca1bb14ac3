"""Every relative link in README.md and docs/*.md leads somewhere: the file exists and, for a
``#fragment``, the page has that heading (GitHub's anchor rule) or an explicit ``<a id>``.

The README points into docs/ pages that were split out of it; a renamed heading or page breaks
those links silently, so they are checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces to
    hyphens (markup such as backquotes goes with the punctuation)."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = page.read_text()
    text_no_code = re.sub(r"```.*?```", "", text, flags=re.S)
    found = set(re.findall(r'<a id="([^"]+)"', text))
    seen: dict[str, int] = {}
    for h in re.findall(r"^#{1,6} (.+)$", text_no_code, flags=re.M):
        a = github_anchor(re.sub(r'<a id="[^"]+"></a>', "", h))
        n = seen.get(a, 0)
        seen[a] = n + 1
        found.add(a if n == 0 else f"{a}-{n}")
    return found


def test_the_anchor_rule() -> None:
    # The rule can fail: known GitHub anchors of headings in these pages.
    assert github_anchor("The real-Linux backend (`--backend emu`)") == "the-real-linux-backend---backend-emu"
    assert github_anchor("2026-11-26 (evening): arrivals served ahead of the event loop; 150× reached") == (
        "2026-11-26-evening-arrivals-served-ahead-of-the-event-loop-150-reached"
    )
    assert github_anchor("Set up and run (two commands)") == "set-up-and-run-two-commands"


def test_relative_links_in_readme_and_docs_resolve() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            path, _, fragment = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
