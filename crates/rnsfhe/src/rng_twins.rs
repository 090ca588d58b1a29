//! [`rng_twins!`]: a `*_with_rng` function and its OS-randomness twin.

/// Declares a `*_with_rng` function, given in full but for its last
/// parameter (named after `;`, of type `&mut ChaCha20Rng`), and before it
/// the twin named first, which takes the same parameters but the rng and
/// passes a fresh OS-seeded one. Generic parameters go in `[…]`. Both keep
/// the docs written before their names.
macro_rules! rng_twins {
    (
        $(#[$os_doc:meta])*
        $os:ident;
        $(#[$doc:meta])*
        pub fn $name:ident $([$($g:tt)*])? (&$self:ident $(, $arg:ident: $ty:ty)*; $rng:ident) -> $ret:ty $body:block
    ) => {
        $(#[$os_doc])*
        pub fn $os $(<$($g)*>)? (&$self $(, $arg: $ty)*) -> $ret {
            $self.$name($($arg,)* &mut ::rnsfhe_math::sampling::rng_from_os()?)
        }

        $(#[$doc])*
        pub fn $name $(<$($g)*>)? (&$self $(, $arg: $ty)*, $rng: &mut $crate::ChaCha20Rng) -> $ret $body
    };
    (
        $(#[$os_doc:meta])*
        $os:ident;
        $(#[$doc:meta])*
        pub fn $name:ident $([$($g:tt)*])? ($($arg:ident: $ty:ty),*; $rng:ident) -> $ret:ty $body:block
    ) => {
        $(#[$os_doc])*
        pub fn $os $(<$($g)*>)? ($($arg: $ty),*) -> $ret {
            Self::$name($($arg,)* &mut ::rnsfhe_math::sampling::rng_from_os()?)
        }

        $(#[$doc])*
        pub fn $name $(<$($g)*>)? ($($arg: $ty,)* $rng: &mut $crate::ChaCha20Rng) -> $ret $body
    };
}

pub(crate) use rng_twins;
