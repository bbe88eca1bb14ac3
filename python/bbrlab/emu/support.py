"""What --backend emu can run of a scenario: fields it cannot honour are an error when the kernel
would run a different experiment, a warning when they only switch parts of the simulator's model.

The emu backend runs real Linux TCP over bbrlab's link emulator: one bottleneck link each way
(rate, delay, drop-tail limit, Bernoulli loss, ECN step marking) and one namespace per flow. It
sets what the kernel exposes per flow (algorithm, start/stop, size, MSS, initial window, minimum
RTO, delayed ACKs, socket buffers, SO_MAX_PACING_RATE, extra RTT, ECN) and nothing else. Before
this check a scenario with, say, a RED bottleneck or an RPC workload ran on the kernel as a
drop-tail bulk transfer and said nothing (``python/bbrlab/emu/runner.py`` calls
:func:`check_supported` before it touches the machine).
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import ScenarioError, ScenarioWarning
from ..scenario import Scenario
from ..scenario import core as scenario_core
from ..scenario.model import Flow

#: Flow fields the kernel run cannot reproduce: (field, the value that means "off", why).
_FLOW_ERRORS = (
    ("pacing", "auto", "the kernel paces what its algorithm asks to (the BBR family, BQL) and this backend runs no "
                       "fq qdisc; leave it \"auto\" or use --backend sim"),
    ("receiver_window", "static", "the kernel has no ICTCP receiver; use --backend sim"),
    ("rpc", None, "this backend's senders are bulk writers, not request/response; use --backend sim"),
    ("app_read_delay", None, "this backend's receivers read at once; use --backend sim"),
)
#: Flow fields that switch parts of the simulator's transport model: the kernel runs its own.
_FLOW_MODEL_SWITCHES = ("tso", "tso_defer", "tso_minrtt_autosize", "fast_path", "faster_acks")


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _default_access_rate_bps(scenario: Scenario) -> int:
    """The access rate the core gives this dumbbell when none is set (the model holds the resolved
    value either way, so a set one shows only by differing from it)."""
    bare = scenario.model_copy(update={"topology": scenario.topology.model_copy(update={"access_rate": None})})
    resolved, _ = scenario_core.check(bare)
    return int(resolved["topology"]["access_rate_bps"])


def check_supported(scenario: Scenario) -> list[str]:
    """Raise ScenarioError (naming the field) for the first field --backend emu cannot honour in a
    way that changes the experiment; warn (ScenarioWarning, one per field) for those that only
    switch the simulator's model, and return those warnings."""
    topo = scenario.topology
    if getattr(topo, "kind", None) == "dumbbell" and topo.bottleneck.red is not None:
        raise ScenarioError("topology.bottleneck.red", "the emu backend's link emulator has no RED (drop-tail and ECN "
                                                       "step marking only); use --backend sim")
    notes: list[str] = []
    for i, f in enumerate(scenario.flows):
        for name, off, why in _FLOW_ERRORS:
            value = getattr(f, name)
            if value is not None and value != off:
                raise ScenarioError(f"flows.{i}.{name}", f"{_show(value)} is not available on --backend emu: {why}")
        for name in _FLOW_MODEL_SWITCHES:
            value = getattr(f, name)
            if value != Flow.model_fields[name].default:
                notes.append(f"flows.{i}.{name} = {_show(value)} switches the simulator's model; --backend emu runs "
                             "the kernel's own, so it has no effect there")
        if f.gap_histogram:
            notes.append(f"flows.{i}.gap_histogram: --backend emu records no departure gaps (no `gaps` table)")
        if f.sender is not None:
            notes.append(f"flows.{i}.sender: --backend emu gives every flow its own namespace and NIC; shared sender "
                         "hosts are the simulator's")
    if getattr(topo, "kind", None) == "dumbbell" and topo.access_rate != _default_access_rate_bps(scenario):
        notes.append("topology.access_rate: --backend emu has no access links (the senders' veth and TUN devices are "
                     "not rate-limited), so it has no effect there")
    if scenario.hosts is not None:
        notes.append("hosts: the simulator's model of the end hosts; --backend emu runs real ones, so it is ignored")
    for note in notes:
        warnings.warn(note, ScenarioWarning, stacklevel=2)
    return notes
