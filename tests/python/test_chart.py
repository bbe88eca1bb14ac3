"""The run plots' renderer (bbrlab.plots.chart): ticks, and lines drawn where their values say."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from bbrlab.plots.chart import PANEL_PX, WIDTH_PX, Chart, HLine, Panel, Series, _tick_label, nice_ticks, render
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image


@given(lo=st.floats(-1e9, 1e9), width=st.floats(1e-6, 1e9), n=st.integers(2, 10))
def test_nice_ticks_are_round_inside_the_range_and_few(lo: float, width: float, n: int) -> None:
    hi = lo + width
    if width < 1e-6 * abs(lo):  # a range near float resolution at this magnitude: no round ticks to find
        return
    ticks = nice_ticks(lo, hi, n)
    assert 1 <= len(ticks) <= n + 1
    tol = 1e-9 * max(abs(lo), abs(hi), width)
    assert ticks[0] >= lo - tol and ticks[-1] <= hi + tol
    if len(ticks) > 1:
        steps = np.diff(ticks)
        step = float(steps[0])
        np.testing.assert_allclose(steps, step, rtol=1e-6)
        mantissa = step / 10 ** math.floor(math.log10(step))
        assert any(mantissa == pytest.approx(m) for m in (1, 2, 2.5, 5, 10))
        # Round: every tick a whole number of steps.
        np.testing.assert_allclose(ticks / step, np.round(ticks / step), atol=1e-6)
        # At least one interval fewer would not do: the step is the smallest nice one that fits n.
        assert (hi - lo) / step <= n + 1e-6


@pytest.mark.parametrize(
    ("value", "step", "text"),
    [
        (7.5, 2.5, "7.5"),
        (20.0, 10.0, "20"),
        (0.4, 0.2, "0.4"),
        (0.25, 0.25, "0.25"),
        (100.0, 25.0, "100"),
        (0.0, 0.05, "0.00"),
    ],
)
def test_tick_labels_carry_the_decimals_their_step_needs(value: float, step: float, text: str) -> None:
    assert _tick_label(value, step) == text


RED = "#ff0000"


def _red_rows(img: Image.Image, column: int) -> np.ndarray:
    px = np.asarray(img.convert("RGB"), dtype=int)[:, column]
    return np.flatnonzero((px[:, 0] > 200) & (px[:, 1] < 120) & (px[:, 2] < 120))


def test_a_line_is_drawn_at_its_value(tmp_path: Path) -> None:
    # y = 50 on an axis from 0 with 5 % headroom over its largest value (100, a reference line).
    chart = Chart(
        "t", [Panel([Series(np.array([0.0, 10.0]), np.array([50.0, 50.0]), "half", color=RED)], [HLine(100.0, "top")])]
    )
    img = Image.open(render(chart, tmp_path / "c.png"))
    assert img.size == (WIDTH_PX, PANEL_PX)
    rows = _red_rows(img, WIDTH_PX // 2)
    assert rows.size, "no red pixel in the middle column"
    # The frame: top at 33 px, bottom at PANEL_PX - 55 px (chart.py's margins); 50 of 105 up from the bottom.
    top, bottom = 33, PANEL_PX - 55
    want = bottom - 50 / 105 * (bottom - top)
    assert abs(rows.mean() - want) <= 1.5


def test_a_missing_value_leaves_a_gap(tmp_path: Path) -> None:
    x = np.linspace(0, 10, 11)
    y = np.where((x > 3) & (x < 7), np.nan, 50.0)
    img = Image.open(render(Chart("t", [Panel([Series(x, y, color=RED)])]), tmp_path / "c.png"))
    left, right = 88, WIDTH_PX - 22

    def at(v: float) -> int:
        return int(left + v / 10 * (right - left))

    assert _red_rows(img, at(1.5)).size and _red_rows(img, at(8.5)).size
    assert not _red_rows(img, at(5.0)).size  # between the samples either side of the NaNs


def test_each_panel_adds_a_panel_height_and_a_note_its_line(tmp_path: Path) -> None:
    two = Chart("t", [Panel(), Panel()], note="a note")
    img = Image.open(render(two, tmp_path / "c.png"))
    assert img.size == (WIDTH_PX, 2 * PANEL_PX + 28)
    # The note is drawn: dark pixels in its strip.
    strip = np.asarray(img.convert("L"))[-24:, :200]
    assert (strip < 100).any()


def test_a_chart_is_written_as_png_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="png"):
        render(Chart("t", [Panel()]), tmp_path / "c.jpg")


def test_the_png_writer_keeps_every_pixel(tmp_path: Path) -> None:
    import io

    from bbrlab.plots.chart import _draw, png_bytes

    x = np.linspace(0, 3, 50)
    chart = Chart(
        "sine", [Panel([Series(x, np.sin(x) + 1, "a"), Series(x, np.cos(x) + 1, "b", alpha=0.4)])], note="a note"
    )
    drawn = np.asarray(_draw(chart).convert("RGB"))
    read = Image.open(io.BytesIO(png_bytes(chart)))
    read.load()  # decodes and checks every chunk's CRC
    assert read.mode == "RGB" and read.size == (drawn.shape[1], drawn.shape[0])
    assert np.array_equal(np.asarray(read), drawn)


def test_the_legend_goes_where_it_hides_no_line(tmp_path: Path) -> None:
    # A line across the top, another across the bottom: the upper-right corner (the default) and
    # the lower ones would hide part of them; the middle of a side hides nothing.
    x = np.linspace(0, 10, 200)
    chart = Chart(
        "t",
        [
            Panel(
                [
                    Series(x, np.full_like(x, 95.0), "top line", color=RED),
                    Series(x, np.full_like(x, 3.0), "bottom line", color=RED),
                ],
                ymin=0,
            )
        ],
    )
    img = Image.open(render(chart, tmp_path / "c.png"))
    left, right = 88, WIDTH_PX - 22
    hidden = [col for col in range(left + 2, right - 2) if len(_red_rows(img, col)) < 2]
    assert hidden == [], f"{len(hidden)} columns of a line under the legend"


def test_words_in_a_label_are_apart() -> None:
    # Pillow's embedded font has a 2-px space at 10 px: a legend read "atsample time".
    from bbrlab.plots.chart import _SMALL_FONT_PX, _Canvas

    c = _Canvas(100, 100)
    for px in (_SMALL_FONT_PX, 12):
        gap = c.text_width("at sample", px) - c.text_width("atsample", px)
        assert gap >= 0.35 * px, (px, gap)
