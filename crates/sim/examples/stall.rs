//! Find where a run stops advancing: cargo run --release -p bbrlab-sim --example stall -- FILE.json
use sim::Simulation;
fn main() {
    let json = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let mut sim = Simulation::from_json(&json).unwrap();
    let step = 1_000_000u64;
    let mut t = 0;
    while !sim.is_complete() {
        let ev = sim.events;
        t += step;
        sim.run_until(t);
        if sim.events - ev > 5_000_000 {
            println!("t={} ns: {} events in 1 ms", sim.now_ns(), sim.events - ev);
            for l in sim.debug_flows() {
                println!("  {l}");
            }
            return;
        }
    }
    println!("completed");
}
