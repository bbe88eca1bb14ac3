"""The link emulator's process: ``python -m bbrlab.emu.linkemu --config JSON``.

The emulator is Rust (``crates/emu``) compiled into the package's extension, ``bbrlab._core``;
this module only hands it the command line and exits with its status. The runner starts it as a
child process (``launch.py`` says how and why), and it imports nothing but ``bbrlab._core``:
``import bbrlab`` is lazy, so neither pydantic nor pandas/matplotlib load and the emulator is up
in a few tens of milliseconds. The process calls itself ``bbrlab-linkemu`` once running.
"""

from __future__ import annotations

import sys

from bbrlab._core import linkemu_main


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return linkemu_main(["bbrlab-linkemu", *args])


if __name__ == "__main__":
    sys.exit(main())
