"""esnet-100g (seed 003): CUBIC vs BBRv3 on ESnet's 100G and 4×10G paths, and packet spacing.

The seed (E. Dart and B. Tierney, ESnet, "BBRv3 Preliminary Results", LHCONE #52, April 2024)
ran iperf3-style tests from an ESnet DTN (100G NIC) with 1 and 8 streams, unpaced and with a
per-stream pacing cap (fq maxrate / SO_MAX_PACING_RATE), CUBIC vs BBRv3, reporting the mean
throughput, its standard deviation over n runs and the retransmissions:
  * lbl-dev-dtn1 → cern773 (100G, RTT 150 ms), caps of 12 Gbit/s per stream;
  * lbl-dev-dtn1 → pygrid-sonar2.lancs.ac.uk (4×10G, RTT 147 ms), caps of 11 Gbit/s, where
    "low throughput [is] due to receive host TCP window limited";
and a histogram of packet gaps from `tcpdump -j adapter_unsynced` (NIC hardware timestamps) on
the sender, CUBIC vs BBRv3, unpaced vs paced at 10 Gbit/s.

How bbrlab models it (each choice is ours; the seed does not state it):
  * BBRv3 is `bbr3_linux`: Google's Linux BBRv3 (the kernel the seed's hosts ran), not the IETF
    draft's constants.
  * 100G path: a 100 Gbit/s bottleneck, 150 ms base RTT. The simulator's queues only form where
    a faster link feeds a slower one, so the streams' shared first hop (`sender = 0`: one DTN)
    runs at 400 Gbit/s — ESnet's backbone rate, which carries the host's TSO bursts to the 100G
    port where they queue. The bottleneck buffer is unknown: we run a shallow-ish router buffer
    of 5 ms at line rate (62.5 MB, a shallow-buffer switch's share per port); `Plan.buffers_ms`
    can add a deep one (50 ms, 625 MB, a deep-buffer router line card) — the seed's conclusion
    ("only minor improvements … on clean paths with large buffered devices") is about that axis.
  * 4×10G path: a LAG of four 10G members hashes each TCP flow onto one member, so one stream is
    limited to 10 Gbit/s; eight streams spread over the four members. We model 1 stream as a
    10 Gbit/s bottleneck and 8 streams as the 40 Gbit/s aggregate (hash collisions are not
    modelled), 147 ms, buffer 5 ms of line rate, the DTN's 100G NIC as the first hop. The
    receive-window limit is `rcvbuf = 103 MB`: the window implied by the seed's own 1-stream BBR
    rate (5.61 Gbit/s × 147 ms / 8); the seed's 8-stream aggregate (20 Gbit/s, i.e. 2.5 per
    stream) shows the receiver host limited further (CPU, memory pressure), which we do not model.
  * Residual path loss: the seed's single-stream CUBIC rates, inverted through CUBIC's
    loss-response function (RFC 9438 §5.1, W = 1.054·(RTT/p)^¾ … in packets), imply random loss
    of order 1e-8 on the 100G path (19.5 Gbit/s) and 1.5e-7 on the 4×10G path (2.6 Gbit/s); we
    give the paths those Bernoulli loss rates. It also makes repetitions differ (with the
    seed-drawn start offsets of 0–10 ms per stream and BBR's random phase), which gives the
    seed's "stddev (nvals)" column: each configuration runs with several seeds.
  * Runs last 10 s (the performance target's scenario) in the full study; the seed's test length
    is not given (iperf3 tests on perfSONAR hosts commonly run 10–60 s). At 150 ms a 100G flow
    needs ≈ 2.5 s of startup alone, so these are not steady-state means — neither are the seed's.
  * What the simulator lacks and the seed's hosts had: per-stream CPU limits (a single Linux TCP
    stream rarely exceeds ~25–40 Gbit/s; the seed's 1-stream rates of 20–23 Gbit/s are probably
    that), LRO/GRO at the receiver, and the NIC's TSO hardware. Our absolute throughputs on the
    100G path are therefore upper bounds; the comparison between algorithms is the point.
"""

from __future__ import annotations

import math
import random
import resource
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .catalog import StudyContext  # noqa: E402
from .report import MSS, WIRE, md_table, write_report  # noqa: E402

BBR = "bbr3_linux"
CCS = ("bbr3_linux", "cubic")
CC_SEED = {"bbr3_linux": "bbr", "cubic": "cubic"}

#: The seed's tables: (streams, cc, pacing Gbit/s) -> (tput Gbit/s, stddev, n, retransmits).
SEED_100G = {
    (1, "bbr3_linux", 0.0): (22.90, 3.58, 10, 568340),
    (1, "cubic", 0.0): (19.50, 4.04, 10, 68051),
    (8, "bbr3_linux", 0.0): (47.96, 2.43, 10, 300157),
    (8, "cubic", 0.0): (30.64, 7.35, 10, 49778),
    (8, "bbr3_linux", 12.0): (50.58, 2.21, 10, 302178),
    (8, "cubic", 12.0): (44.08, 3.58, 10, 61393),
}
SEED_4X10G = {
    (1, "bbr3_linux", 0.0): (5.61, 0.84, 6, 19721),
    (1, "cubic", 0.0): (2.60, 1.18, 6, 4966),
    (8, "bbr3_linux", 0.0): (20.26, 0.90, 5, 525351),
    (8, "cubic", 0.0): (8.34, 0.73, 5, 112758),
    (8, "bbr3_linux", 11.0): (18.19, 1.32, 5, 685559),
    (8, "cubic", 11.0): (8.46, 2.82, 6, 89142),
}
LOSS_100G = 1e-8
LOSS_4X10G = 1.5e-7
RCVBUF_4X10G = "103MB"


@dataclass(frozen=True)
class Plan:
    """Sizes of the study (tests shrink them with :func:`tiny_plan`)."""

    seeds: int = 3
    dur_s: float = 10
    #: bottleneck buffers of the 100G path, in ms of line rate (add 50.0 for a deep-buffer router;
    #: not in the default full study: it doubles its ~40 core-minutes)
    buffers_ms: tuple[float, ...] = (5.0,)
    lag_dur_s: float = 10
    gap_dur_s: float = 10
    #: scale all rates by this (tests: 0.01 turns 100G into 1G)
    rate_scale: float = 1.0


def plan(quick: bool) -> Plan:
    if not quick:
        return Plan()
    # Quick: every rate (links, caps, NIC) at 1/5 — a 20G path — so a run costs a fifth.
    return Plan(seeds=2, dur_s=5, buffers_ms=(5.0,), lag_dur_s=5, gap_dur_s=3, rate_scale=0.2)


def tiny_plan() -> Plan:
    """A seconds-long configuration for tests: 1 % of the rates, one seed, short runs."""
    return Plan(seeds=2, dur_s=2, buffers_ms=(5.0,), lag_dur_s=2, gap_dur_s=1, rate_scale=0.01)


def _rate(gbps: float, p: Plan) -> str:
    return f"{gbps * p.rate_scale * 1e9:.0f}bps"


def _buffer_bytes(gbps: float, ms: float, p: Plan) -> str:
    return f"{int(gbps * p.rate_scale * 1e9 / 8 * ms / 1e3)}B"


def _scenario(*, name: str, p: Plan, rate_gbps: float, access_gbps: float, rtt_ms: float, buffer_ms: float,
              loss: float, cc: str, streams: int, cap_gbps: float, seed: int, dur_s: float,
              rcvbuf: str | None = None, gaps: bool = False, tags: dict[str, Any]) -> dict[str, Any]:
    rnd = random.Random(seed * 1_000_003 + streams)
    flows = []
    for _ in range(streams):
        f: dict[str, Any] = {"cc": cc, "sender": 0, "start": f"{rnd.uniform(0, 10):.4f}ms"}
        if cap_gbps:
            f["max_pacing_rate"] = _rate(cap_gbps, p)
        if rcvbuf:
            f["rcvbuf"] = rcvbuf
        if gaps:
            f["gap_histogram"] = True
        flows.append(f)
    return {
        "name": name,
        "duration": f"{dur_s}s",
        "seed": seed,
        "sample_interval": "100ms",
        "topology": {"kind": "dumbbell", "access_rate": _rate(access_gbps, p),
                     "bottleneck": {"rate": _rate(rate_gbps, p), "rtt": f"{rtt_ms}ms",
                                    "buffer": _buffer_bytes(rate_gbps, buffer_ms, p), "loss": loss}},
        "flows": flows,
        "tags": dict(tags, cc_name=cc, streams=streams, cap_gbps=cap_gbps, seed=seed,
                     link_gbps=rate_gbps * p.rate_scale),
    }


CONFIGS = [(1, 0.0), (8, 0.0), (8, None)]  # (streams, cap); None = the path's cap (12 or 11 Gbit/s)


def _per_run(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per run: aggregate throughput and retransmits of its streams."""
    keys = [c for c in ("path", "buffer_ms", "cc_name", "streams", "cap_gbps", "seed", "link_gbps") if c in rows]
    g = rows.groupby(["run"] + keys, dropna=False)
    out = g.agg(tput_bps=("goodput_bps", "sum"), retransmits=("retransmits", "sum"),
                sent=("data_packets_sent", "sum"), wall_s=("wall_s", "first")).reset_index()
    return out


def _stats(runs: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("path", "buffer_ms", "cc_name", "streams", "cap_gbps", "link_gbps") if c in runs]
    g = runs.groupby(keys, dropna=False)
    s = g.agg(tput_mean=("tput_bps", "mean"), tput_std=("tput_bps", "std"), n=("tput_bps", "size"),
              retr_mean=("retransmits", "mean"), sent_mean=("sent", "mean"), wall_max=("wall_s", "max")).reset_index()
    s["tput_std"] = s["tput_std"].fillna(0.0)
    return s


def _row(s: pd.DataFrame, **kv: Any) -> pd.Series | None:
    d = s
    for k, v in kv.items():
        d = d[d[k] == v]
    return d.iloc[0] if len(d) else None


def _seed_table(s: pd.DataFrame, seed: dict, cap: float, **sel: Any) -> str:
    rows = []
    for (streams, cc, pace), (t, sd, n, rx) in seed.items():
        r = _row(s, cc_name=cc, streams=streams, cap_gbps=pace, **sel)
        ours = ("–", "–", "–") if r is None else (f"{r['tput_mean'] / 1e9:.2f}", f"{r['tput_std'] / 1e9:.2f} ({int(r['n'])})",
                                                   f"{r['retr_mean']:,.0f}")
        rows.append([streams, f"{CC_SEED[cc]} ({cc})", f"{pace:.1f}", f"{t:.2f}", ours[0], f"{sd:.2f} ({n})", ours[1],
                     f"{rx:,}", ours[2]])
    return md_table(["streams", "cc (bbrlab)", "pacing (Gbit/s)", "seed tput (Gbit/s)", "bbrlab tput", "seed stddev (n)",
                     "bbrlab stddev (n)", "seed RXMTs", "bbrlab RXMTs"], rows)


def _effects(s: pd.DataFrame, cap: float, **sel: Any) -> str:
    def r(cc: str, streams: int, c: float) -> pd.Series | None:
        return _row(s, cc_name=cc, streams=streams, cap_gbps=c, **sel)

    lines = []
    for streams, c in ((1, 0.0), (8, 0.0), (8, cap)):
        b, cu = r(BBR, streams, c), r("cubic", streams, c)
        if b is None or cu is None:
            continue
        ratio = b["retr_mean"] / cu["retr_mean"] if cu["retr_mean"] > 0 else math.inf
        lines.append([f"{streams} stream(s), pacing {c:g}",
                      f"{'yes' if b['tput_mean'] > cu['tput_mean'] else 'no'} ({b['tput_mean'] / 1e9:.1f} vs {cu['tput_mean'] / 1e9:.1f})",
                      f"{b['tput_std'] / 1e9:.2f} vs {cu['tput_std'] / 1e9:.2f}",
                      f"{ratio:.1f}×"])
    cu0, cuc = r("cubic", 8, 0.0), r("cubic", 8, cap)
    helps = "–"
    if cu0 is not None and cuc is not None:
        helps = (f"8-stream CUBIC: {cu0['tput_mean'] / 1e9:.1f} Gbit/s unpaced → {cuc['tput_mean'] / 1e9:.1f} Gbit/s with "
                 f"the {cap:g} Gbit/s cap ({'helps' if cuc['tput_mean'] > cu0['tput_mean'] else 'does not help'}; seed: "
                 f"{'30.6 → 44.1' if cap == 12 else '8.3 → 8.5'}).")
    return md_table(["configuration", "BBR ahead? (Gbit/s)", "stddev BBR vs CUBIC (Gbit/s)", "retransmits BBR / CUBIC"],
                    lines) + "\n\n" + helps


def _bar_figure(s: pd.DataFrame, seed: dict, path: Path, title: str, **sel: Any) -> None:
    keys = list(seed)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
    x = np.arange(len(keys))
    ours = [(_row(s, cc_name=cc, streams=st, cap_gbps=pc, **sel)) for st, cc, pc in keys]
    a1.bar(x - 0.2, [seed[k][0] for k in keys], 0.4, yerr=[seed[k][1] for k in keys], label="seed 003", color="gray")
    a1.bar(x + 0.2, [(o["tput_mean"] / 1e9 if o is not None else np.nan) for o in ours], 0.4,
           yerr=[(o["tput_std"] / 1e9 if o is not None else 0) for o in ours], label="bbrlab", color="tab:blue")
    a2.bar(x - 0.2, [seed[k][3] for k in keys], 0.4, label="seed 003", color="gray")
    a2.bar(x + 0.2, [(o["retr_mean"] if o is not None else np.nan) for o in ours], 0.4, label="bbrlab", color="tab:blue")
    labels = [f"{st}×{CC_SEED[cc]}\n{'pace ' + format(pc, 'g') if pc else 'unpaced'}" for st, cc, pc in keys]
    for ax in (a1, a2):
        ax.set_xticks(x, labels, fontsize=8)
        ax.legend(fontsize=8)
    a1.set_ylabel("throughput (Gbit/s)")
    a2.set_ylabel("retransmitted segments")
    a2.set_yscale("log")
    fig.suptitle(title)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _gap_figure(hists: list[tuple[dict[str, Any], pd.DataFrame]], path: Path, title: str) -> None:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for tags, g in hists:
        d = g.groupby(["lo_ns", "hi_ns"], as_index=False)["count"].sum().sort_values("lo_ns")
        tot = d["count"].sum()
        if tot == 0:
            continue
        d = d[(d["lo_ns"] > 0) & np.isfinite(d["hi_ns"])]
        centers = np.sqrt(d["lo_ns"] * d["hi_ns"])
        style = "-" if tags["cc_name"] == BBR else "--"
        lab = f"{CC_SEED[tags['cc_name']]} ({tags['cc_name']}), {'paced ' + format(tags['cap_gbps'], 'g') + 'G' if tags['cap_gbps'] else 'unpaced'}"
        ax.step(centers / 1e3, d["count"] / tot, where="mid", ls=style, label=lab)
    ax.set_xscale("log")
    ax.set_xlabel("gap between consecutive data packets leaving the sender NIC (µs)")
    ax.set_ylabel("fraction of gaps")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _gap_summary(hists: list[tuple[dict[str, Any], pd.DataFrame]], nic_gbps: float) -> str:
    """Per run: median gap, fraction of back-to-back gaps (≤ 1.5 × one packet at NIC rate), p99."""
    wire_ns = WIRE * 8 / (nic_gbps * 1e9) * 1e9
    rows = []
    for tags, g in hists:
        d = g.groupby(["lo_ns", "hi_ns"], as_index=False)["count"].sum().sort_values("lo_ns")
        c = d["count"].to_numpy(dtype=float)
        tot = c.sum()
        if tot == 0:
            continue
        cum = np.cumsum(c) / tot
        hi = d["hi_ns"].to_numpy()
        med = hi[np.searchsorted(cum, 0.5)]
        p99 = hi[np.searchsorted(cum, 0.99)]
        b2b = c[hi <= 1.5 * wire_ns * 10 ** 0.1].sum() / tot
        rows.append([f"{CC_SEED[tags['cc_name']]} ({tags['cc_name']})",
                     f"paced {tags['cap_gbps']:g} Gbit/s" if tags["cap_gbps"] else "unpaced",
                     f"{int(tot):,}", f"{b2b * 100:.1f} %", f"≤ {med / 1e3:.3g} µs", f"≤ {p99 / 1e3:.3g} µs"])
    return md_table(["cc", "pacing", "gaps", f"back-to-back (≈{wire_ns:.0f} ns at the NIC)", "median gap",
                     "99th pct gap"], rows)


def run(ctx: StudyContext, plan_: Plan | None = None) -> Path:
    p = plan_ or plan(ctx.quick)
    out = ctx.out_dir
    seeds = list(range(1, p.seeds + 1))

    # Part A: the 100G path.
    a_sc = []
    for buf in p.buffers_ms:
        for streams, cap in CONFIGS:
            cap = 12.0 if cap is None else cap
            for cc in CCS:
                for sd in seeds:
                    a_sc.append(_scenario(name="esnet-100g", p=p, rate_gbps=100, access_gbps=400, rtt_ms=150,
                                          buffer_ms=buf, loss=LOSS_100G, cc=cc, streams=streams, cap_gbps=cap, seed=sd,
                                          dur_s=p.dur_s, tags={"path": "100G", "buffer_ms": buf}))
    a_rows = ctx.run_many("100g", a_sc)
    a_rows.to_csv(out / "path-100g-flows.csv", index=False)
    a_runs = _per_run(a_rows)
    a_runs.to_csv(out / "path-100g-runs.csv", index=False)
    a = _stats(a_runs)

    # Part B: the 4×10G LAG path (1 stream: one 10G member; 8 streams: the 40G aggregate).
    b_sc = []
    for streams, cap in CONFIGS:
        cap = 11.0 if cap is None else cap
        rate = 10 if streams == 1 else 40
        for cc in CCS:
            for sd in seeds:
                b_sc.append(_scenario(name="esnet-4x10g", p=p, rate_gbps=rate, access_gbps=100, rtt_ms=147, buffer_ms=5.0,
                                      loss=LOSS_4X10G, cc=cc, streams=streams, cap_gbps=cap, seed=sd, dur_s=p.lag_dur_s,
                                      rcvbuf=RCVBUF_4X10G, tags={"path": "4x10G"}))
    b_rows = ctx.run_many("4x10g", b_sc)
    b_rows.to_csv(out / "path-4x10g-flows.csv", index=False)
    b = _stats(_per_run(b_rows))

    # Part C: packet gaps at the sender NIC (1 stream, the 4×10G path's member, 100G NIC), paced at 10G.
    from ..runner import run as run_scenario  # the gaps table is not in run_many's rows
    from ..scenario import parse_scenario

    hists = []
    c_sc = [_scenario(name="esnet-gaps", p=p, rate_gbps=10, access_gbps=100, rtt_ms=147, buffer_ms=5.0, loss=LOSS_4X10G,
                      cc=cc, streams=1, cap_gbps=cap, seed=1, dur_s=p.gap_dur_s, rcvbuf=RCVBUF_4X10G, gaps=True,
                      tags={"path": "gaps"}) for cc in CCS for cap in (0.0, 10.0)]
    for raw in c_sc:
        raw = dict(raw)
        tags = raw.pop("tags")
        res = run_scenario(parse_scenario(raw, default_name=raw["name"]))
        g = res.gaps.copy()
        g["cc"] = tags["cc_name"]
        g["pacing_gbps"] = tags["cap_gbps"]
        hists.append((tags, g))
    pd.concat([g for _, g in hists]).to_csv(out / "gaps.csv", index=False)
    _gap_figure(hists, out / "packet-gaps.png",
                f"packet spacing at the send host's NIC ({100 * p.rate_scale:g}G NIC, {10 * p.rate_scale:g}G path, 147 ms)")

    bbr_h = [g["count"].to_numpy() for t, g in hists if t["cc_name"] == BBR]
    same_bbr = len(bbr_h) == 2 and bool((bbr_h[0] == bbr_h[1]).all())
    peak_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    # ---- figures and report
    for buf in p.buffers_ms:
        _bar_figure(a, SEED_100G, out / f"path-100g-buffer{buf:g}ms.png",
                    f"100G, 150 ms, buffer {buf:g} ms of line rate: seed 003 vs bbrlab (mean ± stddev)", buffer_ms=buf)
    _bar_figure(b, SEED_4X10G, out / "path-4x10g.png", "4×10G LAG, 147 ms, rcvbuf 103 MB: seed 003 vs bbrlab")

    sections = [("Source and setup", __doc__.split("\n", 2)[2])]
    if p.rate_scale != 1:
        sections.append(("Scaled rates", f"This configuration runs every rate (links, pacing caps, NICs) at "
                         f"{p.rate_scale:g}× the seed's: throughputs below are in Gbit/s of the scaled paths (the "
                         f"100G path is {100 * p.rate_scale:g}G), so compare ratios and orderings with the seed, not "
                         "absolute rates. The full study runs the seed's rates."))
    for buf in p.buffers_ms:
        sel = {"buffer_ms": buf}
        sections.append((
            f"100G path, 150 ms, buffer {buf:g} ms of line rate ({100 * p.rate_scale * buf / 8:g} MB)",
            _seed_table(a, SEED_100G, 12.0, **sel) + "\n\nThe seed's effects, checked on our numbers:\n\n" +
            _effects(a, 12.0, **sel) + f"\n\n![100G](path-100g-buffer{buf:g}ms.png)"))
    sections.append(("4×10G LAG path, 147 ms, receive window 103 MB",
                     _seed_table(b, SEED_4X10G, 11.0) + "\n\n" + _effects(b, 11.0) +
                     "\n\nThe receive window caps one stream at 103 MB / 147 ms ≈ 5.6 Gbit/s of goodput; with 8 streams "
                     "the cap is 8× that, above the 40G aggregate, so the LAG limits instead — the seed's 8-stream "
                     "aggregate (20 Gbit/s) was limited by its receiving host beyond the window, which we do not model."
                     "\n\n![4x10G](path-4x10g.png)"))
    sections.append((
        "Packet spacing at the send host (seed: \"Histogram of Packet Spacing from tcpdump on Send Host\")",
        "One stream on the 4×10G path's member (10 Gbit/s), the DTN's 100G NIC, unpaced and paced at 10 Gbit/s "
        "(the seed: \"pacing for these tests 10G\"). The gap is between consecutive data packets of the flow finishing "
        "serialization on the NIC, as a hardware transmit timestamp records it (the new `gap_histogram` flow field; "
        "`gaps` table, docs/core-api.md). TSO bursts leave back to back at the NIC's line rate; what differs between "
        "the algorithms is how long the bursts are and how long the pauses between them.\n\n" +
        _gap_summary(hists, 100 * p.rate_scale) +
        ("\n\nBBR's paced and unpaced histograms are identical: the 10 Gbit/s cap never binds, because BBR already "
         "paces itself below it (its bandwidth estimate is the window-limited rate) — the seed's \"BBR has pacing "
         "built in\"." if same_bbr else "") +
        "\n\nThe seed's notes: \"BBR unpaced is similar to CUBIC paced\"; \"BBR packet gaps are larger than CUBIC on the "
        "send host\".\n\n![gaps](packet-gaps.png)"))
    big = a[(a["streams"] == 8)]
    perf = md_table(["configuration", "slowest run wall (s)"],
                    [[f"buffer {r['buffer_ms']:g} ms, 8×{r['cc_name']}, cap {r['cap_gbps']:g}", f"{r['wall_max']:.1f}"]
                     for _, r in big.iterrows()])
    sections.append(("Simulator cost of the 100G runs",
                     f"Simulated {p.dur_s:g} s of {100 * p.rate_scale:g} Gbit/s × 150 ms with 8 streams, one core per run "
                     f"(a busy 2-core machine):\n\n{perf}\n\nPeak resident memory of a worker process: {peak_rss_mb:,.0f} MB."))
    packets = int(sum(x["data_packets_delivered_run"].groupby(x["run"]).first().sum() for x in (a_rows, b_rows)))
    return write_report(out / "REPORT.md", "esnet-100g: CUBIC vs BBRv3 on 100G R&E paths (seed 003)", sections,
                        quick=ctx.quick, wall_s=ctx.elapsed_s, packets=packets)
