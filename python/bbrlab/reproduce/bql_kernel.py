"""bql-vs-bbr on real hosts: the study's points the link emulator can carry, kernel and simulator.

`bbrlab reproduce bql-vs-bbr --backend emu` runs this plan instead of the study's: the loss-free
1 Gbit/s points the emulator can carry on a 2-core machine, on real Linux through bbrlab's link
emulator (docs/emu.md) and on the simulator, one page with the two side by side.

What runs on the real hosts, each flow alone on the 80 MB drop-tail bottleneck:

- **BQL over UDP**: bbrlab's own transport (crates/udpflow, `transport = "udp"`), the simulator's
  sans-IO sender and receiver over UDP sockets — a user-space transport as RMDT, which carried
  the paper's BQL, is. Its congestion control is the simulator's `bql`, the same code.
- **BQL over kernel TCP**: the kernel's TCP with `bql.bpf.c`, the BPF struct_ops port of the
  simulator's `bql`.
- **BBR**: the kernel's own `tcp_bbr` (BBRv1 as Linux has it since 5.1, with the ACK-aggregation
  cwnd term). The paper's BBR was Linux 4.15's (the study's `bbr1_linux413`), which no kernel here
  has; the simulator runs both, `bbr1` beside the kernel's and `bbr1_linux413` as the study does.

The simulator runs `bql`, `bbr1` and `bbr1_linux413` at the same points; it runs its own
transport for a UDP flow, so its `bql` stands beside both BQL rows. The paper's central claim is
checked on each pairing with the study's rule, and each BQL row against the simulator with the
bar of bbrlab's real-host checks (goodput within 10 %, mean queue within 25 %): every verdict
from the numbers of this run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from . import bql_vs_bbr as study
from .analysis import packets_simulated
from .claims import Claim, cell, claims_table, num, shown_number, verdict_of_all
from .context import Size, StudyContext
from .report import MSS, WIRE, md_table
from .scenarios import Dumbbell, Flow, StudyRun, study_run
from .sentences import join

MBIT = 1_000_000
#: The issue's bar for a real-host check of the simulator: goodput within 10 %, mean queue 25 %.
GOODPUT_BAR, QUEUE_BAR = 0.10, 0.25


@dataclass(frozen=True)
class KernelPoint:
    """One of the study's loss-free points as the real hosts run it: the study's RTT at
    ``rate_bps``, which is the study's 1 Gbit/s unless ``scaled`` says why it is not."""

    rtt_ms: float
    rate_bps: int
    scaled: str | None = None

    @property
    def label(self) -> str:
        where = study._rtt_label(self.rtt_ms)
        return where if self.scaled is None else f"{where} at {self.rate_bps / MBIT:g} Mbit/s"


@dataclass(frozen=True)
class KernelFlow:
    """A flow the real hosts run: its scenario ``cc`` and ``transport``, and the simulator's
    algorithm that stands beside it."""

    key: str
    cc: str
    transport: str
    label: str
    sim_cc: str


@dataclass(frozen=True)
class KernelPlan:
    points: tuple[KernelPoint, ...]
    dur_s: float
    sample_s: float = 0.1


#: 1 Gbit/s × 100 ms on this project's 2-core machine: BQL over UDP made 571–591 Mbit/s against
#: the simulator's 883 because the emulator fell behind by up to 52–57 ms at a time beside the
#: transport's two halves (docs/emu.md); scaled to this rate, the same RTT and buffer.
SCALED_100MS_BPS = 300 * MBIT
POINTS = (
    KernelPoint(study.ZERO_RTT_MS, study.GIG),
    KernelPoint(
        100,
        SCALED_100MS_BPS,
        scaled="at 1 Gbit/s × 100 ms the link emulator, at real-time priority beside the UDP transport's "
        "two halves on a 2-core machine, fell behind its schedule by up to 52–57 ms at a time, which BQL "
        "reads as its own queue (BQL over UDP made 571–591 Mbit/s against the simulator's 883; "
        "docs/emu.md); the point runs at 300 Mbit/s with the same RTT and 80 MB buffer",
    ),
)
#: The study's RTTs the real hosts do not run, and why.
NOT_CARRIED = (
    "500 and 1000 ms are not run on real hosts: at 1 Gbit/s a BDP of 62.5 and 125 MB would sit in "
    "the emulator's delay line, which already falls behind at 100 ms, and BBR's start-up alone "
    "takes ≈ 15 s at 1000 ms, so a meaningful run takes minutes per flow"
)
KERNEL_FLOWS = (
    KernelFlow("bql-udp", "bql", "udp", "BQL over UDP (bbrlab's transport)", "bql"),
    KernelFlow("bql-tcp", "bql", "tcp", "BQL over kernel TCP (bql.bpf.c)", "bql"),
    KernelFlow("bbr", "bbr1", "tcp", "BBR (the kernel's tcp_bbr)", "bbr1"),
)
#: The simulator's algorithms at the same points: both BBRs (the kernel's and the paper's).
SIM_CCS = ("bql", "bbr1", study.BBR)

KERNEL_PLANS = {
    Size.TINY: KernelPlan(POINTS, dur_s=3),
    Size.QUICK: KernelPlan(POINTS, dur_s=15),
    Size.FULL: KernelPlan(POINTS, dur_s=60),
}


def _run(point: KernelPoint, flow: Flow, key: str, side: str, plan: KernelPlan) -> StudyRun:
    return study_run(
        "bql-vs-bbr",
        duration_s=plan.dur_s,
        seed=1,
        sample_interval_s=plan.sample_s,
        topology=Dumbbell(rate_bps=point.rate_bps, rtt_s=point.rtt_ms / 1e3, buffer=study.BUFFER),
        flows=[flow],
        tags={"side": side, "key": key, "rtt_ms": point.rtt_ms, "rate_bps": point.rate_bps},
    )


def kernel_runs(plan: KernelPlan) -> list[StudyRun]:
    return [
        _run(p, Flow(f.cc, transport="udp" if f.transport == "udp" else None), f.key, "kernel", plan)
        for p in plan.points
        for f in KERNEL_FLOWS
    ]


def sim_runs(plan: KernelPlan) -> list[StudyRun]:
    return [_run(p, Flow(cc), cc, "sim", plan) for p in plan.points for cc in SIM_CCS]


def _one(rows: pd.DataFrame, key: str, point: KernelPoint, col: str) -> float:
    d = rows[(rows["key"] == key) & (rows["rtt_ms"] == point.rtt_ms) & (rows["rate_bps"] == point.rate_bps)]
    return float(d[col].iloc[0]) if len(d) and col in d else math.nan


def _err(sim: float, real: float) -> float:
    """(simulator − real) / real: the simulator's error against the real host."""
    return (sim - real) / real if real else math.nan


def within_bar(sim_goodput: float, real_goodput: float, sim_queue: float, real_queue: float) -> bool | None:
    """The simulator within the bar of the real host (goodput 10 %, mean queue 25 %); None when a
    number is missing."""
    g, q = _err(sim_goodput, real_goodput), _err(sim_queue, real_queue)
    if not (math.isfinite(g) and math.isfinite(q)):
        return None
    return abs(g) <= GOODPUT_BAR and abs(q) <= QUEUE_BAR


def pairing_claims(plan: KernelPlan, sim: pd.DataFrame, kernel: pd.DataFrame) -> list[Claim]:
    """The paper's central claim on each pairing of a BQL and a BBR, at every point of the plan."""
    pairings = (
        ("simulator, bql vs the paper's BBR (bbr1_linux413)", sim, "bql", sim, study.BBR),
        ("simulator, bql vs bbr1 (the kernel's BBR)", sim, "bql", sim, "bbr1"),
        ("real hosts, BQL over UDP vs the kernel's BBR", kernel, "bql-udp", kernel, "bbr"),
        ("real hosts, BQL over kernel TCP (BPF) vs the kernel's BBR", kernel, "bql-tcp", kernel, "bbr"),
    )
    out = []
    for what, bq, bkey, br, rkey in pairings:
        per = []
        for p in plan.points:
            qb, qr = _one(bq, bkey, p, "queue_mean_bytes"), _one(br, rkey, p, "queue_mean_bytes")
            gb, gr = _one(bq, bkey, p, "goodput_bps"), _one(br, rkey, p, "goodput_bps")
            per.append((p, qr / max(qb, 1), (gb - gr) / 1e6, study.smaller_queue_check(qb, qr, gb, gr, p.label)))
        out.append(
            Claim(
                f"{study.QUEUE_CLAIM} — {what}",
                study.PAPER_QUEUE_SAID,
                "BBR/BQL mean queue (×), BQL − BBR goodput (Mbit/s): "
                + "; ".join(f"{p.label}: {shown_number(q)}, {shown_number(d)}" for p, q, d, _ in per),
                study.QUEUE_RULE,
                verdict_of_all(ok for *_, ok in per),
                paper_value=study.PAPER_VALUES["queue"],
                bbrlab_value=cell(
                    [num(q, "×", label=f"{p.label} BBR/BQL mean queue") for p, q, _, _ in per]
                    + [num(d, "Mbit/s", label=f"{p.label} BQL − BBR goodput") for p, _, d, _ in per]
                ),
            )
        )
    return out


def side_by_side(plan: KernelPlan, sim: pd.DataFrame, kernel: pd.DataFrame) -> pd.DataFrame:
    """One row per point and real-host flow (and the paper's BBR, simulator only): both sides'
    goodput and mean queue, the simulator's error, whether it is within the bar, and the kernel
    run's emulator lateness and UDP CPU."""
    rows = []
    for p in plan.points:
        ceiling = p.rate_bps * MSS / WIRE
        pairs: list[tuple[str, str, str | None]] = [(f.label, f.sim_cc, f.key) for f in KERNEL_FLOWS]
        pairs.append(("BBR as Linux 4.15 (the paper's)", study.BBR, None))
        for label, sim_cc, key in pairs:
            sg, sq = _one(sim, sim_cc, p, "goodput_bps"), _one(sim, sim_cc, p, "queue_mean_bytes")
            kg, kq = (_one(kernel, key, p, c) for c in ("goodput_bps", "queue_mean_bytes")) if key else (math.nan,) * 2
            k = key or ""
            rows.append(
                {
                    "point": p.label,
                    "rtt_ms": p.rtt_ms,
                    "rate_bps": p.rate_bps,
                    "scaled": p.scaled is not None,
                    "flow": label,
                    "sim_cc": sim_cc,
                    "sim_goodput_bps": sg,
                    "real_goodput_bps": kg,
                    "sim_utilization": sg / ceiling,
                    "real_utilization": kg / ceiling,
                    "goodput_error": _err(sg, kg),
                    "sim_queue_mean_bytes": sq,
                    "real_queue_mean_bytes": kq,
                    "queue_error": _err(sq, kq),
                    "within_bar": within_bar(sg, kg, sq, kq) if key and key.startswith("bql") else None,
                    "emu_late_mean_ns": _one(kernel, k, p, "emu_late_mean_ns"),
                    "emu_late_max_ns": _one(kernel, k, p, "emu_late_max_ns"),
                    "udp_sender_cpu_s": _one(kernel, k, p, "udp_sender_cpu_s"),
                    "udp_receiver_cpu_s": _one(kernel, k, p, "udp_receiver_cpu_s"),
                }
            )
    return pd.DataFrame(rows)


def _mbit(bps: float) -> str:
    return "-" if not math.isfinite(bps) else f"{bps / MBIT:.2f}"


def _signed(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x * 100:+.1f} %"


def _table(t: pd.DataFrame, dur_s: float) -> str:
    rows = []
    for _, r in t.iterrows():
        bar = {True: "yes", False: "no", None: ""}[r["within_bar"]]
        late = (
            f"{r['emu_late_mean_ns'] / 1e6:.3f} / {r['emu_late_max_ns'] / 1e6:.1f}"
            if math.isfinite(r["emu_late_max_ns"])
            else ""
        )
        cpu = (
            f"{r['udp_sender_cpu_s'] / dur_s:.2f} / {r['udp_receiver_cpu_s'] / dur_s:.2f}"
            if math.isfinite(r["udp_sender_cpu_s"])
            else ""
        )
        rows.append(
            [
                r["point"],
                r["flow"],
                f"{_mbit(r['sim_goodput_bps'])} ({r['sim_utilization'] * 100:.1f} %)",
                "-"
                if not math.isfinite(r["real_goodput_bps"])
                else f"{_mbit(r['real_goodput_bps'])} ({r['real_utilization'] * 100:.1f} %)",
                _signed(r["goodput_error"]),
                study._kb(r["sim_queue_mean_bytes"]),
                study._kb(r["real_queue_mean_bytes"]) if math.isfinite(r["real_queue_mean_bytes"]) else "-",
                _signed(r["queue_error"]),
                bar,
                late,
                cpu,
            ]
        )
    return md_table(
        [
            "point",
            "flow",
            "simulator goodput, Mbit/s (of ceiling)",
            "real host goodput, Mbit/s (of ceiling)",
            "sim error",
            "simulator mean queue",
            "real host mean queue",
            "sim error",
            "within 10 % / 25 %",
            "emulator late, ms (mean / max)",
            "UDP CPU, cores (sender / receiver)",
        ],
        rows,
    )


def _bar_sentence(t: pd.DataFrame) -> str:
    """How many BQL rows are within the bar, and which are not, from the table."""
    bql = t[t["within_bar"].notna()]
    if bql.empty:
        return ""
    missed = bql[bql["within_bar"] == False]  # noqa: E712  # the column holds True/False/None
    said = (
        f"The simulator's BQL is within {GOODPUT_BAR * 100:.0f} % goodput and {QUEUE_BAR * 100:.0f} % mean "
        f"queue of the real host in {len(bql) - len(missed)} of {len(bql)} BQL rows"
    )
    if missed.empty:
        return said + "."
    return said + "; not at " + join(f"{r['point']}, {r['flow']}" for _, r in missed.iterrows()) + "."


def plan_text(plan: KernelPlan) -> str:
    rows = [
        [p.label, f"{p.rate_bps / MBIT:g} Mbit/s", "80 MB", f"{plan.dur_s:g} s", p.scaled or "the study's point"]
        for p in plan.points
    ]
    return (
        md_table(["point", "rate", "buffer", "each run", "scaled?"], rows)
        + f"\n\nFlows on the real hosts: {join(f.label for f in KERNEL_FLOWS)}; on the simulator: "
        f"{join(SIM_CCS)}. {NOT_CARRIED}."
    )


def run(ctx: StudyContext) -> Path:
    """The kernel plan on the kernel (ctx's backend) and on the simulator, on one page."""
    plan = KERNEL_PLANS[ctx.size]
    out = ctx.out_dir
    kernel = ctx.run_many("kernel", kernel_runs(plan))
    sim = replace(ctx, backend="sim").run_many("sim", sim_runs(plan))
    kernel.to_csv(out / "runs_kernel.csv", index=False)
    sim.to_csv(out / "runs_sim.csv", index=False)
    t = side_by_side(plan, sim, kernel)
    t.to_csv(out / "real-host.csv", index=False)
    found = pairing_claims(plan, sim, kernel)
    sections = [
        ("Source and setup", (study.__doc__ or "").split("\n", 2)[2]),
        ("The real-host column", (__doc__ or "").split("\n", 2)[2]),
        ("This run's plan: the points the emulator carries, on both backends", plan_text(plan)),
        (
            "The paper's claim on each backend",
            claims_table(found, source_header="Anhalt BQL paper")
            + "\n\nThe real hosts' BBR is today's Linux BBRv1, not the paper's 4.15: the simulator's "
            "`bbr1` is the like-for-like pairing for the real-host rows.",
        ),
        (
            "Simulator and real hosts side by side",
            _table(t, plan.dur_s)
            + "\n\n"
            + _bar_sentence(t)
            + " Ceiling: the TCP payload share of the rate (1448/1538). Emulator lateness: how far behind "
            "its schedule the link emulator forwarded in that kernel run (delay the flow sees that is not "
            "queue); UDP CPU: each half's CPU time over the run.",
        ),
        ("Every run", "Side by side: `real-host.csv`; every run: `runs_kernel.csv`, `runs_sim.csv`."),
    ]
    return ctx.write_report(
        "bql-vs-bbr: BQL vs BBRv1 on real hosts and the simulator (Anhalt BQL paper)",
        sections,
        source=study.SOURCE,
        packets=packets_simulated(sim, kernel),
        claims=found,
    )
