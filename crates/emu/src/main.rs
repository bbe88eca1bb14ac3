//! `bbrlab-linkemu`: the link emulator as a standalone binary, for development and for
//! `BBRLAB_LINKEMU`. The Python package does not need it: it runs the same code,
//! [`linkemu::run_main`], from its extension (`python -m bbrlab.emu.linkemu`). Usage and design:
//! `src/run.rs`.

fn main() {
    std::process::exit(linkemu::run_main(std::env::args().collect()))
}
