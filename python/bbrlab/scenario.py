"""The scenario model: a TOML file in human units -> a validated :class:`Scenario` -> core config.

Three steps, each with one job:

1. :func:`load_scenario` reads TOML and applies ``--set path=value`` overrides to the raw tables;
2. pydantic validates types and units field by field (errors carry the field path), then
   :func:`_cross_check` checks relations between fields (stop > start, buffer vs BDP, ...);
3. :meth:`Scenario.resolve` produces the core's JSON config (integer SI units, ``count`` expanded),
   and :meth:`Scenario.to_toml` writes the scenario back in human units with every default filled.

Inside the model, values are already in integer SI units (``rate`` in bit/s, times in ns, sizes in
bytes); they are formatted back to human units only when dumped with ``mode="json"``.
"""

from __future__ import annotations

import math
import re
import tomllib
import types
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import tomli_w
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    PlainSerializer,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from . import algorithms, units
from .errors import ScenarioError, did_you_mean

__all__ = ["Scenario", "Flow", "Bottleneck", "Dumbbell", "load_scenario", "parse_scenario", "apply_overrides"]


# ------------------------------------------------------------------ unit-typed fields


def _parsed(parse: Callable[[object], Any]) -> Callable[[object], Any]:
    """Wrap a units parser so its message reaches the user verbatim (no "Value error, " prefix)."""

    def before(value: object) -> Any:
        try:
            return parse(value)
        except units.UnitError as e:
            raise PydanticCustomError("unit", str(e)) from None

    return before


def _require(ok: Callable[[Any], bool], fmt: Callable[[Any], str], rule: str) -> AfterValidator:
    def check(value: Any) -> Any:
        if value is not None and not ok(value):
            raise PydanticCustomError("range", f"{fmt(value)} is out of range; {rule}")
        return value

    return AfterValidator(check)


_json = "json"  # serializers below only apply to the human-units dump, not to model_dump()
RateBps = Annotated[int, BeforeValidator(_parsed(units.parse_rate)), PlainSerializer(units.format_rate, when_used=_json)]
TimeNs = Annotated[int, BeforeValidator(_parsed(units.parse_time)), PlainSerializer(units.format_time, when_used=_json)]
SizeBytes = Annotated[int, BeforeValidator(_parsed(units.parse_size)), PlainSerializer(units.format_size, when_used=_json)]
BufferSpec = Annotated[
    units.Buffer, BeforeValidator(_parsed(units.parse_buffer)), PlainSerializer(units.format_buffer, when_used=_json)
]
Fraction = Annotated[
    float, BeforeValidator(_parsed(units.parse_fraction)), PlainSerializer(units.format_fraction, when_used=_json)
]

PositiveRate = Annotated[RateBps, _require(lambda v: v > 0, units.format_rate, "a rate must be > 0")]
PositiveTime = Annotated[TimeNs, _require(lambda v: v > 0, units.format_time, "it must be > 0")]
PositiveSize = Annotated[SizeBytes, _require(lambda v: v > 0, units.format_size, "it must be > 0")]
LossFraction = Annotated[
    Fraction, _require(lambda v: 0.0 <= v < 1.0, units.format_fraction, 'a probability must be in [0%, 100%), e.g. "1.5%"')
]


def _pacing(value: object) -> object:
    # TOML booleans are the natural way to force pacing; keep one spelling inside the model.
    if value is True:
        return "on"
    if value is False:
        return "off"
    if isinstance(value, str):
        return value.strip().lower()
    return value


class _Strict(BaseModel):
    # Unknown keys are errors (a typo in a scenario must not silently fall back to a default).
    model_config = ConfigDict(extra="forbid", populate_by_name=True, arbitrary_types_allowed=True)


# ------------------------------------------------------------------ the schema


class Red(_Strict):
    """RED marking/dropping on the bottleneck (Floyd & Jacobson; ECN-capable packets are marked)."""

    min_th: PositiveSize
    max_th: PositiveSize
    max_p: Annotated[float, Field(gt=0, le=1)] = 0.1
    weight: Annotated[float, Field(gt=0, le=1)] = 0.002

    @model_validator(mode="after")
    def _ordered(self) -> Red:
        if self.max_th <= self.min_th:
            raise PydanticCustomError("red", "max_th must be larger than min_th")
        return self


class Bottleneck(_Strict):
    rate: PositiveRate
    rtt: TimeNs
    buffer: BufferSpec = Field(default="1bdp", validate_default=True)
    loss: LossFraction = Field(default=0.0)
    ack_loss: LossFraction = Field(default=0.0)
    ecn_threshold: PositiveSize | None = None
    ecn_threshold_packets: Annotated[int, Field(ge=1)] | None = None
    red: Red | None = None

    @property
    def bdp_bytes(self) -> int:
        """Bandwidth-delay product: rate x base RTT, in bytes."""
        return self.rate * self.rtt // (8 * 10**9)


class Dumbbell(_Strict):
    """N senders -> one bottleneck link -> N receivers; every flow crosses the bottleneck."""

    kind: Literal["dumbbell"] = "dumbbell"
    bottleneck: Bottleneck
    access_rate: PositiveRate | None = None  # default: 10x the bottleneck rate, filled below

    @model_validator(mode="after")
    def _default_access_rate(self) -> Dumbbell:
        if self.access_rate is None:
            self.access_rate = 10 * self.bottleneck.rate
        return self


class Pfc(_Strict):
    """IEEE 802.3x PAUSE back-pressure (lossless mode) at every switch output port."""

    xoff: PositiveSize = Field(default="64KB", validate_default=True)
    xon: PositiveSize = Field(default="32KB", validate_default=True)
    quanta: Annotated[int, Field(ge=1, le=65535)] = 65535

    @model_validator(mode="after")
    def _ordered(self) -> Pfc:
        if self.xon >= self.xoff:
            raise PydanticCustomError("range", "xon must be smaller than xoff")
        return self


class Star(_Strict):
    """One top-of-rack switch: `workers` hosts, each on its own link into the switch, and one
    aggregator/receiver host behind the switch's output port (seed 000's data-center fabric)."""

    kind: Literal["star"] = "star"
    workers: Annotated[int, Field(ge=1, le=10_000)]
    rate: PositiveRate
    aggregator_rate: PositiveRate | None = None  # default: rate
    delay: TimeNs = Field(default="10us", validate_default=True)  # one way, per host link
    buffer: PositiveSize | None = None  # per output port; default 128KB, unlimited when lossless
    shared_buffer: PositiveSize | None = None
    forwarding: Literal["store-and-forward", "cut-through"] = "store-and-forward"
    header: PositiveSize = Field(default="64B", validate_default=True)
    ecn_threshold: PositiveSize | None = None
    lossless: bool = False
    pfc: Pfc | None = None  # implies lossless; default thresholds when lossless = true
    # Host NIC clocks differ from the switch's by up to ± this (IEEE 802.3: ±100 ppm); 0 = exact.
    clock_ppm: Annotated[int, Field(ge=0, le=1000)] = 100
    # Host transmit timing jitter (NIC DMA/PCIe): each packet reaches the switch up to this late.
    host_jitter: TimeNs = Field(default="1us", validate_default=True)

    @model_validator(mode="after")
    def _defaults(self) -> Star:
        if self.pfc is not None:
            self.lossless = True
        if self.lossless and self.pfc is None:
            self.pfc = Pfc()
        if self.aggregator_rate is None:
            self.aggregator_rate = self.rate
        if self.buffer is None and not self.lossless:
            self.buffer = 128_000
        return self

    @property
    def base_rtt(self) -> int:
        """Propagation RTT worker -> aggregator -> worker (four link traversals)."""
        return 4 * self.delay


TOPOLOGY_KINDS: dict[str, type[_Strict]] = {"dumbbell": Dumbbell, "star": Star}


def _topology_kind(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("kind", "dumbbell")
        return kind if kind in TOPOLOGY_KINDS else "dumbbell"
    return getattr(value, "kind", "dumbbell")


Topology = Annotated[
    Annotated[Dumbbell, Tag("dumbbell")] | Annotated[Star, Tag("star")], Discriminator(_topology_kind)
]


def _topology_kind_check(value: Any) -> Any:
    if isinstance(value, dict) and "kind" in value and value["kind"] not in TOPOLOGY_KINDS:
        raise PydanticCustomError(
            "kind", f'"{value["kind"]}" is not a topology kind; use one of {", ".join(TOPOLOGY_KINDS)}'
        )
    return value


class Rpc(_Strict):
    """Request/response workload: write `size` (rounded up to whole segments), wait for the full
    ACK (the receiver answers a complete message at once), wait `gap`, repeat; per-message
    latency in the `rpc_*` flow columns."""

    size: PositiveSize
    gap: TimeNs = Field(default="0s", validate_default=True)


class Flow(_Strict):
    cc: str
    start: TimeNs = Field(default="0s", validate_default=True)
    stop: TimeNs | None = None
    bytes_: PositiveSize | None = Field(default=None, alias="bytes")
    count: Annotated[int, Field(ge=1, le=100_000)] = 1
    extra_rtt: TimeNs = Field(default="0s", validate_default=True)
    mss: Annotated[int, Field(ge=64, le=65_000)] = 1448
    initial_cwnd: Annotated[int, Field(ge=1, le=1_000_000)] = 10
    pacing: Annotated[Literal["auto", "on", "off"], BeforeValidator(_pacing)] = "auto"
    max_pacing_rate: PositiveRate | None = None
    sndbuf: PositiveSize | None = None
    rcvbuf: PositiveSize | None = None
    ecn: bool = False
    tso: bool = True
    min_rto: TimeNs = Field(default="200ms", validate_default=True)
    delayed_ack: bool = True
    tso_minrtt_autosize: bool = True
    receiver_window: Literal["static", "ictcp"] = "static"
    gap_histogram: bool = False  # histogram of inter-departure gaps at the sender NIC (`gaps` table)
    faster_acks: bool = True  # seed 001's receiver fix; false = old Linux rule (window must not shrink)
    app_read_delay: TimeNs | None = None  # receiving app reads this long after data arrives (None = at once)
    rpc: Rpc | None = None
    sender: Annotated[int, Field(ge=0)] | None = None

    @field_validator("cc")
    @classmethod
    def _known_algorithm(cls, name: str) -> str:
        if algorithms.canonical(name) is None:
            valid = ", ".join(algorithms.valid_names())
            raise PydanticCustomError("cc", f'unknown algorithm "{name}"; valid names: {valid}')
        return name  # stored as written ("bbr" stays "bbr"); resolve() maps aliases


class QueryApp(_Strict):
    """Partition/aggregate query (seed 000 §4.1): the aggregator asks workers 0..n-1 for size/n bytes
    each over new connections; response time = until all n responses are complete; `repetitions`
    queries, each `gap` after the previous one ended (the `events` table, one row per query)."""

    kind: Literal["query"]
    workers: Annotated[int, Field(ge=1, le=10_000)]
    size: PositiveSize = Field(default="1MiB", validate_default=True)
    repetitions: Annotated[int, Field(ge=1, le=1_000_000)] = 100
    start: TimeNs = Field(default="0s", validate_default=True)
    gap: TimeNs = Field(default="50ms", validate_default=True)
    jitter: TimeNs = Field(default="0s", validate_default=True)
    handshake: bool = False
    flow: Flow  # transport settings of every response (cc, min_rto, ...); start/stop/bytes unused


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class Scenario(_Strict):
    name: str = "scenario"
    duration: PositiveTime
    seed: Annotated[int, Field(ge=0, lt=2**63)] = 1
    sample_interval: PositiveTime = Field(default="100ms", validate_default=True)
    topology: Annotated[Topology, BeforeValidator(_topology_kind_check)]
    flows: list[Flow] = Field(default_factory=list)
    apps: list[QueryApp] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _safe_name(cls, name: str) -> str:
        # The name becomes a directory name (runs/<name>-<timestamp>); keep it portable.
        if not _NAME.match(name):
            raise PydanticCustomError(
                "name", f'"{name}" is not a usable name; use letters, digits, ".", "_" or "-" (e.g. "bbr-vs-cubic")'
            )
        return name

    # ------------------------------------------------------------ derived values

    @property
    def is_star(self) -> bool:
        return self.topology.kind == "star"

    @property
    def bottleneck_rate(self) -> int:
        """Rate of the link every flow shares: the dumbbell's bottleneck, the star's aggregator port."""
        t = self.topology
        return t.aggregator_rate if isinstance(t, Star) else t.bottleneck.rate

    @property
    def base_rtt(self) -> int:
        t = self.topology
        return t.base_rtt if isinstance(t, Star) else t.bottleneck.rtt

    @property
    def bdp_bytes(self) -> int:
        if isinstance(self.topology, Star):
            return self.bottleneck_rate * self.base_rtt // (8 * 10**9)
        return self.topology.bottleneck.bdp_bytes

    @property
    def flow_count(self) -> int:
        """Number of flows after expanding ``count``."""
        return sum(f.count for f in self.flows)

    def expanded_flows(self) -> list[tuple[int, Flow]]:
        """(index of the [[flows]] entry, flow) for every simulated flow, in core flow-id order."""
        return [(i, f) for i, f in enumerate(self.flows) for _ in range(f.count)]

    def buffer_limits(self) -> tuple[int | None, int | None]:
        """(buffer_bytes, buffer_packets) as the core wants them: one set, the other None."""
        if isinstance(self.topology, Star):
            return self.topology.buffer, None
        b = self.topology.bottleneck
        if b.buffer.kind == "packets":
            return None, int(b.buffer.value)
        return b.buffer.resolve_bytes(self.bdp_bytes), None

    # ------------------------------------------------------------ outputs

    def resolve(self) -> dict[str, Any]:
        """The core's config (docs/core-api.md): integer SI units, every default explicit."""
        flows = [_resolve_flow(f) for _, f in self.expanded_flows()]
        out: dict[str, Any] = {
            "seed": self.seed,
            "duration_ns": self.duration,
            "sample_interval_ns": self.sample_interval,
            "flows": flows,
        }
        if isinstance(self.topology, Star):
            t = self.topology
            out["topology"] = {
                "kind": "star",
                "star": {
                    "workers": t.workers,
                    "rate_bps": t.rate,
                    "aggregator_rate_bps": t.aggregator_rate,
                    "delay_ns": t.delay,
                    "buffer_bytes": t.buffer,
                    "shared_buffer_bytes": t.shared_buffer,
                    "forwarding": t.forwarding.replace("-", "_"),
                    "header_bytes": t.header,
                    "clock_ppm": t.clock_ppm,
                    "host_jitter_ns": t.host_jitter,
                    "ecn_threshold_bytes": t.ecn_threshold,
                    "pfc": None
                    if t.pfc is None
                    else {"xoff_bytes": t.pfc.xoff, "xon_bytes": t.pfc.xon, "pause_quanta": t.pfc.quanta},
                },
            }
        else:
            out["topology"] = self._resolve_dumbbell()
        out["apps"] = [
            {
                "kind": a.kind,
                "workers": a.workers,
                "bytes": a.size,
                "repetitions": a.repetitions,
                "start_ns": a.start,
                "gap_ns": a.gap,
                "jitter_ns": a.jitter,
                "handshake": a.handshake,
                "flow": _resolve_flow(a.flow),
            }
            for a in self.apps
        ]
        return out

    def _resolve_dumbbell(self) -> dict[str, Any]:
        b = self.topology.bottleneck
        buffer_bytes, buffer_packets = self.buffer_limits()
        return {
            "kind": self.topology.kind,
            "bottleneck": {
                "rate_bps": b.rate,
                "rtt_ns": b.rtt,
                "buffer_bytes": buffer_bytes,
                "buffer_packets": buffer_packets,
                "loss": float(b.loss),
                "ack_loss": float(b.ack_loss),
                "ecn_threshold_bytes": b.ecn_threshold,
                "ecn_threshold_packets": b.ecn_threshold_packets,
                "red": None
                if b.red is None
                else {"min_th_bytes": b.red.min_th, "max_th_bytes": b.red.max_th, "max_p": b.red.max_p,
                      "weight": b.red.weight},
            },
            "access_rate_bps": self.topology.access_rate,
        }

    def human(self) -> dict[str, Any]:
        """The scenario as TOML-ready tables in human units, defaults filled, None omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_toml(self, *, header: str | None = None) -> str:
        text = tomli_w.dumps(self.human())
        if header:
            text = "".join(f"# {line}\n" for line in header.splitlines()) + "\n" + text
        return text


def _resolve_flow(f: Flow) -> dict[str, Any]:
    """One flow's core config."""
    return {
        "cc": algorithms.canonical(f.cc),
        "start_ns": f.start,
        "stop_ns": f.stop,
        "bytes": f.bytes_,
        "extra_rtt_ns": f.extra_rtt,
        "mss_bytes": f.mss,
        "initial_cwnd_segs": f.initial_cwnd,
        "pacing": {"auto": None, "on": True, "off": False}[f.pacing],
        "max_pacing_rate_bps": f.max_pacing_rate,
        "sndbuf_bytes": f.sndbuf,
        "rcvbuf_bytes": f.rcvbuf,
        "ecn": f.ecn,
        "tso": f.tso,
        "min_rto_ns": f.min_rto,
        "delayed_ack": f.delayed_ack,
        "tso_minrtt_autosize": f.tso_minrtt_autosize,
        "receiver_window": f.receiver_window,
        "gap_histogram": f.gap_histogram,
        "faster_acks": f.faster_acks,
        "app_read_delay_ns": f.app_read_delay,
        "rpc": None if f.rpc is None else {"size_bytes": f.rpc.size, "gap_ns": f.rpc.gap},
        "sender": f.sender,
    }


# ------------------------------------------------------------------ loading, overrides, errors

_EXAMPLES: dict[str, str] = {
    "duration": 'add duration = "60s"',
    "topology": 'add [topology] with bottleneck = { rate = "100Mbps", rtt = "40ms" }',
    "bottleneck": 'add bottleneck = { rate = "100Mbps", rtt = "40ms" }',
    "flows": 'add at least one [[flows]] table with cc = "cubic"',
    "rate": 'add rate = "100Mbps"',
    "rtt": 'add rtt = "40ms"',
    "cc": 'add cc = "cubic"',
}


def _path(loc: Sequence[int | str]) -> str:
    return ".".join(str(p) for p in loc)


def _model_at(loc: Sequence[int | str], kind: str | None = None) -> type[BaseModel] | None:
    """The model class whose fields live at ``loc`` ("topology.bottleneck" -> Bottleneck).

    ``kind`` picks the topology model ("dumbbell", "star") below ``topology``.
    """
    model: type[BaseModel] | None = Scenario
    for part in loc:
        if model is None:
            return None
        if isinstance(part, int):
            continue  # list index: stays on the list's item model, already selected
        field = _fields_by_key(model).get(part)
        if field is None:
            return None
        model = _item_model(field.annotation)
        if part == "topology" and model is Dumbbell:
            model = TOPOLOGY_KINDS.get(kind or "dumbbell", Dumbbell)
    return model


def _strip_tag(loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], str | None]:
    """Drop the union tag pydantic puts after ``topology`` ("topology.star.workers" -> "topology.workers")."""
    if len(loc) >= 2 and loc[0] == "topology" and loc[1] in TOPOLOGY_KINDS:
        return (loc[0],) + tuple(loc[2:]), str(loc[1])
    return loc, None


def _fields_by_key(model: type[BaseModel]) -> dict[str, Any]:
    """Fields by the key written in TOML (the alias when there is one)."""
    return {(f.alias or name): f for name, f in model.model_fields.items()}


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _item_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (directly, optionally, or as list items), or None for a leaf."""
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if origin in (list, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            m = _item_model(arg)
            if m is not None:
                return m
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _describe(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _message(err: dict[str, Any]) -> tuple[str, str]:
    """(field path, one-line message) for one pydantic error, in the user's vocabulary."""
    loc, topo_kind = _strip_tag(tuple(err["loc"]))
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        parent, key = loc[:-1], str(loc[-1])
        model = _model_at(parent, topo_kind)
        where = f"in [{_path(parent)}]" if parent else "at the top level"
        hint = did_you_mean(key, _fields_by_key(model)) if model is not None else ""
        return _path(loc), f"unknown key '{key}' {where}{hint}"
    if kind == "missing":
        leaf = str(loc[-1])
        return _path(loc), f"missing; {_EXAMPLES.get(leaf, 'add it')}"
    if kind == "kind":
        return _path(loc) + ".kind", err["msg"]
    if kind in ("unit", "range", "cc", "name"):
        return _path(loc), err["msg"]
    if kind == "literal_error":
        return _path(loc), f"{_describe(value)} is not allowed; use one of {ctx.get('expected', '')}"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return _path(loc), f"{_describe(value)} is not an integer; write a whole number, e.g. 10"
    if kind in ("bool_parsing", "bool_type"):
        return _path(loc), f"{_describe(value)} is not a boolean; write true or false"
    if kind in ("string_type",):
        return _path(loc), f"{_describe(value)} is not a string; put it in double quotes"
    if kind in ("list_type",):
        return _path(loc), f"{_describe(value)} is not a list; write one [[{loc[-1]}]] table per item"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return _path(loc), f"{_describe(value)} is not a table; write [{_path(loc)}] with its keys"
    if kind == "too_short" and loc == ("flows",):
        return "flows", f"there are no flows; {_EXAMPLES['flows']}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return _path(loc), f"{_describe(value)} is out of range; {err['msg'].lower()}"
    return _path(loc), f"{_describe(value)}: {err['msg']}"


def _from_validation_error(exc: ValidationError, overrides: Sequence[str] = ()) -> ScenarioError:
    errors = exc.errors(include_url=False)
    # An unknown key is usually a misspelt known one, which then also shows up as "missing":
    # report the typo, the root cause, first.
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    # Report the first problem; later ones are often consequences of it.
    path, msg = _message(errors[0])
    set_paths = [o.split("=", 1)[0].strip() for o in overrides]
    if any(path == p or path.startswith(p + ".") for p in set_paths):
        path += " (from --set)"
    return ScenarioError(path, msg, more=len(errors) - 1)


def _cross_check(s: Scenario) -> None:
    """Relations between fields that single-field validation cannot see; first problem wins."""
    d = s.duration
    if s.sample_interval > d:
        raise ScenarioError(
            "sample_interval",
            f"{units.format_time(s.sample_interval)} is longer than the run ({units.format_time(d)}); "
            "it must be <= duration",
        )
    if not s.flows and not s.apps:
        raise ScenarioError("flows", f"there are no flows; {_EXAMPLES['flows']}")
    if isinstance(s.topology, Star):
        _cross_check_star(s)
    else:
        _cross_check_dumbbell(s)
    _cross_check_flows(s)


def _cross_check_star(s: Scenario) -> None:
    t = s.topology
    assert isinstance(t, Star)
    n = 0
    for i, f in enumerate(s.flows):
        for _ in range(f.count):
            w = f.sender if f.sender is not None else n
            if w >= t.workers:
                raise ScenarioError(
                    f"flows.{i}.sender",
                    f"worker {w} does not exist: the star has {t.workers} workers (0..{t.workers - 1}); "
                    "a flow without sender uses the worker with its flow number",
                )
            n += 1
        if f.extra_rtt:
            raise ScenarioError(f"flows.{i}.extra_rtt", "is not supported on a star; set topology.delay instead")
    for i, a in enumerate(s.apps):
        if a.workers > t.workers:
            raise ScenarioError(f"apps.{i}.workers", f"{a.workers} is more than the star's {t.workers} workers")
        if a.size < a.workers:
            raise ScenarioError(f"apps.{i}.size", f"{units.format_size(a.size)} is less than one byte per worker")
        if a.start >= s.duration:
            raise ScenarioError(f"apps.{i}.start", f"{units.format_time(a.start)} is not before the end of the run")
        for key, value in (("start", a.flow.start), ("stop", a.flow.stop), ("bytes", a.flow.bytes_), ("sender", a.flow.sender)):
            if value not in (None, 0):
                raise ScenarioError(f"apps.{i}.flow.{key}", "is set by the query app; leave it out")
        if a.flow.count != 1:
            raise ScenarioError(f"apps.{i}.flow.count", "is set by the query app (one flow per worker); leave it out")
    if t.pfc is not None and t.buffer is not None and t.buffer < t.pfc.xoff:
        raise ScenarioError("topology.buffer", f"{units.format_size(t.buffer)} is below pfc.xoff ({units.format_size(t.pfc.xoff)}); "
                            "a lossless port needs room above XOFF")


def _cross_check_dumbbell(s: Scenario) -> None:
    if s.apps:
        raise ScenarioError("apps", 'query apps need a star topology (topology.kind = "star")')
    b = s.topology.bottleneck
    buffer_bytes, buffer_packets = s.buffer_limits()
    if buffer_packets is not None and buffer_packets <= 0:
        raise ScenarioError("topology.bottleneck.buffer", f'{buffer_packets}pkts is empty; a buffer must be > 0, e.g. "100pkts"')
    if buffer_bytes is not None and buffer_bytes <= 0:
        why = " because rtt is 0 so the BDP is 0" if b.buffer.kind == "bdp" and b.rtt == 0 else ""
        raise ScenarioError(
            "topology.bottleneck.buffer",
            f'{units.format_buffer(b.buffer)} is 0 bytes{why}; a buffer must be > 0: give a size like "64KB" or "100pkts"',
        )
    if buffer_bytes is not None:
        mss = max(f.mss for f in s.flows)
        if buffer_bytes < mss:
            raise ScenarioError(
                "topology.bottleneck.buffer",
                f"{units.format_buffer(b.buffer)}{'' if b.buffer.kind == 'bytes' else ' = ' + units.format_size(buffer_bytes)}"
                f" is smaller than one packet "
                f"({mss} B); every packet would be dropped",
            )


def _cross_check_flows(s: Scenario) -> None:
    d = s.duration
    if s.flow_count > 100_000:
        raise ScenarioError("flows", f"{s.flow_count} flows after expanding count; the limit is 100000")
    for i, f in enumerate(s.flows):
        if f.start >= d:
            raise ScenarioError(
                f"flows.{i}.start",
                f"{units.format_time(f.start)} is not before the end of the run ({units.format_time(d)}); it must be < duration",
            )
        if f.stop is not None and f.stop <= f.start:
            raise ScenarioError(
                f"flows.{i}.stop",
                f"{units.format_time(f.stop)} is not after start ({units.format_time(f.start)}); it must be > start",
            )
        if f.min_rto <= 0:
            raise ScenarioError(f"flows.{i}.min_rto", f"{units.format_time(f.min_rto)} must be > 0")


def parse_scenario(raw: dict[str, Any], *, overrides: Sequence[str] = (), default_name: str = "scenario") -> Scenario:
    """Validate raw TOML tables (already read, overrides not yet applied)."""
    raw = apply_overrides(raw, overrides)
    raw.setdefault("name", default_name)
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        raise _from_validation_error(exc, overrides) from None
    _cross_check(scenario)
    return scenario


def load_scenario(path: str | Path, overrides: Sequence[str] | None = None) -> Scenario:
    """Read, override and validate a scenario file; raises :class:`ScenarioError` on any problem."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ScenarioError("", f"{p}: no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError("", f"{p}: is a directory, not a scenario file") from None
    except OSError as e:
        raise ScenarioError("", f"{p}: cannot read: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("", f"{p}: not a TOML file (not UTF-8 text)") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("", f"{p}: not valid TOML: {e}") from None
    return parse_scenario(raw, overrides=overrides or (), default_name=_default_name(p))


def _default_name(p: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", p.stem).strip("-._") or "scenario"
    return stem


# ------------------------------------------------------------------ --set path=value


def _override_value(text: str, leaf: str) -> Any:
    """A --set value: a TOML value when it parses as one (10, 0.5, true, [..], {..}), else a string.

    So `--set duration=30s` and `--set flows.0.cc=bbr` need no quotes, while `--set seed=7` is an int.
    """
    if leaf in ("name", "cc", "kind"):
        return text.strip().strip('"')
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()
    if isinstance(value, float) and not math.isfinite(value):
        return text.strip()
    return value


def apply_overrides(raw: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply ``path=value`` overrides to raw tables (returns a modified deep copy).

    A path must name a field of the schema: ``duration``, ``topology.bottleneck.loss``,
    ``flows.0.cc``. A flow index may be one past the end to add a flow (``flows.1.cc=cubic``).
    """
    import copy

    raw = copy.deepcopy(raw)
    for item in overrides:
        if "=" not in item:
            raise ScenarioError(f"--set {item}", 'expected path=value, e.g. --set flows.0.cc=bbr1 or --set duration=30s')
        path, text = (s.strip() for s in item.split("=", 1))
        parts = path.split(".") if path else []
        if not parts or any(p == "" for p in parts):
            raise ScenarioError(f"--set {path or '(empty)'}", "not a field path; write e.g. topology.bottleneck.loss")
        if text == "":
            raise ScenarioError(f"--set {path}", "has no value; write path=value, e.g. --set duration=30s")
        node: Any = raw
        model: type[BaseModel] | None = Scenario
        done: list[str] = []
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            where = f"in [{'.'.join(done)}]" if done else "at the top level"
            if isinstance(node, list):
                if not part.isdigit():
                    raise ScenarioError(
                        f"--set {path}", f"'{part}' is not an index into {'.'.join(done)}; write e.g. {'.'.join(done)}.0.cc"
                    )
                idx = int(part)
                if idx > len(node):
                    raise ScenarioError(
                        f"--set {path}",
                        f"{'.'.join(done)} has {len(node)} entr{'y' if len(node) == 1 else 'ies'}; "
                        f"index {idx} is out of range (use 0..{len(node)}, {len(node)} adds one)",
                    )
                if last:
                    raise ScenarioError(f"--set {path}", "cannot replace a whole flow; set its fields, e.g. flows.0.cc")
                if idx == len(node):
                    node.append({})
                node = node[idx]
                done.append(part)
                continue
            if model is None or not isinstance(node, dict):
                raise ScenarioError(f"--set {path}", f"'{'.'.join(done)}' is a value, it has no field '{part}'")
            fields = _fields_by_key(model)
            if part not in fields:
                raise ScenarioError(f"--set {path}", f"unknown key '{part}' {where}{did_you_mean(part, fields)}")
            if last:
                node[part] = _override_value(text, part)
                break
            child_model = _item_model(fields[part].annotation)
            if model is Scenario and part == "topology":
                kind = node.get("topology", {}).get("kind", "dumbbell") if isinstance(node.get("topology"), dict) else "dumbbell"
                child_model = TOPOLOGY_KINDS.get(kind, Dumbbell)
            is_list = typing.get_origin(_unwrap(fields[part].annotation)) is list
            if child_model is None:
                raise ScenarioError(f"--set {path}", f"'{'.'.join(done + [part])}' is a value, it has no field '{parts[i + 1]}'")
            if part not in node or not isinstance(node[part], (dict, list)):
                node[part] = [] if is_list else {}
            node = node[part]
            model = child_model
            done.append(part)
    return raw
