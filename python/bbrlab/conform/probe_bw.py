"""The PROBE_BW cases: A.5 (exit PROBE_UP on a plateau), A.6 (exit PROBE_UP on loss while
app-limited), A.8 (exit PROBE_DOWN on inflight), A.9 (exit PROBE_DOWN on its maximum time), A.20
(loss in PROBE_UP sets inflight_longterm), A.21 (app-limited in PROBE_REFILL).
"""

from __future__ import annotations

import math

import numpy as np

from .measures import exit_inflight, exit_measure, triggered
from .outcome import FAIL, GAIN_TOL, PLATEAU_ROUNDS, Outcome, na, verdict
from .rules import Rules
from .scenarios import A9_GAIN_SHARE, APP_SLOW_SHARE
from .trace import Episode, Run


def check_a5(run: Run, r: Rules) -> Outcome:
    """A.5: PROBE_UP, without loss and with inflight_longterm unset, ends on a 3-round plateau
    (full_bw_now) → PROBE_DOWN. An UP that PROBE_RTT pre-empts is not judged."""
    if r.down_gain is None:
        return na("BBRv1 has no PROBE_UP phase (its 1.25 gain lasts one min_rtt of an 8-phase cycle)")
    # PROBE_RTT pre-empts any state when min_rtt's window expires (the draft's
    # BBRCheckProbeRTT runs on every ACK), so an UP it cut short is not judged on its exit, as
    # A.8 does not judge such a DOWN; the others must all end as the rule says.
    done = [e for e in run.episodes_of("probe_up") if e.next]
    ups = [e for e in done if e.next != "probe_rtt"]
    cut = len(done) - len(ups)
    cut_note = f" ({cut} more cut short by probe_rtt)" if cut else ""
    rounds = run.col("round_count")
    if not r.up_exits_on_plateau:
        # v2alpha: UP ends once it has lasted a min_rtt and inflight reached 1.25 × BDP.
        crit = f"every PROBE_UP → probe_down after ≥ 1 min_rtt ({r.source}'s rule, not the plateau)"
        if not ups:
            return Outcome(FAIL, f"no completed PROBE_UP{cut_note}", crit)
        t, min_rtt_s = run.col("t_s"), run.col("min_rtt_ms") / 1e3
        spans = [float(t[e.end] - t[e.start]) / float(min_rtt_s[e.start]) for e in ups]
        nexts = sorted({e.next for e in ups})
        return Outcome(
            verdict(nexts == ["probe_down"] and min(spans) >= 1.0),
            f"{len(ups)} PROBE_UPs of {min(spans):.2f}–{max(spans):.2f} min_rtt → {', '.join(nexts)}{cut_note}",
            crit,
        )
    crit = f"every PROBE_UP → probe_down after ≥ {PLATEAU_ROUNDS} rounds of < 25 % max_bw growth"
    if not ups:
        return Outcome(FAIL, f"no completed PROBE_UP{cut_note}", crit)
    lengths = [int(rounds[e.end] - rounds[e.start]) for e in ups]
    nexts = sorted({e.next for e in ups})
    ok = nexts == ["probe_down"] and min(lengths) >= PLATEAU_ROUNDS
    return Outcome(
        verdict(ok),
        f"{len(ups)} PROBE_UPs of {min(lengths)}–{max(lengths)} rounds → {', '.join(nexts)}{cut_note}",
        crit,
    )


def check_a8(run: Run, r: Rules) -> Outcome:
    """A.8: PROBE_DOWN paces at the DOWN gain and ends → CRUISE once inflight ≤ the BDP and ≤
    inflight_longterm's headroom."""
    if r.down_gain is None:
        return na("BBRv1 has no PROBE_DOWN phase (its 0.75 gain lasts one min_rtt of an 8-phase cycle)")
    measure = exit_measure(r)
    crit = f"gain {r.down_gain:.3f} ({r.source}); → probe_cruise with {measure} (±1)"
    downs = [e for e in run.episodes_of("probe_down") if e.next]
    if not downs:
        return Outcome(FAIL, "no completed PROBE_DOWN", crit)
    gains = np.concatenate([run.col("pacing_gain")[e.start : e.end] for e in downs])
    gain_ok = bool(np.all(np.abs(gains - r.down_gain) <= GAIN_TOL))
    # A DOWN may also end on time (→ REFILL, A.9's exit) or be pre-empted by PROBE_RTT; only the
    # DOWNs that went to CRUISE are judged on the bound, and at least one must have.
    cruised = [e for e in downs if e.next == "probe_cruise"]
    other = sorted({e.next for e in downs if e.next not in ("probe_cruise", "probe_refill", "probe_rtt")})
    if not cruised:
        return Outcome(FAIL, f"no PROBE_DOWN → probe_cruise ({len(downs)} DOWNs)", crit)
    ends = [exit_inflight(run, r, e.end) for e in cruised]
    bad = [e for e, (now, lim, _) in zip(cruised, ends) if now > lim + 1]
    now, lim, name = ends[0]
    return Outcome(
        verdict(gain_ok and not bad and not other),
        f"gain {np.min(gains):.3f}–{np.max(gains):.3f}; {len(cruised) - len(bad)}/{len(cruised)} DOWNs → "
        f"probe_cruise within the bound (first: {name} {now:.1f} vs {lim:.1f}); {len(downs) - len(cruised)} "
        f"→ refill or PROBE_RTT{'; → ' + ', '.join(other) if other else ''}",
        crit,
    )


def check_a9(run: Run, r: Rules) -> Outcome:
    """A.9: with the link cut to DOWN's pacing rate on DOWN's entry, the probe's queue does not
    drain, so DOWN ends only when it is time to probe again (bw_probe_wait, 2–3 s, or the
    Reno-coexistence round bound) → straight to PROBE_REFILL, skipping CRUISE."""
    if r.down_gain is None:
        return na("BBRv1 has no PROBE_DOWN phase (its 0.75 gain lasts one min_rtt of an 8-phase cycle)")
    crit = (
        f"rate cut to {r.down_gain * A9_GAIN_SHARE:.3f} × on PROBE_DOWN entry: DOWN → probe_refill (not CRUISE) within "
        "3 s (bw_probe_wait; the Reno-coexistence bound may come sooner)"
    )
    d = triggered(run, "probe_down", crit)
    if isinstance(d, Outcome):
        return d
    t, rounds = run.col("t_s"), run.col("round_count")
    span = float(t[d.end - 1] - t[d.start]) if d.end > d.start else 0.0
    n = int(rounds[d.end - 1] - rounds[d.start])
    # The setup's premise, reported, not judged: the exit measure stayed above DOWN's bound (the
    # trace's measure is an estimate of the one the algorithm uses, ±1 packet).
    if d.next == "probe_rtt" and span <= 3.0:
        return na(f"PROBE_RTT, due at its own interval, ended DOWN after {span:.2f} s, before its 3-s limit")
    measures = (exit_inflight(run, r, i) for i in range(d.start, d.end))
    below = sum(1 for now, bound, _ in measures if now <= bound)
    ok = d.next == "probe_refill" and span <= 3.0 + 2 * run.rtt_s
    return Outcome(
        verdict(ok),
        f"DOWN lasted {span:.2f} s, {n} rounds → {d.next or 'end of run'}; exit measure at or below the bound "
        f"on {below} of its {d.end - d.start} ACKs",
        crit,
    )


#: A.20: PROBE_UP must leave on the placed losses within this many rounds of the first one being
#: marked (the losses are detected within a round; the plateau needs 3).
A20_EXIT_ROUNDS = 1


def _up_and_first_loss(run: Run, crit: str) -> tuple[Episode, int, int] | Outcome:
    """A.6's and A.20's triggered PROBE_UP, the row of the ACK that marked the first placed loss
    in it and the rounds from that ACK to UP's exit; or the outcome when the losses were never
    marked or UP ended before."""
    u = triggered(run, "probe_up", crit)
    if isinstance(u, Outcome):
        return u
    lost = run.col("lost_pkts")
    marked = np.flatnonzero(lost[u.start :] > lost[u.start])
    if not len(marked):
        return Outcome(FAIL, "the placed losses were never marked", crit)
    first = u.start + int(marked[0])
    if first > u.end:
        return Outcome(FAIL, f"UP → {u.next or 'end of run'} before the first loss was marked", crit)
    rounds = run.col("round_count")
    return u, first, int(rounds[u.end] - rounds[first])


def check_a20(run: Run, r: Rules) -> Outcome:
    """A.20: losses in PROBE_UP (> LossThresh of inflight) end UP at once → PROBE_DOWN, before its
    plateau, and set inflight_longterm to max(tx_in_flight, Beta × target inflight)."""
    if r.down_gain is None:
        return na("BBRv1 has no PROBE_UP phase and no inflight_longterm")
    if not r.up_exits_on_plateau:
        return na(
            f"{r.source}'s PROBE_UP ends after one min_rtt at 1.25 × BDP, before losses of the segments "
            "it sent can be marked: no UP waits for a plateau that a loss could pre-empt"
        )
    crit = (
        f"UP → probe_down within {A20_EXIT_ROUNDS} round of the first placed loss being marked; "
        "inflight_longterm then set, ≥ 0.7 × BDP"
    )
    found = _up_and_first_loss(run, crit)
    if isinstance(found, Outcome):
        return found
    u, _, n = found
    rounds = run.col("round_count")
    hi = float(run.col("inflight_hi_pkts")[u.end])
    bdp = run.bdp_at(u.end)
    ok = u.next == "probe_down" and n <= A20_EXIT_ROUNDS and math.isfinite(hi) and hi >= 0.7 * bdp
    return Outcome(
        verdict(ok),
        f"→ {u.next or 'end of run'} {n} rounds after the first loss was marked "
        f"({int(rounds[u.end] - rounds[u.start])} rounds of UP); inflight_longterm {hi:.0f} (BDP {bdp:.1f})",
        crit,
    )


def _longterm(x: float) -> str:
    return f"{x:.0f}" if math.isfinite(x) else "unset"


def check_a6(run: Run, r: Rules) -> Outcome:
    """A.6: an app-limited PROBE_UP that loses > LossThresh leaves at once → PROBE_DOWN, and
    the app-limited loss does not set inflight_longterm (HandleInflightTooHigh only sets it from
    a sample that was not app-limited)."""
    if r.down_gain is None:
        return na("BBRv1 has no PROBE_UP phase and no inflight_longterm")
    crit = (
        f"app slowed to {APP_SLOW_SHARE:.0%} of the link on UP's entry, > 2 % of its segments lost: "
        f"UP → probe_down (or through it to CRUISE on the same ACK) within {A20_EXIT_ROUNDS} round of the first "
        "loss being marked, the connection app-limited on that ACK; "
        "inflight_longterm after it as on UP's entry (not set from an app-limited sample)"
    )
    found = _up_and_first_loss(run, crit)
    if isinstance(found, Outcome):
        return found
    u, first, n = found
    limited = bool(run.col("app_limited")[first])
    hi = run.col("inflight_hi_pkts")
    before, after = float(hi[u.start]), float(hi[u.end])
    same = before == after or not (math.isfinite(before) or math.isfinite(after))
    # UP's only exit is DOWN; the app-limited inflight is below DOWN's bound at once, so the same
    # ACK may go on to CRUISE (the trace shows the state after the ACK). Read as "through DOWN"
    # only when DOWN's exit measure holds on that ACK.
    now, bound, measure = exit_inflight(run, r, u.end) if u.next else (0.0, 0.0, "")
    through = u.next == "probe_cruise" and now <= bound + 1
    ok = (u.next == "probe_down" or through) and n <= A20_EXIT_ROUNDS and limited and same
    via = f" (through DOWN on that ACK: {measure} {now:.1f} ≤ {bound:.1f})" if through else ""
    return Outcome(
        verdict(ok),
        f"→ {u.next or 'end of run'}{via} {n} round{'' if n == 1 else 's'} after the first loss was marked, on an ACK "
        f"{'' if limited else 'not '}app-limited; inflight_longterm {_longterm(before)} on UP's entry, "
        f"{_longterm(after)} after",
        crit,
    )


def check_a21(run: Run, r: Rules) -> Outcome:
    """A.21: with the application slowed on PROBE_REFILL's entry, REFILL's app-limited samples
    below max_bw do not lower max_bw (nor bw), and REFILL still ends after one round → PROBE_UP."""
    if r.down_gain is None:
        return na("BBRv1 has no PROBE_REFILL phase (its 8-phase gain cycle has no refill round)")
    crit = (
        f"app slowed to {APP_SLOW_SHARE:.0%} of the link on REFILL's entry: REFILL → probe_up after 1 round; "
        "max_bw and bw on every ACK of REFILL and on UP's entry ≥ their values on REFILL's entry; "
        "≥ 1 app-limited sample below max_bw in REFILL"
    )
    e = triggered(run, "probe_refill", crit)
    if isinstance(e, Outcome):
        return e
    stop = e.end + 1 if e.next else e.end
    max_bw, bw = run.col("max_bw_bps")[e.start : stop], run.col("bw_bps")[e.start : stop]
    limited = run.col("app_limited")[e.start : e.end].astype(bool)
    low = int(np.sum(limited & (run.col("delivery_rate_bps")[e.start : e.end] < max_bw[: e.end - e.start])))
    rounds = run.col("round_count")
    n = int(rounds[stop - 1] - rounds[e.start])
    kept = bool(np.all(max_bw >= max_bw[0]) and np.all(bw >= bw[0]))
    ok = e.next == "probe_up" and n == 1 and kept and low > 0
    return Outcome(
        verdict(ok),
        f"→ {e.next or 'end of run'} after {n} round{'' if n == 1 else 's'} ({e.end - e.start} ACKs, {low} of them app-limited "
        f"below max_bw); max_bw {np.min(max_bw) / max_bw[0]:.1%} at least of its entry value, bw "
        f"{np.min(bw) / bw[0]:.1%}",
        crit,
    )
