// Exact conversions between integral f64 values and RNS limbs, the two
// ends of CKKS encoding and decoding (rnsfhe_math::F64Crt): the encoder's
// rounded coefficients reduced into every limb, and a decryption's
// centred coefficients read back as correctly rounded f64. Both give the
// CPU's values for every input (they are exact functions of the integer);
// no branch depends on the (secret) values, only selects.

// 2^e for 0 <= e <= 1023 as a double (the bits of the exponent field).
__device__ __forceinline__ double pow2(u32 e) {
    return __longlong_as_double((long long)(((1023ull + e) & 0x7ffull) << 52));
}

// out[limb][c] = [r_c]_{q_limb} for an integral double r_c with |r_c| <
// 2^1024 (rnsfhe_math's reduce_integral_ct): |r| = mant 2^e with the
// 53-bit mantissa; e < 0: [mant >> -e]_q; e >= 0, e = 64 t + s:
// [mant 2^s]_q [2^{64 t}]_q (pow64: 16 words per limb); then the sign.
extern "C" __global__ void f64_to_rns(u64* out, const double* r, const u64* pow64,
                                      const u32* rows, const Mod* mods, u32 n) {
    POINT_PROLOGUE
    const u64 bits = (u64)__double_as_longlong(r[c]);
    const u64 abs_bits = bits & ~(1ull << 63);
    const u64 biased = abs_bits >> 52;
    const u64 mant = (abs_bits & ((1ull << 52) - 1)) | (1ull << 52);
    const long long e = (long long)biased - 1075;
    const u64 down = (u64)(e < 0 ? -e : e) & 63;
    const u64 small = reduce64(mant >> down, m);
    const u32 up = (u32)((u64)e & 63);
    u64 t = ((u64)e) >> 6;
    t = t < 15 ? t : 15;
    // mant << up as 128 bits (up < 64), reduced, times [2^{64 t}]_q.
    const u64 lo = mant << up;
    const u64 hi = up == 0 ? 0ull : (mant >> (64 - up));
    const u64 large = mod_mul(reduce128(lo, hi, m), pow64[(u64)limb * 16 + t], m);
    u64 mag = e < 0 ? small : large;
    mag = biased == 0 ? 0ull : mag;
    out[i] = (bits >> 63) ? mod_neg(mag, m.p) : mag;
}

#define CRT_MAX_LIMBS 64

// The centred value x in (-Q/2, Q/2] of the residues of coefficient c (k
// rows `rows`, canonical, coefficient form) as the nearest double, ties to
// even (rnsfhe_math::F64Crt::to_f64_centered): Garner's mixed-radix
// digits d_i = (x_i - sum_{j<i} d_j [W_j]_{q_i}) [W_i^{-1}]_{q_i}
// (garner_w: row i at i * stride), x > floor(Q/2) decided on the digits
// (half: the digits of floor(Q/2)), then Q - x = sum (q_i - 1 - d_i) W_i +
// 1 for those, the magnitude by Horner's rule in 64-bit words, its top 64
// bits with a sticky bit converted once, scaled by 2^shift (+inf from
// shift 961 on), and the sign. One thread per coefficient; k <=
// CRT_MAX_LIMBS.
extern "C" __global__ void rns_to_f64_centered(double* out, const u64* x, u32 k, u32 stride,
                                               const u64* garner_w, const u64* garner_inv,
                                               const u64* garner_invs, const u64* half,
                                               const u32* rows, const Mod* mods, u32 n) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    u64 d[CRT_MAX_LIMBS];
    u64 words[CRT_MAX_LIMBS + 2];
    d[0] = x[c];
    for (u32 i = 1; i < k; ++i) {
        const Mod m = mods[rows[i]];
        Acc3 acc = acc3_zero();
        const u64* w = garner_w + (u64)i * stride;
        for (u32 j = 0; j < i; ++j) acc3_add_prod(acc, d[j], w[j]);
        const u64 s = acc3_reduce(acc, m);
        d[i] = shoup(mod_sub(x[(u64)i * n + c], s, m.p), garner_inv[i], garner_invs[i], m.p);
    }
    u64 negative = 0;
    for (u32 i = 0; i < k; ++i) {
        const u64 differ = d[i] != half[i] ? 1ull : 0ull;
        const u64 greater = d[i] > half[i] ? 1ull : 0ull;
        negative = (greater & differ) | (negative & (differ ^ 1ull));
    }
    const u64 neg_mask = 0ull - negative;
    for (u32 i = 0; i < k; ++i) {
        const u64 q = mods[rows[i]].p;
        d[i] ^= (d[i] ^ (q - 1 - d[i])) & neg_mask;
    }
    const u32 nw = k + 2;
    for (u32 w = 0; w < nw; ++w) words[w] = 0;
    for (int i = (int)k - 1; i >= 0; --i) {
        const u64 q = mods[rows[i]].p;
        u64 carry = d[i];
        for (u32 w = 0; w < nw; ++w) {
            const u64 plo = words[w] * q;
            const u64 phi = mulhi(words[w], q);
            const u64 lo = plo + carry;
            carry = phi + (lo < plo ? 1ull : 0ull);
            words[w] = lo;
        }
    }
    u64 carry = negative;
    for (u32 w = 0; w < nw; ++w) {
        const u64 t = words[w] + carry;
        carry = t < carry ? 1ull : 0ull;
        words[w] = t;
    }
    u64 bits = 0;
    for (u32 w = 0; w < nw; ++w) {
        const u64 here = 64ull * w + (u64)(64 - __clzll((long long)words[w]));
        bits = words[w] != 0 ? here : bits;
    }
    const u64 shift = bits > 64 ? bits - 64 : 0;
    const u64 ws = shift >> 6, bs = shift & 63;
    u64 lo_word = 0, hi_word = 0, sticky = 0;
    for (u32 w = 0; w < nw; ++w) {
        const u64 wj = words[w];
        lo_word |= (w == ws) ? wj : 0ull;
        hi_word |= (w == ws + 1) ? wj : 0ull;
        sticky |= (w < ws) ? wj : 0ull;
        sticky |= (w == ws) ? (wj & ((1ull << bs) - 1)) : 0ull;
    }
    const u64 top = (lo_word >> bs) | ((hi_word << 1) << (63 - bs));
    const double f = __ull2double_rn(top | (sticky != 0 ? 1ull : 0ull));
    const double scaled = __dmul_rn(f, pow2((u32)(shift < 960 ? shift : 960)));
    const double mag = shift >= 961 ? __longlong_as_double(0x7ff0000000000000ll) : scaled;
    out[c] = negative ? -mag : mag;
}
