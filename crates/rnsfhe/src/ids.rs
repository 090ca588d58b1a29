//! The two public tags every key and ciphertext carries: the parameter id
//! of its context and the key id of the secret key it belongs to (a
//! random tag, not key material), with one pair of accessors for all and
//! an equality that compares them first.

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

/// `PartialEq` and `Eq` for a type with fields `params_id` and `key_id`,
/// comparing those and then the given fields only (a seed it may carry is
/// not part of its value).
macro_rules! eq_on_ids_and {
    ($ty:ty: $($field:ident),+) => {
        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                self.params_id == other.params_id
                    && self.key_id == other.key_id
                    $(&& self.$field == other.$field)+
            }
        }

        impl Eq for $ty {}
    };
}
pub(crate) use eq_on_ids_and;
