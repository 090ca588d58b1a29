//! The evaluator operations every leveled scheme shares, written once over
//! the ciphertext skeleton ([`Ciphertext<M>`]) and a context with a
//! modulus chain ([`ChainContext`]): operand checks, level alignment,
//! additions and negation of the polynomials, the tensor product, drop to a
//! level, and key switching for relinearization and Galois automorphisms
//! with their rotations.
//!
//! A scheme plugs in its key switch ([`KeySwitch`]: CKKS switches `x`
//! directly; BGV switches `t^{-1}·x` and multiplies the result by `t`, so
//! that the key-switching noise is a multiple of `t`) and keeps its own
//! rules for metadata (CKKS scales, BGV correction factors), as OpenFHE's
//! per-scheme `AdjustForAddOrSub`/`AdjustForMult` hooks do.

use std::borrow::Cow;

use rayon::prelude::*;
use rnsfhe_math::galois::GaloisTable;
use rnsfhe_math::ring::{karatsuba_rows_into, square_rows_into};
use rnsfhe_math::{Coeff, Modulus, Ntt, RnsPoly, RnsRing};

use crate::error::{Error, Result};
use crate::leveled::ciphertext::Ciphertext;
use crate::rlwe::context::SchemeContext;
use crate::rlwe::galois_keys::{element_for_step, GaloisKeys};
use crate::rlwe::hybrid::HoistedDigits;
use crate::rlwe::key_switching::KeySwitchingKey;
use crate::rlwe::keys::{check_key_id, RelinKey};

/// A context over a modulus chain (implemented by `chain_context!`).
pub(crate) trait ChainContext: SchemeContext {
    /// The ring of `level` (limbs `q_0 … q_l`).
    fn chain_ring(&self, level: usize) -> Result<&RnsRing>;
}

/// A scheme's hybrid key switch of one NTT-form polynomial `x` at its
/// level: the scheme says what is switched (`prepare`: CKKS `x`, BGV
/// `t^{-1}·x`) and how the result `(k_0, k_1)`, with
/// `k_0 + k_1·s ≈ prepare(x)·s'`, comes back scaled by its factor `f`
/// (CKKS `1`, BGV `t`): `fold` adds `f·k` to an accumulator and `scale`
/// multiplies `k` by `f`.
pub(crate) trait KeySwitch {
    /// What is switched for `x`, in pooled buffers (the caller gives them
    /// back): its NTT form when it differs from `x`, and its coefficient
    /// form.
    fn prepare(&self, x: &RnsPoly<Ntt>) -> Result<(Option<RnsPoly<Ntt>>, RnsPoly<Coeff>)>;

    /// `acc ← acc + f·k`.
    fn fold(&self, ring: &RnsRing, acc: &mut RnsPoly<Ntt>, k: &RnsPoly<Ntt>) -> Result<()>;

    /// `k ← f·k`.
    fn scale(&self, ring: &RnsRing, k: &mut RnsPoly<Ntt>) -> Result<()>;
}

/// `(k_0, k_1)` of the hybrid key switch of `prepare(x)` with `ksk`, in
/// pooled buffers (the caller gives them back).
fn switch<C: ChainContext>(
    ctx: &C,
    ks: &impl KeySwitch,
    x: &RnsPoly<Ntt>,
    ksk: &KeySwitchingKey,
) -> Result<(RnsPoly<Ntt>, RnsPoly<Ntt>)> {
    let (y, yc) = ks.prepare(x)?;
    let r = ksk.switch_hybrid(ctx.rlwe(), &yc, Some(y.as_ref().unwrap_or(x)));
    give_back(ctx, y, yc);
    r
}

/// The ModUp of `prepare(x)`, hoisted out of several switches of its
/// automorphisms.
fn hoist<'a, C: ChainContext>(
    ctx: &'a C,
    ks: &impl KeySwitch,
    x: &RnsPoly<Ntt>,
) -> Result<HoistedDigits<'a>> {
    let (y, yc) = ks.prepare(x)?;
    let r = crate::rlwe::key_switching::hoist(ctx.rlwe(), &yc, Some(y.as_ref().unwrap_or(x)));
    give_back(ctx, y, yc);
    r
}

/// Returns `prepare`'s buffers to the pool.
fn give_back<C: ChainContext>(ctx: &C, y: Option<RnsPoly<Ntt>>, yc: RnsPoly<Coeff>) {
    let scratch = &ctx.rlwe().scratch;
    scratch.give(yc.into_data());
    if let Some(y) = y {
        scratch.give(y.into_data());
    }
}

/// Errors unless `ct` belongs to `ctx` and has 2 or 3 polynomials of the
/// ring of its level.
pub(crate) fn check_ciphertext<C: ChainContext, M>(ctx: &C, ct: &Ciphertext<M>) -> Result<()> {
    ctx.rlwe().check_id(ct.params_id)?;
    if !(2..=3).contains(&ct.polys.len()) {
        return Err(Error::WrongCiphertextSize {
            operation: "evaluate",
            expected: "2 or 3",
            got: ct.polys.len(),
        });
    }
    let ring = ctx.chain_ring(ct.level())?;
    for p in &ct.polys {
        ring.check(p)?;
    }
    Ok(())
}

/// [`check_ciphertext`] of both operands, and one secret key.
pub(crate) fn check_operands<C: ChainContext, M>(
    ctx: &C,
    a: &Ciphertext<M>,
    b: &Ciphertext<M>,
) -> Result<()> {
    check_ciphertext(ctx, a)?;
    check_ciphertext(ctx, b)?;
    check_key_id(a.key_id, b.key_id)
}

/// [`check_operands`] and equal levels, or [`Error::LevelMismatch`].
pub(crate) fn check_same_level<C: ChainContext, M>(
    ctx: &C,
    a: &Ciphertext<M>,
    b: &Ciphertext<M>,
    op: &'static str,
) -> Result<()> {
    check_operands(ctx, a, b)?;
    check_levels(op, a.level(), b.level())
}

/// [`Error::LevelMismatch`] for the operation `op` unless `left == right`.
pub(crate) fn check_levels(op: &'static str, left: usize, right: usize) -> Result<()> {
    if left != right {
        return Err(Error::LevelMismatch {
            operation: op,
            left,
            right,
        });
    }
    Ok(())
}

/// Two operands brought to one level (borrowed where unchanged).
pub(crate) type Aligned<'a, M> = (Cow<'a, Ciphertext<M>>, Cow<'a, Ciphertext<M>>);

/// Both operands at one level: equal levels, or with `auto_align` the
/// higher one brought down by `lower(ct, level)` (clones only the operand
/// that changes); otherwise [`Error::LevelMismatch`].
pub(crate) fn align_levels<'a, C: ChainContext, M: Clone>(
    ctx: &C,
    a: &'a Ciphertext<M>,
    b: &'a Ciphertext<M>,
    op: &'static str,
    auto_align: bool,
    lower: impl FnOnce(&Ciphertext<M>, usize) -> Result<Ciphertext<M>>,
) -> Result<Aligned<'a, M>> {
    check_operands(ctx, a, b)?;
    let (la, lb) = (a.level(), b.level());
    if la == lb {
        return Ok((Cow::Borrowed(a), Cow::Borrowed(b)));
    }
    if !auto_align {
        return Err(Error::LevelMismatch {
            operation: op,
            left: la,
            right: lb,
        });
    }
    if la > lb {
        Ok((Cow::Owned(lower(a, lb)?), Cow::Borrowed(b)))
    } else {
        Ok((Cow::Borrowed(a), Cow::Owned(lower(b, la)?)))
    }
}

/// `a ← a ± b` polynomial by polynomial at `a`'s level (a 2-polynomial
/// `a` grows to `b`'s size); the metadata is the caller's.
pub(crate) fn add_polys<C: ChainContext, M>(
    ctx: &C,
    a: &mut Ciphertext<M>,
    b: &Ciphertext<M>,
    negate: bool,
) -> Result<()> {
    let ring = ctx.chain_ring(a.level())?;
    while a.polys.len() < b.polys.len() {
        a.polys.push(ring.zero());
    }
    for (x, y) in a.polys.iter_mut().zip(&b.polys) {
        if negate {
            ring.sub_assign(x, y)?;
        } else {
            ring.add_assign(x, y)?;
        }
    }
    a.seed = None;
    Ok(())
}

/// `ct ← −ct`.
pub(crate) fn negate_assign<C: ChainContext, M>(ctx: &C, ct: &mut Ciphertext<M>) -> Result<()> {
    check_ciphertext(ctx, ct)?;
    let ring = ctx.chain_ring(ct.level())?;
    for p in &mut ct.polys {
        ring.neg_assign(p)?;
    }
    ct.seed = None;
    Ok(())
}

/// Three fresh NTT-form polynomials of `ring` for a tensor. Fresh rather
/// than pooled: the product usually outlives the operation (measured: a
/// BGV `multiply` at `(2^14, 370 bits)` takes 0.66 ms with fresh buffers
/// against 1.9 ms with buffers from the scratch pool, whose smallest fit
/// may be a much larger key-switching buffer; CKKS's products are the
/// same either way).
fn tensor_buffers(ring: &RnsRing) -> [RnsPoly<Ntt>; 3] {
    [ring.zero(), ring.zero(), ring.zero()]
}

/// The two polynomials of a size-2 operand of `op`.
fn pair<'a, M>(ct: &'a Ciphertext<M>, op: &'static str) -> Result<&'a [RnsPoly<Ntt>; 2]> {
    <&[RnsPoly<Ntt>; 2]>::try_from(ct.polys.as_slice()).map_err(|_| Error::WrongCiphertextSize {
        operation: op,
        expected: "2",
        got: ct.polys.len(),
    })
}

/// The tensor `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` of two checked
/// size-2 operands at one level (Karatsuba, one pass per limb; no base
/// extension in BGV and CKKS).
pub(crate) fn tensor<C: ChainContext, M>(
    ctx: &C,
    a: &Ciphertext<M>,
    b: &Ciphertext<M>,
) -> Result<Vec<RnsPoly<Ntt>>> {
    let (Ok([a0, a1]), Ok([b0, b1])) = (pair(a, "multiply"), pair(b, "multiply")) else {
        return Err(Error::WrongCiphertextSize {
            operation: "multiply",
            expected: "2",
            got: a.polys.len().max(b.polys.len()),
        });
    };
    let ring = ctx.chain_ring(a.level())?;
    Ok(per_limb_triple(ring, |i, m, out| {
        karatsuba_rows_into(m, [a0.limb(i), a1.limb(i), b0.limb(i), b1.limb(i)], out);
    }))
}

/// Three NTT-form polynomials over `ring` whose rows `i` are written by
/// `row(i, q_i, [d_0, d_1, d_2])`, limbs in parallel.
fn per_limb_triple(
    ring: &RnsRing,
    row: impl Fn(usize, &Modulus, [&mut [u64]; 3]) + Sync,
) -> Vec<RnsPoly<Ntt>> {
    let n = ring.n();
    let mut d = tensor_buffers(ring);
    let [d0, d1, d2] = &mut d;
    d0.data_mut()
        .par_chunks_exact_mut(n)
        .zip(d1.data_mut().par_chunks_exact_mut(n))
        .zip(d2.data_mut().par_chunks_exact_mut(n))
        .enumerate()
        .for_each(|(i, ((o0, o1), o2))| {
            if let Some(m) = ring.moduli().get(i) {
                row(i, m, [o0, o1, o2]);
            }
        });
    d.into()
}

/// `(c_0², 2 c_0 c_1, c_1²)` of a checked size-2 operand.
pub(crate) fn square<C: ChainContext, M>(ctx: &C, ct: &Ciphertext<M>) -> Result<Vec<RnsPoly<Ntt>>> {
    let [a0, a1] = pair(ct, "square")?;
    let ring = ctx.chain_ring(ct.level())?;
    Ok(per_limb_triple(ring, |i, m, out| {
        square_rows_into(m, [a0.limb(i), a1.limb(i)], out);
    }))
}

/// `ct` at a lower `level` without rescaling (the limbs above are dropped;
/// the metadata is unchanged). Errors for a level above the ciphertext's.
pub(crate) fn drop_to_level<C: ChainContext, M: Clone>(
    ctx: &C,
    ct: &Ciphertext<M>,
    level: usize,
) -> Result<Ciphertext<M>> {
    check_ciphertext(ctx, ct)?;
    check_lower(ct.level(), level)?;
    if level == ct.level() {
        return Ok(ct.clone());
    }
    // Only the kept limbs are copied: bootstrapping's polynomial
    // evaluation drops wide ciphertexts by many levels at a time.
    let polys = ct
        .polys
        .iter()
        .map(|p| {
            let n = p.n();
            RnsPoly::from_data(n, level + 1, p.data()[..(level + 1) * n].to_vec())
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(ct.with_polys(polys))
}

/// `ct` at level `l − 1` by `divide` applied to each polynomial (BGV's
/// `t`-corrected modulus switch, CKKS's rescaling: both divide by `q_l`);
/// the caller updates the metadata. Errors with [`Error::LevelExhausted`]
/// at level 0, naming `what` the operation is.
pub(crate) fn divide_by_last_prime<C: ChainContext, M>(
    ctx: &C,
    ct: &mut Ciphertext<M>,
    what: &str,
    mut divide: impl FnMut(&mut RnsPoly<Ntt>) -> Result<()>,
) -> Result<()> {
    check_ciphertext(ctx, ct)?;
    if ct.level() == 0 {
        return Err(Error::LevelExhausted(format!(
            "cannot {what} a ciphertext at level 0"
        )));
    }
    for p in &mut ct.polys {
        divide(p)?;
    }
    ct.seed = None;
    Ok(())
}

/// Errors with [`Error::InvalidArgument`] when `to` is above `from`.
pub(crate) fn check_lower(from: usize, to: usize) -> Result<()> {
    if to > from {
        return Err(Error::InvalidArgument(format!(
            "cannot raise a ciphertext from level {from} to {to}"
        )));
    }
    Ok(())
}

/// Checks that a key of `(params_id, key_id)` may switch `ct` in `op`,
/// which needs `size` polynomials.
fn check_key_use<C: ChainContext, M>(
    ctx: &C,
    ct: &Ciphertext<M>,
    (params_id, key_id): (u64, u64),
    op: &'static str,
    size: (usize, &'static str),
) -> Result<()> {
    check_ciphertext(ctx, ct)?;
    ctx.rlwe().check_id(params_id)?;
    check_key_id(key_id, ct.key_id)?;
    if ct.polys.len() != size.0 {
        return Err(Error::WrongCiphertextSize {
            operation: op,
            expected: size.1,
            got: ct.polys.len(),
        });
    }
    Ok(())
}

/// Relinearizes a 3-polynomial ciphertext in place: `c_2` switched from
/// `s²` to `s` and folded into `(c_0, c_1)`.
pub(crate) fn relinearize_assign<C: ChainContext, M>(
    ctx: &C,
    ks: &impl KeySwitch,
    ct: &mut Ciphertext<M>,
    rk: &RelinKey,
) -> Result<()> {
    check_key_use(
        ctx,
        ct,
        (rk.params_id(), rk.key_id()),
        "relinearize",
        (3, "3"),
    )?;
    let ring = ctx.chain_ring(ct.level())?;
    let (k0, k1) = switch(ctx, ks, &ct.polys[2], rk.key_switching_key())?;
    let scratch = &ctx.rlwe().scratch;
    if let Some(c2) = ct.polys.pop() {
        scratch.give(c2.into_data());
    }
    ks.fold(ring, &mut ct.polys[0], &k0)?;
    ks.fold(ring, &mut ct.polys[1], &k1)?;
    scratch.give(k0.into_data());
    scratch.give(k1.into_data());
    ct.seed = None;
    Ok(())
}

/// `σ_g(ct)` switched back to `s` with the Galois key of `element`
/// (hybrid key switching of `σ_g(c_1)`). Errors with
/// [`Error::MissingGaloisKey`].
pub(crate) fn apply_galois<C: ChainContext, M: Clone>(
    ctx: &C,
    ks: &impl KeySwitch,
    ct: &Ciphertext<M>,
    element: u64,
    gk: &GaloisKeys,
) -> Result<Ciphertext<M>> {
    check_key_use(
        ctx,
        ct,
        (gk.params_id(), gk.key_id()),
        "apply_galois",
        (2, "2"),
    )?;
    let (table, ksk) = gk.get(element)?;
    apply_galois_key(ctx, ks, ct, table, ksk)
}

fn apply_galois_key<C: ChainContext, M: Clone>(
    ctx: &C,
    ks: &impl KeySwitch,
    ct: &Ciphertext<M>,
    table: &GaloisTable,
    ksk: &KeySwitchingKey,
) -> Result<Ciphertext<M>> {
    let c0 = ctx.rlwe().scratch.automorphism(table, &ct.polys[0])?;
    let c1 = ctx.rlwe().scratch.automorphism(table, &ct.polys[1])?;
    let k = switch(ctx, ks, &c1, ksk);
    ctx.rlwe().scratch.give(c1.into_data());
    switched(ctx, ks, (ct, ct.key_id), c0, k?)
}

/// `(c_0 + f·k_0, f·k_1)` with the metadata of `ct` and key id `key_id`:
/// the end of a key switch of `c_1` (`k` in pooled buffers).
fn switched<C: ChainContext, M: Clone>(
    ctx: &C,
    ks: &impl KeySwitch,
    (ct, key_id): (&Ciphertext<M>, u64),
    mut c0: RnsPoly<Ntt>,
    (k0, mut k1): (RnsPoly<Ntt>, RnsPoly<Ntt>),
) -> Result<Ciphertext<M>> {
    let ring = ctx.chain_ring(ct.level())?;
    ks.fold(ring, &mut c0, &k0)?;
    ks.scale(ring, &mut k1)?;
    ctx.rlwe().scratch.give(k0.into_data());
    Ok(Ciphertext {
        params_id: ct.params_id,
        key_id,
        polys: vec![c0, k1],
        seed: None,
        meta: ct.meta.clone(),
    })
}

/// `ct` (under some secret `s'`) switched with `ksk`, a key from `s'` to
/// `s` ([`KeySwitchingKey::generate`] with target `s'`): `(c_0 + k_0, k_1)`
/// with `(k_0, k_1)` the hybrid key switch of `c_1`, decrypting under `s`
/// to what `ct` decrypts to under `s'` plus key-switching noise (the
/// generic `KeySwitch` of OpenFHE and Lattigo). The result carries `ksk`'s
/// key id; the key does not record `s'`, so the caller vouches that `ct`
/// is under it.
pub(crate) fn switch_key<C: ChainContext, M: Clone>(
    ctx: &C,
    ks: &impl KeySwitch,
    ct: &Ciphertext<M>,
    ksk: &KeySwitchingKey,
) -> Result<Ciphertext<M>> {
    check_key_use(
        ctx,
        ct,
        (ksk.params_id(), ct.key_id),
        "switch_key",
        (2, "2"),
    )?;
    let k = switch(ctx, ks, &ct.polys[1], ksk)?;
    switched(ctx, ks, (ct, ksk.key_id()), ct.polys[0].clone(), k)
}

/// Rotates the slots by `steps` with the context's rotation generator
/// `g`: the key of `g^steps` when present, otherwise a composition of held
/// keys ([`GaloisKeys::rotation_elements`]); errors with
/// [`Error::MissingGaloisKey`] naming the element when neither works.
pub(crate) fn rotate<C: ChainContext, M: Clone>(
    ctx: &C,
    ks: &impl KeySwitch,
    ct: &Ciphertext<M>,
    steps: i64,
    gk: &GaloisKeys,
) -> Result<Ciphertext<M>> {
    check_ciphertext(ctx, ct)?;
    let rlwe = ctx.rlwe();
    // The first automorphism reads `ct` itself (no copy); a composition's
    // intermediate results go back to the pool.
    let mut acc: Option<Ciphertext<M>> = None;
    for e in gk.rotation_elements(rlwe.ring().n(), rlwe.rotation_generator(), steps)? {
        let next = apply_galois(ctx, ks, acc.as_ref().unwrap_or(ct), e, gk)?;
        if let Some(prev) = acc.replace(next) {
            for p in prev.polys {
                rlwe.scratch.give(p.into_data());
            }
        }
    }
    Ok(acc.unwrap_or_else(|| ct.clone()))
}

/// The rotate-and-add sum of slot rotations: `ct` plus its rotations by
/// `1, 2, 4, … < half`, in `log2(half)` steps, so that every slot of a
/// row of `half` slots holds the row's sum (CKKS's slot sum; BFV's and
/// BGV's row sums before the row swap).
pub(crate) fn rotate_and_add<T: Clone>(
    ct: &T,
    half: usize,
    mut rotate: impl FnMut(&T, i64) -> Result<T>,
    mut add: impl FnMut(&mut T, &T) -> Result<()>,
) -> Result<T> {
    let mut acc = ct.clone();
    let mut step = 1usize;
    while step < half {
        let r = rotate(&acc, step as i64)?;
        add(&mut acc, &r)?;
        step <<= 1;
    }
    Ok(acc)
}

/// Hoisted rotations (Halevi-Shoup): `ct` rotated by each of `steps`
/// with the context's rotation generator, all sharing one ModUp of `c_1`
/// ([`hoist`]); each rotation then costs one automorphism of
/// the extended digits, the inner products and ModDown, instead of a
/// whole key switch. Every non-zero step needs the Galois key of its own
/// element (no composition); all keys are looked up before any work, and
/// a missing one is [`Error::MissingGaloisKey`] naming the element. A step
/// that is a multiple of the row length gives `ct` itself. The results
/// decrypt to the same values as [`rotate`]'s, with key-switching noise of
/// the same size (not bit-identical: the digits are extended before the
/// automorphism).
pub(crate) fn rotate_hoisted<C: ChainContext, M: Clone>(
    ctx: &C,
    ks: &impl KeySwitch,
    ct: &Ciphertext<M>,
    steps: &[i64],
    gk: &GaloisKeys,
) -> Result<Vec<Ciphertext<M>>> {
    check_key_use(
        ctx,
        ct,
        (gk.params_id(), gk.key_id()),
        "rotate_hoisted",
        (2, "2"),
    )?;
    let rlwe = ctx.rlwe();
    let keys = keys_for_steps(rlwe, steps, gk)?;
    let ring = ctx.chain_ring(ct.level())?;
    let hoisted = hoist(ctx, ks, &ct.polys[1])?;
    keys.into_iter()
        .map(|key| {
            let Some((table, ksk)) = key else {
                return Ok(ct.clone());
            };
            let mut c0 = ctx.rlwe().scratch.automorphism(table, &ct.polys[0])?;
            let (k0, mut k1) = ksk.switch_hoisted(rlwe, &hoisted, table)?;
            ks.fold(ring, &mut c0, &k0)?;
            ks.scale(ring, &mut k1)?;
            rlwe.scratch.give(k0.into_data());
            Ok(ct.with_polys(vec![c0, k1]))
        })
        .collect()
}

/// The Galois table and key of each rotation step (`None` for a step that
/// is the identity), all looked up before any work: the first missing one
/// is [`Error::MissingGaloisKey`].
pub(crate) fn keys_for_steps<'g>(
    rlwe: &crate::rlwe::RlweContext,
    steps: &[i64],
    gk: &'g GaloisKeys,
) -> Result<Vec<Option<(&'g GaloisTable, &'g KeySwitchingKey)>>> {
    let (n, g) = (rlwe.ring().n(), rlwe.rotation_generator());
    steps
        .iter()
        .map(|&k| match element_for_step(n, g, k) {
            1 => Ok(None),
            e => gk.get(e).map(Some),
        })
        .collect()
}

/// Every slot of each row of `half` slots set to the row's sum (the
/// rotate-and-add of [`rotate_and_add`] with [`rotate`]), then, with
/// `swap`, the row swapped by that Galois element and added: the sum over
/// both rows (BGV). Rotations keep level and metadata, so the sums are
/// plain additions of the polynomials.
pub(crate) fn sum_slots<C: ChainContext, M: Clone>(
    ctx: &C,
    ks: &impl KeySwitch,
    ct: &Ciphertext<M>,
    gk: &GaloisKeys,
    half: usize,
    swap: Option<u64>,
) -> Result<Ciphertext<M>> {
    check_ciphertext(ctx, ct)?;
    let mut acc = rotate_and_add(
        ct,
        half,
        |x, k| rotate(ctx, ks, x, k, gk),
        |a, b| add_polys(ctx, a, b, false),
    )?;
    if let Some(element) = swap {
        let r = apply_galois(ctx, ks, &acc, element, gk)?;
        add_polys(ctx, &mut acc, &r, false)?;
    }
    Ok(acc)
}

/// A rotation by a number of steps, hoisted rotations by many, and the
/// swap by the conjugation element `2n − 1`, under the scheme's names (BGV
/// `rotate_rows` / `rotate_rows_hoisted` / `rotate_columns`, CKKS `rotate`
/// / `rotate_hoisted` / `conjugate`), each with its doc.
macro_rules! leveled_rotations {
    (
        $(#[$rdoc:meta])* $rotate:ident,
        $(#[$hdoc:meta])* $hoisted:ident,
        $(#[$sdoc:meta])* $swap:ident
    ) => {
        $(#[$rdoc])*
        pub fn $rotate(
            &self,
            ct: &Ciphertext,
            steps: i64,
            gk: &$crate::rlwe::galois_keys::GaloisKeys,
        ) -> $crate::Result<Ciphertext> {
            $crate::leveled::evaluator::rotate(&*self.ctx, self, ct, steps, gk)
        }

        $(#[$hdoc])*
        pub fn $hoisted(
            &self,
            ct: &Ciphertext,
            steps: &[i64],
            gk: &$crate::rlwe::galois_keys::GaloisKeys,
        ) -> $crate::Result<Vec<Ciphertext>> {
            $crate::leveled::evaluator::rotate_hoisted(&*self.ctx, self, ct, steps, gk)
        }

        $(#[$sdoc])*
        pub fn $swap(
            &self,
            ct: &Ciphertext,
            gk: &$crate::rlwe::galois_keys::GaloisKeys,
        ) -> $crate::Result<Ciphertext> {
            let element = $crate::rlwe::galois_keys::conjugation_element(self.ctx.degree());
            self.apply_galois(ct, element, gk)
        }
    };
}
pub(crate) use leveled_rotations;

/// The constructor, the options and the operations a leveled evaluator
/// only forwards to this module, for an `Evaluator` with fields
/// `ctx: Arc<$ctx>` and `auto_align: bool` that implements [`KeySwitch`]
/// (one definition for BGV and CKKS).
macro_rules! leveled_evaluator_methods {
    ($ctx:ty) => {
        /// An evaluator with strict level (and scale) checks.
        pub fn new(ctx: &std::sync::Arc<$ctx>) -> Self {
            Self {
                ctx: ctx.clone(),
                auto_align: false,
            }
        }

        /// Switches automatic alignment of the operands of binary
        /// operations on or off (see the module docs).
        pub fn with_auto_align(mut self, on: bool) -> Self {
            self.auto_align = on;
            self
        }

        /// The context.
        pub fn context(&self) -> &std::sync::Arc<$ctx> {
            &self.ctx
        }

        /// `−ct`.
        pub fn negate(&self, ct: &Ciphertext) -> $crate::Result<Ciphertext> {
            $crate::out_of_place::out_of_place(ct, |out| self.negate_assign(out))
        }

        /// `ct ← −ct`.
        pub fn negate_assign(&self, ct: &mut Ciphertext) -> $crate::Result<()> {
            $crate::leveled::evaluator::negate_assign(&*self.ctx, ct)
        }

        /// Relinearizes a 3-polynomial ciphertext: `c_2` switched from `s²`
        /// to `s` by hybrid key switching (ModUp, inner product with the
        /// key, ModDown) and folded into `(c_0, c_1)`.
        pub fn relinearize(
            &self,
            ct: &Ciphertext,
            rk: &$crate::rlwe::keys::RelinKey,
        ) -> $crate::Result<Ciphertext> {
            $crate::out_of_place::out_of_place(ct, |out| self.relinearize_assign(out, rk))
        }

        /// [`Self::relinearize`] in place (no copy of `c_0`, `c_1`).
        pub fn relinearize_assign(
            &self,
            ct: &mut Ciphertext,
            rk: &$crate::rlwe::keys::RelinKey,
        ) -> $crate::Result<()> {
            $crate::leveled::evaluator::relinearize_assign(&*self.ctx, self, ct, rk)
        }

        /// `σ_g(ct)` switched back to `s` with the Galois key of `element`
        /// (hybrid key switching of `σ_g(c_1)`). Errors with
        /// [`Error::MissingGaloisKey`](crate::Error::MissingGaloisKey).
        pub fn apply_galois(
            &self,
            ct: &Ciphertext,
            element: u64,
            gk: &$crate::rlwe::galois_keys::GaloisKeys,
        ) -> $crate::Result<Ciphertext> {
            $crate::leveled::evaluator::apply_galois(&*self.ctx, self, ct, element, gk)
        }
    };
}
pub(crate) use leveled_evaluator_methods;
