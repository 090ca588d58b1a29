// Shared device arithmetic of every rnsfhe-cuda kernel: 64-bit words,
// the same Barrett and Shoup formulas as rnsfhe-math's `Modulus`
// (crates/rnsfhe-math/src/modulus.rs), so every canonical residue the
// kernels write is the word the CPU path writes.
//
// This header is prepended to every .cu file by the host (NVRTC gets one
// self-contained source per module; no include paths are needed).

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// One modulus p < 2^61 with the constants of rnsfhe_math::Modulus:
// ratio64 = floor(2^64 / p) (2^(64 - log2 p) for a power of two),
// r64 = 2^64 mod p and r64s = floor(r64 * 2^64 / p) (its Shoup word).
// Layout shared with the host struct `DeviceModulus` (4 words).
struct Mod {
    u64 p;
    u64 ratio64;
    u64 r64;
    u64 r64s;
};

// x - m if x >= m else x, for x < 2m and m < 2^62, without a branch.
__device__ __forceinline__ u64 csub(u64 x, u64 m) {
    u64 d = x - m;
    return d + (m & (u64)((i64)d >> 63));
}

__device__ __forceinline__ u64 mulhi(u64 a, u64 b) { return __umul64hi(a, b); }

__device__ __forceinline__ u64 mod_add(u64 a, u64 b, u64 p) { return csub(a + b, p); }

__device__ __forceinline__ u64 mod_sub(u64 a, u64 b, u64 p) {
    u64 d = a - b;
    return d + (p & (u64)((i64)d >> 63));
}

__device__ __forceinline__ u64 mod_neg(u64 a, u64 p) { return a == 0 ? 0 : p - a; }

// Shoup product a*w mod p for any word a and w < p with ws = floor(w 2^64 / p):
// result in [0, 2p) (Modulus::mul_shoup_lazy).
__device__ __forceinline__ u64 shoup_lazy(u64 a, u64 w, u64 ws, u64 p) {
    u64 q = mulhi(a, ws);
    return a * w - q * p;
}

__device__ __forceinline__ u64 shoup(u64 a, u64 w, u64 ws, u64 p) {
    return csub(shoup_lazy(a, w, ws, p), p);
}

// Barrett reduction of a word without the final correction: [0, 2p).
__device__ __forceinline__ u64 reduce_lazy(u64 x, const Mod m) {
    return x - mulhi(x, m.ratio64) * m.p;
}

__device__ __forceinline__ u64 reduce64(u64 x, const Mod m) {
    return csub(reduce_lazy(x, m), m.p);
}

// (hi 2^64 + lo) mod p, canonical (Modulus::reduce_u128): the high word by
// Shoup's product with [2^64]_p, the low word by Barrett, two corrections.
__device__ __forceinline__ u64 reduce128(u64 lo, u64 hi, const Mod m) {
    u64 h = shoup_lazy(hi, m.r64, m.r64s, m.p);
    u64 l = reduce_lazy(lo, m);
    return csub(csub(h + l, 2 * m.p), m.p);
}

__device__ __forceinline__ u64 mod_mul(u64 a, u64 b, const Mod m) {
    return reduce128(a * b, mulhi(a, b), m);
}

// (a b + c) mod p for any words (Modulus::mul_add).
__device__ __forceinline__ u64 mod_mul_add(u64 a, u64 b, u64 c, const Mod m) {
    u64 lo = a * b;
    u64 hi = mulhi(a, b);
    u64 lo2 = lo + c;
    hi += (lo2 < lo) ? 1ull : 0ull;
    return reduce128(lo2, hi, m);
}

// A 192-bit accumulator for inner products: no lazy block length is needed
// (2^64 products of two words fit), and the final value is reduced exactly,
// so the canonical result equals the CPU's blocked u128 accumulation.
struct Acc3 {
    u64 lo;
    u64 hi;
    u64 top;
};

__device__ __forceinline__ Acc3 acc3_zero() {
    Acc3 a;
    a.lo = 0;
    a.hi = 0;
    a.top = 0;
    return a;
}

__device__ __forceinline__ void acc3_add_prod(Acc3& a, u64 x, u64 y) {
    u64 l = x * y;
    u64 h = mulhi(x, y);  // at most 2^64 - 2, so h + carry does not wrap
    a.lo += l;
    h += (a.lo < l) ? 1ull : 0ull;
    a.hi += h;
    a.top += (a.hi < h) ? 1ull : 0ull;
}

__device__ __forceinline__ void acc3_add(Acc3& a, u64 x) {
    a.lo += x;
    u64 c = (a.lo < x) ? 1ull : 0ull;
    a.hi += c;
    a.top += (a.hi < c) ? 1ull : 0ull;
}

// (top 2^128 + hi 2^64 + lo) mod p, canonical. Inner products of fewer than
// 64 terms of 61-bit words never reach 2^128, so `top` is almost always 0
// (a uniform branch in practice) and one 128-bit reduction suffices: the
// same canonical word, about half the arithmetic.
__device__ __forceinline__ u64 acc3_reduce(const Acc3 a, const Mod m) {
    if (a.top == 0) return reduce128(a.lo, a.hi, m);
    u64 r1 = reduce128(a.hi, a.top, m);
    return reduce128(a.lo, r1, m);
}

// ---------------------------------------------------------------------------
// Tiles of the conversion kernels (baseconv.cu, behz.cu): TILE_TX
// coefficients per block (geometry.rs CONV_TX), the per-coefficient words
// of a tile in shared memory as sh[i * TILE_TX + threadIdx.x].
#define TILE_TX 32

// First pass of a tiled conversion for this thread's coefficient
// c = blockIdx.x TILE_TX + threadIdx.x: y_i = [x_i w_i]_{m_i} (Shoup pair
// w_i, ws_i; m_i = mods[rows[i]]) into the tile, rows i = threadIdx.y,
// threadIdx.y + blockDim.y, ... < k (0 for c >= n), then a block barrier.
// Returns c.
__device__ __forceinline__ u32 tile_first_pass(u64* sh, const u64* in, const u32* rows,
                                               const Mod* mods, const u64* w, const u64* ws,
                                               u32 k, u32 n) {
    const u32 tx = threadIdx.x;
    const u32 c = blockIdx.x * TILE_TX + tx;
    for (u32 i = threadIdx.y; i < k; i += blockDim.y) {
        u64 y = 0;
        if (c < n) y = shoup(in[(u64)i * n + c], w[i], ws[i], mods[rows[i]].p);
        sh[i * TILE_TX + tx] = y;
    }
    __syncthreads();
    return c;
}

// acc + sum_{i < k} col[i * TILE_TX] w[i]: the inner product of one column
// of a tile (col = sh + threadIdx.x) with a weight row.
__device__ __forceinline__ Acc3 tile_dot(Acc3 acc, const u64* col, const u64* w, u32 k) {
    for (u32 i = 0; i < k; ++i) acc3_add_prod(acc, col[i * TILE_TX], w[i]);
    return acc;
}

// The last term of tile_conv_rows: none (FastBaseConv_I), one word for the
// whole column (FastBaseConv_F's overflow v), or one word per target row
// (fastRNSFloor's x_b, and then target j is written to row j).
enum TileExtra { EXTRA_NONE, EXTRA_COLUMN, EXTRA_ROWS };

// Second pass of a tiled conversion for coefficient c < n: for each target
// j of this thread (j = threadIdx.y, threadIdx.y + blockDim.y, ... < kp),
// the tile column `col` times the weight row w_j = weights + j (k + 1), plus
// the EXTRA term times w_j[k] (v, or x_rows[j n + c]), reduced modulo
// mods[out_rows[j]] into row out_map[j] of `out` (row j with EXTRA_ROWS).
template <int EXTRA>
__device__ __forceinline__ void tile_conv_rows(u64* out, const u32* out_map, const u32* out_rows,
                                               u32 kp, const u64* col, const u64* weights,
                                               u32 k, u64 v, const u64* x_rows,
                                               const Mod* mods, u32 n, u32 c) {
    for (u32 j = threadIdx.y; j < kp; j += blockDim.y) {
        const Mod m = mods[out_rows[j]];
        const u64* w = weights + (u64)j * (k + 1);
        Acc3 acc = tile_dot(acc3_zero(), col, w, k);
        if (EXTRA == EXTRA_COLUMN) acc3_add_prod(acc, v, w[k]);
        if (EXTRA == EXTRA_ROWS) acc3_add_prod(acc, x_rows[(u64)j * n + c], w[k]);
        const u64 row = (EXTRA == EXTRA_ROWS) ? j : out_map[j];
        out[row * n + c] = acc3_reduce(acc, m);
    }
}

// [c]_p for a small signed c with |c| < p (rlwe::scratch::signed_word).
__device__ __forceinline__ u64 signed_word(i64 c, u64 p) {
    return (u64)c + (p & (u64)(c >> 63));
}

// ---------------------------------------------------------------------------
// Multi-word comparison for the exact fallbacks of FastBaseConv_F and of the
// HPS scalers (the branch taken with probability about k^2 2^-52).
//
// Decides 2 * sum_i x_i * T_i >= M * Q where T_i (rows of `words` 64-bit words,
// little-endian) and Q (`words` words) are precomputed big integers, x_i
// words and M = (mhi 2^64 + mlo) a two-word multiplier. Works in a local
// array of MAX_WORDS + 3 words; the host guarantees words <= MAX_WORDS.
#define MAX_WORDS 72

__device__ __noinline__ bool big_twice_sum_ge(const u64* x, u32 x_stride, const u64* terms,
                                               u32 k, const u64* q, u32 words, u64 mlo,
                                               u64 mhi) {
    u64 s[MAX_WORDS + 3];
    u64 r[MAX_WORDS + 3];
    u32 w = words + 3;
    for (u32 i = 0; i < w; ++i) {
        s[i] = 0;
        r[i] = 0;
    }
    // s = sum_i x_i T_i
    for (u32 i = 0; i < k; ++i) {
        u64 xi = x[i * x_stride];
        u64 carry = 0;
        const u64* t = terms + (u64)i * words;
        for (u32 j = 0; j < words; ++j) {
            u64 lo = xi * t[j];
            u64 hi = mulhi(xi, t[j]);
            u64 a = s[j] + lo;
            hi += (a < lo) ? 1ull : 0ull;
            u64 b = a + carry;
            hi += (b < a) ? 1ull : 0ull;
            s[j] = b;
            carry = hi;
        }
        for (u32 j = words; j < w && carry != 0; ++j) {
            u64 a = s[j] + carry;
            carry = (a < carry) ? 1ull : 0ull;
            s[j] = a;
        }
    }
    // s = 2 s
    u64 top = 0;
    for (u32 j = 0; j < w; ++j) {
        u64 nt = s[j] >> 63;
        s[j] = (s[j] << 1) | top;
        top = nt;
    }
    // r = M Q
    for (u32 part = 0; part < 2; ++part) {
        u64 mi = part == 0 ? mlo : mhi;
        u64 carry = 0;
        for (u32 j = 0; j < words; ++j) {
            u64 lo = mi * q[j];
            u64 hi = mulhi(mi, q[j]);
            u64 a = r[j + part] + lo;
            hi += (a < lo) ? 1ull : 0ull;
            u64 b = a + carry;
            hi += (b < a) ? 1ull : 0ull;
            r[j + part] = b;
            carry = hi;
        }
        for (u32 j = words + part; j < w && carry != 0; ++j) {
            u64 a = r[j] + carry;
            carry = (a < carry) ? 1ull : 0ull;
            r[j] = a;
        }
    }
    for (u32 j = w; j-- > 0;) {
        if (s[j] != r[j]) return s[j] > r[j];
    }
    return true;
}

// ---------------------------------------------------------------------------
// The prologue of a point-wise kernel over a 2-D grid (000 §V.B: k·n
// threads, blockIdx.y the limb): coefficient c (threads past n return),
// limb, its modulus m = mods[rows[limb]] and the word index i = limb n + c.
#define POINT_PROLOGUE                                  \
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x; \
    if (c >= n) return;                                 \
    const u32 limb = blockIdx.y;                        \
    const Mod m = mods[rows[limb]];                     \
    const u64 i = (u64)limb * n + c;
