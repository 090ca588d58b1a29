// Point-wise products and sums of RNS polynomials (000 §V.B: k·n threads
// over a 2-D grid, blockIdx.y the limb). Every kernel writes canonical
// residues in [0, p), the same words as rnsfhe_math::RnsRing and
// rnsfhe_math::ring's point-wise functions. `rows[limb]` is the index of
// the limb's modulus in `mods`.

// POINT_PROLOGUE (common.cuh): c, limb, m and the word index i.

// out = a + b
extern "C" __global__ void poly_add(u64* out, const u64* a, const u64* b, const u32* rows,
                                    const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = mod_add(a[i], b[i], m.p);
}

// out = a - b
extern "C" __global__ void poly_sub(u64* out, const u64* a, const u64* b, const u32* rows,
                                    const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = mod_sub(a[i], b[i], m.p);
}

// out_z = a_z + b_z (or a_z - b_z when `subtract`) for the two
// polynomials z = blockIdx.z of a ciphertext, each in its own buffer: one
// launch for both.
extern "C" __global__ void poly_addsub_pair(u64* out0, u64* out1, const u64* a0,
                                            const u64* a1, const u64* b0, const u64* b1,
                                            u32 subtract, const u32* rows, const Mod* mods,
                                            u32 n) {
    POINT_PROLOGUE
    const bool z = blockIdx.z != 0;
    const u64 x = (z ? a1 : a0)[i];
    const u64 y = (z ? b1 : b0)[i];
    (z ? out1 : out0)[i] = subtract ? mod_sub(x, y, m.p) : mod_add(x, y, m.p);
}

// out = -a
extern "C" __global__ void poly_neg(u64* out, const u64* a, const u32* rows, const Mod* mods,
                                    u32 n) {
    POINT_PROLOGUE
    out[i] = mod_neg(a[i], m.p);
}

// out = a * b (Barrett, any words)
extern "C" __global__ void poly_mul(u64* out, const u64* a, const u64* b, const u32* rows,
                                    const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = mod_mul(a[i], b[i], m);
}

// acc = acc + a * b
extern "C" __global__ void poly_mul_acc(u64* acc, const u64* a, const u64* b,
                                        const u32* rows, const Mod* mods, u32 n) {
    POINT_PROLOGUE
    acc[i] = mod_mul_add(a[i], b[i], acc[i], m);
}

// out = a * b + c (decryption's Horner step)
extern "C" __global__ void poly_mul_add(u64* out, const u64* a, const u64* b, const u64* c_in,
                                        const u32* rows, const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = mod_mul_add(a[i], b[i], c_in[i], m);
}

// out = a * w_limb (Shoup; one constant per limb, e.g. [m~]_{q_i}, [t]_{q_i}).
extern "C" __global__ void poly_scalar_mul(u64* out, const u64* a, const u64* w,
                                           const u64* ws, const u32* rows, const Mod* mods,
                                           u32 n) {
    POINT_PROLOGUE
    out[i] = shoup(a[i], w[limb], ws[limb], m.p);
}

// out = a + b * w_limb (Shoup), e.g. the a + P d of fused relinearize-rescale.
extern "C" __global__ void poly_add_scalar_mul(u64* out, const u64* a, const u64* b,
                                               const u64* w, const u64* ws, const u32* rows,
                                               const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = mod_add(a[i], shoup(b[i], w[limb], ws[limb], m.p), m.p);
}

// out = (a + b) * w_limb (Shoup): the last step of a division by P (ModDown).
extern "C" __global__ void poly_add_then_scalar(u64* out, const u64* a, const u64* b,
                                                const u64* w, const u64* ws, const u32* rows,
                                                const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = shoup(mod_add(a[i], b[i], m.p), w[limb], ws[limb], m.p);
}

// out = (a - b) * w_limb: ModDown's and rescaling's last step with the
// negation of the converted part fused in ((a + NTT(-x)) w = (a - NTT(x)) w,
// the same canonical word).
extern "C" __global__ void poly_sub_then_scalar(u64* out, const u64* a, const u64* b,
                                                const u64* w, const u64* ws, const u32* rows,
                                                const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = shoup(mod_sub(a[i], b[i], m.p), w[limb], ws[limb], m.p);
}

// out_z = (a_z - b_z) * w_limb for gridDim.z polynomials (ModDown and
// rescaling of key-switching accumulators): a_z and b_z `zs_a`, `zs_b`
// words apart; the outputs are out0, out1 for two, else named by the device
// table `out_tab`.
extern "C" __global__ void poly_sub_then_scalar2(u64* out0, u64* out1, const u64* a,
                                                 const u64* b, const u64* w, const u64* ws,
                                                 const u32* rows, const Mod* mods, u32 n,
                                                 u64 zs_a, u64 zs_b, const u64* out_tab) {
    POINT_PROLOGUE
    const u32 z = blockIdx.z;
    u64* out = out_tab != nullptr ? (u64*)out_tab[z] : (z == 0 ? out0 : out1);
    out[i] = shoup(mod_sub(a[z * zs_a + i], b[z * zs_b + i], m.p), w[limb], ws[limb], m.p);
}

// acc_z += b_z * w_limb for gridDim.z accumulators `zs_acc` words apart
// (the a + P d of fused relinearize-rescale), where b_z is
// b + (z / 2) zs_prod + (z % 2) zs_comp: the d0, d1 of product z / 2.
extern "C" __global__ void poly_add_scalar_mul2(u64* acc, const u64* b, const u64* w,
                                                const u64* ws, const u32* rows,
                                                const Mod* mods, u32 n, u64 zs_acc,
                                                u64 zs_prod, u64 zs_comp) {
    POINT_PROLOGUE
    const u32 z = blockIdx.z;
    const u64* bz = b + (z >> 1) * zs_prod + (z & 1) * zs_comp;
    u64* a = acc + z * zs_acc;
    a[i] = mod_add(a[i], shoup(bz[i], w[limb], ws[limb], m.p), m.p);
}

// The correction of CKKS rescaling by q_l (rnsfhe_math::mod_down,
// `last_correction`, 001 §II): from the last limb t (coefficient form,
// canonical), out_i[j] = [[t_j + h]_{q_l}]_{q_i} - [h]_{q_i} with
// h = floor(q_l / 2), on every kept row i.
extern "C" __global__ void rescale_correction(u64* out, const u64* t, u64 h, u32 last,
                                              const u64* hq, const u32* rows,
                                              const Mod* mods, u32 n) {
    POINT_PROLOGUE
    const u64 ql = mods[last].p;
    out[i] = mod_sub(reduce64(mod_add(t[c], h, ql), m), hq[limb], m.p);
}

// out = a mod p for any word (reduces residues of another modulus, e.g. the
// digits of RNS-decomposition key switching; rlwe::scratch::lift_row).
extern "C" __global__ void poly_reduce_from(u64* out, const u64* a, const u32* rows,
                                            const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = reduce64(a[c], m);
}

// Digits of RNS-decomposition key switching (002 §4.5) of gridDim.z input
// rows at once: block z lifts input row (z / group) * k_in + g0 + z % group
// (digit g0 + z % group of product z / group, whose c2 rows are k_in apart)
// to every output row: out[z * zs_out + limb row] = a[that row] mod p.
extern "C" __global__ void poly_reduce_rows(u64* out, const u64* a, u64 zs_out, u32 group,
                                            u32 k_in, u32 g0, const u32* rows,
                                            const Mod* mods, u32 n) {
    POINT_PROLOGUE
    const u32 z = blockIdx.z;
    const u64 in_row = (u64)(z / group) * k_in + g0 + z % group;
    out[z * zs_out + i] = reduce64(a[in_row * n + c], m);
}

// out = second-level digit j of a: ((a >> shift) & mask) mod p
// (rlwe::key_switching::digit_row).
extern "C" __global__ void poly_digit_from(u64* out, const u64* a, u32 shift, u64 mask,
                                           const u32* rows, const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = reduce64((a[c] >> shift) & mask, m);
}

// out[limb] = [v]_p for small signed values v (|v| < p), the same row on
// every limb (ring.from_signed).
extern "C" __global__ void poly_from_signed(u64* out, const i64* v, const u32* rows,
                                            const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = signed_word(v[c], m.p);
}

// out = [e]_p + Delta_limb * msg (Shoup): encryption's e_1 + Delta m
// (bfv::encrypt). msg has n words, the plaintext coefficients in [0, t).
extern "C" __global__ void poly_signed_plus_scaled(u64* out, const i64* e, const u64* msg,
                                                   const u64* delta, const u64* deltas,
                                                   const u32* rows, const Mod* mods, u32 n) {
    POINT_PROLOGUE
    out[i] = mod_add(signed_word(e[c], m.p), shoup(msg[c], delta[limb], deltas[limb], m.p), m.p);
}

// The Karatsuba tensor of one limb (000 §IV.A, Table 4; ring::karatsuba_rows):
// c0 = a0 b0, c2 = a1 b1, c1 = (a0 + a1)(b0 + b1) - c0 - c2, all mod p.
extern "C" __global__ void poly_tensor(u64* c0, u64* c1, u64* c2, const u64* a0,
                                       const u64* a1, const u64* b0, const u64* b1,
                                       const u32* rows, const Mod* mods, u32 n, u64 zs_in,
                                       u64 zs_out) {
    POINT_PROLOGUE
    // gridDim.z products at once, `zs_*` words apart.
    const u64 zi = blockIdx.z * zs_in, zo = blockIdx.z * zs_out;
    a0 += zi;
    a1 += zi;
    b0 += zi;
    b1 += zi;
    c0 += zo;
    c1 += zo;
    c2 += zo;
    u64 x0 = a0[i], x1 = a1[i], y0 = b0[i], y1 = b1[i];
    u64 d0 = mod_mul(x0, y0, m);
    u64 d2 = mod_mul(x1, y1, m);
    u64 s = mod_mul(mod_add(x0, x1, m.p), mod_add(y0, y1, m.p), m);
    c0[i] = d0;
    c1[i] = mod_sub(mod_sub(s, d0, m.p), d2, m.p);
    c2[i] = d2;
}

// Gathers gridDim.y polynomials of `words` words each: block row y copies
// from tab[2y + 1] to tab[2y] (device addresses), so a batch of
// ciphertexts scattered in memory lands in one buffer in one launch.
extern "C" __global__ void poly_gather(const u64* tab, u64 words) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= words) return;
    u64* dst = (u64*)tab[2 * (u64)blockIdx.y];
    const u64* src = (const u64*)tab[2 * (u64)blockIdx.y + 1];
    dst[i] = src[i];
}

// Galois automorphism in NTT form: out[p] = in[map[p]] on every limb
// (rnsfhe_math::galois::GaloisTable::apply_ntt_row).
extern "C" __global__ void poly_permute(u64* out, const u64* in, const u32* map, u32 n) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    const u64 base = (u64)blockIdx.y * n;
    out[base + c] = in[base + map[c]];
}

// Galois automorphism in coefficient form: out[j] = +-in[map[j] & 0x7fffffff],
// negated when bit 31 is set (GaloisTable::apply_coeff_row).
extern "C" __global__ void poly_permute_signed(u64* out, const u64* in, const u32* map,
                                               const u32* rows, const Mod* mods, u32 n) {
    POINT_PROLOGUE
    u32 e = map[c];
    u64 x = in[(u64)limb * n + (e & 0x7fffffffu)];
    out[i] = (e & 0x80000000u) ? mod_neg(x, m.p) : x;
}

// CKKS public-key encryption over Q_l p_1 (rlwe::encryption, the division
// by p_1): for the Q rows, d = [e]_{q_i} - [v]_{q_i} (+ p_1 m) where
// c = [x_p + e]_{p_1} (x_p the p_1 row of u pk_b in coefficient form) and
// v = c or c - p_1 (centred). `cp` receives c on the p_1 row pass
// (limb == 0 of a one-limb launch with the p_1 modulus).
extern "C" __global__ void ckks_enc_p1_row(u64* cp, const u64* xp, const i64* e,
                                           const u32* rows, const Mod* mods, u32 n) {
    POINT_PROLOGUE
    cp[c] = mod_add(xp[c], signed_word(e[c], m.p), m.p);
    (void)i;
}

extern "C" __global__ void ckks_enc_q_rows(u64* d, const u64* cp, const i64* e, u64 p1,
                                           const u64* p1_mod_q, const u64* msg,
                                           const u64* p1s, u32 with_msg, const u32* rows,
                                           const Mod* mods, u32 n) {
    POINT_PROLOGUE
    u64 cv = cp[c];
    u64 pm = p1_mod_q[limb];
    u64 wrap = (u64)(0 - (((p1 / 2) - cv) >> 63)) & pm;
    u64 vq = mod_sub(reduce64(cv, m), wrap, m.p);
    u64 r = mod_sub(signed_word(e[c], m.p), vq, m.p);
    if (with_msg) r = mod_add(r, shoup(msg[i], pm, p1s[limb], m.p), m.p);
    d[i] = r;
}

// ---------------------------------------------------------------------------
// BGV (rnsfhe::bgv; 2021/204 §3.2). `t` is mods[t_idx], the plaintext
// modulus; every result is the canonical word of the CPU's kernels
// (bgv::kernels).

// The correction of BGV's modulus switch from the last limb a (coefficient
// form, canonical mod q_l) of gridDim.z polynomials (`tail` n words apart,
// `out` zs_out apart): a centred, k = [a q_l^{-1}]_t (from a centred mod
// t), k centred, and on every kept row i out_i = [a]_{q_i} - [k]_{q_i}
// [q_l]_{q_i}, so that delta = a - q_l k is 0 mod t and a mod q_l
// (bgv::kernels::mod_switch_poly).
extern "C" __global__ void bgv_switch_delta(u64* out, const u64* tail, u64 zs_out, u32 t_idx,
                                            u64 ql_half, u64 ql_mod_t, u64 inv, u64 invs,
                                            const u64* qlq, const u64* qlqs, const u64* tq,
                                            const u32* rows, const Mod* mods, u32 n) {
    POINT_PROLOGUE
    const Mod t = mods[t_idx];
    const u64 a = tail[(u64)blockIdx.z * n + c];
    const bool a_neg = a > ql_half;
    u64 at = reduce64(a, t);
    if (a_neg) at = mod_sub(at, ql_mod_t, t.p);
    const u64 k = shoup(at, inv, invs, t.p);
    u64 ai = reduce64(a, m);
    if (a_neg) ai = mod_sub(ai, qlq[limb], m.p);
    u64 ki = reduce64(k, m);
    if (k > (t.p >> 1)) ki = mod_sub(ki, tq[limb], m.p);
    out[blockIdx.z * zs_out + i] = mod_sub(ai, shoup(ki, qlq[limb], qlqs[limb], m.p), m.p);
}

// The centred lift of a plaintext times a factor f (Shoup pair mod t):
// s = [m f]_t, out_i = [s]_{q_i} or [s - t]_{q_i} when s > t/2
// (bgv::kernels::lift_centered_ntt before its NTT). msg: n words in [0, t).
extern "C" __global__ void bgv_lift_centered(u64* out, const u64* msg, u32 t_idx, u64 f,
                                             u64 fs, const u64* tq, const u32* rows,
                                             const Mod* mods, u32 n) {
    POINT_PROLOGUE
    const Mod t = mods[t_idx];
    const u64 s = shoup(msg[c], f, fs, t.p);
    u64 r = reduce64(s, m);
    if (s > (t.p >> 1)) r = mod_sub(r, tq[limb], m.p);
    out[i] = r;
}

// Exact decryption modulo t of the centred phase x (coefficient form, k
// rows `rows`): y_i = [x_i Q^_i^{-1}]_{q_i}, v = round(sum_i y_i / q_i) in
// double (the CPU's order, no fused multiply-add), out = ([sum_i y_i
// [Q^_i]_t]_t - [v]_t [Q_l]_t) sigma^{-1} mod t
// (bgv::kernels::reduce_centered_mod_t, then the correction factor).
// One thread per coefficient.
extern "C" __global__ void bgv_decrypt_t(u64* out, const u64* x, u32 k, const u64* qhat_inv,
                                         const u64* qhat_invs, const u64* qhat_t,
                                         const double* inv_q, u64 q_mod_t, u64 sinv, u64 sinvs,
                                         u32 t_idx, const u32* rows, const Mod* mods, u32 n) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    const Mod t = mods[t_idx];
    double f = 0.0;
    Acc3 acc = acc3_zero();
    for (u32 i = 0; i < k; ++i) {
        const Mod m = mods[rows[i]];
        const u64 y = shoup(x[(u64)i * n + c], qhat_inv[i], qhat_invs[i], m.p);
        f = __dadd_rn(f, __dmul_rn(__ull2double_rn(y), inv_q[i]));
        acc3_add_prod(acc, y, qhat_t[i]);
    }
    // rnsfhe_math::ct::round_nonneg: truncate, then add 1 when the
    // fraction is at least 1/2.
    const i64 ti = __double2ll_rz(f);
    const double frac = __dsub_rn(f, __ll2double_rn(ti));
    const u64 v = (u64)ti + ((frac >= 0.5) ? 1ull : 0ull);
    const u64 r = mod_sub(acc3_reduce(acc, t), mod_mul(reduce64(v, t), q_mod_t, t), t.p);
    out[c] = shoup(r, sinv, sinvs, t.p);
}
