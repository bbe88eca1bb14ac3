"""Terminal rendering of a run summary (the table `bbrlab run` and `bbrlab show` print).

It reads only the summary dict (summary.json), so a saved run prints exactly as it did live.
"""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["fmt_bps", "fmt_bytes", "fmt_ms", "fmt_seconds", "fmt_count", "summary_table", "facts_lines", "print_summary"]


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


_BIT_RATES = ((1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s"))
_BYTES = ((1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B"))


def _with_prefix(x: float, scale: tuple[tuple[float, str], ...], digits: int, unit: str | None,
                 sig: int | None) -> str:
    """x in the largest unit of ``scale`` it reaches (or in ``unit``), with ``digits`` decimals or,
    given ``sig``, that many significant digits (never rounding away integer digits)."""
    mult, name = next(((m, u) for m, u in scale if u == unit), (None, None)) if unit else (None, None)
    if mult is None:
        if unit is not None:
            raise ValueError(f"unknown unit {unit!r}; one of {', '.join(u for _, u in scale)}")
        mult, name = next(((m, u) for m, u in scale if abs(x) >= m), scale[-1])
    v = x / mult
    if mult == 1 and not unit:
        digits = 0  # whole units at the bottom of the scale: "68 B", "500 bit/s"
    elif sig is not None:
        digits = max(0, sig - 1 - math.floor(math.log10(abs(v)))) if v else 0
    return f"{v:.{digits}f} {name}"


def fmt_bps(bps: Any, digits: int = 2, *, unit: str | None = None, sig: int | None = None) -> str:
    """94_310_000 -> "94.31 Mbit/s"; None/NaN -> "-". ``unit`` fixes the unit ("Mbit/s" for a
    table of Mbit/s), ``sig`` asks for significant digits instead of decimals (3: "14.7 Mbit/s",
    "941 Mbit/s", "2.18 Gbit/s"). Below 1 kbit/s: whole bit/s."""
    return _with_prefix(bps, _BIT_RATES, digits, unit, sig) if _finite(bps) else "-"


def fmt_ms(ms: Any) -> str:
    return f"{ms:.2f} ms" if _finite(ms) else "-"


def fmt_seconds(s: Any) -> str:
    """A duration in seconds, in ms below 1 s: 0.009 -> "9.0 ms", 2.96 -> "2.96 s"; NaN -> "-"."""
    if not _finite(s):
        return "-"
    return f"{s * 1e3:.1f} ms" if abs(s) < 1 else f"{s:.2f} s"


def _scaled(n: Any, units: tuple[str, str, str, str], digits: int, sep: str) -> str:
    """n with the largest of the decimal prefixes G, M, k it reaches ("-" if not finite)."""
    if not _finite(n):
        return "-"
    for mult, unit in zip((1e9, 1e6, 1e3), units):
        if abs(n) >= mult:
            return f"{n / mult:.{digits}f}{sep}{unit}"
    return f"{n:.0f}{sep}{units[3]}".rstrip()


def fmt_count(n: Any) -> str:
    """1_234_567 -> "1.23M": compact counts for the one-line run facts."""
    return _scaled(n, ("G", "M", "k", ""), 2, "")


def _pct(x: Any) -> str:
    return f"{100 * x:.2f}%" if _finite(x) else "-"


def summary_table(summary: dict[str, Any]) -> Table:
    all_flows = summary.get("flows", [])
    # Application transfers (query responses: spec −1) are summarized in the facts line instead.
    flows = [f for f in all_flows if f.get("spec", 0) != -1]
    agg = summary.get("aggregate", {})
    title = f"{summary.get('name', 'run')}"
    if len(flows) < len(all_flows):
        title += f" ({len(all_flows) - len(flows)} application transfers not listed; see the events table)"
    table = Table(title=title, title_justify="left", show_footer=len(flows) > 1)
    table.add_column("flow", justify="right", footer="all")
    table.add_column("cc", footer="")
    table.add_column("goodput", justify="right", footer=fmt_bps(agg.get("goodput_bps")))
    table.add_column("retrans", justify="right", footer=str(agg.get("retransmits", "-")))
    table.add_column("retr. rate", justify="right", footer=_pct(agg.get("retrans_rate")))
    table.add_column("RTT mean", justify="right", footer="")
    table.add_column("RTT p95", justify="right", footer="")
    for f in flows:
        table.add_row(
            str(f.get("flow", "")),
            str(f.get("cc", "")),
            fmt_bps(f.get("goodput_bps")),
            str(f.get("retransmits", "-")),
            _pct(f.get("retrans_rate")),
            fmt_ms(f.get("rtt_mean_ms")),
            fmt_ms(f.get("rtt_p95_ms")),
        )
    return table


def fmt_bytes(n: Any, digits: int = 1, *, unit: str | None = None, sig: int | None = None) -> str:
    """1_500_000 -> "1.5 MB"; ``unit`` ("KB") and ``sig`` as for `fmt_bps`; below 1 KB: whole bytes."""
    return _with_prefix(n, _BYTES, digits, unit, sig) if _finite(n) else "-"


def facts_lines(summary: dict[str, Any]) -> list[str]:
    """Aggregate facts (fairness, link use, queue) and run facts (seed, simulator speed)."""
    agg = summary.get("aggregate", {})
    run = summary.get("run", {})
    parts = []
    jain = agg.get("jain")
    parts.append(f"Jain's index {jain:.3f}" if _finite(jain) else "Jain's index -")
    if _finite(agg.get("link_share")):
        parts.append(f"goodput {_pct(agg['link_share'])} of the bottleneck")
    if _finite(agg.get("queue_mean_bytes")):
        parts.append(f"mean queue {fmt_bytes(agg['queue_mean_bytes'])}")
    if _finite(agg.get("query_mean_s")):
        parts.append(
            f"{agg.get('queries', 0)} queries: mean {agg['query_mean_s'] * 1e3:.2f} ms, p95 {agg['query_p95_s'] * 1e3:.2f} ms"
        )
    if run.get("pause_frames"):
        parts.append(f"{fmt_count(run['pause_frames'])} PAUSE frames")
    lines = [" · ".join(parts)]
    if _finite(run.get("wall_s")):
        lines.append(
            f"{run.get('backend', 'sim')}, seed {run.get('seed', '-')}: {fmt_count(run.get('data_packets_delivered'))} "
            f"packets delivered in {run['wall_s']:.2f} s wall ({fmt_count(run.get('packets_per_wall_s'))} packets/s)"
        )
    return lines


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    console.print(summary_table(summary))
    for line in facts_lines(summary):
        console.print(line, highlight=False, soft_wrap=True)
