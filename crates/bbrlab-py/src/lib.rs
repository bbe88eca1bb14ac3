//! PyO3 bindings: `bbrlab._core`. No logic of its own:
//! - the simulator: hand it a JSON config, advance it with the GIL released, and return columnar
//!   results as raw little-endian buffers (docs/core-api.md);
//! - the definitions the Python front derives everything else from: the config's JSON Schema,
//!   the result tables' columns and the algorithm registry;
//! - reading scenario files fast (`parse_toml`, `toml_tables.rs`);
//! - the link emulator of the emu backend (`crates/emu`): `linkemu_main(argv)`, so the wheel
//!   carries it compiled in. It is the whole job of a child process
//!   (`python -m bbrlab.emu.linkemu`), never called in the user's own process;
//! - the UDP transport of the emu backend's `transport = "udp"` flows (`crates/udpflow`):
//!   `udpflow_main(argv)`, likewise the whole job of a child process
//!   (`python -m bbrlab.emu.udpflow`).

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

mod toml_tables;

create_exception!(
    _core,
    ConfigError,
    PyValueError,
    "A bad config: args are (field path in config names, message)."
);

fn config_error(e: sim::config::ConfigError) -> PyErr {
    ConfigError::new_err((e.path, e.message))
}

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

/// A config the core has checked (`check_config`): the checked config itself, from which a
/// `Simulation` is built without a second check, and as JSON text its resolved form (every
/// default filled), its resolved topology alone and the facts derived from it.
#[pyclass(module = "bbrlab._core", frozen)]
struct CheckedConfig {
    checked: sim::config::Checked,
    resolved: sim::config::Config,
    /// The facts derived from it (BDP, the shared queue's limit, …; JSON text).
    #[pyo3(get)]
    derived: String,
}

fn to_json(value: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymethods]
impl CheckedConfig {
    /// The config with every default filled (JSON text).
    #[getter]
    fn resolved(&self, py: Python<'_>) -> PyResult<String> {
        py.allow_threads(|| to_json(&self.resolved))
    }

    /// Its topology alone (JSON text): what the front needs without decoding every flow.
    #[getter]
    fn topology(&self) -> PyResult<String> {
        to_json(&self.resolved.topology)
    }
}

#[pymethods]
impl Simulation {
    /// From a `CheckedConfig` (not checked again) or a config's JSON text (checked here).
    #[new]
    fn new(py: Python<'_>, config: &Bound<'_, PyAny>) -> PyResult<Self> {
        let built = if let Ok(c) = config.downcast::<CheckedConfig>() {
            let checked = c.get().checked.clone();
            py.allow_threads(move || sim::Simulation::from_checked(checked))
        } else {
            let json: String = config.extract()?;
            py.allow_threads(move || sim::Simulation::from_json(&json))
        };
        built.map(|sim| Simulation { sim }).map_err(config_error)
    }

    #[getter]
    fn end_ns(&self) -> u64 {
        self.sim.end_ns()
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.now_ns()
    }

    /// Events processed so far.
    #[getter]
    fn events(&self) -> u64 {
        self.sim.events
    }

    /// Advance to `t_ns` with the GIL released, stopping early after `max_events` events or
    /// `max_wall_s` seconds of wall time; True once the run is complete. A livelocked model
    /// raises RuntimeError.
    #[pyo3(signature = (t_ns, max_events=None, max_wall_s=None))]
    fn run_until(
        &mut self,
        py: Python<'_>,
        t_ns: u64,
        max_events: Option<u64>,
        max_wall_s: Option<f64>,
    ) -> PyResult<bool> {
        let sim = &mut self.sim;
        let wall = max_wall_s
            .filter(|w| w.is_finite() && *w >= 0.0)
            .map(std::time::Duration::from_secs_f64);
        py.allow_threads(move || sim.advance(t_ns, max_events.unwrap_or(u64::MAX), wall))
            .map_err(pyo3::exceptions::PyRuntimeError::new_err)
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
        out.set_item("hosts", table_to_dict(py, &r.hosts)?)?;
        out.set_item("state", table_to_dict(py, &r.state)?)?;
        out.set_item("traffic", table_to_dict(py, &r.traffic)?)?;
        out.set_item("pings", table_to_dict(py, &r.pings)?)?;
        out.set_item("fct", table_to_dict(py, &r.fct)?)?;
        out.set_item("packets", table_to_dict(py, &r.packets)?)?;
        let labels = PyDict::new(py);
        labels.set_item("phase", PyList::new(py, &r.phase_labels)?)?;
        labels.set_item("cc", PyList::new(py, &r.cc_labels)?)?;
        labels.set_item("queue", PyList::new(py, &r.queue_labels)?)?;
        labels.set_item("tap", PyList::new(py, &r.tap_labels)?)?;
        labels.set_item("host", PyList::new(py, &r.host_labels)?)?;
        labels.set_item("kind", PyList::new(py, &r.kind_labels)?)?;
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

/// The config's JSON Schema (draft 2020-12), as JSON text.
#[pyfunction]
fn config_schema() -> String {
    sim::config::schema().to_string()
}

/// Check a config (the core's one checker: bounds, types, relations) and return it as a
/// `CheckedConfig`; raises ConfigError.
#[pyfunction]
fn check_config(py: Python<'_>, config_json: &str) -> PyResult<CheckedConfig> {
    py.allow_threads(|| {
        let checked = sim::config::Config::check_json(config_json).map_err(config_error)?;
        let derived = to_json(&checked.derived())?;
        Ok(CheckedConfig { resolved: checked.resolved(), checked, derived })
    })
}

/// The result tables: `[{name, description, columns: [{name, dtype, unit, description}]}]`.
#[pyfunction]
fn result_schema(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let tables = PyList::empty(py);
    for t in sim::metrics::TABLES {
        let cols = PyList::empty(py);
        for c in t.columns {
            let d = PyDict::new(py);
            d.set_item("name", c.name)?;
            d.set_item("dtype", c.dtype.numpy())?;
            d.set_item("unit", c.unit)?;
            d.set_item("description", c.description)?;
            cols.append(d)?;
        }
        let d = PyDict::new(py);
        d.set_item("name", t.name)?;
        d.set_item("description", t.description)?;
        d.set_item("columns", cols)?;
        tables.append(d)?;
    }
    Ok(tables)
}

/// The algorithm registry: `[{name, aliases, summary, source, kernel_name, needs_ecn, phases}]`
/// (`phases[code]` is the name of phase code `code` in the algorithm's timeseries).
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for a in cc::registry::ALGORITHMS {
        let d = PyDict::new(py);
        d.set_item("name", a.name)?;
        d.set_item("aliases", PyList::new(py, a.aliases)?)?;
        d.set_item("summary", a.summary)?;
        d.set_item("source", a.source)?;
        d.set_item("kernel_name", a.kernel_name)?;
        d.set_item("needs_ecn", a.needs_ecn)?;
        d.set_item("phases", PyList::new(py, a.phases)?)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Run bbrlab's link emulator with command line `argv` (`argv[0]` = program name) in this
/// process, with the GIL released, until it is told to stop; returns its exit status. It takes
/// over the process (name, signals, scheduling, death with the parent: see crates/emu/src/run.rs),
/// so only `bbrlab.emu.linkemu`, the emulator's own process, calls it.
#[pyfunction]
fn linkemu_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.allow_threads(move || linkemu::run_main(argv))
}

/// Run one half (sender or receiver) of bbrlab's UDP transport with command line `argv` in this
/// process, with the GIL released, until it ends; returns its exit status. It takes over the
/// process (name, signals, death with the parent: see crates/udpflow/src/lib.rs), so only
/// `bbrlab.emu.udpflow`, the transport's own process, calls it.
#[pyfunction]
fn udpflow_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.allow_threads(move || udpflow::run_main(argv))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_class::<CheckedConfig>()?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    m.add_function(wrap_pyfunction!(check_config, m)?)?;
    m.add_function(wrap_pyfunction!(result_schema, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(linkemu_main, m)?)?;
    m.add_function(wrap_pyfunction!(udpflow_main, m)?)?;
    m.add_function(wrap_pyfunction!(toml_tables::parse_toml, m)?)?;
    Ok(())
}
