"""The kernel's TCP MIB counters of a sender's namespace, and the flows table's retransmission
columns they give.

Each flow sends from its own namespace (network.py), so the namespace's ``TcpExt`` counters
(``/proc/net/netstat``, what ``nstat`` reads) are that flow's. They are read once, at the end of
the run, by a thread that enters the namespace (setns acts per thread, so it reads
``/proc/thread-self/net``, not the process's ``/proc/net``).

What each column reads (docs/fidelity.md, "Retransmissions by cause"; Linux 6.x,
net/ipv4/tcp_output.c and tcp_timer.c):

- ``retrans_fast``: TCPFastRetrans, the segments ``tcp_xmit_retransmit_queue`` resends outside
  the Loss state (RACK's and dupthresh's losses).
- ``retrans_rto``: TCPSlowStartRetrans (the same queue in the Loss state) plus TCPTimeouts (each
  RTO resends the head itself, counted in neither).
- ``retrans_tlp``: the rest of ``tcpi_total_retrans``: a loss probe's retransmission is counted
  nowhere else (``__tcp_retransmit_skb`` adds it to total_retrans only).
- ``tlp_probes``: TCPLossProbes (probes of new data included).
- ``lost_retrans``: TCPLostRetransmit; ``recoveries``: TCPSackRecovery + TCPRenoRecovery;
  ``undos``: TCPFullUndo + TCPPartialUndo + TCPDSACKUndo + TCPLossUndo; ``spurious_rtos``:
  TCPSpuriousRTOs. ``dsack_dups`` is the socket's own ``tcpi_dsack_dups``.
"""

from __future__ import annotations

import threading
from typing import Any

from .netns import enter_netns

#: Flows-table column -> the TcpExt counters it sums.
MIB_COLUMNS: dict[str, tuple[str, ...]] = {
    "retrans_fast": ("TCPFastRetrans",),
    "retrans_rto": ("TCPSlowStartRetrans", "TCPTimeouts"),
    "tlp_probes": ("TCPLossProbes",),
    "lost_retrans": ("TCPLostRetransmit",),
    "recoveries": ("TCPSackRecovery", "TCPRenoRecovery"),
    "undos": ("TCPFullUndo", "TCPPartialUndo", "TCPDSACKUndo", "TCPLossUndo"),
    "spurious_rtos": ("TCPSpuriousRTOs",),
}

#: Every column this module fills (``retrans_tlp`` and ``dsack_dups`` as the docstring says).
RETRANS_COLUMNS = (*MIB_COLUMNS, "retrans_tlp", "dsack_dups")


def parse_netstat(text: str) -> dict[str, int]:
    """``/proc/net/netstat`` or ``/proc/net/snmp``: pairs of lines, names then values, each
    beginning with the group (``TcpExt:``); returns ``{"TcpExt.TCPFastRetrans": n, ...}``."""
    out: dict[str, int] = {}
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    for names, values in zip(lines[::2], lines[1::2]):
        if not names or names[0] != values[0]:
            continue
        group = names[0].rstrip(":")
        for k, v in zip(names[1:], values[1:]):
            try:
                out[f"{group}.{k}"] = int(v)
            except ValueError:
                continue
    return out


def _read_in(ns: str, result: dict[str, Any]) -> None:
    try:
        enter_netns(ns)
        counters: dict[str, int] = {}
        for f in ("netstat", "snmp"):
            with open(f"/proc/thread-self/net/{f}") as fh:
                counters.update(parse_netstat(fh.read()))
        result["counters"] = counters
    except OSError as e:
        result["error"] = str(e)


def read_mib(ns: str, timeout_s: float = 5.0) -> dict[str, int] | None:
    """The TCP MIB counters of namespace ``ns`` (None if they cannot be read)."""
    result: dict[str, Any] = {}
    t = threading.Thread(target=_read_in, args=(ns, result), daemon=True, name=f"mib-{ns}")
    t.start()
    t.join(timeout_s)
    counters = result.get("counters")
    return counters if isinstance(counters, dict) else None


def retrans_columns(counters: dict[str, int] | None, info: dict[str, int]) -> dict[str, int]:
    """The flows table's retransmission columns of one flow, from its namespace's counters and
    its final TCP_INFO (``info``); -1 where the counters could not be read."""
    out: dict[str, int] = {"dsack_dups": int(info.get("dsack_dups", 0))}
    if counters is None:
        out.update({c: -1 for c in (*MIB_COLUMNS, "retrans_tlp")})
        return out
    for col, names in MIB_COLUMNS.items():
        out[col] = sum(int(counters.get(f"TcpExt.{n}", 0)) for n in names)
    total = int(info.get("total_retrans", 0))
    out["retrans_tlp"] = max(0, total - out["retrans_fast"] - out["retrans_rto"])
    return out
