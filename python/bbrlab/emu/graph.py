"""A graph scenario on real Linux TCP: one namespace per host that a flow uses, one emulator
process carrying every link direction of the graph (crates/emu/src/graph.rs)::

    ns bbrlab-<tag>-h0: tun bl<short>h0 10.77.0.2 ─┐
    ns bbrlab-<tag>-h1: tun bl<short>h1 10.77.0.3 ─┼─ bbrlab-linkemu (root ns): every link
    ...                                            ┘   direction, packets forwarded along routes

Switches live only inside the emulator. The routes are the simulator's, computed once by the
core (``topology/routing.rs``) and read here from its derived facts (``routes``: each flow's data
and ACK path by link name; ``links``: every link direction in the simulator's order), so ECMP
splits the flows as the simulator does. Each direction's link parameters come from its
configured link (rate, or ``reverse_rate`` on the way back; delay; buffer; loss; ECN step
thresholds; ``qdisc``, which the simulator applies to both directions too).

What a graph run cannot host is refused before anything starts, in one line naming the field:
``red`` on a link (the schema's mark), more hosts with flows than :data:`MAX_GRAPH_HOSTS` or
more link directions than :data:`MAX_GRAPH_LINK_DIRS` (measured on a 2-core machine,
docs/emu.md), and two flows between one pair of hosts whose per-route settings (initial window,
minimum RTO, delayed ACKs) disagree (Linux keeps them per route, not per socket). What a
machine can carry is packet-hops per second rather than hosts: the runner warns after a graph
run whose emulator fell behind (``runner.GRAPH_LATE_WARN_NS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ScenarioError

__all__ = ["MAX_GRAPH_HOSTS", "MAX_GRAPH_LINK_DIRS", "graph_plan", "check_graph", "host_ip", "open_graph_network"]

#: Hosts with flows (one namespace each). A parking lot of 6 bottlenecks has 14 hosts.
MAX_GRAPH_HOSTS = 32
#: Link directions the emulator holds: it serves the earliest deadline over all of them for
#: every packet hop (a linear scan), so the cost per hop grows with this. A k = 4 fat-tree has
#: 96; k = 6, 324.
MAX_GRAPH_LINK_DIRS = 128
#: The first listening port; flow i listens on FIRST_PORT + i (the emulator's route key).
FIRST_PORT = 5201
#: Ethernet framing per packet, as the simulator charges it (plan.FRAME_OVERHEAD_BYTES).
_FRAME_OVERHEAD_BYTES = 38


def host_ip(j: int) -> str:
    """Address of the j-th host with flows."""
    return f"10.77.{j // 250}.{j % 250 + 2}"


def check_graph(cfg: dict[str, Any]) -> None:
    """ScenarioError (one line naming the field) for a graph this backend cannot host."""
    hosts = _hosts(cfg)
    if len(hosts) > MAX_GRAPH_HOSTS:
        raise ScenarioError(
            "flows",
            f"the flows use {len(hosts)} hosts; --backend emu hosts at most {MAX_GRAPH_HOSTS} on a graph "
            "(one namespace each); use --backend sim",
        )
    dirs = len(cfg["graph_links"])
    if dirs > MAX_GRAPH_LINK_DIRS:
        raise ScenarioError(
            "topology",
            f"{dirs} link directions; --backend emu's emulator carries at most {MAX_GRAPH_LINK_DIRS} "
            "(one process, every hop); use --backend sim",
        )
    _route_options(cfg, hosts)


def _hosts(cfg: dict[str, Any]) -> list[str]:
    """The hosts that flows start or end at, in order of first use."""
    out: list[str] = []
    for r in cfg["routes"]:
        for h in (r["src"], r["dst"]):
            if h not in out:
                out.append(h)
    return out


def _direction_params(cfg: dict[str, Any], d: dict[str, Any]) -> dict[str, Any]:
    """The emulator's ``LinkParams`` of link direction ``d`` (a core ``links`` entry).

    A direction out of a host (its NIC) has no buffer limit here: the simulator's host holds a
    socket's packets back (TSQ) so that its NIC queue never overflows, while the kernel hands
    its TUN whole bursts at memory speed (the TUN's packets are freed as the emulator reads
    them, so the kernel's own TSQ never bites); a limit would drop what the simulator's host
    only delays."""
    link = cfg["topology"]["links"][d["link"]]
    rate = link["rate_bps"]
    if d["reverse"] and link.get("reverse_rate_bps") is not None:
        rate = link["reverse_rate_bps"]
    hosts = {n["name"] for n in cfg["topology"]["nodes"] if n["kind"] == "host"}
    nic = (link["to"] if d["reverse"] else link["from"]) in hosts
    buf = {} if nic else (link.get("buffer") or {})
    p: dict[str, Any] = {
        "rate_bps": rate,
        "delay_ns": link["delay_ns"],
        "loss": link["loss"],
        "limit_bytes": buf.get("bytes"),
        "limit_packets": buf.get("packets"),
        "ecn_threshold_bytes": link.get("ecn_threshold_bytes"),
        "ecn_threshold_packets": link.get("ecn_threshold_packets"),
        "overhead_bytes": _FRAME_OVERHEAD_BYTES,
    }
    if link.get("qdisc") is not None:
        p["qdisc"] = link["qdisc"]
    return p


def graph_plan(cfg: dict[str, Any], ecn_modes: list[str]) -> dict[str, Any]:
    """The emulator's ``graph`` config without its TUN names: ``hosts`` (addresses), ``links``
    (name and parameters per direction), ``routes`` (per flow its data route and ACK route by
    link index, keyed by the flow's port) and ``flows``. ``ecn_modes``: each flow's ``ecn``
    (``"ect1"`` flows' data packets are rewritten to ECT(1) as they are read, docs/emu.md)."""
    hosts = _hosts(cfg)
    index = {d["name"]: i for i, d in enumerate(cfg["graph_links"])}
    n = len(cfg["routes"])
    routes = []
    for i, r in enumerate(cfg["routes"]):
        src, dst = hosts.index(r["src"]), hosts.index(r["dst"])
        data = [index[x] for x in r["path"].split(">")]
        ack = [index[x] for x in r["ack_path"].split(">")]
        port = FIRST_PORT + i
        routes.append(
            {"src": src, "dst": dst, "port": port, "links": data, "origin": i, "ect1": ecn_modes[i] == "ect1"}
        )
        routes.append({"src": dst, "dst": src, "port": port, "links": ack, "origin": n + i})
    return {
        "hosts": [{"addr": host_ip(j)} for j in range(len(hosts))],
        "links": [{"name": d["name"], "params": _direction_params(cfg, d)} for d in cfg["graph_links"]],
        "routes": routes,
        "flows": n,
    }


def _route_options(cfg: dict[str, Any], hosts: list[str]) -> dict[tuple[int, int], dict[str, str]]:
    """Per (host, peer) the options of the host's route to the peer: the initial window and
    minimum RTO of the flows it sends there, ``quickack`` for flows it receives from there
    without delayed ACKs. Two flows asking one route for different values: ScenarioError."""
    opts: dict[tuple[int, int], dict[str, str]] = {}
    setter: dict[tuple[int, int, str], int] = {}

    def put(key: tuple[int, int], name: str, value: str, flow: int, field: str) -> None:
        have = opts.setdefault(key, {})
        if name in have and have[name] != value:
            raise ScenarioError(
                f"flows.{cfg['flows'][flow]['spec']}.{field}",
                f"differs from flow {setter[(key[0], key[1], name)]}'s between the same hosts; --backend emu sets it "
                "per route (host pair), not per socket",
            )
        have[name] = value
        setter[(key[0], key[1], name)] = flow

    for i, (f, r) in enumerate(zip(cfg["flows"], cfg["routes"])):
        s, d = hosts.index(r["src"]), hosts.index(r["dst"])
        opts.setdefault((d, s), {})
        put((s, d), "initcwnd", str(f["initial_cwnd_segs"]), i, "initial_cwnd")
        if f["min_rto_ns"] != 200_000_000:
            put((s, d), "rto_min", f"{max(1, f['min_rto_ns'] // 1_000_000)}ms", i, "min_rto")
        put((d, s), "quickack", "0" if f["delayed_ack"] else "1", i, "delayed_ack")
    return opts


@dataclass
class GraphNetwork:
    """A running graph: the emulator, the hosts' namespaces (owned by a Testbed), and per flow
    the namespaces and address it runs between."""

    emu: Any
    ready: dict[str, Any]
    sender_ns: list[str]
    receiver_ns: list[str]
    receiver_ips: list[str]
    host_ns: list[str]
    stats_path: Path
    error: Any
    queue_labels: list[str]


def open_graph_network(
    tb: Any,
    cfg: dict[str, Any],
    settings: dict[str, Any],
    tmp: Path,
    launch: Any,
    emu_process: dict[str, Any],
    ecn_algorithms: set[str] | frozenset[str] = frozenset(),
) -> GraphNetwork:
    """Start the emulator on ``cfg``'s graph and build one namespace per host with flows.
    ``emu_process``: the emulator's process settings (seed, statistics, timer, priority), as
    the dumbbell's. A host gets ``net.ipv4.tcp_ecn=1`` when a flow it sends asks for ECN or
    runs one of ``ecn_algorithms``, or a flow it receives runs one (DCTCP's receiver half);
    else 2 (accept ECN when asked)."""
    from .launch import TUN_TXQUEUELEN, ecn_mode, start_emulator

    flows = cfg["flows"]
    hosts = _hosts(cfg)
    options = _route_options(cfg, hosts)
    plan = graph_plan(cfg, [ecn_mode(f.get("ecn")) for f in flows])
    tuns = [tb.tun_name(f"h{j}") for j in range(len(hosts))]
    for h, tun in zip(plan["hosts"], tuns):
        h["tun"] = tun
    stats_path = tmp / "queue.jsonl"
    emu_cfg = {"graph": plan, **emu_process, "stats_path": str(stats_path)}
    emu, ready, emu_error = start_emulator(tb, launch, emu_cfg, tmp)

    ecn_hosts = set()
    for f, r in zip(flows, cfg["routes"]):
        if ecn_mode(f.get("ecn")) != "off" or f["cc"] in ecn_algorithms:
            ecn_hosts.add(r["src"])
        if f["cc"] in ecn_algorithms:
            ecn_hosts.add(r["dst"])
    host_ns = []
    for j, name in enumerate(hosts):
        ns = tb.add_netns(f"h{j}")
        host_ns.append(ns)
        tb.ip(None, f"link set {tuns[j]} netns {ns}")
        cmds = [
            "link set lo up",
            f"link set {tuns[j]} mtu 1500 txqueuelen {TUN_TXQUEUELEN} up",
            f"addr add {host_ip(j)}/32 dev {tuns[j]}",
        ]
        for (a, b), o in sorted(options.items()):
            if a == j:
                extra = "".join(f" {k} {v}" for k, v in o.items() if k != "quickack" or v == "1")
                cmds.append(f"route add {host_ip(b)}/32 dev {tuns[j]}{extra}")
        tb.ip(ns, *cmds)
        sent = [i for i, r in enumerate(cfg["routes"]) if r["src"] == name]
        tb.sysctl(
            ns,
            {
                "net.ipv4.tcp_wmem": settings["tcp_wmem"][sent[0] if sent else 0],
                "net.ipv4.tcp_rmem": settings["tcp_rmem"],
                "net.ipv4.tcp_no_metrics_save": "1",
                "net.ipv4.tcp_ecn": "1" if name in ecn_hosts else "2",
            },
        )
    at = {name: j for j, name in enumerate(hosts)}
    return GraphNetwork(
        emu=emu,
        ready=ready,
        sender_ns=[host_ns[at[r["src"]]] for r in cfg["routes"]],
        receiver_ns=[host_ns[at[r["dst"]]] for r in cfg["routes"]],
        receiver_ips=[host_ip(at[r["dst"]]) for r in cfg["routes"]],
        host_ns=host_ns,
        stats_path=stats_path,
        error=emu_error,
        queue_labels=[d["name"] for d in cfg["graph_links"]],
    )
