"""Human units <-> integer SI units.

Scenario files speak in human units ("2.5Gbps", "70ms", "80MB", "1bdp", "1.5%"); the core speaks in
integers (bits/s, nanoseconds, bytes). This module is the only place that converts between the two.

Conventions (chosen so a value always means one thing):
- a lower-case ``b`` is a bit, an upper-case ``B`` is a byte: rates are ``bps`` / ``bit/s``, sizes
  are ``B``; the SI prefix itself is case-insensitive (``mbps`` = ``Mbps``).
- decimal prefixes are powers of 1000 (``KB`` = 1000 B), binary ones of 1024 (``KiB`` = 1024 B).
- every parser raises :class:`UnitError` whose message says what was wrong and what to write instead.

Parsing goes through :class:`decimal.Decimal` so "2.5Gbps" is exactly 2_500_000_000 and formatting
is exact: ``parse_x(format_x(v)) == v`` for every integer ``v`` (tests check this).

Two kinds of output, kept apart on purpose: ``format_rate``/``format_size``/… write a value back
*exactly* (scenario.toml, --set); :func:`format_scaled` *rounds* a measured value for reading
("94.31 Mbit/s", "318.7 KB", "1.91M"). Every table bbrlab prints (run summary, ss, intervals, ls)
goes through that one rounding formatter.
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

__all__ = [
    "UnitError",
    "Buffer",
    "parse_rate",
    "parse_time",
    "parse_size",
    "parse_buffer",
    "parse_fraction",
    "format_rate",
    "format_time",
    "format_size",
    "format_buffer",
    "format_fraction",
    "format_scaled",
]


class UnitError(ValueError):
    """A value that is not in the expected human unit; the message is user-facing."""


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: No value a scenario needs is written with more characters, or has a larger decimal exponent
#: (10 Tbit/s is 1e13 bit/s, 10^6 s is 1e15 ns): both bounds keep parsing linear-time and exact.
MAX_VALUE_CHARS = 100
MAX_EXPONENT = 30

_PREFIX: dict[str, int] = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BIN_PREFIX: dict[str, int] = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}

_TIME_UNITS_NS: dict[str, int] = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "sec": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}


def _split(text: str) -> tuple[Decimal, str] | None:
    """Split "2.5 Gbps" into (Decimal("2.5"), "Gbps"); None if there is no leading number.

    Raises UnitError for a value too long or too large to be one (no regex backtracking, no
    arithmetic on a 10^999999)."""
    if len(text) > MAX_VALUE_CHARS:
        raise UnitError(f"{_show(text)} is too long to be a value")
    t = text.strip()
    m = _NUMBER.match(t)
    if not m:
        return None
    unit = t[m.end() :].lstrip()
    if unit[:1].isdigit():
        return None
    try:
        number = Decimal(m.group(0))
    except InvalidOperation:  # pragma: no cover - the regex only admits valid numbers
        return None
    if number != 0 and abs(number.adjusted()) > MAX_EXPONENT:
        raise UnitError(f"{_show(text)} is out of range (a magnitude of 1e{number.adjusted()})")
    return number, unit


def _num(d: Decimal) -> str:
    """Decimal -> shortest plain text ("2.5", "100", "0.001"), never scientific notation."""
    s = format(d.normalize(), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def _quantity(value: str, not_a_quantity: str) -> tuple[Decimal, str, str]:
    """ "2.5 Gbps" -> (2.5, "2.5", "Gbps"): the number, as written back in hints, and the unit
    without spaces; a UnitError naming `value` with `not_a_quantity` if it has no number."""
    sp = _split(value)
    if sp is None:
        raise UnitError(f"{_show(value)} {not_a_quantity}")
    number, unit = sp
    return number, _num(number), unit.replace(" ", "")


def _whole(value: object, x: Decimal, sign_rule: str, fraction_error: str) -> int:
    """x as an int, or a UnitError naming `value`: negative (with `sign_rule`) or not whole."""
    if x < 0:
        raise UnitError(f"{_show(value)} is negative; {sign_rule}")
    if x != x.to_integral_value():
        raise UnitError(f"{_show(value)} {fraction_error}")
    return int(x)


def _show(value: object) -> str:
    """How a user's value is quoted back in a message: strings in double quotes as written in
    TOML, shortened when long; TOML dates and times as written (07:32:00)."""
    if isinstance(value, (datetime.date, datetime.time)):  # a datetime is a date too
        return value.isoformat()
    if isinstance(value, str):
        return f'"{value}"' if len(value) <= 40 else f'"{value[:30]}…" ({len(value)} characters)'
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_EXPONENT:
        return f"a {value.bit_length() * 3 // 10}-digit number"
    return repr(value)


def _refuse_datetime(value: object, accepted: str) -> None:
    """TOML reads an unquoted 07:32:00 or 2026-11-28 as a time of day or a date, which no field
    takes: say so, and what is accepted (``accepted``)."""
    if isinstance(value, (datetime.date, datetime.time)):
        what = (
            "date and time"
            if isinstance(value, datetime.datetime)
            else "date"
            if isinstance(value, datetime.date)
            else "time of day"
        )
        raise UnitError(f"{_show(value)} is a TOML {what}, not {accepted}")


def _number_in(text: object) -> str:
    """The number in a malformed value, to build a suggestion from ("2.5Gbs" -> "2.5")."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _num(Decimal(str(text))) if abs(text) < 10**MAX_EXPONENT else "1"
    if isinstance(text, str):
        sp = _split(text)
        if sp:
            return _num(sp[0])
    return "1"


# ---------------------------------------------------------------- rounded, for reading

_SCALED_STEPS: tuple[tuple[float, str], ...] = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def format_scaled(
    value: object,
    unit: str,
    *,
    digits: int | None = 2,
    sep: str = " ",
    kilo: str = "k",
    sig: int | None = None,
    prefix: str | None = None,
) -> str:
    """A measured value rounded for reading, with the largest decimal prefix it reaches:
    ``format_scaled(94_310_000, "bit/s")`` -> "94.31 Mbit/s"; "-" for None, NaN and infinities.

    ``digits``: decimals after the point; None = three significant digits as iperf3 prints them
    ("9.41", "94.1", "941"). ``sig``: that many significant digits instead (never rounding away
    integer digits: sig=2 gives "941"). ``prefix``: this prefix always ("M" for a table in Mbit/s,
    "" for plain units), whatever the value's size. ``kilo``: the kilo prefix's letter ("k" by SI;
    "K" where a tool the reader compares with writes "KB" or "Kbps"). Prefixes are powers of 1000
    here as everywhere in bbrlab (iperf3's "MBytes" are 2^20: bbrlab's are 10^6).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)  # type: ignore[arg-type]  # numpy scalars; anything else raises
        except (TypeError, ValueError):
            return "-"
    x = float(value)
    if x != x or x in (float("inf"), float("-inf")):
        return "-"
    if prefix is not None:
        steps = {p.lower(): m for m, p in _SCALED_STEPS}
        if prefix and prefix.lower() not in steps:
            raise ValueError(f"unknown prefix {prefix!r}; one of {', '.join(p for _, p in _SCALED_STEPS)} or ''")
        x = x / steps[prefix.lower()] if prefix else x
    else:
        prefix = ""
        for mult, p in _SCALED_STEPS:
            if abs(x) >= mult:
                x, prefix = x / mult, (kilo if p == "k" else p)
                break
        if not prefix:
            digits, sig = 0, None  # below the first prefix: whole units (bytes, packets, bit/s)
    if sig is not None:
        digits = max(0, sig - 1 - math.floor(math.log10(abs(x)))) if x else 0
    if digits is None:
        text = f"{x:.2f}" if abs(x) < 9.995 else f"{x:.1f}" if abs(x) < 99.95 else f"{x:.0f}"
    else:
        text = f"{x:.{digits}f}"
    return f"{text}{sep}{prefix}{unit}".rstrip()


# ---------------------------------------------------------------- rates (bits per second)


def _rate_prefix_guess(unit: str) -> str:
    """Best guess at the SI prefix a user meant in a broken rate unit ("Gbs" -> "G")."""
    u = unit.strip().lower()
    if u[:1] in ("k", "m", "g", "t"):
        return u[0].upper() if u[0] != "k" else "k"
    return "M"


def parse_rate(value: object) -> int:
    """A rate in bits per second: "2.5Gbps", "100Mbit/s", "64 kbps", "1tbps". Returns bps (int)."""
    _refuse_datetime(value, 'a rate; write one in quotes with its unit, e.g. "100Mbps"')
    if isinstance(value, bool) or not isinstance(value, str):
        n = _number_in(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "100"
        raise UnitError(f'{_show(value)} is not a rate (it needs a unit); try "{n}Mbps"')
    number, n, u = _quantity(value, 'is not a rate; try "100Mbps" (bps, kbps, Mbps, Gbps, Tbps, or Mbit/s)')
    m = re.fullmatch(r"([kKmMgGtT]?)(bps|[bB][iI][tT]/s|[bB][iI][tT][sS]/s)", u)
    if m is None:
        if not u:
            raise UnitError(f'{_show(value)} is not a rate (it needs a unit); try "{n}Mbps"')
        mb = re.fullmatch(r"([kKmMgGtT]?)(Bps|B/s|[bB]ytes?/s)", u)
        if mb:
            # Bytes per second: we could convert, but a silent x8 is a classic mistake; say it.
            p = mb.group(1).lower()
            p = p.upper() if p not in ("", "k") else p
            raise UnitError(f'{_show(value)} is bytes per second; rates are in bits: write "{_num(number * 8)}{p}bps"')
        raise UnitError(f'{_show(value)} is not a rate; try "{n}{_rate_prefix_guess(u)}bps"')
    bps = number * _PREFIX[m.group(1).lower()]
    return _whole(value, bps, "a rate must be > 0", "is a fraction of a bit per second; rates are whole bits/s")


def format_rate(bps: int) -> str:
    """bps -> the shortest exact human form: 2_500_000_000 -> "2.5Gbps", 1500 -> "1.5kbps"."""
    best = f"{bps}bps"
    for prefix, mult in _PREFIX.items():
        if prefix == "" or abs(bps) < mult:
            continue
        text = f"{_num(Decimal(bps) / mult)}{prefix.upper() if prefix != 'k' else 'k'}bps"
        if len(text) < len(best) or (len(text) == len(best) and mult > 1):
            best = text
    return best


# ---------------------------------------------------------------- times (nanoseconds)


def parse_time(value: object) -> int:
    """A time: "70ms", "1.5s", "250us", "10ns", "2min", "1h". Returns nanoseconds (int)."""
    _refuse_datetime(value, 'a duration; write one in quotes with its unit, e.g. "70ms" or "60s"')
    if isinstance(value, bool) or not isinstance(value, str):
        n = _number_in(value)
        raise UnitError(f'{_show(value)} is not a time (it needs a unit); try "{n}s" or "{n}ms"')
    number, n, u = _quantity(value, 'is not a time; try "70ms" (ns, us, ms, s, min, h)')
    u = u.lower()
    if u in ("m",):
        raise UnitError(f'{_show(value)} is ambiguous; write "{n}min" or "{n}ms"')
    if u not in _TIME_UNITS_NS:
        if not u:
            raise UnitError(f'{_show(value)} is not a time (it needs a unit); try "{n}s" or "{n}ms"')
        guess = {
            "secs": "s",
            "second": "s",
            "seconds": "s",
            "msec": "ms",
            "millis": "ms",
            "usec": "us",
            "mins": "min",
            "minute": "min",
            "minutes": "min",
            "nsec": "ns",
            "hr": "h",
            "hour": "h",
        }.get(u)
        hint = f'"{n}{guess}"' if guess else f'"{n}ms" (ns, us, ms, s, min, h)'
        raise UnitError(f"{_show(value)} is not a time; try {hint}")
    ns = number * _TIME_UNITS_NS[u]
    return _whole(value, ns, "a time must be >= 0", "is finer than a nanosecond; round it (the clock counts whole ns)")


_TIME_FORMAT_UNITS: tuple[tuple[str, int], ...] = (("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1))


def format_time(ns: int) -> str:
    """ns -> shortest exact human form: 70_000_000 -> "70ms", 1_500_000_000 -> "1.5s"."""
    if ns == 0:
        return "0s"
    best: str | None = None
    for unit, mult in _TIME_FORMAT_UNITS:
        if abs(ns) < mult:
            continue
        text = f"{_num(Decimal(ns) / mult)}{unit}"
        if best is None or len(text) < len(best):
            best = text
    return best if best is not None else f"{ns}ns"


# ---------------------------------------------------------------- sizes (bytes)


def parse_size(value: object) -> int:
    """A size in bytes: "80MB", "64KB", "1500B", "4MiB", "1 GiB", or a bare integer (bytes)."""
    _refuse_datetime(value, 'a size; write one in quotes with its unit, e.g. "64KB"')
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise UnitError(f"{value} is negative; a size must be >= 0")
        return value
    if not isinstance(value, str):
        raise UnitError(f'{_show(value)} is not a size; try "64KB" (B, KB, MB, GB, KiB, MiB, GiB)')
    number, n, u = _quantity(value, 'is not a size; try "64KB" (B, KB, MB, GB, KiB, MiB, GiB)')
    mult: int | None = None
    m = re.fullmatch(r"([kKmMgGtT][iI]?)?(B|[bB]ytes?)", u)
    if u == "":
        mult = 1
    elif m:
        p = (m.group(1) or "").lower()
        mult = _BIN_PREFIX[p] if p.endswith("i") else _PREFIX[p]
    else:
        mbits = re.fullmatch(r"([kKmMgGtT][iI]?)(b|bit|bits)", u)
        if mbits:
            p = mbits.group(1)
            p = p[0].upper() + p[1:].lower() if p[0] not in "kK" else "K" + p[1:].lower()
            raise UnitError(f'{_show(value)} is in bits; sizes are in bytes (B): try "{n}{p}B"')
    if mult is None:
        raise UnitError(f'{_show(value)} is not a size; try "{n}KB" or "{n}MB" (B, KB, MB, GB, KiB, MiB, GiB)')
    size = number * mult
    return _whole(value, size, "a size must be >= 0", "is not a whole number of bytes")


def format_size(nbytes: int) -> str:
    """bytes -> shortest exact human form: 500_000 -> "500KB", 65_536 -> "64KiB", 1448 -> "1448B"."""
    plain = f"{nbytes}B"
    candidates: list[tuple[str, int]] = [(p.upper() if p != "k" else "K", m) for p, m in _PREFIX.items() if p]
    candidates += [(p[0].upper() + "i", m) for p, m in _BIN_PREFIX.items()]
    forms = [(f"{_num(Decimal(nbytes) / mult)}{prefix}B", mult) for prefix, mult in candidates if abs(nbytes) >= mult]
    if not forms:
        return plain
    # Shortest wins; on a tie the larger unit reads better ("43.75MB" over "43750KB"), but a plain
    # byte count is kept unless a prefix is strictly shorter ("1500B", not "1.5KB").
    best = min(forms, key=lambda f: (len(f[0]), -f[1]))[0]
    return best if len(best) < len(plain) else plain


# ---------------------------------------------------------------- buffers (size | bdp | packets)


@dataclass(frozen=True)
class Buffer:
    """A bottleneck buffer as written: a size in bytes, a multiple of the BDP, or a packet count."""

    kind: Literal["bytes", "bdp", "packets"]
    value: Decimal | int

    def resolve_bytes(self, bdp_bytes: int) -> int | None:
        """The byte limit (None when the limit is a packet count)."""
        if self.kind == "bytes":
            return int(self.value)
        if self.kind == "bdp":
            return int((Decimal(self.value) * bdp_bytes).to_integral_value())
        return None

    def __str__(self) -> str:
        return format_buffer(self)


def parse_buffer(value: object) -> Buffer:
    """A buffer: a size ("500KB", "4MiB"), a BDP multiple ("1bdp", "0.5 bdp"), or packets ("100pkts")."""
    _refuse_datetime(value, 'a buffer; write one in quotes, e.g. "1bdp", "64KB" or "100pkts"')
    if isinstance(value, Buffer):
        return value
    if isinstance(value, str):
        sp = _split(value)
        if sp is not None:
            number, unit = sp
            u = unit.replace(" ", "").lower()
            if u in ("bdp", "xbdp", "bdps"):
                if number <= 0:
                    raise UnitError(f"{_show(value)}: a buffer must be > 0")
                return Buffer("bdp", number.normalize())
            if u in ("pkt", "pkts", "packet", "packets", "p"):
                if number != number.to_integral_value():
                    raise UnitError(f'{_show(value)} is not a whole number of packets; try "{int(number)}pkts"')
                return Buffer("packets", int(number))
    try:
        return Buffer("bytes", parse_size(value))
    except UnitError:
        n = _number_in(value)
        raise UnitError(f'{_show(value)} is not a buffer size; try "{n}bdp", "{n}MB" or "{n}pkts"') from None


def format_buffer(buf: Buffer) -> str:
    if buf.kind == "bdp":
        return f"{_num(Decimal(buf.value))}bdp"
    if buf.kind == "packets":
        return f"{buf.value}pkts"
    return format_size(int(buf.value))


# ---------------------------------------------------------------- fractions (loss probabilities)


def parse_fraction(value: object) -> float:
    """A probability: "1.5%" or a fraction 0.015 (TOML float or int). Returns a float fraction."""
    _refuse_datetime(value, 'a fraction; write a number like 0.015 or a percentage like "1.5%"')
    if isinstance(value, bool):
        raise UnitError(f'{value!r} is not a fraction; try "1.5%" or 0.015')
    if isinstance(value, float) and not math.isfinite(value):  # TOML's nan, inf, -inf
        raise UnitError(f'{value} is not a number; write a fraction like 0.015 or a percentage like "1.5%"')
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        sp = _split(value)
        if sp is not None:
            number, unit = sp
            u = unit.strip()
            if u == "%":
                return float(number / 100)
            if u == "":
                return float(number)
        raise UnitError(f'{_show(value)} is not a percentage; try "{_number_in(value)}%" or a fraction like 0.015')
    raise UnitError(f'{_show(value)} is not a fraction; try "1.5%" or 0.015')


def format_fraction(p: float) -> str | float:
    """0.015 -> "1.5%"; exact: parse_fraction(format_fraction(p)) == p for finite floats. A
    fraction whose percentage would be long (1e-300) stays a float, which TOML writes exactly."""
    if p == 0:
        return "0%"
    text = f"{_num(Decimal(repr(float(p))) * 100)}%"
    return text if len(text) <= 24 else float(p)
