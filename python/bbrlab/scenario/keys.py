"""Each scenario model's fields and their names in the core's config. GENERATED with model.py by
``python -m bbrlab.scenario.codegen``: do not edit.
"""

# ruff: noqa: E501
from __future__ import annotations

#: Per model: field -> (config key, nested model name or None), for the core's config.
CORE_KEYS: dict[str, dict[str, tuple[str, str | None]]] = {
    'Red': {
        'min_th': ('min_th_bytes', None),
        'max_th': ('max_th_bytes', None),
        'max_p': ('max_p', None),
        'weight': ('weight', None),
    },
    'Bottleneck': {
        'rate': ('rate_bps', None),
        'rtt': ('rtt_ns', None),
        'buffer': ('buffer', None),
        'loss': ('loss', None),
        'ack_loss': ('ack_loss', None),
        'ecn_threshold': ('ecn_threshold_bytes', None),
        'ecn_threshold_packets': ('ecn_threshold_packets', None),
        'red': ('red', 'Red'),
    },
    'Dumbbell': {
        'kind': ('kind', None),
        'bottleneck': ('bottleneck', 'Bottleneck'),
        'access_rate': ('access_rate_bps', None),
    },
    'Pfc': {
        'xoff': ('xoff_bytes', None),
        'xon': ('xon_bytes', None),
        'quanta': ('quanta', None),
        'accounting': ('accounting', None),
        'headroom': ('headroom_bytes', None),
        'nic_pause_delay': ('nic_pause_delay_ns', None),
        'nic_honours_pause': ('nic_honours_pause', None),
    },
    'Star': {
        'kind': ('kind', None),
        'workers': ('workers', None),
        'rate': ('rate_bps', None),
        'aggregator_rate': ('aggregator_rate_bps', None),
        'delay': ('delay_ns', None),
        'buffer': ('buffer_bytes', None),
        'shared_buffer': ('shared_buffer_bytes', None),
        'shared_buffer_alpha': ('shared_buffer_alpha', None),
        'hosts_per_rack': ('hosts_per_rack', None),
        'uplink_rate': ('uplink_rate_bps', None),
        'forwarding': ('forwarding', None),
        'header': ('header_bytes', None),
        'ecn_threshold': ('ecn_threshold_bytes', None),
        'lossless': ('lossless', None),
        'pfc': ('pfc', 'Pfc'),
        'clock_ppm': ('clock_ppm', None),
        'host_jitter': ('host_jitter_ns', None),
    },
    'Rpc': {
        'size': ('size_bytes', None),
        'gap': ('gap_ns', None),
    },
    'Flow': {
        'cc': ('cc', None),
        'count': ('count', None),
        'start': ('start_ns', None),
        'stop': ('stop_ns', None),
        'bytes_': ('bytes', None),
        'extra_rtt': ('extra_rtt_ns', None),
        'mss': ('mss_bytes', None),
        'initial_cwnd': ('initial_cwnd_segs', None),
        'pacing': ('pacing', None),
        'max_pacing_rate': ('max_pacing_rate_bps', None),
        'sndbuf': ('sndbuf_bytes', None),
        'rcvbuf': ('rcvbuf_bytes', None),
        'ecn': ('ecn', None),
        'tso': ('tso', None),
        'min_rto': ('min_rto_ns', None),
        'delayed_ack': ('delayed_ack', None),
        'tso_minrtt_autosize': ('tso_minrtt_autosize', None),
        'receiver_window': ('receiver_window', None),
        'gap_histogram': ('gap_histogram', None),
        'faster_acks': ('faster_acks', None),
        'app_read_delay': ('app_read_delay_ns', None),
        'rpc': ('rpc', 'Rpc'),
        'sender': ('sender', None),
    },
    'QueryApp': {
        'kind': ('kind', None),
        'workers': ('workers', None),
        'size': ('size_bytes', None),
        'repetitions': ('repetitions', None),
        'start': ('start_ns', None),
        'gap': ('gap_ns', None),
        'jitter': ('jitter_ns', None),
        'handshake': ('handshake', None),
        'flow': ('flow', 'Flow'),
    },
    'Scenario': {
        'name': ('name', None),
        'seed': ('seed', None),
        'duration': ('duration_ns', None),
        'sample_interval': ('sample_interval_ns', None),
        'topology': ('topology', 'Topology'),
        'flows': ('flows', 'Flow'),
        'apps': ('apps', 'App'),
    },
}


#: Tagged unions: kind -> model name.
VARIANTS: dict[str, dict[str, str]] = {
    'Topology': {'dumbbell': 'Dumbbell', 'star': 'Star'},
    'App': {'query': 'QueryApp'},
}
