//! The result tables: each defined once, with every column's type, unit and meaning.
//!
//! A table's columns are data, one file per table (`tables/<name>.toml`: name, type, unit and
//! meaning of each column, in order). build.rs turns each file into a [`table!`] declaration,
//! which produces the row struct the simulator fills, the columnar buffers rows are appended
//! to, and the table's [`TableSpec`]. The specs are exported (`_core.result_schema()`): the
//! real-Linux backend builds its tables from them, the Python test stub and the column
//! reference in docs/core-api.md are generated from them, and a test checks that a run's tables
//! match their specs exactly.
//!
//! Buffers are filled on the sampling timer or at the end of the run, never per packet.
//!
//! | file | job |
//! |---|---|
//! | `tables/*.toml` | the tables' columns (data) |
//! | `spec.rs` | [`TableSpec`], [`ColumnSpec`] and the `table!` declaration of every table |
//! | `column.rs` | column element types ([`Dtype`], [`Column`]) and a run's [`Table`] |
//! | `recorder.rs` | the sampled tables of a run: timeseries, queue, per-ACK state |

mod column;
mod recorder;
mod spec;

pub use column::{Column, Dtype, Elem, Table};
pub use recorder::{FlowSample, QueueSample, Recorder};
pub use spec::*;

/// Every table the core returns, in the order `results()` lists them.
pub static TABLES: [&TableSpec; 11] =
    [&FLOWS, &TIMESERIES, &QUEUE, &GAPS, &EVENTS, &HOSTS, &STATE, &TRAFFIC, &PINGS, &FCT, &PACKETS];
