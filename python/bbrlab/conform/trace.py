"""One conformance run and what the checks read from it: the flow's per-ACK state trace (the
core's ``state`` table, ``trace = true``), its ``flows`` row and the bottleneck's ``queue`` rows.

The trace holds one row per ACK after the algorithm ran; a *phase episode* is a run of
consecutive rows in one phase, and a transition is the first row of the next episode. Rates are
payload rates (the trace's ``max_bw_bps`` counts payload bytes), compared with the link's payload
capacity: the wire rate times MSS / (MSS + headers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.runner import simulate
from ..results.columns import Table

__all__ = ["Episode", "Run", "run_config", "payload_bps", "MSS_BYTES", "WIRE_OVERHEAD_BYTES"]

#: The simulator's default segment size and per-segment header bytes on the wire (TCP/IP with
#: timestamps, 52; Ethernet with preamble and gap, 38): transport's DEFAULT_MSS_BYTES,
#: TCP_IP_HEADER_BYTES and ETHERNET_OVERHEAD_BYTES.
MSS_BYTES = 1448
WIRE_OVERHEAD_BYTES = 52 + 38


def payload_bps(wire_bps: float) -> float:
    """The payload capacity of a link of ``wire_bps`` for full-sized segments."""
    return wire_bps * MSS_BYTES / (MSS_BYTES + WIRE_OVERHEAD_BYTES)


@dataclass(frozen=True)
class Episode:
    """Rows ``start`` … ``end - 1`` of the trace are in ``phase``; ``next`` is the phase of row
    ``end`` ("" when the run ended in this episode)."""

    phase: str
    start: int
    end: int
    next: str


@dataclass
class Run:
    """A conformance run's tables (numpy columns) and the path it ran on."""

    state: Table
    flows: Table
    queue: Table
    wire_bps: float
    rtt_s: float
    #: A state-triggered run (``triggers.py``): the row on which the trigger fired, or why
    #: there is none.
    trigger_row: int | None = None
    trigger_note: str = ""
    _episodes: list[Episode] | None = field(default=None, repr=False)

    @property
    def payload_bps(self) -> float:
        return payload_bps(self.wire_bps)

    @property
    def bdp_pkts(self) -> float:
        """The path's BDP in full-sized segments (payload capacity × base RTT)."""
        return self.payload_bps * self.rtt_s / 8 / MSS_BYTES

    def col(self, name: str) -> np.ndarray:
        return self.state[name]

    @property
    def phases(self) -> np.ndarray:
        return self.state["phase"]

    def episodes(self) -> list[Episode]:
        if self._episodes is None:
            ph = self.phases
            out: list[Episode] = []
            if len(ph):
                cuts = [0, *(np.flatnonzero(ph[1:] != ph[:-1]) + 1).tolist(), len(ph)]
                for a, b in zip(cuts[:-1], cuts[1:]):
                    out.append(Episode(str(ph[a]), a, b, str(ph[b]) if b < len(ph) else ""))
            self._episodes = out
        return self._episodes

    def episodes_of(self, phase: str) -> list[Episode]:
        return [e for e in self.episodes() if e.phase == phase]

    def bdp_at(self, i: int) -> float:
        """BBRInflight(max_bw, 1.0) without the offload budget at row ``i``: max_bw × min_rtt in
        segments, from the algorithm's own model."""
        return float(self.col("max_bw_bps")[i] * self.col("min_rtt_ms")[i] / 1e3 / 8 / MSS_BYTES)


def run_config(config: dict[str, Any]) -> Run:
    """Run a core config (one flow with ``trace`` on, on a dumbbell) and keep what checks read."""
    raw, _wall_s, _version = simulate(config)
    labels = raw.get("labels", {})
    b = config["topology"]["bottleneck"]
    return Run(
        state=Table.from_core("state", raw["state"], labels),
        flows=Table.from_core("flows", raw["flows"], labels),
        queue=Table.from_core("queue", raw["queue"], labels),
        wire_bps=float(b["rate_bps"]),
        rtt_s=b["rtt_ns"] / 1e9,
    )
