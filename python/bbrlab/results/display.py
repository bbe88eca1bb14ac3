"""Terminal rendering of a run summary (the table `bbrlab run` and `bbrlab show` print), and the
same table as HTML for notebooks (``Result._repr_html_``).

It reads only the summary dict (summary.json), so a saved run prints exactly as it did live.
Numbers are rounded by the one formatter, :func:`bbrlab.units.format_scaled`.
"""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table

from ..units import format_scaled, format_size
from .rundir import configured_flows

__all__ = [
    "fmt_bps",
    "fmt_bytes",
    "fmt_ms",
    "fmt_seconds",
    "fmt_count",
    "fmt_pct",
    "summary_table",
    "summary_html",
    "facts_lines",
    "print_summary",
    "buffer_phrase",
]


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _prefix_of(unit: str | None, base: str) -> str | None:
    """The decimal prefix a fixed unit asks for ("Mbit/s" -> "M", "KB" -> "K"); None: choose."""
    if unit is None:
        return None
    if not unit.endswith(base):
        raise ValueError(f"unknown unit {unit!r}; a prefix and {base!r}, e.g. 'M{base}'")
    return unit[: -len(base)]


def fmt_bps(bps: Any, digits: int = 2, *, unit: str | None = None, sig: int | None = None) -> str:
    """94_310_000 -> "94.31 Mbit/s"; None/NaN -> "-". ``unit`` fixes the unit ("Mbit/s" for a
    table of Mbit/s), ``sig`` asks for significant digits instead of decimals (3: "14.7 Mbit/s",
    "941 Mbit/s", "2.18 Gbit/s"). Below 1 kbit/s: whole bit/s."""
    return format_scaled(bps, "bit/s", digits=digits, sig=sig, prefix=_prefix_of(unit, "bit/s"))


def fmt_ms(ms: Any) -> str:
    return f"{ms:.2f} ms" if _finite(ms) else "-"


def fmt_seconds(s: Any) -> str:
    """A duration in seconds, in ms below 1 s: 0.009 -> "9.0 ms", 2.96 -> "2.96 s"; NaN -> "-"."""
    if not _finite(s):
        return "-"
    return f"{s * 1e3:.1f} ms" if abs(s) < 1 else f"{s:.2f} s"


def fmt_count(n: Any) -> str:
    """1_234_567 -> "1.23M": compact counts for the one-line run facts."""
    return format_scaled(n, "", digits=2, sep="")


def fmt_bytes(n: Any, digits: int = 1, *, unit: str | None = None, sig: int | None = None) -> str:
    """1_500_000 -> "1.5 MB"; ``unit`` ("KB") and ``sig`` as for `fmt_bps`; below 1 KB: whole bytes."""
    return format_scaled(n, "B", digits=digits, sig=sig, kilo="K", prefix=_prefix_of(unit, "B"))


def fmt_pct(x: Any) -> str:
    """0.0037 -> "0.37%"."""
    return f"{100 * x:.2f}%" if _finite(x) else "-"


def _seconds(x: float) -> str:
    return f"{round(x, 3):g}"


def _run_span(summary: dict[str, Any]) -> float | None:
    d = summary.get("scenario", {}).get("duration_s", summary.get("run", {}).get("sim_end_s"))
    return float(d) if _finite(d) else None


def _summary_rows(summary: dict[str, Any]) -> tuple[str, list[tuple[str, str, bool]], list[list[str]], list[str]]:
    """(title, columns as (name, footer, right-aligned), rows, note lines) of the summary table.

    A flow's goodput is over its own active time (start to end, as iperf3 reports a stream),
    the "all" row's over the whole run: when some flow was active for less than the run, an
    "active" column shows each row's span and a note says so, since the rows then need not add up.
    """
    all_flows = summary.get("flows", [])
    # Application transfers (query responses: spec −1) are summarized in the facts line instead.
    flows = configured_flows(all_flows)
    agg = summary.get("aggregate", {})
    title = f"{summary.get('name', 'run')}"
    if len(flows) < len(all_flows):
        title += f" ({len(all_flows) - len(flows)} application transfers not listed; see the events table)"
    span = _run_span(summary)
    partial = span is not None and any(
        _finite(f.get("start_s")) and _finite(f.get("end_s")) and (f["start_s"] > 1e-9 or f["end_s"] < span - 1e-9)
        for f in flows
    )
    columns: list[tuple[str, str, bool]] = [("flow", "all", True), ("cc", "", False)]
    if partial:
        columns.append(("active", f"{_seconds(0)}–{_seconds(span or 0)} s", True))
    graph = any("path" in f for f in flows)
    if graph:  # a graph's flows: their hosts (the path is in the flows table)
        columns.append(("src → dst", "", False))
    columns += [
        ("goodput", fmt_bps(agg.get("goodput_bps")), True),
        ("retrans", str(agg.get("retransmits", "-")), True),
        ("retr. rate", fmt_pct(agg.get("retrans_rate")), True),
        ("RTT mean", "", True),
        ("RTT p95", "", True),
    ]
    if graph:  # what max-min fairness over the links' capacities gives each flow
        columns.insert(columns.index(("retrans", str(agg.get("retransmits", "-")), True)), ("max-min", "", True))
    sized = any(f.get("bulk") is False or _finite(f.get("fct_s")) for f in flows)
    if sized:  # flow completion times of the sized transfers ("-": a bulk flow has none)
        columns.append(("FCT", "", True))
    ecn = any(f.get("ecn") for f in flows) or any((f.get("ce_packets") or 0) > 0 for f in flows)
    if ecn:  # CE-marked segments each flow's receiver got
        columns.append(("CE", str(sum(int(f.get("ce_packets") or 0) for f in flows)), True))
    rows = []
    for f in flows:
        row = [str(f.get("flow", "")), str(f.get("cc", ""))]
        if partial:
            ok = _finite(f.get("start_s")) and _finite(f.get("end_s"))
            row.append(f"{_seconds(f['start_s'])}–{_seconds(f['end_s'])} s" if ok else "-")
        if graph:
            row.append(f"{f.get('src', '-')} → {f.get('dst', '-')}")
        row.append(fmt_bps(f.get("goodput_bps")))
        if graph:
            row.append(fmt_bps(f.get("maxmin_goodput_bps")))
        row += [
            str(f.get("retransmits", "-")),
            fmt_pct(f.get("retrans_rate")),
            fmt_ms(f.get("rtt_mean_ms")),
            fmt_ms(f.get("rtt_p95_ms")),
        ]
        if sized:
            row.append(fmt_seconds(f.get("fct_s")))
        if ecn:
            row.append(str(f.get("ce_packets", "-")))
        rows.append(row)
    notes = []
    if partial and len(flows) > 1:
        notes.append("goodput: each flow's bytes over its active time; all: every flow's bytes over the whole run")
    return title, columns, rows, notes


def summary_table(summary: dict[str, Any]) -> Table:
    title, columns, rows, _ = _summary_rows(summary)
    table = Table(title=title, title_justify="left", show_footer=len(rows) > 1)
    for name, footer, right in columns:
        table.add_column(name, justify="right" if right else "left", footer=footer)
    for row in rows:
        table.add_row(*row)
    return table


def summary_html(summary: dict[str, Any]) -> str:
    """The summary table and facts as an HTML fragment (every text escaped)."""
    import html  # here: `bbrlab show` prints no HTML, and html.entities is a large table

    title, columns, rows, notes = _summary_rows(summary)
    e = html.escape

    def cells(values: list[str], tag: str) -> str:
        return "".join(
            f'<{tag} style="text-align:{"right" if right else "left"}">{e(v)}</{tag}>'
            for v, (_, _, right) in zip(values, columns)
        )

    parts = [
        f'<table><caption style="text-align:left"><b>{e(title)}</b></caption>',
        f"<thead><tr>{cells([c[0] for c in columns], 'th')}</tr></thead><tbody>",
    ]
    parts += [f"<tr>{cells(r, 'td')}</tr>" for r in rows]
    parts.append("</tbody>")
    if len(rows) > 1:
        parts.append(f"<tfoot><tr>{cells([c[1] for c in columns], 'th')}</tr></tfoot>")
    parts.append("</table>")
    parts += [f"<p>{e(line)}</p>" for line in notes + facts_lines(summary)]
    return "".join(parts)


def facts_lines(summary: dict[str, Any]) -> list[str]:
    """Aggregate facts (fairness, link use, queue) and run facts (seed, simulator speed)."""
    agg = summary.get("aggregate", {})
    run = summary.get("run", {})
    parts = []
    jain = agg.get("jain")
    n_bulk = agg.get("jain_flows")
    jain_label = "Jain's index" if n_bulk is None else f"Jain's index over the {n_bulk} bulk flow{'s' * (n_bulk != 1)}"
    parts.append(f"{jain_label} {jain:.3f}" if _finite(jain) else f"{jain_label} -")
    parts += _goodput_facts(agg, summary.get("scenario") or {})
    if _finite(agg.get("queue_mean_bytes")):
        at = (summary.get("scenario") or {}).get("bottleneck")
        parts.append(f"mean queue {fmt_bytes(agg['queue_mean_bytes'])}" + (f" at {at}" if at else ""))
    if _finite(agg.get("query_mean_s")):
        parts.append(
            f"{agg.get('queries', 0)} queries: mean {agg['query_mean_s'] * 1e3:.2f} ms, p95 {agg['query_p95_s'] * 1e3:.2f} ms"
        )
    if run.get("pause_frames"):
        parts.append(f"{fmt_count(run['pause_frames'])} PAUSE frames")
    lines = [" · ".join(parts)]
    transperf = transperf_line(summary.get("transperf") or {})
    if transperf:
        lines.append(transperf)
    from .phases import phase_time_line

    phases = phase_time_line(summary)
    if phases:
        lines.append(phases)
    checks = summary.get("checks") or []
    if checks:
        failed = [str(c.get("metric")) for c in checks if not c.get("passed")]
        lines.append(
            f"checks: {len(checks) - len(failed)} of {len(checks)} passed"
            + (f"; failed: {', '.join(failed)}" if failed else "")
        )
    if _finite(run.get("wall_s")):
        lines.append(
            f"{run.get('backend', 'sim')}, seed {run.get('seed', '-')}: {fmt_count(run.get('data_packets_delivered'))} "
            f"packets delivered in {run['wall_s']:.2f} s wall ({fmt_count(run.get('packets_per_wall_s'))} packets/s)"
        )
    return lines


def transperf_line(block: dict[str, Any]) -> str | None:
    """transperf's seven metrics (results/transperf.py) on one line; None without them."""
    from ..scenario.checks import METRICS  # their names, in transperf's order

    if not isinstance(block, dict) or "tput" not in block:
        return None
    parts = []
    for key in METRICS:
        v = block.get(key)
        unit = " s" if key == "convergence_sec" else ""
        parts.append(f"{key} {v:.1f}{unit}" if _finite(v) else f"{key} -")
    return "transperf: " + " · ".join(parts)


def failed_checks_table(failed: list[dict[str, Any]], total: int) -> Table:
    """The [checks] a run failed (summary.json's ``checks`` entries), as `bbrlab run` prints them."""
    table = Table(title=f"{len(failed)} of {total} checks failed", title_justify="left")
    for name, right in (("metric", False), ("check", False), ("measured", True), ("note", False)):
        table.add_column(name, justify="right" if right else "left")
    for c in failed:
        m = c.get("measured")
        table.add_row(str(c.get("metric")), str(c.get("check")), f"{m:.2f}" if _finite(m) else "-", c.get("note", ""))
    return table


def _goodput_facts(agg: dict[str, Any], scenario: dict[str, Any]) -> list[str]:
    """All flows' goodput as a share of the bottleneck's rate and of the payload it can carry
    (headers and framing take the rest: with a 1448-byte MSS, 94.1 % of the rate is the ceiling)."""
    share = agg.get("link_share")
    if not _finite(share):
        return []
    rate = scenario.get("bottleneck_rate_bps")
    text = f"goodput {fmt_pct(share)} of the bottleneck" + (f"'s {fmt_bps(rate, sig=3)}" if _finite(rate) else "")
    if _finite(agg.get("payload_share")) and _finite(agg.get("payload_capacity_bps")):
        text += (
            f", {fmt_pct(agg['payload_share'])} of its {fmt_bps(agg['payload_capacity_bps'], sig=3)} "
            "payload capacity (headers and framing take the rest)"
        )
    return [text]


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    console.print(summary_table(summary))
    for line in _summary_rows(summary)[3] + facts_lines(summary):
        console.print(line, highlight=False, soft_wrap=True)


def buffer_phrase(derived: dict[str, Any], topology: Any = None) -> str:
    """The shared queue's limit in words, for `bbrlab validate`'s header: "500KB", "100 packets",
    or, on a lossless star with no byte limit, what bounds it instead (PAUSE above XOFF)."""
    if derived.get("buffer_bytes") is not None:
        text = format_size(int(derived["buffer_bytes"]))
    elif derived.get("buffer_packets") is not None:
        text = f"{derived['buffer_packets']} packets"
    else:
        text = "unlimited"
    if getattr(topology, "kind", None) == "star":
        text = f"{text} per switch port"
        if topology.lossless:
            text += f"; lossless: PAUSE above {format_size(int(topology.pfc.xoff))}"
        if topology.shared_buffer is not None:
            text += f"; {format_size(int(topology.shared_buffer))} shared by all ports"
    return text
