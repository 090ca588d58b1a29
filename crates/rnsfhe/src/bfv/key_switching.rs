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
//! reduction per 128 digits, 000 §V.A) and cost `k·l` forward NTTs over
//! `q`, `2·k·l` pointwise products per limb and two inverse NTTs.

use rand_chacha::ChaCha20Rng;
use rnsfhe_math::{Coeff, Ntt, RnsPoly};

use crate::bfv::context::BfvContext;
use crate::bfv::keys::{rlwe_zero_sample, SecretKey};
use crate::error::{Error, Result};

/// Reduce the `u128` accumulators after this many digit products
/// (products of two 60-bit values are below 2^120; 2^128 / 2^120 = 256).
const LAZY_DIGITS: usize = 128;

/// A key-switching key in RNS decomposition form, stored in NTT form over
/// `q`: for limb `i` and digit `j`, the pair
/// `(−[a·s + e]_q + s'·g_{i,j}, a)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySwitchingKey {
    params_id: u64,
    key_id: u64,
    digit_bits: Option<u32>,
    digits_per_limb: Vec<usize>,
    keys: Vec<(RnsPoly<Ntt>, RnsPoly<Ntt>)>,
}

impl KeySwitchingKey {
    /// Generates a key switching from `target` (NTT form over `q`) to `sk`,
    /// with the decomposition of the context's parameters. Draws one
    /// `(a, e)` per digit from `rng`, limb by limb, digits in increasing
    /// order.
    pub fn generate(
        ctx: &BfvContext,
        sk: &SecretKey,
        target: &RnsPoly<Ntt>,
        rng: &mut ChaCha20Rng,
    ) -> Result<Self> {
        let ring = ctx.ring();
        ring.check(target)?;
        let digit_bits = ctx.params().relin_method().digit_bits();
        let digits_per_limb = digits_per_limb(ctx, digit_bits);
        let total: usize = digits_per_limb.iter().sum();
        let mut keys = Vec::with_capacity(total);
        for (i, (&count, m)) in digits_per_limb.iter().zip(ring.moduli()).enumerate() {
            for j in 0..count {
                let (mut k0, k1) = rlwe_zero_sample(ctx, sk, rng)?;
                let shift = digit_bits.map_or(0, |w| w as u64 * j as u64);
                let factor = m.pow(2, shift);
                let fs = m.shoup(factor);
                let row = k0.limb_mut(i);
                for (x, &y) in row.iter_mut().zip(target.limb(i)) {
                    *x = m.add(*x, m.mul_shoup(y, factor, fs));
                }
                keys.push((k0, k1));
            }
        }
        Ok(Self {
            params_id: ctx.id(),
            key_id: sk.key_id(),
            digit_bits,
            digits_per_limb,
            keys,
        })
    }

    /// The parameter id of the context the key was made for.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The key id of the secret key the key switches to.
    pub fn key_id(&self) -> u64 {
        self.key_id
    }

    /// The second-level digit size `w` in bits, if any.
    pub fn digit_bits(&self) -> Option<u32> {
        self.digit_bits
    }

    /// Number of digits per limb `q_i` (all 1 without second level).
    pub fn digits_per_limb(&self) -> &[usize] {
        &self.digits_per_limb
    }

    /// The key pairs, limb-major then digit.
    pub fn keys(&self) -> &[(RnsPoly<Ntt>, RnsPoly<Ntt>)] {
        &self.keys
    }

    /// Returns `(Σ d_{i,j}·key_{i,j}[0], Σ d_{i,j}·key_{i,j}[1])` in
    /// coefficient form, which decrypts (under `s`) to `c·s'` plus small
    /// noise. `c` is a coefficient-form polynomial over `q`.
    pub fn switch(
        &self,
        ctx: &BfvContext,
        c: &RnsPoly<Coeff>,
    ) -> Result<(RnsPoly<Coeff>, RnsPoly<Coeff>)> {
        ctx.check_id(self.params_id)?;
        let ring = ctx.ring();
        ring.check(c)?;
        let n = ring.n();
        let k = ring.limbs();
        let moduli = ring.moduli();
        if self.digits_per_limb.len() != k {
            return Err(Error::InvalidArgument(
                "key-switching key does not match the modulus count".into(),
            ));
        }
        let mut acc0 = vec![0u128; k * n];
        let mut acc1 = vec![0u128; k * n];
        let mut digit: RnsPoly<Coeff> = ring.zero();
        let mut key_iter = self.keys.iter();
        let mut pending = 0usize;
        for (i, &count) in self.digits_per_limb.iter().enumerate() {
            let row = c.limb(i);
            for j in 0..count {
                // Digit d_{i,j} lifted to every limb.
                let (shift, mask) = match self.digit_bits {
                    Some(w) => {
                        let s = w * j as u32;
                        (s, if w >= 64 { u64::MAX } else { (1u64 << w) - 1 })
                    }
                    None => (0, u64::MAX),
                };
                for (l, (drow, m)) in digit.limbs_iter_mut().zip(moduli).enumerate() {
                    if l == i && self.digit_bits.is_none() {
                        drow.copy_from_slice(row);
                    } else {
                        for (d, &x) in drow.iter_mut().zip(row) {
                            *d = m.reduce((x >> shift) & mask);
                        }
                    }
                }
                let d_ntt = ring.to_ntt(digit)?;
                let (k0, k1) = key_iter.next().ok_or_else(|| {
                    Error::InvalidArgument("key-switching key has too few digits".into())
                })?;
                for l in 0..k {
                    let dl = d_ntt.limb(l);
                    let a0 = &mut acc0[l * n..(l + 1) * n];
                    for ((a, &d), &y) in a0.iter_mut().zip(dl).zip(k0.limb(l)) {
                        *a += d as u128 * y as u128;
                    }
                    let a1 = &mut acc1[l * n..(l + 1) * n];
                    for ((a, &d), &y) in a1.iter_mut().zip(dl).zip(k1.limb(l)) {
                        *a += d as u128 * y as u128;
                    }
                }
                digit = d_ntt.assume_representation();
                pending += 1;
                if pending == LAZY_DIGITS {
                    pending = 0;
                    for (l, m) in moduli.iter().enumerate() {
                        for a in acc0[l * n..(l + 1) * n]
                            .iter_mut()
                            .chain(acc1[l * n..(l + 1) * n].iter_mut())
                        {
                            *a = m.reduce_u128(*a) as u128;
                        }
                    }
                }
            }
        }
        let mut out0: RnsPoly<Ntt> = ring.zero();
        let mut out1: RnsPoly<Ntt> = ring.zero();
        for (l, m) in moduli.iter().enumerate() {
            for (o, &a) in out0.limb_mut(l).iter_mut().zip(&acc0[l * n..(l + 1) * n]) {
                *o = m.reduce_u128(a);
            }
            for (o, &a) in out1.limb_mut(l).iter_mut().zip(&acc1[l * n..(l + 1) * n]) {
                *o = m.reduce_u128(a);
            }
        }
        Ok((ring.to_coeff(out0)?, ring.to_coeff(out1)?))
    }
}

/// Digits per limb: 1 without second level, else `⌈bitlen(q_i)/w⌉`.
fn digits_per_limb(ctx: &BfvContext, digit_bits: Option<u32>) -> Vec<usize> {
    ctx.ring()
        .moduli()
        .iter()
        .map(|m| match digit_bits {
            None => 1,
            Some(w) => m.bits().div_ceil(w.max(1)) as usize,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfv::parameters::BfvParameters;
    use rnsfhe_math::sampling::{rng_from_seed, sample_uniform};

    /// `switch(c)` under `s` equals `c·s'` up to `Σ d_{i,j} e_{i,j}`, whose
    /// size is below `digits·n·2^w·6σ` (002 Lemma 8).
    fn check_switch(digit_bits: Option<u32>) {
        let params = BfvParameters::builder()
            .security(crate::SecurityLevel::None)
            .degree(1024)
            .plain_modulus(65537)
            .coeff_moduli_bits(&[50, 50, 40])
            .relin_digit_bits(digit_bits)
            .build()
            .unwrap();
        let ctx = BfvContext::new(params).unwrap();
        let ring = ctx.ring();
        let mut rng = rng_from_seed([7; 32]);
        let sk = SecretKey::generate_with_rng(&ctx, &mut rng).unwrap();
        // Target s' = s² as for relinearization.
        let mut target = sk.s_ntt().clone();
        ring.mul_assign(&mut target, sk.s_ntt()).unwrap();
        let ksk = KeySwitchingKey::generate(&ctx, &sk, &target, &mut rng).unwrap();
        let expected_digits: usize = match digit_bits {
            None => 3,
            Some(w) => (50u32.div_ceil(w) * 2 + 40u32.div_ceil(w)) as usize,
        };
        assert_eq!(ksk.keys().len(), expected_digits);
        let c: RnsPoly<Coeff> = sample_uniform(&mut rng, ring.base(), 1024);
        let (k0, k1) = ksk.switch(&ctx, &c).unwrap();
        // err = k0 + k1·s − c·s'
        let mut k1s = ring.to_ntt(k1).unwrap();
        ring.mul_assign(&mut k1s, sk.s_ntt()).unwrap();
        let mut cs = ring.to_ntt(c).unwrap();
        ring.mul_assign(&mut cs, &target).unwrap();
        ring.sub_assign(&mut k1s, &cs).unwrap();
        let mut err = ring.to_coeff(k1s).unwrap();
        ring.add_assign(&mut err, &k0).unwrap();
        let err = ctx.crt().reconstruct_poly_centered(&err).unwrap();
        let max = err.iter().map(|x| x.magnitude().bits()).max().unwrap();
        let w = digit_bits.unwrap_or(50).min(50);
        let bound_bits = (expected_digits as f64 * 1024.0 * 20.0).log2().ceil() as u64 + w as u64;
        assert!(max <= bound_bits, "switch noise {max} bits > {bound_bits}");
        assert!(max > 10, "suspiciously small noise");
    }

    #[test]
    fn switch_decrypts_to_c_times_target() {
        check_switch(None);
        check_switch(Some(16));
    }
}
