"""The spurious-loss case: A.18 (a spurious loss recovery is undone: the state saved on the loss
is restored).

The trace is per ACK, and the RTO that marks UP's inflight lost is not an ACK: the state saved
for the undo (BBRSaveStateUponLoss) is read on the last ACK before an episode's first loss was
marked, and the restored state on the ACK that ends the episode (ca_state back to open; the
same ACK when timestamps undo the RTO at once). Without the undo, losses of most of UP's
inflight end UP (→ DOWN) and set inflight_longterm; so bounds and phase as saved, with the
flow's undo count ≥ 1 (the base run loses nothing), show the undo. The spurious RTO is followed
by a recovery of the segments retransmitted after it, itself shown spurious by D-SACKs: every
episode in the window is judged.
"""

from __future__ import annotations

import math

import numpy as np

from .measures import triggered
from .outcome import FAIL, Outcome, na, verdict
from .rules import Rules
from .scenarios import A18_SPIKE_NS, A18_SPIKE_RTT_NS, A18_SPIKE_RTTS
from .trace import Run

#: What BBRSaveStateUponLoss saves, as the trace names it (NaN: unset, an infinite bound).
SAVED = (("bw_lo_bps", "bw_shortterm", 1e-6, "Mbit/s"), ("inflight_lo_pkts", "inflight_shortterm", 1.0, ""))
SAVED_LONGTERM = ("inflight_hi_pkts", "inflight_longterm", 1.0, "")
#: UP, re-entered after an undo: through PROBE_REFILL (bbrlab's v3, as the draft's
#: BBRHandleSpuriousLossDetection starts a new probe), or UP itself.
UP_AGAIN = ("probe_refill", "probe_up")
#: The loss episodes judged: those that begin within this many spike RTTs of UP's entry (the
#: delayed round trip, the RTO, the ACK that shows it spurious and the recovery that follows).
A18_WINDOW_SPIKES = 2


def _restored(now: float, saved: float) -> bool:
    """An undo takes the larger of the bound now and the saved one; unset (NaN) is infinite."""
    if not math.isfinite(saved):
        return not math.isfinite(now)
    return not math.isfinite(now) or now >= saved


def _value(x: float, scale: float, unit: str) -> str:
    return f"{x * scale:.1f}{' ' + unit if unit else ''}" if math.isfinite(x) else "unset"


def _episodes(run: Run, start: int, stop: int) -> list[tuple[int, int]]:
    """The loss episodes from row ``start`` to ``stop``: (the row before the ACK that marked the
    first loss, the ACK that ended the episode: ca_state open, the same ACK when it undid the
    losses at once)."""
    lost, ca = run.col("lost_pkts"), run.col("ca_state")
    out, i = [], max(start, 1)
    while i < stop:
        grew = np.flatnonzero(lost[i:stop] > lost[i - 1 : stop - 1])
        if not len(grew):
            break
        first = i + int(grew[0])
        opened = np.flatnonzero(ca[first:] == 0)
        if not len(opened):
            out.append((first - 1, -1))
            break
        end = first + int(opened[0])
        out.append((first - 1, end))
        i = end + 1
    return out


def check_a18(run: Run, r: Rules) -> Outcome:
    """A.18: a spurious RTO in PROBE_UP, and the recovery after it, once shown spurious,
    restore bw_shortterm, inflight_shortterm and inflight_longterm as saved on the loss, and
    (draft) the phase UP."""
    if r.undo_restores_phase is None:
        return na(f"{r.source} keeps no bw/inflight bounds for an undo to restore (it restores cwnd only)")
    spike_s = max(A18_SPIKE_RTT_NS / 1e9, A18_SPIKE_RTTS * run.rtt_s)
    window_s = A18_WINDOW_SPIKES * spike_s
    crit = (
        f"RTT {spike_s:g} s for {A18_SPIKE_NS / 1e6:g} ms on UP's entry: a spurious RTO, undone "
        f"(undo count ≥ 1); for every loss episode in the {window_s:g} s after, on the ACK that ends it, "
        "bw_shortterm, inflight_shortterm and inflight_longterm as on the ACK before its first loss, and the "
        "phase UP again (probe_refill or probe_up) when the loss came in UP"
    )
    u = triggered(run, "probe_up", crit)
    if isinstance(u, Outcome):
        return u
    t = run.col("t_s")
    stop = int(np.searchsorted(t, t[u.start] + window_s))
    eps = _episodes(run, u.start, stop)
    if not eps:
        return Outcome(FAIL, "no loss was marked: no spurious RTO", crit)
    if run.phases[eps[0][0]] != "probe_up":
        return Outcome(FAIL, f"the first losses were marked after UP ended (in {run.phases[eps[0][0]]})", crit)
    undos, spurious_rtos = int(run.flows["undos"][0]), int(run.flows["spurious_rtos"][0])
    texts, bounds_ok, phase_ok = [], True, True
    for saved_row, end in eps:
        if end < 0:
            return Outcome(FAIL, f"the loss episode after {t[saved_row]:.2f} s never ended", crit)
        parts = []
        for col, name, scale, unit in (*SAVED, SAVED_LONGTERM):
            saved, now = float(run.col(col)[saved_row]), float(run.col(col)[end])
            bounds_ok &= _restored(now, saved)
            parts.append(f"{name} {_value(saved, scale, unit)} → {_value(now, scale, unit)}")
        # What the losses did before the undo, where an ACK of the episode shows it.
        during = run.col(SAVED_LONGTERM[0])[saved_row + 1 : end]
        if np.isfinite(during).any():
            parts.append(f"inflight_longterm {np.nanmax(during):.0f} before the undo")
        before, after = str(run.phases[saved_row]), str(run.phases[end])
        if before == "probe_up":
            phase_ok &= after in UP_AGAIN
        texts.append(f"{before} → {after} at {t[end]:.2f} s ({', '.join(parts)})")
    ok = undos >= 1 and bounds_ok and phase_ok
    why = ""
    if undos >= 1 and bounds_ok and not phase_ok and not r.undo_restores_phase:
        why = f" (documented difference: {r.source}'s undo restores the bounds, not the phase)"
    return Outcome(
        verdict(ok),
        f"{len(eps)} loss episode{'' if len(eps) == 1 else 's'}, {undos} undos ({spurious_rtos} spurious RTOs): "
        f"{'; '.join(texts)}{why}",
        crit,
    )
