"""A scenario fuzzer: mutated scenario files through validation, the core and (some) full runs.

One generator, two drivers. :func:`mutated_scenario` builds a scenario from a valid base by a few
mutations, each chosen by a ``choose(options)`` callable: the property-based tests pass one that
hypothesis controls (so failures shrink), :func:`main` one backed by a seeded RNG (so a long run is
cheap and any failure is a seed to replay). Mutations reach every field of the scenario model,
with values at and beyond its bounds, of the wrong type, in the wrong unit, absurdly large or
long, and the structure itself (keys removed, unknown keys, wrong kinds, deep nesting).

What must hold for every scenario (:func:`check_scenario`):
- validation either accepts it or raises one :class:`ScenarioError` (one line) — nothing else, and
  within a couple of seconds;
- an accepted scenario is accepted by the core too, and survives a TOML round trip unchanged;
- (for runs, :func:`check_run`) it runs to completion without a panic, conserves packets, and its
  tables stay within physical bounds: no negative counts, utilisation and loss rates in [0, 1],
  Jain's index in [1/n, 1], goodput no higher than the bottleneck allows.

``python -m bbrlab.devtools.fuzz --scenarios 10000 --runs 200`` runs the long version and prints the counts.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ScenarioError
from ..scenario._toml import tomllib

__all__ = ["mutated_scenario", "check_scenario", "check_run", "main", "Outcome"]

Choose = Callable[[Sequence[Any]], Any]

BASES: list[dict[str, Any]] = [
    {
        "duration": "1s",
        "topology": {"bottleneck": {"rate": "20Mbps", "rtt": "20ms"}},
        "flows": [{"cc": "cubic"}, {"cc": "bbr", "start": "0.2s"}],
    },
    {
        "duration": "0.5s",
        "sample_interval": "50ms",
        "topology": {"kind": "star", "workers": 4, "rate": "1Gbps", "lossless": True},
        "flows": [{"cc": "dctcp", "ecn": True, "sender": 3}],
        "apps": [{"kind": "query", "workers": 3, "size": "300KB", "repetitions": 2, "flow": {"cc": "bbr3"}}],
    },
    {
        "duration": "1s",
        "topology": {
            "bottleneck": {
                "rate": "50Mbps",
                "rtt": "5ms",
                "buffer": "100pkts",
                "red": {"min_th": "20KB", "max_th": "60KB"},
            }
        },
        "flows": [
            {"cc": "bbr2_new", "count": 3, "ecn": True, "rpc": {"size": "10KB", "gap": "1ms"}},
            {"cc": "bql", "bytes": "200KB"},
        ],
    },
]

# Values by kind: in range, at the edges, out of range, wrong unit, wrong type, absurd.
_ANY_WRONG = [True, False, [], {}, [1, 2], {"a": 1}, "", " ", "x" * 200, "∞", "nan", None, -1, 0, 1.5, 10**40]
VALUES: dict[str, list[Any]] = {
    "rate": [
        "1bps",
        "10Tbps",
        "10.0001Tbps",
        "0bps",
        "-5Mbps",
        "1e30bps",
        "1e999999bps",
        "5 Mbit/s",
        "5MBps",
        "5mbps",
        "5Gbs",
        "100Mbps",
        "1.5kbps",
        "0.5bps",
        100,
        "1" + " " * 5000 + "x",
    ],
    "time": [
        "0s",
        "1ns",
        "1us",
        "999us",
        "1e12s",
        "1e999999s",
        "-1s",
        "5m",
        "1min",
        "1h",
        "100s",
        "0.5ns",
        "2.5ms",
        "1e-3s",
        10,
        "10",
    ],
    "size": [
        "0B",
        "1B",
        "64B",
        "1448",
        1448,
        "1TB",
        "1.1TB",
        "1e5000B",
        "1e999999B",
        "64KiB",
        "8Kb",
        "-1B",
        "0.5B",
        "1GB",
        "100pkts",
    ],
    "buffer": [
        "1bdp",
        "0bdp",
        "0.0001bdp",
        "1000bdp",
        "1001bdp",
        "1pkts",
        "0pkts",
        "1.5pkts",
        "1e9pkts",
        "2e9pkts",
        "1B",
        "64KiB",
        "1TB",
        "2TB",
        "bdp",
        "-1bdp",
    ],
    "fraction": [
        0,
        0.0,
        1,
        1.0,
        0.9999999999999999,
        1e-300,
        -0.0,
        -1e-9,
        "1.5%",
        "100%",
        "99.9999%",
        "150%",
        "x%",
        float("inf"),
        0.5,
    ],
    "count": [
        0,
        1,
        2,
        255,
        256,
        10_000,
        10_001,
        100_000,
        100_001,
        2**31,
        2**32,
        2**40,
        2**63,
        2**64,
        -1,
        "7",
        7.0,
        7.5,
        int("9" * 50),
    ],
    "bool": [True, False, "true", 1, 0, "yes"],
    "cc": [
        "reno",
        "cubic",
        "cubic_hspp",
        "bbr",
        "BBR1",
        " bbr2 ",
        "bbr2_new",
        "bbr3",
        "bbr3_linux",
        "dctcp",
        "bql",
        "vegas",
        "",
        "bbr4",
        1,
    ],
    "enum": [
        "auto",
        "on",
        "off",
        "ON",
        True,
        False,
        "static",
        "ictcp",
        "store-and-forward",
        "cut-through",
        "cut_through",
        "sometimes",
    ],
    "name": ["a", "run-1.x_y", "abc\n", "../up", "-x", ".hidden", "x" * 100, "x" * 101, "naïve", "", " "],
    "kind": ["dumbbell", "star", "ring", "query", "bulk", [], {}, 1],
}

# Values at the edges of what each kind allows: a scenario made of these should be accepted (and
# then run), so the runs see the extremes, not only the rejections.
EDGES: dict[str, list[Any]] = {
    "rate": ["1kbps", "10Tbps", "100Gbps", "1Gbps", "9.99Tbps", "64kbps"],
    "time": ["0s", "1ns", "1us", "10ms", "1s", "100s"],
    "size": ["1B", "64B", "1448B", "9000B", "32768B", "32769B", "65535B", "64KB", "1TB"],
    "buffer": ["0.001bdp", "1000bdp", "1pkts", "1000000000pkts", "1B", "1TB", "2bdp"],
    "fraction": [0, 0.5, 0.9999999999999999, 1e-300, "0.001%", "99.99%"],
    "count": [0, 1, 2, 255, 256, 1000, 10_000],
    "bool": [True, False],
    "cc": ["reno", "cubic", "cubic_hspp", "bbr", "bbr1", "bbr2", "bbr2_new", "bbr3", "bbr3_linux", "dctcp", "bql"],
    "enum": ["auto", "on", "off", "static", "ictcp", "store-and-forward", "cut-through"],
    "name": ["a", "run-1.x_y", "x" * 100],
    "kind": ["dumbbell", "star", "query"],
}

FIELD_KIND = {
    "rate": "rate",
    "access_rate": "rate",
    "aggregator_rate": "rate",
    "max_pacing_rate": "rate",
    "rtt": "time",
    "duration": "time",
    "sample_interval": "time",
    "start": "time",
    "stop": "time",
    "extra_rtt": "time",
    "min_rto": "time",
    "app_read_delay": "time",
    "gap": "time",
    "delay": "time",
    "host_jitter": "time",
    "jitter": "time",
    "bytes": "size",
    "mss": "size",
    "sndbuf": "size",
    "rcvbuf": "size",
    "size": "size",
    "ecn_threshold": "size",
    "shared_buffer": "size",
    "header": "size",
    "xoff": "size",
    "xon": "size",
    "min_th": "size",
    "max_th": "size",
    "buffer": "buffer",
    "loss": "fraction",
    "ack_loss": "fraction",
    "max_p": "fraction",
    "weight": "fraction",
    "seed": "count",
    "count": "count",
    "initial_cwnd": "count",
    "sender": "count",
    "workers": "count",
    "clock_ppm": "count",
    "quanta": "count",
    "repetitions": "count",
    "ecn_threshold_packets": "count",
    "ecn": "bool",
    "tso": "bool",
    "delayed_ack": "bool",
    "tso_minrtt_autosize": "bool",
    "gap_histogram": "bool",
    "faster_acks": "bool",
    "lossless": "bool",
    "handshake": "bool",
    "cc": "cc",
    "pacing": "enum",
    "receiver_window": "enum",
    "forwarding": "enum",
    "name": "name",
    "kind": "kind",
}


def _tables(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every table (dict) in a raw scenario (not inside the deep nests it plants)."""
    out: list[tuple[Any, ...]] = []
    if len(path) > 6:
        return out
    if isinstance(node, dict):
        out.append(path)
        for k, v in node.items():
            out += _tables(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _tables(v, path + (i,))
    return out


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        node = node[p]
    return node


def mutated_scenario(choose: Choose, mutations: int | None = None, *, hostile: bool = True) -> dict[str, Any]:
    """A base scenario with a few mutations, every choice made by ``choose``. ``hostile``: any
    value, type or structure; otherwise values at the edges of what each field allows."""
    raw = copy.deepcopy(choose(BASES))
    n = mutations if mutations is not None else choose([1, 1, 2, 3, 5])
    fields = sorted(FIELD_KIND)
    for _ in range(n):
        table = _at(raw, choose(_tables(raw)))
        op = choose(["set", "set", "set", "set", "wrong", "delete", "unknown", "nest", "grow"]) if hostile else "edge"
        if op == "edge":
            key = choose([k for k in fields if k in table] or fields)
            table[key] = choose(EDGES[FIELD_KIND[key]])
        elif op == "set":
            key = choose(fields)
            table[key] = choose(VALUES[FIELD_KIND[key]] + _ANY_WRONG[:3])
        elif op == "wrong" and table:
            table[choose(sorted(table, key=str))] = choose(_ANY_WRONG)
        elif op == "delete" and table:
            del table[choose(sorted(table, key=str))]
        elif op == "unknown":
            table[choose(["bufer", "rtt_ms", " ", "", "x.y", "é", "cc "])] = 1
        elif op == "nest":
            table[choose(fields)] = json.loads("[" * 300 + "]" * 300)
        elif op == "grow" and isinstance(raw.get("flows"), list) and raw["flows"]:
            f = raw["flows"][0]
            if isinstance(f, dict):
                f["count"] = choose([50, 1000, 20_000, 100_000])
    return raw


class Outcome:
    """Counts of one fuzzing session."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {k: 0 for k in ("scenarios", "rejected", "accepted", "runs", "runs_complete")}
        self.failures: list[tuple[str, str]] = []  # (kind, detail)
        self.slowest_s = 0.0

    def fail(self, kind: str, detail: str) -> None:
        self.failures.append((kind, detail))

    def summary(self) -> str:
        c = self.counts
        kinds: dict[str, int] = {}
        for k, _ in self.failures:
            kinds[k] = kinds.get(k, 0) + 1
        fails = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"
        return (
            f"{c['scenarios']} scenarios: {c['rejected']} rejected with one line, {c['accepted']} accepted; "
            f"{c['runs']} runs, {c['runs_complete']} complete; failures: {fails}; "
            f"slowest validation {self.slowest_s:.2f} s"
        )


def check_scenario(raw: dict[str, Any], out: Outcome, *, time_limit_s: float = 5.0) -> Any:
    """Validate ``raw`` and hold the result to the properties above; returns the Scenario or None."""
    from .. import scenario as sc
    from ..scenario import core

    out.counts["scenarios"] += 1
    t0 = time.monotonic()
    try:
        s = sc.parse_scenario(copy.deepcopy(raw), default_name="fuzz")
    except ScenarioError as e:
        text = str(e)
        if "\n" in text or not text:
            out.fail("bad-message", text)
        out.counts["rejected"] += 1
        s = None
    except RecursionError as e:
        out.fail("traceback", f"RecursionError {e}")
        s = None
    except Exception as e:  # the point: nothing else may escape
        out.fail("traceback", f"{type(e).__name__}: {e}"[:300])
        s = None
    dt = time.monotonic() - t0
    out.slowest_s = max(out.slowest_s, dt)
    if dt > time_limit_s:
        out.fail("slow", f"{dt:.1f} s: {json.dumps(raw, default=str)[:300]}")
    if s is None:
        return None
    out.counts["accepted"] += 1
    try:
        config = s.resolve()
        core.load_core().Simulation(json.dumps(config))
    except Exception as e:
        out.fail("accepted-then-rejected", f"{type(e).__name__}: {e}"[:300])
        return None
    try:
        again = sc.parse_scenario(tomllib.loads(s.to_toml()))
        if again.resolve() != config:
            out.fail("round-trip", json.dumps(config)[:300])
    except Exception as e:
        out.fail("round-trip", f"{type(e).__name__}: {e}"[:300])
    return s


#: A run in a fuzzing session moves at most about this many packets across its bottleneck.
RUN_PACKETS = 300_000


def runnable(s: Any) -> Any:
    """A copy of an accepted scenario short enough to run in a test: at most 0.3 s simulated,
    ``RUN_PACKETS`` at the bottleneck's rate, 2000 flows; everything else — the extreme rates,
    sizes and buffers — stays."""
    from .. import scenario as sc
    from ..units import format_time

    raw = s.human()
    cap_ns = min(300_000_000, RUN_PACKETS * 1500 * 8 * 10**9 // max(1, s.derived()["bottleneck_rate_bps"]))
    if s.duration > cap_ns:
        raw["duration"] = format_time(max(cap_ns, 1000))
    raw["sample_interval"] = raw["duration"] if s.sample_interval > min(s.duration, cap_ns) else raw["sample_interval"]
    for f in raw.get("flows", []):
        f["count"] = min(f.get("count", 1), 2000 // max(1, len(raw["flows"])))
        for k in ("start", "stop"):
            f.pop(k, None)
    for a in raw.get("apps", []):
        a["start"] = "0s"
        a["repetitions"] = min(a.get("repetitions", 1), 3)
    try:
        return sc.parse_scenario(raw)
    except ScenarioError:
        return None


def check_run(s: Any, out: Outcome, *, wall_limit_s: float = 60.0) -> None:
    """Run an accepted scenario and hold its results to physics."""
    import numpy as np

    from ..scenario import core

    out.counts["runs"] += 1
    sim = core.load_core().Simulation(json.dumps(s.resolve()))
    t0 = time.monotonic()
    done = False
    try:
        while not done and time.monotonic() - t0 < wall_limit_s:
            done = sim.run_until(sim.end_ns, max_wall_s=0.2)
    except BaseException as e:  # a Rust panic arrives as pyo3's PanicException (a BaseException)
        if isinstance(e, KeyboardInterrupt):
            raise
        out.fail("panic", f"{type(e).__name__}: {e}"[:300])
        return
    if not done:
        out.fail("slow-run", f"not complete after {wall_limit_s:.0f} s: {json.dumps(s.resolve())[:200]}")
        return
    out.counts["runs_complete"] += 1
    try:
        sim.check_conservation()
    except Exception as e:
        out.fail("conservation", str(e)[:300])
    from ..results.results import Result

    r = Result.from_core(s, sim.results(), wall_s=time.monotonic() - t0)
    f, q, agg = r.flows, r.queue, r.summary["aggregate"]
    problems = []
    for col in ("delivered_bytes", "data_packets_sent", "retransmits", "lost_packets", "rto_count", "ce_packets"):
        if (f[col] < 0).any():
            problems.append(f"negative {col}")
    if ((f["retrans_rate"] < 0) | (f["retrans_rate"] > 1)).any():
        problems.append("retrans_rate outside [0, 1]")
    if len(q) and ((q["utilization"] < 0) | (q["utilization"] > 1 + 1e-9)).any():
        problems.append("utilization outside [0, 1]")
    jain = agg.get("jain")
    n = int((f["app"] < 0).sum()) if "app" in f else len(f)
    if jain is not None and not (1 / max(n, 1) - 1e-9 <= jain <= 1 + 1e-9):
        problems.append(f"jain {jain} outside [1/{n}, 1]")
    d = s.derived()
    # Payload cannot cross the shared link faster than its rate (headers make it slower still).
    if agg.get("goodput_bps") is not None and agg["goodput_bps"] > d["bottleneck_rate_bps"] * 1.001:
        problems.append(
            f"aggregate goodput {agg['goodput_bps']:.4g} above the bottleneck {d['bottleneck_rate_bps']:.4g}"
        )
    for col in ("goodput_bps", "rtt_mean_ms"):
        v = f[col].to_numpy(dtype=float)
        if np.isinf(v).any():
            problems.append(f"infinite {col}")
    if problems:
        out.fail("physics", "; ".join(problems) + " :: " + json.dumps(s.resolve())[:300])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bbrlab.devtools.fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=10_000, help="generated scenarios to validate")
    ap.add_argument("--runs", type=int, default=200, help="accepted scenarios to run to completion")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--edge-share",
        type=float,
        default=0.5,
        help="share of scenarios mutated with in-range edge values rather than hostile ones",
    )
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    out = Outcome()
    accepted = []
    t0 = time.monotonic()
    for i in range(args.scenarios):
        case_seed = rng.getrandbits(32)
        before = len(out.failures)
        hostile = random.Random(case_seed ^ 0xED6E).random() >= args.edge_share
        s = check_scenario(mutated_scenario(random.Random(case_seed).choice, hostile=hostile), out)
        # A failure names its case: mutated_scenario(random.Random(case).choice, hostile=...)
        # rebuilds it.
        out.failures[before:] = [(k, f"case {case_seed}: {d}") for k, d in out.failures[before:]]
        if s is not None:
            accepted.append(s)
        if (i + 1) % 1000 == 0:
            print(f"{i + 1} scenarios, {time.monotonic() - t0:.0f} s: {out.summary()}", file=sys.stderr)
    ran = 0
    for s in accepted:
        if ran >= args.runs:
            break
        small = runnable(s)
        if small is None:
            continue
        check_run(small, out)
        ran += 1
    print(out.summary())
    for kind, detail in out.failures[:20]:
        print(f"  {kind}: {detail}")
    print(f"{time.monotonic() - t0:.0f} s")
    return 1 if out.failures else 0


if __name__ == "__main__":
    sys.exit(main())
