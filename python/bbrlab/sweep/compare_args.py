"""What `bbrlab compare` and ``bbrlab.compare`` read from their options, without the comparison's
imports (the CLI loads this module at start-up): the grid in the one grid language, and the
overrides of a head-to-head run."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UserError

__all__ = ["compare_grid", "head_to_head"]


def compare_grid(grid: Sequence[str]) -> tuple[list[str], list[str]]:
    """``--grid`` options in the one grid language (sweep.aliases: short names or full paths) as
    the short axes run_compare takes, and the algorithms of a ``cc=A,B`` axis."""
    from ..emu.compare import AXES  # pandas: imported when called
    from .aliases import ALIASES, resolve_axis, short_name

    if list(grid) == ["fidelity"]:
        return ["fidelity"], []
    out, ccs = [], []
    for g in grid:
        name, sep, values = g.partition("=")
        path = resolve_axis(name)
        if sep and path == ALIASES["cc"]:
            ccs += [v.strip() for v in values.split(",") if v.strip()]
            continue
        short = short_name(path)
        if sep and short not in AXES:
            known = ", ".join(f"{a} ({ALIASES[a]})" for a in AXES)
            raise UserError(f"--grid {name.strip()}: compare's axes are {known} and cc; `bbrlab sweep` takes any field")
        out.append(f"{short}={values}" if sep else g)
    return out, ccs


def head_to_head(scenario: str, sets: Sequence[str], ccs: Sequence[str]) -> list[str]:
    """The overrides that put ``ccs`` in one run: flow i gets ccs[i % len(ccs)]; flows are added
    (the algorithm set, every other field at its default) while there are fewer flows than algorithms."""
    from ..scenario import load_scenario
    from ..scenario.overrides import add_flow_override

    if len(ccs) < 2:
        raise UserError("--head-to-head: give at least two algorithms, e.g. --cc bbr3 --cc cubic")
    flows = len(load_scenario(scenario, overrides=list(sets)).flows)
    out = [f"flows.{i}.cc={ccs[i % len(ccs)]}" for i in range(flows)]
    out += [add_flow_override(f"cc={cc}") for cc in ccs[flows:]]
    return out
