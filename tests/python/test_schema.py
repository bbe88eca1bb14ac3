"""One schema: the Python model is the core's config schema in human units, both ways.

- model.py is what the generator makes of the core's schema today (not stale);
- every field of the schema is a field of the model and the reverse, with the same default;
- every resolved example validates against the core's JSON Schema (checked by an independent
  validator, `jsonschema`), and the core accepts it;
- the model itself rejects what the core rejects (the core's check is a model validator).
"""

from __future__ import annotations

import json
from pathlib import Path

import bbrlab
import jsonschema
import pytest
from bbrlab import units
from bbrlab.engine import runner
from bbrlab.errors import ScenarioError
from bbrlab.scenario import codegen, core, keys, model
from bbrlab.scenario.fields import buffer_from_core
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_FILES = sorted((ROOT / "examples").glob("*.toml")) + sorted((ROOT / "benchmarks").glob("*.toml"))


def test_model_is_generated_from_the_current_schema() -> None:
    assert codegen.main(["--check"]) == 0, "run `python -m bbrlab.scenario.codegen`"


def _object_schemas(schema: dict) -> dict[str, dict]:
    """Model name -> its object schema (named defs, and tagged-union variants by title)."""
    out = {"Scenario": schema}
    for name, d in schema["$defs"].items():
        if "properties" in d:
            out[name] = d
        for alt in d.get("oneOf", []):
            if "title" in alt:
                out[alt["title"]] = alt
    return out


def test_every_schema_field_is_a_model_field_and_back_with_the_same_default() -> None:
    schema = core.schema()
    objects = _object_schemas(schema)
    assert set(objects) == set(keys.CORE_KEYS), "models and schema objects differ"
    for cls_name, obj in objects.items():
        cls = getattr(model, cls_name)
        mapping = keys.CORE_KEYS[cls_name]
        core_keys = {k for k, _ in mapping.values()}
        assert core_keys == set(obj["properties"]), f"{cls_name}: {core_keys ^ set(obj['properties'])}"
        for field, (core_key, _) in mapping.items():
            prop = obj["properties"][core_key]
            assert field in cls.model_fields, f"{cls_name}.{field}"
            f = cls.model_fields[field]
            if "default" not in prop:
                continue
            default = f.get_default(call_default_factory=True)
            want = prop["default"]
            if isinstance(default, units.Buffer):
                assert default == buffer_from_core(want), f"{cls_name}.{field}"
            elif hasattr(default, "model_dump"):
                assert core.to_core(default) == want, f"{cls_name}.{field}"
            else:
                assert default == want, f"{cls_name}.{field}: {default!r} != {want!r}"


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.name for p in SCENARIO_FILES])
def test_resolved_examples_validate_against_the_core_schema(path: Path) -> None:
    scenario = bbrlab.load_scenario(path)
    resolved = scenario.resolve()
    jsonschema.Draft202012Validator(core.schema()).validate(resolved)
    jsonschema.Draft202012Validator(core.schema()).validate(core.to_core(scenario))
    # The resolved config comes back as the same scenario.
    again = core.from_core(resolved, model.Scenario)
    assert again.resolve() == resolved


def test_the_schema_validator_rejects_what_the_bounds_forbid() -> None:
    # The check above must be able to fail: the schema carries the bounds.
    resolved = bbrlab.load_scenario(ROOT / "examples" / "quick.toml").resolve()
    resolved["flows"][0]["mss_bytes"] = 10
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(core.schema()).validate(resolved)


def test_the_model_alone_rejects_what_the_core_rejects() -> None:
    raw = {
        "duration": "10s",
        "topology": {"bottleneck": {"rate": "10Mbps", "rtt": "10ms"}},
        "flows": [{"cc": "cubic", "start": "5s", "stop": "1s"}],
    }
    with pytest.raises(ScenarioError) as e:
        model.Scenario.model_validate(raw)
    assert e.value.path == "flows.0.stop" and "after start" in e.value.message
    raw["flows"][0]["stop"] = "6s"
    assert model.Scenario.model_validate(raw).flows[0].stop == 6 * 10**9
    with pytest.raises(ValidationError):
        model.Scenario.model_validate({**raw, "duration": "ten seconds"})


def test_core_errors_come_back_in_scenario_terms() -> None:
    s = bbrlab.load_scenario(ROOT / "examples" / "quick.toml")
    assert core.human_path("flows.0.mss_bytes", s) == "flows.0.mss"
    assert core.human_path("topology.bottleneck.rate_bps", s) == "topology.bottleneck.rate"
    assert core.human_path("flows.0.bytes", s) == "flows.0.bytes"
    assert core.human_path("sample_interval_ns", s) == "sample_interval"
    config = s.resolve()
    config["flows"][0]["initial_cwnd_segs"] = 0
    with pytest.raises(ScenarioError) as e:
        runner.simulate(config, scenario=s)
    assert e.value.path == "flows.0.initial_cwnd" and "out of range" in e.value.message
    json.dumps(config)  # the config stays plain JSON


def test_generated_reference_tables_are_current() -> None:
    from bbrlab.devtools import docgen

    assert docgen.main(["--check"]) == 0, "run `python -m bbrlab.devtools.docgen`"
    # The check can fail: a block with different text is stale.
    readme = (ROOT / "README.md").read_text()
    assert "<!-- generated:algorithms -->" in readme
    tampered = readme.replace("| `reno` |", "| `renoo` |")
    assert docgen.render(tampered) == readme
