//! What the integer schemes (BFV and BGV) share above the RLWE core: the
//! plaintext of `R_t` ([`plaintext`]), the batch encoder ([`batch`]) and the slot layout with its row
//! generator and Galois elements ([`slots`]). Each scheme's encoders and
//! evaluators use them; neither scheme imports the other for them.

pub mod batch;
pub mod plaintext;

pub use batch::BatchEncoder;
pub mod slots;
