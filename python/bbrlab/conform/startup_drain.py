"""The STARTUP and DRAIN cases: A.1 (exit STARTUP on a bandwidth plateau), A.2 (exit STARTUP on loss
while app-limited), A.3 (exit DRAIN on inflight), A.4 (exit DRAIN on time), A.7 (stay in STARTUP while
app-limited and lossless).
"""

from __future__ import annotations

import numpy as np

from .measures import exit_inflight, exit_measure, triggered
from .outcome import FAIL, FULL_BW_TOL, GAIN_TOL, PLATEAU_GROWTH, PLATEAU_ROUNDS, Outcome, mbps, na, verdict
from .rules import Rules
from .scenarios import A2_DROPPED_SEGMENTS, A4_RATE_SHARE
from .trace import Run


def check_a1(run: Run, r: Rules) -> Outcome:
    """A.1: STARTUP ends on a bandwidth plateau: max_bw within 2 % of the link, after 3 rounds of
    < 25 % growth, full_bw_reached, → DRAIN."""
    crit = f"→ drain after {PLATEAU_ROUNDS} rounds of < 25 % max_bw growth; max_bw within 2 % of capacity"
    eps = run.episodes()
    if not eps or eps[0].phase != "startup" or eps[0].next != "drain":
        nxt = eps[0].next if eps else "nothing"
        return Outcome(FAIL, f"STARTUP → {nxt or 'end of run'}", crit)
    exit_row = eps[0].end
    max_bw, starts = run.col("max_bw_bps"), run.col("round_start")
    # The plateau, recomputed from the trace, not read from the algorithm's counter: from max_bw
    # at each round start in STARTUP (the draft's rule: BBRCheckFullBWReached on the round-start
    # sample), or (Linux v3) from every ACK's non-app-limited sample, flat rounds counted at
    # round starts whose sample did not grow.
    baseline, flat = 0.0, 0
    if r.full_bw_every_ack:
        rate, limited = run.col("delivery_rate_bps"), run.col("app_limited")
        for i in range(exit_row + 1):
            if limited[i]:
                continue
            if rate[i] >= baseline * PLATEAU_GROWTH:
                baseline, flat = float(rate[i]), 0
            elif starts[i]:
                flat += 1
    else:
        for j in np.flatnonzero(starts[: exit_row + 1]):
            if max_bw[j] >= baseline * PLATEAU_GROWTH:
                baseline, flat = float(max_bw[j]), 0
            else:
                flat += 1
    ratio = float(max_bw[exit_row]) / run.payload_bps
    reached = bool(run.col("full_bw_reached")[exit_row])
    ok = flat == PLATEAU_ROUNDS and abs(ratio - 1) <= FULL_BW_TOL and reached
    return Outcome(
        verdict(ok),
        f"{flat} flat rounds; max_bw {mbps(max_bw[exit_row])} = {ratio:.1%} of capacity; "
        f"full_bw_reached {int(reached)}",
        crit,
    )


def check_a2(run: Run, r: Rules) -> Outcome:
    """A.2: an app-limited STARTUP that loses 6 discontiguous segments of one round (> 2 %)
    leaves for DRAIN on the loss, with full_bw_reached, though its bandwidth never plateaued."""
    if r.startup_full_loss_cnt is None:
        return na(f"{r.source} leaves STARTUP only on a bandwidth plateau (no loss exit)")
    if r.startup_full_loss_cnt != len(A2_DROPPED_SEGMENTS):
        return na(
            f"{r.source} needs {r.startup_full_loss_cnt} loss events in the round; the case places "
            f"the draft's {len(A2_DROPPED_SEGMENTS)}"
        )
    crit = (
        "STARTUP → drain (or through it on the same ACK) within 3 rounds of the first marked loss; "
        "full_bw_reached; max_bw below capacity (not a plateau)"
    )
    t, rounds, lost = run.col("t_s"), run.col("round_count"), run.col("lost_pkts")
    hit = np.flatnonzero(lost > 0)
    if not len(hit):
        return Outcome(FAIL, "the placed losses were never marked", crit)
    first_loss = int(hit[0])
    eps = run.episodes()
    if not eps or eps[0].phase != "startup" or eps[0].next not in ("drain", *r.probe_bw_phases):
        nxt = eps[0].next if eps else ""
        return Outcome(FAIL, f"STARTUP → {nxt or 'end of run'}", crit)
    exit_row = eps[0].end
    n = int(rounds[exit_row] - rounds[first_loss])
    reached = bool(run.col("full_bw_reached")[exit_row])
    share = float(run.col("max_bw_bps")[exit_row]) / run.payload_bps
    ok = exit_row >= first_loss and 0 <= n <= 3 and reached and share < 1 - FULL_BW_TOL
    return Outcome(
        verdict(ok),
        f"→ {eps[0].next} {n} rounds after the first loss was marked ({t[exit_row]:.2f} s); full_bw_reached "
        f"{int(reached)}; max_bw {share:.0%} of capacity; {int(lost[exit_row])} lost by then",
        crit,
    )


def check_a3(run: Run, r: Rules) -> Outcome:
    """A.3: DRAIN paces at the drain gain and ends at the first ACK with inflight ≤
    BBRInflight(1.0) (Linux: in the network at the next departure, with the offload budget)."""
    measure = exit_measure(r)
    crit = f"gain {r.drain_gain:.3f} ({r.source}); → PROBE_BW at the first ACK with {measure} (±1)"
    eps = run.episodes_of("drain")
    if not eps:
        return Outcome(FAIL, "no DRAIN", crit)
    d = eps[0]
    gains = run.col("pacing_gain")[d.start : d.end]
    if d.next not in r.probe_bw_phases:
        return Outcome(FAIL, f"DRAIN → {d.next or 'end of run'}", crit)
    gain_ok = bool(np.all(np.abs(gains - r.drain_gain) <= GAIN_TOL))
    # Left at the first ACK that brought inflight to the threshold: at or below it on the exit
    # row, above it on the row before.
    now, lim = exit_inflight(run, r, d.end)[:2]
    before, lim_before, name = exit_inflight(run, r, d.end - 1)
    exit_ok = now <= lim + 1 and before > lim_before - 1
    return Outcome(
        verdict(gain_ok and exit_ok),
        f"gain {np.min(gains):.3f}–{np.max(gains):.3f}; → {d.next} at {name} {now:.1f} ≤ {lim:.1f} "
        f"({before:.1f} vs {lim_before:.1f} on the ACK before)",
        crit,
    )


def check_a4(run: Run, r: Rules) -> Outcome:
    """A.4: with the link cut below DRAIN's pacing rate on DRAIN's entry, inflight stays above
    BBRInflight(1.0) and only the 3-round limit (round_count > drain_start_round + 3) ends
    DRAIN → PROBE_BW."""
    if r.drain_max_rounds is None:
        return na(f"{r.source} ends DRAIN only on inflight (no round limit)")
    n_max = r.drain_max_rounds
    crit = (
        f"rate cut to {A4_RATE_SHARE:.0%} on DRAIN entry: DRAIN → PROBE_BW on the ACK that makes "
        f"round_count = drain_start_round + {n_max + 1}, with inflight still above BBRInflight(1.0)"
    )
    d = triggered(run, "drain", crit)
    if isinstance(d, Outcome):
        return d
    rounds = run.col("round_count")
    n = int(rounds[d.end] - rounds[d.start]) if d.next else int(rounds[-1] - rounds[d.start])
    if d.next == "probe_rtt" and n <= n_max:
        # PROBE_RTT, due at its own interval, pre-empted DRAIN before the limit could end it.
        return na(f"PROBE_RTT came {n} rounds into DRAIN, before its limit of {n_max} (slow rounds)")
    if d.next not in r.probe_bw_phases:
        return Outcome(FAIL, f"DRAIN → {d.next or 'end of run'} after {n} rounds", crit)
    now, lim, name = exit_inflight(run, r, d.end)
    ok = n == n_max + 1 and now > lim
    return Outcome(
        verdict(ok),
        f"→ {d.next} {n} rounds after DRAIN began ({run.col('t_s')[d.end] - run.col('t_s')[d.start]:.3f} s); "
        f"{name} {now:.1f} vs {lim:.1f} at the exit",
        crit,
    )


def check_a7(run: Run, r: Rules) -> Outcome:
    """A.7: an app-limited sender without loss never leaves STARTUP (nor PROBE_UP)."""
    crit = "stays in STARTUP (PROBE_RTT excepted) while app-limited and lossless"
    seen = [p for p in dict.fromkeys(run.phases.tolist()) if p not in ("startup", "probe_rtt")]
    lost = int(run.col("lost_pkts")[-1]) if len(run.phases) else 0
    if lost:
        return na(f"the run lost {lost} packets")
    return Outcome(
        verdict(not seen),
        "STARTUP throughout" if not seen else f"left STARTUP for {', '.join(seen)}",
        crit,
    )
