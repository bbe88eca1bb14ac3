"""Terminal rendering of a run summary (the table `bbrlab run` and `bbrlab show` print).

It reads only the summary dict (summary.json), so a saved run prints exactly as it did live.
"""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["fmt_bps", "fmt_bytes", "fmt_ms", "fmt_count", "summary_table", "facts_lines", "print_summary"]


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def fmt_bps(bps: Any) -> str:
    """94_310_000 -> "94.31 Mbit/s"; None/NaN -> "-"."""
    if not _finite(bps):
        return "-"
    for mult, unit in ((1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if abs(bps) >= mult:
            return f"{bps / mult:.2f} {unit}"
    return f"{bps:.0f} bit/s"


def fmt_ms(ms: Any) -> str:
    return f"{ms:.2f} ms" if _finite(ms) else "-"


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


def fmt_bytes(n: Any) -> str:
    """1_500_000 -> "1.5 MB"."""
    return _scaled(n, ("GB", "MB", "KB", "B"), 1, " ")


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
