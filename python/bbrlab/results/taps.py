"""Capture points of the ``packets`` table (its ``tap`` column) and their files in a run directory.
Apart from ``pcap.py`` so that the CLI names them without loading numpy."""

from __future__ import annotations

__all__ = ["TAP_SENDER", "SENDER_PCAP_FILE", "pcap_file_name"]

#: The ``tap`` of the flows' own captures (``pcap = true``), at their sender hosts
#: (``capture.rs`` ``TAP_SENDER_LABEL``); every other ``tap`` is a captured link's name.
TAP_SENDER = "sender"
#: The run directory's file of the senders' captures.
SENDER_PCAP_FILE = "packets.pcap"


def pcap_file_name(tap: str) -> str:
    """The run directory's file of capture point ``tap``: packets.pcap for the senders',
    ``<link>.pcap`` for a link's."""
    return SENDER_PCAP_FILE if tap == TAP_SENDER else f"{tap}.pcap"
