"""Generate the scenario model (``model.py``) from the core's config schema.

The core's config types (``crates/sim/src/config/``) are the one definition of every
scenario field: name, type, unit, default, bounds and description. This module turns their JSON
Schema into pydantic models in human units:

- a field's scenario name is its config name without the unit suffix, and the suffix picks the
  field type: ``_bps`` → :data:`RateBps`, ``_ns`` → :data:`TimeNs`, ``_bytes`` → :data:`SizeBytes`,
  ``_segs`` and other integers → counts, numbers → :data:`Fraction`, the ``Buffer`` type →
  :data:`BufferSpec`, string enums → ``Literal``, the algorithm enum → ``Annotated[str, algorithm_validator(ALGORITHMS)]``;
- ``minimum``/``maximum`` (and exclusive ones, and the ``uint32``/``uint64`` ranges) become
  :func:`Bounds`; ``default`` becomes the field's default; ``description`` its description;
- tagged unions (``kind``) become discriminated unions whose variants are named by their title.

Run ``python -m bbrlab.scenario.codegen`` after changing the config types (``--check`` exits 1
when model.py is stale; a test runs it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .fields import SUGAR
from .names import UNIT_SUFFIXES, field_name, human_key

OUT = Path(__file__).with_name("model.py")
KEYS_OUT = Path(__file__).with_name("keys.py")
FIELD_TYPE = {"rate": "RateBps", "time": "TimeNs", "size": "SizeBytes", "count": "Count", "fraction": "Fraction"}
U32_MAX, U64_MAX = 2**32 - 1, 2**64 - 1


def unit_of(core_key: str, prop: dict[str, Any]) -> str:
    for suffix, unit in UNIT_SUFFIXES.items():
        if core_key.endswith(suffix):
            return unit
    if core_key == "bytes":
        return "size"
    types = prop.get("type")
    types = types if isinstance(types, list) else [types]
    return "fraction" if "number" in types else "count"


def _camel(word: str) -> str:
    return "".join(part.capitalize() for part in word.split("_"))


class _Gen:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.classes: dict[str, str] = {}  # class name -> source
        self.order: list[str] = []
        self.unions: dict[str, list[tuple[str, str]]] = {}  # def name -> [(kind, class)]
        self.core_map: dict[str, dict[str, tuple[str, str | None]]] = {}
        self.algorithms: tuple[str, ...] = ()

    # -------------------------------------------------------------- types

    def resolve(self, prop: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        ref = prop.get("$ref")
        if ref:
            name = ref.split("/")[-1]
            return name, self.defs[name]
        return None, prop

    def string_enum(self, s: dict[str, Any]) -> list[str]:
        vals = list(s.get("enum", [])) + ([s["const"]] if "const" in s else [])
        for alt in s.get("oneOf", []):
            vals += self.string_enum(alt)
        return vals

    def type_of(self, key: str, prop: dict[str, Any]) -> tuple[str, str | None]:
        """(annotation, nested model target for the core mapping)."""
        name, s = self.resolve(prop)
        if name is not None and "anyOf" in s:  # a named union of forms: its forms, inline
            prop = {**{k: v for k, v in prop.items() if k != "$ref"}, "anyOf": s["anyOf"]}
        alts = prop.get("anyOf")
        if alts:
            inner = [a for a in alts if a.get("type") != "null"]
            nullable = len(inner) < len(alts)
            # Several forms of one field (a flow's ``ecn``: a bool or a mode): their union.
            anns, targets = zip(*(self.type_of(key, {**prop, **a, "anyOf": None}) for a in inner), strict=True)
            ann = " | ".join(anns) + (" | None" if nullable else "")
            return ann, next((t for t in targets if t), None)
        name, s = self.resolve(prop)
        if name == "Buffer":
            return "BufferSpec", None
        if name == "QueueSize":
            return "QueueSizeSpec", None
        if name is not None and "oneOf" in s and any("title" in a for a in s["oneOf"]):
            self.union(name, s)
            return name, name
        if name is not None and s.get("type") == "object" or (name is not None and "properties" in s):
            self.model(name, s)
            return name, name
        if name is not None:  # a string enum type
            vals = self.string_enum(s)
            return f"Literal[{', '.join(json.dumps(v) for v in vals)}]", None
        types = prop.get("type")
        types = types if isinstance(types, list) else [types]
        nullable = "null" in types
        base = [t for t in types if t != "null"][0]
        if base == "array":
            ann, target = self.type_of(key, prop["items"])
            return (f"list[{ann}] | None" if nullable else f"list[{ann}]"), target
        if base == "string" and "enum" in prop:
            self.algorithms = tuple(prop["enum"])
            ann = "Annotated[str, algorithm_validator(ALGORITHMS)]"
        elif base == "string":
            ann = "str"
        elif base == "boolean":
            ann = "bool"
        else:
            ann = FIELD_TYPE[unit_of(key, prop)]
            bounds = self.bounds(key, prop)
            if bounds:
                ann = f"Annotated[{ann}, {bounds}]"
        return (f"{ann} | None" if nullable else ann), None

    def bounds(self, key: str, prop: dict[str, Any]) -> str:
        lo, hi = prop.get("minimum"), prop.get("maximum")
        xlo, xhi = prop.get("exclusiveMinimum"), prop.get("exclusiveMaximum")
        if hi is None and xhi is None:
            hi = {"uint32": U32_MAX, "uint64": U64_MAX}.get(prop.get("format", ""))
        args = [
            json.dumps(unit_of(key, prop)),
            repr(xlo if xlo is not None else lo),
            repr(xhi if xhi is not None else hi),
        ]
        if xlo is not None:
            args.append("exclusive_min=True")
        if xhi is not None:
            args.append("exclusive_max=True")
        if lo is None and xlo is None and hi is None and xhi is None:
            return ""
        return f"Bounds({', '.join(args)})"

    def default_of(self, prop: dict[str, Any], target: str | None) -> str | None:
        if "default" not in prop:
            return None
        d = prop["default"]
        name, _ = self.resolve(prop)
        if d is None:
            return "None"
        if name == "Buffer":
            return f"Field(default_factory=lambda: buffer_from_core({d!r})"
        if isinstance(d, list):
            return "Field(default_factory=list"
        if isinstance(d, dict) and target:
            return f"Field(default_factory={target}"
        return repr(d)

    # -------------------------------------------------------------- classes

    def union(self, name: str, s: dict[str, Any]) -> None:
        if name in self.unions:
            return
        variants = []
        for alt in s["oneOf"]:
            kind = alt["properties"]["kind"]["const"]
            cls = alt["title"]
            self.model(cls, alt)
            variants.append((kind, cls))
        self.unions[name] = variants
        self.order.append(f"union:{name}")

    def model(self, cls: str, s: dict[str, Any]) -> None:
        if cls in self.classes:
            return
        self.classes[cls] = ""  # reserve (recursion)
        required = set(s.get("required", []))
        lines = []
        mapping: dict[str, tuple[str, str | None]] = {}
        for key, prop in s.get("properties", {}).items():
            if key == "kind" and "const" in prop:
                lines.append(f"    kind: Literal[{json.dumps(prop['const'])}] = {json.dumps(prop['const'])}")
                mapping["kind"] = ("kind", None)
                continue
            ann, target = self.type_of(key, prop)
            hk, field = human_key(key), field_name(key)
            sugar = f", SUGAR[{hk!r}]" if hk in SUGAR else ""
            if sugar:
                ann = f"Annotated[{ann}{sugar}]"
            desc = json.dumps(" ".join(prop.get("description", "").split()))
            default = self.default_of(prop, target) if key not in required else None
            alias = f", alias={hk!r}" if field != hk else ""
            if default is None:
                value = f"Field(description={desc}{alias})"
            elif default.startswith("Field("):
                value = f"{default}, description={desc}{alias})"
            else:
                value = f"Field(default={default}, description={desc}{alias})"
            lines.append(f"    {field}: {ann} = {value}")
            mapping[field] = (key, target)
        doc = " ".join(s.get("description", "").split())
        head = f"class {cls}({cls}Base):" if cls in MIXINS else f"class {cls}(Strict):"
        body = "\n".join([head, f'    """{doc}"""', ""] + lines)
        self.classes[cls] = body
        self.core_map[cls] = mapping
        self.order.append(cls)

    def render(self) -> str:
        self.model("Scenario", self.schema)
        parts = [HEADER.format(algorithms=repr(self.algorithms))]
        for item in self.order:
            if item.startswith("union:"):
                name = item.split(":", 1)[1]
                variants = self.unions[name]
                tags = " | ".join(f"Annotated[{cls}, Tag({kind!r})]" for kind, cls in variants)
                kinds = tuple(k for k, _ in variants)
                parts.append(
                    f"{name} = Annotated[{tags}, Discriminator(kind_of({kinds!r})), BeforeValidator(check_kind({kinds!r}))]"
                )
            else:
                parts.append(self.classes[item])
        models = [i for i in self.order if not i.startswith("union:")]
        core = [
            "#: Per model: its fields' config keys, in the config's order (each field's attribute follows",
            "#: from its key: :func:`bbrlab.scenario.names.field_name`).",
            "CONFIG_KEYS: dict[str, tuple[str, ...]] = {",
            *(f"    {cls!r}: {tuple(k for k, _ in self.core_map[cls].values())!r}," for cls in models),
            "}",
            "",
            "#: Per model: its fields that hold another model (alone, in a list or as a tagged union).",
            "NESTED: dict[str, dict[str, str]] = {",
            *(
                f"    {cls!r}: {nested!r},"
                for cls in models
                if (nested := {f: t for f, (_, t) in self.core_map[cls].items() if t is not None})
            ),
            "}",
            "",
            "#: Per model: field -> (config key, nested model name or None), for the core's config.",
            "CORE_KEYS: dict[str, dict[str, tuple[str, str | None]]] = {",
            "    model: {(f := field_name(k)): (k, NESTED.get(model, {}).get(f)) for k in keys}",
            "    for model, keys in CONFIG_KEYS.items()",
            "}",
        ]
        assert all(  # the attributes the models were written with are those keys.py derives
            f == field_name(k) for m in self.core_map.values() for f, (k, _) in m.items()
        )
        unions = (
            "#: Tagged unions: kind -> model name.\nVARIANTS: dict[str, dict[str, str]] = {\n"
            + "".join(f"    {n!r}: {dict(v)!r},\n" for n, v in self.unions.items())
            + "}"
        )
        self.keys_text = KEYS_HEADER + "\n\n" + "\n".join(core) + "\n\n\n" + unions + "\n"
        return "\n\n\n".join(parts) + "\n"


KEYS_HEADER = '''"""Each scenario model's fields and their names in the core's config. GENERATED with model.py by
``python -m bbrlab.scenario.codegen``: do not edit.
"""

from __future__ import annotations

from .names import field_name'''

#: Models with hand-written behaviour (derived values, checks): ``mixins.<Name>Base``.
MIXINS = ("Scenario",)

#: What model.py imports from ``fields`` (one line there; it may grow without a diff here).
FIELD_IMPORTS = (
    "SUGAR",
    "algorithm_validator",
    "Bounds",
    "BufferSpec",
    "Count",
    "QueueSizeSpec",
    "Fraction",
    "RateBps",
    "SizeBytes",
    "Strict",
    "TimeNs",
    "buffer_from_core",
)

HEADER = "\n".join(
    (
        '"""The scenario model, in human units. GENERATED from the core\'s config schema by',
        "``python -m bbrlab.scenario.codegen``: do not edit; change ``crates/sim/src/config/`` and",
        "regenerate (a test fails while this file is stale).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Annotated, Literal",
        "",
        "from pydantic import BeforeValidator, Discriminator, Field, Tag",
        "",
        "from .fields import " + ", ".join(FIELD_IMPORTS),
        "from .mixins import ScenarioBase, check_kind, kind_of",
        "",
        "#: The algorithm names a scenario may use (the core's registry, aliases included).",
        "ALGORITHMS: tuple[str, ...] = {algorithms}",
    )
)


def generate(schema: dict[str, Any]) -> dict[Path, str]:
    """The generated files and their text."""
    g = _Gen(schema)
    model = g.render()
    return {OUT: model, KEYS_OUT: g.keys_text}


def core_schema() -> dict[str, Any]:
    from bbrlab import _core

    return json.loads(_core.config_schema())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    files = generate(core_schema())
    if "--check" in args:
        stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
        for p in stale:
            print(f"{p} is stale: run `python -m bbrlab.scenario.codegen`", file=sys.stderr)
        return 1 if stale else 0
    for p, text in files.items():
        p.write_text(text)
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
