//! Hybrid key switching with special primes (Han-Ki 2020, "Better
//! bootstrapping for approximate homomorphic encryption", §3; the key
//! switching of Lattigo, SEAL (one limb per digit) and OpenFHE's
//! `HYBRID`). Paper 004's relinearization version 2 (modulus raising by one
//! large `p`, 004 §3.10 eqs. 11-12) is the case `dnum = 1`.
//!
//! The ciphertext limbs `q_0 … q_{k-1}` are grouped into `dnum` digits
//! `Q_j` of `α = ⌈k/dnum⌉` consecutive limbs; `P = p_1 ⋯ p_α` is a product
//! of special primes with `P ≥ max_j Q_j` (up to a small factor). The key
//! for a target `s'` holds, per digit, an RLWE sample over `Q·P`:
//!
//! `key_j = (−a_j·s + e_j + P·[(Q/Q_j)^{-1}]_{Q_j}·(Q/Q_j)·s',  a_j)`,
//!
//! whose message part is `P·s'` modulo the primes of `Q_j` and `0` modulo
//! every other prime of `Q` and of `P`. To switch `c` at level `l` (limbs
//! `q_0 … q_l`):
//!
//! 1. **ModUp**: for each digit `j` meeting `[0, l]`, `d_j = [c]_{Q_j'}`
//!    (`Q_j' = Q_j ∩ Q_l`) is extended to `Q_l·P` with FastBaseConv_I
//!    (000 eq. 4): the result is `d_j + u·Q_j'` with `0 ≤ u < α`, and the
//!    `u·Q_j'` term vanishes modulo `Q_l` after multiplication by the
//!    gadget, so the approximate conversion is harmless.
//! 2. **Inner product** in NTT form over `Q_l·P`:
//!    `(ks_0, ks_1) = Σ_j d̃_j · key_j` (key limbs `q_0 … q_l` and all of
//!    `P`; the same key serves every level, because modulo `q_i ≤ q_l` the
//!    gadget of a truncated digit is still `P` on its limbs and `0`
//!    elsewhere). This decrypts to `P·c·s' + Σ_j d̃_j e_j`.
//! 3. **ModDown**: `ks_b ← (ks_b − FastBaseConv_F([ks_b]_P))·P^{-1}`
//!    over `Q_l` with the exact centred conversion (000 eq. 5), i.e.
//!    exactly `⌊ks_b / P⌉`; the result decrypts to `c·s' + (Σ_j d̃_j e_j)/P + small`, and the noise
//!    `(Σ_j d̃_j e_j)/P` is about `dnum·α·(Q_j/P)·n·σ` — a few bits when
//!    `P ≥ Q_j`.
//!
//! Transforms per switch at level `l` (`k_l = l + 1` limbs, `d` digits met):
//! `d·(k_l + α) − k_l` forward NTTs for the extended digits (the digit's own
//! limbs are already in NTT form when the input is), `2α` inverse and
//! `2k_l` forward NTTs for ModDown. The RNS decomposition needs `k_l²`.

use rayon::prelude::*;
use rnsfhe_math::ring::{pointwise_mul_add, scalar_mul_add_shoup, sub_scalar_mul_shoup_into};
use rnsfhe_math::{Coeff, Modulus, Ntt, RnsPoly};

use crate::error::{Error, Result};
use crate::rlwe::context::RlweContext;
pub use crate::rlwe::special_primes::{default_special_bits, SpecialPrimes, SPECIAL_MARGIN_BITS};

/// Hybrid key switch of `c` at level `l = c_coeff.limbs() − 1` with the key
/// pairs `keys` (one per digit, NTT form over `Q·P`): returns
/// `(ks_0, ks_1)` in NTT form over `Q_l`, which decrypts to `c·s'` plus the
/// key-switching noise (see the module docs). `c_ntt`, when given, is the
/// NTT form of `c_coeff` (saves the transforms of each digit's own limbs).
pub(crate) fn switch_hybrid(
    ctx: &RlweContext,
    sp: &SpecialPrimes,
    keys: &[(RnsPoly<Ntt>, RnsPoly<Ntt>)],
    c_coeff: &RnsPoly<Coeff>,
    c_ntt: Option<&RnsPoly<Ntt>>,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
    let kl = c_coeff.limbs();
    let (acc0, acc1) = mod_up_inner_product(ctx, sp, keys, c_coeff, c_ntt)?;
    mod_down_pair(ctx, sp, acc0, acc1, kl)
}

/// ModDown of the two accumulators of a key switch, side by side: each
/// division's base conversion runs on one thread, so the two run in
/// parallel when the pool has two.
fn mod_down_pair(
    ctx: &RlweContext,
    sp: &SpecialPrimes,
    mut acc0: crate::rlwe::scratch::Scratch<'_>,
    mut acc1: crate::rlwe::scratch::Scratch<'_>,
    kl: usize,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
    let len = (kl + sp.ring_p.limbs()) * ctx.degree();
    let (out0, out1) = rayon::join(
        || mod_down(ctx, sp, acc0.as_mut_slice(), kl, &mut ctx.scratch.take(len)),
        || mod_down(ctx, sp, acc1.as_mut_slice(), kl, &mut ctx.scratch.take(len)),
    );
    Ok((out0?, out1?))
}

/// Relinearization fused with rescaling (the "ModDown by `P·q_l`" of
/// Lattigo and OpenFHE): for a tensor `(d_0, d_1, d_2)` at level `l ≥ 1`
/// (NTT form), with `(a_0, a_1)` the inner products of the hybrid key
/// switch of `d_2` over `Q_l·P` (before ModDown), returns
/// `⌊(P·d_b + a_b) / (P·q_l)⌉` over `Q_{l−1}` for `b = 0, 1` — exactly, by
/// the centred conversion of the `q_l` and `P` rows — which decrypts to
/// `(d_0 + d_1 s + d_2 s²)/q_l` plus the rounding and key-switching noise,
/// like relinearizing then rescaling, with one division instead of two
/// (`2(α + 1)` inverse and `2l` forward NTTs instead of `2(α + 1)` and
/// `2(2l + 1)`). `d_0`, `d_1` are overwritten and truncated to `l` limbs.
pub(crate) fn relinearize_rescale_hybrid(
    ctx: &RlweContext,
    sp: &SpecialPrimes,
    keys: &[(RnsPoly<Ntt>, RnsPoly<Ntt>)],
    c2_coeff: &RnsPoly<Coeff>,
    c2_ntt: &RnsPoly<Ntt>,
    d0: &mut RnsPoly<Ntt>,
    d1: &mut RnsPoly<Ntt>,
) -> Result<()> {
    let n = ctx.degree();
    let kl = c2_coeff.limbs();
    let l = kl - 1;
    let (conv_last, inv) = sp
        .down_last
        .get(l)
        .and_then(|x| x.as_ref())
        .ok_or_else(|| Error::LevelExhausted("cannot rescale at level 0".into()))?;
    d0.check_same_shape(c2_ntt)?;
    d1.check_same_shape(c2_ntt)?;
    let (mut acc0, mut acc1) = mod_up_inner_product(ctx, sp, keys, c2_coeff, Some(c2_ntt))?;
    let q_tables = ctx.ring().tables();
    let p_tables = sp.ring_p.tables();
    // The two divisions side by side (each base conversion runs on one
    // thread).
    let divide =
        |acc: &mut crate::rlwe::scratch::Scratch<'_>, d: &mut RnsPoly<Ntt>| -> Result<()> {
            let x = acc.as_mut_slice();
            // x ← a + P·d on the Q rows (P·d vanishes modulo P).
            x[..kl * n]
                .par_chunks_exact_mut(n)
                .zip(d.data().par_chunks_exact(n))
                .enumerate()
                .for_each(|(i, (xr, dr))| {
                    if let Some(m) = q_tables.get(i).map(|t| *t.modulus()) {
                        let w = sp.p_mod_q[i];
                        scalar_mul_add_shoup(&m, xr, dr, w, m.shoup(w));
                    }
                });
            // Rows q_l, p_1 … p_α (contiguous) back to coefficient form.
            let (xq, xlast) = x.split_at_mut(l * n);
            xlast
                .par_chunks_exact_mut(n)
                .enumerate()
                .try_for_each(|(r, row)| -> Result<()> {
                    let t = if r == 0 {
                        q_tables.get(l)
                    } else {
                        p_tables.get(r - 1)
                    };
                    t.ok_or_else(|| Error::InvalidArgument("table".into()))?
                        .backward(row)?;
                    Ok(())
                })?;
            let mut conv = ctx.scratch.take(l * n);
            let conv = conv.as_mut_slice();
            conv_last.fast_base_conv_exact_rows(n, xlast, conv)?;
            divide_rows(q_tables, &mut d.data_mut()[..l * n], conv, xq, inv, n)?;
            d.truncate_limbs(l);
            Ok(())
        };
    let (r0, r1) = rayon::join(|| divide(&mut acc0, d0), || divide(&mut acc1, d1));
    r0?;
    r1?;
    Ok(())
}

/// ModUp of every digit of `c` and the inner products with the key pairs:
/// the two accumulators over `Q_l·P` (rows `q_0 … q_l, p_1 … p_α`), NTT
/// form, before the division by `P`.
fn mod_up_inner_product<'a>(
    ctx: &'a RlweContext,
    sp: &SpecialPrimes,
    keys: &[(RnsPoly<Ntt>, RnsPoly<Ntt>)],
    c_coeff: &RnsPoly<Coeff>,
    c_ntt: Option<&RnsPoly<Ntt>>,
) -> Result<(
    crate::rlwe::scratch::Scratch<'a>,
    crate::rlwe::scratch::Scratch<'a>,
)> {
    let n = ctx.degree();
    let kl = c_coeff.limbs();
    let k = ctx.ring().limbs();
    let kp = sp.ring_p.limbs();
    let digits = check_input(ctx, sp, c_coeff, c_ntt)?;
    check_keys(sp, keys)?;
    let qp_tables = sp.ring_qp.tables();
    // Row r of the extended polynomial over Q_l·P: r < kl is q_r, else
    // p_{r−kl}; `key_row` maps it to the key's limb.
    let rows = kl + kp;
    let key_row = |r: usize| if r < kl { r } else { k + (r - kl) };
    let mut acc0 = ctx.scratch.take(rows * n);
    let mut acc1 = ctx.scratch.take(rows * n);
    let mut ext = ctx.scratch.take(rows * n);
    for (d, ((range, up), (k0, k1))) in digits.iter().zip(keys).enumerate() {
        let ext = ext.as_mut_slice();
        mod_up_digit(n, kp, (range, up), c_coeff, c_ntt, ext)?;
        let first = d == 0;
        ext.par_chunks_exact_mut(n)
            .zip(acc0.as_mut_slice().par_chunks_exact_mut(n))
            .zip(acc1.as_mut_slice().par_chunks_exact_mut(n))
            .enumerate()
            .try_for_each(|(r, ((row, a0), a1))| -> Result<()> {
                let kr = key_row(r);
                let table = qp_tables
                    .get(kr)
                    .ok_or_else(|| Error::InvalidArgument("key row".into()))?;
                if !(c_ntt.is_some() && range.contains(&r)) {
                    table.forward(row)?;
                }
                let m = table.modulus();
                if first {
                    a0.fill(0);
                    a1.fill(0);
                }
                pointwise_mul_add(m, a0, row, k0.limb(kr));
                pointwise_mul_add(m, a1, row, k1.limb(kr));
                Ok(())
            })?;
    }
    drop(ext);
    Ok((acc0, acc1))
}

/// The digits of `c` (coefficient form, `c_ntt` its NTT form if known)
/// met at its level, after checking its shape against the chain.
fn check_input<'s>(
    ctx: &RlweContext,
    sp: &'s SpecialPrimes,
    c_coeff: &RnsPoly<Coeff>,
    c_ntt: Option<&RnsPoly<Ntt>>,
) -> Result<&'s [(std::ops::Range<usize>, rnsfhe_math::BaseConverter)]> {
    let n = ctx.degree();
    let kl = c_coeff.limbs();
    let k = ctx.ring().limbs();
    if kl == 0 || kl > k || c_coeff.n() != n {
        return Err(Error::InvalidArgument(format!(
            "key switching needs a polynomial of 1 to {k} limbs of degree {n}"
        )));
    }
    if let Some(cn) = c_ntt {
        c_coeff.check_same_shape(cn)?;
    }
    sp.up
        .get(kl - 1)
        .map(Vec::as_slice)
        .ok_or_else(|| Error::InvalidArgument("level outside the chain".into()))
}

/// Errors unless `keys` holds one pair over `Q·P` per digit.
fn check_keys(sp: &SpecialPrimes, keys: &[(RnsPoly<Ntt>, RnsPoly<Ntt>)]) -> Result<()> {
    if keys.len() != sp.dnum {
        return Err(Error::InvalidArgument(format!(
            "a hybrid key-switching key has {} key pairs, got {}",
            sp.dnum,
            keys.len()
        )));
    }
    for (k0, k1) in keys {
        sp.ring_qp.check(k0)?;
        sp.ring_qp.check(k1)?;
    }
    Ok(())
}

/// ModUp of one digit (step 1 of the module docs) into `ext`, rows
/// `q_0 … q_l, p_1 … p_α`: the digit's own rows (from `c_ntt` when given,
/// so already in NTT form), and the converted rows (`P` first, then the
/// other limbs of `Q_l` in increasing order) written by the conversion
/// straight into their places, in coefficient form.
fn mod_up_digit(
    n: usize,
    kp: usize,
    (range, up): (&std::ops::Range<usize>, &rnsfhe_math::BaseConverter),
    c_coeff: &RnsPoly<Coeff>,
    c_ntt: Option<&RnsPoly<Ntt>>,
    ext: &mut [u64],
) -> Result<()> {
    let kl = c_coeff.limbs();
    let own = c_coeff
        .data()
        .get(range.start * n..range.end * n)
        .ok_or_else(|| Error::InvalidArgument("digit outside the input".into()))?;
    let (ext_q, ext_p) = ext.split_at_mut(kl * n);
    let mut targets: Vec<(usize, &mut [u64])> = Vec::with_capacity(kp + kl);
    targets.extend(ext_p.chunks_exact_mut(n).enumerate());
    for (i, row) in ext_q.chunks_exact_mut(n).enumerate() {
        if range.contains(&i) {
            match c_ntt {
                Some(cn) => row.copy_from_slice(cn.limb(i)),
                None => row.copy_from_slice(c_coeff.limb(i)),
            }
        } else {
            let j = targets.len();
            targets.push((j, row));
        }
    }
    // Column chunks on every thread: a digit converted on one thread
    // left the others idle in every key switch's ModUp.
    up.fast_base_conv_select_par(n, own, &mut targets)?;
    Ok(())
}

/// The ModUp of one polynomial `c` hoisted out of several key switches
/// (Halevi-Shoup hoisting, as Lattigo's and OpenFHE's fast rotations):
/// every digit met at its level, extended to `Q_l·P` and in NTT form.
/// Automorphisms commute with the extension up to the `u·Q_j'` term that
/// the gadget removes, so [`switch_hoisted`] can apply `σ_g` to these
/// digits instead of decomposing `σ_g(c)` again.
pub(crate) struct HoistedDigits<'a> {
    kl: usize,
    digits: Vec<crate::rlwe::scratch::Scratch<'a>>,
}

/// [`HoistedDigits`] of `c` (coefficient form, `c_ntt` its NTT form if
/// known): `d·(k_l + α)` forward NTTs once, for any number of switches.
pub(crate) fn mod_up_hoisted<'a>(
    ctx: &'a RlweContext,
    sp: &SpecialPrimes,
    c_coeff: &RnsPoly<Coeff>,
    c_ntt: Option<&RnsPoly<Ntt>>,
) -> Result<HoistedDigits<'a>> {
    let n = ctx.degree();
    let kl = c_coeff.limbs();
    let k = ctx.ring().limbs();
    let kp = sp.ring_p.limbs();
    let met = check_input(ctx, sp, c_coeff, c_ntt)?;
    let qp_tables = sp.ring_qp.tables();
    let key_row = |r: usize| if r < kl { r } else { k + (r - kl) };
    let mut digits: Vec<_> = met
        .iter()
        .map(|_| ctx.scratch.take((kl + kp) * n))
        .collect();
    // The base conversions side by side (one thread each), then the
    // transforms (parallel over rows).
    digits
        .par_iter_mut()
        .zip(met.par_iter())
        .try_for_each(|(ext, (range, up))| {
            mod_up_digit(n, kp, (range, up), c_coeff, c_ntt, ext.as_mut_slice())
        })?;
    for (ext, (range, _)) in digits.iter_mut().zip(met) {
        let rows = ext.as_mut_slice();
        rows.par_chunks_exact_mut(n)
            .enumerate()
            .try_for_each(|(r, row)| -> Result<()> {
                if c_ntt.is_some() && range.contains(&r) {
                    return Ok(());
                }
                qp_tables
                    .get(key_row(r))
                    .ok_or_else(|| Error::InvalidArgument("key row".into()))?
                    .forward(row)?;
                Ok(())
            })?;
    }
    Ok(HoistedDigits { kl, digits })
}

/// The hybrid key switch of `σ_g(c)` from the hoisted digits of `c`:
/// `σ_g` applied to every extended digit (in NTT form a permutation of
/// each row, the same for every prime), the inner products with the key
/// pairs of `g`, and ModDown. Decrypts to `σ_g(c)·s'` plus key-switching
/// noise of the size of [`switch_hybrid`]'s.
pub(crate) fn switch_hoisted(
    ctx: &RlweContext,
    sp: &SpecialPrimes,
    keys: &[(RnsPoly<Ntt>, RnsPoly<Ntt>)],
    hoisted: &HoistedDigits<'_>,
    table: &rnsfhe_math::galois::GaloisTable,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
    let kl = hoisted.kl;
    let (acc0, acc1) = switch_hoisted_extended(ctx, sp, keys, hoisted, table)?;
    mod_down_pair(ctx, sp, acc0, acc1, kl)
}

/// [`switch_hoisted`] before ModDown: the inner products over `Q_l·P`
/// (rows `q_0 … q_l, p_1 … p_α`, NTT form), which decrypt to
/// `P·σ_g(c)·s'` plus `Σ_j d̃_j e_j`. Double hoisting (Bossuat et al.
/// 2021, §3.3) sums such products, weighted by plaintexts over `Q_l·P`,
/// and divides by `P` once per sum.
pub(crate) fn switch_hoisted_extended<'a>(
    ctx: &'a RlweContext,
    sp: &SpecialPrimes,
    keys: &[(RnsPoly<Ntt>, RnsPoly<Ntt>)],
    hoisted: &HoistedDigits<'_>,
    table: &rnsfhe_math::galois::GaloisTable,
) -> Result<(
    crate::rlwe::scratch::Scratch<'a>,
    crate::rlwe::scratch::Scratch<'a>,
)> {
    check_keys(sp, keys)?;
    let n = ctx.degree();
    let (kl, k, kp) = (hoisted.kl, ctx.ring().limbs(), sp.ring_p.limbs());
    let rows = kl + kp;
    let key_row = |r: usize| if r < kl { r } else { k + (r - kl) };
    let qp_tables = sp.ring_qp.tables();
    let mut acc0 = ctx.scratch.take(rows * n);
    let mut acc1 = ctx.scratch.take(rows * n);
    let mut rot = ctx.scratch.take(rows * n);
    for (d, (digit, (k0, k1))) in hoisted.digits.iter().zip(keys).enumerate() {
        let first = d == 0;
        digit
            .as_slice()
            .par_chunks_exact(n)
            .zip(rot.as_mut_slice().par_chunks_exact_mut(n))
            .zip(acc0.as_mut_slice().par_chunks_exact_mut(n))
            .zip(acc1.as_mut_slice().par_chunks_exact_mut(n))
            .enumerate()
            .try_for_each(|(r, (((row, tmp), a0), a1))| -> Result<()> {
                let kr = key_row(r);
                let m = qp_tables
                    .get(kr)
                    .ok_or_else(|| Error::InvalidArgument("key row".into()))?
                    .modulus();
                table.apply_ntt_row(row, tmp)?;
                if first {
                    a0.fill(0);
                    a1.fill(0);
                }
                pointwise_mul_add(m, a0, tmp, k0.limb(kr));
                pointwise_mul_add(m, a1, tmp, k1.limb(kr));
                Ok(())
            })?;
    }
    drop(rot);
    Ok((acc0, acc1))
}

/// `⌊x / P⌉` (exactly) over `Q_l` for `x` in NTT form over `Q_l·P`
/// (rows `q_0 … q_l, p_1 … p_α`); the P rows are consumed.
pub(crate) fn mod_down(
    ctx: &RlweContext,
    sp: &SpecialPrimes,
    x: &mut [u64],
    kl: usize,
    conv: &mut crate::rlwe::scratch::Scratch<'_>,
) -> Result<RnsPoly<Ntt>> {
    let n = ctx.degree();
    let k = ctx.ring().limbs();
    let (xq, xp) = x.split_at_mut(kl * n);
    let p_tables = sp.ring_p.tables();
    xp.par_chunks_exact_mut(n)
        .zip(p_tables.par_iter())
        .try_for_each(|(row, t)| t.backward(row))?;
    let conv = conv
        .as_mut_slice()
        .get_mut(..kl * n)
        .ok_or_else(|| Error::InvalidArgument("scratch too small".into()))?;
    // The exact centred conversion (FastBaseConv_F, 000 eq. 5) makes the
    // result round(x/P) exactly: a rounding error of at most 1/2 in each of
    // ks_0 and ks_1, where FastBaseConv_I would add up to α (and its
    // product with s would cost about two bits of CKKS precision).
    sp.down.fast_base_conv_exact_rows(n, xp, conv)?;
    let mut out = RnsPoly::<Ntt>::from_data(n, kl, ctx.scratch.take_owned(kl * n))?;
    let q_tables = ctx.ring().tables();
    if kl > k {
        return Err(Error::InvalidArgument("level outside the chain".into()));
    }
    divide_rows(q_tables, out.data_mut(), conv, xq, &sp.p_inv_mod_q, n)?;
    Ok(out)
}

/// The last step of every division by `D` (`P`, or `P·q_l`):
/// `out_i = (x_i − NTT(conv_i))·[D^{-1}]_{q_i}` for each limb `i` of
/// `out`, where `conv` holds the exact centred conversion of `[x]_D`
/// (coefficient form, consumed) and `x` the NTT-form rows over `q_i`.
fn divide_rows(
    q_tables: &[rnsfhe_math::NttTable],
    out: &mut [u64],
    conv: &mut [u64],
    xq: &[u64],
    inv: &[(u64, u64)],
    n: usize,
) -> Result<()> {
    out.par_chunks_exact_mut(n)
        .zip(conv.par_chunks_exact_mut(n))
        .zip(xq.par_chunks_exact(n))
        .enumerate()
        .try_for_each(|(i, ((o, cv), xr))| -> Result<()> {
            let t = q_tables
                .get(i)
                .ok_or_else(|| Error::InvalidArgument("limb".into()))?;
            let m: &Modulus = t.modulus();
            t.forward(cv)?;
            let (w, ws) = inv
                .get(i)
                .copied()
                .ok_or_else(|| Error::InvalidArgument("limb".into()))?;
            sub_scalar_mul_shoup_into(m, o, xr, cv, w, ws);
            Ok(())
        })
}
