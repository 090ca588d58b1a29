//! Out-of-place operations written from their in-place (`_assign`) forms,
//! so that every operation has one body.

use crate::error::Result;

/// `f` applied to a copy of `x`: the out-of-place form of an in-place
/// operation (the copy is the only extra cost).
pub(crate) fn out_of_place<T: Clone>(x: &T, f: impl FnOnce(&mut T) -> Result<()>) -> Result<T> {
    let mut y = x.clone();
    f(&mut y)?;
    Ok(y)
}
