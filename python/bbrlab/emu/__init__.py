"""The emu backend: real Linux TCP between network namespaces through bbrlab's TUN link emulator.

Modules: ``netns`` (namespaces, privilege checks, clean-up on every exit path), ``build`` (find or
build the ``bbrlab-linkemu`` binary), ``traffic`` (kernel TCP senders/receivers, TCP_INFO sampling),
``runner`` (``run_emu(scenario)``: the same raw results as the simulator core), ``compare``
(``bbrlab compare``: sim vs emu).
"""
