//! `parse_toml`: a scenario file's TOML text as Python tables, faster than Python's `tomllib`
//! (a file of 10^5 `[[flows]]` tables: ~3x, docs/performance.md).
//!
//! It answers only where its answer is `tomllib.loads`'s: the same TOML version (1.0), the same
//! values, keys in the file's order (one difference of order only: a table first made by a
//! sub-table's header, `[t.inner]` before `[t]`, stands where its own header is; `tomllib` keeps
//! it where it was first made). Where it would differ it answers None and the caller uses
//! `tomllib`, which also words every syntax error as before: a file that does not parse, a date
//! or time value (`tomllib` makes `datetime` objects, and the scenario's checks name them), and
//! an integer outside 64 bits (Python's are unbounded).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use toml::Value;

/// The TOML text as dicts and lists, or None where `tomllib` must answer (see the module header).
#[pyfunction]
pub fn parse_toml(py: Python<'_>, text: &str) -> PyResult<Option<PyObject>> {
    let Ok(table) = py.allow_threads(|| text.parse::<toml::Table>()) else {
        return Ok(None);
    };
    if table.values().any(has_datetime) {
        return Ok(None);
    }
    Ok(Some(table_to_py(py, &table)?.into_any().unbind()))
}

fn has_datetime(v: &Value) -> bool {
    match v {
        Value::Datetime(_) => true,
        Value::Array(a) => a.iter().any(has_datetime),
        Value::Table(t) => t.values().any(has_datetime),
        _ => false,
    }
}

fn table_to_py<'py>(py: Python<'py>, t: &toml::Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in t {
        d.set_item(k, value_to_py(py, v)?)?;
    }
    Ok(d)
}

fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    Ok(match v {
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Integer(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(value_to_py(py, x)?)?;
            }
            l.into_any().unbind()
        }
        Value::Table(t) => table_to_py(py, t)?.into_any().unbind(),
        Value::Datetime(_) => unreachable!("parse_toml answers None for dates and times"),
    })
}
