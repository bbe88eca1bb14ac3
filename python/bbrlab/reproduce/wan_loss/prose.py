"""The wan-loss report's computed prose: what the blog's comparison shows at 140 ms (the loss-free
plateau against the receive window, CUBIC against the Mathis bound and BBR's lead under random loss,
what the 6 MiB receive buffer costs BBRv1, and BBRv3's loss response), every statement computed from
the numbers rather than written in advance."""

from __future__ import annotations

import math

import pandas as pd

from ..analysis import value
from ..report import MSS
from ..sentences import reproduces
from .plan import BLOG_140MS, BLOG_CEILING_BPS, WINDOW_LIMIT_BPS
from .verdicts import FAR_AHEAD, _goodput, _rate, claims


def _commentary(a: pd.DataFrame, dur: float) -> str:
    """What the comparison shows, computed from the numbers rather than written in advance."""
    limit = WINDOW_LIMIT_BPS
    blog = dict(rtt_ms=140, buffers="blog")
    unl = dict(rtt_ms=140, buffers="unlimited")
    c0, b0 = _goodput(a, cc="cubic", loss_pct=0.0, **blog), _goodput(a, cc="bbr1", loss_pct=0.0, **blog)
    cu0, bu0 = _goodput(a, cc="cubic", loss_pct=0.0, **unl), _goodput(a, cc="bbr1", loss_pct=0.0, **unl)
    c15, b15, bu15 = (
        _goodput(a, cc="cubic", loss_pct=1.5, **blog),
        _goodput(a, cc="bbr1", loss_pct=1.5, **blog),
        _goodput(a, cc="bbr1", loss_pct=1.5, **unl),
    )
    mathis = MSS * 8 / 0.140 * math.sqrt(1.5 / 0.015)
    near = [name for name, v in (("CUBIC", c0), ("BBRv1", b0)) if v >= 0.8 * limit]
    if len(near) == 2:
        head, window = (
            "**The loss-free plateau is the receive window.**",
            "Both algorithms come within 20 % of the window limit, as in the blog.",
        )
    elif near:
        head, window = (
            "**The loss-free plateau.**",
            f"Only {near[0]} comes within 20 % of the window limit; in the blog both did.",
        )
    else:
        head, window = (
            "**The loss-free plateau.**",
            "Neither algorithm comes within 20 % of the window limit; in the blog both did.",
        )
    if "retransmits" in a:
        lost = sum(value(a, "retransmits", cc=cc, loss_pct=0.0, **blog) for cc in ("cubic", "bbr1"))
        start = (
            "slow start fills it without a loss"
            if lost == 0
            else f"slow start overflows it ({lost:,.0f} retransmissions in the two loss-free runs)"
        )
    else:
        start = "slow start fills it"
    ahead = claims(a)[-1]
    if not math.isfinite(bu15) or not math.isfinite(b15):
        rcvbuf = ""
    elif b15 < 0.9 * bu15:
        rcvbuf = (
            f" The 6 MiB receive buffer costs BBRv1 {1 - b15 / bu15:.0%} here: with loss it also holds "
            "out-of-order data behind each hole, so the usable window shrinks below 6 MiB; how much depends on "
            "the kernel's receive-buffer accounting (`tcp_adv_win_scale`, truesize overhead), which the model "
            "approximates by counting only the out-of-order bytes."
        )
    else:
        rcvbuf = " The 6 MiB receive buffer costs BBRv1 less than 10 % here."
    out = [
        f"{head} 6 MiB per 140 ms is {_rate(limit)} of window. "
        f"With the blog's buffers BBRv1 delivers {_rate(b0)} ({b0 / limit:.0%} of that limit; the blog: 340 Mbit/s) "
        f"and CUBIC {_rate(c0)} ({c0 / limit:.0%}) over {dur:g} s. With unlimited buffers BBRv1 fills "
        f"{bu0 / BLOG_CEILING_BPS:.0%} of the {_rate(BLOG_CEILING_BPS)} ceiling and CUBIC reaches {_rate(cu0)}. The "
        f"queue is the sending host's (module docstring), so {start}. {window}",
        f"**Random loss.** At 1.5 % CUBIC delivers {_rate(c15)}, {c15 / mathis:.1f}× the Mathis bound "
        f"({_rate(mathis)} at 140 ms) — the blog measured 1.23 Mbit/s. BBRv1 delivers {_rate(bu15)} with unlimited "
        f"buffers ({bu15 / BLOG_CEILING_BPS:.0%} of the ceiling) and {_rate(b15)} with the blog's 6 MiB "
        f"receive buffer (the blog: 153 Mbit/s), {b15 / c15:,.1f}× CUBIC's: bbrlab {reproduces(ahead.verdict)} the "
        f"blog's finding that BBR keeps far more than CUBIC under loss (≥ {FAR_AHEAD:g}×; the blog: "
        f"{BLOG_140MS[3][3] / BLOG_140MS[2][3]:.0f}×).{rcvbuf}",
    ]
    b3 = _goodput(a, cc="bbr3", loss_pct=1.5, **unl)
    if b3 == b3:
        if b3 < 0.5 * bu15:
            out.append(
                f"**BBRv3 is not BBRv1 under random loss.** At 1.5 % it keeps {_rate(b3)} at 140 ms ({b3 / bu15:.0%} "
                "of BBRv1's): its loss model treats a round with more than 2 % loss as a signal (LossThresh), and with "
                "1.5 % random loss many rounds exceed 2 % by chance, cutting inflight_longterm by β = 0.7 each time. "
                "The draft's design tolerates about 1 % random loss; BBRv1 ignores loss entirely (until its 20 % "
                "policer threshold)."
            )
        else:
            out.append(
                f"**BBRv3 under random loss.** At 1.5 % it keeps {_rate(b3)} at 140 ms ({b3 / bu15:.0%} of BBRv1's)."
            )
    return "\n\n".join(out)
