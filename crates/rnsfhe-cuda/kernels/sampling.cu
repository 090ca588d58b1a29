// Samplers for encryption on the device (000 §V.B c), drawing from the same
// ChaCha20 keystream as the CPU (rnsfhe_math::sampling): key = the 32-byte
// seed of rand_chacha's ChaCha20Rng, 64-bit block counter in state words
// 12-13, stream 0 in words 14-15; a 64-bit draw is the next two 32-bit
// keystream words, little-endian. Positions are 32-bit word positions
// (ChaCha20Rng::get_word_pos) held in device memory, so that a sampler
// whose consumption depends on the data (ternary: bytes 255 are rejected;
// uniform: rejection sampling) hands the next one its start without a
// round trip to the host. The outputs equal sample_ternary,
// DiscreteGaussian::sample_into and expand_uniform word for word.

__device__ __forceinline__ u32 rotl32(u32 x, u32 r) { return (x << r) | (x >> (32 - r)); }

#define QR(a, b, c, d)            \
    a += b; d ^= a; d = rotl32(d, 16); \
    c += d; b ^= c; b = rotl32(b, 12); \
    a += b; d ^= a; d = rotl32(d, 8);  \
    c += d; b ^= c; b = rotl32(b, 7);

// The 16 keystream words of block `counter`.
__device__ void chacha20_block(const u32* key, u64 counter, u32* out) {
    u32 s[16];
    s[0] = 0x61707865u;
    s[1] = 0x3320646eu;
    s[2] = 0x79622d32u;
    s[3] = 0x6b206574u;
    for (int i = 0; i < 8; ++i) s[4 + i] = key[i];
    s[12] = (u32)counter;
    s[13] = (u32)(counter >> 32);
    s[14] = 0;
    s[15] = 0;
    u32 x[16];
    for (int i = 0; i < 16; ++i) x[i] = s[i];
    for (int r = 0; r < 10; ++r) {
        QR(x[0], x[4], x[8], x[12]);
        QR(x[1], x[5], x[9], x[13]);
        QR(x[2], x[6], x[10], x[14]);
        QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]);
        QR(x[1], x[6], x[11], x[12]);
        QR(x[2], x[7], x[8], x[13]);
        QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; ++i) out[i] = x[i] + s[i];
}

// A cursor over the keystream that recomputes a block only when it moves
// to another one.
struct Stream {
    const u32* key;
    u64 block;
    u32 words[16];
};

__device__ __forceinline__ void stream_init(Stream& st, const u32* key) {
    st.key = key;
    st.block = ~0ull;
}

__device__ __forceinline__ u32 stream_word(Stream& st, u64 pos) {
    const u64 b = pos >> 4;
    if (b != st.block) {
        chacha20_block(st.key, b, st.words);
        st.block = b;
    }
    return st.words[pos & 15];
}

// The 64-bit draw starting at word position pos.
__device__ __forceinline__ u64 stream_u64(Stream& st, u64 pos) {
    const u64 lo = stream_word(st, pos);
    const u64 hi = stream_word(st, pos + 1);
    return lo | (hi << 32);
}

#define SAMPLER_THREADS 1024

// Block-wide exclusive scan of one value per thread (SAMPLER_THREADS).
__device__ u32 block_exclusive_scan(u32 v, u32* sh, u32* total) {
    const u32 t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (u32 off = 1; off < blockDim.x; off <<= 1) {
        u32 add = (t >= off) ? sh[t - off] : 0;
        __syncthreads();
        sh[t] += add;
        __syncthreads();
    }
    const u32 incl = sh[t];
    *total = sh[blockDim.x - 1];
    __syncthreads();
    return incl - v;
}

// One thread's share of `budget` consecutive draws from *pos_in, for the
// block-wide rejection samplers: draws d in [d0, d1), draw d at stream
// word position w0 + 2 d.
struct Draws {
    Stream st;
    u64 w0;
    u32 d0;
    u32 d1;
};

__device__ __forceinline__ void draws_init(Draws& dr, const u32* key, const u64* pos_in,
                                           u32 budget) {
    dr.w0 = *pos_in;
    const u32 per = (budget + blockDim.x - 1) / blockDim.x;
    dr.d0 = threadIdx.x * per;
    dr.d1 = min(dr.d0 + per, budget);
    stream_init(dr.st, key);
}

// Draw d of the block.
__device__ __forceinline__ u64 draws_at(Draws& dr, u32 d) {
    return stream_u64(dr.st, dr.w0 + 2ull * d);
}

// The stream position after draw d.
__device__ __forceinline__ u64 draws_after(const Draws& dr, u32 d) {
    return dr.w0 + 2ull * (d + 1);
}

// The output index of this thread's first accepted value (the block-wide
// exclusive scan of `count`, its accepted draws); sets *status to 1 when
// the whole block accepted fewer than n.
__device__ __forceinline__ u32 draws_first_pos(u32 count, u32* sh, u32 n, u32* status) {
    u32 total;
    const u32 pos = block_exclusive_scan(count, sh, &total);
    if (threadIdx.x == 0 && total < n) *status = 1;
    return pos;
}

// sample_ternary: n values in {-1, 0, 1} from the bytes of `budget` draws
// starting at *pos_in; byte 255 rejected; value (b mod 3) - 1. *pos_out
// receives the position after the last draw used; *status is set to 1 when
// the budget was too small (the host turns it into an error).
extern "C" __global__ void sample_ternary(i64* out, u32 n, const u32* key, const u64* pos_in,
                                          u64* pos_out, u32 budget, u32* status) {
    __shared__ u32 sh[SAMPLER_THREADS];
    Draws dr;
    draws_init(dr, key, pos_in, budget);
    u32 count = 0;
    for (u32 d = dr.d0; d < dr.d1; ++d) {
        const u64 w = draws_at(dr, d);
        for (int b = 0; b < 8; ++b) count += (((w >> (8 * b)) & 0xff) != 0xff) ? 1u : 0u;
    }
    u32 pos = draws_first_pos(count, sh, n, status);
    for (u32 d = dr.d0; d < dr.d1 && pos < n; ++d) {
        const u64 w = draws_at(dr, d);
        for (int b = 0; b < 8 && pos < n; ++b) {
            const u32 byte = (u32)((w >> (8 * b)) & 0xff);
            if (byte == 0xff) continue;
            const u32 r = byte - 3 * ((byte * 171) >> 9);
            out[pos] = (i64)r - 1;
            if (pos == n - 1) *pos_out = draws_after(dr, d);
            ++pos;
        }
    }
}

// DiscreteGaussian::sample_into: per batch of 64 samples one sign draw, then
// one magnitude draw per sample; |x| = #{k : u >= table[k]} over the whole
// table (constant time), x = (|x| ^ -s) + s. One thread per sample.
extern "C" __global__ void sample_gaussian(i64* out, u32 n, const u32* key, const u64* pos_in,
                                           const u64* table, u32 table_len) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u64 w0 = *pos_in;
    const u64 batch = i / 64;
    const u64 idx = i % 64;
    Stream st;
    stream_init(st, key);
    const u64 signs = stream_u64(st, w0 + 2ull * (batch * 65));
    const u64 u = stream_u64(st, w0 + 2ull * (batch * 65 + 1 + idx));
    u64 mag = 0;
    for (u32 k = 0; k < table_len; ++k) mag += (u >= table[k]) ? 1ull : 0ull;
    const u64 s = (signs >> idx) & 1ull;
    out[i] = (i64)((mag ^ (0ull - s)) + s);
}

// The position after sample_gaussian of n samples: ceil(n / 64) + n draws.
extern "C" __global__ void advance_gaussian(u64* pos_out, const u64* pos_in, u32 n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *pos_out = *pos_in + 2ull * ((u64)(n + 63) / 64 + n);
    }
}

// One limb of sample_uniform / expand_uniform: n residues, each the first
// draw w with (w & mask) < p (mask = 2^bits(p) - 1), from `budget` draws at
// *pos_in; *pos_out receives the position after the last draw used.
extern "C" __global__ void sample_uniform_limb(u64* out, u32 n, const u32* key,
                                               const u64* pos_in, u64* pos_out, u64 p, u64 mask,
                                               u32 budget, u32* status) {
    __shared__ u32 sh[SAMPLER_THREADS];
    Draws dr;
    draws_init(dr, key, pos_in, budget);
    u32 count = 0;
    for (u32 d = dr.d0; d < dr.d1; ++d) count += ((draws_at(dr, d) & mask) < p) ? 1u : 0u;
    u32 pos = draws_first_pos(count, sh, n, status);
    for (u32 d = dr.d0; d < dr.d1 && pos < n; ++d) {
        const u64 w = draws_at(dr, d) & mask;
        if (w >= p) continue;
        out[pos] = w;
        if (pos == n - 1) *pos_out = draws_after(dr, d);
        ++pos;
    }
}
