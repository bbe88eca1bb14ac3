"""Field types of the scenario model: a value in human units inside the file, an integer in SI units
inside the model.

Each type parses the file's form ("2.5Gbps") with :mod:`bbrlab.units` and prints it back the same
way when the model is dumped with ``mode="json"``. Validating with the context ``{"si": True}``
takes numbers as already in SI units: that is how the core's resolved config comes back into the
model. :class:`Bounds` enforces the core's schema bounds with messages in human units.

The generated model (``model.py``) is written in these types; nothing here knows a field by name
except the small sugar table at the end.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, PlainSerializer, ValidationInfo
from pydantic_core import PydanticCustomError

from .. import units
from ..errors import closest

__all__ = [
    "Strict",
    "RateBps",
    "TimeNs",
    "SizeBytes",
    "BufferSpec",
    "QueueSizeSpec",
    "Fraction",
    "Count",
    "algorithm_validator",
    "KERNEL_PREFIX",
    "KERNEL_FORM",
    "kernel_module",
    "Bounds",
    "buffer_from_core",
    "buffer_to_core",
    "FORMATTERS",
    "SUGAR",
]


class Strict(BaseModel):
    """Unknown keys are errors: a typo in a scenario must not silently fall back to a default."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, arbitrary_types_allowed=True)


def _si(info: ValidationInfo | None) -> bool:
    return bool(info is not None and info.context and info.context.get("si"))


def _parsed(parse: Callable[[object], Any], si_type: type) -> Callable[[object, ValidationInfo], Any]:
    """A units parser as a validator: the user's value in human units, or an SI number in SI mode;
    its message reaches the user verbatim (no "Value error, " prefix)."""

    def before(value: object, info: ValidationInfo) -> Any:
        if _si(info) and isinstance(value, si_type) and not isinstance(value, bool):
            return value
        try:
            return parse(value)
        except units.UnitError as e:
            raise PydanticCustomError("unit", str(e)) from None

    return before


_json = "json"  # the serializers apply to the human-units dump only, not to model_dump()
RateBps = Annotated[
    int, BeforeValidator(_parsed(units.parse_rate, int)), PlainSerializer(units.format_rate, when_used=_json)
]
TimeNs = Annotated[
    int, BeforeValidator(_parsed(units.parse_time, int)), PlainSerializer(units.format_time, when_used=_json)
]
SizeBytes = Annotated[
    int, BeforeValidator(_parsed(units.parse_size, int)), PlainSerializer(units.format_size, when_used=_json)
]
Fraction = Annotated[
    float,
    BeforeValidator(_parsed(units.parse_fraction, float)),
    PlainSerializer(units.format_fraction, when_used=_json),
]
Count = int


def buffer_from_core(value: dict[str, Any]) -> units.Buffer:
    """The core's ``{"bytes": n}`` / ``{"packets": n}`` / ``{"bdp": x}`` as a :class:`units.Buffer`."""
    ((kind, v),) = value.items()
    if kind == "bdp":
        return units.Buffer("bdp", Decimal(repr(float(v))).normalize())
    return units.Buffer(cast(Literal["bytes", "packets"], kind), int(v))


def buffer_to_core(b: units.Buffer) -> dict[str, Any]:
    return {b.kind: float(b.value) if b.kind == "bdp" else int(b.value)}


def _buffer(value: object, info: ValidationInfo) -> units.Buffer:
    if _si(info) and isinstance(value, dict):
        return buffer_from_core(value)
    try:
        return units.parse_buffer(value)
    except units.UnitError as e:
        raise PydanticCustomError("unit", str(e)) from None


BufferSpec = Annotated[units.Buffer, BeforeValidator(_buffer), PlainSerializer(units.format_buffer, when_used=_json)]


def _queue_size(value: object, info: ValidationInfo) -> units.Buffer:
    """A queue size (a RED threshold): a size or packets, as a buffer is written, but no BDP
    multiple (a graph link has no RTT to multiply)."""
    b = _buffer(value, info)
    if b.kind == "bdp":
        raise PydanticCustomError(
            "unit", f'"{units.format_buffer(b)}": a threshold is a size or packets, e.g. "30KB" or "20pkts"'
        )
    return b


#: The core's ``QueueSize`` (``{"bytes": n}`` / ``{"packets": n}``), written "30KB" or "20pkts".
QueueSizeSpec = Annotated[
    units.Buffer, BeforeValidator(_queue_size), PlainSerializer(units.format_buffer, when_used=_json)
]


#: ``kernel:NAME`` names a congestion control of the running kernel by its own name (any entry
#: of tcp_available_congestion_control, e.g. ``kernel:htcp``): only the emu backend runs it.
KERNEL_PREFIX = "kernel:"
#: How the accepted form reads in messages.
KERNEL_FORM = "kernel:NAME (a name in the kernel's tcp_available_congestion_control; --backend emu only)"
# A kernel name: TCP_CA_NAME_MAX is 16 bytes with the NUL; the kernel's names are [a-z0-9_].
_KERNEL_NAME = re.compile(r"[A-Za-z0-9_-]{1,15}")


def kernel_module(cc: str) -> str | None:
    """NAME when ``cc`` is the form ``kernel:NAME`` (None otherwise); ValueError when the form is
    used with a NAME the kernel could not have."""
    if not cc.strip().lower().startswith(KERNEL_PREFIX):
        return None
    name = cc.strip()[len(KERNEL_PREFIX) :]
    if not _KERNEL_NAME.fullmatch(name):
        raise ValueError(f'"{cc}": {KERNEL_FORM}, NAME 1-15 letters, digits or _')
    return name


def _algorithm(names: tuple[str, ...]) -> Callable[[object], str]:
    def check(value: object) -> str:
        if not isinstance(value, str):
            raise PydanticCustomError("string_type", "not a string")
        low = value.strip().lower()
        try:
            module = kernel_module(value)
        except ValueError as e:
            raise PydanticCustomError("cc", str(e)) from None
        if module is not None:
            return KERNEL_PREFIX + module
        if low not in names:
            best = closest(low, names)
            hint = f"did you mean '{best}'? " if best else ""
            raise PydanticCustomError(
                "cc", f'unknown algorithm "{value}"; {hint}valid names: {", ".join(names)}, or {KERNEL_FORM}'
            )
        return low

    return check


def algorithm_validator(names: tuple[str, ...]) -> BeforeValidator:
    """The check of a congestion-control name from the core's registry (any case; stored in
    lower case): the model's ``cc`` fields are ``Annotated[str, algorithm_validator(...)]``."""
    return BeforeValidator(_algorithm(names))


#: How a value of each unit reads in a message.
FORMATTERS: dict[str, Callable[[Any], str | float]] = {
    "rate": units.format_rate,
    "time": units.format_time,
    "size": units.format_size,
    "fraction": units.format_fraction,
    "count": str,
}


def Bounds(
    unit: str,
    minimum: Any = None,
    maximum: Any = None,
    *,
    exclusive_min: bool = False,
    exclusive_max: bool = False,
) -> AfterValidator:
    """The core's bounds on a field, checked with a message in the field's unit."""
    human = FORMATTERS[unit]

    def fmt(v: Any) -> str:
        # An absurd integer (a 4301-digit seed) is described, never converted to text.
        return units._show(v) if isinstance(v, int) and abs(v) >= 10**units.MAX_EXPONENT else str(human(v))

    if minimum is not None and maximum is not None:
        rule = f"in {'(' if exclusive_min else '['}{fmt(minimum)}, {fmt(maximum)}{')' if exclusive_max else ']'}"
    elif minimum is not None:
        rule = f"{'>' if exclusive_min else '>='} {fmt(minimum)}"
    else:
        rule = f"{'<' if exclusive_max else '<='} {fmt(maximum)}"

    def check(value: Any) -> Any:
        if value is None:
            return value
        low = minimum is not None and (value <= minimum if exclusive_min else value < minimum)
        high = maximum is not None and (value >= maximum if exclusive_max else value > maximum)
        if low or high:
            raise PydanticCustomError("range", f"{fmt(value)} is out of range; it must be {rule}")
        return value

    return AfterValidator(check)


def _pacing(value: object) -> object:
    # TOML booleans are the natural way to force pacing; keep one spelling inside the model.
    if value is True:
        return "on"
    if value is False:
        return "off"
    if isinstance(value, str):
        return value.strip().lower()
    return value


#: Spellings a scenario file may use beyond the core's own, by field: `pacing = true`.
SUGAR: dict[str, BeforeValidator] = {"pacing": BeforeValidator(_pacing)}
