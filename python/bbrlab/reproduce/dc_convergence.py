"""dc-convergence (Waterloo DC study §4.3, Figures 9–11, and its open question).

The Waterloo authors measured fairness with 5 flows from separate senders into one receiver:
flow k starts at k·T and sends for 5·T, so 1, 2, …, 5 and then 4, …, 1 flows are active, each
level lasting T (``aggregator converge 5 T 1``: T·(2n−1) s, per-flow throughput every second). With T = 30 s CUBIC
converged well and BBR converged poorly, some flows starving (Figs 9, 10); with T = 60 s BBR's
flows alternated between full link speed and nothing (Fig 11). The authors suspected the lossless,
cut-through fabric and asked for a store-and-forward comparison with drops instead of PAUSE.

Here: the same schedule on both fabrics, per-flow goodput sampled every 1 s at the receiver,
Jain's fairness index per level — over the level's mean per-flow throughput (did the flows share
the level?) and as the mean of the per-second index (were they sharing at each moment? flows
taking turns at full speed score high on the first and low on the second). The first 2 s of each
level are left out of both (convergence time). The per-second samples are also written in the
study's CSV schema (`num_flows,socket_fd,throughput,time`: flows started so far, fd 5 + k,
Mbit/s, µs since the start), without the study's 8 Mbit/s quantization.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..plots.figures import save, subplots
from ..results.results import jain_index
from . import dc_common as dc
from . import dc_findings
from .analysis import packets_simulated, select
from .claims import Check, Claim, cell, check, claims_table, num, verdict_of_all
from .context import Size, StudyContext
from .report import md_table
from .scenarios import Flow, StudyRun, study_run
from .sentences import join
from .source_figures import SourceFigure, beside
from .sources import WATERLOO_DC

SOURCE = WATERLOO_DC

_FAIRNESS = (
    "Throughput into one receiver, sampled every second in one trial, of 5 flows from separate senders, each "
    "150 s long, started and then stopped one every 30 s. The report gives no values (the figure's numbers are "
    "not in its text)."
)
#: The Waterloo DC study's figures this study redraws, by number (each study has this table: the
#: report tests read it). Captions quoted from the report.
SOURCE_FIGURES = {
    9: SourceFigure(
        SOURCE,
        "Figure 9",
        "TCP Cubic convergence test - 30 second intervals. TCP Cubic converges well as 5 flows are added and removed.",
        "each flow's throughput over time, TCP Cubic. " + _FAIRNESS,
    ),
    10: SourceFigure(
        SOURCE,
        "Figure 10",
        "TCP BBR convergence test - 30 second intervals. TCP BBR converges poorly, and some flows starve when more "
        "than 2 flows share the bottleneck.",
        "the same with TCP BBR. " + _FAIRNESS,
    ),
    11: SourceFigure(
        SOURCE,
        "Figure 11",
        "TCP BBR convergence test - 60 second intervals. TCP BBR converges poorly, and connections oscillate "
        "between zero throughput and transmitting at full bottleneck speed when more than 2 flows share the link.",
        "TCP BBR with 60 s between starts, to see whether BBR needs longer than 30 s to converge (the original "
        "BBR paper's finding). " + _FAIRNESS.replace("one every 30 s", "one every 60 s"),
    ),
}
N = 5
SETTLE_S = 2.0
FABRICS = dc.ALL_FABRICS
#: Per-second Jain index (mean over levels with ≥ 3 flows) at or above which flows "converge".
CONVERGED, PARTLY = 0.9, 0.7


@dataclass(frozen=True)
class Plan:
    Ts: tuple[float, ...]  # level lengths T in seconds; the run is T·(2N−1)
    fabrics: tuple[str, ...] = tuple(FABRICS)


PLANS = {
    # T = 3 s: the smallest with a sample (every 1 s) in each level after the 2-s settling time.
    Size.TINY: Plan(Ts=(3.0,)),
    # T = 10 s: a level as long as BBRv1's min-RTT window (10 s), so each can hold a ProbeRTT.
    Size.QUICK: Plan(Ts=(10.0,), fabrics=dc.QUICK_FABRICS),
    Size.FULL: Plan(Ts=(30.0, 60.0)),
}


def _scenario(fabric: str, cc: str, T: float) -> StudyRun:
    return study_run(
        f"dc-converge-{fabric}-{cc}-T{T:g}",
        duration_s=T * (2 * N - 1),
        seed=7,
        sample_interval_s=1.0,
        topology=dc.topology(fabric, N),
        flows=[Flow(cc, start_s=k * T, stop_s=k * T + N * T) for k in range(N)],
        tags={"fabric": fabric, "cc": cc, "T": T},
    )


def _levels(ts: pd.DataFrame, T: float) -> list[dict[str, Any]]:
    out = []
    for lvl in range(2 * N - 1):
        lo, hi = lvl * T + SETTLE_S, (lvl + 1) * T
        active = [k for k in range(N) if k * T <= lvl * T < k * T + N * T]
        d = ts[(ts["t_s"] > lo) & (ts["t_s"] <= hi + 1e-9) & ts["flow"].isin(active)]
        per_flow = d.groupby("flow")["goodput_bps"].mean().reindex(active, fill_value=0.0)
        per_sec = [jain_index(g["goodput_bps"].to_numpy()) for _, g in d.groupby("t_s")]
        out.append(
            {
                "level": lvl,
                "active": len(active),
                "jain_level": jain_index(per_flow.to_numpy()),
                "jain_per_second": float(np.nanmean(per_sec)) if per_sec else math.nan,
                "total_bps": float(per_flow.sum()),
                "min_share": float(per_flow.min() / max(per_flow.sum(), 1.0)),
                "starved_flows": int((per_flow < 0.05 * dc.CEILING_BPS / len(active)).sum()),
            }
        )
    return out


def _series_plot(ts: pd.DataFrame, title: str, path: Path, T: float) -> None:
    fig, ax = subplots(figsize=(9, 3.6))
    for k in range(N):
        d = ts[ts["flow"] == k]
        ax.plot(d["t_s"], d["goodput_bps"] / 1e6, lw=0.9, label=f"flow {k + 1}")
    for lvl in range(1, 2 * N - 1):
        ax.axvline(lvl * T, color="grey", lw=0.4, ls=":")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(0, 1000)
    ax.set_xlim(0, T * (2 * N - 1))
    ax.grid(alpha=0.3)
    ax.legend(ncol=5, fontsize=8, loc="upper right")
    ax.set_title(title, fontsize=10)
    save(fig, path)


def _seed_csv(ts: pd.DataFrame, T: float, path: Path) -> None:
    # Per sample time, one row per flow started by then (0 where the flow has no sample).
    goodput = ts.drop_duplicates(["t_s", "flow"]).set_index(["t_s", "flow"])["goodput_bps"]
    times = np.sort(ts["t_s"].unique())
    t, k = np.repeat(times, N), np.tile(np.arange(N), len(times))
    started = k * T < t
    t, k = t[started], k[started]
    at = pd.MultiIndex.from_arrays([t, k])
    bps = np.where(at.isin(goodput.index), goodput.reindex(at).to_numpy(), 0.0)
    num_flows = (np.arange(N)[None, :] * T < times[:, None]).sum(axis=1)
    pd.DataFrame(
        {
            "num_flows": np.repeat(num_flows, num_flows),
            "socket_fd": 5 + k,
            "throughput": [round(float(x) / 1e6, 3) for x in bps],
            "time": [int(round(float(x) * 1e6)) for x in t],
        }
    ).to_csv(path, index=False)


def run(ctx: StudyContext) -> Path:
    p = PLANS[ctx.size]
    Ts = p.Ts
    scen = [_scenario(f, cc, T) for T in Ts for f in p.fabrics for cc in dc.CCS]
    rows = ctx.run_many("convergence", scen, keep_timeseries=True)
    pause = dc.assert_lossless(rows, "dc-convergence")
    levels = []
    figs: list[OurFigure] = []
    # The study's figure numbers: Fig 9 CUBIC and Fig 10 BBR at the first T, Fig 11 BBR at the longer T.
    fig_no = {("cubic", Ts[0]): 9, (dc.BBR, Ts[0]): 10} | ({(dc.BBR, Ts[-1]): 11} if len(Ts) > 1 else {})
    for tags, ts, _q in ctx.series["convergence"]:
        fabric, cc, T = tags["fabric"], tags["cc"], tags["T"]
        for lv in _levels(ts, T):
            levels.append({"fabric": fabric, "cc": cc, "T": T, **lv})
        stem = f"series-{fabric}-{dc.CSV_CC[cc]}-T{T:g}"
        no = fig_no.get((cc, T))
        title = (
            f"{'Fig ' + str(no) + ': ' if no else ''}{dc.CC_LABEL[cc]} convergence, {T:g} s intervals — "
            f"{dc.FABRIC_LABEL[fabric]}"
        )
        _series_plot(ts, title, ctx.out_dir / f"{stem}.png", T)
        long = "_long" if Ts[-1] == T and len(Ts) > 1 else ""
        _seed_csv(ts, T, ctx.out_dir / f"{dc.CSV_CC[cc]}_converge{long}_{fabric}.csv")
        alt = (
            f"bbrlab: each flow's throughput over time, {dc.CC_LABEL[cc]}, {T:g} s intervals, {dc.FABRIC_LABEL[fabric]}"
        )
        figs.append(OurFigure(stem, no, alt))
    lv = pd.DataFrame(levels)
    lv.to_csv(ctx.out_dir / "levels.csv", index=False)
    cl = claims(lv)
    report = ctx.write_report(
        "dc-convergence: fairness of 5 staggered flows (Waterloo DC study, Figs 9–11)",
        report_sections(lv, Ts, pause, figs, cl),
        source=SOURCE,
        packets=packets_simulated(rows),
        claims=cl,
    )
    dc_findings.write(ctx.out_dir, ctx.size)  # the mechanism × finding table, once all three have run
    return report


def jain3(lv: pd.DataFrame, fabric: str, cc: str, col: str = "jain_per_second") -> float:
    """Mean Jain index over the levels with ≥ 3 active flows (rising and falling, every T)."""
    d = lv[(lv["fabric"] == fabric) & (lv["cc"] == cc) & (lv["active"] >= 3)]
    return float(d[col].mean())


def _starved(lv: pd.DataFrame, fabric: str, cc: str) -> int:
    return int(select(lv, fabric=fabric, cc=cc)["starved_flows"].sum())


def _word(j: float) -> str:
    return "converges" if j >= CONVERGED else ("converges partly" if j >= PARTLY else "converges poorly")


def _drop_effect(lv: pd.DataFrame) -> dict[str, float]:
    """Per drop-tail fabric: BBRv1's per-second Jain index (≥ 3 flows) there minus on the lossless fabric."""
    return {f: jain3(lv, f, dc.BBR) - jain3(lv, "lossless", dc.BBR) for f in dc.fabrics_in(lv) if not dc.is_lossless(f)}


def _jain(j: float) -> str:
    """Jain's index in a reason: two decimals, as the tables print it (the limits have one or two)."""
    return f"{j:.2f}".replace("-", "−")


#: A change of Jain's index smaller than this between fabrics is not a change (single trials).
JAIN_STEP = 0.1


def claims(lv: pd.DataFrame) -> list[Claim]:
    """The Waterloo study's §4.3 claims, checked on each fabric, and its open question's suspicion."""
    out = []
    for fabric in dc.fabrics_in(lv):
        where = f" — {dc.FABRIC_LABEL[fabric]}"

        def ours(cc: str, fabric: str = fabric) -> str:
            j = jain3(lv, fabric, cc)
            return (
                f"{_word(j)}: Jain (≥ 3 flows) {jain3(lv, fabric, cc, 'jain_level'):.2f} per level / {j:.2f} per "
                f"second; starved flow-levels {_starved(lv, fabric, cc)}"
            )

        def values(cc: str, fabric: str = fabric) -> str:
            return cell(
                num(jain3(lv, fabric, cc, "jain_level"), label="Jain per level"),
                num(jain3(lv, fabric, cc), label="Jain per second"),
                num(_starved(lv, fabric, cc), label="starved flow-levels"),
            )

        jc, jb = jain3(lv, fabric, "cubic"), jain3(lv, fabric, dc.BBR)
        out.append(
            Claim(
                "CUBIC converges well (Fig 9)" + where,
                "yes",
                ours("cubic"),
                f"per-second Jain (≥ 3 flows) ≥ {CONVERGED} (≥ {PARTLY}: partly)",
                verdict_of_all(check(jc, "≥", lim, "per-second Jain {}", _jain) for lim in (PARTLY, CONVERGED)),
                paper_value="converges well",
                bbrlab_value=values("cubic"),
            )
        )
        out.append(
            Claim(
                "BBR converges poorly with ≥ 3 flows, some starve (Figs 10, 11)" + where,
                "yes",
                ours(dc.BBR),
                f"per-second Jain (≥ 3 flows) < {CONVERGED} and < {PARTLY}; a starved flow-level",
                verdict_of_all(
                    [
                        check(jb, "<", CONVERGED, "per-second Jain {}", _jain),
                        check(jb, "<", PARTLY, "per-second Jain {}", _jain),
                        Check(
                            None if not math.isfinite(jb) else _starved(lv, fabric, dc.BBR) > 0,
                            f"{_starved(lv, fabric, dc.BBR)} starved flow-levels (rule: > 0)",
                        ),
                    ]
                ),
                paper_value="converges poorly, some flows starve",
                bbrlab_value=values(dc.BBR),
            )
        )
    effect = _drop_effect(lv)
    out.append(
        Claim(
            "open question (§6): BBR's poor convergence comes from the lossless fabric; with drops instead of PAUSE it "
            "converges better",
            "suspected",
            "BBRv1's per-second Jain with drops minus with PAUSE: "
            + ", ".join(f"{dc.FABRIC_LABEL[f]} {d:+.2f}" for f, d in effect.items()),
            f"BBRv1's per-second Jain (≥ 3 flows) at least {JAIN_STEP} higher on each drop-tail fabric than on the "
            "lossless one",
            verdict_of_all(
                check(d, "≥", JAIN_STEP, "Jain {} above the lossless fabric's", _jain, where=dc.FABRIC_SHORT[f])
                for f, d in effect.items()
            ),
            paper_value="suspected",
            bbrlab_value=cell(num(d, label=f"{f} − lossless") for f, d in effect.items()),
        )
    )
    return out


#: The fabrics the open question's answer speaks of: the lossless baseline and the two drop-tail buffers.
LOSSLESS, SHALLOW, DEEP = "lossless", "store-and-forward", "store-and-forward-deep"


def _headline(change: dict[str, float]) -> tuple[str, list[str]]:
    """Does BBRv1's convergence change when drops replace PAUSE, and which way? (the last claim's
    numbers, `change` per drop-tail fabric). Returns the sentence and the fabrics where it worsens."""
    worse = [f for f in change if change[f] <= -JAIN_STEP]
    better = [f for f in change if change[f] >= JAIN_STEP]
    names = dc.FABRIC_SHORT
    unchanged = [f for f in change if f not in worse and f not in better]
    same = (
        f"; with the {join(names[f] for f in unchanged)} buffer it moves by less than {JAIN_STEP}" if unchanged else ""
    )
    if worse and not better:
        headline = (
            "In bbrlab, yes — but not in the direction the Waterloo authors suspected: BBRv1 converges worse "
            f"with drops than with PAUSE ({join(names[f] for f in worse)}){same}."
        )
    elif better and not worse:
        headline = (
            "In bbrlab, yes, in the direction the Waterloo authors suspected: BBRv1 converges better with drops "
            f"({join(names[f] for f in better)}){same}."
        )
    elif better and worse:
        headline = "In bbrlab, it depends on the buffer: BBRv1 converges better with one drop-tail buffer and worse with the other."
    else:
        headline = (
            f"In bbrlab, no: BBRv1's convergence moves by less than {JAIN_STEP} in Jain's index between the fabrics."
        )
    return headline, worse


def _lossless_text(jl: dict[tuple[str, str], float], lossless_fair: bool) -> str:
    """Why the lossless (PAUSE) fabric shares the port as it does."""
    L = LOSSLESS
    if lossless_fair:
        return (
            "The congested port pauses every sender's link at once and they resume together, so each sender gets "
            "1/n of the port whatever its algorithm does, as long as it keeps its NIC queue non-empty. BBRv1 "
            "does: its Linux 4.13 window is 2·BDP plus three 64 KB TSO bursts (≈ 146 segments at 1 Gbit/s), "
            "some thirty times the ~6 KB BDP of a 50 µs path, and it paces at ≥ its bandwidth estimate. No "
            "packet is lost (asserted), and the excess window waits in the host NICs."
        )
    return (
        f"No packet is lost (asserted), yet the flows do not all share the port: CUBIC "
        f"{_word(jl[(L, 'cubic')])}, BBRv1 {_word(jl[(L, dc.BBR)])}."
    )


def _flows_turns(lv: pd.DataFrame, fabric: str) -> str:
    starved = _starved(lv, fabric, dc.BBR)
    return (
        f"; {starved} flow-levels of BBRv1 starved (below 5 % of their share)" if starved else "; no BBRv1 flow starved"
    )


def _deep_text(lv: pd.DataFrame, jl: dict[tuple[str, str], float]) -> str:
    """What happens with the 1 MB drop-tail buffer."""
    D = DEEP
    if jl[(D, dc.BBR)] < PARTLY and jl[(D, "cubic")] >= PARTLY:
        return (
            "The same window now has to fit in the switch: five BBRv1 flows keep ≈ 5 × 200 KB in flight, about "
            "the whole buffer, and BBRv1 reduces neither window nor pacing on loss, so the port overflows; flows "
            "that lose their window's tail fall back to RTOs with exponential back-off"
            + _flows_turns(lv, D)
            + f". CUBIC, which cuts its window by 30 % per loss episode, {_word(jl[(D, 'cubic')])}."
        )
    return f"CUBIC {_word(jl[(D, 'cubic')])} and BBRv1 {_word(jl[(D, dc.BBR)])} here" + _flows_turns(lv, D) + "."


def _shallow_text(lv: pd.DataFrame, jl: dict[tuple[str, str], float]) -> str:
    """What happens with the 128 KB drop-tail buffer."""
    S = SHALLOW
    if jl[(S, "cubic")] >= CONVERGED and jl[(S, dc.BBR)] < PARTLY:
        return (
            "CUBIC still converges; BBRv1's flows, each carrying ~200 KB of window into a buffer of "
            "~85 packets, overflow it and take turns through RTOs" + _flows_turns(lv, S) + "."
        )
    if jl[(S, "cubic")] < CONVERGED and jl[(S, dc.BBR)] < CONVERGED:
        return (
            f"With a buffer this shallow neither converges at a 1-s time scale (CUBIC "
            f"{_word(jl[(S, 'cubic')])}, BBRv1 {_word(jl[(S, dc.BBR)])}): five CUBIC flows share ~(128 KB + BDP) "
            "of window, ≈ 18 segments each, and lose whole windows" + _flows_turns(lv, S) + "."
        )
    return f"CUBIC {_word(jl[(S, 'cubic')])} and BBRv1 {_word(jl[(S, dc.BBR)])} here" + _flows_turns(lv, S) + "."


def _fabric_bullets(lv: pd.DataFrame, jl: dict[tuple[str, str], float], ran: list[str], lossless: str) -> str:
    """One bullet per fabric: both algorithms' index and why."""
    L, S, D = LOSSLESS, SHALLOW, DEEP

    def at(fabric: str, cc: str, lo: int, hi: int) -> float:
        d = lv[(lv["fabric"] == fabric) & (lv["cc"] == cc) & (lv["active"] >= lo) & (lv["active"] <= hi)]
        return float(d["jain_per_second"].mean())

    bullets = [
        f"- *Lossless (PAUSE), Waterloo's fabric:* CUBIC {jl[(L, 'cubic')]:.2f}, BBRv1 {jl[(L, dc.BBR)]:.2f}. "
        f"{lossless}"
    ]
    if D in ran:
        bullets.append(
            f"- *Store-and-forward, 1 MB drop-tail:* CUBIC {jl[(D, 'cubic')]:.2f}, BBRv1 {jl[(D, dc.BBR)]:.2f}; with "
            f"3–4 flows BBRv1 {at(D, dc.BBR, 3, N - 1):.2f}, with 5 flows {at(D, dc.BBR, N, N):.2f} (CUBIC "
            f"{at(D, 'cubic', N, N):.2f}). {_deep_text(lv, jl)}"
        )
    if S in ran:
        bullets.append(
            f"- *Store-and-forward, 128 KB drop-tail:* CUBIC {jl[(S, 'cubic')]:.2f}, BBRv1 "
            f"{jl[(S, dc.BBR)]:.2f}. {_shallow_text(lv, jl)}"
        )
    not_run = [f for f in (D, S) if f not in ran]
    if not_run:
        bullets.append(
            f"- *{' and '.join(dc.FABRIC_SHORT[f] for f in not_run)}:* not run at this size (`--full` runs "
            "every fabric)."
        )
    return "\n".join(bullets)


def _trials_text(lv: pd.DataFrame) -> str:
    """How much an index moves between trials (the T values run), if more than one ran."""
    Ts = sorted(lv["T"].unique())
    if len(Ts) > 1:
        per_t = lv[lv["active"] >= 3].groupby(["fabric", "cc", "T"])["jain_per_second"].mean().unstack("T")
        spread = float((per_t.max(axis=1) - per_t.min(axis=1)).max())
        return (
            f"between T = {Ts[0]:g} s and {Ts[-1]:g} s a configuration's index moves by up to {spread:.2f} "
            "(tables below)"
        )
    return f"this run has one T ({Ts[0]:g} s), so it cannot show how much an index moves between runs"


#: What the lossless model leaves out, said where it does not show the Waterloo picture.
_LOSSLESS_CAVEAT = """
Caveat: this fabric's PAUSE is generated per output queue (802.3x, all feeding links at once) with
fair packet-by-packet service of the paused senders. PAUSE by ingress port, as switches account
it, is the `lossless-ingress` fabrics, and the Waterloo DC study's racks and worker placement are
the two `-racks` fabrics (their verdicts: `dc-findings.md`);
unfair arbitration, host NICs that do not honour PAUSE (so that the switch drops after all), or
the Waterloo receiver-side measurement (one thread per connection, 8 Mbit/s quantization) are not
part of these runs; each could make the real lossless cluster behave differently.
"""


def _answer(lv: pd.DataFrame) -> str:
    """The Waterloo study's open question, answered from this run's numbers."""
    L = LOSSLESS
    ran = dc.fabrics_in(lv)  # always the lossless baseline; the drop-tail buffers where the size's plan has them
    jl = {(f, cc): jain3(lv, f, cc) for f in ran for cc in dc.CCS}
    bbr_gap = {f: jl[(f, "cubic")] - jl[(f, dc.BBR)] for f in ran}
    headline, worse = _headline(_drop_effect(lv))
    lossless_fair = jl[(L, "cubic")] >= CONVERGED and jl[(L, dc.BBR)] >= CONVERGED
    names = dc.FABRIC_SHORT
    if lossless_fair:
        pause = "PAUSE does not make BBRv1 converge poorly; it makes every algorithm share the port evenly."
    else:
        pause = f"With PAUSE BBRv1 already {_word(jl[(L, dc.BBR)])} here."
    culprit = (
        f"Drops are what break convergence here: BBRv1's index falls from {jl[(L, dc.BBR)]:.2f} with PAUSE to "
        + join(f"{jl[(f, dc.BBR)]:.2f} ({names[f]})" for f in worse)
        + "."
        if worse and lossless_fair
        else ""
    )
    bullet_list = _fabric_bullets(lv, jl, ran, _lossless_text(jl, lossless_fair))
    gaps = join(
        f"{label} {-bbr_gap[f]:+.2f}" for f, label in ((L, "lossless"), (DEEP, "1 MB"), (SHALLOW, "128 KB")) if f in ran
    )

    picture = [f for f in ran if jl[(f, "cubic")] >= CONVERGED and jl[(f, dc.BBR)] < CONVERGED]
    where = ("on " + join(names[f] for f in picture)) if picture else "on none of the fabrics"
    opposite = (
        "; a PAUSE fabric as modelled produces the opposite (both fair)" if lossless_fair and L not in picture else ""
    )
    trials = _trials_text(lv)
    caveat = "" if L in picture else _LOSSLESS_CAVEAT
    return f"""
**Does BBR's convergence change on store-and-forward switches with drops instead of PAUSE?**
{headline} {pause} {culprit} Mean per-second Jain index
over the levels with ≥ 3 active flows (1 = equal shares at every second):

{bullet_list}

BBRv1 − CUBIC difference in that index: {gaps}. In this model the Waterloo picture of BBR (Figs 10, 11: starving and
alternating flows beside a fair CUBIC) appears {where}{opposite}. Each configuration is a single
trial, as in the Waterloo study; {trials}.
{caveat}"""


@dataclass(frozen=True)
class OurFigure:
    """One of our time-series figures: its file stem, the source's figure it redraws (None: not
    one of the source's), and its alt text."""

    stem: str
    source_no: int | None
    alt: str


def _figure_pairs(figs: list[OurFigure]) -> str:
    """Figs. 9-11 of the source, each beside ours (all fabrics), then our figures it has no twin for."""

    def images(fs: list[OurFigure]) -> str:
        return "\n\n".join(f"![{f.alt}]({f.stem}.png)" for f in fs)

    pairs = []
    for no, sf in SOURCE_FIGURES.items():
        ours = [f for f in figs if f.source_no == no]
        pairs.append(
            beside(sf, images(ours) if ours else "*Not drawn at this size: it has no run with this interval.*")
        )
    rest = [f for f in figs if f.source_no is None]
    if rest:
        pairs.append("Runs the Waterloo DC study has no figure for:\n\n" + images(rest))
    return "\n\n".join(pairs)


def report_sections(
    lv: pd.DataFrame, Ts: tuple[float, ...], pause: int, figs: list[OurFigure], cl: list[Claim]
) -> list[tuple[str, str]]:
    # Jain per number of active flows (rising and falling levels averaged), per run.
    def jain_row(fabric: str, cc: str, T: float, col: str) -> list[str]:
        d = lv[(lv["fabric"] == fabric) & (lv["cc"] == cc) & (lv["T"] == T)]
        return [f"{d[d['active'] == k][col].mean():.2f}" for k in range(1, N + 1)]

    sections = [
        ("Source and setup", __doc__.split("\n", 2)[2] + "\n" + dc.__doc__.split("\n", 3)[3]),
        (
            "The Waterloo study's claims beside ours",
            claims_table(cl, source_header="Waterloo DC study (§4.3)")
            + f"\n\nLossless mode: 0 packets dropped in every run (asserted); {pause:,} PAUSE/XON frames sent in total.",
        ),
        ("The Waterloo study's open question", _answer(lv)),
    ]
    for T in Ts:
        rows_t = [
            [fabric, dc.CC_LABEL[cc]]
            + [
                f"{a} / {b}"
                for a, b in zip(jain_row(fabric, cc, T, "jain_level"), jain_row(fabric, cc, T, "jain_per_second"))
            ]
            for fabric in dc.fabrics_in(lv)
            for cc in dc.CCS
        ]
        sections.append(
            (
                f"Jain's index per number of active flows, T = {T:g} s (level mean / per-second mean)",
                md_table(
                    ["fabric", "algorithm"] + [f"{k} flow{'s' if k > 1 else ''}" for k in range(1, N + 1)], rows_t
                ),
            )
        )
    sections.append(
        (
            "Figures",
            _figure_pairs(figs) + "\n\nPer level: `levels.csv`; the Waterloo study's CSV schema: "
            "`{cubic,bbr}_converge[_long]_<fabric>.csv`.",
        )
    )
    return sections


__all__ = ["PLANS", "SOURCE_FIGURES", "OurFigure", "Plan", "claims", "report_sections", "run"]
