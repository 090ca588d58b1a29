//! Host models of the kernels (tests only): each function runs the index
//! arithmetic and the word formulas of one `.cu` kernel on the CPU, with
//! the tables of [`crate::tables`], so that the tables, the stage splits of
//! [`crate::geometry`] and the exact fallbacks are checked against
//! rnsfhe-math without a GPU. (What they cannot check is the CUDA
//! translation itself; `tests/gpu.rs` checks it on a GPU.)
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::needless_range_loop
)]

use crate::geometry::{ntt_tile_words, NttPhase, NttPlan};
use crate::tables::*;

fn csub(x: u64, m: u64) -> u64 {
    let d = x.wrapping_sub(m);
    d.wrapping_add(m & ((d as i64 >> 63) as u64))
}

fn mulhi(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) >> 64) as u64
}

pub fn shoup_lazy(a: u64, w: u64, ws: u64, p: u64) -> u64 {
    a.wrapping_mul(w).wrapping_sub(mulhi(a, ws).wrapping_mul(p))
}

pub fn shoup(a: u64, w: u64, ws: u64, p: u64) -> u64 {
    csub(shoup_lazy(a, w, ws, p), p)
}

/// `reduce128` of common.cuh.
pub fn reduce128(lo: u64, hi: u64, m: &DeviceModulus) -> u64 {
    let h = shoup_lazy(hi, m.r64, m.r64s, m.p);
    let l = lo.wrapping_sub(mulhi(lo, m.ratio64).wrapping_mul(m.p));
    csub(csub(h + l, 2 * m.p), m.p)
}

/// The 192-bit accumulator of common.cuh, as a u128 plus a top word.
#[derive(Default, Clone, Copy)]
pub struct Acc3 {
    lo: u64,
    hi: u64,
    top: u64,
}

impl Acc3 {
    pub fn add_prod(&mut self, x: u64, y: u64) {
        let l = x.wrapping_mul(y);
        let mut h = mulhi(x, y);
        self.lo = self.lo.wrapping_add(l);
        h += u64::from(self.lo < l);
        self.hi = self.hi.wrapping_add(h);
        self.top += u64::from(self.hi < h);
    }
    pub fn add(&mut self, x: u64) {
        self.lo = self.lo.wrapping_add(x);
        let c = u64::from(self.lo < x);
        self.hi = self.hi.wrapping_add(c);
        self.top += u64::from(self.hi < c);
    }
    pub fn reduce(&self, m: &DeviceModulus) -> u64 {
        if self.top == 0 {
            return reduce128(self.lo, self.hi, m);
        }
        let r1 = reduce128(self.hi, self.top, m);
        reduce128(self.lo, r1, m)
    }
}

fn fwd_bfly(x: &mut u64, y: &mut u64, w: u64, ws: u64, p: u64, last: bool) {
    let two_p = 2 * p;
    let u = csub(*x, two_p);
    let v = shoup_lazy(*y, w, ws, p);
    let (s, d) = (u + v, u + two_p - v);
    if last {
        *x = csub(csub(s, two_p), p);
        *y = csub(csub(d, two_p), p);
    } else {
        *x = s;
        *y = d;
    }
}

fn inv_bfly(x: &mut u64, y: &mut u64, w: u64, ws: u64, p: u64) {
    let two_p = 2 * p;
    let (u, v) = (*x, *y);
    *x = csub(u + v, two_p);
    *y = shoup_lazy(u + two_p - v, w, ws, p);
}

fn inv_last(x: &mut u64, y: &mut u64, t: &NttTwiddles, p: u64) {
    let two_p = 2 * p;
    let (u, v) = (*x, *y);
    *x = csub(shoup_lazy(u + v, t.n_inv.0, t.n_inv.1, p), p);
    *y = csub(shoup_lazy(u + two_p - v, t.inv_last.0, t.inv_last.1, p), p);
}

/// `ntt_slot` of ntt.cu.
fn ntt_slot(j: u32, k: u32, cols: bool, spb_log: u32, s_log: u32) -> usize {
    (if cols {
        (k << spb_log) + j
    } else {
        j * (9 << (s_log - 3)) + k + (k >> 3)
    }) as usize
}

/// `ntt_word` of ntt.cu.
fn ntt_word(c: u32, k: u32, cols: bool, log_n: u32, s_log: u32) -> usize {
    (if cols {
        c + (k << (log_n - s_log))
    } else {
        (c << s_log) + k
    }) as usize
}

/// `ntt_thread` of ntt.cu: `(j, u)` of thread `tid`.
fn ntt_thread(tid: u32, cols: bool, s_log: u32, spb_log: u32) -> (u32, u32) {
    if cols {
        (tid & ((1 << spb_log) - 1), tid >> spb_log)
    } else {
        (tid >> (s_log - 3), tid & ((1 << (s_log - 3)) - 1))
    }
}

/// Every block of every phase of `plan` (`ntt_fwd_phase` /
/// `ntt_inv_phase`) on one limb `a`, in launch order: `round(phase, tile,
/// j, c, u, s, r)` per thread and round.
fn ntt_phases(
    plan: &NttPlan,
    a: &mut [u64],
    mut round: impl FnMut(&NttPhase, &mut [u64], u32, u32, u32, u32, usize),
) {
    for ph in plan.iter() {
        for block in 0..ph.launch.grid.0 {
            ntt_phase_block(ph, plan.log_n, block, a, |sh, j, c, u, s, r| {
                round(ph, sh, j, c, u, s, r)
            });
        }
    }
}

/// One block of `ntt_fwd_phase` / `ntt_inv_phase` on one limb `a`: the
/// tile is staged, then every round runs thread by thread (the barriers
/// between rounds make that order equivalent), then stored.
fn ntt_phase_block(
    ph: &NttPhase,
    log_n: u32,
    block: u32,
    a: &mut [u64],
    mut round: impl FnMut(&mut [u64], u32, u32, u32, u32, usize),
) {
    let (s_log, spb_log, cols) = (ph.stages, ph.spb_log, ph.cols);
    let c0 = block << spb_log;
    let mut sh = vec![u64::MAX; ntt_tile_words(s_log, spb_log, cols) as usize];
    for j in 0..1u32 << spb_log {
        for k in 0..1u32 << s_log {
            sh[ntt_slot(j, k, cols, spb_log, s_log)] = a[ntt_word(c0 + j, k, cols, log_n, s_log)];
        }
    }
    let mut s = 0;
    while s < s_log {
        let r = (s_log - s).min(3) as usize;
        for tid in 0..ph.launch.block.0 {
            let (j, u) = ntt_thread(tid, cols, s_log, spb_log);
            round(&mut sh, j, c0 + j, u, s, r);
        }
        s += r as u32;
    }
    for j in 0..1u32 << spb_log {
        for k in 0..1u32 << s_log {
            a[ntt_word(c0 + j, k, cols, log_n, s_log)] = sh[ntt_slot(j, k, cols, spb_log, s_log)];
        }
    }
}

/// The first tile index of butterfly group `v` of thread `u` in a round
/// of `r` stages whose butterflies are `2^pos` apart (`8 >> r` groups per
/// thread).
fn ntt_group(u: u32, v: usize, r: usize, pos: u32) -> u32 {
    let g = u * (8 >> r) as u32 + v as u32;
    ((g >> pos) << (pos + r as u32)) | (g & ((1 << pos) - 1))
}

/// `ntt_fwd_phase` for every block of one limb (all phases of `plan`).
pub fn ntt_forward(plan: &NttPlan, t: &NttTwiddles, p: u64, a: &mut [u64]) {
    let log_n = plan.log_n;
    ntt_phases(plan, a, |ph, sh, j, c, u, s, r| {
        let (s_log, spb_log, cols, g0) = (ph.stages, ph.spb_log, ph.cols, ph.first_stage);
        let (groups, e_count) = (8 >> r, 1usize << r);
        let lowpos = s_log - r as u32 - s;
        for v in 0..groups {
            let b = ntt_group(u, v, r, lowpos);
            let slot = |e: usize| ntt_slot(j, b + ((e as u32) << lowpos), cols, spb_log, s_log);
            // The kernel's twiddle registers: 2^q per stage q.
            let mut w = vec![usize::MAX; e_count - 1];
            for q in 0..r {
                for tt in 0..1usize << q {
                    let k = b + (((tt << (r - q)) as u32) << lowpos);
                    let mut i = k >> (s_log - s - q as u32);
                    if !cols {
                        i |= c << (s + q as u32);
                    }
                    w[(1 << q) - 1 + tt] = ((1u32 << (g0 + s + q as u32)) + i) as usize;
                }
            }
            let mut x: Vec<u64> = (0..e_count).map(|e| sh[slot(e)]).collect();
            for q in 0..r {
                let half = 1usize << (r - 1 - q);
                let gs = g0 + s + q as u32;
                let last = gs + 1 == log_n;
                for e in 0..e_count {
                    if e & half != 0 {
                        continue;
                    }
                    let ti = w[(1 << q) - 1 + (e >> (r - q))];
                    let (mut lo, mut hi) = (x[e], x[e + half]);
                    fwd_bfly(&mut lo, &mut hi, t.fwd[ti], t.fwd_shoup[ti], p, last);
                    x[e] = lo;
                    x[e + half] = hi;
                }
            }
            for e in 0..e_count {
                sh[slot(e)] = x[e];
            }
        }
    });
}

/// `ntt_inv_phase` for every block of one limb (all phases of `plan`).
pub fn ntt_inverse(plan: &NttPlan, t: &NttTwiddles, p: u64, a: &mut [u64]) {
    let log_n = plan.log_n;
    ntt_phases(plan, a, |ph, sh, j, c, u, s, r| {
        let (s_log, spb_log, cols, g0) = (ph.stages, ph.spb_log, ph.cols, ph.first_stage);
        let (groups, e_count) = (8 >> r, 1usize << r);
        for v in 0..groups {
            let b = ntt_group(u, v, r, s);
            let slot = |e: usize| ntt_slot(j, b + ((e as u32) << s), cols, spb_log, s_log);
            // The kernel's twiddle registers: 2^(R-1-q) for stage q,
            // from E - 2^(R-q) on.
            let mut w = vec![usize::MAX; e_count - 1];
            for q in 0..r {
                let gs = g0 + s + q as u32;
                if gs + 1 == log_n {
                    continue;
                }
                for tt in 0..1usize << (r - 1 - q) {
                    let k = b + (((tt << (q + 1)) as u32) << s);
                    let mut i = k >> (s + q as u32 + 1);
                    if !cols {
                        i |= c << (s_log - s - q as u32 - 1);
                    }
                    w[e_count - (1 << (r - q)) + tt] = ((1u32 << (log_n - gs - 1)) + i) as usize;
                }
            }
            let mut x: Vec<u64> = (0..e_count).map(|e| sh[slot(e)]).collect();
            for q in 0..r {
                let half = 1usize << q;
                let gs = g0 + s + q as u32;
                for e in 0..e_count {
                    if e & half != 0 {
                        continue;
                    }
                    let (mut lo, mut hi) = (x[e], x[e + half]);
                    if gs + 1 == log_n {
                        inv_last(&mut lo, &mut hi, t, p);
                    } else {
                        let ti = w[e_count - (1 << (r - q)) + (e >> (q + 1))];
                        inv_bfly(&mut lo, &mut hi, t.inv[ti], t.inv_shoup[ti], p);
                    }
                    x[e] = lo;
                    x[e + half] = hi;
                }
            }
            for e in 0..e_count {
                sh[slot(e)] = x[e];
            }
        }
    });
}

/// `big_twice_sum_ge` of common.cuh, word loop for word loop.
pub fn big_twice_sum_ge(
    x: &[u64],
    terms: &[u64],
    q: &[u64],
    words: usize,
    mlo: u64,
    mhi: u64,
) -> bool {
    let w = words + 3;
    let mut s = vec![0u64; w];
    let mut r = vec![0u64; w];
    for (i, &xi) in x.iter().enumerate() {
        let t = &terms[i * words..(i + 1) * words];
        let mut carry = 0u64;
        for j in 0..words {
            let lo = xi.wrapping_mul(t[j]);
            let mut hi = mulhi(xi, t[j]);
            let a = s[j].wrapping_add(lo);
            hi += u64::from(a < lo);
            let b = a.wrapping_add(carry);
            hi += u64::from(b < a);
            s[j] = b;
            carry = hi;
        }
        let mut j = words;
        while j < w && carry != 0 {
            let a = s[j].wrapping_add(carry);
            carry = u64::from(a < carry);
            s[j] = a;
            j += 1;
        }
    }
    let mut top = 0;
    for v in s.iter_mut() {
        let nt = *v >> 63;
        *v = (*v << 1) | top;
        top = nt;
    }
    for (part, mi) in [mlo, mhi].into_iter().enumerate() {
        let mut carry = 0u64;
        for j in 0..words {
            let lo = mi.wrapping_mul(q[j]);
            let mut hi = mulhi(mi, q[j]);
            let a = r[j + part].wrapping_add(lo);
            hi += u64::from(a < lo);
            let b = a.wrapping_add(carry);
            hi += u64::from(b < a);
            r[j + part] = b;
            carry = hi;
        }
        let mut j = words + part;
        while j < w && carry != 0 {
            let a = r[j].wrapping_add(carry);
            carry = u64::from(a < carry);
            r[j] = a;
            j += 1;
        }
    }
    for j in (0..w).rev() {
        if s[j] != r[j] {
            return s[j] > r[j];
        }
    }
    true
}

/// `conv_i` / `conv_f` for one coefficient `x` (k residues): the k' outputs.
pub fn conv(
    t: &ConvTables,
    src: &[DeviceModulus],
    dst: &[DeviceModulus],
    x: &[u64],
    exact: bool,
) -> Vec<u64> {
    let y: Vec<u64> = x
        .iter()
        .zip(src)
        .enumerate()
        .map(|(i, (&xi, m))| shoup(xi, t.qhi[i], t.qhis[i], m.p))
        .collect();
    let v = if exact {
        let mut s = 0f64;
        for (yi, inv) in y.iter().zip(&t.inv_f) {
            s += (*yi as i64) as f64 * inv;
        }
        let fl = s as u64;
        let frac = s - fl as f64;
        if frac >= t.band_lo && frac <= t.band_hi {
            let up = big_twice_sum_ge(&y, &t.qhat_words, &t.q_words, t.words, 2 * fl + 1, 0);
            fl + u64::from(up)
        } else {
            fl + u64::from(frac > 0.5)
        }
    } else {
        0
    };
    dst.iter()
        .enumerate()
        .map(|(j, m)| {
            let w = &t.weights[j * (t.k + 1)..(j + 1) * (t.k + 1)];
            let mut acc = Acc3::default();
            for (yi, wi) in y.iter().zip(w) {
                acc.add_prod(*yi, *wi);
            }
            if exact {
                acc.add_prod(v, w[t.k]);
            }
            acc.reduce(m)
        })
        .collect()
}

/// `wide_round` of baseconv.cu: `(lo, hi)` of the rounding.
pub fn wide_round(x: &[u64], r: &RounderTables) -> (u64, u64) {
    let (mut lo, mut hi, mut carry) = (1u64 << 63, 0u64, 0u64);
    for (i, &xi) in x.iter().enumerate() {
        let mut t_lo = xi.wrapping_mul(r.theta_hi[i]);
        let mut t_hi = mulhi(xi, r.theta_hi[i]);
        let f = mulhi(xi, r.theta_lo[i]);
        t_lo = t_lo.wrapping_add(f);
        t_hi += u64::from(t_lo < f);
        lo = lo.wrapping_add(t_lo);
        let c1 = u64::from(lo < t_lo);
        let h0 = hi;
        hi = hi.wrapping_add(t_hi).wrapping_add(c1);
        carry += u64::from(hi < h0 || (c1 == 1 && hi == h0));
    }
    let (mut rl, mut rh) = (hi, carry);
    if lo > r.threshold {
        let ml = (rl << 1) | 1;
        let mh = (rh << 1) | (rl >> 63);
        if big_twice_sum_ge(x, &r.exact_terms, &r.q_words, r.words, ml, mh) {
            rl = rl.wrapping_add(1);
            rh += u64::from(rl == 0);
        }
    }
    (rl, rh)
}

/// `hps_scale_t` for one coefficient.
pub fn scale_t(x: &[u64], tb: &ScaleToTTables, t: &DeviceModulus) -> u64 {
    let (rl, rh) = wide_round(x, &tb.rounder);
    let mut acc = Acc3 {
        lo: rl,
        hi: rh,
        top: 0,
    };
    for (xi, w) in x.iter().zip(&tb.omega) {
        acc.add_prod(*xi, *w);
    }
    acc.reduce(t)
}

/// `reduce64` of common.cuh (canonical).
fn reduce64(x: u64, m: &DeviceModulus) -> u64 {
    csub(x.wrapping_sub(mulhi(x, m.ratio64).wrapping_mul(m.p)), m.p)
}

/// `mod_sub` of common.cuh.
fn mod_sub(a: u64, b: u64, p: u64) -> u64 {
    let d = a.wrapping_sub(b);
    d.wrapping_add(p & ((d as i64 >> 63) as u64))
}

/// `bgv_switch_delta` for one coefficient: from the last limb's word `a`,
/// the words of `δ` on the kept limbs `kept`.
pub fn bgv_switch_delta(
    a: u64,
    tb: &BgvSwitchTables,
    t: &DeviceModulus,
    kept: &[DeviceModulus],
) -> Vec<u64> {
    let neg = a > tb.ql_half;
    let mut at = reduce64(a, t);
    if neg {
        at = mod_sub(at, tb.ql_mod_t, t.p);
    }
    let k = shoup(at, tb.ql_inv_t.0, tb.ql_inv_t.1, t.p);
    kept.iter()
        .enumerate()
        .map(|(i, m)| {
            let mut ai = reduce64(a, m);
            if neg {
                ai = mod_sub(ai, tb.qlq[i], m.p);
            }
            let mut ki = reduce64(k, m);
            if k > t.p >> 1 {
                ki = mod_sub(ki, tb.tq[i], m.p);
            }
            mod_sub(ai, shoup(ki, tb.qlq[i], tb.qlqs[i], m.p), m.p)
        })
        .collect()
}

/// `bgv_lift_centered` for one coefficient `v < t` and factor `(f, fs)`:
/// its word on every limb `q` (`tq[i] = [t]_{q_i}`).
pub fn bgv_lift_centered(
    v: u64,
    (f, fs): (u64, u64),
    tq: &[u64],
    t: &DeviceModulus,
    q: &[DeviceModulus],
) -> Vec<u64> {
    let s = shoup(v, f, fs, t.p);
    q.iter()
        .zip(tq)
        .map(|(m, &tqi)| {
            let r = reduce64(s, m);
            if s > t.p >> 1 {
                mod_sub(r, tqi, m.p)
            } else {
                r
            }
        })
        .collect()
}

/// `bgv_decrypt_t` for one coefficient `x` (one word per limb of `q`),
/// times `σ^{-1}` (`sinv` with its Shoup word).
pub fn bgv_decrypt_t(
    x: &[u64],
    tb: &BgvDecryptTables,
    sinv: (u64, u64),
    t: &DeviceModulus,
    q: &[DeviceModulus],
) -> u64 {
    let mut f = 0f64;
    let mut acc = Acc3::default();
    for (i, m) in q.iter().enumerate() {
        let y = shoup(x[i], tb.qhat_inv[i], tb.qhat_invs[i], m.p);
        f += y as f64 * tb.inv_q[i];
        acc.add_prod(y, tb.qhat_t[i]);
    }
    let ti = f as i64;
    let v = ti as u64 + u64::from(f - ti as f64 >= 0.5);
    let vq = reduce64(v, t);
    let prod = reduce128(vq.wrapping_mul(tb.q_mod_t), mulhi(vq, tb.q_mod_t), t);
    let r = mod_sub(acc.reduce(t), prod, t.p);
    shoup(r, sinv.0, sinv.1, t.p)
}

/// `f64_to_rns` for one integral `r` and limb `m` (`pow64` its 16 words).
pub fn f64_to_rns(r: f64, pow64: &[u64], m: &DeviceModulus) -> u64 {
    let bits = r.to_bits();
    let abs_bits = bits & !(1u64 << 63);
    let biased = abs_bits >> 52;
    let mant = (abs_bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let e = biased as i64 - 1075;
    let down = e.unsigned_abs() & 63;
    let small = reduce64(mant >> down, m);
    let up = (e as u64 & 63) as u32;
    let t = ((e as u64) >> 6).min(15) as usize;
    let lo = mant << up;
    let hi = if up == 0 { 0 } else { mant >> (64 - up) };
    let red = reduce128(lo, hi, m);
    let large = reduce128(red.wrapping_mul(pow64[t]), mulhi(red, pow64[t]), m);
    let mut mag = if e < 0 { small } else { large };
    if biased == 0 {
        mag = 0;
    }
    if bits >> 63 == 1 && mag != 0 {
        m.p - mag
    } else {
        mag
    }
}

/// `rns_to_f64_centered` for one coefficient `x` (one canonical word per
/// limb of `q`).
pub fn rns_to_f64_centered(x: &[u64], tb: &F64CrtTables, half: &[u64], q: &[DeviceModulus]) -> f64 {
    let k = x.len();
    let mut d = vec![0u64; k];
    d[0] = x[0];
    for i in 1..k {
        let m = &q[i];
        let mut acc = Acc3::default();
        for j in 0..i {
            acc.add_prod(d[j], tb.garner_w[i * tb.stride + j]);
        }
        let s = acc.reduce(m);
        d[i] = shoup(
            mod_sub(x[i], s, m.p),
            tb.garner_inv[i],
            tb.garner_invs[i],
            m.p,
        );
    }
    let mut negative = 0u64;
    for i in 0..k {
        let differ = u64::from(d[i] != half[i]);
        let greater = u64::from(d[i] > half[i]);
        negative = (greater & differ) | (negative & (differ ^ 1));
    }
    if negative == 1 {
        for i in 0..k {
            d[i] = q[i].p - 1 - d[i];
        }
    }
    let nw = k + 2;
    let mut words = vec![0u64; nw];
    for i in (0..k).rev() {
        let mut carry = d[i] as u128;
        for w in words.iter_mut() {
            let p = *w as u128 * q[i].p as u128 + carry;
            *w = p as u64;
            carry = p >> 64;
        }
    }
    let mut carry = negative;
    for w in words.iter_mut() {
        let (t, o) = w.overflowing_add(carry);
        *w = t;
        carry = u64::from(o);
    }
    let mut bits = 0u64;
    for (w, &wj) in words.iter().enumerate() {
        if wj != 0 {
            bits = 64 * w as u64 + u64::from(64 - wj.leading_zeros());
        }
    }
    let shift = bits.saturating_sub(64);
    let (ws, bs) = ((shift >> 6) as usize, shift & 63);
    let (mut lo, mut hi, mut sticky) = (0u64, 0u64, 0u64);
    for (w, &wj) in words.iter().enumerate() {
        if w == ws {
            lo = wj;
            sticky |= wj & ((1u64 << bs) - 1);
        }
        if w == ws + 1 {
            hi = wj;
        }
        if w < ws {
            sticky |= wj;
        }
    }
    let top = (lo >> bs) | ((hi << 1) << (63 - bs));
    let f = (top | u64::from(sticky != 0)) as f64;
    let mag = if shift >= 961 {
        f64::INFINITY
    } else {
        f * f64::from_bits((1023 + shift) << 52)
    };
    if negative == 1 {
        -mag
    } else {
        mag
    }
}

/// The launches of the device decoding (`ckks_decode_gather`, then
/// `ckks_fft_level` for `h = 1, 2, …, l/2`), thread by thread, on the
/// coefficients `coeffs` (`2l` of them) with the embedding's twiddles.
pub fn fft_decode(coeffs: &[f64], inv: f64, tw: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let l = coeffs.len() / 2;
    let bits = l.trailing_zeros();
    let brev = |i: usize| {
        if bits == 0 {
            0
        } else {
            i.reverse_bits() >> (usize::BITS - bits)
        }
    };
    let mut buf = vec![0f64; 2 * l];
    for i in 0..l {
        buf[brev(i)] = coeffs[i] * inv;
        buf[l + brev(i)] = coeffs[i + l] * inv;
    }
    let mut h = 1;
    while h < l {
        for t in 0..l / 2 {
            let (blk, j) = (t / h, t % h);
            let (a, b) = (blk * 2 * h + j, blk * 2 * h + j + h);
            let (tr, ti) = tw[h - 1 + j];
            let (yr, yi) = (buf[b], buf[l + b]);
            let (vr, vi) = (yr * tr - yi * ti, yr * ti + yi * tr);
            let (ur, ui) = (buf[a], buf[l + a]);
            buf[a] = ur + vr;
            buf[l + a] = ui + vi;
            buf[b] = ur - vr;
            buf[l + b] = ui - vi;
        }
        h *= 2;
    }
    (0..l).map(|i| (buf[i], buf[l + i])).collect()
}

/// The launches of the device encoding (`ckks_ifft_level` for
/// `h = l/2, …, 1`, then `ckks_encode_round`), thread by thread: the
/// rounded coefficients of `values` (`l` of them, split) at `scale`.
pub fn fft_encode_round(values: &[(f64, f64)], tw: &[(f64, f64)], scale: f64) -> Vec<f64> {
    let l = values.len();
    let bits = l.trailing_zeros();
    let brev = |i: usize| {
        if bits == 0 {
            0
        } else {
            i.reverse_bits() >> (usize::BITS - bits)
        }
    };
    let mut buf: Vec<f64> = values
        .iter()
        .map(|v| v.0)
        .chain(values.iter().map(|v| v.1))
        .collect();
    let mut h = l / 2;
    while h >= 1 {
        for t in 0..l / 2 {
            let (blk, j) = (t / h, t % h);
            let (a, b) = (blk * 2 * h + j, blk * 2 * h + j + h);
            let (ur, ui, vr, vi) = (buf[a], buf[l + a], buf[b], buf[l + b]);
            buf[a] = ur + vr;
            buf[l + a] = ui + vi;
            let (dr, di) = (ur - vr, ui - vi);
            let (tr, ti) = tw[h - 1 + j];
            buf[b] = dr * tr + di * ti;
            buf[l + b] = di * tr - dr * ti;
        }
        h /= 2;
    }
    let inv_l = 1.0 / l as f64;
    (0..2 * l)
        .map(|j| {
            let src = if j < l { brev(j) } else { l + brev(j - l) };
            (buf[src] * inv_l * scale).round()
        })
        .collect()
}

/// `hps_scale_base` for one coefficient (`xq` over q, `xp` over P).
pub fn scale_base(xq: &[u64], xp: &[u64], tb: &ScaleToBaseTables, p: &[DeviceModulus]) -> Vec<u64> {
    let k = xq.len();
    let (rl, rh) = wide_round(xq, &tb.rounder);
    p.iter()
        .enumerate()
        .map(|(j, m)| {
            let mut acc = Acc3 {
                lo: rl,
                hi: rh,
                top: 0,
            };
            for (xi, w) in xq.iter().zip(&tb.weights[j * k..(j + 1) * k]) {
                acc.add_prod(*xi, *w);
            }
            acc.add_prod(xp[j], tb.own[j]);
            acc.reduce(m)
        })
        .collect()
}

/// `behz_sm_mrq` for one coefficient (`x`: B_sk residues then the m̃ one).
pub fn sm_mrq(x: &[u64], tb: &SmMrqTables, b: &[DeviceModulus], mt: u64) -> Vec<u64> {
    let kb = b.len();
    let r = shoup(x[kb], tb.neg_q_inv.0, tb.neg_q_inv.1, mt);
    let neg = u64::from(r >= tb.half);
    b.iter()
        .enumerate()
        .map(|(i, m)| {
            let s = csub(
                shoup(x[i], tb.w1[i], tb.w1s[i], m.p) + shoup(r, tb.w2[i], tb.w2s[i], m.p),
                m.p,
            );
            let d = s.wrapping_sub(neg * tb.q_mod_b[i]);
            d.wrapping_add(m.p & ((d as i64 >> 63) as u64))
        })
        .collect()
}

/// `behz_floor` for one coefficient.
pub fn floor(
    xq: &[u64],
    xb: &[u64],
    qhi: &[(u64, u64)],
    q: &[DeviceModulus],
    w: &[u64],
    b: &[DeviceModulus],
) -> Vec<u64> {
    let k = xq.len();
    let y: Vec<u64> = xq
        .iter()
        .zip(qhi)
        .zip(q)
        .map(|((&x, &(a, s)), m)| shoup(x, a, s, m.p))
        .collect();
    b.iter()
        .enumerate()
        .map(|(j, m)| {
            let row = &w[j * (k + 1)..(j + 1) * (k + 1)];
            let mut acc = Acc3::default();
            for (yi, wi) in y.iter().zip(row) {
                acc.add_prod(*yi, *wi);
            }
            acc.add_prod(xb[j], row[k]);
            acc.reduce(m)
        })
        .collect()
}

/// `behz_sk` for one coefficient (`x`: B residues then m_sk).
pub fn sk(
    x: &[u64],
    tb: &SkTables,
    b: &[DeviceModulus],
    msk: &DeviceModulus,
    q: &[DeviceModulus],
) -> Vec<u64> {
    let ell = b.len();
    let y: Vec<u64> = (0..ell)
        .map(|i| shoup(x[i], tb.bhi[i], tb.bhis[i], b[i].p))
        .collect();
    let mut acc = Acc3::default();
    for (yi, w) in y.iter().zip(&tb.bhat_msk) {
        acc.add_prod(*yi, *w);
    }
    let sum = acc.reduce(msk);
    let lazy = x[ell].wrapping_sub(mulhi(x[ell], msk.ratio64).wrapping_mul(msk.p));
    let diff = sum + 2 * msk.p - lazy;
    let alpha = shoup(diff, tb.m_inv.0, tb.m_inv.1, msk.p);
    let neg = u64::from(alpha > msk.p / 2);
    q.iter()
        .enumerate()
        .map(|(j, m)| {
            let w = &tb.weights[j * (ell + 2)..(j + 1) * (ell + 2)];
            let mut a = Acc3::default();
            for (yi, wi) in y.iter().zip(w) {
                a.add_prod(*yi, *wi);
            }
            a.add_prod(alpha, w[ell]);
            a.add_prod(neg, w[ell + 1]);
            a.reduce(m)
        })
        .collect()
}

/// `chacha20_block` of sampling.cu.
pub fn chacha20_block(key: &[u32; 8], counter: u64) -> [u32; 16] {
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    s[4..12].copy_from_slice(key);
    s[12] = counter as u32;
    s[13] = (counter >> 32) as u32;
    let mut x = s;
    // Double rounds: four column, then four diagonal quarter rounds; a
    // quarter round on (a, b, c, d) is four steps `s += t; u = (u ^ s) <<< r`
    // on (a, b, d), (c, d, b), (a, b, d), (c, d, b) with r = 16, 12, 8, 7.
    const QUARTERS: [[usize; 4]; 8] = [
        [0, 4, 8, 12],
        [1, 5, 9, 13],
        [2, 6, 10, 14],
        [3, 7, 11, 15],
        [0, 5, 10, 15],
        [1, 6, 11, 12],
        [2, 7, 8, 13],
        [3, 4, 9, 14],
    ];
    for _ in 0..10 {
        for [a, b, c, d] in QUARTERS {
            for (step, r) in [16, 12, 8, 7].into_iter().enumerate() {
                let (s, t, u) = if step % 2 == 0 { (a, b, d) } else { (c, d, b) };
                x[s] = x[s].wrapping_add(x[t]);
                x[u] = (x[u] ^ x[s]).rotate_left(r);
            }
        }
    }
    for (o, i) in x.iter_mut().zip(s) {
        *o = o.wrapping_add(i);
    }
    x
}

/// The 64-bit draw at 32-bit word position `pos`.
pub fn draw(key: &[u32; 8], pos: u64) -> u64 {
    let word = |p: u64| chacha20_block(key, p >> 4)[(p & 15) as usize] as u64;
    word(pos) | (word(pos + 1) << 32)
}

/// `sample_ternary` with `threads` threads: (values, next position), or
/// `None` when the budget ran out.
pub fn ternary(
    key: &[u32; 8],
    w0: u64,
    n: usize,
    budget: usize,
    threads: usize,
) -> Option<(Vec<i64>, u64)> {
    let per = budget.div_ceil(threads);
    let counts: Vec<usize> = (0..threads)
        .map(|t| {
            (t * per..((t + 1) * per).min(budget))
                .map(|d| {
                    (0..8)
                        .filter(|b| (draw(key, w0 + 2 * d as u64) >> (8 * b)) & 0xff != 0xff)
                        .count()
                })
                .sum()
        })
        .collect();
    if counts.iter().sum::<usize>() < n {
        return None;
    }
    let mut out = vec![0i64; n];
    let mut next = 0u64;
    let mut pos = 0usize;
    for t in 0..threads {
        for d in t * per..((t + 1) * per).min(budget) {
            let w = draw(key, w0 + 2 * d as u64);
            for b in 0..8 {
                if pos >= n {
                    break;
                }
                let byte = ((w >> (8 * b)) & 0xff) as u32;
                if byte == 0xff {
                    continue;
                }
                out[pos] = i64::from(byte - 3 * ((byte * 171) >> 9)) - 1;
                if pos == n - 1 {
                    next = w0 + 2 * (d as u64 + 1);
                }
                pos += 1;
            }
        }
        let _ = counts[t];
    }
    Some((out, next))
}

/// `sample_gaussian` (and `advance_gaussian`).
pub fn gaussian(key: &[u32; 8], w0: u64, n: usize, table: &[u64]) -> (Vec<i64>, u64) {
    let out = (0..n as u64)
        .map(|i| {
            let (batch, idx) = (i / 64, i % 64);
            let signs = draw(key, w0 + 2 * (batch * 65));
            let u = draw(key, w0 + 2 * (batch * 65 + 1 + idx));
            let mag = table.iter().filter(|&&t| u >= t).count() as u64;
            let s = (signs >> idx) & 1;
            ((mag ^ s.wrapping_neg()).wrapping_add(s)) as i64
        })
        .collect();
    (out, w0 + 2 * ((n as u64).div_ceil(64) + n as u64))
}

#[cfg(test)]
mod tests;
