//! Key switching in RNS decomposition form (002 §4.5 Lemma 7, 003 §2.3,
//! 000 §IV.B), shared by relinearization (target `s²`) and, later, Galois
//! automorphisms (target `σ(s)`).
//!
//! For a target `s'` the key holds, for every limb `i` and second-level
//! digit `j`, an RLWE encryption of `s'·g_{i,j}` under `s`, with the gadget
//! `g_{i,j} = (q/q_i)·[(q/q_i)^{-1}]_{q_i}·2^{w·j}`. Its residues are
//! `2^{w·j} mod q_i` at limb `i` and `0` elsewhere, so adding `s'·g_{i,j}`
//! touches one limb only. To switch a polynomial `c` (in `[0, q)`), write
//! `[c]_{q_i} = Σ_j d_{i,j} 2^{w·j}` with `0 ≤ d_{i,j} < 2^w` (or the single
//! digit `d_i = [c]_{q_i}` without second level); then
//! `Σ_{i,j} d_{i,j} g_{i,j} ≡ c (mod q)` by the CRT, and
//! `Σ d_{i,j}·key_{i,j}` decrypts to `c·s'` plus the noise
//! `Σ d_{i,j} e_{i,j}` of size `< k·l·n·2^w·B_err` (002 Lemma 8).
//!
//! The inner products are accumulated lazily in `u128` (one modular
//! reduction per group of digits, 000 §V.A) and cost `k·l` forward NTTs
//! over `q` (`k·l` per limb), `2·k·l` pointwise products per limb and
//! two more NTTs per limb to combine the sum (in NTT form) with the
//! outputs: two inverse NTTs of the sum for coefficient-form outputs
//! ([`KeySwitchingKey::switch`]), two forward NTTs of `c_0, c_1` for
//! relinearization into NTT form, none for outputs already in NTT form
//! (rotations of NTT-form ciphertexts need one, for `σ(c_0)` from
//! coefficient form). See `KeySwitchingKey::switch_rows` for the
//! limb-major, multi-threaded kernel.

use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use rnsfhe_math::{Coeff, Modulus, Ntt, RnsPoly};

use crate::error::{Error, Result};
use crate::rlwe::context::{RlweContext, SchemeContext};
use crate::rlwe::hybrid::{switch_hybrid, SpecialPrimes};
use crate::rlwe::scratch::{lift_row, u128_terms};
use crate::rlwe::secret_key::{rlwe_zero_sample, rlwe_zero_sample_qp, SecretKey};

/// A key-switching key in RNS decomposition form, stored in NTT form over
/// `q`: for limb `i` and digit `j`, the pair
/// `(−[a·s + e]_q + s'·g_{i,j}, a)`. Equality compares ids and key pairs,
/// not the compression seeds.
#[derive(Clone, Debug)]
pub struct KeySwitchingKey {
    params_id: u64,
    key_id: u64,
    digit_bits: Option<u32>,
    digits_per_limb: Vec<usize>,
    keys: Vec<(RnsPoly<Ntt>, RnsPoly<Ntt>)>,
    seeds: Option<Vec<[u8; 32]>>,
}

crate::ids::eq_on_ids_and!(KeySwitchingKey: digit_bits, digits_per_limb, keys);

impl KeySwitchingKey {
    /// Generates a key switching from `target` (NTT form over `q`) to `sk`,
    /// with the decomposition of the context's parameters. Draws one
    /// `(a, e)` per digit from `rng`, limb by limb, digits in increasing
    /// order.
    pub fn generate<C: SchemeContext + ?Sized>(
        ctx: &C,
        sk: &SecretKey,
        target: &RnsPoly<Ntt>,
        rng: &mut ChaCha20Rng,
    ) -> Result<Self> {
        let ctx = ctx.rlwe();
        ctx.ring().check(target)?;
        if ctx.special_primes().is_some() {
            return Self::generate_hybrid(ctx, sk, target, rng);
        }
        let digit_bits = ctx.key_switching().digit_bits();
        let digits_per_limb = digits_per_limb(ctx, digit_bits);
        let total: usize = digits_per_limb.iter().sum();
        let (keys, seeds) = Self::sample_digits(ctx, sk, target, rng, total, rlwe_zero_sample)?;
        Ok(Self {
            params_id: ctx.id(),
            key_id: sk.key_id(),
            digit_bits,
            digits_per_limb,
            keys,
            seeds: Some(seeds),
        })
    }

    /// `total` digits in order: per digit one RLWE sample from `sample`
    /// with its gadget term of `target` added; the pairs and their seeds.
    #[allow(clippy::type_complexity)]
    fn sample_digits(
        ctx: &RlweContext,
        sk: &SecretKey,
        target: &RnsPoly<Ntt>,
        rng: &mut ChaCha20Rng,
        total: usize,
        sample: fn(
            &RlweContext,
            &SecretKey,
            &mut ChaCha20Rng,
        ) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>, [u8; 32])>,
    ) -> Result<(Vec<(RnsPoly<Ntt>, RnsPoly<Ntt>)>, Vec<[u8; 32]>)> {
        let mut keys = Vec::with_capacity(total);
        let mut seeds = Vec::with_capacity(total);
        for digit in 0..total {
            let (mut k0, k1, seed) = sample(ctx, sk, rng)?;
            seeds.push(seed);
            Self::add_gadget_term(ctx, digit, target, &mut k0)?;
            keys.push((k0, k1));
        }
        Ok((keys, seeds))
    }

    /// The hybrid key (see [`crate::rlwe::hybrid`]): per digit `j`, an RLWE
    /// sample over `Q·P` with `[P]_{q_i}·s'` added on the limbs of `Q_j`.
    /// Draws `(seed, e)` per digit in order.
    fn generate_hybrid(
        ctx: &RlweContext,
        sk: &SecretKey,
        target: &RnsPoly<Ntt>,
        rng: &mut ChaCha20Rng,
    ) -> Result<Self> {
        let total = Self::pairs_for(ctx);
        let (keys, seeds) = Self::sample_digits(ctx, sk, target, rng, total, rlwe_zero_sample_qp)?;
        Ok(Self {
            params_id: ctx.id(),
            key_id: sk.key_id(),
            digit_bits: None,
            digits_per_limb: Vec::new(),
            keys,
            seeds: Some(seeds),
        })
    }

    /// `k_0 ← k_0 + g_j·s'`: the gadget term of pair `digit` for the
    /// target `s'` (NTT form over `q`), on the limbs the digit covers. RNS
    /// decomposition: `2^{w·j}·s'` on limb `i` for the `j`-th digit of
    /// `q_i` (003 §2.3); hybrid: `[P]_{q_i}·s'` on the limbs `q_i` of the
    /// digit's range (Han–Ki 2020). `k_0` is over [`Self::key_ring`].
    pub(crate) fn add_gadget_term(
        ctx: &RlweContext,
        digit: usize,
        target: &RnsPoly<Ntt>,
        k0: &mut RnsPoly<Ntt>,
    ) -> Result<()> {
        let ring = ctx.ring();
        ring.check(target)?;
        // (limb, factor) pairs of this digit.
        let terms: Vec<(usize, u64)> = match ctx.special_primes() {
            Some(sp) => {
                let range = sp.digit_ranges().get(digit).cloned().ok_or_else(|| {
                    Error::InvalidArgument(format!("no key-switching digit {digit}"))
                })?;
                range.map(|i| (i, sp.p_mod_q()[i])).collect()
            }
            None => {
                let digit_bits = ctx.key_switching().digit_bits();
                let mut left = digit;
                let mut found = None;
                for (i, &count) in digits_per_limb(ctx, digit_bits).iter().enumerate() {
                    if left < count {
                        let shift = digit_bits.map_or(0, |w| w as u64 * left as u64);
                        found = Some((i, ring.moduli()[i].pow(2, shift)));
                        break;
                    }
                    left -= count;
                }
                vec![found.ok_or_else(|| {
                    Error::InvalidArgument(format!("no key-switching digit {digit}"))
                })?]
            }
        };
        for (i, factor) in terms {
            let m = ring.moduli()[i];
            let fs = m.shoup(factor);
            for (x, &y) in k0.limb_mut(i).iter_mut().zip(target.limb(i)) {
                *x = m.add(*x, m.mul_shoup(y, factor, fs));
            }
        }
        Ok(())
    }

    /// A key assembled from pairs over [`Self::key_ring`] that no single
    /// secret generated (the collective keys of
    /// [`crate::multiparty`]): no seeds, `k_1` not uniform.
    pub(crate) fn from_collective(
        ctx: &RlweContext,
        key_id: u64,
        keys: Vec<(RnsPoly<Ntt>, RnsPoly<Ntt>)>,
    ) -> Result<Self> {
        Self::from_parts(ctx, key_id, keys, None)
    }

    /// Erases every part of a hybrid key that a switch at level 0 does not
    /// read: the digits after the first, and the limbs `q_1 … q_L` of the
    /// first, keeping the RLWE samples over `q_0·P` only (the seeds go too).
    /// For a key whose secret must only be exposed at a small modulus: the
    /// sparse secret of bootstrapping's encapsulation (Bossuat et al. 2022,
    /// §4: the dense-to-sparse key lives at level 0). Errors for an
    /// RNS-decomposition key.
    pub(crate) fn restrict_to_level_zero(&mut self, ctx: &RlweContext) -> Result<()> {
        self.hybrid_tables(ctx)?;
        let q_limbs = ctx.ring().limbs();
        for (j, (k0, k1)) in self.keys.iter_mut().enumerate() {
            for poly in [k0, k1] {
                for (i, row) in poly.limbs_iter_mut().enumerate() {
                    if !Self::kept_at_level_zero(q_limbs, j, i) {
                        row.fill(0);
                    }
                }
            }
        }
        self.seeds = None;
        Ok(())
    }

    /// Whether limb `i` of the key ring `Q·P` (`q_0 … q_L` are limbs
    /// `0 … q_limbs − 1`, the special primes follow) of digit `digit` survives
    /// [`KeySwitchingKey::restrict_to_level_zero`]: `q_0` and the special
    /// primes of the first digit. The one definition of the erased parts,
    /// shared by the restriction, its check and the bootstrapping-key file
    /// (which stores only the surviving limbs).
    pub(crate) fn kept_at_level_zero(q_limbs: usize, digit: usize, i: usize) -> bool {
        digit == 0 && (i == 0 || i >= q_limbs)
    }

    /// Whether this is a hybrid key of `ctx` whose parts erased by
    /// [`KeySwitchingKey::restrict_to_level_zero`] are all zero (the NTT
    /// works limb by limb, so a zero limb is zero in either form).
    pub(crate) fn is_restricted_to_level_zero(&self, ctx: &RlweContext) -> bool {
        if self.hybrid_tables(ctx).is_err() {
            return false;
        }
        let q_limbs = ctx.ring().limbs();
        self.keys.iter().enumerate().all(|(j, (k0, k1))| {
            [k0, k1].into_iter().all(|poly| {
                poly.limbs_iter().enumerate().all(|(i, row)| {
                    Self::kept_at_level_zero(q_limbs, j, i) || row.iter().all(|&x| x == 0)
                })
            })
        })
    }

    /// The context's hybrid tables, or an error for an RNS-decomposition
    /// key or a context without special primes.
    fn hybrid_tables<'a>(&self, ctx: &'a RlweContext) -> Result<&'a SpecialPrimes> {
        match (ctx.special_primes(), self.is_hybrid()) {
            (Some(sp), true) => Ok(sp),
            _ => Err(Error::InvalidArgument(
                "hybrid key switching needs a hybrid key and special primes".into(),
            )),
        }
    }

    /// Whether this is a hybrid key (pairs over `Q·P`, one per digit).
    pub fn is_hybrid(&self) -> bool {
        self.digits_per_limb.is_empty()
    }

    /// Hybrid key switch at the level of `c` (coefficient form over
    /// `q_0 … q_l`, `c_ntt` its NTT form if at hand): `(ks_0, ks_1)` in NTT
    /// form over `q_0 … q_l`, decrypting to `c·s'` plus the key-switching
    /// noise ([`crate::rlwe::hybrid`]). Errors for an RNS-decomposition key
    /// or a context without special primes.
    pub fn switch_hybrid<C: SchemeContext + ?Sized>(
        &self,
        ctx: &C,
        c: &RnsPoly<Coeff>,
        c_ntt: Option<&RnsPoly<Ntt>>,
    ) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
        let ctx = ctx.rlwe();
        ctx.check_id(self.params_id)?;
        let sp = self.hybrid_tables(ctx)?;
        switch_hybrid(ctx, sp, &self.keys, c, c_ntt)
    }

    /// The hybrid key switch of `σ_g(c)` from the hoisted digits of `c`
    /// ([`hoist`]), `table` the automorphism of this key's element.
    /// Errors as [`KeySwitchingKey::switch_hybrid`].
    pub(crate) fn switch_hoisted(
        &self,
        ctx: &RlweContext,
        hoisted: &crate::rlwe::hybrid::HoistedDigits<'_>,
        table: &rnsfhe_math::galois::GaloisTable,
    ) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
        ctx.check_id(self.params_id)?;
        let sp = self.hybrid_tables(ctx)?;
        crate::rlwe::hybrid::switch_hoisted(ctx, sp, &self.keys, hoisted, table)
    }

    /// [`KeySwitchingKey::switch_hoisted`] before ModDown: the inner
    /// products over `Q_l·P` (NTT form, rows `q_0 … q_l, p_1 … p_α`),
    /// decrypting to `P·σ_g(c)·s'` plus noise (double hoisting).
    pub(crate) fn switch_hoisted_extended<'a>(
        &self,
        ctx: &'a RlweContext,
        hoisted: &crate::rlwe::hybrid::HoistedDigits<'_>,
        table: &rnsfhe_math::galois::GaloisTable,
    ) -> Result<(
        crate::rlwe::scratch::Scratch<'a>,
        crate::rlwe::scratch::Scratch<'a>,
    )> {
        ctx.check_id(self.params_id)?;
        let sp = self.hybrid_tables(ctx)?;
        crate::rlwe::hybrid::switch_hoisted_extended(ctx, sp, &self.keys, hoisted, table)
    }

    /// Relinearization fused with rescaling for a tensor `(d_0, d_1, c_2)`
    /// at level `l ≥ 1` ([`crate::rlwe::hybrid`]): `d_0`, `d_1` become
    /// `⌊(P·d_b + a_b)/(P·q_l)⌉` over `q_0 … q_{l−1}`. Errors as
    /// [`KeySwitchingKey::switch_hybrid`], and at level 0.
    pub(crate) fn relinearize_rescale_hybrid(
        &self,
        ctx: &RlweContext,
        c2_coeff: &RnsPoly<Coeff>,
        c2_ntt: &RnsPoly<Ntt>,
        d0: &mut RnsPoly<Ntt>,
        d1: &mut RnsPoly<Ntt>,
    ) -> Result<()> {
        ctx.check_id(self.params_id)?;
        let sp = self.hybrid_tables(ctx)?;
        crate::rlwe::hybrid::relinearize_rescale_hybrid(
            ctx, sp, &self.keys, c2_coeff, c2_ntt, d0, d1,
        )
    }

    /// Assembles a key from validated key pairs (deserialization): the
    /// decomposition comes from `ctx` (RNS decomposition, pairs over `q`;
    /// or hybrid, one pair over `Q·P` per digit), and the number of pairs
    /// (and seeds) must match it ([`KeySwitchingKey::pairs_for`]).
    pub(crate) fn from_parts(
        ctx: &RlweContext,
        key_id: u64,
        keys: Vec<(RnsPoly<Ntt>, RnsPoly<Ntt>)>,
        seeds: Option<Vec<[u8; 32]>>,
    ) -> Result<Self> {
        let digit_bits = ctx.key_switching().digit_bits();
        let digits_per_limb = match ctx.special_primes() {
            Some(_) => Vec::new(),
            None => digits_per_limb(ctx, digit_bits),
        };
        let total = Self::pairs_for(ctx);
        let ring = Self::key_ring(ctx);
        if keys.len() != total || seeds.as_ref().is_some_and(|s| s.len() != total) {
            return Err(Error::InvalidArgument(format!(
                "a key-switching key for these parameters has {total} key pairs"
            )));
        }
        for (k0, k1) in &keys {
            ring.check(k0)?;
            ring.check(k1)?;
        }
        Ok(Self {
            params_id: ctx.id(),
            key_id,
            digit_bits,
            digits_per_limb,
            keys,
            seeds,
        })
    }

    /// Number of key pairs of a key-switching key of `ctx`: `Σ_i l_i` for
    /// the RNS decomposition (`l_i` digits of limb `i`), the number of
    /// digits `dnum` for hybrid key switching.
    pub fn pairs_for<C: SchemeContext + ?Sized>(ctx: &C) -> usize {
        let ctx = ctx.rlwe();
        match ctx.special_primes() {
            Some(sp) => sp.digit_ranges().len(),
            None => digits_per_limb(ctx, ctx.key_switching().digit_bits())
                .iter()
                .sum(),
        }
    }

    /// Bytes of one key-switching key of `ctx` in memory (its pairs, both
    /// polynomials over [`KeySwitchingKey::key_ring`]).
    pub fn bytes_for<C: SchemeContext + ?Sized>(ctx: &C) -> u64 {
        let ring = Self::key_ring(ctx);
        crate::limits::key_switching_keys_bytes(ring.n(), ring.limbs(), Self::pairs_for(ctx), 1)
    }

    /// Errors with [`crate::Error::ResourceLimit`] when `count` keys of
    /// `ctx` (`what`, e.g. "Galois keys") exceed the limit in force;
    /// checked before generating or decoding any of them.
    pub(crate) fn check_count_limit<C: SchemeContext + ?Sized>(
        ctx: &C,
        count: u64,
        what: &str,
    ) -> crate::error::Result<()> {
        let needed = Self::bytes_for(ctx).saturating_mul(count);
        crate::limits::check(&format!("{count} {what}"), needed)
    }

    /// The ring the key pairs of `ctx` live in: `R_q` for the RNS
    /// decomposition, `R_{Q·P}` ([`SpecialPrimes::ring_qp`]) for hybrid key
    /// switching.
    pub fn key_ring<C: SchemeContext + ?Sized>(ctx: &C) -> &rnsfhe_math::RnsRing {
        let ctx = ctx.rlwe();
        match ctx.special_primes() {
            Some(sp) => sp.ring_qp(),
            None => ctx.ring(),
        }
    }

    /// The 32-byte seeds the `a` of each key pair was expanded from (NTT
    /// of [`rnsfhe_math::sampling::expand_uniform`] in coefficient form),
    /// in the order of [`KeySwitchingKey::keys`], when known: for
    /// generated keys and keys loaded seed-compressed.
    pub fn seeds(&self) -> Option<&[[u8; 32]]> {
        self.seeds.as_deref()
    }

    /// The second-level digit size `w` in bits, if any.
    pub fn digit_bits(&self) -> Option<u32> {
        self.digit_bits
    }

    /// Number of digits per limb `q_i` (all 1 without second level).
    pub fn digits_per_limb(&self) -> &[usize] {
        &self.digits_per_limb
    }

    /// Memory held by the key pairs' residues, in bytes (8 per residue).
    pub fn size_bytes(&self) -> usize {
        self.keys
            .iter()
            .map(|(a, b)| (a.data().len() + b.data().len()) * 8)
            .sum()
    }

    /// The key pairs, limb-major then digit.
    pub fn keys(&self) -> &[(RnsPoly<Ntt>, RnsPoly<Ntt>)] {
        &self.keys
    }

    /// Returns `(Σ d_{i,j}·key_{i,j}[0], Σ d_{i,j}·key_{i,j}[1])` in
    /// coefficient form, which decrypts (under `s`) to `c·s'` plus small
    /// noise. `c` is a coefficient-form polynomial over `q`.
    pub fn switch<C: SchemeContext + ?Sized>(
        &self,
        ctx: &C,
        c: &RnsPoly<Coeff>,
    ) -> Result<(RnsPoly<Coeff>, RnsPoly<Coeff>)> {
        let ctx = ctx.rlwe();
        let ring = ctx
            .ring()
            .sub_ring(0..c.limbs().clamp(1, ctx.ring().limbs()))?;
        let mut out0: RnsPoly<Coeff> = ring.zero();
        let mut out1: RnsPoly<Coeff> = ring.zero();
        self.switch_add_assign(ctx, c, &mut out0, &mut out1)?;
        Ok((out0, out1))
    }

    /// `out_0 += Σ d_{i,j}·key_{i,j}[0]` and `out_1 += Σ d_{i,j}·key_{i,j}[1]`
    /// over `q`, the outputs in either form (in NTT form with no inverse
    /// NTT at all): [`KeySwitchingKey::switch`] added in place (see
    /// [`KeySwitchingKey::switch_rows`] for the kernel).
    pub(crate) fn switch_add_assign<R: Landing>(
        &self,
        ctx: &RlweContext,
        c: &RnsPoly<Coeff>,
        out0: &mut RnsPoly<R>,
        out1: &mut RnsPoly<R>,
    ) -> Result<()> {
        self.switch_rows(
            ctx,
            c,
            (out0.data_mut(), R::FINISH),
            (out1.data_mut(), R::FINISH),
        )
    }

    /// Limb-major kernel of every key switch: one rayon task per output
    /// limb `q_l`, which for every digit lifts `d_{i,j}` to `[0, 4q_l)` (a
    /// copy for 60-bit moduli), runs a forward NTT, and accumulates the
    /// products with the two key rows in `u128` over tiles of 64
    /// coefficients (one reduction per group of up to [`DIGIT_GROUP`]
    /// digits, 000 §V.A); then each output row (`k·n` words, limb-major) is
    /// finished as its [`Finish`] says: inverse NTT of the sum and addition
    /// (coefficient-form output), forward NTT of the row and addition
    /// (coefficient-form row returned in NTT form), or addition only
    /// (NTT-form output). A task touches `DIGIT_GROUP + 2` rows of scratch
    /// (768 KiB at `n = 2^14`), so it runs in L2, and the limbs are
    /// independent, so they are spread over the caller's rayon pool with
    /// identical results for every thread count. The NTT is a bijection,
    /// so all finishes give the same polynomial.
    pub(crate) fn switch_rows(
        &self,
        ctx: &RlweContext,
        c: &RnsPoly<Coeff>,
        out0: (&mut [u64], Finish),
        out1: (&mut [u64], Finish),
    ) -> Result<()> {
        ctx.check_id(self.params_id)?;
        let ring = ctx.ring();
        let n = ring.n();
        // A ciphertext at level l switches with the first l + 1 limbs of
        // every key pair and only the digits of those limbs: digit i's key
        // encrypts s'·g_i with g_i ≡ δ_ij (mod q_j), which holds modulo
        // every prefix of q.
        let k = c.limbs();
        if c.n() != n || k == 0 || k > ring.limbs() {
            return Err(Error::InvalidArgument(format!(
                "key switching needs a polynomial of degree {n} with 1 to {} limbs",
                ring.limbs()
            )));
        }
        let ((out0, mode0), (out1, mode1)) = (out0, out1);
        if out0.len() != k * n || out1.len() != k * n {
            return Err(Error::InvalidArgument(
                "key-switch outputs must have k·n words".into(),
            ));
        }
        let moduli = ring.moduli();
        if self.digits_per_limb.len() != ring.limbs() {
            return Err(Error::InvalidArgument(
                "key-switching key does not match the modulus count".into(),
            ));
        }
        // (limb i, digit j) in key order, with its key pair.
        let positions: Vec<(usize, usize)> = self
            .digits_per_limb
            .iter()
            .enumerate()
            .flat_map(|(i, &count)| (0..count).map(move |j| (i, j)))
            .collect();
        let total: usize = self.digits_per_limb.iter().sum();
        if self.keys.len() != total {
            return Err(Error::InvalidArgument(
                "key-switching key has the wrong number of digits".into(),
            ));
        }
        for (k0, k1) in &self.keys {
            ring.check(k0)?;
            ring.check(k1)?;
        }
        let digits: Vec<_> = positions
            .into_iter()
            .zip(&self.keys)
            .filter(|((i, _), _)| *i < k)
            .collect();
        let digit_bits = self.digit_bits;
        let group = DIGIT_GROUP.min(digits.len()).max(1);
        out0.par_chunks_exact_mut(n)
            .zip(out1.par_chunks_exact_mut(n))
            .zip(ring.tables()[..k].par_iter())
            .enumerate()
            .try_for_each_init(
                || ctx.scratch.take((group + 2) * n),
                |scratch, (l, ((o0, o1), table))| -> Result<()> {
                    let m = *table.modulus();
                    let p = m.value();
                    // Digits < 4p after the lift, key residues < p.
                    let block = u128_terms(p.saturating_mul(4), p).max(1);
                    let (drows, accs) = scratch.as_mut_slice().split_at_mut(group * n);
                    let (acc0, acc1) = accs.split_at_mut(n);
                    let mut first = true;
                    for grp in digits.chunks(group.min(block)) {
                        for (row, &((i, j), _)) in drows.chunks_exact_mut(n).zip(grp) {
                            let src = c.limb(i);
                            let bound = moduli.get(i).map_or(u64::MAX, |mi| mi.value());
                            match digit_bits {
                                None => lift_row(row, src, bound, &m),
                                Some(w) => digit_row(row, src, w, j, &m),
                            }
                            table.forward(row)?;
                        }
                        let key_rows: Vec<(&[u64], &[u64])> = grp
                            .iter()
                            .map(|(_, (k0, k1))| (k0.limb(l), k1.limb(l)))
                            .collect();
                        accumulate(&m, drows, &key_rows, acc0, acc1, n, first);
                        first = false;
                    }
                    for (o, acc, mode) in [(o0, acc0, mode0), (o1, acc1, mode1)] {
                        match mode {
                            Finish::Coeff => table.backward(acc)?,
                            Finish::CoeffToNtt => table.forward(o)?,
                            Finish::Ntt => {}
                        }
                        for (x, &y) in o.iter_mut().zip(acc.iter()) {
                            *x = m.add(*x, y);
                        }
                    }
                    Ok(())
                },
            )
    }
}

crate::ids::id_accessors!(KeySwitchingKey);

/// How [`KeySwitchingKey::switch_rows`] combines the key-switch sum (in NTT
/// form) with an output row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Finish {
    /// The row is in coefficient form and stays so: inverse NTT of the
    /// sum, then the addition.
    Coeff,
    /// The row is in coefficient form and leaves in NTT form: forward NTT
    /// of the row, then the addition.
    CoeffToNtt,
    /// The row is in NTT form: the addition only.
    Ntt,
}

/// How the key switch lands in an output of this form.
pub(crate) trait Landing: rnsfhe_math::Representation {
    /// [`Finish::Coeff`] or [`Finish::Ntt`].
    const FINISH: Finish;
}

impl Landing for Coeff {
    const FINISH: Finish = Finish::Coeff;
}

impl Landing for Ntt {
    const FINISH: Finish = Finish::Ntt;
}

/// Digits transformed and accumulated together (at most the number of
/// `u128` products that fit, see `u128_terms`).
const DIGIT_GROUP: usize = 8;

/// Coefficients per accumulation tile (two `u128` arrays on the stack).
const ACC_TILE: usize = 64;

/// `acc_b ← [acc_b + Σ_g d_g ⊙ key_{g,b}]_p` for `b ∈ {0, 1}` (or without
/// the old value when `first`), accumulating each tile in `u128` and
/// reducing once. `drows` holds at least `keys.len()` rows of `n` digits in
/// `[0, 4p)`; the group is small enough that the sums fit (`u128_terms`).
///
/// Groups of up to 8 digits take a fixed-size kernel that keeps both sums
/// of a coefficient in registers (`accumulate_fixed`); the tiled loop below
/// is the general fallback.
#[inline(never)]
fn accumulate(
    m: &Modulus,
    drows: &[u64],
    keys: &[(&[u64], &[u64])],
    acc0: &mut [u64],
    acc1: &mut [u64],
    n: usize,
    first: bool,
) {
    macro_rules! fixed {
        ($($g:literal)*) => {
            match keys.len() {
                $($g => {
                    if let (Ok(d), Ok(k)) = (
                        <[&[u64]; $g]>::try_from(drows.chunks_exact(n).take($g).collect::<Vec<_>>()),
                        <&[(&[u64], &[u64]); $g]>::try_from(keys),
                    ) {
                        if accumulate_fixed::<$g>(m, d, k, acc0, acc1, first) {
                            return;
                        }
                    }
                })*
                _ => {}
            }
        };
    }
    fixed!(1 2 3 4 5 6 7 8);
    let mut start = 0;
    for (o0, o1) in acc0.chunks_mut(ACC_TILE).zip(acc1.chunks_mut(ACC_TILE)) {
        let len = o0.len();
        let mut s0 = [0u128; ACC_TILE];
        let mut s1 = [0u128; ACC_TILE];
        if !first {
            for ((a, b), (&x, &y)) in s0
                .iter_mut()
                .zip(s1.iter_mut())
                .zip(o0.iter().zip(o1.iter()))
            {
                *a = x as u128;
                *b = y as u128;
            }
        }
        for (drow, (k0, k1)) in drows.chunks_exact(n).zip(keys) {
            let d = &drow[start..start + len];
            let (k0, k1) = (&k0[start..start + len], &k1[start..start + len]);
            for ((((a, b), &x), &y0), &y1) in
                s0.iter_mut().zip(s1.iter_mut()).zip(d).zip(k0).zip(k1)
            {
                *a += x as u128 * y0 as u128;
                *b += x as u128 * y1 as u128;
            }
        }
        for ((o, &a), (p, &b)) in o0.iter_mut().zip(&s0).zip(o1.iter_mut().zip(&s1)) {
            *o = m.reduce_u128(a);
            *p = m.reduce_u128(b);
        }
        start += len;
    }
}

/// [`accumulate`] for exactly `G` digits: per coefficient, both `u128`
/// sums stay in registers and are reduced once. Returns `false` (and does
/// nothing) if a row is shorter than the outputs.
#[inline(always)]
fn accumulate_fixed<const G: usize>(
    m: &Modulus,
    d: [&[u64]; G],
    keys: &[(&[u64], &[u64]); G],
    acc0: &mut [u64],
    acc1: &mut [u64],
    first: bool,
) -> bool {
    let n = acc0.len().min(acc1.len());
    let d = d.map(|r| &r[..n.min(r.len())]);
    let k0: [&[u64]; G] = core::array::from_fn(|g| &keys[g].0[..n.min(keys[g].0.len())]);
    let k1: [&[u64]; G] = core::array::from_fn(|g| &keys[g].1[..n.min(keys[g].1.len())]);
    if acc0.len() != acc1.len() || d.iter().chain(&k0).chain(&k1).any(|r| r.len() != n) {
        return false;
    }
    for (j, (o0, o1)) in acc0.iter_mut().zip(acc1.iter_mut()).enumerate() {
        let (mut s0, mut s1) = if first {
            (0u128, 0u128)
        } else {
            (*o0 as u128, *o1 as u128)
        };
        for ((dr, a), b) in d.iter().zip(&k0).zip(&k1) {
            let x = dr[j] as u128;
            s0 += x * a[j] as u128;
            s1 += x * b[j] as u128;
        }
        *o0 = m.reduce_u128(s0);
        *o1 = m.reduce_u128(s1);
    }
    true
}

/// `row ← d_j` lifted to `[0, 4p)` for the second-level digit
/// `d_j = ⌊x / 2^{w·j}⌋ mod 2^w` of each `x` in `src`.
fn digit_row(row: &mut [u64], src: &[u64], w: u32, j: usize, m: &Modulus) {
    let shift = (w as u64 * j as u64).min(63) as u32;
    let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    if mask < m.value().saturating_mul(4) {
        for (d, &x) in row.iter_mut().zip(src) {
            *d = (x >> shift) & mask;
        }
    } else {
        for (d, &x) in row.iter_mut().zip(src) {
            *d = m.reduce((x >> shift) & mask);
        }
    }
}

/// Digits per limb: 1 without second level, else `⌈bitlen(q_i)/w⌉`.
fn digits_per_limb(ctx: &RlweContext, digit_bits: Option<u32>) -> Vec<usize> {
    ctx.ring()
        .moduli()
        .iter()
        .map(|m| match digit_bits {
            None => 1,
            Some(w) => m.bits().div_ceil(w.max(1)) as usize,
        })
        .collect()
}

/// The ModUp of `c` (coefficient form, `c_ntt` its NTT form if known)
/// hoisted out of several hybrid key switches of its automorphisms
/// ([`KeySwitchingKey::switch_hoisted`]). Errors without key-switching
/// primes or for a polynomial outside the chain.
pub(crate) fn hoist<'a>(
    ctx: &'a RlweContext,
    c: &RnsPoly<Coeff>,
    c_ntt: Option<&RnsPoly<Ntt>>,
) -> Result<crate::rlwe::hybrid::HoistedDigits<'a>> {
    let sp = ctx.special_primes().ok_or_else(|| {
        Error::InvalidArgument("hoisted key switching needs key-switching primes".into())
    })?;
    crate::rlwe::hybrid::mod_up_hoisted(ctx, sp, c, c_ntt)
}

#[cfg(test)]
mod tests;
