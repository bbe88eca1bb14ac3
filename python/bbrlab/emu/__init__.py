"""The emu backend: real Linux TCP between network namespaces through bbrlab's TUN link emulator.

Modules: ``netns`` (namespaces, privilege checks, clean-up on every exit path), ``launch`` (how the
emulator process is started), ``linkemu`` (that process: ``python -m bbrlab.emu.linkemu`` runs the
emulator compiled into ``bbrlab._core``), ``traffic`` (kernel TCP senders/receivers, TCP_INFO sampling),
``runner`` (``run_emu(scenario)``: the same raw results as the simulator core) with its parts ``plan``
(resolved config, sysctls, link parameters), ``ccplan`` (the flows' algorithms), ``network`` (the
dumbbell's emulator and namespaces) and ``facts`` (what a run records of itself), ``compare``
(``bbrlab compare``: sim vs emu), ``bpf`` (BPF struct_ops ports of algorithms a stock kernel lacks,
built and registered per run), ``guardian`` (removes a run's namespaces if the runner is killed).
"""
