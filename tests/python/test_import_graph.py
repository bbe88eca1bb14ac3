"""The package's modules import each other one way only: no cycles, lazy imports included.

Every ``import`` statement counts, wherever it stands (module level, inside a function, under
``TYPE_CHECKING``): a cycle hidden in a function body still ties two modules together. An edge goes
to the module named, not to the packages above it (importing ``bbrlab.emu.runner`` runs
``bbrlab/__init__.py`` too, but that is Python's package machinery, not a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import bbrlab

ROOT = Path(bbrlab.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(ROOT.rglob("*.py")):
        rel = p.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _edges(name: str, path: Path, known: set[str]) -> set[str]:
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # `from pkg import sub` names a module when pkg.sub is one; otherwise it names pkg.
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in known and t != name and t != "bbrlab._core"}
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    # The compiled core is a module too: `from bbrlab import _core` names it, not the package.
    known = set(mods) | {"bbrlab._core"}
    return {name: _edges(name, path, known) for name, path in mods.items()}


def test_no_import_cycles_between_modules():
    graph = _graph()
    assert graph["bbrlab.results.results"] >= {"bbrlab.plots.plots"}  # the checker sees lazy imports
    assert _cycles(graph) == []


def test_no_import_cycles_between_subpackages():
    # bbrlab.emu and bbrlab.reproduce are units: the runner may dispatch to the emu backend, but
    # then nothing in bbrlab.emu may import the runner back.
    def unit(name: str) -> str:
        parts = name.split(".")
        return ".".join(parts[:2])

    graph: dict[str, set[str]] = {}
    for name, targets in _graph().items():
        graph.setdefault(unit(name), set()).update(unit(t) for t in targets if unit(t) != unit(name))
    assert _cycles(graph) == []


def test_no_module_chooses_a_matplotlib_backend():
    # Figures come from bbrlab.plots.figures (a Figure on its own Agg canvas); pyplot is never needed.
    for p in ROOT.rglob("*.py"):
        text = p.read_text()
        assert "matplotlib.use(" not in text, p
        assert "matplotlib.pyplot" not in text, p
