"""dc-convergence (seed 000 §4.3, Figures 9–11, and its open question).

The seed measured fairness with 5 flows from separate senders into one receiver: flow k starts at
k·T and sends for 5·T, so 1, 2, …, 5 and then 4, …, 1 flows are active, each level lasting T
(``aggregator converge 5 T 1``: T·(2n−1) s, per-flow throughput every second). With T = 30 s CUBIC
converged well and BBR converged poorly, some flows starving (Figs 9, 10); with T = 60 s BBR's
flows alternated between full link speed and nothing (Fig 11). The authors suspected the lossless,
cut-through fabric and asked for a store-and-forward comparison with drops instead of PAUSE.

Here: the same schedule on both fabrics, per-flow goodput sampled every 1 s at the receiver,
Jain's fairness index per level — over the level's mean per-flow throughput (did the flows share
the level?) and as the mean of the per-second index (were they sharing at each moment? flows
taking turns at full speed score high on the first and low on the second). The first 2 s of each
level are left out of both (convergence time). The per-second samples are also written in the
seed's CSV schema (`num_flows,socket_fd,throughput,time`: flows started so far, fd 5 + k,
Mbit/s, µs since the start), without the seed's 8 Mbit/s quantization.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..results import jain_index  # noqa: E402
from . import dc_common as dc  # noqa: E402
from .catalog import StudyContext  # noqa: E402
from .report import md_table, write_report  # noqa: E402

N = 5
SETTLE_S = 2.0


def _scenario(fabric: str, cc: str, T: float) -> dict[str, Any]:
    return {
        "name": f"dc-converge-{fabric}-{cc}-T{T:g}",
        "duration": f"{T * (2 * N - 1):g}s",
        "seed": 7,
        "sample_interval": "1s",
        "topology": dc.topology(fabric, N),
        "flows": [{"cc": cc, "start": f"{k * T:g}s", "stop": f"{k * T + N * T:g}s"} for k in range(N)],
        "tags": {"fabric": fabric, "cc": cc, "T": T},
    }


def _levels(ts: pd.DataFrame, T: float) -> list[dict[str, Any]]:
    out = []
    for lvl in range(2 * N - 1):
        lo, hi = lvl * T + SETTLE_S, (lvl + 1) * T
        active = [k for k in range(N) if k * T <= lvl * T < k * T + N * T]
        d = ts[(ts["t_s"] > lo) & (ts["t_s"] <= hi + 1e-9) & ts["flow"].isin(active)]
        per_flow = d.groupby("flow")["goodput_bps"].mean().reindex(active, fill_value=0.0)
        per_sec = [jain_index(g["goodput_bps"].to_numpy()) for _, g in d.groupby("t_s")]
        out.append({"level": lvl, "active": len(active), "jain_level": jain_index(per_flow.to_numpy()),
                    "jain_per_second": float(np.nanmean(per_sec)) if per_sec else math.nan,
                    "total_bps": float(per_flow.sum()), "min_share": float(per_flow.min() / max(per_flow.sum(), 1.0)),
                    "starved_flows": int((per_flow < 0.05 * dc.CEILING_BPS / len(active)).sum())})
    return out


def _series_plot(ts: pd.DataFrame, title: str, path: Path, T: float) -> None:
    fig, ax = plt.subplots(figsize=(9, 3.6))
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
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _seed_csv(ts: pd.DataFrame, T: float, path: Path) -> None:
    rows = []
    for t, g in ts.groupby("t_s"):
        started = [k for k in range(N) if k * T < t]
        for k in started:
            v = g[g["flow"] == k]["goodput_bps"]
            rows.append((len(started), 5 + k, round(float(v.iloc[0]) / 1e6 if len(v) else 0.0, 3), int(round(t * 1e6))))
    pd.DataFrame(rows, columns=["num_flows", "socket_fd", "throughput", "time"]).to_csv(path, index=False)


def run(ctx: StudyContext) -> Path:
    quick = ctx.quick
    Ts = [10.0] if quick else [30.0, 60.0]
    fabrics = dc.FABRICS + ["store-and-forward-deep"]
    scen = [_scenario(f, cc, T) for T in Ts for f in fabrics for cc in dc.CCS]
    rows = ctx.run_many("convergence", scen, keep_timeseries=True)
    pause = dc.assert_lossless(rows, "dc-convergence")
    levels = []
    figs = []
    fig_no = {("cubic", Ts[0]): 9, ("bbr1", Ts[0]): 10, ("bbr1", Ts[-1]): 11} if len(Ts) > 1 else {("cubic", Ts[0]): 9, ("bbr1", Ts[0]): 10}
    for tags, ts, _q in ctx.series["convergence"]:
        fabric, cc, T = tags["fabric"], tags["cc"], tags["T"]
        for lv in _levels(ts, T):
            levels.append({"fabric": fabric, "cc": cc, "T": T, **lv})
        stem = f"series-{fabric}-{'bbr' if cc == 'bbr1' else 'cubic'}-T{T:g}"
        no = fig_no.get((cc, T))
        title = (f"{'Fig ' + str(no) + ': ' if no else ''}{dc.CC_LABEL[cc]} convergence, {T:g} s intervals — "
                 f"{dc.FABRIC_LABEL[fabric]}")
        _series_plot(ts, title, ctx.out_dir / f"{stem}.png", T)
        _seed_csv(ts, T, ctx.out_dir / f"{'bbr' if cc == 'bbr1' else 'cubic'}_converge{'_long' if T == Ts[-1] and len(Ts) > 1 else ''}_{fabric}.csv")
        figs.append((fabric, cc, T, stem))
    lv = pd.DataFrame(levels)
    lv.to_csv(ctx.out_dir / "levels.csv", index=False)

    # Jain per number of active flows (rising and falling levels averaged), per run.
    def jain_row(fabric: str, cc: str, T: float, col: str) -> list[str]:
        d = lv[(lv["fabric"] == fabric) & (lv["cc"] == cc) & (lv["T"] == T)]
        return [f"{d[d['active'] == k][col].mean():.2f}" for k in range(1, N + 1)]

    tables = []
    for T in Ts:
        rows_t = []
        for fabric in fabrics:
            for cc in dc.CCS:
                rows_t.append([fabric, dc.CC_LABEL[cc]] + [f"{a} / {b}" for a, b in zip(jain_row(fabric, cc, T, "jain_level"),
                                                                                        jain_row(fabric, cc, T, "jain_per_second"))])
        tables.append((T, rows_t))

    def jain3(fabric: str, cc: str, col: str) -> float:
        d = lv[(lv["fabric"] == fabric) & (lv["cc"] == cc) & (lv["active"] >= 3)]
        return float(d[col].mean())

    def starved(fabric: str, cc: str) -> int:
        return int(lv[(lv["fabric"] == fabric) & (lv["cc"] == cc)]["starved_flows"].sum())

    L, S, D = "lossless", "store-and-forward", "store-and-forward-deep"

    def verdict(fabric: str, cc: str) -> str:
        j = jain3(fabric, cc, "jain_per_second")
        word = "converges" if j >= 0.9 else ("converges partly" if j >= 0.7 else "converges poorly")
        return (f"{word}: Jain (≥ 3 flows) {jain3(fabric, cc, 'jain_level'):.2f} per level / {j:.2f} per second; "
                f"starved flow-levels {starved(fabric, cc)}")

    claims = [["CUBIC converges well (Fig 9)", "yes"] + [verdict(f, "cubic") for f in fabrics],
              ["BBR converges poorly with ≥ 3 flows, some starve (Figs 10, 11)", "yes"] + [verdict(f, "bbr1") for f in fabrics]]
    jl = {(f, cc): jain3(f, cc, "jain_per_second") for f in fabrics for cc in dc.CCS}
    bbr_gap = {f: jl[(f, "cubic")] - jl[(f, "bbr1")] for f in fabrics}
    if jl[(S, "cubic")] >= 0.9:
        shallow = ("CUBIC still converges; BBRv1's flows, each carrying ~200 KB of window into a buffer of "
                   "~85 packets, overflow it continuously and take turns through RTOs.")
    else:
        shallow = ("With a buffer this shallow both algorithms' flows lose whole windows and take RTOs (five CUBIC "
                   "flows share ~(128 KB + BDP) of window, ≈ 18 segments each), so in this run neither converges "
                   "at a 1-s time scale; flows take turns, sitting at zero for whole seconds.")
    def at5(fabric: str, cc: str) -> float:
        d = lv[(lv["fabric"] == fabric) & (lv["cc"] == cc) & (lv["active"] == N)]
        return float(d["jain_per_second"].mean())

    def upto4(fabric: str, cc: str) -> float:
        d = lv[(lv["fabric"] == fabric) & (lv["cc"] == cc) & (lv["active"] >= 3) & (lv["active"] < N)]
        return float(d["jain_per_second"].mean())

    answer = f"""
**Does BBR's convergence change on store-and-forward switches with drops instead of PAUSE?**
In bbrlab, yes — but not in the direction the seed suspected. PAUSE does not make BBRv1 converge
poorly; it makes every algorithm share the port evenly. Drops are what break convergence, and
they break BBRv1's once its flows' minimum in-flight exceeds the buffer. Mean per-second Jain index
over the levels with ≥ 3 active flows (1 = equal shares at every second):

- *Lossless (PAUSE), the seed's fabric:* CUBIC {jl[(L, 'cubic')]:.2f}, BBRv1 {jl[(L, 'bbr1')]:.2f}. The
  congested port pauses every sender's link at once and they resume together, so each sender gets
  1/n of the port whatever its algorithm does, as long as it keeps its NIC queue non-empty. BBRv1
  does: its Linux 4.13 window is 2·BDP plus three 64 KB TSO bursts (≈ 146 segments at 1 Gbit/s),
  some thirty times the ~6 KB BDP of a 50 µs path, and it paces at ≥ its bandwidth estimate. No
  packet is lost, no flow ever times out, and the excess window waits in the host NICs.
- *Store-and-forward, 1 MB drop-tail:* CUBIC {jl[(D, 'cubic')]:.2f}, BBRv1 {jl[(D, 'bbr1')]:.2f}; with 3–4
  flows BBRv1 {upto4(D, 'bbr1'):.2f}, with 5 flows {at5(D, 'bbr1'):.2f} (CUBIC {at5(D, 'cubic'):.2f}). The same
  window now has to fit in the switch: five BBRv1 flows keep ≈ 5 × 200 KB in flight, about the
  whole buffer, and BBRv1 reduces neither window nor pacing on loss, so the port overflows
  persistently; flows that lose their window's tail fall back to RTOs with exponential back-off
  and sit at zero while others run at full speed — the kind of alternation the seed shows in
  Fig 11. CUBIC cuts its window by 30 % per loss episode and shares the buffer.
- *Store-and-forward, 128 KB drop-tail:* CUBIC {jl[(S, 'cubic')]:.2f}, BBRv1 {jl[(S, 'bbr1')]:.2f}. {shallow}

BBRv1 − CUBIC difference in that index: lossless {-bbr_gap[L]:+.2f}, 1 MB {-bbr_gap[D]:+.2f},
128 KB {-bbr_gap[S]:+.2f}. In this model the seed's picture of BBR (Figs 10, 11: starving and
alternating flows beside a fair CUBIC) needs drops, and a buffer that holds CUBIC's flows but not
BBRv1's in-flight floor; a PAUSE fabric as modelled produces the opposite (both fair). Each
configuration is a single trial, as in the seed; the drop-tail runs are chaotic, so their indices
move by ±0.1 or more between seeds and between T = 30 s and 60 s (tables below).

Caveat: the model's PAUSE is generated per output queue (802.3x, all feeding links at once) with
fair packet-by-packet service of the paused senders. A switch with ingress-port buffer accounting
or unfair arbitration, host NICs that do not honour PAUSE (so that the switch drops after all),
or the seed's receiver-side
measurement (one thread per connection, 8 Mbit/s quantization) are not modelled; each could make
the real lossless cluster behave like the drop-tail fabrics here.
"""
    sections = [
        ("Source and setup", __doc__.split("\n", 2)[2] + "\n" + dc.__doc__.split("\n", 3)[3]),
        ("The seed's claims beside ours",
         md_table(["claim (seed 000 §4.3)", "seed"] + [f"bbrlab, {dc.FABRIC_LABEL[f]}" for f in fabrics], claims)
         + f"\n\nLossless mode: 0 packets dropped in every run (asserted); {pause:,} PAUSE/XON frames sent in total."),
        ("The seed's open question", answer),
    ]
    for T, rows_t in tables:
        sections.append((f"Jain's index per number of active flows, T = {T:g} s (level mean / per-second mean)",
                         md_table(["fabric", "algorithm"] + [f"{k} flow{'s' if k > 1 else ''}" for k in range(1, N + 1)], rows_t)))
    sections.append(("Figures", "\n\n".join(f"![{stem}]({stem}.png)" for _, _, _, stem in figs)
                     + "\n\nPer level: `levels.csv`; the seed's CSV schema: `{cubic,bbr}_converge[_long]_<fabric>.csv`."))
    packets = int(rows.groupby("run")["data_packets_delivered_run"].first().sum())
    return write_report(ctx.out_dir / "REPORT.md", "dc-convergence: fairness of 5 staggered flows (seed 000, Figs 9–11)",
                        sections, quick=quick, wall_s=ctx.elapsed_s, packets=packets)


__all__ = ["run"]
