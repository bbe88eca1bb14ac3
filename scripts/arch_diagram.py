#!/usr/bin/env python3
"""Draw bbrlab's architecture picture from the code's own dependencies.

Writes Mermaid ``flowchart`` blocks into docs/architecture.md, between the markers
``<!-- arch-diagram -->`` and ``<!-- /arch-diagram -->``:

1. The workspace crates and the Python package: an arrow A --> B when crate A's Cargo.toml lists
   workspace crate B under ``[dependencies]`` (a path dependency; dev-dependencies are left out,
   they are not part of what ships), and python/bbrlab --> the crate pyproject.toml's
   ``[tool.maturin] manifest-path`` builds into the extension.
2. The components of each crate in COMPONENT_CRATES (the simulator, the congestion-control
   crate): every top-level module of ``src/`` is one component — a file ``x.rs``, a directory
   ``x/`` (with ``x/mod.rs`` or ``x.rs`` beside it) counted as one, whatever it holds — and
   ``lib.rs``, the crate root, is the component ``lib`` (the items defined there). An arrow
   A --> B when A's code (its test modules, comments and strings left out) names B: a path
   ``crate::b::…``, ``b::…`` or ``use crate::b``, or an item that lib.rs brings in with
   ``use b::{Item}`` / defines itself, used by a module that glob-imports the crate root
   (``use crate::*``, or ``use super::*`` in a top-level module).

The tree is walked, not listed, so new files and subdirectories appear on the next run.
``python scripts/arch_diagram.py`` rewrites the block; ``--check`` exits 1 when the committed
block differs from what the code gives (tests/python/test_arch_diagram.py runs it).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
DOC = Path("docs/architecture.md")
BEGIN, END = "<!-- arch-diagram -->", "<!-- /arch-diagram -->"
#: Crates whose internal components are drawn, by directory under crates/, with a title.
COMPONENT_CRATES = (
    ("sim", "the simulator (crates/sim/src)"),
    ("cc", "congestion control (crates/cc/src)"),
)
ROOT_COMPONENT = "lib"

_RUST_KEYWORDS = {"crate", "self", "super", "std", "core", "alloc"}


# ---------------------------------------------------------------------------------------------
# Crates


def crate_graph(root: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Workspace crates (directory names under crates/) and their [dependencies] arrows."""
    manifests = {p.parent.name: tomllib.loads(p.read_text()) for p in sorted(root.glob("crates/*/Cargo.toml"))}
    by_package = {m["package"]["name"]: d for d, m in manifests.items()}
    by_dir = {(root / "crates" / d).resolve(): d for d in manifests}
    edges = set()
    for d, m in manifests.items():
        for key, spec in m.get("dependencies", {}).items():
            target = None
            if isinstance(spec, dict) and "path" in spec:
                target = by_dir.get((root / "crates" / d / spec["path"]).resolve())
            elif (spec.get("package") if isinstance(spec, dict) else None) in by_package:
                target = by_package[spec["package"]]
            elif key in by_package:
                target = by_package[key]
            if target is not None and target != d:
                edges.add((d, target))
    nodes = sorted(manifests)
    pyproject = root / "pyproject.toml"
    if pyproject.exists():
        maturin = tomllib.loads(pyproject.read_text()).get("tool", {}).get("maturin", {})
        manifest = maturin.get("manifest-path")
        source = maturin.get("python-source", ".")
        if manifest:
            crate = by_dir.get((root / manifest).resolve().parent)
            if crate is not None:
                py = f"{source.rstrip('/')}/bbrlab"
                nodes.append(py)
                edges.add((py, crate))
    return nodes, sorted(edges)


# ---------------------------------------------------------------------------------------------
# Components inside one crate


def _strip(code: str) -> str:
    """Rust code without its comments, string literals and test-only items (``#[cfg(test)]``
    modules and functions), so names in prose or in tests do not count as uses."""
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r'r(#*)"(?:.|\n)*?"\1', '""', code)
    code = re.sub(r'"(?:\\.|[^"\\])*"', '""', code)
    code = re.sub(r"'(?:\\.|[^'\\\n])'", "' '", code)  # char literals, not lifetimes
    code = re.sub(r"//[^\n]*", "", code)
    out, pos = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        if m.start() < pos:
            continue
        out.append(code[pos : m.start()])
        i = m.end()
        while i < len(code) and code[i] not in ";{":
            i += 1
        if i < len(code) and code[i] == "{":
            depth = 0
            while i < len(code):
                depth += {"{": 1, "}": -1}.get(code[i], 0)
                i += 1
                if depth == 0:
                    break
        pos = i + 1 if i < len(code) and code[i - 1] != "}" else i
    out.append(code[pos:])
    return "".join(out)


def test_only_modules(src: Path) -> set[str]:
    """Names of modules declared only for tests (``#[cfg(test)] mod testkit;``)."""
    names = set()
    for f in src.rglob("*.rs"):
        names |= set(re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", f.read_text()))
    return names


def components(src: Path) -> dict[str, list[Path]]:
    """Top-level modules of a crate's src/: name -> its .rs files (a directory counts as one)."""
    comps: dict[str, list[Path]] = {}
    tests = test_only_modules(src)
    for entry in sorted(src.iterdir()):
        if entry.stem in tests:
            continue
        if entry.is_file() and entry.suffix == ".rs":
            name = ROOT_COMPONENT if entry.stem in ("lib", "main") else entry.stem
            comps.setdefault(name, []).append(entry)
        elif entry.is_dir() and entry.name != "bin":
            files = [f for f in sorted(entry.rglob("*.rs")) if not tests & {f.stem, *f.relative_to(entry).parts[:-1]}]
            if files:
                comps.setdefault(entry.name, []).extend(files)
    return comps


def _root_items(lib_code: str, names: set[str]) -> dict[str, str]:
    """Items visible at the crate root: what lib.rs brings in from a module (``use m::{A, B}``,
    ``pub use m::A``) -> that module, and what lib.rs defines -> the root component."""
    items: dict[str, str] = {}
    for m in re.finditer(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(?:crate::)?(\w+)::([^;]+);", lib_code, flags=re.M):
        module, rest = m.group(1), m.group(2)
        if module not in names:
            continue
        for ident in re.findall(r"\b([A-Z]\w*|[a-z_]\w*)\b", rest.replace("self", "")):
            if ident not in _RUST_KEYWORDS and ident != "as":
                items.setdefault(ident, module)
    kinds = r"struct|enum|fn|type|const|static|trait|union|macro_rules!"
    for m in re.finditer(rf"^(?:pub(?:\([^)]*\))?\s+)?(?:{kinds})\s*(\w+)", lib_code, flags=re.M):
        items.setdefault(m.group(1), ROOT_COMPONENT)
    return items


def component_graph(src: Path) -> tuple[list[str], list[tuple[str, str]]]:
    comps = components(src)
    names = set(comps)
    code = {n: "\n".join(_strip(f.read_text()) for f in files) for n, files in comps.items()}
    root_items = _root_items(code.get(ROOT_COMPONENT, ""), names)
    edges = set()
    for a, text in code.items():
        for b in names - {a, ROOT_COMPONENT}:
            # `b::x` as a path: after `crate::`, or bare (a glob or `use` brought the module in),
            # or `use crate::b` / `use super::b` / `use crate::{b, …}` from a top-level module.
            if re.search(rf"(?<![\w:])(?:crate::|super::)?{b}::", text) or re.search(
                rf"\buse\s+(?:crate|super)::(?:\{{[^}}]*\b{b}\b[^}}]*\}}|{b}\b)", text
            ):
                edges.add((a, b))
        glob = re.search(r"\buse\s+crate::\*\s*;", text) or (
            len(comps[a]) == 1 and comps[a][0].parent == src and re.search(r"\buse\s+super::\*\s*;", text)
        )
        named = set(re.findall(r"crate::(\w+)", text))
        for group in re.findall(r"crate::\{([^}]*)\}", text):
            named |= set(re.findall(r"\w+", group))
        for item, module in root_items.items():
            if module == a:
                continue
            if item in named or (glob and re.search(rf"(?<![\w:]){re.escape(item)}\b", text)):
                edges.add((a, module))
    return sorted(names), sorted(edges)


# ---------------------------------------------------------------------------------------------
# Mermaid


def _id(prefix: str, name: str) -> str:
    return prefix + re.sub(r"\W", "_", name)


def mermaid(title: str, prefix: str, nodes: list[str], edges: list[tuple[str, str]], label=None) -> str:
    label = label or (lambda n: n)
    out = ["```mermaid", "flowchart LR", f"  %% {title}"]
    out += [f'  {_id(prefix, n)}["{label(n)}"]' for n in nodes]
    out += [f"  {_id(prefix, a)} --> {_id(prefix, b)}" for a, b in edges]
    out.append("```")
    return "\n".join(out)


def render_block(root: Path) -> str:
    parts = [
        "_Generated by `python scripts/arch_diagram.py` from the code's dependencies; do not "
        "edit by hand (`--check` is tested). An arrow A → B: A uses B._",
        "",
        "**Crates** (Cargo.toml `[dependencies]`; the Python package through the extension it builds):",
        "",
    ]
    nodes, edges = crate_graph(root)
    parts.append(mermaid("crates", "crate_", nodes, edges))
    for crate, title in COMPONENT_CRATES:
        src = root / "crates" / crate / "src"
        if not src.is_dir():
            continue
        nodes, edges = component_graph(src)
        sizes = {n: len(fs) for n, fs in components(src).items()}

        def lab(n: str, s: dict[str, int] = sizes) -> str:
            return f"{n}/ ({s[n]} files)" if s[n] > 1 else ("lib.rs (crate root)" if n == ROOT_COMPONENT else n)

        parts += [
            "",
            f"**Components of {title}**: one per top-level module (a directory is one):",
            "",
        ]
        parts.append(mermaid(crate, f"{crate}_", nodes, edges, lab))
    return "\n".join(parts)


def render(text: str, root: Path = ROOT) -> str:
    """``text`` with the block between the markers rewritten; ValueError without the markers."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{DOC}: markers {BEGIN} … {END} not found")
    return text[: start + len(BEGIN)] + "\n" + render_block(root) + "\n" + text[end:]


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = root / DOC
    old = path.read_text()
    new = render(old, root)
    if "--check" in args:
        if new != old:
            print(
                f"{DOC}: the architecture picture is stale: run `python scripts/arch_diagram.py`",
                file=sys.stderr,
            )
            return 1
        return 0
    if new != old:
        path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
