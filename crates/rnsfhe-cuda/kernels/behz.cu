// BEHZ (002) steps on the device, word for word the formulas of rnsfhe-math:
//  * behz_sm_mrq: SmMRq_{m~} (002 Alg. 2, rnsfhe_math::SmallMontgomery);
//  * behz_floor: fastRNSFloor_q into B_sk (002 §4.3, rnsfhe_math::RnsFloor);
//  * behz_sk: Shenoy-Kumaresan B_sk -> q (002 Lemma 6,
//    rnsfhe_math::ShenoyKumaresan);
//  * behz_decrypt_pow2 / behz_decrypt_prime: 002 Alg. 1 and Lemma 3
//    (rnsfhe::bfv::decrypt::behz_scale).
// Same tiling as baseconv.cu (CONV_TX coefficients by CONV_TY row groups).

#define BZ_TX TILE_TX

// SmMRq: in has |B_sk| + 1 rows (B_sk, then m~), out |B_sk| rows. r_pos =
// [-c'' q^{-1}]_{m~}; per b: (c'' m~^{-1} + r_pos q m~^{-1}) - [r_pos >= half] q.
extern "C" __global__ void behz_sm_mrq(u64* out, const u64* in, const u32* b_rows, u32 kb,
                                       u32 mt_index, u64 neg_q_inv, u64 neg_q_inv_s, u64 half,
                                       const u64* w1, const u64* w1s, const u64* w2,
                                       const u64* w2s, const u64* q_mod_b, const Mod* mods,
                                       u32 n) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    const u64 mt = mods[mt_index].p;
    const u64 r = shoup(in[(u64)kb * n + c], neg_q_inv, neg_q_inv_s, mt);
    const u64 neg = (r >= half) ? 1ull : 0ull;
    for (u32 i = 0; i < kb; ++i) {
        const u64 b = mods[b_rows[i]].p;
        u64 s = mod_add(shoup(in[(u64)i * n + c], w1[i], w1s[i], b), shoup(r, w2[i], w2s[i], b), b);
        out[(u64)i * n + c] = mod_sub(s, neg * q_mod_b[i], b);
    }
}

// fastRNSFloor_q: out_b = (x_b [q^{-1}]_b + sum_i y_i [-q_i^{-1}]_b) mod b,
// y_i = [x_i q^_i^{-1}]_{q_i}; weights row b = ([-q_i^{-1}]_b)_i, [q^{-1}]_b.
extern "C" __global__ void behz_floor(u64* out, const u64* x_q, const u32* q_rows, u32 k,
                                      const u64* x_b, const u32* b_rows, u32 kb,
                                      const u64* qhi, const u64* qhis, const u64* weights,
                                      const Mod* mods, u32 n) {
    extern __shared__ u64 sh[];
    const u32 c = tile_first_pass(sh, x_q, q_rows, mods, qhi, qhis, k, n);
    if (c >= n) return;
    tile_conv_rows<EXTRA_ROWS>(out, nullptr, b_rows, kb, sh + threadIdx.x, weights, k, 0, x_b,
                               mods, n, c);
}

// Shenoy-Kumaresan: in has ell + 1 rows (B, then m_sk). y_i = [x_i M^_i^{-1}]_{m_i};
// alpha = [(sum_i y_i [M^_i]_{m_sk} - x_sk) M^{-1}]_{m_sk}, neg = alpha > m_sk/2;
// out_j = (sum_i y_i [M^_i]_{q_j} + alpha [-M]_{q_j} + neg [m_sk M]_{q_j}) mod q_j.
extern "C" __global__ void behz_sk(u64* out, const u32* q_rows, u32 k, const u64* in,
                                   const u32* b_rows, u32 ell, u32 msk_index, const u64* bhi,
                                   const u64* bhis, const u64* bhat_msk, u64 m_inv,
                                   u64 m_inv_s, const u64* weights, const Mod* mods, u32 n) {
    extern __shared__ u64 sh[];
    u64* ash = sh + (u64)(ell + 2) * BZ_TX;
    const u32 tx = threadIdx.x;
    const u32 c = tile_first_pass(sh, in, b_rows, mods, bhi, bhis, ell, n);
    if (threadIdx.y == 0) {
        const Mod msk = mods[msk_index];
        const u64 sum = acc3_reduce(tile_dot(acc3_zero(), sh + tx, bhat_msk, ell), msk);
        const u64 xs = (c < n) ? in[(u64)ell * n + c] : 0;
        const u64 diff = sum + 2 * msk.p - reduce_lazy(xs, msk);
        const u64 alpha = shoup(diff, m_inv, m_inv_s, msk.p);
        ash[2 * tx] = alpha;
        ash[2 * tx + 1] = (alpha > msk.p / 2) ? 1ull : 0ull;
    }
    __syncthreads();
    if (c >= n) return;
    for (u32 j = threadIdx.y; j < k; j += blockDim.y) {
        const Mod m = mods[q_rows[j]];
        const u64* w = weights + (u64)j * (ell + 2);
        Acc3 acc = tile_dot(acc3_zero(), sh + tx, w, ell);
        acc3_add_prod(acc, ash[2 * tx], w[ell]);
        acc3_add_prod(acc, ash[2 * tx + 1], w[ell + 1]);
        out[(u64)j * n + c] = acc3_reduce(acc, m);
    }
}

// 002 Lemma 3 (gamma = 2^bits, work modulo gamma t): s = (sum_i y_i [q^_i]_{gt})
// [-q^{-1}]_{gt}, y_i = [x_i gamma t q^_i^{-1}]_{q_i}; m = ((s + gamma/2) mod gt) >> bits.
extern "C" __global__ void behz_decrypt_pow2(u64* out, const u64* x, const u32* q_rows, u32 k,
                                             const u64* mult, const u64* mults,
                                             const u64* qhat_gt, u32 gt_index, u64 neg_q_inv,
                                             u32 bits, const Mod* mods, u32 n) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    const Mod gt = mods[gt_index];
    Acc3 acc = acc3_zero();
    for (u32 i = 0; i < k; ++i) {
        const u64 y = shoup(x[(u64)i * n + c], mult[i], mults[i], mods[q_rows[i]].p);
        acc3_add_prod(acc, y, qhat_gt[i]);
    }
    const u64 s = mod_mul(acc3_reduce(acc, gt), neg_q_inv, gt);
    const u64 z = mod_add(s, 1ull << (bits - 1), gt.p);
    out[c] = z >> bits;
}

// 002 Algorithm 1 with a prime gamma.
extern "C" __global__ void behz_decrypt_prime(u64* out, const u64* x, const u32* q_rows, u32 k,
                                              const u64* mult, const u64* mults,
                                              const u64* qhat_t, const u64* qhat_g,
                                              u32 t_index, u32 g_index, u64 neg_q_inv_t,
                                              u64 neg_q_inv_g, u64 g_inv_t, const Mod* mods,
                                              u32 n) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    const Mod t = mods[t_index];
    const Mod g = mods[g_index];
    Acc3 at = acc3_zero();
    Acc3 ag = acc3_zero();
    for (u32 i = 0; i < k; ++i) {
        const u64 y = shoup(x[(u64)i * n + c], mult[i], mults[i], mods[q_rows[i]].p);
        acc3_add_prod(at, y, qhat_t[i]);
        acc3_add_prod(ag, y, qhat_g[i]);
    }
    const u64 s_t = mod_mul(acc3_reduce(at, t), neg_q_inv_t, t);
    const u64 s_g = mod_mul(acc3_reduce(ag, g), neg_q_inv_g, g);
    // [centre(s_g)]_t: s_g or s_g - gamma, reduced modulo t (Modulus::reduce_i64).
    u64 cg;
    if (s_g > g.p / 2) {
        cg = mod_neg(reduce64(g.p - s_g, t), t.p);
    } else {
        cg = reduce64(s_g, t);
    }
    out[c] = mod_mul(mod_sub(s_t, cg, t.p), g_inv_t, t);
}
