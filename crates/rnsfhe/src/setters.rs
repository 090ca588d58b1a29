//! Builder setters written once: `fn name(mut self, v: T) -> Self` that
//! store an expression of `v` in a field and return the builder.

/// One builder setter per entry `doc name(v: T) => field = expr;` (the
/// field may be a path such as `chain.sigma`).
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($v:ident: $t:ty) => $($f:ident).+ = $e:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name(mut self, $v: $t) -> Self {
            self.$($f).+ = $e;
            self
        }
    )*};
}
pub(crate) use setters;
