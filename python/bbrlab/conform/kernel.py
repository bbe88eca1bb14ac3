"""The cases on the kernel (``bbrlab conform --backend emu``): real Linux TCP through bbrlab's link
emulator, for the two kernel BBRs whose phase the emulator backend can read.

- ``bbr3_linux``: bbrlab's BPF port of Google's Linux v3; its phase (with PROBE_BW's sub-phases)
  is the port's own export (``bbrlab.emu.phase``);
- ``bbr1``: stock ``tcp_bbr`` (BBRv1); its mode follows from the pacing and cwnd gains that
  ``TCP_CC_INFO`` reports.

What the kernel shows is a sample every 10 ms of TCP_INFO (cwnd, pacing rate, min_rtt) and of the
phase and gains, not a row per ACK: no round count, no inflight at the ACK that changed a phase,
no max_bw of the BPF port. So only the cases whose criterion is a phase sequence, a gain, a time
or a cwnd floor are checked here, on the sampled timeline; the others are not applicable, with
what the kernel does not show. The scenarios are the simulator's (``scenarios.py``), run with
``--backend emu``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..results.columns import Table
from .outcome import FAIL, FULL_BW_TOL, GAIN_TOL, NA, PASS, Outcome
from .probe_rtt import ProbeRttEntries
from .rules import RULES, Rules
from .scenarios import build
from .trace import payload_bps

__all__ = ["KERNEL_ALGORITHMS", "KERNEL_CASES", "KRun", "kernel_outcome", "run_kernel"]

#: The algorithms checked on the kernel, by their scenario name, and what runs there.
KERNEL_ALGORITHMS = {"bbr3_linux": "BPF port of Linux v3", "bbr1": "kernel tcp_bbr (v1)"}
#: The emulator backend's sampling interval for these runs: the timeline's resolution.
SAMPLE_NS = 10_000_000
#: A phase change is seen up to one sample late; times and durations are compared within this.
SAMPLE_TOL_S = 2 * SAMPLE_NS / 1e9


@dataclass
class KRun:
    """A kernel run's sampled timeline (``timeseries`` of its one flow) and its path."""

    ts: Table
    wire_bps: float
    rtt_s: float

    def col(self, name: str) -> np.ndarray:
        return np.asarray(self.ts[name])

    def episodes(self) -> list[tuple[str, int, int]]:
        """Runs of samples in one phase: (phase, first sample, one past the last)."""
        ph = self.col("phase")
        cuts = [0, *(np.flatnonzero(ph[1:] != ph[:-1]) + 1).tolist(), len(ph)]
        return [(str(ph[a]), a, b) for a, b in zip(cuts[:-1], cuts[1:]) if str(ph[a]) != "-"]


def run_kernel(scenario: str, cc: str) -> KRun:
    """Run ``scenario`` for ``cc`` on the kernel, sampled every 10 ms."""
    from ..engine.runner import run
    from ..scenario.core import from_core
    from ..scenario.model import Scenario

    config = build(scenario, cc)
    config["sample_interval_ns"] = SAMPLE_NS
    for f in config["flows"]:
        f.pop("trace", None)
    result = run(from_core(config, Scenario), backend="emu")
    b = config["topology"]["bottleneck"]
    return KRun(result.timeseries, float(b["rate_bps"]), b["rtt_ns"] / 1e9)


def _k_a1(k: KRun, r: Rules) -> Outcome:
    crit = "STARTUP → drain; bw at the first DRAIN sample within 2 % of capacity (rounds not visible)"
    eps = k.episodes()
    if not eps or eps[0][0] != "startup" or len(eps) < 2:
        return Outcome(FAIL, "no STARTUP → next phase seen", crit)
    nxt, i = eps[1][0], eps[1][1]
    ratio = float(k.col("bw_bps")[i]) / payload_bps(k.wire_bps)
    if not np.isfinite(ratio):
        return Outcome(NA, "", "the kernel does not report this algorithm's bandwidth estimate")
    ok = nxt == "drain" and abs(ratio - 1) <= FULL_BW_TOL
    return Outcome(PASS if ok else FAIL, f"STARTUP → {nxt}; bw {ratio:.1%} of capacity", crit)


def _k_a3(k: KRun, r: Rules) -> Outcome:
    crit = f"DRAIN at gain {r.drain_gain:.3f} ({r.source}) → PROBE_BW (inflight at the exit not visible)"
    d = next((e for e in k.episodes() if e[0] == "drain"), None)
    if d is None:
        # DRAIN can last less than a 10-ms sample (one RTT or less at 40 ms); then only the
        # STARTUP → PROBE_BW sequence is seen.
        return Outcome(FAIL, "no DRAIN sample", crit)
    gains = k.col("pacing_gain")[d[1] : d[2]]
    nxt = k.col("phase")[d[2]] if d[2] < len(k.col("phase")) else ""
    if not np.all(np.isfinite(gains)):
        return Outcome(NA, "", "the kernel does not report this algorithm's pacing gain")
    ok = bool(np.all(np.abs(gains - r.drain_gain) <= GAIN_TOL)) and nxt in r.probe_bw_phases
    return Outcome(
        PASS if ok else FAIL,
        f"gain {np.min(gains):.3f}–{np.max(gains):.3f} over {d[2] - d[1]} samples → {nxt or 'end of run'}",
        crit,
    )


def _k_a10(k: KRun, r: Rules) -> Outcome:
    interval = r.probe_rtt_interval_s
    crit = (
        f"PROBE_RTT entries {interval:.0f}–{interval + 0.5:.1f} s apart ({r.source}); held ≥ 200 ms; "
        f"cwnd {'max(⌈0.5·BDP⌉, 4) ±1' if r.probe_rtt_cwnd_gain else '4'}; → PROBE_BW (±{SAMPLE_TOL_S * 1e3:.0f} ms)"
    )
    ph = k.col("phase")
    eps = [e for e in k.episodes() if e[0] == "probe_rtt" and e[2] < len(ph)]
    entries = ProbeRttEntries(
        k.col("t_s"), k.col("cwnd_pkts"), [(a, b) for _, a, b in eps], sorted({str(ph[b]) for _, _, b in eps})
    )
    if (few := entries.too_few(crit)) is not None:
        return few
    # The BPF port does not export its bandwidth estimate: the BDP is the largest delivery rate
    # TCP_INFO reported in the 2 s before the entry (the max filter's view of it) times the
    # kernel's own min_rtt, rounded up as Linux's bbr_bdp does.
    rate, min_rtt_s = k.col("delivery_rate_bps"), k.col("min_rtt_ms") / 1e3
    window = int(2e9 // SAMPLE_NS)

    def target_at(a: int) -> float:
        if not r.probe_rtt_cwnd_gain:
            return 4.0
        bdp = float(np.nanmax(rate[max(a - window, 0) : a])) * float(min_rtt_s[a]) / 8 / 1448
        return max(math.ceil(r.probe_rtt_cwnd_gain * bdp), 4.0)

    targets = [target_at(a) for _, a, _ in eps]
    ok = entries.meet(r, targets, tol_s=SAMPLE_TOL_S)
    return Outcome(PASS if ok else FAIL, entries.observed("", f"{min(targets):.0f}–{max(targets):.0f}"), crit)


def _k_a14(k: KRun, r: Rules) -> Outcome:
    crit = "cwnd ≥ 4 on every sample; goodput ≥ 90 % of capacity from 2 s"
    t, cwnd = k.col("t_s"), k.col("cwnd_pkts")
    live = k.col("phase") != "-"
    d = k.col("delivered_bytes")
    a = int(np.searchsorted(t, 2.0))
    util = float(d[-1] - d[a]) * 8 / float(t[-1] - t[a]) / payload_bps(k.wire_bps)
    low = int(cwnd[live].min())
    return Outcome(PASS if low >= 4 and util >= 0.9 else FAIL, f"cwnd ≥ {low}; goodput {util:.1%} of capacity", crit)


#: The cases the kernel can show, with their scenario and check; the others say why not.
KERNEL_CASES: dict[str, tuple[str, Callable[[KRun, Rules], Outcome]]] = {
    "A.1": ("bulk", _k_a1),
    "A.3": ("bulk", _k_a3),
    "A.10": ("bulk", _k_a10),
    "A.14": ("sub_packet", _k_a14),
}
#: Why a case is not checked on the kernel.
NOT_ON_KERNEL = (
    "on the kernel: needs what TCP_INFO and the phase export do not show (per-ACK rounds, inflight at the "
    "phase change, bounds), or a mechanism the emulator lacks (a drop list, a state-triggered change)"
)


def kernel_outcome(case_id: str, alg: str, runs: dict[tuple[str, str], Any]) -> Outcome:
    if case_id not in KERNEL_CASES:
        return Outcome(NA, "", NOT_ON_KERNEL)
    scn, check = KERNEL_CASES[case_id]
    k = runs.get((scn, alg))
    if k is None:
        return Outcome(NA, "", "not run")
    if isinstance(k, Exception):
        return Outcome(NA, "", f"the kernel run failed: {k}")
    return check(k, RULES[alg])
