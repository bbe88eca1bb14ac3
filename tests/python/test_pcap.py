"""Packets out (issue 36, item 7): `bbrlab run --pcap` writes the TCP headers of a run's flows,
captured at their senders, as a pcap file that tcpdump and tshark read, whose sequence numbers
account for exactly the bytes the flows delivered."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import pytest
from bbrlab.cli import cli
from bbrlab.results.pcap import RECEIVER_PORT, sender_port
from click.testing import CliRunner
from scenario_files import write_scenario


def _scenario(name: str, buffer: str) -> str:
    """The head of a 10-s scenario ``name`` on a 20 Mbit/s, 40 ms dumbbell with ``buffer``; the
    bottleneck's table is the last one open."""
    return f"""
name = "{name}"
duration = "10s"

[topology]
kind = "dumbbell"

[topology.bottleneck]
rate = "20Mbps"
rtt = "40ms"
buffer = "{buffer}"
"""


# A 10-s BBR run that loses packets (SACKs, retransmissions), and a sized DCTCP transfer with ECN
# beside it (a short last segment; CE marks). Both finish inside the run, so the sender has seen the
# ACK of every byte the receiver holds (a capture at the sender misses the ACKs still on their way).
SCENARIO = (
    _scenario("pcap", "0.5bdp")
    + """ecn_threshold = "20KB"

[[flows]]
cc = "bbr1"
stop = "9.5s"   # done writing before the end: every ACK is back at the sender by 10 s

[[flows]]
cc = "dctcp"
ecn = true
bytes = "300KB"
start = "2s"
"""
)

TCP_OPT_SACK = 5
TCP_OPT_TIMESTAMP = 8


def _read_pcap(path: Path) -> list[dict]:
    """Each record's TCP fields (a reader independent of the writer: offsets from the headers)."""
    data = path.read_bytes()
    magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data, 0)
    assert (magic, linktype) == (0xA1B23C4D, 1)
    out, at = [], 24
    while at < len(data):
        sec, nsec, incl, orig = struct.unpack_from("<IIII", data, at)
        frame = data[at + 16 : at + 16 + incl]
        at += 16 + incl
        assert frame[12:14] == b"\x08\x00"
        ip = frame[14:]
        ihl = (ip[0] & 0xF) * 4
        ip_len = struct.unpack_from("!H", ip, 2)[0]
        assert orig == 14 + ip_len
        tcp = ip[ihl:]
        sport, dport, seq, ack, off, flags = struct.unpack_from("!HHIIBB", tcp, 0)
        hl = (off >> 4) * 4
        opts, sacks, tsval = tcp[20:hl], [], None
        i = 0
        while i < len(opts):
            kind = opts[i]
            if kind in (0, 1):
                i += 1
                continue
            ln = opts[i + 1]
            if kind == TCP_OPT_SACK:
                sacks = [struct.unpack_from("!II", opts, j) for j in range(i + 2, i + ln, 8)]
            elif kind == TCP_OPT_TIMESTAMP:
                tsval = struct.unpack_from("!I", opts, i + 2)[0]
            i += ln
        out.append(
            dict(
                t_ns=sec * 10**9 + nsec,
                sport=sport,
                dport=dport,
                seq=seq,
                ack=ack,
                flags=flags,
                payload=ip_len - ihl - hl,
                ip_len=ip_len,
                sacks=sacks,
                tsval=tsval,
                ecn=ip[1] & 3,
            )
        )
    return out


@pytest.fixture(scope="module")
def pcap_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pcap")
    toml = write_scenario(d, SCENARIO, "pcap.toml")
    out = d / "run"
    r = CliRunner().invoke(cli, ["run", str(toml), "--pcap", "--quiet", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_sequence_numbers_account_for_the_delivered_bytes(pcap_run: Path) -> None:
    flows = pd.read_parquet(pcap_run / "flows.parquet")
    records = _read_pcap(pcap_run / "packets.pcap")
    assert [r["t_ns"] for r in records] == sorted(r["t_ns"] for r in records)
    by_flow: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        port = r["sport"] if r["dport"] == RECEIVER_PORT else r["dport"]
        by_flow[port].append(r)
    assert set(by_flow) == {sender_port(0), sender_port(1)}
    for f in (0, 1):
        row = flows[flows.flow == f].iloc[0]
        pkts = by_flow[sender_port(f)]
        assert pkts[0]["flags"] == 0x02 and pkts[1]["flags"] == 0x12  # SYN, SYN-ACK
        data = [p for p in pkts[2:] if p["dport"] == RECEIVER_PORT]
        acks = [p for p in pkts[2:] if p["sport"] == RECEIVER_PORT]
        # The highest cumulative ACK (sequence numbers start at 1) is the flow's delivered bytes.
        assert max(p["ack"] for p in acks) - 1 == int(row.delivered_bytes)
        # The data segments cover the stream without a hole up to there; each repeat of a range
        # already sent is one of the flow's retransmissions.
        seen: set[int] = set()
        repeats = 0
        for p in data:
            repeats += p["seq"] in seen
            seen.add(p["seq"])
        starts = sorted(seen)
        ends = {p["seq"] + p["payload"] for p in data}
        assert starts[0] == 1 and all(s in ends for s in starts[1:])
        assert max(ends) - 1 >= int(row.delivered_bytes)
        assert repeats == int(row.retransmits)
        assert len(data) == int(row.data_packets_sent)
    bbr_acks = [p for p in by_flow[sender_port(0)] if p["sport"] == RECEIVER_PORT]
    assert int(flows.loc[flows.flow == 0, "retransmits"].iloc[0]) > 0
    assert any(p["sacks"] for p in bbr_acks), "a lossy BBR run has SACK blocks"
    assert all(p["tsval"] is not None for p in records)
    dctcp_data = [p for p in by_flow[sender_port(1)] if p["dport"] == RECEIVER_PORT and p["payload"]]
    assert {p["ecn"] for p in dctcp_data} == {2}  # ECT(0) as sent: the marks happen later, in the queue
    # CE marks come back as ECE on the ACKs: one ACK with ECE per new count of marked segments at most.
    ce = int(flows.loc[flows.flow == 1, "ce_packets"].iloc[0])
    ece = [p for p in by_flow[sender_port(1)] if p["sport"] == RECEIVER_PORT and p["flags"] & 0x40]
    assert ce > 0 and 0 < len(ece) <= ce
    assert int(flows.loc[flows.flow == 1, "delivered_bytes"].iloc[0]) == 300_000


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:  # as test_report's browser: CI installs both (.ci/run), so CI must have them
        if os.environ.get("CI"):
            pytest.fail(f"{name} is missing; .ci/run installs it, so CI must have it")
        pytest.skip(f"{name} is not installed here (apt-get install {name})")
    return path


def test_tcpdump_reads_the_capture(pcap_run: Path) -> None:
    pcap = pcap_run / "packets.pcap"
    out = subprocess.run(
        [_tool("tcpdump"), "-nn", "-r", str(pcap)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(out) == len(_read_pcap(pcap))
    assert "sackOK" in out[0] and "wscale 7" in out[0]
    assert any(re.search(r"sack [123] \{\d+:\d+\}", line) for line in out)
    assert all("TS val" in line for line in out)
    assert all("10.0.0.1." in line and "10.0.1.1.5201" in line for line in out)


def test_tshark_reads_the_capture(pcap_run: Path) -> None:
    pcap = pcap_run / "packets.pcap"
    fields = subprocess.run(
        [_tool("tshark"), "-r", str(pcap), "-T", "fields", "-e", "tcp.srcport", "-e", "tcp.ack", "-e", "tcp.len"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(fields) == len(_read_pcap(pcap))
    flows = pd.read_parquet(pcap_run / "flows.parquet")
    # tshark's relative ACK numbers (from the SYN) end at the delivered bytes + 1.
    acks = [int(a) for s, a, _ in (line.split("\t") for line in fields) if s == str(RECEIVER_PORT) and a]
    assert max(acks) - 1 == int(flows.delivered_bytes.max())
    sacked = subprocess.run(
        [_tool("tshark"), "-r", str(pcap), "-Y", "tcp.options.sack_le"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert sacked


# --- Captures at links (`--pcap=LINK`, `[capture] links`) ------------------------------------------

# Two BBR flows through a drop-tail buffer that overflows (BBRv1's startup fills 0.25 BDP), both
# done writing before the end, so every segment that left the bottleneck is delivered and every
# hole repaired by 10 s. No random loss: what leaves the sender and not the bottleneck was dropped
# by its queue.
LINK_SCENARIO = (
    _scenario("pcap-link", "0.25bdp")
    + """
[[flows]]
cc = "bbr1"
count = 2
stop = "9s"
"""
)

#: A frame's bytes on the wire beyond its IP packet: Ethernet header, FCS, preamble and gap
#: (transport::ETHERNET_OVERHEAD_BYTES) — the queue table's tx_bytes counts them.
ETHERNET_OVERHEAD_BYTES = 38


@pytest.fixture(scope="module")
def link_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pcap-link")
    toml = write_scenario(d, LINK_SCENARIO, "link.toml")
    out = d / "run"
    args = ["run", str(toml), "--pcap=sender,bottleneck,bottleneck_rev", "--quiet", "--out", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return out


def _data(records: list[dict]) -> list[dict]:
    return [p for p in records if p["dport"] == RECEIVER_PORT and p["payload"]]


def test_each_capture_point_has_its_file(link_run: Path) -> None:
    assert {p.name for p in link_run.glob("*.pcap")} == {"packets.pcap", "bottleneck.pcap", "bottleneck_rev.pcap"}
    packets = pd.read_parquet(link_run / "packets.parquet")
    assert set(packets.tap) == {"sender", "bottleneck", "bottleneck_rev"}
    # One direction each: the bottleneck carries the data (and the SYN), its reverse the ACKs.
    fwd = _read_pcap(link_run / "bottleneck.pcap")
    rev = _read_pcap(link_run / "bottleneck_rev.pcap")
    assert all(p["dport"] == RECEIVER_PORT for p in fwd) and all(p["sport"] == RECEIVER_PORT for p in rev)
    assert [p["flags"] for p in fwd[:1]] == [0x02] and 0x12 in {p["flags"] for p in rev[:2]}
    assert len(_data(fwd)) == int(((packets.tap == "bottleneck") & (packets.is_data == 1)).sum())


def test_the_bottleneck_capture_accounts_for_the_delivered_bytes(link_run: Path) -> None:
    flows = pd.read_parquet(link_run / "flows.parquet")
    data = _data(_read_pcap(link_run / "bottleneck.pcap"))
    for f in (0, 1):
        mine = [p for p in data if p["sport"] == sender_port(f)]
        delivered = int(flows.loc[flows.flow == f, "delivered_bytes"].iloc[0])
        # Every byte that left the bottleneck reached the receiver (nothing is lost after it, and
        # the flows stopped in time for the last ones to arrive), and the receiver holds all of
        # them in order (every hole was repaired): the highest byte out is the bytes delivered.
        assert max(p["seq"] + p["payload"] for p in mine) - 1 == delivered
        assert delivered > 1_000_000


def test_the_capture_conserves_the_links_departures(link_run: Path) -> None:
    queue = pd.read_parquet(link_run / "queue.parquet")
    for link in ("bottleneck", "bottleneck_rev"):
        q = queue[queue.queue == link].sort_values("t_s").iloc[-1]
        until_ns = round(float(q.t_s) * 1e9)
        frames = [p for p in _read_pcap(link_run / f"{link}.pcap") if not p["flags"] & 0x02 and p["t_ns"] <= until_ns]
        # Each frame is one departure: their wire bytes are the link's own count of bytes sent.
        assert sum(p["ip_len"] + ETHERNET_OVERHEAD_BYTES for p in frames) == int(q.tx_bytes)
        assert len(frames) > 1_000


def test_segments_the_queue_drops_never_leave_the_link(link_run: Path) -> None:
    sent = _data(_read_pcap(link_run / "packets.pcap"))
    out = _data(_read_pcap(link_run / "bottleneck.pcap"))
    queue = pd.read_parquet(link_run / "queue.parquet")
    drops = int(queue[queue.queue == "bottleneck"].drops.max())
    flows = pd.read_parquet(link_run / "flows.parquet")
    assert drops > 0 and drops == int(flows.lost_packets.sum())
    # What the senders sent and the bottleneck did not pass on is what its queue dropped.
    assert len(sent) - len(out) == drops
    # Segment by segment: every one that left the link left its sender, and as often or more.
    left = Counter((p["sport"], p["seq"]) for p in out)
    at_sender = Counter((p["sport"], p["seq"]) for p in sent)
    assert not left - at_sender
    assert sum((at_sender - left).values()) == drops


def test_a_captured_link_changes_no_result(link_run: Path, tmp_path: Path) -> None:
    toml = write_scenario(tmp_path, LINK_SCENARIO, "plain.toml")
    r = CliRunner().invoke(cli, ["run", str(toml), "--quiet", "--out", str(tmp_path / "plain")])
    assert r.exit_code == 0, r.output
    for table in ("flows", "queue", "timeseries"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(link_run / f"{table}.parquet"), pd.read_parquet(tmp_path / "plain" / f"{table}.parquet")
        )


def test_tcpdump_and_tshark_read_the_link_captures(link_run: Path) -> None:
    for link in ("bottleneck", "bottleneck_rev"):
        pcap = link_run / f"{link}.pcap"
        lines = subprocess.run(
            [_tool("tcpdump"), "-nn", "-r", str(pcap)], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        assert len(lines) == len(_read_pcap(pcap)) > 1_000
        assert all("TS val" in line for line in lines)
    sacked = subprocess.run(
        [_tool("tshark"), "-r", str(link_run / "bottleneck_rev.pcap"), "-Y", "tcp.options.sack_le"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert sacked, "the ACKs of a run that drops carry SACK blocks"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pcap=nope"], '--pcap: unknown link "nope"; the links are bottleneck, bottleneck_rev'),
        (["--set", 'capture.links=["bottleneck", "bottleneck"]'], '"bottleneck" is named twice'),
    ],
)
def test_a_bad_link_is_one_line_naming_the_links(tmp_path: Path, args: list[str], message: str) -> None:
    toml = write_scenario(tmp_path, LINK_SCENARIO, "bad.toml")
    r = CliRunner().invoke(cli, ["run", str(toml), *args, "--quiet", "--out", str(tmp_path / "r")])
    assert r.exit_code == 2, r.output
    assert message in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "r").exists()


def test_pcap_before_the_scenario_says_how_to_write_it(tmp_path: Path) -> None:
    toml = write_scenario(tmp_path, LINK_SCENARIO, "s.toml")
    r = CliRunner().invoke(cli, ["run", "--pcap", str(toml), "--quiet"])
    assert r.exit_code == 2
    assert "is a file, not a link; write --pcap=LINK, or put --pcap after SCENARIO" in r.output
