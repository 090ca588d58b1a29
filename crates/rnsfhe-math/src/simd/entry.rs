//! [`simd_entry!`], the macro that declares the safe entry points of the
//! SIMD kernels.
//!
//! Each entry checks at run time the CPU features its kernel is compiled
//! for (an atomic load once `is_x86_feature_detected!` has cached CPUID),
//! which is all that memory safety depends on: the kernels access memory
//! only through slices and bounds-checked chunks. Value ranges (moduli
//! widths, reduced inputs) matter for the *result* only and are the
//! callers' documented preconditions. Each returns `false`/`None` when it
//! did nothing, so the caller runs the portable code.

/// Declares `pub(crate) fn $name(args) -> bool` (the kernel returns `()`)
/// or `-> Option<T>` (the kernel returns `T`) that calls `$kernel` with the
/// same arguments when the condition after `where` holds, and returns
/// `false` / `None` (nothing done) otherwise or off x86-64. The condition
/// must include the run-time check of every CPU feature the kernel's
/// `#[target_feature]` enables. Generic parameters go in brackets:
/// `fn name[const SUM: bool](…)`.
macro_rules! simd_entry {
    (
        $(#[$attr:meta])*
        fn $name:ident $([$($gen:tt)*])? ($($arg:ident: $ty:ty),* $(,)?) -> bool
        where $ok:expr => $kernel:expr
    ) => {
        $(#[$attr])*
        pub(crate) fn $name $(<$($gen)*>)? ($($arg: $ty),*) -> bool {
            $crate::simd::entry::simd_entry!(@call ($($arg),*) $ok => $kernel).is_some()
        }
    };
    (
        $(#[$attr:meta])*
        fn $name:ident $([$($gen:tt)*])? ($($arg:ident: $ty:ty),* $(,)?) -> Option<$ret:ty>
        where $ok:expr => $kernel:expr
    ) => {
        $(#[$attr])*
        pub(crate) fn $name $(<$($gen)*>)? ($($arg: $ty),*) -> Option<$ret> {
            $crate::simd::entry::simd_entry!(@call ($($arg),*) $ok => $kernel)
        }
    };
    (@call ($($arg:ident),*) $ok:expr => $kernel:expr) => {{
        #[cfg(target_arch = "x86_64")]
        let ran = if $ok {
            // SAFETY: `$ok`, checked just now, includes the run-time check
            // of the CPU features the kernel is compiled for; the kernel
            // reads and writes memory only through its slice arguments.
            Some(unsafe { $kernel($($arg),*) })
        } else {
            None
        };
        #[cfg(not(target_arch = "x86_64"))]
        let ran = {
            let _ = ($($arg,)*);
            None
        };
        ran
    }};
}
pub(super) use simd_entry;
