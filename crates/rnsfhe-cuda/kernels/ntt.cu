// Negacyclic NTT of every limb of a polynomial in one launch per phase
// (001 §IV-C: several stages per kernel in shared memory instead of one
// pass over device memory per radix-2 stage). The butterflies, the lazy
// ranges and the twiddle order are those of rnsfhe-math's NttTable
// (crates/rnsfhe-math/src/ntt.rs): Cooley-Tukey forward taking natural
// order to bit-reversed evaluations with twiddles fwd[m + i] = psi^brv(m+i),
// Gentleman-Sande inverse with inv[h + i] and n^{-1} fused into the last
// stage. Values stay in [0, 4p) (forward) or [0, 2p) (inverse) between
// stages and are corrected to [0, p) at the end, so the output words equal
// the CPU's.
//
// A transform of size n = 2^log_n runs as
//  * n <= 2^CHUNK_LOG: one `*_chunk` launch doing every stage;
//  * otherwise forward: `ntt_fwd_cols` (the first S1 = log_n - CHUNK_LOG
//    stages: each of the n >> S1 columns of stride n >> S1 is an
//    independent 2^S1-point problem) then `ntt_fwd_chunk` (the remaining
//    stages on contiguous chunks of 2^CHUNK_LOG words); inverse: the chunk
//    kernel first, then the column kernel with the fused scaling.
// gridDim.y is the limb; `rows[limb]` names the prime (index into `mods`
// and into the twiddle tables, `n` entries per prime).

#define CHUNK_LOG 11

__device__ __forceinline__ void fwd_bfly(u64& x, u64& y, u64 w, u64 ws, u64 p) {
    u64 two_p = 2 * p;
    u64 u = csub(x, two_p);
    u64 v = shoup_lazy(y, w, ws, p);
    x = u + v;
    y = u + two_p - v;
}

__device__ __forceinline__ void fwd_bfly_last(u64& x, u64& y, u64 w, u64 ws, u64 p) {
    u64 two_p = 2 * p;
    u64 u = csub(x, two_p);
    u64 v = shoup_lazy(y, w, ws, p);
    u64 s = u + v;
    u64 d = u + two_p - v;
    x = csub(csub(s, two_p), p);
    y = csub(csub(d, two_p), p);
}

__device__ __forceinline__ void inv_bfly(u64& x, u64& y, u64 w, u64 ws, u64 p) {
    u64 two_p = 2 * p;
    u64 u = x;
    u64 v = y;
    x = csub(u + v, two_p);
    y = shoup_lazy(u + two_p - v, w, ws, p);
}

__device__ __forceinline__ void inv_bfly_last(u64& x, u64& y, u64 ni, u64 nis, u64 wl,
                                              u64 wls, u64 p) {
    u64 two_p = 2 * p;
    u64 u = x;
    u64 v = y;
    x = csub(shoup_lazy(u + v, ni, nis, p), p);
    y = csub(shoup_lazy(u + two_p - v, wl, wls, p), p);
}

// Forward stages [0, s1) on columns. Block: `tc` consecutive columns of the
// R = 2^s1 rows, staged in shared memory as sh[r * tc + cc].
extern "C" __global__ void ntt_fwd_cols(u64* data, const u32* rows, const Mod* mods,
                                        const u64* tw, const u64* tws, u32 log_n, u32 s1,
                                        u32 tc) {
    extern __shared__ u64 sh[];
    const u32 n = 1u << log_n;
    const u32 r_count = 1u << s1;
    const u32 stride = n >> s1;
    const u32 limb = blockIdx.y;
    const u32 prime = rows[limb];
    const u64 p = mods[prime].p;
    const u64* w_tab = tw + (u64)prime * n;
    const u64* ws_tab = tws + (u64)prime * n;
    u64* a = data + (u64)limb * n;
    const u32 col0 = blockIdx.x * tc;
    const u32 total = r_count * tc;
    for (u32 idx = threadIdx.x; idx < total; idx += blockDim.x) {
        u32 r = idx / tc;
        u32 cc = idx - r * tc;
        sh[idx] = a[col0 + cc + (u64)r * stride];
    }
    __syncthreads();
    for (u32 s = 0; s < s1; ++s) {
        const u32 t_r = r_count >> (s + 1);
        const u32 m = 1u << s;
        for (u32 b = threadIdx.x; b < total / 2; b += blockDim.x) {
            u32 br = b / tc;
            u32 cc = b - br * tc;
            u32 i = br / t_r;
            u32 jr = br - i * t_r;
            u32 lo = i * 2 * t_r + jr;
            u32 hi = lo + t_r;
            u64 x = sh[lo * tc + cc];
            u64 y = sh[hi * tc + cc];
            fwd_bfly(x, y, w_tab[m + i], ws_tab[m + i], p);
            sh[lo * tc + cc] = x;
            sh[hi * tc + cc] = y;
        }
        __syncthreads();
    }
    for (u32 idx = threadIdx.x; idx < total; idx += blockDim.x) {
        u32 r = idx / tc;
        u32 cc = idx - r * tc;
        a[col0 + cc + (u64)r * stride] = sh[idx];
    }
}

// Forward stages [s_begin, log_n) on contiguous chunks of 2^(log_n - s_begin)
// words (chunk index blockIdx.x); the last stage corrects to [0, p).
extern "C" __global__ void ntt_fwd_chunk(u64* data, const u32* rows, const Mod* mods,
                                         const u64* tw, const u64* tws, u32 log_n,
                                         u32 s_begin) {
    extern __shared__ u64 sh[];
    const u32 n = 1u << log_n;
    const u32 cs = n >> s_begin;
    const u32 limb = blockIdx.y;
    const u32 prime = rows[limb];
    const u64 p = mods[prime].p;
    const u64* w_tab = tw + (u64)prime * n;
    const u64* ws_tab = tws + (u64)prime * n;
    u64* a = data + (u64)limb * n + (u64)blockIdx.x * cs;
    for (u32 idx = threadIdx.x; idx < cs; idx += blockDim.x) sh[idx] = a[idx];
    __syncthreads();
    for (u32 s = s_begin; s < log_n; ++s) {
        const u32 t = n >> (s + 1);
        const u32 m = 1u << s;
        const u32 blocks_per_chunk = cs / (2 * t);
        const bool last = (s + 1 == log_n);
        for (u32 b = threadIdx.x; b < cs / 2; b += blockDim.x) {
            u32 il = b / t;
            u32 j = b - il * t;
            u32 lo = il * 2 * t + j;
            u32 hi = lo + t;
            u32 i = blockIdx.x * blocks_per_chunk + il;
            u64 x = sh[lo];
            u64 y = sh[hi];
            if (last) {
                fwd_bfly_last(x, y, w_tab[m + i], ws_tab[m + i], p);
            } else {
                fwd_bfly(x, y, w_tab[m + i], ws_tab[m + i], p);
            }
            sh[lo] = x;
            sh[hi] = y;
        }
        __syncthreads();
    }
    for (u32 idx = threadIdx.x; idx < cs; idx += blockDim.x) a[idx] = sh[idx];
}

// Inverse stages with t = 1 .. 2^(log_chunk - 1) on contiguous chunks of
// 2^log_chunk words. When the chunk is the whole transform the last of them
// is the fused stage with n^{-1} (ninv) and psi^{-n/2} n^{-1} (invlast).
extern "C" __global__ void ntt_inv_chunk(u64* data, const u32* rows, const Mod* mods,
                                         const u64* itw, const u64* itws, const u64* ninv,
                                         const u64* ninvs, const u64* invlast,
                                         const u64* invlasts, u32 log_n, u32 log_chunk) {
    extern __shared__ u64 sh[];
    const u32 n = 1u << log_n;
    const u32 cs = 1u << log_chunk;
    const u32 limb = blockIdx.y;
    const u32 prime = rows[limb];
    const u64 p = mods[prime].p;
    const u64* w_tab = itw + (u64)prime * n;
    const u64* ws_tab = itws + (u64)prime * n;
    u64* a = data + (u64)limb * n + (u64)blockIdx.x * cs;
    for (u32 idx = threadIdx.x; idx < cs; idx += blockDim.x) sh[idx] = a[idx];
    __syncthreads();
    for (u32 s = 0; s < log_chunk; ++s) {
        const u32 t = 1u << s;
        const u32 h = n >> (s + 1);
        const u32 blocks_per_chunk = cs / (2 * t);
        for (u32 b = threadIdx.x; b < cs / 2; b += blockDim.x) {
            u32 il = b / t;
            u32 j = b - il * t;
            u32 lo = il * 2 * t + j;
            u32 hi = lo + t;
            u64 x = sh[lo];
            u64 y = sh[hi];
            if (h == 1) {
                inv_bfly_last(x, y, ninv[prime], ninvs[prime], invlast[prime], invlasts[prime], p);
            } else {
                u32 i = blockIdx.x * blocks_per_chunk + il;
                inv_bfly(x, y, w_tab[h + i], ws_tab[h + i], p);
            }
            sh[lo] = x;
            sh[hi] = y;
        }
        __syncthreads();
    }
    for (u32 idx = threadIdx.x; idx < cs; idx += blockDim.x) a[idx] = sh[idx];
}

// Inverse stages [log_chunk, log_n) on columns of stride 2^log_chunk (R =
// 2^(log_n - log_chunk) rows, `tc` columns per block); the last one is fused
// with the scaling by n^{-1}.
extern "C" __global__ void ntt_inv_cols(u64* data, const u32* rows, const Mod* mods,
                                        const u64* itw, const u64* itws, const u64* ninv,
                                        const u64* ninvs, const u64* invlast,
                                        const u64* invlasts, u32 log_n, u32 log_chunk,
                                        u32 tc) {
    extern __shared__ u64 sh[];
    const u32 n = 1u << log_n;
    const u32 stride = 1u << log_chunk;
    const u32 r_count = n >> log_chunk;
    const u32 limb = blockIdx.y;
    const u32 prime = rows[limb];
    const u64 p = mods[prime].p;
    const u64* w_tab = itw + (u64)prime * n;
    const u64* ws_tab = itws + (u64)prime * n;
    u64* a = data + (u64)limb * n;
    const u32 col0 = blockIdx.x * tc;
    const u32 total = r_count * tc;
    for (u32 idx = threadIdx.x; idx < total; idx += blockDim.x) {
        u32 r = idx / tc;
        u32 cc = idx - r * tc;
        sh[idx] = a[col0 + cc + (u64)r * stride];
    }
    __syncthreads();
    for (u32 s = log_chunk; s < log_n; ++s) {
        const u32 t_r = 1u << (s - log_chunk);
        const u32 h = n >> (s + 1);
        for (u32 b = threadIdx.x; b < total / 2; b += blockDim.x) {
            u32 br = b / tc;
            u32 cc = b - br * tc;
            u32 i = br / t_r;
            u32 jr = br - i * t_r;
            u32 lo = i * 2 * t_r + jr;
            u32 hi = lo + t_r;
            u64 x = sh[lo * tc + cc];
            u64 y = sh[hi * tc + cc];
            if (h == 1) {
                inv_bfly_last(x, y, ninv[prime], ninvs[prime], invlast[prime], invlasts[prime], p);
            } else {
                inv_bfly(x, y, w_tab[h + i], ws_tab[h + i], p);
            }
            sh[lo * tc + cc] = x;
            sh[hi * tc + cc] = y;
        }
        __syncthreads();
    }
    for (u32 idx = threadIdx.x; idx < total; idx += blockDim.x) {
        u32 r = idx / tc;
        u32 cc = idx - r * tc;
        a[col0 + cc + (u64)r * stride] = sh[idx];
    }
}
