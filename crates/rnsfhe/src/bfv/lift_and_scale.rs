//! The first step of homomorphic multiplication, `c_τ = [⌊(t/q)·(ct_1 ⋆ ct_2)[τ]⌉]_q`
//! for `τ ∈ {0, 1, 2}` (000 §II.E `EvalMul` step 1), in full RNS:
//!
//! * **HPS** (000 §IV.A.2): exact `FastBaseConv_F` of each input polynomial
//!   from `q` to the auxiliary base `P` (centered lift), the tensor in
//!   `q ∪ P`, exact scale-and-round to `P` with 000 eq. 8
//!   ([`rnsfhe_math::ScaleRoundToBase`]) and the exact conversion `P → q`.
//! * **BEHZ** (000 §IV.A.1, 002 Algorithm 3): `FastBaseConv_I` of `m̃·c`
//!   from `q` to `B_sk ∪ {m̃}` (S0), `SmMRq_{m̃}` (002 Algorithm 2) back to a
//!   small representative in `B_sk` (S1), the tensor in `q ∪ B_sk` (S2),
//!   `fastRNSFloor_q` of `t·c_τ` into `B_sk` (S3, 002 Lemma 5) and the exact
//!   Shenoy-Kumaresan conversion `B_sk → q` (S4, 002 Lemma 6).
//!
//! The tensor uses Karatsuba's 3-product trick (000 §IV.A, Table 4):
//! `c_0 = a_0 b_0`, `c_2 = a_1 b_1`, `c_1 = (a_0 + a_1)(b_0 + b_1) − c_0 − c_2`,
//! computed pointwise in NTT form over each base. Squaring uses
//! `c_1 = 2 a_0 a_1`.
//!
//! # Input forms
//!
//! Inputs may be in coefficient or NTT form (per ciphertext, see
//! [`crate::bfv::ciphertext`]). An NTT-form input is inverse-transformed
//! once, limb by limb (all `(input, limb)` pairs spread over the rayon
//! pool), into the tensor buffer over `q` that step 2 overwrites anyway;
//! that copy feeds the base extension of step 1, and the NTT-form rows
//! enter the tensor over `q` directly (step 2 skips their forward NTT), so
//! no buffer is added to the working set. So NTT-form inputs cost `4k` inverse NTTs instead
//! of `4k` forward ones, and the words are the same (the NTT is a
//! bijection and all residues are canonical); when all inputs are in NTT
//! form the tensor reads their rows in place instead of copying them. The
//! three outputs are in
//! coefficient form, which is what the key switch of `c_2` needs.
//!
//! # Data flow (both variants)
//!
//! 0. **Inverse** (limb-wise, NTT-form inputs only): the coefficient-form
//!    copies for the lift, in the tensor buffers over `q`.
//! 1. **Lift** (coefficient-wise): every input polynomial is converted to
//!    the auxiliary base by column chunks ([`crate::bfv::scratch`]), so the
//!    whole conversion chain of a chunk (for BEHZ: `·m̃`, `FastBaseConv_I`,
//!    `SmMRq`) runs in cache, one rayon task per (polynomial, chunk).
//! 2. **Tensor** (limb-wise): one task per limb of `q ∪ aux` copies the four
//!    input rows of that limb, runs four forward NTTs (none for the rows of
//!    NTT-form inputs over `q`; the SIMD kernel of
//!    [`rnsfhe_math::NttTable::forward`] where the CPU has one), the fused Karatsuba pass
//!    and three inverse NTTs — all on four rows (512 KiB at `n = 2^14`) that
//!    stay in L2, with no other pass over memory.
//! 3. **Scale** (coefficient-wise): per (component, chunk), the scaling and
//!    the conversion back to `q` run on one chunk in cache (HPS: eq. 8 then
//!    `FastBaseConv_F`; BEHZ: `·t`, `fastRNSFloor_q`, Shenoy-Kumaresan).
//!
//! On a one-thread pool, HPS runs steps 1 and 3 on whole polynomials
//! instead (no chunk copies; BEHZ transforms its inputs while copying
//! them, so it always uses chunks). All temporaries come from the
//! context's scratch pool; the three results are the only allocations once
//! the pool is warm. The splits (limbs,
//! chunks) do not depend on the thread count and every residue is computed
//! by the same code, so the output is identical for any number of threads.

use rayon::prelude::*;
use rnsfhe_math::{Coeff, NttTable, RnsPoly};

use crate::bfv::ciphertext::PolyRef;
use crate::bfv::context::LevelCtx;
use crate::bfv::parameters::Variant;
use crate::error::{Error, Result};
use crate::rlwe::scratch::{column_chunks, gather, gather_scaled, scatter, Scratch, CHUNK};

/// The tensor of one limb, in place. On entry `rows = [a_0, a_1, b_0, b_1]`
/// (`[a_0, a_1, ·, ·]` when squaring), row `i` in NTT form (canonical)
/// when `ntt_in[i]`, else in coefficient form; on exit `rows[0..3] = [c_0,
/// c_1, c_2]` in coefficient form, canonical.
#[inline(never)]
fn tensor_limb(t: &NttTable, rows: [&mut [u64]; 4], square: bool, ntt_in: [bool; 4]) -> Result<()> {
    let m = *t.modulus();
    let [r0, r1, r2, r3] = rows;
    let fwd = |r: &mut [u64], done: bool| if done { Ok(()) } else { t.forward(r) };
    fwd(r0, ntt_in[0])?;
    fwd(r1, ntt_in[1])?;
    // The point-wise Karatsuba pass (AVX-512 where available; NTT outputs
    // are canonical, the kernels' input range).
    if square {
        rnsfhe_math::ring::square_rows(&m, r0, r1, r2);
    } else {
        fwd(r2, ntt_in[2])?;
        fwd(r3, ntt_in[3])?;
        rnsfhe_math::ring::karatsuba_rows(&m, r0, r1, r2, r3);
    }
    t.backward(r0)?;
    t.backward(r1)?;
    t.backward(r2)?;
    Ok(())
}

/// Splits four polynomials (one buffer of `limbs · n` words each) into
/// the four rows of each limb: `out[l] = [p_0[l], p_1[l], p_2[l], p_3[l]]`.
fn limb_quads<'a>(bufs: &'a mut [Scratch<'_>; 4], n: usize) -> Vec<[&'a mut [u64]; 4]> {
    let [p0, p1, p2, p3] = bufs;
    p0.as_mut_slice()
        .chunks_exact_mut(n)
        .zip(p1.as_mut_slice().chunks_exact_mut(n))
        .zip(p2.as_mut_slice().chunks_exact_mut(n))
        .zip(p3.as_mut_slice().chunks_exact_mut(n))
        .map(|(((a, b), c), d)| [a, b, c, d])
        .collect()
}

/// Four scratch polynomials of `limbs` rows.
fn four<'a>(ctx: &LevelCtx<'a>, limbs: usize) -> [Scratch<'a>; 4] {
    let len = limbs * ctx.degree();
    core::array::from_fn(|_| ctx.scratch().take(len))
}

/// Step 2 over `q ∪ aux`: `q_bufs` receive copies of the input rows (in
/// their own form: the forward NTT of an NTT-form input is skipped) and
/// `aux_bufs` already hold the lifted inputs (in the order `a_0, a_1, b_0,
/// b_1`); both end with `c_0, c_1, c_2` in their first three buffers.
fn tensor_all(
    q_tables: &[NttTable],
    aux_tables: &[NttTable],
    inputs: &[PolyRef<'_>],
    q_bufs: &mut [Scratch<'_>; 4],
    aux_bufs: &mut [Scratch<'_>; 4],
    n: usize,
) -> Result<()> {
    let square = inputs.len() == 2;
    let mut q_ntt = [false; 4];
    for (f, x) in q_ntt.iter_mut().zip(inputs) {
        *f = x.is_ntt();
    }
    let all_ntt = inputs.iter().all(|x| x.is_ntt());
    let k = q_tables.len();
    type Task<'a> = (&'a NttTable, [&'a mut [u64]; 4], Option<usize>);
    let mut tasks: Vec<Task<'_>> = Vec::with_capacity(k + aux_tables.len());
    for (l, (t, rows)) in q_tables.iter().zip(limb_quads(q_bufs, n)).enumerate() {
        tasks.push((t, rows, Some(l)));
    }
    for (t, rows) in aux_tables.iter().zip(limb_quads(aux_bufs, n)) {
        tasks.push((t, rows, None));
    }
    tasks
        .into_par_iter()
        .try_for_each(|(t, mut rows, q_limb)| -> Result<()> {
            let ntt_in = match q_limb {
                Some(l) if all_ntt => {
                    // Read the NTT-form rows in place: no copies.
                    let src: Vec<&[u64]> = inputs.iter().map(|x| x.limb(l)).collect();
                    return tensor_limb_ntt(t, &src, rows);
                }
                Some(l) => {
                    for (row, x) in rows.iter_mut().zip(inputs) {
                        row.copy_from_slice(x.limb(l));
                    }
                    q_ntt
                }
                None => [false; 4],
            };
            tensor_limb(t, rows, square, ntt_in)
        })
}

/// [`tensor_limb`] for inputs that are all in NTT form over this limb:
/// reads `src = [a_0, a_1, b_0, b_1]` (`[a_0, a_1]` when squaring) where they
/// are and writes `rows[0..3] = [c_0, c_1, c_2]` in coefficient form (the
/// same words as [`tensor_limb`], without the four row copies).
#[inline(never)]
fn tensor_limb_ntt(t: &NttTable, src: &[&[u64]], rows: [&mut [u64]; 4]) -> Result<()> {
    let m = *t.modulus();
    let [r0, r1, r2, _] = rows;
    match *src {
        [a0, a1] => {
            rnsfhe_math::ring::square_rows_into(&m, [a0, a1], [&mut *r0, &mut *r1, &mut *r2])
        }
        [a0, a1, b0, b1] => rnsfhe_math::ring::karatsuba_rows_into(
            &m,
            [a0, a1, b0, b1],
            [&mut *r0, &mut *r1, &mut *r2],
        ),
        _ => {
            return Err(Error::InvalidArgument(
                "tensor needs 2 or 4 input rows".into(),
            ))
        }
    }
    t.backward(r0)?;
    t.backward(r1)?;
    t.backward(r2)?;
    Ok(())
}

/// Checks the input shapes and returns the input polynomials in the order
/// `a_0, a_1[, b_0, b_1]`.
fn collect_inputs<'a>(
    ctx: &LevelCtx<'_>,
    a: [PolyRef<'a>; 2],
    b: Option<[PolyRef<'a>; 2]>,
) -> Result<Vec<PolyRef<'a>>> {
    let mut inputs = vec![a[0], a[1]];
    if let Some(b) = b {
        inputs.extend(b);
    }
    for x in &inputs {
        x.check(ctx.ring())?;
    }
    Ok(inputs)
}

/// Coefficient-form copies of the NTT-form inputs (`None` for the others),
/// written into the tensor buffers over `q` (`q_bufs[i]` for input `i`,
/// which the tensor only overwrites after the lift): one inverse NTT per
/// limb, all `(input, limb)` pairs spread over the rayon pool. Hand the
/// buffers back with [`restore`] before the tensor.
fn inverse_copies(
    ctx: &LevelCtx<'_>,
    inputs: &[PolyRef<'_>],
    q_bufs: &mut [Scratch<'_>; 4],
) -> Result<Vec<Option<RnsPoly<Coeff>>>> {
    let ring = ctx.ring();
    let (n, k) = (ring.n(), ring.limbs());
    let mut owned = Vec::with_capacity(inputs.len());
    for (x, buf) in inputs.iter().zip(q_bufs.iter_mut()) {
        owned.push(if x.is_ntt() {
            Some(RnsPoly::<Coeff>::from_data(n, k, buf.take_vec())?)
        } else {
            None
        });
    }
    let mut tasks: Vec<(&[u64], &mut [u64], &NttTable)> = Vec::new();
    for (x, o) in inputs.iter().zip(owned.iter_mut()) {
        if let (PolyRef::Ntt(x), Some(o)) = (x, o) {
            for (l, (row, t)) in o.limbs_iter_mut().zip(ring.tables()).enumerate() {
                tasks.push((x.limb(l), row, t));
            }
        }
    }
    let r = tasks.into_par_iter().try_for_each(|(src, row, t)| {
        row.copy_from_slice(src);
        t.backward(row)
    });
    if let Err(e) = r {
        restore(q_bufs, &mut owned);
        return Err(e.into());
    }
    Ok(owned)
}

/// Returns the buffers of [`inverse_copies`] to their tensor slots.
fn restore(q_bufs: &mut [Scratch<'_>; 4], owned: &mut [Option<RnsPoly<Coeff>>]) {
    for (buf, o) in q_bufs.iter_mut().zip(owned.iter_mut()) {
        if let Some(p) = o.take() {
            buf.put_vec(p.into_data());
        }
    }
}

/// The coefficient-form view of every input: the input itself, or its
/// copy from [`inverse_copies`].
fn coeff_views<'a>(
    inputs: &[PolyRef<'a>],
    owned: &'a [Option<RnsPoly<Coeff>>],
) -> Result<Vec<&'a RnsPoly<Coeff>>> {
    inputs
        .iter()
        .zip(owned)
        .map(|(x, o)| match (x, o) {
            (PolyRef::Coeff(p), _) => Ok(*p),
            (PolyRef::Ntt(_), Some(p)) => Ok(p),
            (PolyRef::Ntt(_), None) => Err(Error::InvalidArgument(
                "missing coefficient-form copy".into(),
            )),
        })
        .collect()
}

/// Three zero-length-free output polynomials over `q` from the pool.
fn outputs(ctx: &LevelCtx<'_>) -> Result<[RnsPoly<Coeff>; 3]> {
    let (n, k) = (ctx.degree(), ctx.ring().limbs());
    let mk = || RnsPoly::from_data(n, k, ctx.scratch().take_owned(k * n));
    Ok([mk()?, mk()?, mk()?])
}

/// Step 1: converts every input by column chunks with `f(state, input,
/// start, out_rows)`, writing buffer `i` of `aux_bufs`.
fn lift_all<S, I, F>(
    inputs: &[&RnsPoly<Coeff>],
    aux_bufs: &mut [Scratch<'_>; 4],
    n: usize,
    init: I,
    f: F,
) -> Result<()>
where
    S: Send,
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, &RnsPoly<Coeff>, usize, &mut [&mut [u64]]) -> Result<()> + Sync + Send,
{
    let chunk = CHUNK.min(n);
    let mut tasks = Vec::new();
    for (x, region) in inputs.iter().zip(aux_bufs.iter_mut()) {
        for (c, rows) in column_chunks(region.as_mut_slice(), n, chunk)
            .into_iter()
            .enumerate()
        {
            tasks.push((*x, c * chunk, rows));
        }
    }
    tasks
        .into_par_iter()
        .try_for_each_init(init, |state, (x, start, mut rows)| {
            f(state, x, start, &mut rows)
        })
}

/// Step 3: for each component `τ` and column chunk, `f(state, (x_q,
/// x_aux), start, out_rows)` writes the chunk of output `τ` from the
/// tensor component `τ` over `q` (`x_q`) and over the auxiliary base.
fn scale_all<S, I, F>(
    out: &mut [RnsPoly<Coeff>; 3],
    (q_bufs, aux_bufs): (&[Scratch<'_>; 4], &[Scratch<'_>; 4]),
    n: usize,
    init: I,
    f: F,
) -> Result<()>
where
    S: Send,
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, (&[u64], &[u64]), usize, &mut [&mut [u64]]) -> Result<()> + Sync + Send,
{
    let chunk = CHUNK.min(n);
    let mut tasks = Vec::new();
    for ((o, xq), xa) in out.iter_mut().zip(q_bufs).zip(aux_bufs) {
        for (c, rows) in column_chunks(o.data_mut(), n, chunk)
            .into_iter()
            .enumerate()
        {
            tasks.push(((xq.as_slice(), xa.as_slice()), c * chunk, rows));
        }
    }
    tasks
        .into_par_iter()
        .try_for_each_init(init, |state, (x, start, mut rows)| {
            f(state, x, start, &mut rows)
        })
}

/// Step 3 on whole polynomials (one-thread pools): `f(x_q, x_aux, out_τ)`
/// for each component `τ`, reading the tensor buffers in place.
fn scale_whole(
    out: &mut [RnsPoly<Coeff>; 3],
    (q_bufs, aux_bufs): (&mut [Scratch<'_>; 4], &mut [Scratch<'_>; 4]),
    (n, k, ka): (usize, usize, usize),
    mut f: impl FnMut(&RnsPoly<Coeff>, &RnsPoly<Coeff>, &mut RnsPoly<Coeff>) -> Result<()>,
) -> Result<()> {
    for ((o, qb), ab) in out
        .iter_mut()
        .zip(q_bufs.iter_mut())
        .zip(aux_bufs.iter_mut())
    {
        let xq = RnsPoly::<Coeff>::from_data(n, k, qb.take_vec())?;
        let xa = RnsPoly::<Coeff>::from_data(n, ka, ab.take_vec())?;
        let r = f(&xq, &xa, o);
        qb.put_vec(xq.into_data());
        ab.put_vec(xa.into_data());
        r?;
    }
    Ok(())
}

/// Reusable chunk buffers of one rayon task.
#[derive(Default)]
struct ChunkState {
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u64>,
    d: Vec<u64>,
}

/// `buf` as a `limbs × len` polynomial (contents unspecified).
fn chunk_poly(buf: &mut Vec<u64>, limbs: usize, len: usize) -> Result<RnsPoly<Coeff>> {
    let mut v = core::mem::take(buf);
    v.resize(limbs * len, 0);
    Ok(RnsPoly::from_data(len, limbs, v)?)
}

/// `(c_0, c_1, c_2) = [⌊(t/q)·(a ⊗ b)⌉]_q` by `variant`'s lift and scale
/// (HPS, BEHZ or HPS P-over-Q, module docs). `a`, `b` are degree-1
/// ciphertext polynomials over `q`, each pair in coefficient or NTT form
/// (`b = None` squares `a`); the three outputs are over `q` in coefficient
/// form.
pub(crate) fn lift_and_scale(
    ctx: &LevelCtx<'_>,
    variant: Variant,
    a: [PolyRef<'_>; 2],
    b: Option<[PolyRef<'_>; 2]>,
) -> Result<[RnsPoly<Coeff>; 3]> {
    match variant {
        Variant::Hps => with_prepared_inputs(ctx, a, b, multiply_hps_inner),
        Variant::Behz => with_prepared_inputs(ctx, a, b, multiply_behz_inner),
        Variant::HpsPOverQ | Variant::HpsPOverQLeveled => {
            with_prepared_inputs(ctx, a, b, multiply_hps_poverq_inner)
        }
    }
}

/// The input handling both variants share: checks the inputs, takes the
/// tensor buffers over `q`, inverse-transforms NTT-form inputs into them
/// ([`inverse_copies`]), then runs the variant's `inner` step.
fn with_prepared_inputs<F>(
    ctx: &LevelCtx<'_>,
    a: [PolyRef<'_>; 2],
    b: Option<[PolyRef<'_>; 2]>,
    inner: F,
) -> Result<[RnsPoly<Coeff>; 3]>
where
    F: for<'f, 'q> FnOnce(
        &LevelCtx<'_>,
        &[PolyRef<'f>],
        &mut [Scratch<'q>; 4],
        &mut [Option<RnsPoly<Coeff>>],
    ) -> Result<[RnsPoly<Coeff>; 3]>,
{
    let forms = collect_inputs(ctx, a, b)?;
    let mut q_bufs = four(ctx, ctx.ring().limbs());
    let mut owned = inverse_copies(ctx, &forms, &mut q_bufs)?;
    inner(ctx, &forms, &mut q_bufs, &mut owned)
}

/// HPS lift-and-scale (000 §IV.A.2). `a`, `b` are degree-1 ciphertext
/// polynomials over `q`, each pair in coefficient or NTT form (`b = None`
/// squares `a`); returns `(c_0, c_1, c_2)` over `q` in coefficient form.
///
/// On a one-thread pool the conversions run on whole polynomials, reading
/// and writing the buffers directly (the chunk copies only pay off when the
/// chunks are spread over threads); the words are the same either way.
///
/// Runs after [`inverse_copies`], whose buffers go back to `q_bufs` after
/// the lift.
fn multiply_hps_inner(
    ctx: &LevelCtx<'_>,
    forms: &[PolyRef<'_>],
    q_bufs: &mut [Scratch<'_>; 4],
    owned: &mut [Option<RnsPoly<Coeff>>],
) -> Result<[RnsPoly<Coeff>; 3]> {
    let inputs = coeff_views(forms, owned)?;
    let ring_q = ctx.ring();
    let hps = &ctx.hps;
    let ring_p = &hps.ring_p;
    let (n, k, kp) = (ring_q.n(), ring_q.limbs(), ring_p.limbs());
    let chunk = CHUNK.min(n);
    let one_thread = rayon::current_num_threads() == 1;

    // Step 1: exact centered lift q → P (FastBaseConv_F, 000 eq. 5).
    let mut p_bufs = four(ctx, kp);
    if one_thread {
        for (x, pb) in inputs.iter().zip(p_bufs.iter_mut()) {
            let mut y = RnsPoly::<Coeff>::from_data(n, kp, pb.take_vec())?;
            let r = hps.conv_q_to_p.fast_base_conv_exact(x, &mut y);
            pb.put_vec(y.into_data());
            r?;
        }
    } else {
        lift_all(
            &inputs,
            &mut p_bufs,
            n,
            ChunkState::default,
            |st, x, start, rows| {
                let xc = gather(x.data(), n, start, chunk, core::mem::take(&mut st.a))?;
                let mut yc = chunk_poly(&mut st.b, kp, chunk)?;
                hps.conv_q_to_p.fast_base_conv_exact(&xc, &mut yc)?;
                scatter(&yc, rows);
                st.a = xc.into_data();
                st.b = yc.into_data();
                Ok(())
            },
        )?;
    }

    // Step 2: tensor in q ∪ P (the coefficient-form copies are dead now).
    drop(inputs);
    restore(q_bufs, owned);
    tensor_all(
        ring_q.tables(),
        ring_p.tables(),
        forms,
        q_bufs,
        &mut p_bufs,
        n,
    )?;

    // Steps 3-4: [⌊t·c/q⌉]_P by eq. 8, then exactly back to q.
    let mut out = outputs(ctx)?;
    if one_thread {
        let mut sc = RnsPoly::<Coeff>::from_data(n, kp, ctx.scratch().take_owned(kp * n))?;
        let r = scale_whole(&mut out, (q_bufs, &mut p_bufs), (n, k, kp), |xq, xp, o| {
            hps.scale_to_p.apply(xq, xp, &mut sc)?;
            Ok(hps.conv_p_to_q.fast_base_conv_exact(&sc, o)?)
        });
        ctx.scratch().give(sc.into_data());
        r?;
        return Ok(out);
    }
    scale_all(
        &mut out,
        (q_bufs, &p_bufs),
        n,
        ChunkState::default,
        |st, (xq, xp), start, rows| {
            let xq = gather(xq, n, start, chunk, core::mem::take(&mut st.a))?;
            let xp = gather(xp, n, start, chunk, core::mem::take(&mut st.b))?;
            let mut sc = chunk_poly(&mut st.c, kp, chunk)?;
            let mut oc = chunk_poly(&mut st.d, k, chunk)?;
            hps.scale_to_p.apply(&xq, &xp, &mut sc)?;
            hps.conv_p_to_q.fast_base_conv_exact(&sc, &mut oc)?;
            scatter(&oc, rows);
            st.a = xq.into_data();
            st.b = xp.into_data();
            st.c = sc.into_data();
            st.d = oc.into_data();
            Ok(())
        },
    )?;
    Ok(out)
}

/// HPS P-over-Q lift-and-scale (Kim-Polyakov-Zucca 2021, Alg. 2;
/// [`crate::bfv::Variant::HpsPOverQ`]). Same contract as [`multiply_hps_inner`]
/// (`b = None` multiplies `a` by itself; the scaled copy of `a` is its own
/// operand, so there is no squaring shortcut):
///
/// 1. `a` extended exactly to `P'` (`FastBaseConv_F`, 000 eq. 5);
///    `b'' = ⌊P'·b/Q⌉` computed in `P'` as `−[P'·b]_Q · Q^{-1}` (the centred
///    residue `[P'·b]_Q` converted exactly; `P'·b ≡ 0` modulo `P'`), then
///    extended exactly back to `Q`;
/// 2. the tensor `a ⊗ b''` over `Q ∪ P'` (Karatsuba, as for HPS);
/// 3. `[⌊t·c/P'⌉]_Q` by 000 eq. 8 with the roles of the bases swapped.
///
/// The tensor is only known modulo `Q·P'`, which is enough: a multiple
/// `Q·P'·v` becomes `t·Q·v ≡ 0 (mod Q)` after the scaling, so `P'` only
/// needs to exceed `Q` for the noise (the rounding of `b''` adds
/// `t/P'·a ⊗ ε`, `|ε| ≤ 1/2`), not `t·n·Q` as HPS's `P` does.
///
/// Runs after [`inverse_copies`], whose buffers go back to `q_bufs` after
/// the lift.
fn multiply_hps_poverq_inner(
    ctx: &LevelCtx<'_>,
    forms: &[PolyRef<'_>],
    q_bufs: &mut [Scratch<'_>; 4],
    owned: &mut [Option<RnsPoly<Coeff>>],
) -> Result<[RnsPoly<Coeff>; 3]> {
    let views = coeff_views(forms, owned)?;
    let ring_q = ctx.ring();
    let pq = &ctx.poverq;
    let ring_p = &pq.ring_p;
    let (n, k, kp) = (ring_q.n(), ring_q.limbs(), ring_p.limbs());
    let chunk = CHUNK.min(n);
    // The second operand is `b`, or `a` itself when squaring.
    let (a_in, b_in): ([&RnsPoly<Coeff>; 2], [&RnsPoly<Coeff>; 2]) = match views.as_slice() {
        [a0, a1] => ([a0, a1], [a0, a1]),
        [a0, a1, b0, b1] => ([a0, a1], [b0, b1]),
        _ => {
            return Err(Error::InvalidArgument(
                "tensor needs 2 or 4 input polynomials".into(),
            ))
        }
    };
    let q_moduli = ring_q.moduli();
    let p_moduli = ring_p.moduli();

    // Step 1: a → P' exactly; b'' = ⌊P'·b/Q⌉ in P' and back to Q exactly.
    let mut p_bufs = four(ctx, kp);
    let mut bq: [Scratch<'_>; 2] = core::array::from_fn(|_| ctx.scratch().take(k * n));
    {
        let (pa, pb) = p_bufs.split_at_mut(2);
        // (source, start, P' rows, Q rows of b'' if scaled)
        type Task<'x, 'y> = (
            &'x RnsPoly<Coeff>,
            usize,
            Vec<&'y mut [u64]>,
            Option<Vec<&'y mut [u64]>>,
        );
        let mut tasks: Vec<Task<'_, '_>> = Vec::new();
        for (x, buf) in a_in.iter().zip(pa.iter_mut()) {
            for (c, rows) in column_chunks(buf.as_mut_slice(), n, chunk)
                .into_iter()
                .enumerate()
            {
                tasks.push((*x, c * chunk, rows, None));
            }
        }
        for ((x, buf), qb) in b_in.iter().zip(pb.iter_mut()).zip(bq.iter_mut()) {
            let p_chunks = column_chunks(buf.as_mut_slice(), n, chunk);
            let q_chunks = column_chunks(qb.as_mut_slice(), n, chunk);
            for (c, (rows, qrows)) in p_chunks.into_iter().zip(q_chunks).enumerate() {
                tasks.push((*x, c * chunk, rows, Some(qrows)));
            }
        }
        let p_scale = (q_moduli, pq.p_mod_q.as_slice(), pq.p_mod_q_shoup.as_slice());
        tasks.into_par_iter().try_for_each_init(
            ChunkState::default,
            |st, (x, start, mut rows, qrows)| -> Result<()> {
                let len = rows.first().map_or(0, |r| r.len());
                let mut yc = chunk_poly(&mut st.b, kp, len)?;
                match qrows {
                    None => {
                        let xc = gather(x.data(), n, start, len, core::mem::take(&mut st.a))?;
                        pq.conv_q_to_p.fast_base_conv_exact(&xc, &mut yc)?;
                        st.a = xc.into_data();
                    }
                    Some(mut qrows) => {
                        let xc = gather_scaled(
                            x.data(),
                            n,
                            start,
                            len,
                            p_scale,
                            core::mem::take(&mut st.a),
                        )?;
                        pq.conv_q_to_p.fast_base_conv_exact(&xc, &mut yc)?;
                        st.a = xc.into_data();
                        for ((row, m), (&w, &ws)) in yc
                            .limbs_iter_mut()
                            .zip(p_moduli)
                            .zip(pq.neg_q_inv_p.iter().zip(&pq.neg_q_inv_p_shoup))
                        {
                            for v in row.iter_mut() {
                                *v = m.mul_shoup(*v, w, ws);
                            }
                        }
                        let mut zq = chunk_poly(&mut st.c, k, len)?;
                        pq.conv_p_to_q.fast_base_conv_exact(&yc, &mut zq)?;
                        scatter(&zq, &mut qrows);
                        st.c = zq.into_data();
                    }
                }
                scatter(&yc, &mut rows);
                st.b = yc.into_data();
                Ok(())
            },
        )?;
    }

    // Step 2: tensor a ⊗ b'' over Q ∪ P' (the coefficient-form copies are
    // dead now; b'' enters over Q in coefficient form).
    drop(views);
    restore(q_bufs, owned);
    let bq_polys = [
        RnsPoly::<Coeff>::from_data(n, k, bq[0].take_vec())?,
        RnsPoly::<Coeff>::from_data(n, k, bq[1].take_vec())?,
    ];
    let tensor_inputs = [
        forms[0],
        forms[1],
        PolyRef::Coeff(&bq_polys[0]),
        PolyRef::Coeff(&bq_polys[1]),
    ];
    let r = tensor_all(
        ring_q.tables(),
        ring_p.tables(),
        &tensor_inputs,
        q_bufs,
        &mut p_bufs,
        n,
    );
    for (b, p) in bq.iter_mut().zip(bq_polys) {
        b.put_vec(p.into_data());
    }
    r?;

    // Step 3: [⌊t·c/P'⌉]_Q (eq. 8 from P' into Q).
    let mut out = outputs(ctx)?;
    if rayon::current_num_threads() == 1 {
        scale_whole(&mut out, (q_bufs, &mut p_bufs), (n, k, kp), |xq, xp, o| {
            Ok(pq.scale_to_q.apply(xp, xq, o)?)
        })?;
        return Ok(out);
    }
    scale_all(
        &mut out,
        (q_bufs, &p_bufs),
        n,
        ChunkState::default,
        |st, (xq, xp), start, rows| {
            let len = rows.first().map_or(0, |r| r.len());
            let xq = gather(xq, n, start, len, core::mem::take(&mut st.a))?;
            let xp = gather(xp, n, start, len, core::mem::take(&mut st.b))?;
            let mut oc = chunk_poly(&mut st.d, k, len)?;
            pq.scale_to_q.apply(&xp, &xq, &mut oc)?;
            scatter(&oc, rows);
            st.a = xq.into_data();
            st.b = xp.into_data();
            st.d = oc.into_data();
            Ok(())
        },
    )?;
    Ok(out)
}

/// BEHZ lift-and-scale (002 Algorithm 3, steps S0-S4; 000 §IV.A.1).
/// Same contract as [`multiply_hps_inner`]. Both conversion steps transform the
/// input on the way (`·m̃`, `·t`), so the chunked copies cost nothing extra
/// and are used for any thread count.
///
/// Runs after [`inverse_copies`], whose buffers go back to `q_bufs` after
/// the lift.
fn multiply_behz_inner(
    ctx: &LevelCtx<'_>,
    forms: &[PolyRef<'_>],
    q_bufs: &mut [Scratch<'_>; 4],
    owned: &mut [Option<RnsPoly<Coeff>>],
) -> Result<[RnsPoly<Coeff>; 3]> {
    let inputs = coeff_views(forms, owned)?;
    let ring_q = ctx.ring();
    let behz = &ctx.behz;
    let ring_bsk = &behz.ring_bsk;
    let (n, k, kb) = (ring_q.n(), ring_q.limbs(), ring_bsk.limbs());
    let chunk = CHUNK.min(n);
    let q_moduli = ring_q.moduli();

    // S0 + S1: c'' = FastBaseConv_I(|m̃·c|_q, q, B_sk ∪ {m̃}); c' = SmMRq(c'').
    let mut b_bufs = four(ctx, kb);
    lift_all(
        &inputs,
        &mut b_bufs,
        n,
        ChunkState::default,
        |st, x, start, rows| {
            let mc = gather_scaled(
                x.data(),
                n,
                start,
                chunk,
                (q_moduli, &behz.m_tilde_mod_q, &behz.m_tilde_mod_q_shoup),
                core::mem::take(&mut st.a),
            )?;
            let mut ext = chunk_poly(&mut st.b, kb + 1, chunk)?;
            let mut yc = chunk_poly(&mut st.c, kb, chunk)?;
            behz.conv_q_to_bsk_mtilde.fast_base_conv(&mc, &mut ext)?;
            behz.sm_mrq.sm_mrq(&ext, &mut yc)?;
            scatter(&yc, rows);
            st.a = mc.into_data();
            st.b = ext.into_data();
            st.c = yc.into_data();
            Ok(())
        },
    )?;

    // S2: tensor in q ∪ B_sk (the coefficient-form copies are dead now).
    drop(inputs);
    restore(q_bufs, owned);
    tensor_all(
        ring_q.tables(),
        ring_bsk.tables(),
        forms,
        q_bufs,
        &mut b_bufs,
        n,
    )?;

    // S3: fastRNSFloor_q(t·c_τ) in B_sk = ⌊t·c_τ/q⌋ + b_τ (002 Lemma 5).
    // S4: Shenoy-Kumaresan B_sk → q (002 Lemma 6).
    let mut out = outputs(ctx)?;
    let t_q = (q_moduli, ctx.t_mod_q(), ctx.t_mod_q_shoup());
    let t_b = (
        ring_bsk.moduli(),
        behz.t_mod_bsk.as_slice(),
        behz.t_mod_bsk_shoup.as_slice(),
    );
    scale_all(
        &mut out,
        (q_bufs, &b_bufs),
        n,
        ChunkState::default,
        |st, (xq, xb), start, rows| {
            let xq = gather_scaled(xq, n, start, chunk, t_q, core::mem::take(&mut st.a))?;
            let xb = gather_scaled(xb, n, start, chunk, t_b, core::mem::take(&mut st.b))?;
            let mut fl = chunk_poly(&mut st.c, kb, chunk)?;
            let mut oc = chunk_poly(&mut st.d, k, chunk)?;
            behz.floor.fast_rns_floor(&xq, &xb, &mut fl)?;
            behz.sk_conv.convert(&fl, &mut oc)?;
            scatter(&oc, rows);
            st.a = xq.into_data();
            st.b = xb.into_data();
            st.c = fl.into_data();
            st.d = oc.into_data();
            Ok(())
        },
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests;
