//! What the crate's unit tests share: a scenario run to its end with the books checked, an
//! incast's flows, and a table's column read as numbers.

use crate::metrics::{Column, Table};
use crate::{Results, Simulation};

/// The scenario `json` run to its end; panics unless every packet is accounted for.
pub(crate) fn run_to_end(json: &str) -> Results {
    let mut sim = Simulation::from_json(json).unwrap();
    sim.run_until(u64::MAX);
    sim.check_conservation().unwrap();
    sim.results()
}

/// The flows array's contents for an incast: `n` CUBIC flows, one per sender, starting 1 µs
/// apart.
pub(crate) fn incast_flows(n: u32) -> String {
    (0..n)
        .map(|i| format!(r#"{{"cc":"cubic","start_ns":{}}}"#, i * 1000))
        .collect::<Vec<_>>()
        .join(",")
}

/// Column `c` of `t`, a float column.
pub(crate) fn f64s(t: &Table, c: &str) -> Vec<f64> {
    t.get(c).and_then(Column::as_f64).unwrap().to_vec()
}

/// Column `c` of `t`, an integer column.
pub(crate) fn i64s(t: &Table, c: &str) -> Vec<i64> {
    t.get(c).and_then(Column::as_i64).unwrap().to_vec()
}
