"""Each scenario model's fields and their names in the core's config. GENERATED with model.py by
``python -m bbrlab.scenario.codegen``: do not edit.
"""

from __future__ import annotations

from .names import field_name

#: Per model: its fields' config keys, in the config's order (each field's attribute follows
#: from its key: :func:`bbrlab.scenario.names.field_name`).
CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    'Red': ('min_th_bytes', 'max_th_bytes', 'max_p', 'weight'),
    'Droptail': ('kind',),
    'Codel': ('kind', 'target_ns', 'interval_ns', 'ce_threshold_ns', 'ecn'),
    'FqCodel': ('kind', 'target_ns', 'interval_ns', 'ce_threshold_ns', 'ecn', 'quantum_bytes', 'flows', 'drop_batch_packets'),
    'Pie': ('kind', 'target_ns', 'tupdate_ns', 'alpha', 'beta', 'max_burst_ns', 'ecn', 'mark_ecn_threshold'),
    'DualPI2': ('kind', 'target_ns', 'tupdate_ns', 'alpha', 'beta', 'step_threshold_ns', 'coupling_factor', 'c_protection_percent', 'drop_overload'),
    'PfifoFast': ('kind',),
    'Fq': ('kind', 'quantum_bytes', 'initial_quantum_bytes', 'flow_refill_delay_ns', 'maxrate_bps', 'ce_threshold_ns', 'flow_limit_packets', 'horizon_ns'),
    'RedQdisc': ('kind', 'min_th', 'max_th', 'max_p', 'weight'),
    'ScheduleEntrySpec': ('at_ns', 'rate_bps', 'rtt_ns', 'delay_ns', 'loss', 'buffer_bytes'),
    'TraceFile': ('file', 'text'),
    'PolicerSpec': ('rate_bps', 'burst_bytes'),
    'AggregationSpec': ('direction', 'bytes', 'timeout_ns'),
    'JitterSpec': ('max_ns', 'reorder'),
    'ReorderSpec': ('probability', 'displacement', 'timeout_ns'),
    'GilbertElliott': ('kind', 'p', 'r', 'h', 'k'),
    'Bottleneck': ('rate_bps', 'rtt_ns', 'buffer', 'loss', 'ack_loss', 'ecn_threshold_bytes', 'ecn_threshold_packets', 'red', 'qdisc', 'schedule', 'trace', 'trace_reverse', 'policer', 'aggregation', 'jitter', 'reorder', 'loss_model'),
    'Dumbbell': ('kind', 'bottleneck', 'access_rate_bps', 'sender_qdisc'),
    'Pfc': ('xoff_bytes', 'xon_bytes', 'quanta', 'accounting', 'headroom_bytes', 'nic_pause_delay_ns', 'nic_honours_pause', 'switches_honour_pause'),
    'Star': ('kind', 'workers', 'rate_bps', 'aggregator_rate_bps', 'delay_ns', 'buffer_bytes', 'shared_buffer_bytes', 'shared_buffer_alpha', 'hosts_per_rack', 'worker_racks', 'uplink_rate_bps', 'forwarding', 'header_bytes', 'ecn_threshold_bytes', 'lossless', 'pfc', 'clock_ppm', 'host_jitter_ns'),
    'GraphNode': ('name', 'kind'),
    'GraphLink': ('from', 'to', 'name', 'duplex', 'rate_bps', 'reverse_rate_bps', 'delay_ns', 'buffer', 'loss', 'ecn_threshold_bytes', 'ecn_threshold_packets', 'red', 'qdisc', 'schedule', 'trace', 'trace_reverse', 'policer', 'aggregation', 'jitter', 'reorder', 'loss_model'),
    'GraphFabricKeys': ('forwarding', 'header_bytes', 'lossless', 'pfc', 'shared_buffer_bytes', 'shared_buffer_alpha', 'clock_ppm', 'host_jitter_ns'),
    'Graph': ('kind', 'nodes', 'links', 'routing', 'fabric'),
    'PresetPorts': ('buffer', 'ecn_threshold_bytes', 'qdisc'),
    'ParkingLot': ('kind', 'bottlenecks', 'rate_bps', 'delay_ns', 'access_rate_bps', 'ports'),
    'LeafSpine': ('kind', 'spines', 'leaves', 'hosts_per_leaf', 'host_rate_bps', 'fabric_rate_bps', 'delay_ns', 'ports'),
    'FatTree': ('kind', 'k', 'rate_bps', 'delay_ns', 'ports'),
    'Rpc': ('size_bytes', 'gap_ns'),
    'RateApp': ('kind', 'rate_bps', 'bulk_until_ns'),
    'OnoffApp': ('kind', 'bytes', 'period_ns'),
    'Flow': ('cc', 'count', 'start_ns', 'stop_ns', 'bytes', 'extra_rtt_ns', 'mss_bytes', 'initial_cwnd_segs', 'transport', 'pacing', 'max_pacing_rate_bps', 'sndbuf_bytes', 'rcvbuf_bytes', 'ecn', 'tso', 'tso_defer', 'min_rto_ns', 'delayed_ack', 'tso_minrtt_autosize', 'fast_path', 'receiver_window', 'gap_histogram', 'trace', 'pcap', 'drop_segments', 'faster_acks', 'app_read_delay_ns', 'rpc', 'sender', 'app', 'src', 'dst'),
    'UdpCbr': ('kind', 'rate_bps', 'packet_size_bytes', 'src', 'dst', 'reverse', 'sender', 'start_ns', 'stop_ns'),
    'UdpOnoff': ('kind', 'rate_bps', 'packet_size_bytes', 'on_ns', 'off_ns', 'durations', 'src', 'dst', 'reverse', 'sender', 'start_ns', 'stop_ns'),
    'Ping': ('kind', 'interval_ns', 'packet_size_bytes', 'src', 'dst', 'reverse', 'sender', 'start_ns', 'stop_ns'),
    'QueryApp': ('kind', 'workers', 'size_bytes', 'repetitions', 'start_ns', 'gap_ns', 'jitter_ns', 'handshake', 'flow'),
    'CdfFile': ('file', 'text'),
    'WorkloadApp': ('kind', 'cdf', 'load', 'link', 'cc', 'ecn', 'src', 'dst', 'hosts', 'start_ns', 'stop_ns'),
    'Hosts': ('cores', 'irq_delay_ns', 'irq_frames', 'napi_budget', 'gro', 'gro_max_bytes', 'rx_ring_pkts', 'flow_control', 'irq_cost_ns', 'rx_segment_cost_ns', 'rx_skb_cost_ns', 'rx_copy_rate_bps', 'tx_chunk_cost_ns', 'tx_segment_cost_ns', 'tx_copy_rate_bps', 'ack_cost_ns', 'cc_ack_cost_ns', 'timer_cost_ns'),
    'Capture': ('links',),
    'Scenario': ('name', 'seed', 'duration_ns', 'sample_interval_ns', 'topology', 'flows', 'traffic', 'apps', 'hosts', 'capture'),
}

#: Per model: its fields that hold another model (alone, in a list or as a tagged union).
NESTED: dict[str, dict[str, str]] = {
    'Bottleneck': {'red': 'Red', 'qdisc': 'QdiscSpec', 'schedule': 'ScheduleEntrySpec', 'trace': 'TraceFile', 'trace_reverse': 'TraceFile', 'policer': 'PolicerSpec', 'aggregation': 'AggregationSpec', 'jitter': 'JitterSpec', 'reorder': 'ReorderSpec', 'loss_model': 'LossModelSpec'},
    'Dumbbell': {'bottleneck': 'Bottleneck', 'sender_qdisc': 'QdiscSpec'},
    'Star': {'pfc': 'Pfc'},
    'GraphLink': {'red': 'Red', 'qdisc': 'QdiscSpec', 'schedule': 'ScheduleEntrySpec', 'trace': 'TraceFile', 'trace_reverse': 'TraceFile', 'policer': 'PolicerSpec', 'aggregation': 'AggregationSpec', 'jitter': 'JitterSpec', 'reorder': 'ReorderSpec', 'loss_model': 'LossModelSpec'},
    'GraphFabricKeys': {'pfc': 'Pfc'},
    'Graph': {'nodes': 'GraphNode', 'links': 'GraphLink', 'fabric': 'GraphFabricKeys'},
    'PresetPorts': {'qdisc': 'QdiscSpec'},
    'ParkingLot': {'ports': 'PresetPorts'},
    'LeafSpine': {'ports': 'PresetPorts'},
    'FatTree': {'ports': 'PresetPorts'},
    'Flow': {'rpc': 'Rpc', 'app': 'FlowApp'},
    'QueryApp': {'flow': 'Flow'},
    'WorkloadApp': {'cdf': 'CdfFile'},
    'Scenario': {'topology': 'Topology', 'flows': 'Flow', 'traffic': 'Traffic', 'apps': 'App', 'hosts': 'Hosts', 'capture': 'Capture'},
}

#: Per model: field -> (config key, nested model name or None), for the core's config.
CORE_KEYS: dict[str, dict[str, tuple[str, str | None]]] = {
    model: {(f := field_name(k)): (k, NESTED.get(model, {}).get(f)) for k in keys}
    for model, keys in CONFIG_KEYS.items()
}


#: Tagged unions: kind -> model name.
VARIANTS: dict[str, dict[str, str]] = {
    'QdiscSpec': {'droptail': 'Droptail', 'codel': 'Codel', 'fq_codel': 'FqCodel', 'pie': 'Pie', 'dualpi2': 'DualPI2', 'pfifo_fast': 'PfifoFast', 'fq': 'Fq', 'red': 'RedQdisc'},
    'LossModelSpec': {'gilbert_elliott': 'GilbertElliott'},
    'Topology': {'dumbbell': 'Dumbbell', 'star': 'Star', 'graph': 'Graph', 'parking_lot': 'ParkingLot', 'leaf_spine': 'LeafSpine', 'fat_tree': 'FatTree'},
    'FlowApp': {'rate': 'RateApp', 'onoff': 'OnoffApp'},
    'Traffic': {'udp_cbr': 'UdpCbr', 'udp_onoff': 'UdpOnoff', 'ping': 'Ping'},
    'App': {'query': 'QueryApp', 'workload': 'WorkloadApp'},
}
