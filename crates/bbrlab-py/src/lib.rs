//! PyO3 bindings: `bbrlab._core`. Two entry points, no logic of their own:
//! - the simulator: hand it a resolved JSON config, advance it with the GIL released, and return
//!   columnar results as raw little-endian buffers (docs/core-api.md);
//! - the link emulator of the emu backend (`crates/emu`): `linkemu_main(argv)`, so the wheel
//!   carries it compiled in. It is the whole job of a child process
//!   (`python -m bbrlab.emu.linkemu`), never called in the user's own process.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

#[pyclass(module = "bbrlab._core")]
struct Simulation {
    sim: sim::Simulation,
}

fn table_to_dict<'py>(py: Python<'py>, t: &sim::metrics::Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let (dtype, bytes) = col.to_le_bytes();
        d.set_item(*name, (dtype, PyBytes::new(py, &bytes)))?;
    }
    Ok(d)
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        sim::Simulation::from_json(config_json)
            .map(|sim| Simulation { sim })
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    #[getter]
    fn end_ns(&self) -> u64 {
        self.sim.end_ns()
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.now_ns()
    }

    /// Advance to `t_ns` with the GIL released; True once the run is complete.
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> bool {
        let sim = &mut self.sim;
        py.allow_threads(move || sim.run_until(t_ns))
    }

    /// Check that every data packet sent was delivered, dropped, or is still in the network.
    fn check_conservation(&self) -> PyResult<()> {
        self.sim.check_conservation().map_err(PyValueError::new_err)
    }

    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = py.allow_threads(|| self.sim.results());
        let out = PyDict::new(py);
        out.set_item("flows", table_to_dict(py, &r.flows)?)?;
        out.set_item("timeseries", table_to_dict(py, &r.timeseries)?)?;
        out.set_item("queue", table_to_dict(py, &r.queue)?)?;
        out.set_item("gaps", table_to_dict(py, &r.gaps)?)?;
        out.set_item("events", table_to_dict(py, &r.app_events)?)?;
        let labels = PyDict::new(py);
        labels.set_item("phase", PyList::new(py, &r.phase_labels)?)?;
        labels.set_item("cc", PyList::new(py, &r.cc_labels)?)?;
        labels.set_item("queue", PyList::new(py, &r.queue_labels)?)?;
        out.set_item("labels", labels)?;
        let run = PyDict::new(py);
        run.set_item("events", r.events)?;
        run.set_item("data_packets_delivered", r.data_packets_delivered)?;
        run.set_item("data_packets_sent", r.data_packets_sent)?;
        run.set_item("sim_end_ns", r.sim_end_ns)?;
        run.set_item("complete", r.complete)?;
        run.set_item("pause_frames", r.pause_frames)?;
        run.set_item("drops", r.drops)?;
        out.set_item("run", run)?;
        Ok(out)
    }
}

/// The core's version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// (name, one-line description) of every algorithm the simulator offers.
#[pyfunction]
fn algorithms() -> Vec<(&'static str, &'static str)> {
    sim::algorithms()
}

/// Run bbrlab's link emulator with command line `argv` (`argv[0]` = program name) in this
/// process, with the GIL released, until it is told to stop; returns its exit status. It takes
/// over the process (name, signals, scheduling, death with the parent: see crates/emu/src/run.rs),
/// so only `bbrlab.emu.linkemu`, the emulator's own process, calls it.
#[pyfunction]
fn linkemu_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.allow_threads(move || linkemu::run_main(argv))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(linkemu_main, m)?)?;
    Ok(())
}
