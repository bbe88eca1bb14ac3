#!/usr/bin/env python3
"""Simulator speed, side by side with ns-3: the same dumbbell scenarios on ns-3.37 (bench/ns3/dumbbell)
and on bbrlab, in one run, each pair back to back.

    python3 scripts/bench_speed.py [--only a,c,d] [--repeat N] [--json OUT] [--big]
                                   [--build-ns3 [--install-deps]] [--no-ns3]

Scenarios (the issue-15 set; both simulators: MSS 1448, IW 10, SACK + timestamps, delayed ACK
every 2nd segment, PRR, min RTO 200 ms, BBR paced, access links 10x the bottleneck with no queue
limit, one FIFO drop-tail bottleneck queue of 1 BDP in 1500-byte packets):
  a    CUBIC, 100 Mbit/s, 40 ms, 60 s
  c    10 x CUBIC, 1 Gbit/s, 10 ms, 30 s
  d    BBRv1, 1 Gbit/s, 100 ms, 5 s (ns-3's BBR is slow at large windows; --d-seconds changes both)
  100g       bbrlab only: benchmarks/100g-8streams.toml (8 x BBRv3, 100 Gbit/s, 150 ms, 10 s)
  1000flows  bbrlab only: benchmarks/1000flows-50g.toml (1000 x bbr2_new, 50 Gbit/s, ECN, 10 s)
(--big adds the last two to the selection.)

Each run is one child process: ns-3's program, or this script again (``--child-bbrlab TOML``) running
bbrlab's Python API. Reported per side: simulation wall (ns-3's PERF wall_s, timing Simulator::Run();
bbrlab's summary["run"]["wall_s"], timing the core's event loop), the CPU time of that span (ns-3:
std::clock(); bbrlab: time.process_time()), the child's whole-process wall, data packets
delivered per simulation-wall second, events per delivered data packet, ns per event (wall),
aggregate goodput (the two should agree: they simulated the same thing) and the child's peak RSS
(wait4's ru_maxrss). With --repeat N each figure is the median of N pairs. The machine may be shared:
the load average before each pair is printed and kept in --json.

Progress goes to stderr, the table to stdout. Not part of the test suite (ns-3 is not a dependency).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NS3_DIR = ROOT / "bench" / "ns3"
NS3_PROGRAM = NS3_DIR / "dumbbell"
NS3_DEB_PACKAGES = ("libns3-dev", "g++", "pkg-config")
# An MSS of 1448 with IPv4, TCP and timestamp headers: both simulators' 1500-byte data packets.
MSS_BYTES = 1448
IP_PACKET_BYTES = 1500


@dataclass(frozen=True)
class Shared:
    """A scenario both simulators run: the drop-tail limit is the same number of packets on both
    (1 BDP of 1500-byte packets, rounded), so neither side's byte accounting can make them differ."""

    key: str
    title: str
    cc_bbrlab: str
    cc_ns3: str
    flows: int
    rate_bps: int
    rtt_ms: float
    duration_s: float

    @property
    def buffer_packets(self) -> int:
        return max(1, round(self.rate_bps * self.rtt_ms / 1e3 / 8 / IP_PACKET_BYTES))

    def ns3_args(self) -> list[str]:
        return [
            f"--cca={self.cc_ns3}",
            f"--flows={self.flows}",
            f"--bw={self.rate_bps}bps",
            f"--rtt={self.rtt_ms:g}",
            f"--buffer={self.buffer_packets}p",
            f"--duration={self.duration_s:g}",
        ]

    def toml(self) -> str:
        # Everything else is bbrlab's default, which is what the ns-3 program is set to (access
        # links 10 x the bottleneck, MSS 1448, IW 10, delayed ACK, min RTO 200 ms, SACK, PRR).
        return (
            f'name = "speed-{self.key}"\nduration = "{self.duration_s:g}s"\n'
            f'[topology]\nkind = "dumbbell"\n'
            f'bottleneck = {{ rate = "{self.rate_bps}bps", rtt = "{self.rtt_ms:g}ms", '
            f'buffer = "{self.buffer_packets}pkts" }}\n'
            f'[[flows]]\ncc = "{self.cc_bbrlab}"\ncount = {self.flows}\n'
        )


@dataclass(frozen=True)
class BbrlabOnly:
    """A large scenario from benchmarks/ (too slow for ns-3 on this machine)."""

    key: str
    title: str
    file: Path


def shared_scenarios(d_seconds: float) -> dict[str, Shared]:
    return {
        s.key: s
        for s in (
            Shared("a", "(a) CUBIC 100 Mbit/s 40 ms 1 BDP 60 s", "cubic", "TcpCubic", 1, 100_000_000, 40, 60),
            Shared("c", "(c) 10 CUBIC 1 Gbit/s 10 ms 1 BDP 30 s", "cubic", "TcpCubic", 10, 1_000_000_000, 10, 30),
            Shared(
                "d",
                f"(d) BBRv1 1 Gbit/s 100 ms 1 BDP {d_seconds:g} s",
                "bbr1",
                "TcpBbr",
                1,
                1_000_000_000,
                100,
                d_seconds,
            ),
        )
    }


BIG = {
    "100g": BbrlabOnly("100g", "8 x BBRv3, 100 Gbit/s, 150 ms, 10 s", ROOT / "benchmarks" / "100g-8streams.toml"),
    "1000flows": BbrlabOnly(
        "1000flows", "1000 x bbr2_new, 50 Gbit/s, 50 us, ECN, 10 s", ROOT / "benchmarks" / "1000flows-50g.toml"
    ),
}
DEFAULT_ONLY = ("a", "c", "d")


class UsageError(Exception):
    """Bad command-line input: one line, exit status 2."""


# ------------------------------------------------------------------ parsing


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]),
    )
    ap.add_argument("--only", default=None, help="comma-separated scenarios: a, c, d, 100g, 1000flows (default a,c,d)")
    ap.add_argument("--big", action="store_true", help="also run 100g and 1000flows (bbrlab only)")
    ap.add_argument("--repeat", default="1", help="pairs per scenario; figures are medians (default 1)")
    ap.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="write every run's figures to OUT")
    ap.add_argument("--d-seconds", default="5", help="simulated seconds of scenario (d) on both sides (default 5)")
    ap.add_argument("--ns3", default=str(NS3_PROGRAM), help=f"ns-3 program (default {NS3_PROGRAM.relative_to(ROOT)})")
    ap.add_argument("--build-ns3", action="store_true", help="build the ns-3 program first (bench/ns3/build.sh)")
    ap.add_argument(
        "--install-deps",
        action="store_true",
        help=f"with --build-ns3: apt-get install {' '.join(NS3_DEB_PACKAGES)} if they are missing",
    )
    ap.add_argument("--no-ns3", action="store_true", help="bbrlab only (no ns-3 program needed)")
    ap.add_argument("--child-bbrlab", default=None, metavar="TOML", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.repeat = _positive_int("--repeat", a.repeat)
    a.d_seconds = _positive_float("--d-seconds", a.d_seconds)
    a.only = parse_only(a.only, a.big)
    if a.install_deps and not a.build_ns3:
        raise UsageError("--install-deps: only with --build-ns3")
    return a


def _positive_int(flag: str, text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError(f"{flag}: expected a positive integer, got {text!r}")
    return n


def _positive_float(flag: str, text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        x = float("nan")
    if not x > 0 or x == float("inf"):
        raise UsageError(f"{flag}: expected a positive number of seconds, got {text!r}")
    return x


def parse_only(text: str | None, big: bool) -> list[str]:
    known = [*DEFAULT_ONLY, *BIG]
    keys = list(DEFAULT_ONLY) if text is None else [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in keys if k not in known]
    if bad or not keys:
        raise UsageError(f"--only: expected a comma-separated list of {', '.join(known)}, got {text!r}")
    if big:
        keys += [k for k in BIG if k not in keys]
    return list(dict.fromkeys(keys))


def parse_ns3_output(text: str) -> dict[str, float]:
    """The PERF and AGG lines of bench/ns3/dumbbell's output as numbers (the keys used below)."""
    lines = {ln.split(" ", 1)[0]: ln for ln in text.splitlines() if ln.split(" ", 1)[0] in ("PERF", "AGG")}
    if "PERF" not in lines or "AGG" not in lines:
        raise ValueError("ns-3's output has no PERF and AGG lines")

    def kv(line: str) -> dict[str, float]:
        out = {}
        for tok in line.split()[1:]:
            k, sep, v = tok.partition("=")
            if sep:
                out[k] = float(v)
        return out

    perf, agg = kv(lines["PERF"]), kv(lines["AGG"])
    try:
        # cpu_s: NaN from a program built before it printed one.
        return {
            "sim_wall_s": perf["wall_s"],
            "sim_cpu_s": perf.get("cpu_s", float("nan")),
            "events": perf["events"],
            "data_pkts_delivered": perf["data_pkts_delivered"],
            "goodput_bps": agg["goodput_Mbps"] * 1e6,
        }
    except KeyError as e:
        raise ValueError(f"ns-3's output lacks {e.args[0]}") from None


# ------------------------------------------------------------------ running


def _child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[str, float, int, int]:
    """Run one child to completion: (stdout, whole-process wall s, peak RSS bytes, exit status)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, preexec_fn=_die_with_parent)
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        if proc.returncode != 0:
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"{Path(cmd[0]).name} exited {proc.returncode}: {' | '.join(tail)}")
    # Linux reports ru_maxrss in KiB.
    return stdout, wall, ru.ru_maxrss * 1024, proc.returncode


def _die_with_parent() -> None:
    """In the child before exec: Linux sends it SIGKILL when this script dies, even by SIGKILL."""
    import ctypes
    import signal

    pr_set_pdeathsig = 1  # <linux/prctl.h>
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def run_ns3(program: Path, s: Shared) -> dict[str, float]:
    stdout, wall, rss, _ = _child([str(program), *s.ns3_args()])
    r = parse_ns3_output(stdout)
    return derived(r) | {"process_wall_s": wall, "peak_rss_bytes": rss}


def run_bbrlab(toml: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    stdout, wall, rss, _ = _child([sys.executable, str(Path(__file__).resolve()), "--child-bbrlab", str(toml)], env)
    r = json.loads(stdout.strip().splitlines()[-1])
    return derived(r) | {"process_wall_s": wall, "peak_rss_bytes": rss}


def bbrlab_baseline_rss() -> int:
    """Peak RSS of a child that imports what a bbrlab run imports and loads the core, then exits:
    the part of a bbrlab child's peak RSS that is Python, numpy and pandas, not the simulation."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    _, _, rss, _ = _child([sys.executable, str(Path(__file__).resolve()), "--child-bbrlab", BASELINE], env)
    return rss


BASELINE = "-"  # --child-bbrlab's argument for "import and load, run nothing"


def child_bbrlab(toml: str) -> None:
    """In the child: run the scenario through bbrlab's Python API (what ``bbrlab.engine.runner.run`` does,
    with the thread's CPU time taken around the simulation), print its figures as JSON."""
    from bbrlab.engine.runner import load_core, simulate
    from bbrlab.results.results import Result
    from bbrlab.scenario import load_scenario

    if toml == BASELINE:
        load_core()
        return
    scenario = load_scenario(toml)
    config = scenario.resolve()
    cpu0 = time.process_time()  # the whole process, as std::clock() on the ns-3 side
    raw, wall_s, core_version = simulate(config, None, scenario)
    cpu_s = time.process_time() - cpu0
    res = Result.from_core(scenario, raw, wall_s=wall_s, core_version=core_version)
    run_ = res.summary["run"]
    if not run_.get("complete", True):
        raise SystemExit(f"bench_speed: {toml} did not run to its end")
    print(
        json.dumps(
            {
                "sim_wall_s": run_["wall_s"],
                "sim_cpu_s": cpu_s,
                "events": run_["events"],
                "data_pkts_delivered": run_["data_packets_delivered"],
                "goodput_bps": res.summary["aggregate"]["goodput_bps"],
            }
        )
    )


def derived(r: dict[str, float]) -> dict[str, float]:
    pkts, events, wall = r["data_pkts_delivered"], r["events"], r["sim_wall_s"]
    cpu = r.get("sim_cpu_s", float("nan"))
    return dict(
        r,
        pkts_per_wall_s=pkts / wall if wall > 0 else float("nan"),
        pkts_per_cpu_s=pkts / cpu if cpu > 0 else float("nan"),
        events_per_pkt=events / pkts if pkts else float("nan"),
        ns_per_event=wall * 1e9 / events if events else float("nan"),
    )


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def build_ns3(program: Path, install_deps: bool) -> None:
    if install_deps and not _ns3_dev_present():
        progress(f"installing {' '.join(NS3_DEB_PACKAGES)} (apt-get)")
        subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", *NS3_DEB_PACKAGES], check=True, stdout=sys.stderr
        )
    progress(f"building {program}")
    subprocess.run(["sh", str(NS3_DIR / "build.sh"), str(program)], check=True, stdout=sys.stderr)


def _ns3_dev_present() -> bool:
    return (
        shutil.which("pkg-config") is not None
        and subprocess.run(
            ["pkg-config", "--exists", "ns3-core"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        ).returncode
        == 0
    )


def source_commit() -> str:
    """The commit of this checkout, "+dirty" when it has changes (what the figures were measured on)."""

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ report


def fmt_si(x: float, unit: str = "") -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}".rstrip()
    return f"{x:.3g} {unit}".rstrip()


def table(results: dict[str, dict[str, Any]]) -> str:
    rows = [
        (
            "scenario",
            "side",
            "sim wall",
            "sim CPU",
            "process wall",
            "ratio wall",
            "ratio CPU",
            "data pkts/s",
            "events/pkt",
            "ns/event",
            "goodput",
            "peak RSS",
        )
    ]
    for key, r in results.items():
        sides = [("ns-3", r.get("ns3")), ("bbrlab", r["bbrlab"])]
        ratio, cpu_ratio = r.get("ratio"), r.get("cpu_ratio")
        first = True
        for side, m in sides:
            if m is None:
                continue
            rows.append(
                (
                    key if first else "",
                    side,
                    f"{m['sim_wall_s']:.4g} s",
                    f"{m['sim_cpu_s']:.4g} s",
                    f"{m['process_wall_s']:.2f} s",
                    f"{ratio:.0f}x" if ratio and side == "bbrlab" else "",
                    f"{cpu_ratio:.0f}x" if cpu_ratio and cpu_ratio == cpu_ratio and side == "bbrlab" else "",
                    fmt_si(m["pkts_per_wall_s"]),
                    f"{m['events_per_pkt']:.2f}",
                    f"{m['ns_per_event']:.0f}",
                    fmt_si(m["goodput_bps"], "bit/s"),
                    fmt_si(m["peak_rss_bytes"], "B"),
                )
            )
            first = False
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in rows
    )


# ------------------------------------------------------------------ main


def main(argv: list[str]) -> int:
    try:
        a = parse_args(argv)
    except UsageError as e:
        print(f"bench_speed: {e}", file=sys.stderr)
        return 2
    if a.child_bbrlab:
        child_bbrlab(a.child_bbrlab)
        return 0
    shared = shared_scenarios(a.d_seconds)
    program = Path(a.ns3)
    need_ns3 = not a.no_ns3 and any(k in shared for k in a.only)
    if need_ns3 and a.build_ns3:
        build_ns3(program, a.install_deps)
    if need_ns3 and not os.access(program, os.X_OK):
        print(
            f"bench_speed: the ns-3 program {program} is missing; build it with --build-ns3 "
            f"(--install-deps also apt-get installs {' '.join(NS3_DEB_PACKAGES)}), or run bbrlab alone with --no-ns3",
            file=sys.stderr,
        )
        return 2
    loads: list[tuple[str, int, tuple[float, float, float]]] = []
    runs: dict[str, dict[str, list[dict[str, float]]]] = {k: {"ns3": [], "bbrlab": []} for k in a.only}
    with tempfile.TemporaryDirectory(prefix="bbrlab-speed-") as tmp:
        tomls = {}
        for k in a.only:
            if k in shared:
                tomls[k] = Path(tmp) / f"{k}.toml"
                tomls[k].write_text(shared[k].toml())
            else:
                tomls[k] = BIG[k].file
        # Interleaved: every repeat runs each scenario's pair back to back, so a change in the
        # machine's load hits both sides of a pair alike.
        for i in range(a.repeat):
            for k in a.only:
                load = os.getloadavg()
                loads.append((k, i, load))
                progress(f"{k} repeat {i + 1}/{a.repeat}: load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
                if k in shared and not a.no_ns3:
                    progress(f"{k}: ns-3 {' '.join(shared[k].ns3_args())}")
                    m = run_ns3(program, shared[k])
                    runs[k]["ns3"].append(m)
                    progress(f"{k}: ns-3 {m['sim_wall_s']:.2f} s, {fmt_si(m['pkts_per_wall_s'])} pkts/s")
                progress(f"{k}: bbrlab {tomls[k].name if k in shared else tomls[k]}")
                m = run_bbrlab(tomls[k])
                runs[k]["bbrlab"].append(m)
                progress(f"{k}: bbrlab {m['sim_wall_s']:.3f} s, {fmt_si(m['pkts_per_wall_s'])} pkts/s")
    baseline_rss = bbrlab_baseline_rss()
    results: dict[str, dict[str, Any]] = {}
    for k in a.only:
        r: dict[str, Any] = {
            "title": shared[k].title if k in shared else BIG[k].title,
            "bbrlab": median_of(runs[k]["bbrlab"]),
        }
        if runs[k]["ns3"]:
            r["ns3"] = median_of(runs[k]["ns3"])
            # The ratio of the medians of each pair's simulation walls.
            # Each pair's ratio, then their median; by wall and by CPU time (on a loaded machine
            # the CPU ratio is the steadier: a short bbrlab run and a long ns-3 run see different load).
            pairs = list(zip(runs[k]["ns3"], runs[k]["bbrlab"]))
            r["ratio"] = statistics.median(n["sim_wall_s"] / b["sim_wall_s"] for n, b in pairs)
            r["cpu_ratio"] = statistics.median(n["sim_cpu_s"] / b["sim_cpu_s"] for n, b in pairs)
        results[k] = r
    commit = source_commit()
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, commit {commit}, {a.repeat} pair(s) per scenario, "
        f"load average {min(x[2][0] for x in loads):.2f}-{max(x[2][0] for x in loads):.2f} (1 min) before the pairs"
    )
    for k, r in results.items():
        print(f"# {k}: {r['title']}")
    print(table(results))
    print(
        f"# bbrlab's peak RSS includes {fmt_si(baseline_rss, 'B')} of Python, numpy, pandas and the core loaded "
        f"(a child that runs nothing); ns-3's is the whole program"
    )
    if a.json_out:
        doc = {
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "repeat": a.repeat,
            "commit": commit,
            "bbrlab_baseline_rss_bytes": baseline_rss,
            "load_average": [{"scenario": k, "repeat": i, "load": list(load)} for k, i, load in loads],
            "scenarios": {
                k: dict(
                    results[k],
                    **(
                        {"ns3_args": shared[k].ns3_args(), "bbrlab_toml": shared[k].toml()}
                        if k in shared
                        else {"bbrlab_toml_file": str(BIG[k].file.relative_to(ROOT))}
                    ),
                    runs=runs[k],
                )
                for k in a.only
            },
        }
        Path(a.json_out).write_text(json.dumps(doc, indent=1) + "\n")
        progress(f"wrote {a.json_out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
    except (RuntimeError, ValueError, subprocess.CalledProcessError) as e:
        print(f"bench_speed: {e}", file=sys.stderr)
        sys.exit(1)
