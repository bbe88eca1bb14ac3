#!/usr/bin/env python3
"""What a queue discipline costs the simulator per delivered packet (issue 31): one scenario
(default benchmarks/fqcodel-1000flows-10g.toml: 1000 CUBIC flows, 10 Gbit/s, 10 ms, 2 s) run with
the bottleneck's qdisc replaced by each variant below, the variants interleaved round-robin
``--repeat`` times so that a shared machine's load falls on all of them alike.

    python3 scripts/bench_aqm.py [SCENARIO] [--repeat N] [--only a,b,...] [--json OUT]

Variants, from the cheapest path to the full discipline, so that the differences say where the
cost goes:
  droptail        the native FIFO: a timestamped link, no event per departure
  codel_inert     CoDel whose target (60 s) is never reached: the event-driven link (an event
                  per departure) with a FIFO that only timestamps — the same drops as drop-tail
                  (tail drops at the buffer)
  fq1_inert       FQ-CoDel with one flow queue and an unreachable target: FQ-CoDel's machinery
                  (DRR, new/old lists) without hashing into many queues
  fq_inert        FQ-CoDel with its 1024 queues and an unreachable target: per-flow queues,
                  drops only at the buffer (from the fattest queue)
  fq_codel        FQ-CoDel with Linux's defaults (5 ms, 100 ms)
  fq_codel_q64k   FQ-CoDel with a 64 KiB quantum instead of 1514 bytes (a diagnostic, not Linux's
                  default): each queue's turn sends ~43 packets instead of ~1, so the price of
                  moving from one flow's queue to the next per packet shows against fq_codel

Reported per variant: the median over the repeats of the core's event-loop wall time
(summary["run"]["wall_s"]) per delivered data packet, and of the process's CPU time over the
whole run (less sensitive to a loaded machine's other processes), events per delivered packet,
the aggregate goodput, and the ratio to drop-tail's ns per packet: the median over the rounds of
each round's ratio (a round runs every variant back to back, so they share its load). Not part
of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SCENARIO = ROOT / "benchmarks" / "fqcodel-1000flows-10g.toml"
# A target no queue reaches (the schema's largest, 60 s; the scenario's 1-BDP buffer holds
# 10 ms): CoDel never enters its dropping state.
UNREACHABLE_TARGET = "60s"

VARIANTS: dict[str, dict[str, Any]] = {
    "droptail": {"kind": "droptail"},
    "codel_inert": {"kind": "codel", "target": UNREACHABLE_TARGET, "interval": UNREACHABLE_TARGET},
    "fq1_inert": {"kind": "fq_codel", "flows": 1, "target": UNREACHABLE_TARGET, "interval": UNREACHABLE_TARGET},
    "fq_inert": {"kind": "fq_codel", "target": UNREACHABLE_TARGET, "interval": UNREACHABLE_TARGET},
    "fq_codel": {"kind": "fq_codel"},
    "fq_codel_q64k": {"kind": "fq_codel", "quantum": 65536},
}


def run_once(doc: dict[str, Any], qdisc: dict[str, Any]) -> dict[str, float]:
    import bbrlab

    d = json.loads(json.dumps(doc))  # a deep copy
    d["topology"]["bottleneck"]["qdisc"] = qdisc
    scenario = bbrlab.parse_scenario(d)
    cpu0 = time.process_time()
    res = bbrlab.run(scenario)
    cpu_s = time.process_time() - cpu0
    run = res.summary["run"]
    pkts = float(run["data_packets_delivered"])
    return {
        "wall_s": float(run["wall_s"]),
        "packets": pkts,
        "events": float(run["events"]),
        "ns_per_packet": float(run["wall_s"]) * 1e9 / max(pkts, 1.0),
        "cpu_ns_per_packet": cpu_s * 1e9 / max(pkts, 1.0),
        "events_per_packet": float(run["events"]) / max(pkts, 1.0),
        "goodput_gbps": float(res.summary["aggregate"]["goodput_bps"]) / 1e9,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", nargs="?", type=Path, default=DEFAULT_SCENARIO)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated variants (default: all)")
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {unknown}; known: {list(VARIANTS)}")
    if "droptail" not in names:
        names.insert(0, "droptail")  # the ratios' baseline
    doc = tomllib.loads(args.scenario.read_text())

    runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    for i in range(args.repeat):
        for n in names:
            r = run_once(doc, VARIANTS[n])
            r["load1"] = os.getloadavg()[0]
            runs[n].append(r)
            print(
                f"[{i + 1}/{args.repeat}] {n:12s} {r['ns_per_packet']:8.1f} ns/packet (load {r['load1']:.1f})",
                file=sys.stderr,
            )

    def med(n: str, k: str) -> float:
        return statistics.median(r[k] for r in runs[n])

    def paired(n: str, k: str) -> float:
        """The median over the rounds of this variant's figure over drop-tail's in that round."""
        return statistics.median(r[k] / b[k] for r, b in zip(runs[n], runs["droptail"], strict=True))

    print(
        f"{'variant':12s} {'wall ns/packet':>14s} {'min-max':>15s} {'cpu ns/packet':>13s} "
        f"{'events/packet':>13s} {'goodput Gbit/s':>14s} {'x droptail wall':>15s} {'x droptail cpu':>14s}"
    )
    for n in names:
        lo, hi = min(r["ns_per_packet"] for r in runs[n]), max(r["ns_per_packet"] for r in runs[n])
        print(
            f"{n:12s} {med(n, 'ns_per_packet'):14.1f} {lo:7.1f}-{hi:<7.1f} {med(n, 'cpu_ns_per_packet'):13.1f} "
            f"{med(n, 'events_per_packet'):13.2f} {med(n, 'goodput_gbps'):14.3f} "
            f"{paired(n, 'ns_per_packet'):15.2f} {paired(n, 'cpu_ns_per_packet'):14.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps({"scenario": str(args.scenario), "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
