"""The emu backend's retransmission columns from the kernel's TCP MIB counters (bbrlab.emu.mib):
parsing ``/proc/net/netstat`` and the mapping docs/fidelity.md documents. Runs without root; the
counters of a real kernel run are checked in test_emu.py."""

from __future__ import annotations

from bbrlab.core.tables import FLOW_SUMMARY_COLUMNS
from bbrlab.emu.mib import RETRANS_COLUMNS, parse_netstat, retrans_columns

# A shortened /proc/net/netstat (names line, values line per group) plus /proc/net/snmp's Tcp.
NETSTAT = """TcpExt: SyncookiesSent TCPLostRetransmit TCPTimeouts TCPLossProbes TCPFastRetrans TCPSlowStartRetrans
TcpExt: 0 7 2 11 900 40
TcpExt: TCPFullUndo TCPPartialUndo TCPDSACKUndo TCPLossUndo TCPSpuriousRTOs TCPSackRecovery TCPRenoRecovery
TcpExt: 1 2 3 4 1 60 0
IpExt: InNoRoutes InTruncatedPkts
IpExt: 0 0
Tcp: RtoAlgorithm RetransSegs
Tcp: 1 950
"""


def test_parse_netstat_reads_every_group_by_name():
    c = parse_netstat(NETSTAT)
    assert c["TcpExt.TCPFastRetrans"] == 900 and c["TcpExt.TCPSackRecovery"] == 60
    assert c["Tcp.RetransSegs"] == 950 and c["IpExt.InNoRoutes"] == 0
    assert "TcpExt.TcpExt:" not in c


def test_retrans_columns_map_the_counters_as_documented():
    info = {"total_retrans": 955, "dsack_dups": 5}
    cols = retrans_columns(parse_netstat(NETSTAT), info)
    assert cols == {
        "dsack_dups": 5,
        "retrans_fast": 900,
        "retrans_rto": 42,  # 40 slow-start retransmissions + the head of each of 2 timeouts
        "tlp_probes": 11,
        "lost_retrans": 7,
        "recoveries": 60,
        "undos": 10,
        "spurious_rtos": 1,
        "retrans_tlp": 13,  # the rest of total_retrans: 955 - 900 - 42
    }
    assert set(cols) == set(RETRANS_COLUMNS) and set(RETRANS_COLUMNS) <= set(FLOW_SUMMARY_COLUMNS)
    # More fast retransmissions counted than total_retrans (a split skb): no negative remainder.
    assert retrans_columns(parse_netstat(NETSTAT), {"total_retrans": 900})["retrans_tlp"] == 0
    # Counters not read: -1 (not 0, which would read as "none"), the socket's own D-SACKs kept.
    unread = retrans_columns(None, info)
    assert unread["retrans_fast"] == -1 and unread["retrans_tlp"] == -1 and unread["dsack_dups"] == 5
