"""Which congestion control each flow's socket runs, and its registration for the run.

A registry algorithm with a BPF port runs the port (built and registered per run, :mod:`bbrlab.emu.bpf`),
so results do not depend on the modules a machine happens to have; any other name maps to the
kernel's own module. Planning (:func:`plan_algorithms`) is separate from registering
(:func:`registered_algorithms`) so that a name this kernel cannot run is refused before the
testbed is built.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.algorithms import lookup
from ..errors import ScenarioError
from ..scenario.fields import kernel_module
from . import bpf
from .plan import is_udp
from .traffic import linux_cc_name

__all__ = ["CcPlan", "kernel_algorithms", "plan_algorithms", "registered_algorithms"]

# Names tried when registering a BPF congestion control before giving up (see registered_algorithms).
REGISTER_ATTEMPTS = 5


def kernel_algorithms() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


@dataclass
class CcPlan:
    """How the run's algorithms reach the kernel: ``bpf`` are scenario names run as this
    package's BPF ports (registered for the run, :mod:`bbrlab.emu.bpf`), ``stock`` maps the
    others to the kernel's own names (the registry's kernel_name, or NAME of ``kernel:NAME``)."""

    bpf: list[str] = field(default_factory=list)
    stock: dict[str, str] = field(default_factory=dict)
    ecn: set[str] = field(default_factory=set)  # scenario names that need ECN


def plan_algorithms(cfg: dict[str, Any]) -> CcPlan:
    """Which flows run a BPF port and which a stock kernel algorithm; ScenarioError (one line,
    naming the flow's field) for a name this kernel cannot run. Every registry algorithm with a
    BPF port (``bpf.ported()``) runs the port, so results do not depend on the modules a machine
    happens to have; ``kernel:NAME`` asks for the kernel's own module instead."""
    avail = kernel_algorithms()
    ported = bpf.ported()
    plan = CcPlan()
    for f in cfg["flows"]:
        cc, where = f["cc"], f"flows.{f['spec']}.cc"
        if is_udp(f):
            continue  # bbrlab's own transport runs it (udptraffic.py); checked by check_udp_flows
        module = kernel_module(cc)
        alg = lookup(cc) if module is None else None
        if alg is not None and alg.needs_ecn:
            plan.ecn.add(cc)
        if alg is not None and alg.name in ported:
            if cc not in plan.bpf:
                plan.bpf.append(cc)
            continue
        name = module if module is not None else linux_cc_name(cc)
        if avail and name not in avail:
            ports = f"; bbrlab's BPF ports: {', '.join(sorted(ported))}" if ported else ""
            raise ScenarioError(
                where,
                f'"{cc}" is not available in this kernel (tcp_available_congestion_control: {" ".join(avail)}{ports})',
            )
        plan.stock[cc] = name
    return plan


def _port_name(cc: str) -> str:
    """The registry name of a flow's BPF port (plan_algorithms plans only registry algorithms)."""
    alg = lookup(cc)
    assert alg is not None, cc
    return alg.name


@contextlib.contextmanager
def registered_algorithms(plan: CcPlan) -> Any:
    """Build and register the plan's BPF ports for the duration of the ``with`` block; yields
    scenario name -> the kernel name every flow's socket asks for, the registrations' facts, and
    scenario name -> the registration of each port that exports its phases (read per socket).
    Each port is registered under a unique name through a link this process holds (unregistered
    on leaving the block, and by the kernel if the process dies)."""
    from .bpf.build import build
    from .bpf.loader import NameTaken, StructOpsLink, run_ca_name

    objects = {cc: build(_port_name(cc)) for cc in plan.bpf}
    names = dict(plan.stock)
    facts: dict[str, Any] = {}
    phase_ports: dict[str, StructOpsLink] = {}
    with contextlib.ExitStack() as stack:
        for cc, obj in objects.items():
            # A name is unique to this process (pid and a counter); another process whose pid
            # matches in its last 4 digits could hold it: take the next.
            for attempt in range(REGISTER_ATTEMPTS):
                try:
                    link = stack.enter_context(StructOpsLink(obj, run_ca_name(_port_name(cc))))
                    break
                except NameTaken:
                    if attempt == REGISTER_ATTEMPTS - 1:
                        raise
            names[cc] = link.name
            if link.has_phases:
                phase_ports[cc] = link
            facts[cc] = {"registered_as": link.name, "object": obj.name, "source": bpf.source(_port_name(cc)).name}
        yield names, facts, phase_ports
