//! Bit-exact comparison of every SIMD kernel with the portable reference on
//! random and edge inputs. On a CPU without the feature the SIMD half is
//! skipped with a note, and the portable path is still checked (round
//! trips, and that the dispatching entry points equal it).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::*;
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::prime::{generate_ntt_primes, is_prime};
use crate::ring::{
    pointwise_kernel, pointwise_mul, pointwise_mul_add, pointwise_mul_add_portable,
    pointwise_mul_add_with, pointwise_mul_portable, pointwise_mul_with, pointwise_supports,
};

/// Notes on stderr, when the CPU lacks `feature` (`available` false), that
/// the test of `what` checks the portable path only.
fn note_if_missing(available: bool, feature: &str, what: &str) {
    if !available {
        eprintln!("note: this CPU lacks {feature}; {what}: checking the portable path only");
    }
}

/// [`note_if_missing`] for IFMA52.
fn note_skip(what: &str) {
    note_if_missing(ifma_available(), "AVX-512 IFMA52", what);
}

/// Inputs for one transform: edge cases and random residues; `wide` is the
/// exclusive bound of the accepted lazy input range (4p forward, 2p
/// inverse).
fn ntt_inputs(rng: &mut ChaCha20Rng, n: usize, p: u64, wide: u64, random: usize) -> Vec<Vec<u64>> {
    let mut v = vec![
        vec![0u64; n],
        vec![p - 1; n],
        vec![rng.gen_range(0..p); n],
        vec![wide - 1; n],
        (0..n).map(|i| if i % 2 == 0 { p - 1 } else { 0 }).collect(),
        {
            let mut e = vec![0u64; n];
            e[n - 1] = 1;
            e
        },
    ];
    for _ in 0..random {
        v.push((0..n).map(|_| rng.gen_range(0..p)).collect());
    }
    v.push((0..n).map(|_| rng.gen_range(0..wide)).collect());
    v
}

/// The SIMD NTT kernels that can run with `t` here.
fn simd_kernels(t: &NttTable) -> Vec<Kernel> {
    [Kernel::Ifma52, Kernel::Avx512, Kernel::Avx2]
        .into_iter()
        .filter(|&k| t.supports(k))
        .collect()
}

/// One direction of an NTT, three ways: the portable reference, the
/// dispatching entry point and an explicitly chosen kernel.
struct NttDirection {
    name: &'static str,
    portable: fn(&NttTable, &mut [u64]) -> crate::Result<()>,
    dispatched: fn(&NttTable, &mut [u64]) -> crate::Result<()>,
    with: fn(&NttTable, Kernel, &mut [u64]) -> crate::Result<()>,
}

impl NttDirection {
    /// Checks the dispatching entry point and every SIMD kernel that can
    /// run with `t` against the portable words of `a`, which it returns.
    fn check(&self, t: &NttTable, a: &[u64]) -> Vec<u64> {
        let (n, p, name) = (t.n(), t.modulus().value(), self.name);
        let mut reference = a.to_vec();
        (self.portable)(t, &mut reference).unwrap();
        assert!(reference.iter().all(|&x| x < p));
        let mut dispatched = a.to_vec();
        (self.dispatched)(t, &mut dispatched).unwrap();
        assert_eq!(dispatched, reference, "{name}, n={n} p={p}");
        for k in simd_kernels(t) {
            let mut v = a.to_vec();
            (self.with)(t, k, &mut v).unwrap();
            assert_eq!(v, reference, "{k:?} {name}, n={n} p={p}");
        }
        reference
    }
}

/// Checks `forward`/`backward` (dispatching), the IFMA kernel when
/// available, the AVX-512F kernel when available, and the portable path
/// against each other, plus round trips.
fn check_ntt(t: &NttTable, rng: &mut ChaCha20Rng, random: usize) {
    let (n, p) = (t.n(), t.modulus().value());
    let forward = NttDirection {
        name: "forward",
        portable: NttTable::forward_portable,
        dispatched: NttTable::forward,
        with: NttTable::forward_with,
    };
    let backward = NttDirection {
        name: "backward",
        portable: NttTable::backward_portable,
        dispatched: NttTable::backward,
        with: NttTable::backward_with,
    };
    for a in ntt_inputs(rng, n, p, 4 * p, random) {
        let reference = forward.check(t, &a);
        // Round trip from canonical values, when the input was canonical.
        if a.iter().all(|&x| x < p) {
            let mut back = reference.clone();
            t.backward(&mut back).unwrap();
            assert_eq!(back, a, "round trip, n={n} p={p}");
        }
    }
    for a in ntt_inputs(rng, n, p, 2 * p, random) {
        backward.check(t, &a);
    }
}

/// The NTT table of degree `n` over the first NTT prime of `bits` bits.
fn ntt_table(bits: u32, n: usize) -> NttTable {
    let p = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
    NttTable::new(n, Modulus::new(p).unwrap()).unwrap()
}

/// [`check_ntt`] with `random` random inputs for every width in `bits` at
/// every degree `2^log_n`; with `simd = Some((kernel, available))` also
/// that `kernel` is supported exactly when the CPU has it and `n ≥ 16`.
fn check_ntt_grid(
    bits: impl IntoIterator<Item = u32>,
    log_ns: &[u32],
    rng: &mut ChaCha20Rng,
    random: usize,
    simd: Option<(Kernel, bool)>,
) {
    for bits in bits {
        for &log_n in log_ns {
            let n = 1usize << log_n;
            let t = ntt_table(bits, n);
            if let Some((kernel, available)) = simd {
                assert_eq!(t.supports(kernel), available && n >= 16);
            }
            check_ntt(&t, rng, random);
        }
    }
}

/// Every degree the tests cover for a few widths: `2^3` to `2^17`.
const ALL_LOG_N: [u32; 15] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];

/// [`check_ntt`] for the largest prime of the right shape below 2^61 at
/// `n = 2^12` (`4p` close to 2^63, where the signed comparisons of the
/// AVX2 kernel are at their limit).
fn check_ntt_top_61_bit_prime(rng: &mut ChaCha20Rng) {
    let n = 1 << 12;
    let mut top = (1u64 << 61) - 2 * n as u64 + 1;
    while !is_prime(top) {
        top -= 2 * n as u64;
    }
    check_ntt(
        &NttTable::new(n, Modulus::new(top).unwrap()).unwrap(),
        rng,
        3,
    );
}

#[test]
fn ntt_ifma_matches_portable_for_20_to_50_bit_moduli_and_n_8_to_2_pow_17() {
    note_skip("NTT");
    let mut rng = ChaCha20Rng::seed_from_u64(600);
    // Every width from 20 to 50 bits at small and medium sizes.
    let ifma = Some((Kernel::Ifma52, ifma_available()));
    check_ntt_grid(20..=50, &[3, 4, 5, 6, 7, 10], &mut rng, 2, ifma);
    // All sizes up to 2^17 for a few widths, including the largest prime
    // below 2^50 of the right shape.
    check_ntt_grid([20, 32, 41, 50], &ALL_LOG_N, &mut rng, 1, None);
}

#[test]
fn ntt_avx512_matches_portable_for_51_to_61_bit_moduli_and_n_8_to_2_pow_17() {
    note_skip_avx512("this test");
    let mut rng = ChaCha20Rng::seed_from_u64(602);
    let avx512 = Some((Kernel::Avx512, avx512_available()));
    check_ntt_grid(51..=61, &[3, 4, 5, 8, 11], &mut rng, 2, avx512);
    // All sizes for the widths the crate uses most, and the largest prime
    // of the right shape below 2^61 (4p close to 2^63).
    check_ntt_grid([60, 61], &ALL_LOG_N, &mut rng, 1, None);
    check_ntt_top_61_bit_prime(&mut rng);
}

#[test]
fn ntt_avx2_matches_portable_for_20_to_61_bit_moduli_and_n_8_to_2_pow_17() {
    note_if_missing(avx2_available(), "AVX2", "NTT");
    let mut rng = ChaCha20Rng::seed_from_u64(603);
    let widths = (20..=61u32).step_by(3).chain([50, 60, 61]);
    let avx2 = Some((Kernel::Avx2, avx2_available()));
    check_ntt_grid(widths, &[3, 4, 5, 6, 9], &mut rng, 2, avx2);
    check_ntt_grid([30, 60, 61], &ALL_LOG_N, &mut rng, 1, None);
    check_ntt_top_61_bit_prime(&mut rng);
}

#[test]
fn ntt_kernel_selection_follows_modulus_width_and_cpu() {
    for (bits, expect_ifma) in [
        (30u32, true),
        (50, true),
        (51, false),
        (60, false),
        (61, false),
    ] {
        let t = ntt_table(bits, 1024);
        let p = t.modulus().value();
        let want = if expect_ifma && ifma_available() {
            Kernel::Ifma52
        } else if avx512_available() {
            Kernel::Avx512
        } else if avx2_available() {
            Kernel::Avx2
        } else {
            Kernel::Portable
        };
        assert_eq!(t.kernel(), want, "bits = {bits}");
        assert!(t.supports(Kernel::Portable));
        for k in [Kernel::Ifma52, Kernel::Avx512, Kernel::Avx2] {
            if !t.supports(k) {
                let mut a = vec![0u64; 1024];
                assert!(t.forward_with(k, &mut a).is_err());
                assert!(t.backward_with(k, &mut a).is_err());
            }
        }
        // Below 16 coefficients every transform is portable.
        let small = NttTable::new(8, Modulus::new(p).unwrap()).unwrap();
        assert_eq!(small.kernel(), Kernel::Portable);
        // Wide moduli still transform correctly through the dispatcher.
        let mut rng = ChaCha20Rng::seed_from_u64(u64::from(bits));
        check_ntt(&t, &mut rng, 1);
    }
}

/// Odd moduli (prime and not) of every width the IFMA product handles.
fn pointwise_moduli(rng: &mut ChaCha20Rng) -> Vec<u64> {
    let mut v = vec![3u64, 5, 7, 65537, (1 << 50) - 1, (1 << 49) + 1];
    for bits in 2..=50u32 {
        let lo = 1u64 << (bits - 1);
        let mut p = rng.gen_range(lo..=(2 * lo - 1)) | 1;
        if p == lo {
            p += 1;
        }
        v.push(p);
        // The largest prime of this width.
        if bits >= 3 {
            let mut q = 2 * lo - 1;
            while !is_prime(q) {
                q -= 2;
            }
            v.push(q);
        }
    }
    v.retain(|&p| p >= 3);
    v
}

#[test]
fn pointwise_ifma_matches_portable() {
    note_skip("point-wise products");
    let mut rng = ChaCha20Rng::seed_from_u64(601);
    for p in pointwise_moduli(&mut rng) {
        let m = Modulus::new(p).unwrap();
        let ifma = pointwise_supports(Kernel::Ifma52, &m);
        assert_eq!(ifma, ifma_available() && !p.is_power_of_two());
        for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 64, 100, 1 << 12] {
            let edges = [0, 1, p - 1, p / 2, p - 2];
            let mut xs: Vec<Vec<u64>> = vec![
                vec![p - 1; len],
                vec![0; len],
                (0..len).map(|i| edges[i % edges.len()]).collect(),
            ];
            xs.push((0..len).map(|_| rng.gen_range(0..p)).collect());
            xs.push((0..len).map(|_| rng.gen_range(0..p)).collect());
            for a in &xs {
                for b in &xs {
                    let mut expect = a.clone();
                    pointwise_mul_portable(&m, &mut expect, b);
                    let mut got = a.clone();
                    pointwise_mul(&m, &mut got, b);
                    assert_eq!(got, expect, "mul p={p} len={len}");
                    for acc in [&xs[0], &xs[3]] {
                        let mut expect = acc.clone();
                        pointwise_mul_add_portable(&m, &mut expect, a, b);
                        let mut got = acc.clone();
                        pointwise_mul_add(&m, &mut got, a, b);
                        assert_eq!(got, expect, "mul_add p={p} len={len}");
                        if ifma {
                            let mut got = acc.clone();
                            pointwise_mul_add_with(Kernel::Ifma52, &m, &mut got, a, b).unwrap();
                            assert_eq!(got, expect, "IFMA mul_add p={p} len={len}");
                        }
                    }
                    if ifma {
                        let mut got = a.clone();
                        pointwise_mul_with(Kernel::Ifma52, &m, &mut got, b).unwrap();
                        assert_eq!(got, expect, "IFMA mul p={p} len={len}");
                    }
                }
            }
        }
    }
}

#[test]
fn pointwise_kernel_selection() {
    for (p, ifma_ok) in [
        ((1u64 << 50) - 27, true),
        (1u64 << 40, false),
        ((1u64 << 50) + 55, false),
        ((1u64 << 61) - 1, false),
    ] {
        let m = Modulus::new(p).unwrap();
        let want = if ifma_ok && ifma_available() {
            Kernel::Ifma52
        } else if avx512_available() && !p.is_power_of_two() {
            Kernel::Avx512
        } else {
            Kernel::Portable
        };
        assert_eq!(pointwise_kernel(&m), want, "p = {p}");
        let (mut a, b) = (vec![p - 1; 9], vec![p - 2; 9]);
        assert_eq!(
            pointwise_mul_with(Kernel::Ifma52, &m, &mut a, &b).is_ok(),
            want == Kernel::Ifma52
        );
        let mut c = vec![p - 1; 9];
        pointwise_mul_with(Kernel::Portable, &m, &mut c, &b).unwrap();
        assert_eq!(c, vec![m.mul(p - 1, p - 2); 9]);
        if want == Kernel::Ifma52 {
            assert_eq!(a, c);
        }
    }
    assert_eq!(Kernel::Portable.name(), "portable");
    assert_eq!(Kernel::Ifma52.name(), "ifma");
    assert!(Kernel::Portable.cpu_supported());
    assert_eq!(Kernel::Ifma52.cpu_supported(), ifma_available());
    assert_eq!(Kernel::Avx512.cpu_supported(), avx512_available());
    assert_eq!(Kernel::Avx512.name(), "avx512");
    assert_eq!(Kernel::Avx2.name(), "avx2");
    assert_eq!(Kernel::Avx2.cpu_supported(), avx2_available());
    // The AVX-512F point-wise kernel takes any width but no power of two;
    // there is no AVX2 one.
    let m = Modulus::new((1u64 << 61) - 1).unwrap();
    let mut a = vec![1u64; 8];
    assert_eq!(
        pointwise_mul_with(Kernel::Avx512, &m, &mut a, &[2; 8]).is_ok(),
        avx512_available()
    );
    assert!(pointwise_mul_with(Kernel::Avx2, &m, &mut a, &[2; 8]).is_err());
    let m = Modulus::new(1u64 << 60).unwrap();
    assert!(pointwise_mul_with(Kernel::Avx512, &m, &mut a, &[2; 8]).is_err());
}

/// `count` distinct primes of `bits` bits (≡ 1 mod 2, found downward).
fn primes(bits: u32, count: usize, exclude: &[u64]) -> Vec<u64> {
    generate_ntt_primes(bits, 2, count, exclude).unwrap()
}

/// Input generator `(rng, q_i, coefficient index) → word`.
type Fill = Box<dyn Fn(&mut ChaCha20Rng, u64, usize) -> u64>;

#[test]
fn fast_base_conv_ifma_matches_portable() {
    use crate::base_conversion::BaseConverter;
    use crate::rns_base::RnsBase;
    note_skip("FastBaseConv");
    let mut rng = ChaCha20Rng::seed_from_u64(603);
    let configs: Vec<(Vec<u32>, Vec<u32>)> = vec![
        (vec![50; 8], vec![50; 9]),
        (vec![20], vec![50]),
        (vec![30, 40, 50], vec![20, 25]),
        (vec![49; 20], vec![50; 3]),
        (vec![36; 2], vec![50; 64]),
        (vec![45; 64], vec![21; 2]),
        // A 51-bit source modulus sends everything to another path.
        (vec![50, 51], vec![50]),
        (vec![50], vec![60]),
        // Narrow sources with some wide targets (CKKS's 60-bit first prime
        // among 40-bit ones): IFMA rows plus exact scalar rows.
        (vec![40; 3], vec![50, 60, 40, 61, 40]),
        (vec![50], vec![60, 50]),
    ];
    for (from_bits, to_bits) in configs {
        let mut used = Vec::new();
        let mut pick = |bits: &[u32]| -> Vec<u64> {
            let v: Vec<u64> = bits
                .iter()
                .map(|&b| {
                    let p = primes(b, 1, &used)[0];
                    used.push(p);
                    p
                })
                .collect();
            v
        };
        let (qs, ps) = (pick(&from_bits), pick(&to_bits));
        let conv =
            BaseConverter::new(&RnsBase::new(&qs).unwrap(), &RnsBase::new(&ps).unwrap()).unwrap();
        let narrow = from_bits.iter().all(|&b| b <= 50) && to_bits.iter().any(|&b| b <= 50);
        assert_eq!(
            conv.fast_base_conv_kernel(),
            if narrow && ifma_available() {
                Kernel::Ifma52
            } else if avx512_conv_bits_ok(&from_bits, &to_bits) && avx512_available() {
                Kernel::Avx512
            } else {
                Kernel::Portable
            }
        );
        for n in [1usize, 2, 7, 8, 9, 128, 129, 300, 4096] {
            let fills: Vec<Fill> = vec![
                Box::new(|r, q, _| r.gen_range(0..q)),
                Box::new(|_, q, _| q - 1),
                Box::new(|_, _, _| 0),
                Box::new(|r, q, c| if c % 3 == 0 { q - 1 } else { r.gen_range(0..q) }),
                // Unreduced words (outside the documented range, accepted
                // by the portable code): below and above 2^52.
                Box::new(|r, _, _| r.gen_range(0..1u64 << 52)),
                Box::new(|r, q, c| {
                    if c % 5 == 0 {
                        u64::MAX - c as u64
                    } else {
                        r.gen_range(0..q)
                    }
                }),
            ];
            for fill in &fills {
                let x = poly_from_fn(&qs, n, |q, c| fill(&mut rng, q, c));
                check_selected_and_forced(
                    (n, ps.len()),
                    conv.fast_base_conv_kernel() == Kernel::Ifma52,
                    &format!("q={qs:?} p={ps:?} n={n}"),
                    |o| conv.fast_base_conv_portable(&x, o),
                    |o| conv.fast_base_conv(&x, o),
                    |o| conv.fast_base_conv_with(Kernel::Ifma52, &x, o),
                );
            }
        }
    }
}

/// Whether bases of these bit lengths qualify for the AVX-512F conversion
/// kernels: source moduli of at most 60 bits, at least one target modulus
/// of 46 to 60 bits (the other target rows take the scalar inner product).
fn avx512_conv_bits_ok(from_bits: &[u32], to_bits: &[u32]) -> bool {
    from_bits.iter().all(|&b| b <= 60) && to_bits.iter().any(|&b| (46..=60).contains(&b))
}

/// Whether bases of these bit lengths qualify for the AVX-512F HPS scaler
/// to a base: source moduli of at most 60 bits, every target modulus of 46
/// to 60 bits.
fn avx512_scale_bits_ok(from_bits: &[u32], to_bits: &[u32]) -> bool {
    from_bits.iter().all(|&b| b <= 60) && to_bits.iter().all(|&b| (46..=60).contains(&b))
}

/// [`note_if_missing`] for AVX-512F/DQ.
fn note_skip_avx512(what: &str) {
    note_if_missing(avx512_available(), "AVX-512F/DQ", what);
}

/// `count` distinct primes for each width in `bits`, none in `used`.
fn pick_primes(bits: &[u32], used: &mut Vec<u64>) -> Vec<u64> {
    bits.iter()
        .map(|&b| {
            let p = primes(b, 1, used)[0];
            used.push(p);
            p
        })
        .collect()
}

/// Source and target widths for the conversion and scaling tests: the
/// 6- and 10-limb 60-bit bases (one target limb more), then `extra`, then
/// 60-bit bases of 1 to 20 source limbs and 1 to 4 target limbs.
fn conv_configs(extra: Vec<(Vec<u32>, Vec<u32>)>) -> Vec<(Vec<u32>, Vec<u32>)> {
    let mut configs = vec![(vec![60; 6], vec![60; 7]), (vec![60; 10], vec![60; 11])];
    configs.extend(extra);
    configs.extend((1..=20usize).map(|k| (vec![60; k], vec![60; 1 + k % 4])));
    configs
}

/// The moduli of two bases and the bases: `(from, to, from base, to base)`.
type Bases = (
    Vec<u64>,
    Vec<u64>,
    crate::rns_base::RnsBase,
    crate::rns_base::RnsBase,
);

/// Two bases of distinct primes of the widths `from_bits` and `to_bits`
/// (none in `used`): their moduli and the bases.
fn pick_bases(from_bits: &[u32], to_bits: &[u32], mut used: Vec<u64>) -> Bases {
    use crate::rns_base::RnsBase;
    let from = pick_primes(from_bits, &mut used);
    let to = pick_primes(to_bits, &mut used);
    let (a, b) = (RnsBase::new(&from).unwrap(), RnsBase::new(&to).unwrap());
    (from, to, a, b)
}

/// Input words for a conversion or scaling test: random residues and the
/// edge patterns (0, 1, q − 1, ⌊q/2⌋, ⌊q/2⌋ + 1, all-maximal), per limb.
fn conv_fills() -> Vec<Fill> {
    vec![
        Box::new(|r, q, _| r.gen_range(0..q)),
        Box::new(|_, q, _| q - 1),
        Box::new(|_, _, _| 0),
        Box::new(|_, _, _| 1),
        Box::new(|_, q, c| if c % 2 == 0 { q / 2 } else { q / 2 + 1 }),
        Box::new(|r, q, c| if c % 3 == 0 { q - 1 } else { r.gen_range(0..q) }),
    ]
}

/// The RNS residues of the coefficients `xs` (big integers) in `base`.
fn poly_of_big(
    xs: &[num_bigint::BigUint],
    base: &crate::rns_base::RnsBase,
) -> crate::poly::RnsPoly<crate::poly::Coeff> {
    crate::base_conversion::test_util::poly_of(xs, base)
}

/// The polynomial over `moduli` (one limb each) whose coefficient `c` of
/// limb `m` is `word(m, c)`, filled limb by limb.
fn poly_from_fn(
    moduli: &[u64],
    n: usize,
    mut word: impl FnMut(u64, usize) -> u64,
) -> crate::poly::RnsPoly<crate::poly::Coeff> {
    let data: Vec<u64> = moduli
        .iter()
        .flat_map(|&m| (0..n).map(|c| word(m, c)).collect::<Vec<_>>())
        .collect();
    crate::poly::RnsPoly::from_data(n, moduli.len(), data).unwrap()
}

/// Runs an operation three ways into fresh `n × rows` outputs — the
/// portable reference, the kernel it selects and a forced SIMD kernel — and
/// checks that the words agree; forcing must succeed exactly when
/// `eligible`.
fn check_selected_and_forced(
    (n, rows): (usize, usize),
    eligible: bool,
    ctx: &str,
    portable: impl FnOnce(&mut crate::poly::RnsPoly<crate::poly::Coeff>) -> crate::Result<()>,
    selected: impl FnOnce(&mut crate::poly::RnsPoly<crate::poly::Coeff>) -> crate::Result<()>,
    forced: impl FnOnce(&mut crate::poly::RnsPoly<crate::poly::Coeff>) -> crate::Result<()>,
) {
    use crate::poly::RnsPoly;
    let mut expect = RnsPoly::zero(n, rows);
    portable(&mut expect).unwrap();
    let mut got = RnsPoly::zero(n, rows);
    selected(&mut got).unwrap();
    assert_eq!(got.data(), expect.data(), "{ctx}");
    let mut forced_out = RnsPoly::zero(n, rows);
    let r = forced(&mut forced_out);
    assert_eq!(r.is_ok(), eligible, "{ctx}");
    if eligible {
        assert_eq!(forced_out.data(), expect.data(), "forced: {ctx}");
    }
}

/// A checked conversion of [`crate::base_conversion::BaseConverter`].
type Conv = fn(
    &crate::base_conversion::BaseConverter,
    &crate::poly::RnsPoly<crate::poly::Coeff>,
    &mut crate::poly::RnsPoly<crate::poly::Coeff>,
) -> crate::Result<()>;

/// A checked conversion with an explicit kernel.
type ConvWith = fn(
    &crate::base_conversion::BaseConverter,
    Kernel,
    &crate::poly::RnsPoly<crate::poly::Coeff>,
    &mut crate::poly::RnsPoly<crate::poly::Coeff>,
) -> crate::Result<()>;

#[test]
fn fast_base_conv_avx512_matches_portable() {
    use crate::base_conversion::BaseConverter;
    use crate::poly::{Coeff, RnsPoly};
    use num_bigint::{BigUint, RandBigInt};
    note_skip_avx512("FastBaseConv_I/F");
    let mut rng = ChaCha20Rng::seed_from_u64(604);
    let configs = conv_configs(vec![
        (vec![59; 3], vec![60, 59, 50, 46]),
        (vec![30, 50, 59, 60], vec![50; 2]),
        (vec![50; 8], vec![50; 9]),
        (vec![30; 5], vec![47; 3]),
        // Mixed targets: the 45-, 61- and 30-bit rows take the scalar path.
        (vec![60; 2], vec![45, 60]),
        (vec![60; 6], vec![60, 61, 60, 30, 60]),
        // Not eligible: 61-bit source, no target of 46 to 60 bits.
        (vec![61, 60], vec![60]),
        (vec![60; 2], vec![61]),
        (vec![60; 3], vec![45, 30]),
    ]);
    for (from_bits, to_bits) in configs {
        let (qs, ps, from, to) = pick_bases(&from_bits, &to_bits, Vec::new());
        let conv = BaseConverter::new(&from, &to).unwrap();
        let eligible = avx512_conv_bits_ok(&from_bits, &to_bits) && avx512_available();
        assert_eq!(
            conv.fast_base_conv_exact_kernel(),
            if eligible {
                Kernel::Avx512
            } else {
                Kernel::Portable
            },
            "q={qs:?} p={ps:?}"
        );
        assert_eq!(conv.supports(Kernel::Avx512), eligible);
        let q = from.product();
        let few = from_bits.len() > 8;
        let sizes: &[usize] = if few {
            &[9, 130]
        } else {
            &[1, 7, 8, 9, 128, 129, 300]
        };
        for &n in sizes {
            let mut inputs: Vec<RnsPoly<Coeff>> = conv_fills()
                .iter()
                .map(|fill| poly_from_fn(&qs, n, |q, c| fill(&mut rng, q, c)))
                .collect();
            // Centered edges as integers: 0, 1, q − 1, ⌊q/2⌋, ⌊q/2⌋ + 1,
            // (q ± 1)/2 ± 2 (the ambiguous band of FastBaseConv_F), random.
            let half = q >> 1u32;
            let mut xs: Vec<BigUint> = vec![
                0u32.into(),
                1u32.into(),
                q - 1u32,
                half.clone(),
                &half + 1u32,
            ];
            for d in 0u32..3 {
                xs.push(&half + d + 1u32);
                if half >= BigUint::from(d) {
                    xs.push(&half - d);
                }
            }
            while xs.len() < n {
                xs.push(rng.gen_biguint_below(q));
            }
            xs.truncate(n);
            inputs.push(poly_of_big(&xs, &from));
            let variants: [(&str, Conv, Conv, ConvWith); 2] = [
                (
                    "F",
                    BaseConverter::fast_base_conv_exact_portable,
                    BaseConverter::fast_base_conv_exact,
                    BaseConverter::fast_base_conv_exact_with,
                ),
                (
                    "I",
                    BaseConverter::fast_base_conv_portable,
                    BaseConverter::fast_base_conv,
                    BaseConverter::fast_base_conv_with,
                ),
            ];
            for (x, (name, portable, selected, with)) in
                inputs.iter().flat_map(|x| variants.map(|v| (x, v)))
            {
                check_selected_and_forced(
                    (n, ps.len()),
                    eligible,
                    &format!("{name}: q={qs:?} p={ps:?} n={n}"),
                    |o| portable(&conv, x, o),
                    |o| selected(&conv, x, o),
                    |o| with(&conv, Kernel::Avx512, x, o),
                );
            }
        }
    }
}

/// `FastBaseConv_I` and `_F` into target bases with moduli outside the
/// range of the vector inner product (`m̃ = 2^32` as in BEHZ, tiny and
/// even moduli, 61-bit primes) next to 60-bit ones: the AVX-512F path
/// (vector rows plus scalar rows) equals the portable words.
#[test]
fn fast_base_conv_avx512_mixed_targets_match_portable() {
    use crate::base_conversion::BaseConverter;
    use crate::poly::{Coeff, RnsPoly};
    use crate::rns_base::RnsBase;
    note_skip_avx512("FastBaseConv with mixed targets");
    let mut rng = ChaCha20Rng::seed_from_u64(607);
    let mut used = Vec::new();
    let q60 = pick_primes(&[60; 10], &mut used);
    let p60 = pick_primes(&[60; 11], &mut used);
    let p61 = pick_primes(&[61], &mut used)[0];
    let p50 = pick_primes(&[50], &mut used)[0];
    let q30 = pick_primes(&[30; 3], &mut used);
    let cases: Vec<(Vec<u64>, Vec<u64>)> = vec![
        // BEHZ q → B_sk ∪ {m̃}: 6 and 10 limbs.
        (q60[..6].to_vec(), [&p60[..7], &[1 << 32]].concat()),
        (q60.clone(), [&p60[..], &[1 << 32]].concat()),
        // m̃ first, small odd and even moduli, 61-bit.
        (q60[..3].to_vec(), vec![1 << 32, p60[0], 3, p61, p60[1], 25]),
        ([&q30[..], &[p50]].concat(), vec![p60[2], 65537, p50 + 2]),
        (vec![q60[0]], vec![(1 << 32) + 1, p60[3]]),
    ];
    for (qs, ps) in cases {
        let (from, to) = (RnsBase::new(&qs).unwrap(), RnsBase::new(&ps).unwrap());
        let conv = BaseConverter::new(&from, &to).unwrap();
        let expect_kernel = if avx512_available() {
            Kernel::Avx512
        } else {
            Kernel::Portable
        };
        // Narrow sources with a narrow target row prefer IFMA (wide rows
        // then take the exact scalar product inside that path).
        let narrow = qs.iter().all(|&q| q < 1 << 50) && ps.iter().any(|&p| p < 1 << 50);
        let expect_i = if narrow && ifma_available() {
            Kernel::Ifma52
        } else {
            expect_kernel
        };
        assert_eq!(conv.fast_base_conv_kernel(), expect_i, "q={qs:?} p={ps:?}");
        assert_eq!(conv.fast_base_conv_exact_kernel(), expect_kernel);
        for n in [1usize, 7, 9, 128, 131, 300] {
            for fill in conv_fills() {
                let x = poly_from_fn(&qs, n, |q, c| fill(&mut rng, q, c));
                let mut expect = RnsPoly::<Coeff>::zero(n, ps.len());
                let mut got = RnsPoly::<Coeff>::zero(n, ps.len());
                conv.fast_base_conv_portable(&x, &mut expect).unwrap();
                conv.fast_base_conv(&x, &mut got).unwrap();
                assert_eq!(got.data(), expect.data(), "I: q={qs:?} p={ps:?} n={n}");
                conv.fast_base_conv_exact_portable(&x, &mut expect).unwrap();
                conv.fast_base_conv_exact(&x, &mut got).unwrap();
                assert_eq!(got.data(), expect.data(), "F: q={qs:?} p={ps:?} n={n}");
            }
        }
    }
}

#[test]
fn fast_base_conv_exact_avx512_hits_fallback_band() {
    use crate::base_conversion::{BaseConverter, AVX512_BAND_FALLBACKS};
    use crate::poly::{Coeff, RnsPoly};
    use crate::rns_base::RnsBase;
    use num_bigint::BigUint;
    use std::sync::atomic::Ordering;
    note_skip_avx512("FastBaseConv_F band");
    for (bits, k) in [(60u32, 2usize), (60, 6), (59, 10), (60, 20), (50, 8)] {
        let mut used = Vec::new();
        let qs = pick_primes(&vec![bits; k], &mut used);
        let ps = pick_primes(&vec![60; k + 1], &mut used);
        let (from, to) = (RnsBase::new(&qs).unwrap(), RnsBase::new(&ps).unwrap());
        let conv = BaseConverter::new(&from, &to).unwrap();
        let q = from.product();
        let (lo, hi) = ((q - 1u32) >> 1u32, (q + 1u32) >> 1u32);
        // Band points at scattered lanes of several vectors and tiles.
        let n = 300;
        let xs: Vec<BigUint> = (0..n)
            .map(|c| match c % 7 {
                0 => lo.clone(),
                3 => hi.clone(),
                5 => &lo - 1u32,
                _ => BigUint::from(c as u64 * 0x9E37_79B9),
            })
            .collect();
        let x = poly_of_big(&xs, &from);
        let mut expect = RnsPoly::<Coeff>::zero(n, ps.len());
        conv.fast_base_conv_exact_portable(&x, &mut expect).unwrap();
        let mut got = RnsPoly::<Coeff>::zero(n, ps.len());
        let before = AVX512_BAND_FALLBACKS.load(Ordering::Relaxed);
        conv.fast_base_conv_exact(&x, &mut got).unwrap();
        assert_eq!(got.data(), expect.data(), "bits={bits} k={k}");
        if conv.fast_base_conv_exact_kernel() == Kernel::Avx512 {
            // 2·⌈300/7⌉ = 86 coefficients at (q ± 1)/2 are in the band.
            let hits = AVX512_BAND_FALLBACKS.load(Ordering::Relaxed) - before;
            assert!(hits >= 86, "bits={bits} k={k}: only {hits} fallbacks");
        }
        // (q−1)/2 ↦ itself, (q+1)/2 ↦ −(q−1)/2 (mod p_j).
        for (j, m) in to.moduli().iter().enumerate() {
            let l = crate::base_conversion::big_mod(&lo, m.value());
            assert_eq!(got.limb(j)[0], l);
            assert_eq!(got.limb(j)[3], m.neg(l));
        }
    }
}

#[test]
fn scale_round_to_base_avx512_matches_portable() {
    use crate::poly::{Coeff, RnsPoly};
    use crate::scaling::{ScaleRoundToBase, AVX512_ROUND_FALLBACKS};
    use num_bigint::{BigUint, RandBigInt};
    use std::sync::atomic::Ordering;
    note_skip_avx512("ScaleRoundToBase");
    let mut rng = ChaCha20Rng::seed_from_u64(605);
    let configs = conv_configs(vec![
        (vec![30, 50, 59, 60], vec![59, 50, 46]),
        (vec![50; 8], vec![50; 9]),
        (vec![61, 60], vec![60; 3]),
        (vec![60; 2], vec![45, 60]),
    ]);
    let mut band_hits = 0;
    for (from_bits, to_bits) in configs {
        let (qs, ps, q, p) = pick_bases(&from_bits, &to_bits, Vec::new());
        let qp = q.extend(&p).unwrap();
        let eligible = avx512_scale_bits_ok(&from_bits, &to_bits) && avx512_available();
        for t in [65537u64, 2, (1 << 61) - 1] {
            let s = ScaleRoundToBase::new(&q, &p, t).unwrap();
            assert_eq!(s.kernel() == Kernel::Avx512, eligible, "q={qs:?} p={ps:?}");
            let sizes: &[usize] = if qs.len() > 8 {
                &[9, 130]
            } else {
                &[1, 7, 9, 129, 300]
            };
            for &n in sizes {
                let mut inputs: Vec<(RnsPoly<Coeff>, RnsPoly<Coeff>)> = Vec::new();
                for fill in conv_fills() {
                    let xq = poly_from_fn(&qs, n, |q, c| fill(&mut rng, q, c));
                    let xp = poly_from_fn(&ps, n, |q, c| fill(&mut rng, q, c));
                    inputs.push((xq, xp));
                }
                // Integers near the rounding points: x ≈ (2m+1)·q/(2t) ± 1,
                // and near ±qP/2; plus words ≥ 2^60 in x_q and in x_p.
                let big_q = q.product();
                let mut xs: Vec<BigUint> = Vec::new();
                while xs.len() < n {
                    let m = rng.gen_range(0..t.min(1 << 20));
                    let base = (big_q * (2 * m as u128 + 1)) / (2 * t as u128);
                    for d in 0u32..3 {
                        xs.push((&base + d + qp.product() - 1u32) % qp.product());
                    }
                    xs.push(rng.gen_biguint_below(qp.product()));
                }
                xs.truncate(n);
                let (xq, xp) = (poly_of_big(&xs, &q), poly_of_big(&xs, &p));
                inputs.push((xq.clone(), xp.clone()));
                let mut wide_q = xq.clone();
                wide_q.limb_mut(0)[n - 1] = u64::MAX - 3;
                inputs.push((wide_q, xp.clone()));
                let mut wide_p = xp.clone();
                wide_p.limb_mut(p.len() - 1)[0] = 1 << 60;
                inputs.push((xq, wide_p));
                for (xq, xp) in &inputs {
                    check_selected_and_forced(
                        (n, ps.len()),
                        eligible,
                        &format!("q={qs:?} p={ps:?} t={t} n={n}"),
                        |o| s.apply_portable(xq, xp, o),
                        |o| s.apply(xq, xp, o),
                        |o| {
                            let before = AVX512_ROUND_FALLBACKS.load(Ordering::Relaxed);
                            let r = s.apply_with(Kernel::Avx512, xq, xp, o);
                            band_hits += AVX512_ROUND_FALLBACKS.load(Ordering::Relaxed) - before;
                            r
                        },
                    );
                }
            }
        }
    }
    if avx512_available() {
        assert!(
            band_hits > 100,
            "only {band_hits} lanes reached the scalar rounder"
        );
    }
}

#[test]
fn conversions_and_scaler_avx512_match_portable_at_n_2_pow_14() {
    use crate::base_conversion::BaseConverter;
    use crate::poly::{Coeff, RnsPoly};
    use crate::rns_base::RnsBase;
    use crate::scaling::ScaleRoundToBase;
    note_skip_avx512("n = 2^14");
    let mut rng = ChaCha20Rng::seed_from_u64(606);
    let n = 1 << 14;
    let mut used = Vec::new();
    let qs = pick_primes(&[60; 6], &mut used);
    let ps = pick_primes(&[60; 7], &mut used);
    let (q, p) = (RnsBase::new(&qs).unwrap(), RnsBase::new(&ps).unwrap());
    let rand_poly =
        |m: &[u64], rng: &mut ChaCha20Rng| poly_from_fn(m, n, |q, _| rng.gen_range(0..q));
    let (x_q, x_p) = (rand_poly(&qs, &mut rng), rand_poly(&ps, &mut rng));
    let conv = BaseConverter::new(&q, &p).unwrap();
    let mut expect = RnsPoly::<Coeff>::zero(n, 7);
    let mut got = RnsPoly::<Coeff>::zero(n, 7);
    conv.fast_base_conv_exact_portable(&x_q, &mut expect)
        .unwrap();
    conv.fast_base_conv_exact(&x_q, &mut got).unwrap();
    assert_eq!(got.data(), expect.data());
    conv.fast_base_conv_portable(&x_q, &mut expect).unwrap();
    conv.fast_base_conv(&x_q, &mut got).unwrap();
    assert_eq!(got.data(), expect.data());
    let s = ScaleRoundToBase::new(&q, &p, 65537).unwrap();
    s.apply_portable(&x_q, &x_p, &mut expect).unwrap();
    s.apply(&x_q, &x_p, &mut got).unwrap();
    assert_eq!(got.data(), expect.data());
}

/// The AVX-512F Shoup product by fixed operands and the vector modular sum
/// equal the portable words, for any width (including 61-bit and powers of
/// two), multiplicands up to `2^64 − 1`, and lengths with tails.
#[test]
fn pointwise_shoup_and_add_avx512_match_portable() {
    use crate::ring::{
        pointwise_add, pointwise_add_portable, pointwise_mul_shoup, pointwise_mul_shoup_portable,
    };
    note_skip_avx512("this test");
    let mut rng = ChaCha20Rng::seed_from_u64(602);
    let mut moduli = pointwise_moduli(&mut rng);
    moduli.extend([(1 << 61) - 1, 1 << 60, 1 << 40]);
    for p in moduli {
        let m = Modulus::new(p).unwrap();
        for len in [0usize, 1, 7, 8, 9, 17, 100, 1 << 12] {
            let edges = [0, 1, p - 1, p / 2, p - 2];
            let ws_of = |w: &[u64]| -> Vec<u64> {
                w.iter()
                    .map(|&x| (((x as u128) << 64) / p as u128) as u64)
                    .collect()
            };
            let ws_inputs: Vec<Vec<u64>> = vec![
                vec![p - 1; len],
                (0..len).map(|i| edges[i % edges.len()]).collect(),
                (0..len).map(|_| rng.gen_range(0..p)).collect(),
            ];
            let a_inputs: Vec<Vec<u64>> = vec![
                vec![u64::MAX; len],
                (0..len)
                    .map(|i| [0, 1, p - 1, p, u64::MAX][i % 5])
                    .collect(),
                (0..len).map(|_| rng.gen()).collect(),
                (0..len).map(|_| rng.gen_range(0..p)).collect(),
            ];
            for w in &ws_inputs {
                let ws = ws_of(w);
                for a in &a_inputs {
                    let mut expect = a.clone();
                    pointwise_mul_shoup_portable(&m, &mut expect, w, &ws);
                    let mut got = a.clone();
                    pointwise_mul_shoup(&m, &mut got, w, &ws);
                    assert_eq!(got, expect, "mul_shoup p={p} len={len}");
                    assert!(got.iter().zip(a).zip(w).all(|((&g, &x), &y)| {
                        g == ((x as u128 * y as u128) % p as u128) as u64
                    }));
                }
                // Sums of reduced inputs (w doubles as a second operand).
                for a in &a_inputs[3..] {
                    let mut expect = a.clone();
                    pointwise_add_portable(&m, &mut expect, w);
                    let mut got = a.clone();
                    pointwise_add(&m, &mut got, w);
                    assert_eq!(got, expect, "add p={p} len={len}");
                }
            }
        }
    }
}

/// Bases for the BEHZ kernels: `(q bits, B_sk bits)` (the last of `B_sk`
/// is `m_sk`), 30- to 61-bit moduli, 1 to 10 limbs.
fn behz_configs() -> Vec<(Vec<u32>, Vec<u32>)> {
    vec![
        (vec![60; 6], vec![60; 7]),
        (vec![60; 10], vec![60; 11]),
        (vec![59; 3], vec![60, 59, 50, 46]),
        (vec![30, 50, 59, 60], vec![50; 5]),
        (vec![50; 2], vec![60, 30, 60]),
        (vec![60; 2], vec![60, 61, 60]),
        (vec![30; 4], vec![45, 30, 47]),
        (vec![60; 1], vec![60; 2]),
        (vec![60; 13], vec![60; 14]),
        // Not eligible: 61-bit source, or no target of 46 to 60 bits.
        (vec![61, 60], vec![60; 3]),
        (vec![30; 3], vec![30; 4]),
    ]
}

/// [`behz_configs`] with fresh primes for each: `((q bits, B_sk bits),
/// (q moduli, B_sk moduli, q, B_sk))`.
fn behz_bases() -> impl Iterator<Item = ((Vec<u32>, Vec<u32>), Bases)> {
    behz_configs().into_iter().map(|(q_bits, b_bits)| {
        let bases = pick_bases(&q_bits, &b_bits, Vec::new());
        ((q_bits, b_bits), bases)
    })
}

/// Edge and random words for residues modulo `m`: 0, 1, m − 1, ⌊m/2⌋,
/// random, and words at or above 2^60 (accepted by the portable code).
fn behz_fill(rng: &mut ChaCha20Rng, m: u64, c: usize, kind: usize) -> u64 {
    match kind {
        0 => rng.gen_range(0..m),
        1 => [0, 1, m - 1, m / 2, m / 2 + 1][c % 5],
        2 => {
            if c.is_multiple_of(3) {
                u64::MAX - (c as u64)
            } else {
                rng.gen()
            }
        }
        _ => m - 1,
    }
}

/// `fastRNSFloor` (002 Lemma 5): the AVX-512F path equals the portable
/// words on random and edge inputs, including the worst case
/// `y_i = q_i − 1` (largest accumulators and overflow `e = |q| − 1`) and
/// non-canonical words, for several bases and lengths with tails.
#[test]
fn rns_floor_avx512_matches_portable() {
    use crate::poly::{Coeff, RnsPoly};
    use crate::rns_floor::RnsFloor;
    note_skip_avx512("fastRNSFloor");
    let mut rng = ChaCha20Rng::seed_from_u64(608);
    for ((q_bits, b_bits), (qs, bs, q, b)) in behz_bases() {
        let fl = RnsFloor::new(&q, &b).unwrap();
        let eligible = avx512_conv_bits_ok(&q_bits, &b_bits) && avx512_available();
        assert_eq!(fl.kernel() == Kernel::Avx512, eligible, "q={qs:?} b={bs:?}");
        // x_i = [−q̂_i]_{q_i} gives y_i = q_i − 1.
        let worst: Vec<u64> = q
            .moduli()
            .iter()
            .zip(q.q_hat_inv())
            .map(|(m, &h)| m.neg(m.inv(h).unwrap()))
            .collect();
        for n in [1usize, 7, 8, 13, 128, 131, 300] {
            for kind in 0..5 {
                let xq: Vec<u64> = qs
                    .iter()
                    .zip(&worst)
                    .flat_map(|(&m, &w)| {
                        let mut row = Vec::with_capacity(n);
                        for c in 0..n {
                            row.push(if kind == 4 || (kind == 1 && c.is_multiple_of(2)) {
                                w
                            } else {
                                behz_fill(&mut rng, m, c, kind)
                            });
                        }
                        row
                    })
                    .collect();
                let xb = poly_from_fn(&bs, n, |m, c| behz_fill(&mut rng, m, c + 1, kind));
                let xq = RnsPoly::<Coeff>::from_data(n, qs.len(), xq).unwrap();
                check_selected_and_forced(
                    (n, bs.len()),
                    eligible,
                    &format!("q={qs:?} b={bs:?} n={n}"),
                    |o| fl.fast_rns_floor_portable(&xq, &xb, o),
                    |o| fl.fast_rns_floor(&xq, &xb, o),
                    |o| fl.fast_rns_floor_with(Kernel::Avx512, &xq, &xb, o),
                );
            }
        }
    }
}

/// Shenoy-Kumaresan (002 Lemma 6): the AVX-512F path equals the portable
/// words on random and edge inputs, including both ends of the exactness
/// range (`x = (⌊(m_sk − 1)/2⌋ + 1)·M`, just outside, and
/// `−(⌊m_sk/2⌋ − ℓ + 1)·M`) and non-canonical words.
#[test]
fn shenoy_kumaresan_avx512_matches_portable() {
    use crate::poly::{Coeff, RnsPoly};
    use crate::shenoy_kumaresan::test_support::{product, residues};
    use crate::shenoy_kumaresan::ShenoyKumaresan;
    use num_bigint::BigInt;
    note_skip_avx512("Shenoy-Kumaresan");
    let mut rng = ChaCha20Rng::seed_from_u64(609);
    // (B_sk bits, q bits): SK converts B_sk → q.
    for ((q_bits, b_bits), (qs, bs, q, b)) in behz_bases() {
        let Ok(sk) = ShenoyKumaresan::new(&b, &q) else {
            continue;
        };
        let eligible = b_bits.iter().all(|&x| x <= 60)
            && q_bits.iter().any(|&x| (46..=60).contains(&x))
            && avx512_available();
        assert_eq!(sk.kernel() == Kernel::Avx512, eligible, "b={bs:?} q={qs:?}");
        let ell = bs.len() - 1;
        let big_m = BigInt::from(product(&bs[..ell]));
        let m_sk = sk.m_sk();
        let hi = BigInt::from((m_sk - 1) / 2 + 1) * &big_m;
        let lo = -BigInt::from(m_sk / 2 - ell as u64 + 1) * &big_m;
        let edges: Vec<BigInt> = vec![
            &hi - 1,
            hi.clone(),
            &hi + 1,
            lo.clone(),
            &lo - 1,
            BigInt::from(0),
            BigInt::from(-1),
            big_m.clone() - 1,
        ];
        for n in [1usize, 7, 9, 64, 128, 131, 300] {
            for kind in 0..5 {
                let mut data = vec![0u64; n * bs.len()];
                for c in 0..n {
                    let col: Vec<u64> = if kind == 4 {
                        residues(&edges[c % edges.len()], &bs)
                    } else {
                        bs.iter()
                            .map(|&m| behz_fill(&mut rng, m, c, kind))
                            .collect()
                    };
                    for (i, v) in col.into_iter().enumerate() {
                        data[i * n + c] = v;
                    }
                }
                let x = RnsPoly::<Coeff>::from_data(n, bs.len(), data).unwrap();
                check_selected_and_forced(
                    (n, qs.len()),
                    eligible,
                    &format!("b={bs:?} q={qs:?} n={n}"),
                    |o| sk.convert_portable(&x, o),
                    |o| sk.convert(&x, o),
                    |o| sk.convert_with(Kernel::Avx512, &x, o),
                );
            }
        }
    }
}

/// SmMRq (002 Algorithm 2) and the Shoup product by a scalar: the
/// AVX-512F path equals the portable words for `m̃ = 2^32` and an odd `m̃`,
/// 30- to 61-bit `B_sk`, edge and non-canonical words, lengths with tails.
#[test]
fn sm_mrq_and_scalar_shoup_avx512_match_portable() {
    use crate::ring::{scalar_mul_shoup, scalar_mul_shoup_portable};
    use crate::small_montgomery::SmallMontgomery;
    note_skip_avx512("SmMRq");
    let mut rng = ChaCha20Rng::seed_from_u64(610);
    let configs: Vec<(Vec<u32>, Vec<u32>, u64)> = vec![
        (vec![60; 6], vec![60; 7], 1 << 32),
        (vec![60; 10], vec![60; 11], 1 << 32),
        (vec![30, 50], vec![59, 61, 30], (1 << 32) + 15),
        (vec![50; 3], vec![50; 4], 65537),
    ];
    for (q_bits, b_bits, mt) in configs {
        let (_, bs, q, b) = pick_bases(&q_bits, &b_bits, vec![mt]);
        let Ok(sm) = SmallMontgomery::new(&q, &b, mt) else {
            continue;
        };
        let moduli: Vec<u64> = bs.iter().copied().chain([mt]).collect();
        for n in [1usize, 7, 8, 9, 100, 1024] {
            for kind in 0..4 {
                let x = poly_from_fn(&moduli, n, |m, c| behz_fill(&mut rng, m, c, kind));
                check_selected_and_forced(
                    (n, bs.len()),
                    avx512_available(),
                    &format!("b={bs:?} mt={mt} n={n}"),
                    |o| sm.sm_mrq_portable(&x, o),
                    |o| sm.sm_mrq(&x, o),
                    |o| sm.sm_mrq_with(Kernel::Avx512, &x, o),
                );
                for (row, &m) in x.limbs_iter().zip(&moduli) {
                    let m = Modulus::new(m).unwrap();
                    for c in [
                        0,
                        1,
                        m.value() - 1,
                        m.value() / 2,
                        rng.gen_range(0..m.value()),
                    ] {
                        let cs = m.shoup(c);
                        let mut a = row.to_vec();
                        let mut e = row.to_vec();
                        scalar_mul_shoup(&m, &mut a, c, cs);
                        scalar_mul_shoup_portable(&m, &mut e, c, cs);
                        assert_eq!(a, e, "m={} c={c}", m.value());
                    }
                }
            }
        }
    }
}

/// The AVX-512F Barrett point-wise product and product-sum equal the
/// portable words for every width up to 61 bits, inputs up to `2p − 1`
/// (the Karatsuba sums of the tensor), the largest accumulators and lengths
/// with tails; powers of two are refused.
#[test]
fn pointwise_barrett_avx512_matches_portable() {
    note_skip_avx512("this test");
    let mut rng = ChaCha20Rng::seed_from_u64(604);
    let mut moduli = pointwise_moduli(&mut rng);
    for bits in [51u32, 55, 59, 60, 61] {
        moduli.extend(generate_ntt_primes(bits, 1024, 2, &[]).unwrap());
        moduli.push((1u64 << bits) - 1);
        moduli.push((1u64 << (bits - 1)) + 1);
    }
    moduli.push(1 << 40);
    for p in moduli {
        let m = Modulus::new(p).unwrap();
        let ok = pointwise_supports(Kernel::Avx512, &m);
        assert_eq!(ok, avx512_available() && !p.is_power_of_two(), "p={p}");
        for len in [0usize, 1, 7, 8, 9, 17, 100, 1 << 12] {
            let edges = [0, 1, p - 1, p, 2 * p - 1, p / 2];
            let xs: Vec<Vec<u64>> = vec![
                vec![2 * p - 1; len],
                (0..len).map(|i| edges[i % edges.len()]).collect(),
                (0..len).map(|_| rng.gen_range(0..2 * p)).collect(),
                (0..len).map(|_| rng.gen_range(0..p)).collect(),
            ];
            let accs: Vec<Vec<u64>> = vec![
                vec![p - 1; len],
                (0..len).map(|_| rng.gen_range(0..p)).collect(),
            ];
            for a in &xs {
                for b in &xs {
                    let mut expect = a.clone();
                    pointwise_mul_portable(&m, &mut expect, b);
                    assert!(expect.iter().zip(a).zip(b).all(|((&e, &x), &y)| {
                        e == ((x as u128 * y as u128) % p as u128) as u64
                    }));
                    let mut got = a.clone();
                    let r = pointwise_mul_with(Kernel::Avx512, &m, &mut got, b);
                    assert_eq!(r.is_ok(), ok);
                    if ok {
                        assert_eq!(got, expect, "mul p={p} len={len}");
                    }
                    // The dispatcher's contract is canonical inputs (the
                    // IFMA kernel needs them).
                    if a.iter().chain(b).all(|&x| x < p) {
                        let mut got = a.clone();
                        pointwise_mul(&m, &mut got, b);
                        assert_eq!(got, expect, "dispatch mul p={p} len={len}");
                    }
                    for acc in &accs {
                        let mut expect = acc.clone();
                        pointwise_mul_add_portable(&m, &mut expect, a, b);
                        let mut got = acc.clone();
                        let r = pointwise_mul_add_with(Kernel::Avx512, &m, &mut got, a, b);
                        assert_eq!(r.is_ok(), ok);
                        if ok {
                            assert_eq!(got, expect, "mul_add p={p} len={len}");
                        }
                    }
                }
            }
        }
    }
}

/// The fused AVX-512F Karatsuba and squaring rows equal the portable words
/// (and the schoolbook formulas) for every width, edge inputs and tails.
#[test]
fn karatsuba_and_square_rows_match_portable() {
    use crate::ring::{
        karatsuba_rows, karatsuba_rows_into, karatsuba_rows_portable, square_rows,
        square_rows_into, square_rows_portable,
    };
    let mut rng = ChaCha20Rng::seed_from_u64(605);
    let mut moduli = vec![3u64, 65537, (1 << 50) - 27, (1 << 61) - 1, 1 << 40];
    for bits in [30u32, 50, 59, 60, 61] {
        moduli.extend(generate_ntt_primes(bits, 1024, 1, &[]).unwrap());
    }
    for p in moduli {
        let m = Modulus::new(p).unwrap();
        for len in [0usize, 1, 8, 13, 64, 1000] {
            let edges = [0, 1, p - 1, p / 2, p - 2];
            let row = |rng: &mut ChaCha20Rng, kind: usize| -> Vec<u64> {
                match kind {
                    0 => vec![p - 1; len],
                    1 => (0..len).map(|i| edges[(i * 7 + 3) % edges.len()]).collect(),
                    _ => (0..len).map(|_| rng.gen_range(0..p)).collect(),
                }
            };
            for kind in 0..4 {
                let (a0, a1, b0, b1) = (
                    row(&mut rng, kind),
                    row(&mut rng, (kind + 1) % 4),
                    row(&mut rng, kind),
                    row(&mut rng, 3),
                );
                let (mut e0, mut e1, mut e2) = (a0.clone(), a1.clone(), b0.clone());
                karatsuba_rows_portable(&m, &mut e0, &mut e1, &mut e2, &b1);
                for i in 0..len {
                    let mm = |x: u64, y: u64| ((x as u128 * y as u128) % p as u128) as u64;
                    assert_eq!(e0[i], mm(a0[i], b0[i]));
                    assert_eq!(e1[i], (mm(a0[i], b1[i]) + mm(a1[i], b0[i])) % p);
                    assert_eq!(e2[i], mm(a1[i], b1[i]));
                }
                let (mut o0, mut o1, mut o2) = (vec![9; len], vec![9; len], vec![9; len]);
                karatsuba_rows_into(&m, [&a0, &a1, &b0, &b1], [&mut o0, &mut o1, &mut o2]);
                assert_eq!((&o0, &o1, &o2), (&e0, &e1, &e2), "into p={p} len={len}");
                let (mut g0, mut g1, mut g2) = (a0.clone(), a1.clone(), b0.clone());
                karatsuba_rows(&m, &mut g0, &mut g1, &mut g2, &b1);
                assert_eq!((g0, g1, g2), (e0, e1, e2), "karatsuba p={p} len={len}");
                let (mut e0, mut e1, mut e2) = (a0.clone(), a1.clone(), vec![0; len]);
                square_rows_portable(&m, &mut e0, &mut e1, &mut e2);
                let (mut o0, mut o1, mut o2) = (vec![9; len], vec![9; len], vec![9; len]);
                square_rows_into(&m, [&a0, &a1], [&mut o0, &mut o1, &mut o2]);
                assert_eq!(
                    (&o0, &o1, &o2),
                    (&e0, &e1, &e2),
                    "square into p={p} len={len}"
                );
                let (mut g0, mut g1, mut g2) = (a0.clone(), a1.clone(), vec![7; len]);
                square_rows(&m, &mut g0, &mut g1, &mut g2);
                assert_eq!((g0, g1, g2), (e0, e1, e2), "square p={p} len={len}");
            }
        }
    }
}

/// `(a − c)·s` by Shoup's method (the last step of ModDown and
/// rescaling): the AVX-512F path equals the portable words for 2- to
/// 61-bit moduli, `s ∈ {0, 1, p − 1, random}`, `a` canonical or up to
/// `2^62`, `c ∈ [0, p]` including `p` itself, lengths with tails.
#[test]
fn sub_scalar_mul_shoup_avx512_matches_portable() {
    use crate::ring::{
        sub_scalar_mul_shoup, sub_scalar_mul_shoup_into, sub_scalar_mul_shoup_into_portable,
        sub_scalar_mul_shoup_portable,
    };
    note_skip_avx512("sub_scalar_mul_shoup");
    let mut rng = ChaCha20Rng::seed_from_u64(611);
    let mut moduli = pointwise_moduli(&mut rng);
    moduli.extend([(1u64 << 60) - 93, (1u64 << 61) - 1]);
    for &p in &moduli {
        let Ok(m) = Modulus::new(p) else { continue };
        for n in [1usize, 7, 8, 9, 100, 1027] {
            let c: Vec<u64> = (0..n)
                .map(|i| match i % 4 {
                    0 => 0,
                    1 => p,
                    2 => p - 1,
                    _ => rng.gen_range(0..=p),
                })
                .collect();
            for canonical in [true, false] {
                let a: Vec<u64> = (0..n)
                    .map(|_| {
                        if canonical {
                            rng.gen_range(0..p)
                        } else {
                            rng.gen_range(0..(1u64 << 62))
                        }
                    })
                    .collect();
                for s in [0, 1, p - 1, rng.gen_range(0..p)] {
                    let ss = m.shoup(s);
                    let mut got = a.clone();
                    let mut want = a.clone();
                    sub_scalar_mul_shoup(&m, &mut got, &c, s, ss);
                    sub_scalar_mul_shoup_portable(&m, &mut want, &c, s, ss);
                    assert_eq!(got, want, "p={p} n={n} s={s}");
                    let mut into = vec![7u64; n];
                    sub_scalar_mul_shoup_into(&m, &mut into, &a, &c, s, ss);
                    assert_eq!(into, want, "into: p={p} n={n} s={s}");
                    let mut into_portable = vec![7u64; n];
                    sub_scalar_mul_shoup_into_portable(&m, &mut into_portable, &a, &c, s, ss);
                    assert_eq!(into_portable, want, "into, portable: p={p} n={n} s={s}");
                    // And it is (a − c)·s mod p.
                    for ((&g, &x), &y) in got.iter().zip(&a).zip(&c) {
                        let e = ((u128::from(x) + u128::from(p) - u128::from(y)) * u128::from(s)
                            % u128::from(p)) as u64;
                        assert_eq!(g, e, "p={p}");
                    }
                }
            }
        }
    }
}
