"""The UDP transport's process: ``python -m bbrlab.emu.udpflow --config JSON``.

One half (sender or receiver) of bbrlab's own transport over UDP (``crates/udpflow``: the
simulator's sans-IO sender and receiver driving a real socket), compiled into ``bbrlab._core``
like the link emulator (``linkemu.py``); the emu backend starts one per half of every
``transport = "udp"`` flow, inside its namespace. It imports nothing but ``bbrlab._core``, and
calls itself ``bbrlab-udpflow`` once running.
"""

from __future__ import annotations

import sys

from bbrlab._core import udpflow_main


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return udpflow_main(["bbrlab-udpflow", *args])


if __name__ == "__main__":
    sys.exit(main())
