"""wan-loss (seed 002): CUBIC vs BBR on long paths with random loss.

The blog measured iperf3 between two hosts with 2.5 Gbit/s NICs, with netem on the sender adding
70 ms each way and, in the loss runs, 1.5 % random loss (netem's default queue limit is 1000
packets). Its ``ss`` output shows the 140 ms runs were receive-window limited (``rwnd_limited``
43.9 %, ~6 MB in flight): Ubuntu's ``tcp_rmem`` maximum of 6 MiB, not the link, set the loss-free
plateau of ~340 Mbit/s. We therefore run every point twice: with the blog's host buffers
(``rcvbuf = 6 MiB``) and with unlimited buffers, which shows what the algorithms themselves do.

Where the queue is matters. The blog's netem ran as the root qdisc of the sender's 2.5 Gbit/s NIC,
so the bottleneck queue was in the sending host: when it is full, the kernel stops dequeuing the
socket (TSQ / qdisc backpressure) rather than dropping a packet in the network. In part A the
senders' NIC is therefore the 2.5 Gbit/s bottleneck itself (``access_rate = rate``), and the
host's per-flow queue limit (TSQ, ~1 ms of the pacing rate) applies. With a faster NIC feeding a
1000-packet router queue instead, unpaced CUBIC's slow-start bursts overflow the queue at 140 ms
and it spends the 30 s recovering from that loss (182 Mbit/s instead of the blog's 347).

Parts:
  A. the blog's grid: RTT {1, 10, 40, 140} ms × loss {0, 0.1, 0.5, 1, 1.5, 3} % × {cubic, bbr1, bbr3}
  B. the BBR patch series' example: 10 Gbit/s, 100 ms, 1 % loss (cubic 3.27 Mbit/s, bbr 9150 Mbit/s)
  C. the random-loss sweep shape: 100 Mbit/s, 100 ms, loss 0.001 %–20 % (BBR near link·(1−p)
     below ~15 %, CUBIC falling by orders of magnitude)
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

from .catalog import StudyContext  # noqa: E402
from .report import MSS, WIRE, mbps, md_table, write_report  # noqa: E402

#: Ubuntu's default net.ipv4.tcp_rmem maximum, the receive window the blog's hosts could offer.
BLOG_RCVBUF = "6MiB"
#: netem's default queue limit.
NETEM_LIMIT = "1000pkts"


def _scenario(name: str, rate: str, rtt_ms: float, loss_pct: float, cc: str, dur_s: float, *,
              rcvbuf: str | None, buffer: str, tags: dict[str, Any], host_nic_is_bottleneck: bool = False
              ) -> dict[str, Any]:
    flow: dict[str, Any] = {"cc": cc}
    if rcvbuf:
        flow["rcvbuf"] = rcvbuf
    topology: dict[str, Any] = {"kind": "dumbbell",
                                "bottleneck": {"rate": rate, "rtt": f"{rtt_ms}ms", "buffer": buffer,
                                               "loss": loss_pct / 100}}
    if host_nic_is_bottleneck:
        topology["access_rate"] = rate
    return {
        "name": name,
        "duration": f"{dur_s}s",
        "seed": 1,
        "sample_interval": "500ms",
        "topology": topology,
        "flows": [flow],
        "tags": tags,
    }


def _heatmaps(df: pd.DataFrame, ccs: list[str], mode: str, path: Path, link_bps: float) -> None:
    d = df[df["buffers"] == mode]
    rtts = sorted(d["rtt_ms"].unique())
    losses = sorted(d["loss_pct"].unique())
    fig, axes = plt.subplots(1, len(ccs), figsize=(4.2 * len(ccs), 3.6), squeeze=False)
    for ax, cc in zip(axes[0], ccs):
        m = np.full((len(rtts), len(losses)), np.nan)
        for _, r in d[d["cc"] == cc].iterrows():
            m[rtts.index(r["rtt_ms"]), losses.index(r["loss_pct"])] = r["goodput_bps"] / 1e6
        im = ax.imshow(np.log10(np.maximum(m, 0.01)), cmap="viridis", vmin=-1, vmax=math.log10(link_bps / 1e6),
                       aspect="auto", origin="lower")
        for i in range(len(rtts)):
            for j in range(len(losses)):
                v = m[i, j]
                if v == v:
                    ax.text(j, i, f"{v:.0f}" if v >= 10 else f"{v:.1f}", ha="center", va="center",
                            color="white" if v < link_bps / 1e6 / 10 else "black", fontsize=8)
        ax.set_xticks(range(len(losses)), [f"{x:g}%" for x in losses])
        ax.set_yticks(range(len(rtts)), [f"{x:g} ms" for x in rtts])
        ax.set_xlabel("random loss")
        ax.set_title(cc)
    axes[0][0].set_ylabel("RTT")
    fig.suptitle(f"goodput (Mbit/s), 2.5 Gbit/s path, {'blog host buffers (rcvbuf 6 MiB)' if mode == 'blog' else 'unlimited socket buffers'}")
    fig.colorbar(im, ax=axes[0].tolist(), label="log10 Mbit/s", shrink=0.85)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _sweep_plot(df: pd.DataFrame, ccs: list[str], path: Path, rate_bps: float, rtt_s: float) -> None:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ceiling = rate_bps * MSS / WIRE
    for cc in ccs:
        d = df[df["cc"] == cc].sort_values("loss_pct")
        ax.plot(d["loss_pct"], d["goodput_bps"] / 1e6, marker="o", label=cc)
    xs = np.logspace(-3, math.log10(20), 100)
    ax.plot(xs, ceiling * (1 - xs / 100) / 1e6, "k--", lw=1, label="link · (1 − p)")
    mathis = MSS * 8 / rtt_s * math.sqrt(1.5) / np.sqrt(xs / 100)
    ax.plot(xs, np.minimum(mathis, ceiling) / 1e6, ":", color="gray", lw=1, label="Mathis (Reno)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("random loss rate (%)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(f"goodput vs random loss, {rate_bps / 1e6:.0f} Mbit/s, {rtt_s * 1e3:.0f} ms RTT")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _commentary(a: pd.DataFrame, dur: float) -> str:
    """What the comparison shows, computed from the numbers rather than written in advance."""
    limit = 6 * 2**20 * 8 / 0.140
    blog = dict(rtt_ms=140, buffers="blog")
    unl = dict(rtt_ms=140, buffers="unlimited")
    c0, b0 = _get(a, cc="cubic", loss_pct=0.0, **blog), _get(a, cc="bbr1", loss_pct=0.0, **blog)
    cu0 = _get(a, cc="cubic", loss_pct=0.0, **unl)
    c15, b15, bu15 = (_get(a, cc="cubic", loss_pct=1.5, **blog), _get(a, cc="bbr1", loss_pct=1.5, **blog),
                      _get(a, cc="bbr1", loss_pct=1.5, **unl))
    mathis = MSS * 8 / 0.140 * math.sqrt(1.5 / 0.015)
    out = [
        f"**The loss-free plateau is the receive window.** 6 MiB per 140 ms is {mbps(limit)} of window. "
        f"With the blog's buffers BBRv1 delivers {mbps(b0)} ({b0 / limit:.0%} of that limit; the blog: 340 Mbit/s) "
        f"and CUBIC {mbps(c0)} ({c0 / limit:.0%}) over {dur:g} s. With unlimited buffers BBRv1 fills "
        f"{_get(a, cc='bbr1', loss_pct=0.0, **unl) / (2.5e9 * MSS / WIRE):.0%} of the 2.35 Gbit/s ceiling and CUBIC "
        f"reaches {mbps(cu0)}. The queue is the sending host's (module docstring): slow start fills it without "
        "a loss, so both algorithms reach the window, as in the blog.",
        f"**Random loss.** At 1.5 % CUBIC delivers {mbps(c15)}, the regime of the Mathis bound "
        f"({mbps(mathis)} at 140 ms) — the blog measured 1.23 Mbit/s. BBRv1 keeps {mbps(bu15)} with unlimited "
        f"buffers ({bu15 / (2.5e9 * MSS / WIRE):.0%} of the ceiling) and {mbps(b15)} with the blog's 6 MiB "
        "receive buffer (the blog: 153 Mbit/s). With loss the receive buffer also holds out-of-order data "
        "behind each hole, so the usable window shrinks below 6 MiB; how much depends on the kernel's "
        "receive-buffer accounting (`tcp_adv_win_scale`, truesize overhead), which the model approximates by "
        "counting only the out-of-order bytes.",
    ]
    b3 = _get(a, cc="bbr3", loss_pct=1.5, **unl)
    if b3 == b3:
        out.append(
            f"**BBRv3 is not BBRv1 under random loss.** At 1.5 % it keeps only {mbps(b3)} at 140 ms: its loss "
            "model treats a round with more than 2 % loss as a signal (LossThresh), and with 1.5 % random loss "
            "many rounds exceed 2 % by chance, cutting inflight_longterm by β = 0.7 each time. The draft's design "
            "tolerates about 1 % random loss; BBRv1 ignores loss entirely (until its 20 % policer threshold).")
    return "\n\n".join(out)


def _get(df: pd.DataFrame, **kv: Any) -> float:
    d = df
    for k, v in kv.items():
        d = d[d[k] == v]
    return float(d["goodput_bps"].iloc[0]) if len(d) else math.nan


def run(ctx: StudyContext) -> Path:
    q = ctx.quick
    ccs = ["cubic", "bbr1"] if q else ["cubic", "bbr1", "bbr3"]
    rtts = [10, 140] if q else [1, 10, 40, 140]
    losses = [0.0, 1.5] if q else [0.0, 0.1, 0.5, 1.0, 1.5, 3.0]
    dur = 10 if q else 30

    # Part A: the blog's grid, with the blog's host buffers and with unlimited buffers.
    grid = []
    for mode, rcvbuf in (("blog", BLOG_RCVBUF), ("unlimited", None)):
        for rtt in rtts:
            for loss in losses:
                for cc in ccs:
                    grid.append(_scenario("wan-loss", "2.5Gbps", rtt, loss, cc, dur, rcvbuf=rcvbuf, buffer=NETEM_LIMIT,
                                          host_nic_is_bottleneck=True,
                                          tags={"buffers": mode, "rtt_ms": rtt, "loss_pct": loss}))
    a = ctx.run_many("grid", grid)
    a.to_csv(ctx.out_dir / "grid.csv", index=False)
    for mode in ("blog", "unlimited"):
        _heatmaps(a, ccs, mode, ctx.out_dir / f"heatmap-{mode}.png", 2.5e9 * MSS / WIRE)

    # Part B: the BBR patch series' 10G example (full study only: 30 s at 10 Gbit/s).
    b = None
    if not q:
        pb = [_scenario("patch-10g", "10Gbps", 100, 1.0, cc, 30, rcvbuf=None, buffer="1bdp",
                        tags={"part": "patch"}) for cc in ("cubic", "bbr1")]
        b = ctx.run_many("patch", pb)
        b.to_csv(ctx.out_dir / "patch-10g.csv", index=False)

    # Part C: the random-loss sweep.
    sweep_losses = [0.01, 0.1, 1.0, 5.0, 15.0] if q else [0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 20.0]
    sweep_ccs = ["cubic", "bbr1"] if q else ["cubic", "bbr1", "bbr3"]
    sdur = 20 if q else 60
    pc = [_scenario("loss-sweep", "100Mbps", 100, p, cc, sdur, rcvbuf=None, buffer="1bdp", tags={"loss_pct": p})
          for p in sweep_losses for cc in sweep_ccs]
    c = ctx.run_many("sweep", pc)
    c.to_csv(ctx.out_dir / "loss-sweep.csv", index=False)
    _sweep_plot(c, sweep_ccs, ctx.out_dir / "loss-sweep.png", 100e6, 0.1)

    # ---- report
    blog140 = dict(rtt_ms=140, buffers="blog")
    unl140 = dict(rtt_ms=140, buffers="unlimited")
    claims = [
        ["140 ms, no loss: CUBIC", "347 Mbit/s", mbps(_get(a, cc="cubic", loss_pct=0.0, **blog140)),
         mbps(_get(a, cc="cubic", loss_pct=0.0, **unl140))],
        ["140 ms, no loss: BBR", "340 Mbit/s", mbps(_get(a, cc="bbr1", loss_pct=0.0, **blog140)),
         mbps(_get(a, cc="bbr1", loss_pct=0.0, **unl140))],
        ["140 ms, 1.5 % loss: CUBIC", "1.23 Mbit/s", mbps(_get(a, cc="cubic", loss_pct=1.5, **blog140)),
         mbps(_get(a, cc="cubic", loss_pct=1.5, **unl140))],
        ["140 ms, 1.5 % loss: BBR", "153 Mbit/s", mbps(_get(a, cc="bbr1", loss_pct=1.5, **blog140)),
         mbps(_get(a, cc="bbr1", loss_pct=1.5, **unl140))],
    ]
    table_rows = []
    for mode in ("blog", "unlimited"):
        for rtt in rtts:
            for loss in losses:
                table_rows.append([mode, f"{rtt} ms", f"{loss:g} %"] +
                                  [mbps(_get(a, cc=cc, rtt_ms=rtt, loss_pct=loss, buffers=mode)) for cc in ccs])
    sections = [
        ("Source and setup", __doc__.split("Parts:")[0].split("\n", 2)[2]),
        ("The blog's numbers beside ours",
         md_table(["case", "blog (seed 002)", "bbrlab, blog host buffers", "bbrlab, unlimited buffers"], claims) +
         "\n\n" + _commentary(a, dur)),
        ("The grid", md_table(["host buffers", "RTT", "loss"] + ccs, table_rows) +
         "\n\n![heatmap, blog buffers](heatmap-blog.png)\n\n![heatmap, unlimited buffers](heatmap-unlimited.png)"),
    ]
    if b is not None:
        sections.append(("The BBR patch series' example (10 Gbit/s, 100 ms, 1 % loss)", md_table(
            ["algorithm", "netdev 2016 (E. Dumazet)", "bbrlab"],
            [["cubic", "3.27 Mbit/s", mbps(_get(b, cc="cubic"))], ["bbr", "9150 Mbit/s", mbps(_get(b, cc="bbr1"))]])))
    sweep_rows = [[f"{p:g} %"] + [mbps(_get(c, cc=cc, loss_pct=p)) for cc in sweep_ccs] +
                  [mbps(100e6 * MSS / WIRE * (1 - p / 100))] for p in sweep_losses]
    sections.append(("Random-loss sweep (100 Mbit/s, 100 ms, 1 BDP)",
                     "The BBR patch series states that below 15 % loss BBR fully uses the path "
                     "(link · (1 − loss)), while CUBIC drops by orders of magnitude.\n\n" +
                     md_table(["loss"] + sweep_ccs + ["link·(1−p)"], sweep_rows) + "\n\n![sweep](loss-sweep.png)"))
    packets = int(sum(x["data_packets_delivered_run"].groupby(x["run"]).first().sum() for x in [a, c] + ([b] if b is not None else [])))
    return write_report(ctx.out_dir / "REPORT.md", "wan-loss: CUBIC vs BBR on long lossy paths (seed 002)", sections,
                        quick=q, wall_s=ctx.elapsed_s, packets=packets)


__all__ = ["run"]
