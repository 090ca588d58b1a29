//! Device-resident polynomials and the building blocks every operation is
//! made of: the modulus/twiddle table of a scheme context, NTTs over any
//! list of rows, point-wise launches, base conversions and hybrid key
//! switching (ModUp, inner product, ModDown). Shared by [`crate::bfv`] and
//! [`crate::ckks`].

mod conv;
mod engine;
mod hybrid;
mod key_switch;
mod rows;

pub(crate) use conv::DevConv;
pub(crate) use engine::Engine;
pub use hybrid::DeviceKsk;
pub(crate) use hybrid::HybridLevel;
pub use rows::DevPoly;
pub(crate) use rows::SecretDevPoly;
pub(crate) use rows::{Consts, ModTable, Rows};
