"""esnet-100g (ESnet BBRv3 slides): CUBIC vs BBRv3 on ESnet's 100G and 4×10G paths, and packet spacing.

The slides (E. Dart and B. Tierney, ESnet, "BBRv3 Preliminary Results", LHCONE #52, April 2024)
report iperf3-style tests from an ESnet DTN (100G NIC) with 1 and 8 streams, unpaced and with a
per-stream pacing cap (fq maxrate / SO_MAX_PACING_RATE), CUBIC vs BBRv3, reporting the mean
throughput, its standard deviation over n runs and the retransmissions:
  * lbl-dev-dtn1 → cern773 (100G, RTT 150 ms), caps of 12 Gbit/s per stream;
  * lbl-dev-dtn1 → pygrid-sonar2.lancs.ac.uk (4×10G, RTT 147 ms), caps of 11 Gbit/s, where
    "low throughput [is] due to receive host TCP window limited";
and a histogram of packet gaps from `tcpdump -j adapter_unsynced` (NIC hardware timestamps) on
the sender, CUBIC vs BBRv3, unpaced vs paced at 10 Gbit/s.

How bbrlab models it (each choice is ours; the slides do not state it):
  * BBRv3 is `bbr3_linux`: Google's Linux BBRv3 (the kernel ESnet's hosts ran), not the IETF
    draft's constants.
  * 100G path: a 100 Gbit/s bottleneck, 150 ms base RTT. The simulator's queues only form where
    a faster link feeds a slower one, so the streams' shared first hop (`sender = 0`: one DTN)
    runs at 400 Gbit/s — ESnet's backbone rate, which carries the host's TSO bursts to the 100G
    port where they queue. The bottleneck buffer is unknown: we run a shallow-ish router buffer
    of 5 ms at line rate (62.5 MB, a shallow-buffer switch's share per port); `Plan.buffers_ms`
    can add a deep one (50 ms, 625 MB, a deep-buffer router line card) — the slides' conclusion
    ("only minor improvements … on clean paths with large buffered devices") is about that axis.
  * 4×10G path: a LAG of four 10G members hashes each TCP flow onto one member, so one stream is
    limited to 10 Gbit/s; eight streams spread over the four members. We model 1 stream as a
    10 Gbit/s bottleneck and 8 streams as the 40 Gbit/s aggregate (hash collisions are not
    modelled), 147 ms, buffer 5 ms of line rate, the DTN's 100G NIC as the first hop. The
    receive-window limit is `rcvbuf = 103 MB`: the window implied by the slides' own 1-stream BBR
    rate (5.61 Gbit/s × 147 ms / 8); the slides' 8-stream aggregate (20 Gbit/s, i.e. 2.5 per
    stream) shows the receiver host limited further (CPU, memory pressure), which we do not model.
  * Residual path loss: the slides' single-stream CUBIC rates, inverted through CUBIC's
    loss-response function (RFC 9438 §5.1, W = 1.054·(RTT/p)^¾ … in packets), imply random loss
    of order 1e-8 on the 100G path (19.5 Gbit/s) and 1.5e-7 on the 4×10G path (2.6 Gbit/s); we
    give the paths those Bernoulli loss rates. It also makes repetitions differ (with the
    seed-drawn start offsets of 0–10 ms per stream and BBR's random phase), which gives the
    slides' "stddev (nvals)" column: each configuration runs with several seeds.
  * Runs last 10 s (the performance target's scenario) in the full study; the slides' test length
    is not given (iperf3 tests on perfSONAR hosts commonly run 10–60 s). At 150 ms a 100G flow
    needs ≈ 2.5 s of startup alone, so these are not steady-state means — neither are the slides'.
  * Hosts. The runs above have infinitely fast hosts: the fitted loss and window stand in for
    whatever limited ESnet's streams. A second set ("host model") drops both fits (no random
    loss, no receive-window limit) and turns on bbrlab's host model (one core per stream at each
    end, interrupt moderation, GRO and stretch ACKs, per-packet, chunk, ACK and copy costs), set
    to ESnet's hosts as ESnet describes them (fasterdata.es.net's 100G tuning page): receive
    rings of 8192, NIC flow control on (a full ring pauses the last switch port, which queues up
    to the path's buffer), and "around 30 Gbps single stream" on its 100G perfSONAR nodes, which
    sets the receive copy rate; in scaled runs the hosts are slowed by the same factor as the links. It
    asks whether the hosts alone explain the slides' numbers; each cell is compared with the
    slides' mean ± 2 standard deviations, and the 4×10G pacing effect (8 CUBIC streams, unpaced
    vs 11 Gbit/s per stream: 8.34 → 8.46 Gbit/s) is compared as a relative change.
"""

# The study is split by job, a module each: plan (its sizes and the slides' tables), hosts (the
# host model of part D), experiments (the simulations of parts A-D), metrics (per run and per
# configuration), verdicts (the slides' notes checked), tables (the report's tables and computed
# prose), figures, and sections (the report, a section each). This module keeps the study's
# description above, which its report quotes, and runs the parts in order.

from __future__ import annotations

import resource
from pathlib import Path

from ..analysis import packets_simulated
from ..context import StudyContext
from .experiments import run_gaps, run_hosts, run_lag, run_path_100g
from .figures import SOURCE_FIGURES, _bar_figure
from .hosts import host_model
from .metrics import gap_stats
from .plan import BBR, PLANS, SEED_4X10G, SEED_100G, SOURCE, Plan
from .sections import (
    Section,
    buffer_section,
    cost_section,
    gaps_section,
    hosts_section,
    lag_section,
    path_100g_sections,
    scaled_rates_section,
)
from .tables import _window_text
from .verdicts import buffer_claims, claims, gap_claims, host_claims


def run(ctx: StudyContext) -> Path:
    p = PLANS[ctx.size]
    out = ctx.out_dir
    seeds = list(range(1, p.seeds + 1))

    a_rows, a = run_path_100g(ctx, p, seeds)
    b_rows, b = run_lag(ctx, p, seeds)
    hists = run_gaps(p, out)
    gs = gap_stats(hists, 100 * p.rate_scale)
    hm = host_model(p)
    d_rows, d = run_hosts(ctx, p, hm)
    d_hosts = d_rows.groupby("run").first().reset_index()

    bbr_h = [g["count"].to_numpy() for t, g in hists if t["cc_name"] == BBR]
    same_bbr = len(bbr_h) == 2 and bool((bbr_h[0] == bbr_h[1]).all())
    peak_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    for buf in p.buffers_ms:
        _bar_figure(
            a,
            SEED_100G,
            out / f"path-100g-buffer{buf:g}ms.png",
            f"100G, 150 ms, buffer {buf:g} ms of line rate: ESnet slides vs bbrlab (mean ± stddev)",
            buffer_ms=buf,
        )
    _bar_figure(b, SEED_4X10G, out / "path-4x10g.png", "4×10G LAG, 147 ms, rcvbuf 103 MB: ESnet slides vs bbrlab")

    sections: list[Section] = [("Source and setup", __doc__.split("\n", 2)[2])]
    if p.rate_scale != 1:
        sections.append(scaled_rates_section(p))
    path_sections, all_claims = path_100g_sections(a, p)
    sections += path_sections
    for section, cl in (
        buffer_section(a, p),
        lag_section(b, p),
        hosts_section(d, d_hosts, hm, p),
        gaps_section(gs, same_bbr, p),
    ):
        sections.append(section)
        all_claims += cl
    sections.append(cost_section(a, p, ctx.jobs, peak_rss_mb))
    return ctx.write_report(
        "esnet-100g: CUBIC vs BBRv3 on 100G R&E paths (ESnet BBRv3 slides)",
        sections,
        source=SOURCE,
        packets=packets_simulated(a_rows, b_rows, d_rows),
        claims=all_claims,
    )


__all__ = [
    "PLANS",
    "SOURCE_FIGURES",
    "Plan",
    "_window_text",
    "buffer_claims",
    "claims",
    "gap_claims",
    "gap_stats",
    "host_claims",
    "host_model",
    "run",
]
