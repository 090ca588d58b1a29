//! The two public tags every key and ciphertext carries: the parameter id
//! of its context and the key id of the secret key it belongs to (a
//! random tag, not key material), with one pair of accessors for all.

/// `params_id()` and `key_id()` for a type with fields `params_id` and
/// `key_id`.
macro_rules! id_accessors {
    ($ty:ty) => {
        impl $ty {
            /// The parameter id of the context it was made for.
            pub fn params_id(&self) -> u64 {
                self.params_id
            }

            /// The key id of the secret key it belongs to (a public random
            /// tag shared by the secret key and everything derived from it).
            pub fn key_id(&self) -> u64 {
                self.key_id
            }
        }
    };
}
pub(crate) use id_accessors;
