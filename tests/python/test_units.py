"""Parsing and formatting of human units (bbrlab.units)."""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import Decimal

import pytest
from bbrlab.units import (
    Buffer,
    UnitError,
    format_buffer,
    format_fraction,
    format_rate,
    format_size,
    format_time,
    parse_buffer,
    parse_fraction,
    parse_rate,
    parse_size,
    parse_time,
)

#: (parser, text, value): every suffix and spelling each parser accepts.
EVERY_SUFFIX = [
    *[
        (parse_rate, text, want)
        for text, want in [
            ("1bps", 1),
            ("64kbps", 64_000),
            ("64Kbps", 64_000),
            ("100Mbps", 100_000_000),
            ("100mbps", 100_000_000),
            ("100 Mbps", 100_000_000),
            ("2.5Gbps", 2_500_000_000),
            ("2.5gbps", 2_500_000_000),
            ("1Tbps", 10**12),
            ("100Mbit/s", 100_000_000),
            ("100 Mbit/s", 100_000_000),
            ("10Kbit/s", 10_000),
            ("2.5Gbit/s", 2_500_000_000),
            ("1tbit/s", 10**12),
            ("1e3Mbps", 10**9),
            (" 40Mbps ", 40_000_000),
        ]
    ],
    *[
        (parse_time, text, want)
        for text, want in [
            ("10ns", 10),
            ("250us", 250_000),
            ("250µs", 250_000),
            ("70ms", 70_000_000),
            ("1.5s", 1_500_000_000),
            ("2min", 120_000_000_000),
            ("1h", 3_600_000_000_000),
            ("0s", 0),
            ("0.5 ms", 500_000),
            ("1sec", 1_000_000_000),
        ]
    ],
    *[
        (parse_size, text, want)
        for text, want in [
            ("1500B", 1500),
            ("64KB", 64_000),
            ("64kB", 64_000),
            ("80MB", 80_000_000),
            ("1GB", 10**9),
            ("1TB", 10**12),
            ("64KiB", 65_536),
            ("4MiB", 4 * 2**20),
            ("1GiB", 2**30),
            ("1TiB", 2**40),
            ("1.5KB", 1500),
            ("100 bytes", 100),
            (1448, 1448),
        ]
    ],
]


@pytest.mark.parametrize(("parse", "text", "want"), EVERY_SUFFIX)
def test_every_suffix(parse: Callable[[object], int], text: object, want: int) -> None:
    assert parse(text) == want


def test_parse_buffer_forms() -> None:
    assert parse_buffer("1bdp") == Buffer("bdp", Decimal("1"))
    assert parse_buffer("0.5 bdp") == Buffer("bdp", Decimal("0.5"))
    assert parse_buffer("100pkts") == Buffer("packets", 100)
    assert parse_buffer("100 packets") == Buffer("packets", 100)
    assert parse_buffer("500KB") == Buffer("bytes", 500_000)
    assert parse_buffer("4MiB").resolve_bytes(bdp_bytes=1) == 4 * 2**20
    assert parse_buffer("0.5bdp").resolve_bytes(bdp_bytes=500_000) == 250_000
    assert parse_buffer("100pkts").resolve_bytes(bdp_bytes=500_000) is None


@pytest.mark.parametrize(
    ("value", "p"), [("1.5%", 0.015), ("0%", 0.0), ("100%", 1.0), (0.015, 0.015), (0, 0.0), ("0.25", 0.25)]
)
def test_parse_fraction(value: object, p: float) -> None:
    assert parse_fraction(value) == p


@pytest.mark.parametrize(
    ("parse", "bad", "hint"),
    [
        (parse_rate, "2.5Gbs", 'try "2.5Gbps"'),
        (parse_rate, "100", '"100Mbps"'),
        (parse_rate, 100, '"100Mbps"'),
        (parse_rate, "10MBps", '"80Mbps"'),  # bytes per second: say so, do not convert silently
        (parse_rate, "fast", "Mbps"),
        (parse_rate, "-1Mbps", "negative"),
        (parse_rate, "0.5bps", "whole bits"),
        (parse_time, "70", '"70ms"'),
        (parse_time, 70, '"70s"'),
        (parse_time, "5m", '"5min" or "5ms"'),
        (parse_time, "3 seconds", '"3s"'),
        (parse_time, "-1s", "negative"),
        (parse_time, "0.5ns", "nanosecond"),
        (parse_size, "80mb", '"80MB"'),  # lower-case b is a bit
        (parse_size, "1.5B", "whole number"),
        (parse_size, "lots", "KB"),
        (parse_size, -5, "negative"),
        (parse_buffer, "1bpd", '"1bdp"'),
        (parse_buffer, "1.5pkts", "whole number of packets"),
        (parse_fraction, "1.5 percent", '"1.5%"'),
        (parse_fraction, True, "1.5%"),
    ],
)
def test_rejects_with_a_hint(parse, bad: object, hint: str) -> None:
    with pytest.raises(UnitError) as info:
        parse(bad)
    assert hint in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("fmt", "value", "text"),
    [
        (format_rate, 2_500_000_000, "2.5Gbps"),
        (format_rate, 100_000_000, "100Mbps"),
        (format_rate, 64_000, "64kbps"),
        (format_rate, 7, "7bps"),
        (format_time, 70_000_000, "70ms"),
        (format_time, 1_500_000_000, "1.5s"),
        (format_time, 250_000, "250us"),
        (format_time, 10, "10ns"),
        (format_time, 0, "0s"),
        (format_size, 500_000, "500KB"),
        (format_size, 65_536, "64KiB"),
        (format_size, 1448, "1448B"),
        (format_size, 43_750_000, "43.75MB"),
        (format_fraction, 0.015, "1.5%"),
        (format_fraction, 0.0, "0%"),
        (format_buffer, Buffer("bdp", Decimal("0.5")), "0.5bdp"),
        (format_buffer, Buffer("packets", 100), "100pkts"),
    ],
)
def test_format(fmt, value: object, text: str) -> None:
    assert fmt(value) == text


def test_round_trips_are_exact() -> None:
    rng = random.Random(7)
    values = [0, 1, 999, 1000, 1024, 1448, 10**9, 2**40, 123_456_789, 2_500_000_000]
    values += [rng.randrange(0, 10**15) for _ in range(500)]
    values += [rng.randrange(1, 1000) * 10 ** rng.randrange(0, 12) for _ in range(500)]
    for v in values:
        assert parse_time(format_time(v)) == v
        assert parse_size(format_size(v)) == v
        if v > 0:
            assert parse_rate(format_rate(v)) == v
    for p in [0.0, 0.015, 0.001, 1e-7, 0.5, 0.999, 1 / 3, 0.1 + 0.2] + [rng.random() for _ in range(200)]:
        assert parse_fraction(format_fraction(p)) == p
    for b in [
        Buffer("bdp", Decimal("1")),
        Buffer("bdp", Decimal("0.25")),
        Buffer("packets", 7),
        Buffer("bytes", 65_536),
    ]:
        assert parse_buffer(format_buffer(b)) == b
