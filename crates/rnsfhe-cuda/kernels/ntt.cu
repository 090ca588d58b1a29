// Negacyclic NTT of many polynomials at once: one launch per phase
// transforms every limb of up to NTT_MAX_POLYS polynomials (gridDim.y the
// limb, gridDim.z the polynomial), so an operation's NTTs fill the GPU
// instead of one small launch per polynomial (001 §IV-C: several stages per
// kernel on chip; 000 §V.B: batching the residue polynomials).
//
// The butterflies, lazy ranges and twiddle order are those of rnsfhe-math's
// NttTable (crates/rnsfhe-math/src/ntt.rs): Cooley-Tukey forward from
// natural order to bit-reversed evaluations with twiddles fwd[m + i] =
// psi^brv(m+i), Gentleman-Sande inverse with inv[h + i] and n^{-1} fused
// into the last stage. Values stay in [0, 4p) (forward) or [0, 2p)
// (inverse) between stages and the last stage makes them canonical, so the
// output words equal the CPU's whatever the order of the butterflies.
//
// A transform of size n = 2^log_n is split into phases of S stages; in a
// phase the n words of a limb are 2^(log_n - S) independent sub-problems of
// 2^S words:
//  * "cols" (forward first phase, inverse last): sub-problem c holds the
//    words c + (k << (log_n - S)), k < 2^S (the stages on the top bits);
//  * "chunk" (forward last phase, inverse first): sub-problem c holds the
//    contiguous words (c << S) + k.
// Polynomials come as (destination, source) pairs, in up to eight argument
// pairs or a device table (batches); the first phase of an out-of-place
// transform reads the source, so a change of form needs no copy. A block
// stages 2^spb_log sub-problems in shared memory (coalesced loads:
// consecutive threads read consecutive words) and runs the S stages in
// rounds of up to three: in a round each thread loads 8 words into
// registers (one radix-8 group, or 2 radix-4 / 4 radix-2 groups), does the
// round's stages there and writes them back, so a phase has ceil(S/3)
// barriers instead of S. All index arithmetic is shifts and masks.

#define NTT_MAX_POLYS 8

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

// The destination and source polynomials of this block: pair blockIdx.z of
// the device table `tab` (dst, src words) when it is given, else of the
// eight argument pairs. A zero source means in place.
__device__ __forceinline__ u64 ntt_pick(u64 x0, u64 x1, u64 x2, u64 x3, u64 x4, u64 x5,
                                        u64 x6, u64 x7) {
    switch (blockIdx.z) {
        case 0: return x0;
        case 1: return x1;
        case 2: return x2;
        case 3: return x3;
        case 4: return x4;
        case 5: return x5;
        case 6: return x6;
        default: return x7;
    }
}

#define NTT_POLY_PARAMS                                                                    \
    const u64 *__restrict__ tab, u64 d0, u64 d1, u64 d2, u64 d3, u64 d4, u64 d5, u64 d6, \
        u64 d7, u64 s0, u64 s1, u64 s2, u64 s3, u64 s4, u64 s5, u64 s6, u64 s7

#define NTT_POLY_ARGS tab, d0, d1, d2, d3, d4, d5, d6, d7, s0, s1, s2, s3, s4, s5, s6, s7

#define NTT_POLY_PROLOGUE                                                        \
    u64 dst_w, src_w;                                                            \
    if (tab != nullptr) {                                                        \
        dst_w = tab[2 * (u64)blockIdx.z];                                        \
        src_w = tab[2 * (u64)blockIdx.z + 1];                                    \
    } else {                                                                     \
        dst_w = ntt_pick(d0, d1, d2, d3, d4, d5, d6, d7);                        \
        src_w = ntt_pick(s0, s1, s2, s3, s4, s5, s6, s7);                        \
    }                                                                            \
    if (src_w == 0 || use_src == 0) src_w = dst_w;                               \
    u64* a = (u64*)dst_w + (u64)blockIdx.y * n;                                  \
    const u64* a_in = (const u64*)src_w + (u64)blockIdx.y * n;

// Shared-memory slot of word k of the block's sub-problem j. "cols" tiles
// are k-major (consecutive threads take consecutive sub-problems); "chunk"
// tiles are j-major with one pad word per 8, so the stride-8 accesses of a
// round on the low bits do not hit the same bank.
__device__ __forceinline__ u32 ntt_slot(u32 j, u32 k, bool cols, u32 spb_log, u32 s_log) {
    return cols ? (k << spb_log) + j : j * (9u << (s_log - 3)) + k + (k >> 3);
}

// Global word of word k of sub-problem c within a limb.
__device__ __forceinline__ u32 ntt_word(u32 c, u32 k, bool cols, u32 log_n, u32 s_log) {
    return cols ? c + (k << (log_n - s_log)) : (c << s_log) + k;
}

// Staging of a tile (exactly 8 words per thread): coalesced in both
// layouts, and all eight global loads of a thread issued before the first
// is used, so their latencies overlap.
__device__ __forceinline__ void ntt_coords(u32 idx, bool cols, u32 s_log, u32 spb_log, u32& j,
                                           u32& k) {
    if (cols) {
        j = idx & ((1u << spb_log) - 1);
        k = idx >> spb_log;
    } else {
        j = idx >> s_log;
        k = idx & ((1u << s_log) - 1);
    }
}

__device__ __forceinline__ void ntt_load(u64* sh, const u64* a, bool cols, u32 log_n,
                                         u32 s_log, u32 spb_log, u32 c0) {
    u64 v[8];
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        u32 j, k;
        ntt_coords(threadIdx.x + r * blockDim.x, cols, s_log, spb_log, j, k);
        v[r] = a[ntt_word(c0 + j, k, cols, log_n, s_log)];
    }
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        u32 j, k;
        ntt_coords(threadIdx.x + r * blockDim.x, cols, s_log, spb_log, j, k);
        sh[ntt_slot(j, k, cols, spb_log, s_log)] = v[r];
    }
}

__device__ __forceinline__ void ntt_store(const u64* sh, u64* a, bool cols, u32 log_n,
                                          u32 s_log, u32 spb_log, u32 c0) {
    u64 v[8];
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        u32 j, k;
        ntt_coords(threadIdx.x + r * blockDim.x, cols, s_log, spb_log, j, k);
        v[r] = sh[ntt_slot(j, k, cols, spb_log, s_log)];
    }
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        u32 j, k;
        ntt_coords(threadIdx.x + r * blockDim.x, cols, s_log, spb_log, j, k);
        a[ntt_word(c0 + j, k, cols, log_n, s_log)] = v[r];
    }
}

// One forward round of R stages (local stages s .. s+R-1, bits S-1-s down
// to S-R-s of k) for thread u of sub-problem j (global index c). A radix-2^R
// group needs 2^R - 1 twiddles (one at its first stage, two at the next,
// ...): all of them are loaded before any butterfly, so the round waits for
// memory once, not once per butterfly.
//
// FINAL: 0 when the phase's place is known only at run time (the last
// global stage is g0 + s + q + 1 == log_n), 1 for a phase known to end the
// transform, 2 for one known not to (the specialised kernels: a forward
// transform runs its column phase first and its chunk phase last).
template <int R, int FINAL>
__device__ __forceinline__ void fwd_round(u64* sh, u32 j, u32 c, u32 u, bool cols, u32 log_n,
                                          u32 s_log, u32 spb_log, u32 g0, u32 s,
                                          const u64* __restrict__ w_tab,
                                          const u64* __restrict__ ws_tab, u64 p) {
    constexpr int G = 8 >> R;
    constexpr int E = 1 << R;
    const u32 lowpos = s_log - R - s;
#pragma unroll
    for (int v = 0; v < G; ++v) {
        const u32 g = u * G + v;
        const u32 b = ((g >> lowpos) << (lowpos + R)) | (g & ((1u << lowpos) - 1));
        // Twiddle t of stage q serves the butterflies with e >> (R - q) == t.
        u64 w[E - 1], ws[E - 1];
#pragma unroll
        for (int q = 0; q < R; ++q) {
#pragma unroll
            for (int t = 0; t < (1 << q); ++t) {
                const u32 k = b + ((u32)(t << (R - q)) << lowpos);
                u32 i = k >> (s_log - s - q);
                if (!cols) i |= c << (s + q);
                const u32 ti = (1u << (g0 + s + q)) + i;
                w[(1 << q) - 1 + t] = w_tab[ti];
                ws[(1 << q) - 1 + t] = ws_tab[ti];
            }
        }
        u64 x[E];
#pragma unroll
        for (int e = 0; e < E; ++e) x[e] = sh[ntt_slot(j, b + ((u32)e << lowpos), cols, spb_log, s_log)];
#pragma unroll
        for (int q = 0; q < R; ++q) {
            const int half = 1 << (R - 1 - q);
            const bool last = FINAL == 0 ? g0 + s + q + 1 == log_n
                                         : FINAL == 1 && s + q + 1 == s_log;
#pragma unroll
            for (int e = 0; e < E; ++e) {
                if (e & half) continue;
                const int slot = (1 << q) - 1 + (e >> (R - q));
                if (last) {
                    fwd_bfly_last(x[e], x[e + half], w[slot], ws[slot], p);
                } else {
                    fwd_bfly(x[e], x[e + half], w[slot], ws[slot], p);
                }
            }
        }
#pragma unroll
        for (int e = 0; e < E; ++e) sh[ntt_slot(j, b + ((u32)e << lowpos), cols, spb_log, s_log)] = x[e];
    }
}

// One inverse round of R stages (local stages s .. s+R-1 on bits s ..
// s+R-1 of k); twiddles loaded first as in the forward round (stage q needs
// 2^(R-1-q) of them; the last global stage uses n^{-1} instead).
template <int R, int FINAL>
__device__ __forceinline__ void inv_round(u64* sh, u32 j, u32 c, u32 u, bool cols, u32 log_n,
                                          u32 s_log, u32 spb_log, u32 g0, u32 s,
                                          const u64* __restrict__ w_tab,
                                          const u64* __restrict__ ws_tab, u64 ni, u64 nis,
                                          u64 wl, u64 wls, u64 p) {
    constexpr int G = 8 >> R;
    constexpr int E = 1 << R;
#pragma unroll
    for (int v = 0; v < G; ++v) {
        const u32 g = u * G + v;
        const u32 b = ((g >> s) << (s + R)) | (g & ((1u << s) - 1));
        // Twiddle t of stage q serves the butterflies with e >> (q + 1) == t;
        // stage q's twiddles start at E - 2^(R - q).
        u64 w[E - 1], ws[E - 1];
#pragma unroll
        for (int q = 0; q < R; ++q) {
            const u32 gs = g0 + s + q;
            const bool last_stage =
                FINAL == 0 ? gs + 1 == log_n : FINAL == 1 && s + q + 1 == s_log;
            if (last_stage) continue;
#pragma unroll
            for (int t = 0; t < (1 << (R - 1 - q)); ++t) {
                const u32 k = b + ((u32)(t << (q + 1)) << s);
                u32 i = k >> (s + q + 1);
                if (!cols) i |= c << (s_log - s - q - 1);
                const u32 ti = (1u << (log_n - gs - 1)) + i;  // h = n >> (gs + 1)
                w[E - (1 << (R - q)) + t] = w_tab[ti];
                ws[E - (1 << (R - q)) + t] = ws_tab[ti];
            }
        }
        u64 x[E];
#pragma unroll
        for (int e = 0; e < E; ++e) x[e] = sh[ntt_slot(j, b + ((u32)e << s), cols, spb_log, s_log)];
#pragma unroll
        for (int q = 0; q < R; ++q) {
            const int half = 1 << q;
            const u32 gs = g0 + s + q;
            const bool last_stage =
                FINAL == 0 ? gs + 1 == log_n : FINAL == 1 && s + q + 1 == s_log;
#pragma unroll
            for (int e = 0; e < E; ++e) {
                if (e & half) continue;
                if (last_stage) {
                    inv_bfly_last(x[e], x[e + half], ni, nis, wl, wls, p);
                } else {
                    const int slot = E - (1 << (R - q)) + (e >> (q + 1));
                    inv_bfly(x[e], x[e + half], w[slot], ws[slot], p);
                }
            }
        }
#pragma unroll
        for (int e = 0; e < E; ++e) sh[ntt_slot(j, b + ((u32)e << s), cols, spb_log, s_log)] = x[e];
    }
}

// The thread's sub-problem j within the block and its index u within it.
__device__ __forceinline__ void ntt_thread(bool cols, u32 s_log, u32 spb_log, u32& j, u32& u) {
    if (cols) {
        j = threadIdx.x & ((1u << spb_log) - 1);
        u = threadIdx.x >> spb_log;
    } else {
        j = threadIdx.x >> (s_log - 3);
        u = threadIdx.x & ((1u << (s_log - 3)) - 1);
    }
}

// The shared parts of the two phase kernels (macros, so that each kernel
// compiles to the same code as when they were written out in it).
//
// The block's prime (row blockIdx.y) and its twiddle tables TW, TWS; the
// shared tile `sh`.
#define NTT_PHASE_TABLES(TW, TWS)                   \
    extern __shared__ u64 sh[];                     \
    const bool cols = S ? COLS != 0 : cols_flag != 0; \
    const u32 s_log = S ? (u32)S : s_log_rt;        \
    const u32 n = 1u << log_n;                      \
    const u32 prime = rows[blockIdx.y];             \
    const u64 p = mods[prime].p;                    \
    const u64* w_tab = TW + (u64)prime * n;         \
    const u64* ws_tab = TWS + (u64)prime * n;

// The polynomials of blockIdx.z, the tile of columns c0.. loaded into `sh`,
// this thread's sub-problem j, its index u and its column c.
#define NTT_PHASE_LOAD                                       \
    NTT_POLY_PROLOGUE                                        \
    const u32 c0 = blockIdx.x << spb_log;                    \
    ntt_load(sh, a_in, cols, log_n, s_log, spb_log, c0);     \
    __syncthreads();                                         \
    u32 j, u;                                                \
    ntt_thread(cols, s_log, spb_log, j, u);                  \
    const u32 c = c0 + j;

// The S = s_log local stages as rounds of 3 stages, then one of 2 or 1:
// ROUND<R>(args) with the stage `s` the round starts at, a barrier after
// each round.
#define NTT_PHASE_ROUNDS(ROUND, ...)           \
    u32 s = 0;                                 \
    _Pragma("unroll")                          \
    for (; s + 3 <= s_log; s += 3) {           \
        ROUND<3, FINAL>(__VA_ARGS__);          \
        __syncthreads();                       \
    }                                          \
    if (s_log - s == 2) {                      \
        ROUND<2, FINAL>(__VA_ARGS__);          \
        __syncthreads();                       \
    } else if (s_log - s == 1) {               \
        ROUND<1, FINAL>(__VA_ARGS__);          \
        __syncthreads();                       \
    }

// The two phase bodies are templates on the phase's stage count S and
// layout COLS (S = 0: both from the arguments), so that the phases of the
// common sizes compile with every shift, mask and round count constant:
// the generic kernels `ntt_fwd_phase` / `ntt_inv_phase` take any shape,
// and `ntt_fwd_phase_s<S><c|k>` / `ntt_inv_phase_s<S><c|k>` (columns or
// chunks) the phases of S = 7 and 8 stages (n = 2^14, 2^15, 2^16 and half of
// 2^13 and 2^17), with the same arguments and the same words out. (Each
// specialisation adds about a second of NVRTC time when a device opens.)
//
// Both phase kernels cap registers at 64 (four 256-thread blocks per SM):
// at 72 the compiler's choice left three, and the transform is latency
// bound at that occupancy.
//
// Forward phase: local stages 0 .. S-1 are global stages g0 .. g0+S-1.
// Block: 2^(S + spb_log - 3) threads; grid (2^(log_n - S - spb_log), limbs,
// polys). Reads the source polynomial, writes the destination (in place
// when they are one; the host passes sources to the first phase only).
template <int S, int COLS>
__device__ __forceinline__ void ntt_fwd_body(NTT_POLY_PARAMS, const u32* __restrict__ rows,
                                             const Mod* __restrict__ mods,
                                             const u64* __restrict__ tw,
                                             const u64* __restrict__ tws, u32 log_n,
                                             u32 s_log_rt, u32 g0, u32 cols_flag, u32 spb_log,
                                             u32 use_src) {
    // Specialised: the column phase comes first, the chunk phase last.
    constexpr int FINAL = S == 0 ? 0 : (COLS ? 2 : 1);
    NTT_PHASE_TABLES(tw, tws)
    NTT_PHASE_LOAD
    NTT_PHASE_ROUNDS(fwd_round, sh, j, c, u, cols, log_n, s_log, spb_log, g0, s, w_tab, ws_tab,
                     p)
    ntt_store(sh, a, cols, log_n, s_log, spb_log, c0);
}

// Inverse phase: local stages 0 .. S-1 are global stages g0 .. g0+S-1
// (stage g has half-distance 2^g); global stage log_n - 1 is the one fused
// with n^{-1} (ninv) and psi^{-n/2} n^{-1} (invlast).
template <int S, int COLS>
__device__ __forceinline__ void ntt_inv_body(NTT_POLY_PARAMS, const u32* __restrict__ rows,
                                             const Mod* __restrict__ mods,
                                             const u64* __restrict__ itw,
                                             const u64* __restrict__ itws,
                                             const u64* __restrict__ ninv,
                                             const u64* __restrict__ ninvs,
                                             const u64* __restrict__ invlast,
                                             const u64* __restrict__ invlasts, u32 log_n,
                                             u32 s_log_rt, u32 g0, u32 cols_flag, u32 spb_log,
                                             u32 use_src) {
    // Specialised: the chunk phase comes first, the column phase last (the
    // host runs one-phase chunk transforms with the generic kernel).
    constexpr int FINAL = S == 0 ? 0 : (COLS ? 1 : 2);
    NTT_PHASE_TABLES(itw, itws)
    const u64 ni = ninv[prime], nis = ninvs[prime];
    const u64 wl = invlast[prime], wls = invlasts[prime];
    NTT_PHASE_LOAD
    NTT_PHASE_ROUNDS(inv_round, sh, j, c, u, cols, log_n, s_log, spb_log, g0, s, w_tab, ws_tab,
                     ni, nis, wl, wls, p)
    ntt_store(sh, a, cols, log_n, s_log, spb_log, c0);
}

#define NTT_FWD_KERNEL(NAME, S, COLS)                                                         \
    extern "C" __global__ void __launch_bounds__(256, 4)                                     \
        NAME(NTT_POLY_PARAMS, const u32* __restrict__ rows, const Mod* __restrict__ mods,    \
             const u64* __restrict__ tw, const u64* __restrict__ tws, u32 log_n, u32 s_log,  \
             u32 g0, u32 cols_flag, u32 spb_log, u32 use_src) {                              \
        ntt_fwd_body<S, COLS>(NTT_POLY_ARGS, rows, mods, tw, tws, log_n, s_log, g0,          \
                              cols_flag, spb_log, use_src);                                  \
    }

#define NTT_INV_KERNEL(NAME, S, COLS)                                                         \
    extern "C" __global__ void __launch_bounds__(256, 4)                                     \
        NAME(NTT_POLY_PARAMS, const u32* __restrict__ rows, const Mod* __restrict__ mods,    \
             const u64* __restrict__ itw, const u64* __restrict__ itws,                      \
             const u64* __restrict__ ninv, const u64* __restrict__ ninvs,                    \
             const u64* __restrict__ invlast, const u64* __restrict__ invlasts, u32 log_n,   \
             u32 s_log, u32 g0, u32 cols_flag, u32 spb_log, u32 use_src) {                   \
        ntt_inv_body<S, COLS>(NTT_POLY_ARGS, rows, mods, itw, itws, ninv, ninvs, invlast,    \
                              invlasts, log_n, s_log, g0, cols_flag, spb_log, use_src);      \
    }

NTT_FWD_KERNEL(ntt_fwd_phase, 0, 0)
NTT_INV_KERNEL(ntt_inv_phase, 0, 0)
NTT_FWD_KERNEL(ntt_fwd_phase_s7c, 7, 1)
NTT_FWD_KERNEL(ntt_fwd_phase_s7k, 7, 0)
NTT_FWD_KERNEL(ntt_fwd_phase_s8c, 8, 1)
NTT_FWD_KERNEL(ntt_fwd_phase_s8k, 8, 0)
NTT_INV_KERNEL(ntt_inv_phase_s7c, 7, 1)
NTT_INV_KERNEL(ntt_inv_phase_s7k, 7, 0)
NTT_INV_KERNEL(ntt_inv_phase_s8c, 8, 1)
NTT_INV_KERNEL(ntt_inv_phase_s8k, 8, 0)
