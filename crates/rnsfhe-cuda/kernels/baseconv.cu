// RNS base conversions and the HPS scalers, one thread per (coefficient,
// group of output limbs): blockDim = (CONV_TX coefficients, CONV_TY row
// groups); the per-coefficient values y_i (or x_i) of a tile sit in shared
// memory as y[i * CONV_TX + tx]. Inner products are accumulated in 192 bits
// and reduced once (exact), so every output is the canonical residue the
// CPU computes with its lazily reduced u128 sums (000 §V.A).
//
//  * conv_i: FastBaseConv_I (000 eq. 4): out_j = sum_i y_i [q^_i]_{p_j} mod p_j
//    with y_i = [x_i q^_i^{-1}]_{q_i}.
//  * conv_f: FastBaseConv_F (000 eq. 5), exact centred: v = floor(s + 1/2)
//    from s = sum_i y_i / q_i in double; inside the band 1/2 +- eps the
//    rounding is decided exactly with multi-word integers, as
//    rnsfhe_math::BaseConverter::fast_base_conv_exact does with big integers.
//  * hps_scale_t: 000 eq. 6 (decryption), rnsfhe_math::ScaleRoundToModulus.
//  * hps_scale_base: 000 eq. 8 (multiplication), rnsfhe_math::ScaleRoundToBase.
//
// `out_map[j]` is the destination row of target j in `out` (so that the
// rows of a ModUp land directly in their places in the extended polynomial).
// gridDim.z converts that many polynomials at once: block z reads and
// writes `z * zs_*` words further (batched operations).

#define CONV_TX TILE_TX
#define CONV_TY 8

// With a `pass_map`, input row i is also copied unchanged to output row
// pass_map[i] (hybrid ModUp: a digit's own rows next to its extension,
// in the same launch).
__device__ __forceinline__ void pass_through(u64* out, const u64* in, const u32* pass_map,
                                             u32 k, u32 n, u32 c) {
    if (pass_map == nullptr || c >= n) return;
    for (u32 i = threadIdx.y; i < k; i += blockDim.y) {
        out[(u64)pass_map[i] * n + c] = in[(u64)i * n + c];
    }
}

// The body of FastBaseConv_I for one block (shared by conv_i and
// conv_i_multi): `sh` holds k * CONV_TX words.
__device__ __forceinline__ void conv_i_block(u64* sh, u64* out, const u32* out_map,
                                             const u32* out_rows, u32 kp, const u64* in,
                                             const u32* in_rows, u32 k, const u64* qhi,
                                             const u64* qhis, const u64* weights,
                                             const Mod* mods, u32 n, const u32* pass_map) {
    pass_through(out, in, pass_map, k, n, blockIdx.x * CONV_TX + threadIdx.x);
    const u32 c = tile_first_pass(sh, in, in_rows, mods, qhi, qhis, k, n);
    if (c >= n) return;
    tile_conv_rows<EXTRA_NONE>(out, out_map, out_rows, kp, sh + threadIdx.x, weights, k, 0,
                               nullptr, mods, n, c);
}

extern "C" __global__ void conv_i(u64* out, const u32* out_map, const u32* out_rows, u32 kp,
                                  const u64* in, const u32* in_rows, u32 k, const u64* qhi,
                                  const u64* qhis, const u64* weights, const Mod* mods,
                                  u32 n, u64 zs_in, u64 zs_out, const u32* pass_map) {
    extern __shared__ u64 sh[];
    in += blockIdx.z * zs_in;
    out += blockIdx.z * zs_out;
    conv_i_block(sh, out, out_map, out_rows, kp, in, in_rows, k, qhi, qhis, weights, mods, n,
                 pass_map);
}

// Several different conversions in one launch (the ModUp of every digit of
// hybrid key switching): block z runs the conversion described by the 11
// words at desc + 11 z: output offset (words from `out`), out_map,
// out_rows, kp, input offset (words from `in`), in_rows, k, qhi, qhis,
// weights, pass_map (device addresses or counts).
// With `per` descriptors and gridDim.z = per * B, block z runs descriptor
// z % per for product z / per, whose input and output are `zs_in`, `zs_out`
// words further per product.
extern "C" __global__ void conv_i_multi(u64* out, const u64* in, const u64* desc,
                                        const Mod* mods, u32 n, u32 per, u64 zs_in,
                                        u64 zs_out) {
    extern __shared__ u64 sh[];
    const u32 prod = blockIdx.z / per;
    const u64* d = desc + 11 * (u64)(blockIdx.z - prod * per);
    out += prod * zs_out;
    in += prod * zs_in;
    conv_i_block(sh, out + d[0], (const u32*)d[1], (const u32*)d[2], (u32)d[3], in + d[4],
                 (const u32*)d[5], (u32)d[6], (const u64*)d[7], (const u64*)d[8],
                 (const u64*)d[9], mods, n, (const u32*)d[10]);
}

// The overflow v = floor(s + 1/2) of FastBaseConv_F for the y column at
// sh[tx], tx-strided: exact for every input.
__device__ u64 conv_f_overflow(const u64* sh_col, u32 k, const double* inv_f, double band_lo,
                               double band_hi, const u64* qhat_words, const u64* q_words,
                               u32 words) {
    double s = 0.0;
    for (u32 i = 0; i < k; ++i) {
        double y = (double)(i64)sh_col[i * CONV_TX];
        s = __dadd_rn(s, __dmul_rn(y, inv_f[i]));
    }
    u64 fl = (u64)s;
    double frac = __dadd_rn(s, -(double)fl);
    if (frac >= band_lo && frac <= band_hi) {
        // v is fl or fl + 1: fl + 1 iff 2 sum_i y_i q^_i >= (2 fl + 1) q.
        bool up = big_twice_sum_ge(sh_col, CONV_TX, qhat_words, k, q_words, words, 2 * fl + 1, 0);
        return fl + (up ? 1ull : 0ull);
    }
    return fl + ((frac > 0.5) ? 1ull : 0ull);
}

extern "C" __global__ void conv_f(u64* out, const u32* out_map, const u32* out_rows, u32 kp,
                                  const u64* in, const u32* in_rows, u32 k, const u64* qhi,
                                  const u64* qhis, const u64* weights, const double* inv_f,
                                  double band_lo, double band_hi, const u64* qhat_words,
                                  const u64* q_words, u32 words, const Mod* mods, u32 n,
                                  u64 zs_in, u64 zs_out, const u32* pass_map) {
    extern __shared__ u64 sh[];
    in += blockIdx.z * zs_in;
    out += blockIdx.z * zs_out;
    pass_through(out, in, pass_map, k, n, blockIdx.x * CONV_TX + threadIdx.x);
    u64* vsh = sh + (u64)k * CONV_TX;
    const u32 tx = threadIdx.x;
    const u32 c = tile_first_pass(sh, in, in_rows, mods, qhi, qhis, k, n);
    // One row group computes the overflow and the others wait at the
    // barrier: every row group computing it itself (no barrier) measured
    // 1-4 % slower on an H200 (BFV (14, 360) products, 2026-11-27).
    if (threadIdx.y == 0) {
        vsh[tx] = conv_f_overflow(sh + tx, k, inv_f, band_lo, band_hi, qhat_words, q_words, words);
    }
    __syncthreads();
    if (c >= n) return;
    tile_conv_rows<EXTRA_COLUMN>(out, out_map, out_rows, kp, sh + tx, weights, k, vsh[tx],
                                 nullptr, mods, n, c);
}

// Rounding of sum_i x_i theta_i (theta_i = g_i / q_i) to the nearest integer,
// half up, exactly (rnsfhe_math::scaling::WideRounder): 128-bit fixed-point
// fractions (theta_hi, theta_lo) summed in 192 bits from 1/2; when the low
// word exceeds `threshold` the rounding R or R + 1 is decided exactly by
// 2 sum_i x_i (g_i q^_i) >= (2R + 1) q. Returns R as (lo, hi).
__device__ void wide_round(const u64* x_col, u32 stride, u32 k, const u64* theta_hi,
                           const u64* theta_lo, u64 threshold, const u64* exact_terms,
                           const u64* q_words, u32 words, u64* r_lo, u64* r_hi) {
    u64 lo = 1ull << 63, hi = 0, carry = 0;
    for (u32 i = 0; i < k; ++i) {
        u64 xi = x_col[i * stride];
        // term = x hi_i + floor(x lo_i / 2^64) < 2^128
        u64 t_lo = xi * theta_hi[i];
        u64 t_hi = mulhi(xi, theta_hi[i]);
        u64 f = mulhi(xi, theta_lo[i]);
        t_lo += f;
        t_hi += (t_lo < f) ? 1ull : 0ull;
        lo += t_lo;
        u64 c1 = (lo < t_lo) ? 1ull : 0ull;
        u64 h0 = hi;
        hi = hi + t_hi + c1;
        carry += (hi < h0 || (c1 && hi == h0)) ? 1ull : 0ull;
    }
    u64 rl = hi, rh = carry;
    if (lo > threshold) {
        u64 ml = (rl << 1) | 1ull;
        u64 mh = (rh << 1) | (rl >> 63);
        if (big_twice_sum_ge(x_col, stride, exact_terms, k, q_words, words, ml, mh)) {
            rl += 1;
            rh += (rl == 0) ? 1ull : 0ull;
        }
    }
    *r_lo = rl;
    *r_hi = rh;
}

// 000 eq. 6: out[c] = (R + sum_i x_i omega_i) mod t, R the exact rounding
// of sum_i x_i theta_i. One thread per coefficient (1-D launch).
extern "C" __global__ void hps_scale_t(u64* out, const u64* x, u32 k, const u64* theta_hi,
                                       const u64* theta_lo, u64 threshold,
                                       const u64* exact_terms, const u64* q_words, u32 words,
                                       const u64* omega, const Mod* mods, u32 t_index, u32 n) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    const Mod t = mods[t_index];
    u64 rl, rh;
    wide_round(x + c, n, k, theta_hi, theta_lo, threshold, exact_terms, q_words, words, &rl, &rh);
    Acc3 acc;
    acc.lo = rl;
    acc.hi = rh;
    acc.top = 0;
    for (u32 i = 0; i < k; ++i) acc3_add_prod(acc, x[(u64)i * n + c], omega[i]);
    out[c] = acc3_reduce(acc, t);
}

// 000 eq. 8: out_j = (R + sum_i x_i [W_i]_{p_j} + x_j own_j) mod p_j for x
// given over q (x_q, k rows) and P (x_p, kp rows).
extern "C" __global__ void hps_scale_base(u64* out, const u32* out_rows, u32 kp, const u64* x_q,
                                          u32 k, const u64* x_p, const u64* theta_hi,
                                          const u64* theta_lo, u64 threshold,
                                          const u64* exact_terms, const u64* q_words,
                                          u32 words, const u64* weights, const u64* own,
                                          const Mod* mods, u32 n, u64 zs_q, u64 zs_p,
                                          u64 zs_out) {
    extern __shared__ u64 sh[];
    x_q += blockIdx.z * zs_q;
    x_p += blockIdx.z * zs_p;
    out += blockIdx.z * zs_out;
    u64* rsh = sh + (u64)k * CONV_TX;
    const u32 tx = threadIdx.x;
    const u32 c = blockIdx.x * CONV_TX + tx;
    for (u32 i = threadIdx.y; i < k; i += blockDim.y) {
        sh[i * CONV_TX + tx] = (c < n) ? x_q[(u64)i * n + c] : 0;
    }
    __syncthreads();
    if (threadIdx.y == 0) {
        u64 rl, rh;
        wide_round(sh + tx, CONV_TX, k, theta_hi, theta_lo, threshold, exact_terms, q_words,
                   words, &rl, &rh);
        rsh[2 * tx] = rl;
        rsh[2 * tx + 1] = rh;
    }
    __syncthreads();
    if (c >= n) return;
    for (u32 j = threadIdx.y; j < kp; j += blockDim.y) {
        const Mod m = mods[out_rows[j]];
        const u64* w = weights + (u64)j * k;
        Acc3 acc;
        acc.lo = rsh[2 * tx];
        acc.hi = rsh[2 * tx + 1];
        acc.top = 0;
        acc = tile_dot(acc, sh + tx, w, k);
        acc3_add_prod(acc, x_p[(u64)j * n + c], own[j]);
        out[(u64)j * n + c] = acc3_reduce(acc, m);
    }
}
