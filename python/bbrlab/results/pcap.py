"""A run's ``packets`` table as pcap files that tcpdump, tshark/Wireshark and tcptrace read.

The core records TCP segments at capture points (``crates/sim/src/capture.rs``; the ``tap``
column), with sequence numbers as byte offsets:

- ``sender``: for flows with ``pcap = true``, what ``tcpdump`` on the sender host would see of the
  flow's segments — each data segment as it is handed to the NIC, each ACK as it arrives;
- a link's name (``capture.links``): a tap on the wire just downstream of the link's queue —
  every segment that leaves the link, when its last bit leaves: the data of every flow crossing
  it and, on a link that carries ACKs, the ACKs. Segments the queue drops, and those the link's
  random loss takes (it acts as a segment is offered to the link), never leave, so they are not
  there; CE marks the queue set are.

Each capture point is one file in the run directory (:func:`pcap_file_name`): ``packets.pcap`` for
the senders' captures, ``<link>.pcap`` for a link's. This module renders each row as the headers
of a real frame — Ethernet II, IPv4, TCP with the options the simulator models — and nothing of
the payload (snaplen: headers only; each record's original length is the frame's).

What the simulator's packet lacks, and the stand-in used (one per field, the same in every file):

- Addresses: sender 10.0.0.1, receiver 10.0.1.1, MACs 02:00:00:00:00:01/02 (locally administered);
  flow ``f`` is sender port ``40000 + f`` (wrapping below 65536) to receiver port 5201.
- Handshake: the simulator models the handshake as a delay only. A SYN and a SYN-ACK are written
  before a flow's first segment so that readers learn its options (MSS, SACK permitted,
  timestamps, window scale 7): the SYN one RTT earlier (the flow's first RTT sample: its first
  ACK's capture − the TSval it echoes; 1 ms without one), the SYN-ACK 1 µs before the first
  segment. Both initial sequence numbers are 0, so byte offset ``k`` is sequence number ``k + 1``.
  A link's capture has the SYN only if it has the flow's data (the SYN would have crossed the
  link with it) and the SYN-ACK only if it has the flow's ACKs. The MSS option is the flow's
  largest payload in any capture of the run (the default MSS, 1448, when none has its data).
- Timestamps (RFC 7323) count milliseconds. A data segment's TSval is the time it was sent, an
  ACK's TSecr the TSval it echoes (both from the simulator); an ACK's own TSval is its capture
  time (the receiver's clock is not modelled), and a data segment's TSecr the TSval of the
  flow's latest ACK in the same capture.
- Flags: ACK on every segment after the SYN; ECE on an ACK whose cumulative CE count grew (the
  simulator's receivers report CE counts, not RFC 3168's latched ECE); CWR is not modelled.
- Windows: an ACK advertises its receive window (scaled by 2⁷, 65535 when the flow has no window
  limit); data segments advertise 65535 (the receiver's own receive side is not modelled).
- IPv4: DSCP 0 with the packet's ECN codepoint, DF set, TTL 64, the ID counting per direction,
  a correct header checksum. TCP checksums are 0 (there is no payload to sum); readers do not
  check them on a truncated capture.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .columns import Table
from .taps import TAP_SENDER, pcap_file_name

__all__ = [
    "write_pcap",
    "write_pcaps",
    "pcap_file_name",
    "TAP_SENDER",
    "SENDER_IP",
    "RECEIVER_IP",
    "RECEIVER_PORT",
    "sender_port",
]

#: pcap's magic for nanosecond timestamps (tcpdump ≥ 4.x and Wireshark read it).
PCAP_MAGIC_NS = 0xA1B23C4D
#: LINKTYPE_ETHERNET.
LINKTYPE_ETHERNET = 1
#: Headers only: Ethernet (14) + IPv4 (20) + TCP with the longest options written (60).
SNAPLEN_BYTES = 96
#: Window scale every synthesized SYN offers (Linux's for a large receive buffer).
WSCALE = 7
SENDER_IP = bytes([10, 0, 0, 1])
RECEIVER_IP = bytes([10, 0, 1, 1])
SENDER_MAC = bytes([2, 0, 0, 0, 0, 1])
RECEIVER_MAC = bytes([2, 0, 0, 0, 0, 2])
#: iperf3's port: what a reader of the capture expects a bulk-transfer test on.
RECEIVER_PORT = 5201
FIRST_SENDER_PORT = 40000
#: Bytes the MSS option counts that a timestamped segment spends on its option (10 + 2 NOPs).
TS_OPTION_BYTES = 12
ETH_HEADER_BYTES = 14
IP_HEADER_BYTES = 20
TCP_HEADER_BYTES = 20
FIN, SYN, ACK, ECE = 0x01, 0x02, 0x10, 0x40
MAX_WINDOW = 0xFFFF
SEQ_MOD = 1 << 32
#: The MSS a SYN offers for a flow whose data no capture has (the simulator's default MSS,
#: ``transport::DEFAULT_MSS_BYTES``).
DEFAULT_MSS_BYTES = 1448
#: The SYN's RTT when a flow has no ACK to measure one from.
DEFAULT_HANDSHAKE_RTT_NS = 1_000_000


def sender_port(flow: int) -> int:
    """The TCP source port of flow ``flow`` in a capture."""
    return FIRST_SENDER_PORT + flow % (65536 - FIRST_SENDER_PORT)


def _ip_checksum(header: bytes) -> int:
    total = sum(struct.unpack("!10H", header))
    total = (total & 0xFFFF) + (total >> 16)
    total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class _Frames:
    """The records of a capture, written in time order at the end (a flow's synthesized SYN
    predates segments of flows already running)."""

    def __init__(self) -> None:
        self.ip_id = {True: 0, False: 0}  # per direction: from the sender (True), to it
        self.records: list[tuple[int, int, bytes]] = []

    def frame(
        self,
        t_ns: int,
        from_sender: bool,
        sport: int,
        seq: int,
        ack: int,
        flags: int,
        window: int,
        options: bytes,
        payload_bytes: int,
        ecn: int,
    ) -> None:
        tcp_len = TCP_HEADER_BYTES + len(options)
        ip_len = IP_HEADER_BYTES + tcp_len + payload_bytes
        ident = self.ip_id[from_sender]
        self.ip_id[from_sender] = (ident + 1) & 0xFFFF
        src, dst = (SENDER_IP, RECEIVER_IP) if from_sender else (RECEIVER_IP, SENDER_IP)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, ecn & 3, ip_len, ident, 0x4000, 64, 6, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", _ip_checksum(ip)) + ip[12:]
        ports = (sport, RECEIVER_PORT) if from_sender else (RECEIVER_PORT, sport)
        tcp = struct.pack(
            "!HHIIBBHHH",
            *ports,
            seq % SEQ_MOD,
            ack % SEQ_MOD,
            (tcp_len // 4) << 4,
            flags,
            min(window, MAX_WINDOW),
            0,
            0,
        )
        eth = (RECEIVER_MAC + SENDER_MAC if from_sender else SENDER_MAC + RECEIVER_MAC) + b"\x08\x00"
        headers = eth + ip + tcp + options
        sec, nsec = divmod(t_ns, 1_000_000_000)
        record = struct.pack("<IIII", sec, nsec, len(headers), ETH_HEADER_BYTES + ip_len) + headers
        self.records.append((t_ns, len(self.records), record))

    def write(self, out: BinaryIO) -> None:
        out.write(struct.pack("<IHHiIII", PCAP_MAGIC_NS, 2, 4, 0, 0, SNAPLEN_BYTES, LINKTYPE_ETHERNET))
        for _, _, record in sorted(self.records):
            out.write(record)


def _ts_option(tsval: int, tsecr: int) -> bytes:
    return struct.pack("!BBBBII", 1, 1, 8, 10, tsval % SEQ_MOD, tsecr % SEQ_MOD)


def _syn_options(mss_bytes: int, tsval: int, tsecr: int) -> bytes:
    # Linux's order: MSS, SACK permitted, timestamps, NOP, window scale (20 bytes).
    return (
        struct.pack("!BBH", 2, 4, mss_bytes)
        + struct.pack("!BB", 4, 2)
        + struct.pack("!BBII", 8, 10, tsval % SEQ_MOD, tsecr % SEQ_MOD)
        + struct.pack("!BBBB", 1, 3, 3, WSCALE)
    )


def _ms(t_ns: int) -> int:
    return t_ns // 1_000_000


def write_pcaps(packets: Table, run_dir: str | Path) -> list[Path]:
    """Write each capture point's rows of the ``packets`` table to its file in ``run_dir``
    (:func:`pcap_file_name`); returns the files written. A table without a ``tap`` column (a run
    saved before links were captured) is the senders' capture."""
    taps = packets["tap"] if "tap" in packets else np.full(len(packets), TAP_SENDER, dtype=object)
    mss = _mss_by_flow(packets)  # over every capture point: a link may carry a flow's ACKs only
    written = []
    for tap in dict.fromkeys(taps.tolist()):  # each capture point once, in order of appearance
        path = Path(run_dir) / pcap_file_name(tap)
        write_pcap(packets.rows(taps == tap), path, at_link=tap != TAP_SENDER, mss_bytes=mss)
        written.append(path)
    return written


def _mss_by_flow(packets: Table) -> dict[int, int]:
    """Each flow's largest payload in ``packets``, for the MSS its SYN offers."""
    data = np.asarray(packets["is_data"]) != 0
    flows, payload = np.asarray(packets["flow"])[data], np.asarray(packets["payload_bytes"])[data]
    mss: dict[int, int] = {}
    for f, b in zip(flows.tolist(), payload.tolist()):
        mss[f] = max(mss.get(f, 0), b)
    return mss


def write_pcap(
    packets: Table, path: str | Path, *, at_link: bool = False, mss_bytes: dict[int, int] | None = None
) -> int:
    """Write rows of the ``packets`` table (:attr:`Result.packets`'s columns) of one capture point
    to ``path`` as a pcap file; returns the number of records (segments plus the synthesized
    handshake packets: two per flow at a sender, those of the directions it has at a link).
    ``mss_bytes``: each flow's MSS, when these rows may lack its data (default: from them)."""
    cols = {name: np.asarray(packets[name]).tolist() for name in packets}
    n = len(packets)
    flows = cols["flow"]
    first_row: dict[int, int] = {}
    mss = _mss_by_flow(packets) if mss_bytes is None else mss_bytes
    first_rtt_ns: dict[int, int] = {}
    has_data: set[int] = set()
    has_acks: set[int] = set()
    for i in range(n):
        f = flows[i]
        first_row.setdefault(f, i)
        if cols["is_data"][i]:
            has_data.add(f)
        else:
            has_acks.add(f)
            if f not in first_rtt_ns:
                first_rtt_ns[f] = max(cols["t_ns"][i] - cols["ts_ns"][i], 1)
    w = _Frames()
    last_ack_tsval: dict[int, int] = {}
    last_ce: dict[int, int] = {}
    for i in range(n):
        f = flows[i]
        t = cols["t_ns"][i]
        sport = sender_port(f)
        if first_row[f] == i:
            # The handshake the simulator models as a delay, for the options it negotiates.
            syn_t = max(t - first_rtt_ns.get(f, DEFAULT_HANDSHAKE_RTT_NS), 0)
            synack_t = max(t - 1_000, syn_t)
            opt_mss = mss.get(f, DEFAULT_MSS_BYTES) + TS_OPTION_BYTES
            if not at_link or f in has_data:
                w.frame(syn_t, True, sport, 0, 0, SYN, MAX_WINDOW, _syn_options(opt_mss, _ms(syn_t), 0), 0, 0)
            if not at_link or f in has_acks:
                w.frame(
                    synack_t,
                    False,
                    sport,
                    0,
                    1,
                    SYN | ACK,
                    MAX_WINDOW,
                    _syn_options(opt_mss, _ms(synack_t), _ms(syn_t)),
                    0,
                    0,
                )
            last_ack_tsval[f] = _ms(synack_t)
        if cols["is_data"][i]:
            options = _ts_option(_ms(cols["ts_ns"][i]), last_ack_tsval[f])
            seq = 1 + cols["seq_bytes"][i]
            w.frame(t, True, sport, seq, 1, ACK, MAX_WINDOW, options, cols["payload_bytes"][i], cols["ecn"][i])
        else:
            tsval = _ms(t)
            last_ack_tsval[f] = tsval
            options = _ts_option(tsval, _ms(cols["ts_ns"][i]))
            n_sack = cols["n_sack"][i]
            if n_sack:
                blocks = b"".join(
                    struct.pack(
                        "!II", (1 + cols[f"sack{k}_start"][i]) % SEQ_MOD, (1 + cols[f"sack{k}_end"][i]) % SEQ_MOD
                    )
                    for k in range(1, n_sack + 1)
                )
                options += struct.pack("!BBBB", 1, 1, 5, 2 + len(blocks)) + blocks
            flags = ACK
            ce = cols["ce_count"][i]
            if ce > last_ce.get(f, 0):
                flags |= ECE
            last_ce[f] = ce
            rwnd = cols["rwnd_bytes"][i]
            window = MAX_WINDOW if rwnd < 0 else rwnd >> WSCALE
            w.frame(t, False, sport, 1, 1 + cols["ack_bytes"][i], flags, window, options, 0, 0)
    with open(path, "wb") as out:
        w.write(out)
    return len(w.records)
