// The special FFT of the CKKS canonical embedding on the device
// (rnsfhe_math::embedding::CkksEmbedding; Cheon-Kim-Kim-Song 2017 §3.1,
// 001 §III-A), for l = n/2 slots, on split complex vectors (re at buf,
// im at buf + l): the same radix-2 butterflies with the same twiddles in
// the same order as the CPU, every product and sum rounded on its own
// (no fused multiply-add), so the values are the CPU's bit for bit.
// One thread per butterfly; one launch per level.

__device__ __forceinline__ u32 brev_bits(u32 i, u32 bits) {
    return bits == 0 ? 0u : (__brev(i) >> (32 - bits));
}

// Decoding, before the levels: slot bitrev(i) = (c_i, c_{i+l}) / scale
// (the coefficients times inv = 1/scale, as decode_real, then the
// bit-reversed gather of decode_slots).
extern "C" __global__ void ckks_decode_gather(double* buf, const double* coeffs, double inv,
                                              u32 l, u32 bits) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= l) return;
    const u32 j = brev_bits(i, bits);
    buf[j] = __dmul_rn(coeffs[i], inv);
    buf[l + j] = __dmul_rn(coeffs[i + l], inv);
}

// One level of the forward special FFT (decode_slots), half block h:
// (x, y) <- (x + y t, x - y t), t = tw[h - 1 + j] (tw_re, tw_im).
extern "C" __global__ void ckks_fft_level(double* buf, const double* tw_re,
                                          const double* tw_im, u32 h, u32 l) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= l / 2) return;
    const u32 blk = t / h, j = t - blk * h;
    const u32 a = blk * 2 * h + j, b = a + h;
    double* re = buf;
    double* im = buf + l;
    const double tr = tw_re[h - 1 + j], ti = tw_im[h - 1 + j];
    const double yr = re[b], yi = im[b];
    const double vr = __dsub_rn(__dmul_rn(yr, tr), __dmul_rn(yi, ti));
    const double vi = __dadd_rn(__dmul_rn(yr, ti), __dmul_rn(yi, tr));
    const double ur = re[a], ui = im[a];
    re[a] = __dadd_rn(ur, vr);
    im[a] = __dadd_rn(ui, vi);
    re[b] = __dsub_rn(ur, vr);
    im[b] = __dsub_rn(ui, vi);
}

// One level of the inverse special FFT (inverse_special_fft), half block
// h: (u, v) <- (u + v, (u - v) conj(t)).
extern "C" __global__ void ckks_ifft_level(double* buf, const double* tw_re,
                                           const double* tw_im, u32 h, u32 l) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= l / 2) return;
    const u32 blk = t / h, j = t - blk * h;
    const u32 a = blk * 2 * h + j, b = a + h;
    double* re = buf;
    double* im = buf + l;
    const double ur = re[a], ui = im[a], vr = re[b], vi = im[b];
    re[a] = __dadd_rn(ur, vr);
    im[a] = __dadd_rn(ui, vi);
    const double dr = __dsub_rn(ur, vr), di = __dsub_rn(ui, vi);
    const double tr = tw_re[h - 1 + j], ti = tw_im[h - 1 + j];
    re[b] = __dadd_rn(__dmul_rn(dr, tr), __dmul_rn(di, ti));
    im[b] = __dsub_rn(__dmul_rn(di, tr), __dmul_rn(dr, ti));
}

// Encoding, after the levels: coefficient j (< n = 2l) is the bit-reversed
// re (j < l) or im (j >= l) entry times inv_l = 1/l (encode_slots), then
// r = round(x scale), half away from zero (F64Crt::round_scaled), written
// as a double. Where y = x scale is not finite or |r| does not fit
// (|r| < bound, or <= when not `strict`), status gets bit 0: the caller
// then takes the CPU's error.
extern "C" __global__ void ckks_encode_round(double* out, const double* buf, u32 l, u32 bits,
                                             double inv_l, double scale, double bound,
                                             u32 strict, u32* status) {
    const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= 2 * l) return;
    const u32 src = j < l ? brev_bits(j, bits) : l + brev_bits(j - l, bits);
    const double x = __dmul_rn(buf[src], inv_l);
    const double y = __dmul_rn(x, scale);
    const double r = round(y);
    const double a = fabs(r);
    const bool fits = strict ? (a < bound) : (a <= bound);
    if (!(isfinite(y) && fits)) atomicOr(status, 1u);
    out[j] = r;
}
