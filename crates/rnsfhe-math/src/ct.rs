//! Support for the constant-time check (`crates/rnsfhe-ct`, the
//! "ctgrind" method): Valgrind memcheck client requests, and
//! [`declassify_bool`], which marks the points where the library reveals a
//! bit computed from secret data on purpose (the validity of a secret
//! input, or a rejection-sampling decision whose outcome is independent of
//! the accepted values).
//!
//! [`declassify_bool`] is the identity unless the crate is built with
//! `RUSTFLAGS="--cfg rnsfhe_ctgrind"` (what `scripts/ct_check.sh` does);
//! then it also tells memcheck that the bit is public, so that the check
//! reports only the secret-dependent branches nobody vouched for. Every call
//! site says in a comment why revealing that bit is safe.
//!
//! The client requests are the `VALGRIND_MAKE_MEM_*` and
//! `VALGRIND_GET_VBITS` macros of `<valgrind/memcheck.h>`, written as the
//! x86-64 "special instruction" sequence that Valgrind recognises, so that
//! no C compiler or header is needed at build time. Outside Valgrind the
//! sequence is a no-op on the real CPU (four rotations of `rdi` by 128 bits
//! in all, and `xchg rbx, rbx`) and every request returns its default
//! value. On other architectures the requests are no-ops.

/// `VG_USERREQ__RUNNING_ON_VALGRIND` (valgrind.h).
const RUNNING_ON_VALGRIND: usize = 0x1001;
/// `VG_USERREQ_TOOL_BASE('M', 'C')`: memcheck's first request.
const MC_BASE: usize = ((b'M' as usize) << 24) | ((b'C' as usize) << 16);
/// `VG_USERREQ__MAKE_MEM_UNDEFINED`.
const MAKE_MEM_UNDEFINED: usize = MC_BASE + 1;
/// `VG_USERREQ__MAKE_MEM_DEFINED`.
const MAKE_MEM_DEFINED: usize = MC_BASE + 2;
/// `VG_USERREQ__GET_VBITS`.
const GET_VBITS: usize = MC_BASE + 8;

/// Sends one client request with up to three arguments; returns Valgrind's
/// answer, or `default` when not running under Valgrind.
#[cfg(target_arch = "x86_64")]
fn client_request(default: usize, request: usize, a1: usize, a2: usize, a3: usize) -> usize {
    let args: [usize; 6] = [request, a1, a2, a3, 0, 0];
    let mut result = default;
    // SAFETY: the rotations of rdi add up to 2·64 bits, so rdi ends as it
    // began (declared clobbered all the same), and `xchg rbx, rbx` changes
    // nothing; the CPU runs a no-op and `result` keeps `default`. Under
    // Valgrind the sequence reads the six words at rax (a live local array)
    // and writes the answer to rdx; the requests used here change only
    // memcheck's shadow state (and, for GET_VBITS, the caller's buffer
    // passed as a valid `&mut` slice), never the program's view of memory
    // behind a shared reference. The asm neither uses the stack nor leaves
    // flags meaningful (no `preserves_flags`).
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") result,
            in("rax") args.as_ptr(),
            inout("rdi") 0usize => _,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn client_request(default: usize, _request: usize, _a1: usize, _a2: usize, _a3: usize) -> usize {
    default
}

/// Whether the program runs under Valgrind (any tool).
pub fn running_on_valgrind() -> bool {
    client_request(0, RUNNING_ON_VALGRIND, 0, 0, 0) != 0
}

/// Marks the bytes of `data` as undefined for memcheck: from here on, a
/// conditional jump, a memory address or a division whose outcome depends
/// on them is reported. The values themselves do not change.
pub fn mark_secret<T: Copy>(data: &[T]) {
    let len = core::mem::size_of_val(data);
    client_request(0, MAKE_MEM_UNDEFINED, data.as_ptr() as usize, len, 0);
}

/// Marks the bytes of `data` as defined again: the values are public from
/// here on (a ciphertext, a public key, the user's final output).
pub fn declassify<T: Copy>(data: &[T]) {
    let len = core::mem::size_of_val(data);
    client_request(0, MAKE_MEM_DEFINED, data.as_ptr() as usize, len, 0);
}

/// Whether any bit of `data` is undefined (derived from a secret) for
/// memcheck; `None` when not running under Valgrind (or when memcheck
/// cannot read the shadow bits). Lets the check assert that the taint
/// really reached the values it is meant to follow, so that a silent
/// declassification cannot make the check vacuous.
pub fn is_secret<T: Copy>(data: &[T]) -> Option<bool> {
    let len = core::mem::size_of_val(data);
    let mut vbits = vec![0u8; len];
    let answer = client_request(
        0,
        GET_VBITS,
        data.as_ptr() as usize,
        vbits.as_mut_ptr() as usize,
        len,
    );
    // 1 = success; 0 = not on Valgrind; 2/3 = misaligned or unaddressable.
    (answer == 1).then(|| vbits.iter().any(|&v| v != 0))
}

/// Returns `bit`, which the caller computed from secret data and reveals on
/// purpose (the call site documents why that is safe): with the
/// `rnsfhe_ctgrind` cfg, memcheck is told the bit is public; otherwise this
/// is the identity and costs nothing.
#[inline(always)]
pub fn declassify_bool(bit: bool) -> bool {
    #[cfg(rnsfhe_ctgrind)]
    {
        let word = [u8::from(bit)];
        declassify(&word);
        // Read back through the slice the request saw, so the compiler
        // cannot reuse the register copy that memcheck still tracks.
        core::hint::black_box(word)[0] != 0
    }
    #[cfg(not(rnsfhe_ctgrind))]
    {
        bit
    }
}

/// Returns `word`, computed from secret state but public by design (the
/// call site says why): with the `rnsfhe_ctgrind` cfg, memcheck is told so;
/// otherwise this is the identity and costs nothing.
#[inline(always)]
pub fn declassify_u64(word: u64) -> u64 {
    #[cfg(rnsfhe_ctgrind)]
    {
        let w = [word];
        declassify(&w);
        core::hint::black_box(w)[0]
    }
    #[cfg(not(rnsfhe_ctgrind))]
    {
        word
    }
}

/// The mask `0 − bit` (all ones for 1, zero for 0) for a `bit ∈ {0, 1}`,
/// passed through [`core::hint::black_box`] so that the optimizer cannot
/// use the knowledge that it is 0 or all ones to turn a masked select back
/// into a branch (loop unswitching) or a load from a selected address.
#[inline(always)]
pub fn opaque_mask(bit: u64) -> u64 {
    core::hint::black_box(bit.wrapping_neg())
}

/// `⌊x⌉` (halves rounded up, as [`f64::round`] for `x ≥ 0`) for a finite
/// `0 ≤ x < 2^63`, without [`f64::round`]'s branches on the value (without
/// SSE4.1 it is a software routine): truncation, then `+1` when the exact
/// fraction `x − ⌊x⌋` is at least one half.
#[inline(always)]
pub fn round_nonneg(x: f64) -> u64 {
    let t = x as i64;
    let frac = x - t as f64;
    (t as u64) + u64::from(frac >= 0.5)
}

/// `⌊x⌋` for a finite `0 ≤ x < 2^63` from its bits, without the
/// branches of a saturating float-to-integer cast: the mantissa shifted
/// right by `52 − e` (clamped so that values below one give 0).
#[inline]
pub fn trunc_nonneg(x: f64) -> u64 {
    let bits = x.to_bits() & !(1u64 << 63);
    let biased = (bits >> 52) as i64;
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let right = clamp_shift(1075 - biased, 0, 63);
    let left = clamp_shift(biased - 1075, 0, 10);
    let below_one = opaque_mask(u64::from(biased < 1023));
    ((mant >> right) << left) & !below_one
}

/// `v` clamped to `[lo, hi]` (`0 ≤ lo ≤ hi < 64`) by masks: `Ord::clamp`
/// compiles to branches, and a known small range lets the optimizer turn a
/// shift by the result into a jump table (memcheck caught both).
#[inline]
pub fn clamp_shift(v: i64, lo: u64, hi: u64) -> u64 {
    let below = opaque_mask(u64::from(v < lo as i64));
    let above = opaque_mask(u64::from(v > hi as i64));
    (v as u64 & !below & !above) | (lo & below) | (hi & above)
}

/// `log2 x` of the little-endian word vector `x` as the noise diagnostics
/// compute it for a big integer (`0` for `x ≤ 1`; otherwise the top 53
/// bits `f` and the shift `s` below them give `log2 f + s`), with no branch,
/// table index or shift count depending on `x`: the window is picked from
/// all words by masks, and `log2 f` comes from the exponent of `f` and
/// `2·atanh((m − 1)/(m + 1)) / ln 2` for its mantissa `m ∈ [1/√2, √2)`
/// (16 terms, all evaluated), not from the table-driven `f64::log2`. The
/// result agrees with `f64::log2(f) + s` to within about `10^-14`.
pub fn log2_words(x: &[u64]) -> f64 {
    let bits = crate::crt::bit_length_words(x);
    let shift = bits.saturating_sub(53);
    let (ws, bs) = (shift >> 6, shift & 63);
    let (mut lo, mut hi) = (0u64, 0u64);
    for (j, &w) in x.iter().enumerate() {
        let j = j as u64;
        lo |= w & opaque_mask(u64::from(j == ws));
        hi |= w & opaque_mask(u64::from(j == ws + 1));
    }
    // (hi << 1) << (63 − bs) is hi << (64 − bs), also for bs = 0.
    let top = ((lo >> bs) | ((hi << 1) << (63 - bs))) & ((1u64 << 53) - 1);
    let f = top as i64 as f64;
    // f = 2^e · m with m ∈ [1, 2), then m ∈ [1/√2, √2) by halving.
    let fb = f.to_bits();
    let mut e = ((fb >> 52) & 0x7ff) as i64 - 1023;
    let m = f64::from_bits((fb & ((1u64 << 52) - 1)) | (1023u64 << 52));
    let big = opaque_mask(u64::from(m > core::f64::consts::SQRT_2));
    let m = f64::from_bits(m.to_bits() ^ ((m.to_bits() ^ (m * 0.5).to_bits()) & big));
    e += (big & 1) as i64;
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    // atanh z = Σ z^{2i+1} / (2i + 1), Horner from the 16th term.
    let mut sum = 0.0;
    for i in (0..16).rev() {
        sum = sum * z2 + 1.0 / (2 * i + 1) as f64;
    }
    let log2_f = e as f64 + 2.0 * z * sum * core::f64::consts::LOG2_E;
    let value = log2_f + shift as f64;
    // x ≤ 1 (bits ≤ 1) gives 0.
    let trivial = opaque_mask(u64::from(bits <= 1));
    f64::from_bits(value.to_bits() & !trivial)
}

/// Whether this build reports declassification points to memcheck (the
/// `rnsfhe_ctgrind` cfg). The check refuses to run without it, since every
/// intended revelation would then be reported as a leak.
pub const DECLASSIFY_ENABLED: bool = cfg!(rnsfhe_ctgrind);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_no_ops_natively() {
        if running_on_valgrind() {
            return;
        }
        let data = [1u64, 2, 3];
        mark_secret(&data);
        assert_eq!(is_secret(&data), None);
        declassify(&data);
        assert_eq!(data, [1, 2, 3]);
        assert!(declassify_bool(true));
        assert!(!declassify_bool(false));
        assert_eq!(declassify_u64(42), 42);
        assert_eq!(opaque_mask(1), u64::MAX);
        assert_eq!(opaque_mask(0), 0);
    }
}

#[cfg(test)]
mod rounding_tests {
    use super::round_nonneg;

    #[test]
    fn round_nonneg_matches_round() {
        let cases = [
            0.0,
            0.25,
            0.5,
            0.499_999_999_999_999_94,
            1.5,
            2.5,
            7.999_999_999,
            4_503_599_627_370_495.5,
            9_007_199_254_740_993.0,
            1e18,
        ];
        for x in cases {
            assert_eq!(round_nonneg(x), x.round() as u64, "{x}");
        }
    }
}

#[cfg(test)]
mod log_tests {
    use super::{clamp_shift, log2_words, trunc_nonneg};

    #[test]
    fn clamp_shift_clamps() {
        assert_eq!(clamp_shift(-5, 1, 63), 1);
        assert_eq!(clamp_shift(0, 0, 63), 0);
        assert_eq!(clamp_shift(17, 1, 63), 17);
        assert_eq!(clamp_shift(1000, 1, 63), 63);
    }

    #[test]
    fn trunc_nonneg_matches_floor() {
        for x in [
            0.0,
            0.3,
            0.999,
            1.0,
            1.5,
            2.0,
            7.75,
            1e10 + 0.5,
            4_503_599_627_370_497.0,
            9e18,
        ] {
            assert_eq!(trunc_nonneg(x), x.floor() as u64, "{x}");
        }
    }

    #[test]
    fn log2_words_matches_libm() {
        assert_eq!(log2_words(&[0, 0]), 0.0);
        assert_eq!(log2_words(&[1, 0]), 0.0);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in 1..5 {
            for _ in 0..500 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mut words = vec![0u64; len];
                for (i, w) in words.iter_mut().enumerate() {
                    *w = x.rotate_left(i as u32 * 11) >> (x % 64);
                }
                let bits = words
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(_, &w)| w != 0)
                    .map_or(0, |(i, &w)| {
                        64 * i as u64 + 64 - u64::from(w.leading_zeros())
                    });
                if bits <= 1 {
                    continue;
                }
                let shift = bits.saturating_sub(53);
                let (ws, bs) = ((shift / 64) as usize, shift % 64);
                let mut top = words[ws] >> bs;
                if bs > 0 && ws + 1 < len {
                    top |= words[ws + 1] << (64 - bs);
                }
                let want = ((top & ((1u64 << 53) - 1)) as f64).log2() + shift as f64;
                let got = log2_words(&words);
                assert!((got - want).abs() < 1e-13, "{words:?}: {got} vs {want}");
            }
        }
    }
}
