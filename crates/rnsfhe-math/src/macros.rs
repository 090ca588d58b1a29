//! Crate-internal macros for items that several types or modules declare
//! alike.

/// `len` and `is_empty` of a base type whose `moduli` field holds its
/// (at least one) moduli; expands inside the type's `impl` block.
macro_rules! base_len_methods {
    () => {
        /// Number of moduli `k`.
        #[inline]
        pub fn len(&self) -> usize {
            self.moduli.len()
        }

        /// Always false: a base has at least one modulus.
        #[inline]
        pub fn is_empty(&self) -> bool {
            self.moduli.is_empty()
        }
    };
}
pub(crate) use base_len_methods;
