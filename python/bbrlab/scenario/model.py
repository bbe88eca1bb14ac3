"""The scenario model, in human units. GENERATED from the core's config schema by
``python -m bbrlab.scenario.codegen``: do not edit; change ``crates/sim/src/config/`` and
regenerate (a test fails while this file is stale).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Discriminator, Field, Tag

from .fields import SUGAR, algorithm_validator, Bounds, BufferSpec, Count, QueueSizeSpec, Fraction, RateBps, SizeBytes, Strict, TimeNs, buffer_from_core
from .mixins import ScenarioBase, check_kind, kind_of

#: The algorithm names a scenario may use (the core's registry, aliases included).
ALGORITHMS: tuple[str, ...] = ('reno', 'cubic', 'cubic_hspp', 'bbr1', 'bbr1_linux413', 'bbr2', 'bbr2_new', 'bbr3', 'bbr3_linux', 'dctcp', 'bql', 'bbr')


class Red(Strict):
    """RED parameters (Floyd & Jacobson 1993): thresholds on the EWMA of the queue."""

    min_th: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] = Field(description="Average queue where marking starts.")
    max_th: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] = Field(description="Average queue where the marking probability reaches `max_p`.")
    max_p: Annotated[Fraction, Bounds("fraction", 0.0, 1.0, exclusive_min=True)] = Field(default=0.1, description="Marking probability at `max_th`.")
    weight: Annotated[Fraction, Bounds("fraction", 0.0, 1.0, exclusive_min=True)] = Field(default=0.002, description="EWMA weight w_q.")


class Droptail(Strict):
    """First in, first out; drops at the buffer limit (the link's `buffer`), marks ECN-capable packets above the link's ECN threshold if it has one."""

    kind: Literal["droptail"] = "droptail"


class Codel(Strict):
    """CoDel (RFC 8289, Linux `sch_codel`): drops, or CE-marks with `ecn`, at dequeue once the time packets wait has stayed above `target_ns` for `interval_ns`, then ever faster (interval/sqrt(drops)) until it falls below. Tail-drops at the link's `buffer` (Linux's 1000 packets if the link sets none)."""

    kind: Literal["codel"] = "codel"
    target: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=5000000, description="Acceptable standing queueing delay (ns): a packet that waited less is never dropped. Linux's default, 5 ms.")
    interval: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=100000000, description="How long the delay must stay above target before the first drop, and the spacing of the first drops (ns): about the largest RTT of the flows. Linux's default, 100 ms.")
    ce_threshold: Annotated[TimeNs, Bounds("time", 0, 60000000000)] | None = Field(default=None, description="CE-mark every ECN-capable packet that waited longer than this (ns), whatever the control law says (DCTCP-style shallow marking). Unset (the default): off.")
    ecn: bool = Field(default=False, description="CE-mark ECN-capable packets instead of dropping them. Off by default, as in Linux's `codel` (its `fq_codel` defaults to on).")


class FqCodel(Strict):
    """FQ-CoDel (RFC 8290, Linux `sch_fq_codel`): packets hashed by flow into `flows` queues, each under its own CoDel, served by deficit round robin `quantum_bytes` at a time, with flows that just became active served first. Over the link's `buffer` (Linux's 10240 packets if the link sets none) it drops from the head of the queue holding most bytes."""

    kind: Literal["fq_codel"] = "fq_codel"
    target: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=5000000, description="Acceptable standing queueing delay per flow (ns). Linux's default, 5 ms.")
    interval: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=100000000, description="How long a flow's delay must stay above target before its first drop, and the spacing of the first drops (ns). Linux's default, 100 ms.")
    ce_threshold: Annotated[TimeNs, Bounds("time", 0, 60000000000)] | None = Field(default=None, description="CE-mark every ECN-capable packet that waited longer than this (ns), whatever the control law says. Unset (the default): off.")
    ecn: bool = Field(default=True, description="CE-mark ECN-capable packets instead of dropping them. On by default, as in Linux.")
    quantum: Annotated[SizeBytes, Bounds("size", 256, 1048576)] = Field(default=1514, description="Bytes a flow may send per round of the round robin (at least 256). Linux's default: the device MTU with its Ethernet header, 1514.")
    flows: Annotated[Count, Bounds("count", 1, 65536)] = Field(default=1024, description="Number of flow queues that packets are hashed into (1 to 65536; flows that hash alike share a queue). Linux's default, 1024.")
    drop_batch_packets: Annotated[Count, Bounds("count", 1, 65536)] = Field(default=64, description="Most packets dropped at once from the fullest queue when the buffer overflows (up to half of that queue's bytes; at least 1). Linux's default, 64.")


class Pie(Strict):
    """PIE (RFC 8033, Linux `sch_pie`): drops arrivals at random with a probability that a PI controller of the queueing delay updates every `tupdate_ns`; a queue that was quiet lets a burst of up to `max_burst_ns` through. Drops at the link's buffer (1000 packets if the link has none)."""

    kind: Literal["pie"] = "pie"
    target: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=15000000, description="Queueing delay the controller holds (ns; Linux `target`, 15 ms).")
    tupdate: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=15000000, description="Interval between probability updates (ns; Linux `tupdate`, 15 ms).")
    alpha: Fraction = Field(default=0.125, description="Integral gain, per second of delay above target (Hz; Linux `alpha` 2 = 0.125 Hz), scaled down while the probability is small (RFC 8033 \u00a74.2).")
    beta: Fraction = Field(default=1.25, description="Proportional gain, per second of delay change (Hz; Linux `beta` 20 = 1.25 Hz).")
    max_burst: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=150000000, description="Burst allowance: no early drop for this long after the queue was quiet (ns; 150 ms).")
    ecn: bool = Field(default=False, description="CE-mark ECN-capable packets instead of dropping them while the probability is at or below `mark_ecn_threshold` (Linux `ecn`, off).")
    mark_ecn_threshold: Fraction = Field(default=0.1, description="Probability (0..1) above which ECN-capable packets are dropped too (Linux: 0.1).")


class DualPI2(Strict):
    """DualPI2 (RFC 9332, Linux `sch_dualpi2`): ECT(1) and CE packets wait in a low-latency queue marked at a step threshold and with k·p', the others in a classic queue dropped or marked with p'², p' from a PI controller of the queueing delay; a weighted round robin gives the L queue priority. Both share the link's buffer (10000 packets if none)."""

    kind: Literal["dualpi2"] = "dualpi2"
    target: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=15000000, description="Classic queueing delay the PI controller holds (ns; Linux `target`, 15 ms).")
    tupdate: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=16000000, description="Interval between updates of the base probability p' (ns; Linux `tupdate`, 16 ms).")
    alpha: Fraction = Field(default=0.16, description="Integral gain, p' per second of delay above target per update (Hz; 0.16).")
    beta: Fraction = Field(default=3.2, description="Proportional gain, p' per second of delay change per update (Hz; 3.2).")
    step_threshold: Annotated[TimeNs, Bounds("time", 0, 60000000000)] = Field(default=1000000, description="L-queue sojourn above which an L4S packet is CE-marked (ns; Linux `step_thresh`, 1 ms).")
    coupling_factor: Fraction = Field(default=2.0, description="Coupling factor k: the L queue's coupled marking probability is k\u00b7p' (Linux 2).")
    c_protection_percent: Annotated[Count, Bounds("count", 0, 255)] = Field(default=10, description="Classic queue's share of the round robin while both queues wait, in percent (Linux `c_protection`, 10): the L queue gets the rest.")
    drop_overload: bool = Field(default=True, description="When k\u00b7p' exceeds 1 (overload), drop L4S packets with p'\u00b2 instead of only marking them, and drop classic ECN packets rather than mark them (Linux `drop_overload`, on).")


class PfifoFast(Strict):
    """Linux's default host qdisc, `pfifo_fast`, as every packet of one priority band sees it: a FIFO that drops at the link's buffer."""

    kind: Literal["pfifo_fast"] = "pfifo_fast"


class Fq(Strict):
    """Linux `fq` (`sch_fq`), the host qdisc BBR is deployed with: a queue per flow, each paced — at the earliest departure times its sender stamped (TCP since Linux 4.20), else at its socket's pacing rate — and capped at `maxrate_bps`; deficit round robin among the flows whose packets are due. Drops at the link's buffer (10000 packets if none)."""

    kind: Literal["fq"] = "fq"
    quantum: Annotated[SizeBytes, Bounds("size", 256, 1048576)] = Field(default=3028, description="Bytes a flow may send per round of the round robin (Linux `quantum`, 2 \u00d7 1514).")
    initial_quantum: Annotated[SizeBytes, Bounds("size", 0, 1073741824)] = Field(default=15140, description="Credit of a flow seen for the first time: its first burst (Linux `initial_quantum`, 10 \u00d7 1514).")
    flow_refill_delay: Annotated[TimeNs, Bounds("time", 0, 10000000000)] = Field(default=40000000, description="A flow idle longer than this (ns) gets at least a quantum of credit back when it sends again (Linux `flow_refill_delay`, 40 ms).")
    maxrate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="Every flow's rate cap (bit/s; Linux `maxrate`). Unset (the default): none.")
    ce_threshold: Annotated[TimeNs, Bounds("time", 0, 10000000000)] | None = Field(default=None, description="CE-mark an ECN-capable packet that leaves later than it was due by more than this (ns; Linux `ce_threshold`). Unset (the default): off.")
    flow_limit_packets: Annotated[Count, Bounds("count", 1, 1000000)] = Field(default=100, description="Packets one flow may hold (Linux `flow_limit`, 100). The simulator enqueues segments where Linux enqueues TSO skbs of up to 64 KB: raise it where TSQ lets a flow hold more than 100 segments (1 ms of pacing rate above ~1.2 Gbit/s).")
    horizon: Annotated[TimeNs, Bounds("time", 1, 3600000000000)] = Field(default=10000000000, description="A packet stamped to leave more than this far ahead (ns) is dropped (Linux `horizon`, 10 s, with `horizon_drop`).")


class RedQdisc(Strict):
    """RED (Floyd & Jacobson 1993) on the EWMA of the queue, as a link's `red` table: the simulator runs that same native RED (marks ECN-capable packets, drops others, as Linux `sch_red` with `ecn`; `weight = 1` acts on the instantaneous queue), with `buffer` as the limit. Thresholds in bytes or packets."""

    kind: Literal["red"] = "red"
    min_th: QueueSizeSpec = Field(description="Average queue where marking starts: a size (\"30KB\") or packets (\"20pkts\").")
    max_th: QueueSizeSpec = Field(description="Average queue where the marking probability reaches `max_p`.")
    max_p: Annotated[Fraction, Bounds("fraction", 0.0, 1.0, exclusive_min=True)] = Field(default=0.1, description="Marking probability at `max_th` (default 0.1).")
    weight: Annotated[Fraction, Bounds("fraction", 0.0, 1.0, exclusive_min=True)] = Field(default=0.002, description="EWMA weight w_q (default 0.002).")


QdiscSpec = Annotated[Annotated[Droptail, Tag('droptail')] | Annotated[Codel, Tag('codel')] | Annotated[FqCodel, Tag('fq_codel')] | Annotated[Pie, Tag('pie')] | Annotated[DualPI2, Tag('dualpi2')] | Annotated[PfifoFast, Tag('pfifo_fast')] | Annotated[Fq, Tag('fq')] | Annotated[RedQdisc, Tag('red')], Discriminator(kind_of(('droptail', 'codel', 'fq_codel', 'pie', 'dualpi2', 'pfifo_fast', 'fq', 'red'))), BeforeValidator(check_kind(('droptail', 'codel', 'fq_codel', 'pie', 'dualpi2', 'pfifo_fast', 'fq', 'red')))]


class ScheduleEntrySpec(Strict):
    """One change of a link's parameters at a given time; the others keep their values. A link takes the delay key it has: a dumbbell's bottleneck `rtt`, a graph's link `delay`."""

    at: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(description="When the change applies, from the start of the run (entries in increasing order).")
    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="The new link rate (packets already on the wire keep the old one).")
    rtt: Annotated[TimeNs, Bounds("time", 0, 100000000000)] | None = Field(default=None, description="The new two-way base propagation delay.")
    delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] | None = Field(default=None, description="The new one-way propagation delay (a graph link's; a bottleneck has `rtt`).")
    loss: Annotated[Fraction, Bounds("fraction", 0.0, 1.0, exclusive_max=True)] | None = Field(default=None, description="The new Bernoulli loss on the data direction.")
    buffer: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="The new buffer size (packets already queued stay).")


class TraceFile(Strict):
    """A trace file as the front passes it: its name (for messages, and `.csv` selects the CSV format) and its contents (so the run's cache id follows the contents, not the path)."""

    file: str = Field(description="The file's path as the scenario gives it.")
    text: str = Field(description="The file's contents.")


class PolicerSpec(Strict):
    """A token-bucket policer on the data direction: conforming packets pass, the others are dropped before the queue (no queue of its own)."""

    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(description="Token rate: the long-run rate the policer lets through.")
    burst: Annotated[SizeBytes, Bounds("size", 1500, 1000000000000)] = Field(description="Bucket size: the largest burst that passes at once (at least one 1500-byte packet).")


class AggregationSpec(Strict):
    """Hold packets and release them together (Wi-Fi A-MPDU, cellular grants, ACK compression)."""

    direction: Literal["data", "ack"] = Field(description="Which direction's packets are aggregated.")
    bytes_: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="Release the batch when the bytes held reach this (none: by time only).", alias='bytes')
    timeout: Annotated[TimeNs, Bounds("time", 1, 100000000000)] = Field(description="Release the batch this long after its first packet arrived, if `bytes` was not reached.")


class JitterSpec(Strict):
    """Extra per-packet delay on the data direction, uniform in [0, max]."""

    max: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(description="The largest extra delay; each packet's is uniform in [0, max].")
    reorder: bool = Field(default=False, description="Let a packet overtake an earlier one with a larger jitter (false: packets keep their order, a late one holds back those behind it).")


class ReorderSpec(Strict):
    """Reordering on the data direction: a packet held back until `displacement` packets have overtaken it."""

    probability: Annotated[Fraction, Bounds("fraction", 0.0, 1.0)] = Field(description="Probability that a packet is held back.")
    displacement: Annotated[Count, Bounds("count", 1, 1000000)] = Field(description="How many later packets overtake a held one.")
    timeout: Annotated[TimeNs, Bounds("time", 1, 100000000000)] = Field(default=10000000, description="A held packet leaves after this long even if fewer packets followed it (the sender went quiet), so reordering never becomes loss.")


class GilbertElliott(Strict):
    """netem's Gilbert–Elliott model (`loss gemodel p r 1-h 1-k`): a good and a bad state."""

    kind: Literal["gilbert_elliott"] = "gilbert_elliott"
    p: Annotated[Fraction, Bounds("fraction", 0.0, 1.0)] = Field(description="Probability of going from the good to the bad state, per packet.")
    r: Annotated[Fraction, Bounds("fraction", 0.0, 1.0)] = Field(description="Probability of going from the bad to the good state, per packet (the mean bad period is 1/r packets).")
    h: Annotated[Fraction, Bounds("fraction", 0.0, 1.0)] = Field(description="Probability that a packet gets through in the bad state (netem's h; it is lost with 1 \u2212 h).")
    k: Annotated[Fraction, Bounds("fraction", 0.0, 1.0)] = Field(default=1.0, description="Probability that a packet gets through in the good state (netem's k; it is lost with 1 \u2212 k).")


LossModelSpec = Annotated[Annotated[GilbertElliott, Tag('gilbert_elliott')], Discriminator(kind_of(('gilbert_elliott',))), BeforeValidator(check_kind(('gilbert_elliott',)))]


class Bottleneck(Strict):
    """The dumbbell's shared link."""

    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="Link rate (exclusive with `trace`; one of the two is required).")
    rtt: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(description="Two-way base propagation delay.")
    buffer: BufferSpec = Field(default_factory=lambda: buffer_from_core({'bdp': 1.0}), description="Drop-tail limit: a size, a multiple of the bandwidth-delay product (with a `trace`: the BDP at the trace's mean rate), or packets.")
    loss: Annotated[Fraction, Bounds("fraction", 0.0, 1.0, exclusive_max=True)] = Field(default=0.0, description="Bernoulli loss on the data direction (as netem on the sender).")
    ack_loss: Annotated[Fraction, Bounds("fraction", 0.0, 1.0, exclusive_max=True)] = Field(default=0.0, description="Bernoulli loss on the ACK direction.")
    ecn_threshold: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="CE-mark ECN-capable packets arriving when more than this many bytes wait (DCTCP's K).")
    ecn_threshold_packets: Annotated[Count, Bounds("count", 1, 1000000000)] | None = Field(default=None, description="The same threshold in packets (a packet is marked if either threshold is exceeded).")
    red: Red | None = Field(default=None, description="RED on the averaged queue: marks ECN-capable packets, drops others (Linux sch_red with `ecn`).")
    qdisc: QdiscSpec | None = Field(default=None, description="The data direction's queue discipline (`kind` = \"droptail\", \u2026; pathmodel's registry), with `buffer` as its limit. None or \"droptail\": the FIFO with the step ECN marking above. A discipline other than drop-tail is the whole queue model: it takes neither `red` nor the `ecn_threshold` fields.")
    schedule: list[ScheduleEntrySpec] = Field(default_factory=list, description="Changes of `rate`, `rtt`, `loss` and `buffer` at given times, in increasing order (`rate` and `loss` act on the data direction, `rtt` on both, `buffer` on the data direction's queue). A changing delay keeps packets in order.")
    trace: TraceFile | None = Field(default=None, description="The data direction's rate follows this trace instead of `rate`: Mahimahi's format (one line per 1500-byte delivery opportunity, in ms, looping) or, for a `.csv` file, lines of `t_ms, rate_bps`. The front reads the file (its path relative to the scenario).")
    trace_reverse: TraceFile | None = Field(default=None, description="The ACK direction's trace (default: the ACK direction runs at the data direction's rate, or the data trace's mean rate).")
    policer: PolicerSpec | None = Field(default=None, description="A token-bucket policer on the data direction, before the queue: conforming packets pass, the others are dropped (counted in the queue table's `policer_drops`).")
    aggregation: AggregationSpec | None = Field(default=None, description="Link-layer aggregation after the transmitter, on the direction it names (`ack`: the ACK direction's link).")
    jitter: JitterSpec | None = Field(default=None, description="Delay jitter on the data direction, after the transmitter.")
    reorder: ReorderSpec | None = Field(default=None, description="Reordering on the data direction, after the transmitter (and after `jitter`).")
    loss_model: LossModelSpec | None = Field(default=None, description="A burst-loss process on the data direction, before the queue, beside `loss`.")


class Dumbbell(Strict):
    """N senders → router → bottleneck → router → receiver."""

    kind: Literal["dumbbell"] = "dumbbell"
    bottleneck: Bottleneck = Field(description="The link every flow crosses.")
    access_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="Every host's NIC / access link (default: 10 \u00d7 the bottleneck rate).")
    sender_qdisc: QdiscSpec | None = Field(default=None, description="Every sender host's egress qdisc: `kind = \"pfifo_fast\"` (the default: a FIFO; TCP paces itself where its algorithm asks, Linux's internal pacing) or `\"fq\"` (Linux `sch_fq`: every flow is paced by fq at the departure times TCP stamps from its pacing rate, as BBR is deployed; `maxrate` caps each flow).")


class Pfc(Strict):
    """802.3x PAUSE: an output queue above `xoff` pauses every link feeding it for `quanta` × 512 bit times (re-sent while above XOFF); below `xon` it resumes them."""

    xoff: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] = Field(default=64000, description="Queue size that sends PAUSE.")
    xon: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] = Field(default=32000, description="Queue size that sends XON.")
    quanta: Annotated[Count, Bounds("count", 1, 65535)] = Field(default=65535, description="PAUSE duration in 512-bit-time quanta.")
    accounting: Literal["egress", "ingress"] = Field(default='egress', description="What the thresholds count: the bytes an output queue holds (egress: every link feeding it is paused at once) or, as switches account PFC, the bytes each ingress port has in the buffer (ingress: only the port over XOFF is paused; `pfc.rs`).")
    headroom: Annotated[SizeBytes, Bounds("size", 0, 1000000000000)] = Field(default=0, description="Ingress accounting: bytes an ingress port may still take once it is over XOFF, for what is already on its way when the PAUSE takes effect; beyond it the packet is dropped. 0 (default): per port, 2 \u00d7 (its rate \u00d7 delay) + 2 full frames + the PAUSE frame (IEEE 802.1Qbb's headroom).")
    nic_pause_delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=0, description="Host NICs act on a PAUSE this long after it arrives (0: at once; a NIC's MAC must within 512 bit times, firmware-handled NICs take longer).")
    nic_honours_pause: bool = Field(default=True, description="Host NICs obey PAUSE (false: they ignore it, as NICs with flow control off do).")
    switches_honour_pause: bool = Field(default=True, description="With racks: the switches obey PAUSE on their inter-switch links. False: those ports ignore it (802.3x is set per port, and \"receive off\" is a common default), so back-pressure reaches the hosts of the congested switch only and the trunk's packets are dropped at the port (egress accounting: past `buffer`) or past their ingress headroom.")


class Star(Strict):
    """One top-of-rack switch, `workers` hosts on their own links and one aggregator host behind the switch's output port (the Waterloo data-center study's fabric)."""

    kind: Literal["star"] = "star"
    workers: Annotated[Count, Bounds("count", 1, 10000)] = Field(description="Worker hosts.")
    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(description="Rate of every host link (both directions).")
    aggregator_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="The aggregator's link, the incast bottleneck (default: `rate`).")
    delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=10000, description="One-way propagation delay of each host link.")
    buffer: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="Drop-tail limit of each switch output port (default 128 KB; unlimited when lossless).")
    shared_buffer: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="Limit on the bytes queued in all output ports together (none by default). With PFC's ingress accounting: the pool the ingress ports' usage below XOFF draws on (headroom is reserved per port, outside it).")
    shared_buffer_alpha: Annotated[Fraction, Bounds("fraction", 0.0078125, 64.0)] | None = Field(default=None, description="Dynamic threshold of the shared buffer (Mellanox and Broadcom call it alpha; Choudhury and Hahne 1998): an output queue takes a packet only while its bytes stay below `alpha` \u00d7 the free shared buffer, so one congested queue gets alpha / (1 + alpha) of the pool. Needs `shared_buffer`; none = first come, first served up to the pool.")
    hosts_per_rack: Annotated[Count, Bounds("count", 2, 10000)] | None = Field(default=None, description="Hosts per rack, the aggregator first (the Waterloo DC study's cluster: 16): with more hosts, each rack has its own ToR and the ToRs meet at one aggregation switch, so workers beyond rack 0 cross it. None: one switch for all.")
    worker_racks: list[Annotated[Count, Bounds("count", 0, 10000)]] | None = Field(default=None, description="The rack of each worker in turn, repeated over the workers (rack 0 is the aggregator's): the Waterloo DC study's node list interleaves four racks, its first worker in another rack than the aggregator's and every fourth in the aggregator's own, `[1, 2, 3, 0]`. Needs `hosts_per_rack`, which bounds every rack (the aggregator counts in rack 0). None: the workers fill the racks in order after the aggregator.")
    uplink_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="Rate of each ToR's links to and from the aggregation switch (default: `rate` \u00d7 hosts per rack, non-blocking).")
    forwarding: Literal["store-and-forward", "cut-through"] = Field(default='store-and-forward', description="A switch hands a packet on once it has all of it, or once its `header` has arrived.")
    header: Annotated[SizeBytes, Bounds("size", 1, 65535)] = Field(default=64, description="Cut-through: bytes that must arrive before a packet is forwarded.")
    ecn_threshold: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="CE-mark above this queue size at the switch's output ports.")
    lossless: bool = Field(default=False, description="IEEE 802.3x PAUSE back-pressure instead of drops (thresholds in `pfc`).")
    pfc: Pfc = Field(default_factory=Pfc, description="PAUSE thresholds, used when `lossless` is true.")
    clock_ppm: Annotated[Count, Bounds("count", 0, 1000)] = Field(default=100, description="Host NIC clocks deviate from the switch's by up to \u00b1 this many ppm (IEEE 802.3 allows \u00b1100): each host link's rate is scaled by a seeded uniform draw. Without it, equal-rate links stay phase-locked and a drop-tail port can lock a flow out forever.")
    host_jitter: Annotated[TimeNs, Bounds("time", 0, 1000000000)] = Field(default=1000, description="Host transmit timing jitter (NIC DMA, PCIe): each packet reaches the switch up to this late (uniform, order kept).")


class GraphNode(Strict):
    """A node of the graph."""

    name: str = Field(description="Its name (links and flows refer to it).")
    kind: Literal["host", "switch"] = Field(description="`host` (flows start and end here; never forwards) or `switch` (forwards).")


class GraphLink(Strict):
    """One link of the graph: `from` → `to`, and `to` → `from` with the same parameters unless `duplex = false` (`reverse_rate` gives the way back its own rate). Its path-model keys are a bottleneck's, the data direction being `from` → `to` and the ACK direction the way back."""

    from_: str = Field(description="The node the link leaves.", alias='from')
    to: str = Field(description="The node it reaches.")
    name: str | None = Field(default=None, description="Its name in the queue table and in a flow's path (default `\"from-to\"`; the way back is `\"to-from\"`, or `\"<name>-rev\"` for a named link).")
    duplex: bool = Field(default=True, description="Both directions (false: `from` \u2192 `to` only).")
    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="Link rate (exclusive with `trace`; one of the two is required).")
    reverse_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="The way back's rate (default: `rate`).")
    delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=0, description="One-way propagation delay.")
    buffer: BufferSpec = Field(default_factory=lambda: buffer_from_core({'packets': 1000}), description="Drop-tail limit of each direction's queue: a size or packets (default 1000 packets, Linux's `txqueuelen`; a BDP multiple needs an RTT, which a link alone does not have).")
    loss: Annotated[Fraction, Bounds("fraction", 0.0, 1.0, exclusive_max=True)] = Field(default=0.0, description="Bernoulli loss of every packet offered, each direction.")
    ecn_threshold: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="CE-mark ECN-capable packets arriving when more than this many bytes wait (DCTCP's K).")
    ecn_threshold_packets: Annotated[Count, Bounds("count", 1, 1000000000)] | None = Field(default=None, description="The same threshold in packets (a packet is marked if either threshold is exceeded).")
    red: Red | None = Field(default=None, description="RED (as a bottleneck's `red`): marks ECN-capable packets, drops others; `weight = 1` acts on the instantaneous queue.")
    qdisc: QdiscSpec | None = Field(default=None, description="The queue discipline of each direction (as a bottleneck's `qdisc`), with `buffer` as its limit; a discipline other than drop-tail takes neither `red` nor the ECN thresholds.")
    schedule: list[ScheduleEntrySpec] = Field(default_factory=list, description="Changes of the link's `rate`, `delay`, `loss` and `buffer` at given times, in increasing order: each sets its key in every direction the key governs (`rate` the data direction, and the way back unless `reverse_rate` is given; `delay`, `loss` and `buffer` both). A changing delay keeps packets in order.")
    trace: TraceFile | None = Field(default=None, description="The data direction's rate follows this trace instead of `rate`: Mahimahi's format (one line per 1500-byte delivery opportunity, in ms, looping) or, for a `.csv` file, lines of `t_ms, rate_bps`. The front reads the file (its path relative to the scenario).")
    trace_reverse: TraceFile | None = Field(default=None, description="The way back's trace (default: the way back runs at `reverse_rate`, else at the data direction's rate or the data trace's mean rate).")
    policer: PolicerSpec | None = Field(default=None, description="A token-bucket policer on the data direction, before the queue: conforming packets pass, the others are dropped (counted in the queue table's `policer_drops`).")
    aggregation: AggregationSpec | None = Field(default=None, description="Link-layer aggregation after the transmitter, on the direction it names (`ack`: the ACK direction's link).")
    jitter: JitterSpec | None = Field(default=None, description="Delay jitter on the data direction, after the transmitter.")
    reorder: ReorderSpec | None = Field(default=None, description="Reordering on the data direction, after the transmitter (and after `jitter`).")
    loss_model: LossModelSpec | None = Field(default=None, description="A burst-loss process on the data direction, before the queue, beside `loss`.")


class GraphFabricKeys(Strict):
    """The switches' and hosts' options of a graph (`[topology.fabric]`), each as the star's key of the same name (`topology.rs`), on every switch and host alike: one PAUSE configuration, one shared buffer pool for all switch output ports (as a star's racks share one), one forwarding mode."""

    forwarding: Literal["store-and-forward", "cut-through"] = Field(default='store-and-forward', description="As a star's `forwarding`: a switch hands a packet on once it has all of it, or once its `header` has arrived (from a link at least as fast as the output and without a path model).")
    header: Annotated[SizeBytes, Bounds("size", 1, 65535)] | None = Field(default=None, description="Cut-through: bytes that must arrive before a packet is forwarded (default 64).")
    lossless: bool = Field(default=False, description="As a star's `lossless`: IEEE 802.3x PAUSE back-pressure at every switch (thresholds in `pfc`). With ingress accounting, the switches' output ports drop nothing: the ingress ports' budgets decide.")
    pfc: Pfc = Field(default_factory=Pfc, description="PAUSE thresholds, used when `lossless` is true (as a star's `pfc`).")
    shared_buffer: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="Limit on the bytes queued in all output ports together (none by default). With PFC's ingress accounting: the pool the ingress ports' usage below XOFF draws on (headroom is reserved per port, outside it).")
    shared_buffer_alpha: Annotated[Fraction, Bounds("fraction", 0.0078125, 64.0)] | None = Field(default=None, description="Dynamic threshold of the shared buffer (Mellanox and Broadcom call it alpha; Choudhury and Hahne 1998): an output queue takes a packet only while its bytes stay below `alpha` \u00d7 the free shared buffer, so one congested queue gets alpha / (1 + alpha) of the pool. Needs `shared_buffer`; none = first come, first served up to the pool.")
    clock_ppm: Annotated[Count, Bounds("count", 0, 1000)] = Field(default=0, description="As a star's `clock_ppm`: each host link's rate is scaled by a seeded uniform draw within \u00b1 this many ppm (default 0: exact clocks).")
    host_jitter: Annotated[TimeNs, Bounds("time", 0, 1000000000)] = Field(default=0, description="As a star's `host_jitter`: each packet a host sends reaches the far end up to this late (uniform, order kept; default 0).")


class Graph(Strict):
    """Any topology: named hosts and switches, named links, shortest-path routes with ECMP (`graph.rs`); flows name their `src` and `dst` hosts."""

    kind: Literal["graph"] = "graph"
    nodes: list[GraphNode] = Field(description="The nodes: `{ name = \"s1\", kind = \"host\" }` or `kind = \"switch\"`. Only switches forward; a host is where flows start and end.")
    links: list[GraphLink] = Field(description="The links (`[[topology.links]]`), each both directions unless `duplex = false`.")
    routing: Literal["hops", "delay"] = Field(default='hops', description="Shortest paths by `\"hops\"` (the default) or by `\"delay\"` (the sum of the links' delays, hops breaking ties). Equal-cost paths are spread over the flows by a per-flow hash at each switch (ECMP).")
    fabric: GraphFabricKeys | None = Field(default=None, description="What a star sets for its switch and its hosts, for every switch and host of the graph: PAUSE, the shared buffer, cut-through forwarding, the hosts' NIC clocks and jitter (none: store-and-forward, lossy switches with per-port buffers, exact host clocks).")


class PresetPorts(Strict):
    """What every link of a preset shares besides its rate and delay."""

    buffer: BufferSpec | None = Field(default=None, description="Drop-tail limit of every link's queue (default 1000 packets, as a graph link's).")
    ecn_threshold: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="CE-mark ECN-capable packets arriving when more than this many bytes wait (every link).")
    qdisc: QdiscSpec | None = Field(default=None, description="Every link's queue discipline (as a graph link's `qdisc`).")


class ParkingLot(Strict):
    """N bottlenecks in a row, a long flow group's hosts across all, a cross group's per hop (expands into a graph; `presets.rs`)."""

    kind: Literal["parking_lot"] = "parking_lot"
    bottlenecks: Annotated[Count, Bounds("count", 1, 6)] = Field(description="Bottleneck links in a row.")
    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(description="Rate of every bottleneck link.")
    delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(description="One-way delay of every bottleneck link (host links have none).")
    access_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="Every host's link (default: 10 \u00d7 `rate`, so the bottlenecks are the bottlenecks).")
    ports: PresetPorts = Field(default_factory=PresetPorts, description="Queues of every link.")


class LeafSpine(Strict):
    """Leaves and spines, every leaf linked to every spine (expands into a graph)."""

    kind: Literal["leaf_spine"] = "leaf_spine"
    spines: Annotated[Count, Bounds("count", 1, 1000)] = Field(description="Spine switches.")
    leaves: Annotated[Count, Bounds("count", 1, 1000)] = Field(description="Leaf (top-of-rack) switches.")
    hosts_per_leaf: Annotated[Count, Bounds("count", 1, 1000)] = Field(description="Hosts per leaf.")
    host_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(description="Rate of every host link.")
    fabric_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="Rate of every leaf\u2013spine link (default: host rate \u00d7 hosts per leaf / spines, a non-blocking fabric; lower it for oversubscription).")
    delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=10000, description="One-way delay of every link.")
    ports: PresetPorts = Field(default_factory=PresetPorts, description="Queues of every link.")


class FatTree(Strict):
    """The k-ary fat-tree (expands into a graph)."""

    kind: Literal["fat_tree"] = "fat_tree"
    k: Annotated[Count, Bounds("count", 2, 16)] = Field(description="Ports per switch (even).")
    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(description="Rate of every link.")
    delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=10000, description="One-way delay of every link.")
    ports: PresetPorts = Field(default_factory=PresetPorts, description="Queues of every link.")


Topology = Annotated[Annotated[Dumbbell, Tag('dumbbell')] | Annotated[Star, Tag('star')] | Annotated[Graph, Tag('graph')] | Annotated[ParkingLot, Tag('parking_lot')] | Annotated[LeafSpine, Tag('leaf_spine')] | Annotated[FatTree, Tag('fat_tree')], Discriminator(kind_of(('dumbbell', 'star', 'graph', 'parking_lot', 'leaf_spine', 'fat_tree'))), BeforeValidator(check_kind(('dumbbell', 'star', 'graph', 'parking_lot', 'leaf_spine', 'fat_tree')))]


class Rpc(Strict):
    """Request/response workload: write `size` (rounded up to whole segments), wait for the full ACK, wait `gap`, repeat."""

    size: Annotated[SizeBytes, Bounds("size", 1, 1000000000000000)] = Field(description="Message size.")
    gap: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=0, description="Pause after a message is fully acknowledged.")


class RateApp(Strict):
    """Writes at `rate` (payload), in whole segments as they fall due."""

    kind: Literal["rate"] = "rate"
    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(description="Payload rate the application writes at.")
    bulk_until: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] | None = Field(default=None, description="Write as a bulk sender (unlimited) until this time, then at `rate` from it (none: at `rate` from the start): an application that slows down after its start, e.g. the BBR draft's A.6 and A.21 (app-limited once BBR is probing).")


class OnoffApp(Strict):
    """Writes `bytes` at once every `period` (bursts), whether or not the last one has gone."""

    kind: Literal["onoff"] = "onoff"
    bytes_: Annotated[SizeBytes, Bounds("size", 1, 1000000000000000)] = Field(description="Bytes per burst (whole segments: rounded up to the MSS).", alias='bytes')
    period: Annotated[TimeNs, Bounds("time", 1000, 1000000000000000)] = Field(description="Time from one burst's write to the next.")


FlowApp = Annotated[Annotated[RateApp, Tag('rate')] | Annotated[OnoffApp, Tag('onoff')], Discriminator(kind_of(('rate', 'onoff'))), BeforeValidator(check_kind(('rate', 'onoff')))]


class Flow(Strict):
    """A transfer (bulk unless `bytes` or `rpc` is set) and its TCP settings."""

    cc: Annotated[str, algorithm_validator(ALGORITHMS)] = Field(description="Algorithm (`bbrlab cc` lists them).")
    count: Annotated[Count, Bounds("count", 1, 100000)] = Field(default=1, description="Replicate the flow.")
    start: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(default=0, description="When the application starts writing.")
    stop: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] | None = Field(default=None, description="When the application stops writing (none: at the end of the run).")
    bytes_: Annotated[SizeBytes, Bounds("size", 1, 1000000000000000)] | None = Field(default=None, description="Transfer size; the flow completion time is then reported (none: unlimited).", alias='bytes')
    extra_rtt: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=0, description="Added to this flow's RTT (on its access link).")
    mss: Annotated[SizeBytes, Bounds("size", 64, 65000)] = Field(default=1448, description="Segment size.")
    initial_cwnd: Annotated[Count, Bounds("count", 1, 1000000)] = Field(default=10, description="Initial window.")
    transport: Literal["tcp", "udp"] = Field(default='tcp', description="What carries the flow on the emu backend: \"tcp\", the kernel's TCP (the default), or \"udp\", bbrlab's own transport over UDP sockets (a user-space process per half running this simulator's sender and receiver with the flow's algorithm; docs/emu.md). The simulator always runs its own transport, the same sans-IO code, so both values run alike here and `compare` sets the two side by side.")
    pacing: Annotated[Literal["on", "off", "auto"], SUGAR['pacing']] = Field(default='auto', description="`auto` (BBR and BQL pace, others not), `on`, `off`.")
    max_pacing_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] | None = Field(default=None, description="Pacing cap, as `SO_MAX_PACING_RATE` / fq `maxrate`.")
    sndbuf: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="Send buffer: unacknowledged plus unsent data (none: unlimited).")
    rcvbuf: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] | None = Field(default=None, description="Receive buffer: the advertised window (none: unlimited).")
    ecn: bool | Literal["off", "ect0", "ect1"] = Field(default='off', description="ECN: \"off\", \"ect0\" (classic ECN, RFC 3168: a mark means what a drop would) or \"ect1\" (L4S, RFC 9331: for an algorithm with a scalable, per-mark response); `true` is \"ect0\", `false` \"off\".")
    tso: bool = Field(default=True, description="TSO-style bursts (\u22481 ms of the pacing rate, 2 segments to 64 KB).")
    tso_defer: bool = Field(default=True, description="Linux's TSO deferral (`tcp_tso_should_defer`, `tcp_tso_win_divisor` 3) for unpaced flows: new data waits for a full offload frame or a third of the window unless the next ACK would come too late; false = send what each ACK frees at once.")
    min_rto: Annotated[TimeNs, Bounds("time", 1, 100000000000)] = Field(default=200000000, description="Minimum RTO (Linux's default 200 ms).")
    delayed_ack: bool = Field(default=True, description="Receiver ACKs every 2nd segment, 40 ms timer, quick-ACK at start.")
    tso_minrtt_autosize: bool = Field(default=True, description="BBRv2/v3 offload sizing adds 64 KB >> (min_rtt / 512 \u00b5s) (Google's BBRv2 slides); false = rate only.")
    fast_path: bool = Field(default=True, description="BBRv2/v3 fast path (Google's BBRv2 slides): app-limited ACKs below max_bw in a round without loss or CE skip the model and control update; false = the whole algorithm on every ACK. Its saving shows in the host CPU (`hosts`).")
    receiver_window: Literal["static", "autotune", "ictcp"] = Field(default='static', description="Who sizes the advertised window: `static` (`rcvbuf`, or no limit), `autotune` (Linux's receive-buffer autotuning, or `rcvbuf` when set), `ictcp` (the receiver host's ICTCP controller, Wu et al., CoNEXT 2010). The kernel on --backend emu always autotunes. (Its values carry their own marks: `ictcp` is refused there.)")
    gap_histogram: bool = Field(default=False, description="Histogram of inter-departure gaps at the sender's NIC (`gaps` table).")
    trace: bool = Field(default=False, description="Record the algorithm's state after every ACK (`state` table: phase, round, max_bw, bounds, min_rtt, gains, cwnd, pacing rate, extra_acked, full-bw flags, loss/ECN counts); for checks of an algorithm's rules (`bbrlab conform`). Costs a row per ACK.")
    pcap: bool = Field(default=False, description="Capture the headers of the flow's TCP segments at its sender (`packets` table; `bbrlab run` writes them as packets.pcap): data as it leaves for the NIC, ACKs as they arrive. Costs a row per segment.")
    drop_segments: list[Annotated[Count, Bounds("count", 0, 1000000000000000)]] | None = Field(default=None, description="Drop the first transmission of these data segments (numbered from 0 in sequence order) as they leave the sender, before its first link: losses placed exactly, e.g. the BBR draft's A.2 (six discontiguous ranges lost in one round). Retransmissions pass.")
    faster_acks: bool = Field(default=True, description="Receiver ACKs every 2nd segment even when its offered window shrank (Google's BBRv2 slides' fix); false = the old Linux rule.")
    app_read_delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] | None = Field(default=None, description="The receiving application reads this long after data arrives (none: at once).")
    rpc: Rpc | None = Field(default=None, description="Request/response workload; per-message latency in the `rpc_*` flow columns.")
    sender: Annotated[Count, Bounds("count", 0, 100000)] | None = Field(default=None, description="Flows with the same index share one sender host and its NIC (none: own host; on a star, the worker with the flow's number).")
    app: FlowApp | None = Field(default=None, description="The application writing the flow's data: `{ kind = \"rate\", rate = \"20Mbps\" }` or `{ kind = \"onoff\", bytes = \"1MB\", period = \"100ms\" }` (none: bulk, or `bytes`); its app-limited time shows in the timeseries' `app_limited` column.")
    src: str | None = Field(default=None, description="The host the flow starts at (a graph's node; required there, refused elsewhere).")
    dst: str | None = Field(default=None, description="The host the flow ends at (a graph's node; required there, refused elsewhere).")


class UdpCbr(Strict):
    """UDP at a constant rate: one packet every `packet_size · 8 / rate`."""

    kind: Literal["udp_cbr"] = "udp_cbr"
    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(description="Sending rate on the wire (Ethernet framing included, as a link's rate is).")
    packet_size: Annotated[SizeBytes, Bounds("size", 29, 65000)] = Field(default=1500, description="IP packet size (UDP payload + 28 B of IP and UDP headers).")
    src: str | None = Field(default=None, description="The sending host by name; only on topologies that name hosts (a dumbbell or star does not: leave it out, and set `reverse` for the receiver-to-sender direction).")
    dst: str | None = Field(default=None, description="The receiving host by name (as `src`).")
    reverse: bool = Field(default=False, description="Send from the receiver side to the sender side (a dumbbell's reverse bottleneck, a star's aggregator to the worker), against the TCP data.")
    sender: Annotated[Count, Bounds("count", 0, 100000)] | None = Field(default=None, description="As a flow's `sender`: sources and flows with the same index share one sender host and its NIC (none: a host of its own; on a star, worker 0).")
    start: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(default=0, description="When the first packet leaves.")
    stop: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] | None = Field(default=None, description="When the source stops sending (none: at the end of the run).")


class UdpOnoff(Strict):
    """UDP at `rate` during on periods, silent during off periods."""

    kind: Literal["udp_onoff"] = "udp_onoff"
    rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(description="Sending rate on the wire while on (as `udp_cbr`'s).")
    packet_size: Annotated[SizeBytes, Bounds("size", 29, 65000)] = Field(default=1500, description="IP packet size (UDP payload + 28 B of IP and UDP headers).")
    on: Annotated[TimeNs, Bounds("time", 1, 1000000000000000)] = Field(description="Length of an on period (the mean, with `durations = \"exponential\"`).")
    off: Annotated[TimeNs, Bounds("time", 1, 1000000000000000)] = Field(description="Length of an off period (the mean, with `durations = \"exponential\"`).")
    durations: Literal["fixed", "exponential"] = Field(default='fixed', description="`fixed` or `exponential` periods.")
    src: str | None = Field(default=None, description="The sending host by name; only on topologies that name hosts (a dumbbell or star does not: leave it out, and set `reverse` for the receiver-to-sender direction).")
    dst: str | None = Field(default=None, description="The receiving host by name (as `src`).")
    reverse: bool = Field(default=False, description="Send from the receiver side to the sender side (a dumbbell's reverse bottleneck, a star's aggregator to the worker), against the TCP data.")
    sender: Annotated[Count, Bounds("count", 0, 100000)] | None = Field(default=None, description="As a flow's `sender`: sources and flows with the same index share one sender host and its NIC (none: a host of its own; on a star, worker 0).")
    start: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(default=0, description="When the first packet leaves.")
    stop: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] | None = Field(default=None, description="When the source stops sending (none: at the end of the run).")


class Ping(Strict):
    """An echo request every `interval`; the far host answers at once; one RTT per echo in the `pings` table."""

    kind: Literal["ping"] = "ping"
    interval: Annotated[TimeNs, Bounds("time", 1000, 1000000000000000)] = Field(default=10000000, description="Time between echo requests.")
    packet_size: Annotated[SizeBytes, Bounds("size", 28, 65000)] = Field(default=84, description="IP packet size of a request and of its echo (`ping -s 56`: 84 B).")
    src: str | None = Field(default=None, description="The sending host by name; only on topologies that name hosts (a dumbbell or star does not: leave it out, and set `reverse` for the receiver-to-sender direction).")
    dst: str | None = Field(default=None, description="The receiving host by name (as `src`).")
    reverse: bool = Field(default=False, description="Send from the receiver side to the sender side (a dumbbell's reverse bottleneck, a star's aggregator to the worker), against the TCP data.")
    sender: Annotated[Count, Bounds("count", 0, 100000)] | None = Field(default=None, description="As a flow's `sender`: sources and flows with the same index share one sender host and its NIC (none: a host of its own; on a star, worker 0).")
    start: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(default=0, description="When the first packet leaves.")
    stop: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] | None = Field(default=None, description="When the source stops sending (none: at the end of the run).")


Traffic = Annotated[Annotated[UdpCbr, Tag('udp_cbr')] | Annotated[UdpOnoff, Tag('udp_onoff')] | Annotated[Ping, Tag('ping')], Discriminator(kind_of(('udp_cbr', 'udp_onoff', 'ping'))), BeforeValidator(check_kind(('udp_cbr', 'udp_onoff', 'ping')))]


class QueryApp(Strict):
    """Partition/aggregate (the Waterloo study's §4.1): the aggregator asks workers 0..n−1 for size/n bytes each over new connections; the response time runs until all n responses are complete; `repetitions` queries, each `gap` after the previous one ended (the `events` table)."""

    kind: Literal["query"] = "query"
    workers: Annotated[Count, Bounds("count", 1, 10000)] = Field(description="Workers asked per query (workers 0..n\u22121).")
    size: Annotated[SizeBytes, Bounds("size", 1, 1000000000000000)] = Field(default=1048576, description="Bytes per query, split evenly (integer division) among the workers.")
    repetitions: Annotated[Count, Bounds("count", 1, 1000000)] = Field(default=100, description="Queries in a row.")
    start: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(default=0, description="When the first query starts.")
    gap: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(default=50000000, description="Pause between the end of a query and the next.")
    jitter: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(default=0, description="Each request leaves the aggregator after a uniform random delay up to this.")
    handshake: bool = Field(default=False, description="Open the connections inside the timed query (SYN, SYN-ACK before the request); false = opened before the clock starts, as the Waterloo DC study's aggregator did.")
    flow: Flow = Field(description="Transport settings of every response (cc, min_rto, \u2026); start, stop, bytes, count and sender are set by the app.")


class CdfFile(Strict):
    """A CDF file as the front hands it over: its name and contents (so the contents enter the run's cache id, as a trace's do)."""

    file: str = Field(description="The file's path as the scenario gives it (or the shipped distribution's name).")
    text: str = Field(description="The file's contents.")


class WorkloadApp(Strict):
    """Flows arriving as a Poisson process at `load` of a link's rate, sizes from a CDF file; FCT and slowdown per flow in the `fct` table."""

    kind: Literal["workload"] = "workload"
    cdf: CdfFile = Field(description="The flow-size distribution: `\"websearch\"` (the DCTCP paper's), `\"datamining\"` (VL2's) or a file of `size_bytes cumulative_probability` lines; the front reads it.")
    load: Annotated[Fraction, Bounds("fraction", 0.0, 1.0)] = Field(description="Offered load: arrival rate \u00d7 mean size over the link's rate (0 < load < 1).")
    link: str | None = Field(default=None, description="The link whose rate the load refers to (a dumbbell: `\"bottleneck\"`, the default; a graph: a directed link's name, or none for the sender hosts' links: each carries `load` of its rate on average, as the data-center papers define an all-to-all load).")
    cc: Annotated[str, algorithm_validator(ALGORITHMS)] = Field(description="Algorithm of every flow.")
    ecn: bool | Literal["off", "ect0", "ect1"] = Field(default='off', description="ECN of every flow, as a flow's `ecn` (DCTCP needs \"ect0\" and queues that mark).")
    src: list[str] | None = Field(default=None, description="On a graph: the hosts flows leave from, each flow's drawn uniformly (none: every host).")
    dst: list[str] | None = Field(default=None, description="On a graph: the hosts flows go to, each flow's drawn uniformly among them other than its source (none: every host) \u2014 all-to-all random pairs by default.")
    hosts: Annotated[Count, Bounds("count", 1, 1000)] = Field(default=16, description="On a dumbbell: sender hosts the flows leave from, in turn (their NICs are shared as a host's is).")
    start: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] = Field(default=0, description="When arrivals begin.")
    stop: Annotated[TimeNs, Bounds("time", 0, 1000000000000000)] | None = Field(default=None, description="When arrivals end (none: at the end of the run); flows under way go on.")


App = Annotated[Annotated[QueryApp, Tag('query')] | Annotated[WorkloadApp, Tag('workload')], Discriminator(kind_of(('query', 'workload'))), BeforeValidator(check_kind(('query', 'workload')))]


class Hosts(Strict):
    """Hosts as their CPUs and NICs shape a transfer. Every host has `cores` cores; a flow's protocol work runs on core (flow id mod cores) at its sender and at its receiver (RSS/XPS keep a flow on one queue and core, so one stream has a ceiling). Packets arriving at a host wait in that core's receive ring until an interrupt (moderated by `irq_delay`/`irq_frames`) starts a NAPI poll, which merges in-order segments of a flow into one skb (GRO) and hands them to TCP: one ACK per merged skb (stretch ACKs). The costs are CPU time per event; a busy core delays the next poll and the next offload chunk. Defaults: a 2020s server core with a 100G NIC (mlx5's moderation and ring defaults; costs of the order Cai et al., "Understanding Host Network Stack Overheads", SIGCOMM 2021, measured: one core receives a single 1500-byte MTU stream at a few tens of Gbit/s, the copy to the application the largest share)."""

    cores: Annotated[Count, Bounds("count", 1, 1024)] = Field(default=8, description="Cores per host.")
    irq_delay: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=8000, description="Interrupt moderation (`ethtool -C rx-usecs`): the interrupt fires this long after the first packet that finds none pending (mlx5 default 8 \u00b5s).")
    irq_frames: Annotated[Count, Bounds("count", 1, 1000000)] = Field(default=128, description="... or as soon as this many packets wait (`rx-frames`, mlx5 default 128).")
    napi_budget: Annotated[Count, Bounds("count", 1, 1000000)] = Field(default=64, description="Packets one NAPI poll takes (Linux `NAPI_POLL_WEIGHT`); GRO flushes at the end of a poll.")
    gro: bool = Field(default=True, description="Receive offload: a poll merges a flow's in-order segments (same CE bit) into one skb.")
    gro_max: Annotated[SizeBytes, Bounds("size", 1, 1000000000000)] = Field(default=65536, description="Largest merged skb (Linux `gro_max_size`, 64 KB).")
    rx_ring_pkts: Annotated[Count, Bounds("count", 1, 10000000)] = Field(default=1024, description="Receive ring per core (packets; mlx5 default 1024); a packet that finds it full is dropped.")
    flow_control: bool = Field(default=False, description="802.3x flow control (`ethtool -A rx on`): a host with a ring 3/4 full pauses the link that feeds it until every ring is at most half full, so the last switch port queues (a dumbbell's port towards the host then has the bottleneck's buffer) instead of the ring dropping.")
    irq_cost: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=1000, description="CPU per interrupt (entry, softirq, NAPI poll set-up).")
    rx_segment_cost: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=100, description="CPU per packet received (driver descriptor, buffer, GRO merge).")
    rx_skb_cost: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=1000, description="CPU per skb handed to TCP after GRO (IP/TCP receive, building the ACK, waking the reader).")
    rx_copy_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(default=80000000000, description="Copy to the application (cache-cold DMA'd data), as a rate.")
    tx_chunk_cost: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=1500, description="CPU per offload chunk sent (tcp_write_xmit, IP output, qdisc, driver doorbell).")
    tx_segment_cost: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=20, description="CPU per segment of a chunk (TSO descriptors).")
    tx_copy_rate: Annotated[RateBps, Bounds("rate", 1, 10000000000000)] = Field(default=160000000000, description="Copy from the application (warm buffer), as a rate; new data only.")
    ack_cost: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=500, description="CPU per ACK processed by the sender (tcp_ack: clean the retransmit queue, RTT and rate samples, loss detection).")
    cc_ack_cost: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=50, description="CPU of the congestion control's per-ACK work, charged on ACKs it does not skip (BBRv2/v3's fast path, the window algorithms' not-cwnd-limited return).")
    timer_cost: Annotated[TimeNs, Bounds("time", 0, 100000000000)] = Field(default=500, description="CPU per timer that fires (pacing, retransmission, delayed ACK).")


class Capture(Strict):
    """Captures at links: what a tap on the wire just downstream of a link's queue records."""

    links: list[str] = Field(default_factory=list, description="Links to capture, by their names in the `queue` table (dumbbell: `bottleneck`, `bottleneck_rev`; star: `tor_to_agg`, `agg_nic`, `nic_<w>`, \u2026; graph: `a-b`): every TCP segment that leaves the link, when its last bit leaves \u2014 the data of every flow crossing it and, on a link that carries ACKs, the ACKs \u2014 as rows of the `packets` table (`tap` = the link's name); `bbrlab run` writes each as `<link>.pcap`. Packets the queue drops and packets the link's random loss takes (it acts as a packet is offered, before the queue) never leave, so they are not there. Costs a row per packet on each link, and the link's speed-ups (its departures become events; the results do not change).")


class Scenario(ScenarioBase):
    """One scenario: the network, the flows and the applications on it."""

    name: str = Field(default='scenario', description="Run name (used for the run directory): letters, digits, `.`, `_`, `-`; at most 100.")
    seed: Annotated[Count, Bounds("count", 0, 9223372036854775807)] = Field(default=1, description="Seed of every random stream (loss, BBR's phase choice); the same seed gives bit-identical results.")
    duration: Annotated[TimeNs, Bounds("time", 1, 1000000000000000)] = Field(description="Simulated time.")
    sample_interval: Annotated[TimeNs, Bounds("time", 1000, 1000000000000000)] = Field(default=100000000, description="Sampling period of the time series.")
    topology: Topology = Field(description="The network: `kind = \"dumbbell\"`, `\"star\"`, `\"graph\"` or a preset that expands into a graph (`\"parking_lot\"`, `\"leaf_spine\"`, `\"fat_tree\"`).")
    flows: list[Flow] = Field(default_factory=list, description="Bulk or sized transfers, each `count` times.")
    traffic: list[Traffic] = Field(default_factory=list, description="Non-TCP sources beside the flows: UDP constant-bit-rate and on/off, ping probes (on --backend emu: a dumbbell's, as processes in namespaces of their own, docs/emu.md).")
    apps: list[App] = Field(default_factory=list, description="Applications the core expands into transfers (partition/aggregate queries on a star, Poisson workloads with sizes from a CDF on any topology).")
    hosts: Hosts | None = Field(default=None, description="End hosts' CPUs, NIC receive queues and receive offload (`host.rs`; the `hosts` table); none: hosts cost nothing and every packet reaches TCP the moment it arrives.")
    capture: Capture = Field(default_factory=Capture, description="Packet captures on links (`capture.rs`).")
