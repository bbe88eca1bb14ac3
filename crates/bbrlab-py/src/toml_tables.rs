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
    Ok(table_to_py(py, &table)?.map(|d| d.into_any().unbind()))
}

/// A table as a dict, or None if it holds a date or time anywhere.
fn table_to_py<'py>(py: Python<'py>, t: &toml::Table) -> PyResult<Option<Bound<'py, PyDict>>> {
    let d = PyDict::new(py);
    for (k, v) in t {
        let Some(x) = value_to_py(py, v)? else { return Ok(None) };
        d.set_item(k, x)?;
    }
    Ok(Some(d))
}

/// A value as Python's, or None for a date or time (and for anything holding one).
fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<Option<PyObject>> {
    Ok(Some(match v {
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Integer(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                let Some(x) = value_to_py(py, x)? else { return Ok(None) };
                l.append(x)?;
            }
            l.into_any().unbind()
        }
        Value::Table(t) => match table_to_py(py, t)? {
            Some(d) => d.into_any().unbind(),
            None => return Ok(None),
        },
        Value::Datetime(_) => return Ok(None),
    }))
}
