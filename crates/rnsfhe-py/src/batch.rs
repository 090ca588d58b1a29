//! Batch calls: one operation over many rows or ciphertexts, in parallel on
//! the pool (GIL released), in chunks so that a progress bar can advance
//! and Ctrl-C is honoured between chunks; and casting an iterable of
//! ciphertexts.

use pyo3::prelude::*;
use rayon::prelude::*;

use crate::errors::IntoPyResult;
use crate::runtime::{detach, num_threads};

/// `f` of every item, in order. With `progress`, a bar from
/// `rnsfhe._progress.bar` (tqdm when installed) counts the items done.
pub fn map<T, R, F>(
    py: Python<'_>,
    items: &[T],
    progress: bool,
    desc: &str,
    f: F,
) -> PyResult<Vec<R>>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> rnsfhe::Result<R> + Sync,
{
    let bar = if progress {
        Some(
            py.import("rnsfhe._progress")?
                .getattr("bar")?
                .call1((items.len(), desc))?,
        )
    } else {
        None
    };
    let chunk = (num_threads() * 4).max(16);
    let mut out = Vec::with_capacity(items.len());
    for part in items.chunks(chunk) {
        let done: Vec<R> = detach(py, || {
            part.par_iter().map(&f).collect::<rnsfhe::Result<Vec<R>>>()
        })
        .py()?;
        out.extend(done);
        if let Some(b) = &bar {
            b.call_method1("update", (part.len(),))?;
        }
        py.check_signals()?;
    }
    if let Some(b) = bar {
        b.call_method0("close")?;
    }
    Ok(out)
}

/// The items of the iterable `items`, each cast to the pyclass `T`
/// (`TypeError` otherwise).
pub fn cast_list<'py, T: pyo3::PyClass>(items: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, T>>> {
    items
        .try_iter()?
        .map(|c| c?.cast_into::<T>().map_err(PyErr::from))
        .collect()
}
