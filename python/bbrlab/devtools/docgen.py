"""The reference tables in README.md, docs/scenario-reference.md and docs/core-api.md, generated
from the core's definitions.

Scenario fields come from the scenario model (itself generated from the core's config schema),
algorithms from the core's registry, result columns from the core's table specs. Each generated
block sits between ``<!-- generated:NAME -->`` and ``<!-- /generated:NAME -->`` markers; the text
around it is written by hand. ``python -m bbrlab.devtools.docgen`` rewrites the blocks, ``--check`` exits 1
when one is stale (a test runs it).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parents[3]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    d = field.get_default(call_default_factory=True)
    if d is None or d is PydanticUndefined:
        return "none"
    if isinstance(d, BaseModel):
        return "see below"
    if isinstance(d, list):
        return "`[]`" if not d else f"`{d}`"
    # Annotated[T, a][b] is Annotated[T, a, b]: one metadata item at a time (3.10 has no
    # Annotated[T, *metadata]).
    annotation = field.annotation
    for meta in field.metadata:
        annotation = Annotated[annotation, meta]
    dumped = TypeAdapter(annotation).dump_python(d, mode="json")
    return (
        f"`{json.dumps(dumped)}`"
        if isinstance(dumped, str)
        else f"`{str(dumped).lower() if isinstance(dumped, bool) else dumped}`"
    )


def _rows(cls: type[BaseModel], prefix: str, skip: tuple[str, ...] = ()) -> list[str]:
    from ..scenario.errors import item_model

    rows = []
    for name, f in cls.model_fields.items():
        key = f.alias or name
        if key in skip or key == "kind":
            continue
        nested = item_model(f.annotation)
        if nested is not None and key in ("rpc", "red", "pfc", "hosts", "capture"):
            rows += _rows(nested, f"{prefix}{key}.")
            continue
        rows.append(f"| `{prefix}{key}` | {_default(f)} | {_cell(f.description or '')} |")
    return rows


def scenario_fields(part: str) -> str:
    """A field table of the scenario reference: ``dumbbell`` (top level, dumbbell, flows),
    ``star`` or ``apps``."""
    from ..scenario import model

    head = ["| field | default | meaning |", "|---|---|---|"]
    if part == "dumbbell":
        rows = _rows(model.Scenario, "", skip=("topology", "flows", "apps"))
        rows += [f'| `topology.kind` | `"dumbbell"` | {_cell(model.Dumbbell.__doc__ or "")} (or `"star"`, below) |']
        rows += _rows(model.Dumbbell, "topology.", skip=("bottleneck",))
        rows += _rows(model.Bottleneck, "topology.bottleneck.")
        rows += _rows(model.Flow, "flows[].")
    elif part == "star":
        rows = _rows(model.Star, "topology.")
    elif part == "apps":
        rows = ['| `apps[].kind` | required | `"query"`: partition/aggregate |'] + _rows(
            model.QueryApp, "apps[].", skip=("flow",)
        )
        rows += ["| `apps[].flow` | required | " + _cell(model.QueryApp.model_fields["flow"].description or "") + " |"]
    else:
        raise KeyError(part)
    return "\n".join(head + rows)


def algorithms_table() -> str:
    from ..core.algorithms import registry
    from ..emu.bpf import ported

    bpf = ported()
    rows = [
        "| name | what | follows | kernel (`--backend emu`) | phases (`timeseries.phase`) |",
        "|---|---|---|---|---|",
    ]
    for a in registry():
        name = f"`{a.name}`" + (f" (alias {', '.join(f'`{x}`' for x in a.aliases)})" if a.aliases else "")
        if a.name in bpf:
            kernel = f"bbrlab's BPF port (`emu/bpf/src/{a.name}.bpf.c`)"
        else:
            kernel = f"`{a.kernel_name}`" if a.kernel_name else "none in a stock kernel"
        phases = ", ".join(f"`{p}`" for p in a.phases)
        rows.append(f"| {name} | {_cell(a.summary)} | {_cell(a.source)} | {kernel} | {phases} |")
    return "\n".join(rows)


def _type_of(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        return prop["$ref"].split("/")[-1]
    if "anyOf" in prop:
        return " \\| ".join(_type_of(p) for p in prop["anyOf"])
    t = prop.get("type", "")
    t = " \\| ".join(t) if isinstance(t, list) else t
    if prop.get("format") in ("uint32", "uint64", "double"):
        t = t.replace("integer", prop["format"]).replace("number", "f64")
    if "enum" in prop:
        t += " (" + ", ".join(f"`{v}`" for v in prop["enum"]) + ")"
    return t


def _range(prop: dict[str, Any]) -> str:
    lo = prop.get("exclusiveMinimum", prop.get("minimum"))
    hi = prop.get("exclusiveMaximum", prop.get("maximum"))
    if lo is None and hi is None:
        return ""
    left = "(" if "exclusiveMinimum" in prop else "["
    right = ")" if "exclusiveMaximum" in prop else "]"
    return f"{left}{'' if lo is None else lo}, {'' if hi is None else hi}{right}"


def config_reference() -> str:
    """Every object of the core's config: field, type, default, range, meaning (config names)."""
    from ..scenario import core

    schema = core.schema()
    objects: list[tuple[str, dict[str, Any]]] = [("Config (top level)", schema)]
    for name, d in schema["$defs"].items():
        if "properties" in d:
            objects.append((name, d))
        for alt in d.get("oneOf", []):
            if "title" in alt and "properties" in alt:
                objects.append((f'{alt["title"]} (`kind = "{alt["properties"]["kind"]["const"]}"`)', alt))
        if "oneOf" in d and not any("title" in a for a in d["oneOf"]):
            choices = []
            for alt in d["oneOf"]:
                if "properties" in alt:
                    ((k, p),) = alt["properties"].items()
                    choices.append(f'`{{"{k}": {_type_of(p)}}}` {_range(p)} — {_cell(alt.get("description", ""))}')
                else:
                    vals = alt.get("enum", [alt.get("const")])
                    choices.append(
                        ", ".join(f'`"{v}"`' for v in vals)
                        + (f" — {_cell(alt['description'])}" if alt.get("description") else "")
                    )
            objects.append((name, {"description": d.get("description", ""), "choices": choices}))
    out = []
    for title, obj in objects:
        out.append(f"**{title}** — {_cell(obj.get('description', ''))}\n")
        if "choices" in obj:
            out += [f"- {c}" for c in obj["choices"]] + [""]
            continue
        out += ["| field | type | default | range | meaning |", "|---|---|---|---|---|"]
        required = set(obj.get("required", []))
        for k, p in obj["properties"].items():
            if k == "kind":
                continue
            default = "required" if k in required else f"`{json.dumps(p.get('default'))}`"
            out.append(f"| `{k}` | {_type_of(p)} | {default} | {_range(p)} | {_cell(p.get('description', ''))} |")
        out.append("")
    return "\n".join(out).rstrip()


def result_tables() -> str:
    from ..core.tables import schema

    out = []
    for t in schema().values():
        out += [f"**{t.name}** — {_cell(t.description)}\n", "| column | dtype | unit | meaning |", "|---|---|---|---|"]
        out += [f"| `{c.name}` | `{c.dtype}` | {c.unit} | {_cell(c.description)} |" for c in t.columns]
        out.append("")
    return "\n".join(out).rstrip()


BLOCKS: dict[str, Any] = {
    "scenario-fields": lambda: scenario_fields("dumbbell"),
    "star-fields": lambda: scenario_fields("star"),
    "app-fields": lambda: scenario_fields("apps"),
    "algorithms": algorithms_table,
    "config-reference": config_reference,
    "result-tables": result_tables,
}
FILES = ("README.md", "docs/scenario-reference.md", "docs/core-api.md")


def render(text: str) -> str:
    """``text`` with every generated block rewritten."""

    def block(m: re.Match[str]) -> str:
        name = m.group(1)
        return f"<!-- generated:{name} -->\n{BLOCKS[name]()}\n<!-- /generated:{name} -->"

    return re.sub(r"<!-- generated:([a-z-]+) -->.*?<!-- /generated:\1 -->", block, text, flags=re.S)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    stale = []
    for rel in FILES:
        path = ROOT / rel
        old = path.read_text()
        new = render(old)
        if new != old:
            stale.append(rel)
            if "--check" not in args:
                path.write_text(new)
    if "--check" in args and stale:
        print(f"stale generated blocks in {', '.join(stale)}: run `python -m bbrlab.devtools.docgen`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
