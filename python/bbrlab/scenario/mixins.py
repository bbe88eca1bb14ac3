"""Hand-written behaviour of the generated scenario model: the core's check as a model validator,
values derived from a scenario, and the human-units outputs.

``Scenario.model_validate`` accepts exactly what the core accepts: after pydantic has checked each
field (types, units, the schema's bounds), the core checks the whole scenario (relations between
fields) and fills the defaults that depend on other fields. Derived values (BDP, the shared
queue's limit) come from the core too; nothing here re-derives them.

The core's verdict is kept with the scenario (:meth:`ScenarioBase.verdict`): reading, resolving,
summarising and running a scenario send it to the core's checker once. Setting a field of the
scenario drops the verdict (it is asked for again when needed); a scenario is not changed in place
below its top-level fields (a changed copy is made with ``model_copy``, which drops it too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tomli_w
from pydantic import PrivateAttr, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from ..errors import closest
from . import core
from .fields import Strict

__all__ = ["ScenarioBase", "kind_of", "check_kind"]


def kind_of(kinds: tuple[str, ...]) -> Callable[[Any], str]:
    """Discriminator of a tagged union; a missing ``kind`` means the first variant."""

    def pick(value: Any) -> str:
        if isinstance(value, dict):
            kind = value.get("kind", kinds[0])
            return kind if kind in kinds else kinds[0]
        return getattr(value, "kind", kinds[0])

    return pick


def check_kind(kinds: tuple[str, ...]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, dict) and "kind" in value and value["kind"] not in kinds:
            kind = value["kind"]
            shown = f'"{kind}"' if isinstance(kind, str) else "that"
            best = closest(kind, kinds) if isinstance(kind, str) else None
            hint = f'; did you mean "{best}"?' if best else ""
            raise PydanticCustomError("kind", f"{shown} is not a kind here{hint} (kinds: {', '.join(kinds)})")
        return value

    return check


class ScenarioBase(Strict):
    """What a scenario is beyond its fields."""

    # Where it came from, as the user gave it (load_scenario / parse_scenario set these; a run
    # records them in summary.json as run.scenario_file and run.overrides).
    _source_file: str | None = PrivateAttr(default=None)
    _overrides: tuple[str, ...] = PrivateAttr(default=())
    _has_sweep_table: bool = PrivateAttr(default=False)
    # Its [checks] table (scenario/checks.py): the front end's, never sent to the core.
    _checks: tuple[Any, ...] = PrivateAttr(default=())
    # The core's verdict on this scenario (core.Verdict), once asked for.
    _verdict: Any = PrivateAttr(default=None)

    @property
    def source_file(self) -> str | None:
        """The scenario file's path as given to :func:`load_scenario` (None if built otherwise)."""
        return self._source_file

    @property
    def has_sweep_table(self) -> bool:
        """Whether its file has a [sweep] table (left out of the scenario; `bbrlab sweep` runs it)."""
        return self._has_sweep_table

    @property
    def checks(self) -> tuple[Any, ...]:
        """Its ``[checks]`` bounds on the run's transperf metrics (:class:`checks.Check`)."""
        return self._checks

    @property
    def overrides(self) -> tuple[str, ...]:
        """The ``PATH=VALUE`` overrides applied when it was read, in order."""
        return self._overrides

    @model_validator(mode="after")
    def _checked_by_the_core(self, info: ValidationInfo) -> ScenarioBase:
        if info.context and info.context.get("si"):
            return self  # it comes from the core
        verdict = core.verdict(self)
        # Defaults that depend on other fields (a dumbbell's access rate, a star's buffer): the
        # resolved topology alone (re-validating every flow would cost as much as the check).
        from .introspect import item_model

        topology = verdict.topology()
        cls = item_model(type(self).model_fields["topology"].annotation, topology.get("kind"))
        self.topology = core.from_core(topology, cls)  # type: ignore[arg-type]  # cls: the kind's model
        self._verdict = verdict  # after the assignment, which drops any verdict
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in type(self).model_fields:
            self._verdict = None

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Any:
        copy = super().model_copy(update=update, deep=deep)
        copy._verdict = None  # a copy may be changed; it asks the core again when needed
        return copy

    def __getstate__(self) -> dict[Any, Any]:
        # Pickled (to a worker process): the verdict holds the core's object, which stays here.
        state = super().__getstate__()
        private = state.get("__pydantic_private__")
        if private and private.get("_verdict") is not None:
            state = {**state, "__pydantic_private__": {**private, "_verdict": None}}
        return state

    def verdict(self) -> core.Verdict:
        """The core's verdict on this scenario (checked once, then kept)."""
        if self._verdict is None:
            self._verdict = core.verdict(self)
        return self._verdict

    # ------------------------------------------------------------ derived values

    def derived(self) -> dict[str, Any]:
        """The core's facts about this scenario: bottleneck_rate_bps, base_rtt_ns, bdp_bytes,
        buffer_bytes, buffer_packets, main_queue, flow_count."""
        return dict(self.verdict().derived)

    @property
    def is_star(self) -> bool:
        return self.topology.kind == "star"

    @property
    def is_graph(self) -> bool:
        """A graph (the presets are resolved into one: the checked scenario's topology is it)."""
        return self.topology.kind in ("graph", "parking_lot", "leaf_spine", "fat_tree")

    @property
    def bottleneck_rate(self) -> int:
        """Rate of the link every flow shares: the dumbbell's bottleneck, the star's aggregator port."""
        return int(self.derived()["bottleneck_rate_bps"])

    @property
    def base_rtt(self) -> int:
        return int(self.derived()["base_rtt_ns"])

    @property
    def bdp_bytes(self) -> int:
        return int(self.derived()["bdp_bytes"])

    def buffer_limits(self) -> tuple[int | None, int | None]:
        """(buffer_bytes, buffer_packets) of the shared queue: one set, the other None."""
        d = self.derived()
        return d["buffer_bytes"], d["buffer_packets"]

    @property
    def flow_count(self) -> int:
        """Number of flows after expanding ``count``."""
        return sum(f.count for f in self.flows)  # type: ignore[attr-defined]  # flows: the generated model's

    def expanded_flows(self) -> list[tuple[int, Any]]:
        """(index of the [[flows]] entry, flow) for every simulated flow, in core flow-id order."""
        return [(i, f) for i, f in enumerate(self.flows) for _ in range(f.count)]  # type: ignore[attr-defined]  # likewise

    # ------------------------------------------------------------ outputs

    def resolve(self) -> dict[str, Any]:
        """The core's config (integer SI units, config names, every default filled)."""
        return self.verdict().resolved()

    def human(self) -> dict[str, Any]:
        """The scenario as TOML-ready tables in human units, defaults filled, None omitted, and a
        star's ``pfc`` table only when ``lossless`` is on (otherwise nothing reads it, and written
        out it would suggest PAUSE; see ``overrides.ignored_settings``), no empty schedule."""
        out = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        topology = out.get("topology", {})
        if topology.get("kind") == "star" and not topology.get("lossless"):
            topology.pop("pfc", None)
        # An empty schedule is no schedule: `schedule = []` would only be noise in the file.
        bottleneck = topology.get("bottleneck")
        if isinstance(bottleneck, dict) and bottleneck.get("schedule") == []:
            bottleneck.pop("schedule")
        if self._checks:  # written back, so a run directory's scenario.toml keeps its bounds
            from .checks import CHECKS_TABLE, checks_to_toml

            out[CHECKS_TABLE] = checks_to_toml(self._checks)
        return out

    def to_toml(self, *, header: str | None = None) -> str:
        text = tomli_w.dumps(self.human())
        if header:
            text = "".join(f"# {line}\n" for line in header.splitlines()) + "\n" + text
        return text
