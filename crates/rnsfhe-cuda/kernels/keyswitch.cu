// Key switching inner products (RNS decomposition: 002 §4.5, 000 §IV.B;
// hybrid: digits extended by ModUp, rnsfhe::rlwe::hybrid): for every row r
// of the output base and coefficient c,
//   acc_b[r][c] (+)= sum_d digit_d[r][c] * key_{d,b}[key_rows[r]][c]  mod p_r,
// all digits of a launch accumulated in 192 bits and reduced once. Digits
// are NTT-form rows (d-major, `digit_stride` words apart); `k0s`/`k1s`
// hold the device addresses of the key polynomials of each digit, whose
// limb `key_rows[r]` matches output row r. Canonical outputs, the words of
// rnsfhe's KeySwitchingKey::switch_rows and of its hybrid inner product.
extern "C" __global__ void ks_mac(u64* acc0, u64* acc1, const u64* digits, u64 digit_stride,
                                  u32 digit_count, const u64* k0s, const u64* k1s,
                                  const u32* key_rows, const u32* rows, const Mod* mods, u32 n,
                                  u32 first, u64 zs_acc, u64 zs_dig, const u64* acc_tab) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    // gridDim.z products with one key: digits `zs_dig` words apart;
    // accumulators `zs_acc` words apart, or named by the device table
    // `acc_tab` (acc0, acc1 address pairs) when it is given.
    if (acc_tab != nullptr) {
        acc0 = (u64*)acc_tab[2 * (u64)blockIdx.z];
        acc1 = (u64*)acc_tab[2 * (u64)blockIdx.z + 1];
    } else {
        acc0 += blockIdx.z * zs_acc;
        acc1 += blockIdx.z * zs_acc;
    }
    digits += blockIdx.z * zs_dig;
    const u32 r = blockIdx.y;
    const Mod m = mods[rows[r]];
    const u64 i = (u64)r * n + c;
    const u64 kr = (u64)key_rows[r] * n + c;
    Acc3 a0 = acc3_zero();
    Acc3 a1 = acc3_zero();
    if (!first) {
        acc3_add(a0, acc0[i]);
        acc3_add(a1, acc1[i]);
    }
    for (u32 d = 0; d < digit_count; ++d) {
        const u64 x = digits[d * digit_stride + i];
        const u64* k0 = (const u64*)k0s[d];
        const u64* k1 = (const u64*)k1s[d];
        acc3_add_prod(a0, x, k0[kr]);
        acc3_add_prod(a1, x, k1[kr]);
    }
    acc0[i] = acc3_reduce(a0, m);
    acc1[i] = acc3_reduce(a1, m);
}
