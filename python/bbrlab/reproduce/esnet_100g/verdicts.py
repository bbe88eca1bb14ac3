"""The ESnet BBRv3 slides' notes checked on the esnet-100g study's numbers: the throughput,
consistency and retransmit notes per path, the buffer-axis conclusion ("only minor improvements"),
whether the host model alone reproduces the slides' throughputs, and the packet-gap notes. Each
function returns the `Claim`s that the report tabulates and the claims index collects."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ...results.display import fmt_bps
from ..analysis import row
from ..claims import Claim, Num, cell, check, check_within, num, pct, times, untested, verdict, verdict_of_all
from .plan import BBR, CC_SEED, SEED_4X10G, SEED_100G, Plan

#: A host-model cell agrees with the slides within this many of their standard deviations.
HOST_SIGMAS = 2.0


def _gbit(bps: float) -> str:
    """A throughput in a reason: three significant digits, "45.0 Gbit/s"."""
    return fmt_bps(bps, sig=3)


def _us(ns: float) -> str:
    return f"{ns / 1e3:.3g} µs"


#: "Barely changed": the slides' CUBIC pacing effect on the 4×10G path is +1.4 %.
PACING_EFFECT_MAX = 0.10


#: One configuration the path claims compare: (streams, pacing cap in Gbit/s, BBR's row, CUBIC's row).
Pair = tuple[int, float, pd.Series, pd.Series]
#: One of the slides' tables (plan.py): (streams, cc, pacing Gbit/s) -> (tput Gbit/s, stddev, n, retransmits).
Slides = dict[tuple[int, str, float], tuple[float, float, int, int]]


def claims(s: pd.DataFrame, cap: float, path: str, where: str = "", **sel: Any) -> list[Claim]:
    """The slides' notes on the 100G table, checked on one path's numbers (100G: per buffer, named
    in ``where``). The 4×10G path gets the same checks; the slides note only its throughput there."""

    def r(cc: str, streams: int, c: float) -> pd.Series | None:
        return row(s, cc_name=cc, streams=streams, cap_gbps=c, **sel)

    found = [(streams, c, r(BBR, streams, c), r("cubic", streams, c)) for streams, c in ((1, 0.0), (8, 0.0), (8, cap))]
    pairs = [(st, c, b, cu) for st, c, b, cu in found if b is not None and cu is not None]
    noted = "" if path == "100G" else " (noted for 100G)"
    seed = SEED_100G if path == "100G" else SEED_4X10G
    return [
        _throughput_claim(path, where, pairs, seed),
        _consistency_claim(path, noted, where, pairs, seed),
        _retransmits_claim(path, noted, where, pairs, seed),
        _pacing_claim(r("cubic", 8, 0.0), r("cubic", 8, cap), cap, path, noted, where, seed),
    ]


def _config(streams: int, c: float) -> str:
    """A configuration as the value cells label it."""
    return f"{streams} stream{'s' if streams > 1 else ''}, pacing {c:g}"


def _point(streams: int, c: float) -> str:
    """A configuration where a reason names it (`_config` is the value cells' label)."""
    return f"{streams} stream{'s' if streams > 1 else ''} " + (f"paced at {c:g} Gbit/s" if c else "unpaced")


def _items(which: list[Pair], col: str, scale: float, unit: str) -> list[Num]:
    """Our ``col`` (× ``scale``, in ``unit``) of BBR and CUBIC in each configuration of ``which``."""
    return [
        num(x[col] * scale, unit, label=f"{_config(st, c)} {cc}")
        for st, c, b, cu in which
        for cc, x in ((CC_SEED[BBR], b), ("cubic", cu))
    ]


def _slides(seed: Slides, which: list[Pair], i: int, unit: str) -> str:
    """The slides' ``i``-th number (0: throughput, 1: stddev) of BBR and CUBIC in each configuration of ``which``."""
    return cell(
        num(seed[(st, cc, c)][i], unit, label=f"{_config(st, c)} {CC_SEED[cc]}")
        for st, c, *_ in which
        for cc in (BBR, "cubic")
    )


def _throughput_claim(path: str, where: str, pairs: list[Pair], seed: Slides) -> Claim:
    """BBR's throughput above CUBIC's in every configuration (on the 4×10G path, by 1.5× at least)."""
    factor = 1.0 if path == "100G" else 1.5
    return Claim(
        f"{path}: throughput {'slightly' if path == '100G' else 'considerably'} better with BBR{where}",
        "slightly better" if path == "100G" else "considerably better",
        "; ".join(
            f"{_config(st, c)}: {b['tput_mean'] / 1e9:.1f} vs {cu['tput_mean'] / 1e9:.1f} Gbit/s"
            for st, c, b, cu in pairs
        ),
        "BBR above CUBIC in every configuration" if factor == 1 else "BBR ≥ 1.5× CUBIC in every configuration",
        verdict_of_all(
            check(
                b["tput_mean"],
                ">",
                factor * cu["tput_mean"],
                "BBR {} vs CUBIC {limit}" if factor == 1 else f"BBR {{}} vs {factor:g} × CUBIC's = {{limit}}",
                _gbit,
                where=_point(st, c),
            )
            for st, c, b, cu in pairs
        ),
        paper_value=_slides(seed, pairs, 0, "Gbit/s"),
        bbrlab_value=cell(_items(pairs, "tput_mean", 1e-9, "Gbit/s")),
    )


def _consistency_claim(path: str, noted: str, where: str, pairs: list[Pair], seed: Slides) -> Claim:
    """BBR's standard deviation below CUBIC's with 8 streams."""
    eight = [x for x in pairs if x[0] == 8]
    return Claim(
        f"{path}: results more consistent for BBR (stddev lower) with 8 streams{noted}{where}",
        "yes",
        "; ".join(
            f"{_config(st, c)}: stddev {b['tput_std'] / 1e9:.2f} vs {cu['tput_std'] / 1e9:.2f} Gbit/s"
            for st, c, b, cu in pairs
        ),
        "BBR's stddev below CUBIC's in both 8-stream configurations",
        verdict_of_all(
            check(b["tput_std"], "<", cu["tput_std"], "BBR's stddev {} vs CUBIC's {limit}", _gbit, where=_point(st, c))
            for st, c, b, cu in eight
        ),
        paper_value=_slides(seed, eight, 1, "Gbit/s"),
        bbrlab_value=cell(_items(eight, "tput_std", 1e-9, "Gbit/s")),
    )


def _retransmits_claim(path: str, noted: str, where: str, pairs: list[Pair], seed: Slides) -> Claim:
    """BBR's retransmits about 10× CUBIC's in every configuration."""
    ratios = [(st, c, b["retr_mean"] / cu["retr_mean"] if cu["retr_mean"] > 0 else math.inf) for st, c, b, cu in pairs]
    return Claim(
        f"{path}: BBR typically has about 10× more retransmits than CUBIC{noted}{where}",
        "about 10×",
        "; ".join(f"{_config(st, c)}: {x:.1f}×" for st, c, x in ratios),
        "BBR / CUBIC retransmits between 3× and 30× in every configuration",
        verdict_of_all(
            check_within(x, 3, 30, "BBR/CUBIC retransmits {}", times, where=_point(st, c)) for st, c, x in ratios
        ),
        paper_value=cell(
            num(seed[(st, BBR, c)][3] / seed[(st, "cubic", c)][3], "×", label=_config(st, c)) for st, c, *_ in pairs
        ),
        bbrlab_value=cell(num(x, "×", label=_config(st, c)) for st, c, x in ratios),
    )


def _pacing_claim(
    cu0: pd.Series | None, cuc: pd.Series | None, cap: float, path: str, noted: str, where: str, seed: Slides
) -> Claim:
    """8 CUBIC streams unpaced (``cu0``) against capped at ``cap`` (``cuc``); not tested where either is not run."""
    claim = f"{path}: pacing helps parallel CUBIC flows{noted}{where}"
    paper = (seed[(8, "cubic", 0.0)][0], seed[(8, "cubic", cap)][0])
    source = f"{paper[0]:.1f} → {paper[1]:.1f} Gbit/s"
    paper_value = cell(num(paper[0], "Gbit/s", label="8-stream cubic unpaced → capped", to=paper[1]))
    if cu0 is None or cuc is None:
        return untested(claim, source, "capped above unpaced", "8-stream CUBIC not run", paper_value=paper_value)
    return Claim(
        claim,
        source,
        f"8-stream CUBIC: {cu0['tput_mean'] / 1e9:.1f} Gbit/s unpaced → {cuc['tput_mean'] / 1e9:.1f} Gbit/s with "
        f"the {cap:g} Gbit/s cap",
        "capped above unpaced",
        verdict(check(cuc["tput_mean"], ">", cu0["tput_mean"], "capped {} vs unpaced {limit}", _gbit)),
        paper_value=paper_value,
        bbrlab_value=cell(
            num(
                cu0["tput_mean"] / 1e9,
                "Gbit/s",
                label="8-stream cubic unpaced → capped",
                to=cuc["tput_mean"] / 1e9,
            )
        ),
    )


#: The slides' conclusion on the buffer axis: BBRv3's gain over CUBIC is "minor" on clean paths with
#: large buffers; we call a gain minor below this fraction.
MINOR_GAIN = 0.2


def buffer_claims(a: pd.DataFrame, buffers_ms: tuple[float, ...]) -> list[Claim]:
    """The slides' conclusion ("only minor improvements … on clean paths with large buffered
    devices"), on the 100G path's buffers: testable only when the study runs more than one."""
    claim = "100G: only a minor BBRv3 gain over CUBIC with a large buffer (slides' conclusion)"
    rule = (
        f"8 unpaced streams: BBR/CUBIC − 1 below {MINOR_GAIN:.0%} with the deepest buffer and smaller than with "
        "the shallowest"
    )
    if len(buffers_ms) < 2:
        return [
            untested(
                claim,
                "minor improvements",
                rule,
                f"one buffer ({buffers_ms[0]:g} ms) in this configuration; `Plan.buffers_ms` can add a deep one",
                paper_value="minor improvements",
            )
        ]
    lo, hi = min(buffers_ms), max(buffers_ms)
    gain = {}
    for buf in (lo, hi):
        b, c = (row(a, cc_name=cc, streams=8, cap_gbps=0.0, buffer_ms=buf) for cc in (BBR, "cubic"))
        gain[buf] = b["tput_mean"] / c["tput_mean"] - 1 if b is not None and c is not None else math.nan
    return [
        Claim(
            claim,
            "minor improvements",
            f"BBR/CUBIC − 1: {gain[lo]:+.0%} ({lo:g} ms buffer), {gain[hi]:+.0%} ({hi:g} ms buffer)",
            rule,
            verdict_of_all(
                [
                    check(gain[hi], "<", MINOR_GAIN, f"gain {{}} with the {hi:g} ms buffer", pct),
                    check(gain[hi], "<", gain[lo], f"gain {{}} with {hi:g} ms vs {{limit}} with {lo:g} ms", pct),
                ]
            ),
            paper_value="minor improvements",
            bbrlab_value=cell(num(100 * gain[buf], "%", label=f"gain {buf:g} ms buffer") for buf in (lo, hi)),
        )
    ]


def host_claims(h: pd.DataFrame, p: Plan) -> list[Claim]:
    """Do the hosts alone (no fitted loss or window) give the slides' throughputs? Per path: every
    cell within HOST_SIGMAS of the slides' standard deviation; and the 4×10G pacing effect."""
    out = []
    scale = p.rate_scale
    for path, seed in (("100G", SEED_100G), ("4x10G", SEED_4X10G)):
        parts, oks, items, paper = [], [], [], []
        for (streams, cc, pace), (t, sd, _n, _rx) in seed.items():
            r = row(h, path=path, cc_name=cc, streams=streams, cap_gbps=pace)
            if r is None:
                continue
            ours = r["tput_mean"] / 1e9 / scale  # back to the slides' scale
            parts.append(f"{streams}×{CC_SEED[cc]} pacing {pace:g}: {ours:.1f} vs {t:.1f}")
            oks.append(
                check_within(
                    ours,
                    t - HOST_SIGMAS * sd,
                    t + HOST_SIGMAS * sd,
                    "{}",
                    "Gbit/s",
                    where=f"{streams}×{CC_SEED[cc]} pacing {pace:g}",
                )
            )
            items.append(num(ours, "Gbit/s", label=f"{streams} {CC_SEED[cc]} {pace:g}"))
            paper.append(num(t, "Gbit/s", label=f"{streams} {CC_SEED[cc]} {pace:g}"))
        out.append(
            Claim(
                f"{path}: the hosts alone give the slides' throughputs (host model, no fitted loss or window)",
                "table",
                "; ".join(parts) + " Gbit/s" + (f" (scaled back by 1/{scale:g})" if scale != 1 else ""),
                f"every cell within the slides' mean ± {HOST_SIGMAS:g} stddev",
                verdict_of_all(oks),
                paper_value=cell(paper),
                bbrlab_value=cell(items),
            )
        )
    unp = row(h, path="4x10G", cc_name="cubic", streams=8, cap_gbps=0.0)
    pac = row(h, path="4x10G", cc_name="cubic", streams=8, cap_gbps=11.0)
    t0, t1 = SEED_4X10G[(8, "cubic", 0.0)][0], SEED_4X10G[(8, "cubic", 11.0)][0]
    claim = "4×10G: pacing 8 CUBIC streams at 11 Gbit/s barely changes their throughput (host model)"
    rule = f"relative change within ±{PACING_EFFECT_MAX:.0%}"
    if unp is None or pac is None:
        out.append(untested(claim, f"{t0} → {t1} Gbit/s", rule, "not run", paper_value=cell(num(t0, "Gbit/s", to=t1))))
    else:
        a, b = unp["tput_mean"] / 1e9 / scale, pac["tput_mean"] / 1e9 / scale
        out.append(
            Claim(
                claim,
                f"{t0} → {t1} Gbit/s ({(t1 / t0 - 1) * 100:+.1f} %)",
                f"{a:.2f} → {b:.2f} Gbit/s ({(b / a - 1) * 100:+.1f} %)",
                rule,
                verdict(check_within(b / a - 1, -PACING_EFFECT_MAX, PACING_EFFECT_MAX, "paced − unpaced {}", pct)),
                paper_value=cell(num(t0, "Gbit/s", to=t1)),
                bbrlab_value=cell(num(a, "Gbit/s", to=b)),
            )
        )
    return out


def gap_claims(gs: pd.DataFrame) -> list[Claim]:
    """The slides' notes on the packet-gap histograms, checked on ours."""

    def g(cc: str, cap: float) -> pd.Series | None:
        return row(gs, cc=cc, cap_gbps=cap)

    bu, cu, cp = g(BBR, 0.0), g("cubic", 0.0), g("cubic", 10.0)

    def gaps(label: str, r: pd.Series) -> list[Num]:
        return [
            num(100 * r["b2b"], "%", label=f"{label} back-to-back"),
            num(r["median_ns"] / 1e3, "µs", label=f"{label} median gap at most"),
        ]

    out = []
    claim, rule = (
        "BBR unpaced is similar to CUBIC paced",
        "back-to-back shares within 10 points and median gaps within 2×",
    )
    if bu is not None and cp is not None:
        out.append(
            Claim(
                claim,
                "yes",
                f"back-to-back gaps {bu['b2b'] * 100:.1f} % vs {cp['b2b'] * 100:.1f} %; median gap "
                f"≤ {bu['median_ns'] / 1e3:.3g} vs ≤ {cp['median_ns'] / 1e3:.3g} µs",
                rule,
                verdict_of_all(
                    [
                        check_within(
                            bu["b2b"] - cp["b2b"],
                            -0.10,
                            0.10,
                            "back-to-back share differs by {}",
                            lambda x: f"{100 * x:+.1f} points".replace("-", "−"),
                        ),
                        check_within(bu["median_ns"] / cp["median_ns"], 0.5, 2, "median gap ratio {}", times),
                    ]
                ),
                paper_value="similar",
                bbrlab_value=cell(gaps("bbr unpaced", bu) + gaps("cubic paced", cp)),
            )
        )
    else:
        out.append(untested(claim, "yes", rule, "no gaps recorded", paper_value="similar"))
    claim, rule = "BBR packet gaps are larger than CUBIC's on the send host", "BBR's median gap above CUBIC's, unpaced"
    if bu is not None and cu is not None:
        out.append(
            Claim(
                claim,
                "yes",
                f"unpaced: median gap ≤ {bu['median_ns'] / 1e3:.3g} vs ≤ {cu['median_ns'] / 1e3:.3g} µs, "
                f"back-to-back {bu['b2b'] * 100:.1f} % vs {cu['b2b'] * 100:.1f} %",
                rule,
                verdict(
                    check(bu["median_ns"], ">", cu["median_ns"], "BBR's median gap ≤ {} vs CUBIC's ≤ {limit}", _us)
                ),
                paper_value="larger",
                bbrlab_value=cell(gaps("bbr unpaced", bu) + gaps("cubic unpaced", cu)),
            )
        )
    else:
        out.append(untested(claim, "yes", rule, "no gaps recorded", paper_value="larger"))
    return out
