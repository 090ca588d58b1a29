//! [`flagged_constructors!`]: public constructors that differ only in the
//! flag they pass to one private builder.

/// Declares, for each `$name => $flag;` (with its docs), a public
/// `$name($params) -> Result<Self>` that calls
/// `Self::$build($params…, $flag)`.
macro_rules! flagged_constructors {
    (@one $build:ident ($($arg:ident: $ty:ty),* $(,)?) $(#[$doc:meta])* $name:ident => $flag:expr) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) -> Result<Self> {
            Self::$build($($arg,)* $flag)
        }
    };
    ($build:ident $params:tt; $($(#[$doc:meta])* $name:ident => $flag:expr;)*) => {$(
        $crate::constructors::flagged_constructors!(@one $build $params $(#[$doc])* $name => $flag);
    )*};
}

pub(crate) use flagged_constructors;
