"""Writing a study's REPORT.md: markdown tables and the page itself (numbers are formatted by
`bbrlab.results.display`'s formatters: one definition of a rate, a size, a duration)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..results.results import ETHERNET_OVERHEAD_BYTES, TCP_IP_HEADER_BYTES
from .sources import Source

#: The default MSS and what one full segment costs on the wire (payload + 52 B of TCP/IPv4 with
#: timestamps + 38 B of Ethernet framing), as the simulator charges it: a link's goodput ceiling
#: is its rate × MSS / WIRE (`bbrlab.results.results.payload_fraction`).
MSS = 1448
WIRE = MSS + TCP_IP_HEADER_BYTES + ETHERNET_OVERHEAD_BYTES

#: The note under the title of a report that is not the full study, by size.
SIZE_NOTE = {
    "quick": "*Quick version (`--size quick`, `--quick`): shorter runs and a smaller grid than the full study; "
    "numbers are indicative. Run without `--quick` for the full study.*",
    "tiny": "*Tiny version (`--size tiny`): the smallest run that goes through every step of the study, for "
    "tests; its numbers say nothing about the algorithms. Run without `--size` for the full study.*",
}


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|")

    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def write_report(
    path: Path,
    title: str,
    sections: Sequence[tuple[str, str]],
    *,
    source: Source,
    size: str,
    wall_s: float,
    packets: int,
) -> Path:
    lines = [f"# {title}", "", f"Source: {source.link(path.parent)} — {source.citation}.", ""]
    if size in SIZE_NOTE:
        lines += [SIZE_NOTE[size], ""]
    for head, body in sections:
        lines += [f"## {head}", "", body.strip(), ""]
    lines += ["## Run", "", f"{packets:,} data packets simulated in {wall_s:.1f} s wall ({size} study).", ""]
    path.write_text("\n".join(lines))
    return path
