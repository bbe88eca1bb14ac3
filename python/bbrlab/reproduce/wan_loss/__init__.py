"""wan-loss (Toonk BBR blog): CUBIC vs BBR on long paths with random loss.

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
and it spends the run recovering from that loss (a bbrlab run of that setup, which this study
does not repeat, measured 182 Mbit/s over 30 s instead of the blog's 347).

Parts:
  A. the blog's grid: RTT {1, 10, 40, 140} ms × loss {0, 0.1, 0.5, 1, 1.5, 3} % × {cubic, bbr1, bbr3}
  B. the BBR patch series' example: 10 Gbit/s, 100 ms, 1 % loss (cubic 3.27 Mbit/s, bbr 9150 Mbit/s)
  C. the random-loss sweep shape: 100 Mbit/s, 100 ms, loss 0.001 %–20 % (BBR near link·(1−p)
     below ~15 %, CUBIC falling by orders of magnitude)
Parts B and C check the claims of the Linux BBR patch series (E. Dumazet, netdev, 2016), not
the blog's.
"""

# The study is split by job, a module each: plan (its sizes, paths and the sources' numbers),
# experiments (the simulations of parts A-C), figures, verdicts (the blog's and the patch series'
# claims checked), prose (the commentary computed from the numbers) and sections (the report's
# grid, example and sweep). This module keeps the study's description above, which its report
# quotes, runs the parts in order and lays out the report.

from __future__ import annotations

from pathlib import Path

from ..analysis import packets_simulated
from ..claims import claims_table
from ..context import StudyContext
from ..source_figures import draw_all
from .experiments import _run_grid, _run_patch, _run_sweep
from .figures import SOURCE_FIGURES
from .plan import BLOG_140MS, PLANS, SOURCE, Plan
from .prose import _commentary
from .sections import _grid_section, _patch_section, _sweep_section
from .verdicts import claims, patch_claims, sweep_claims


def run(ctx: StudyContext) -> Path:
    p = PLANS[ctx.size]
    ccs = list(p.ccs)
    a = _run_grid(ctx, p, ccs)
    draw_all(SOURCE_FIGURES.values(), ctx.out_dir)
    b = _run_patch(ctx, p)
    c = _run_sweep(ctx, p)

    blog_claims = claims(a)
    patch_series = patch_claims(b) + sweep_claims(c, p.sweep_ccs, p.sweep_losses_pct)
    sections = [
        ("Source and setup", __doc__.split("Parts:")[0].split("\n", 2)[2]),
        (
            "The blog's numbers beside ours",
            claims_table(blog_claims, source_header="Toonk BBR blog") + "\n\n" + _commentary(a, p.dur_s),
        ),
        _grid_section(a, p, ccs),
    ]
    if b is not None:
        sections.append(_patch_section(b))
    sections.append(_sweep_section(c, p, patch_series))
    packets = packets_simulated(a, c, *([b] if b is not None else []))
    return ctx.write_report(
        "wan-loss: CUBIC vs BBR on long lossy paths (Toonk BBR blog)",
        sections,
        source=SOURCE,
        packets=packets,
        claims=blog_claims + patch_series,
    )


__all__ = [
    "BLOG_140MS",
    "PLANS",
    "SOURCE_FIGURES",
    "Plan",
    "_commentary",
    "claims",
    "patch_claims",
    "run",
    "sweep_claims",
]
