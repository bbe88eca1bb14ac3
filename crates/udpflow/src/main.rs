//! `bbrlab-udpflow`: the UDP transport as a standalone binary, for development. The Python
//! package runs the same code, [`udpflow::run_main`], from its extension
//! (`python -m bbrlab.emu.udpflow`). Usage and design: `src/lib.rs`.

fn main() {
    std::process::exit(udpflow::run_main(std::env::args().collect()))
}
