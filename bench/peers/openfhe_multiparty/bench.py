"""OpenFHE's threshold (multiparty) API from its Python wheel, the
counterpart of rnsfhe's multiparty_timing example and of the Lattigo
harness beside this directory: per-party share generation and aggregation
for 3 parties, at BFV (n = 2^14, six 60-bit primes, t = 65537) and CKKS
(n = 2^15, a 60-bit first prime and 16 primes of 40 bits), key switching
BV (digits 0: one digit per limb, no special prime) or HYBRID with the
digit count given, one thread (OMP_NUM_THREADS=1).

OpenFHE builds the collective public key as a chain (party i's
MultipartyKeyGen takes the key so far) rather than shares plus an
aggregation, so "pk_share" times one MultipartyKeyGen (secret-key sampling
included) and "pk_aggregate" is absent. Relinearization: round 1 =
MultiKeySwitchGen, aggregation = MultiAddEvalKeys; round 2 =
MultiMultEvalKey, aggregation = MultiAddEvalMultKeys. Decryption:
MultipartyDecryptMain, aggregation = MultipartyDecryptFusion (the library's
default smudging: FIXED_NOISE_MULTIPARTY). Share bytes: Serialize(obj,
BINARY) lengths (OpenFHE's format; keys carry their own metadata).

    OMP_NUM_THREADS=1 python bench.py --reps 11 --bfv-digits 0 --ckks-digits 6 > openfhe.jsonl
"""
import argparse
import json
import statistics
import time

import openfhe as o

PARTIES = 3


def median_ms(reps, f):
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t.append((time.perf_counter() - s) * 1e3)
    return statistics.median(t)


def nbytes(obj):
    s = o.Serialize(obj, o.BINARY)
    return len(s)


def context(scheme, digits):
    if scheme == "BFV":
        p = o.CCParamsBFVRNS()
        p.SetPlaintextModulus(65537)
        p.SetScalingModSize(60)
        p.SetMultiplicativeDepth(9)  # probed: Q = 360 bits (6 x 60) at 2^14
        p.SetRingDim(1 << 14)
    else:
        p = o.CCParamsCKKSRNS()
        p.SetScalingModSize(40)
        p.SetFirstModSize(60)
        p.SetMultiplicativeDepth(16)
        p.SetRingDim(1 << 15)
        p.SetScalingTechnique(o.ScalingTechnique.FIXEDMANUAL)
    p.SetSecurityLevel(o.SecurityLevel.HEStd_NotSet)
    if digits == 0:  # BV: one digit per RNS limb, no special primes
        p.SetKeySwitchTechnique(o.KeySwitchTechnique.BV)
    else:
        p.SetKeySwitchTechnique(o.KeySwitchTechnique.HYBRID)
        p.SetNumLargeDigits(digits)
    if scheme == "BFV":  # CKKS has no multiparty mode setting
        p.SetMultipartyMode(o.MultipartyMode.FIXED_NOISE_MULTIPARTY)
    cc = o.GenCryptoContext(p)
    for f in (o.PKESchemeFeature.PKE, o.PKESchemeFeature.KEYSWITCH,
              o.PKESchemeFeature.LEVELEDSHE, o.PKESchemeFeature.MULTIPARTY):
        cc.Enable(f)
    return cc


def bench(scheme, digits, reps):
    cc = context(scheme, digits)
    info = {"log_n": cc.GetRingDimension().bit_length() - 1,
            "q_bits": int(cc.GetElementParams().GetModulus()).bit_length(),
            "key_switching": f"HYBRID, {digits} digits" if digits else "BV",
            "parties": PARTIES, "smudging": "default (" + ("FIXED_NOISE_MULTIPARTY" if scheme == "BFV"
                                              else "FIXED_NOISE_DECRYPT") + ")"}
    rows = []

    def out(op, ms, b):
        rows.append(dict({"library": "openfhe", "scheme": scheme, "op": op,
                          "median_ms": ms, "share_bytes": b}, **info))

    kps = [cc.KeyGen()]
    for _ in range(1, PARTIES):
        kps.append(cc.MultipartyKeyGen(kps[-1].publicKey))
    out("pk_share", median_ms(reps, lambda: cc.MultipartyKeyGen(kps[0].publicKey)),
        nbytes(kps[1].publicKey))
    pk = kps[-1].publicKey
    tag = pk.GetKeyTag()

    # round 1: party 0 starts, the others extend the joint key
    k0 = cc.KeySwitchGen(kps[0].secretKey, kps[0].secretKey)
    r1 = [k0] + [cc.MultiKeySwitchGen(kp.secretKey, kp.secretKey, k0) for kp in kps[1:]]
    out("rlk_round1_share", median_ms(
        reps, lambda: cc.MultiKeySwitchGen(kps[1].secretKey, kps[1].secretKey, k0)),
        nbytes(r1[1]))

    def agg1():
        a = cc.MultiAddEvalKeys(r1[0], r1[1], tag)
        return cc.MultiAddEvalKeys(a, r1[2], tag)
    out("rlk_round1_aggregate", median_ms(reps, agg1), None)
    h = agg1()
    r2 = [cc.MultiMultEvalKey(kp.secretKey, h, tag) for kp in kps]
    out("rlk_round2_share", median_ms(
        reps, lambda: cc.MultiMultEvalKey(kps[0].secretKey, h, tag)), nbytes(r2[0]))

    def agg2():
        a = cc.MultiAddEvalMultKeys(r2[0], r2[1], tag)
        return cc.MultiAddEvalMultKeys(a, r2[2], tag)
    out("rlk_round2_aggregate", median_ms(reps, agg2), None)

    if scheme == "BFV":
        pt = cc.MakePackedPlaintext([1, 2, 3])
    else:
        pt = cc.MakeCKKSPackedPlaintext([0.5, -0.25])
    ct = cc.Encrypt(pk, pt)
    ds = ([cc.MultipartyDecryptLead([ct], kps[0].secretKey)[0]]
          + [cc.MultipartyDecryptMain([ct], kp.secretKey)[0] for kp in kps[1:]])
    out("dec_share", median_ms(
        reps, lambda: cc.MultipartyDecryptMain([ct], kps[1].secretKey)), nbytes(ds[1]))
    out("dec_aggregate", median_ms(reps, lambda: cc.MultipartyDecryptFusion(ds)), None)
    res = cc.MultipartyDecryptFusion(ds)
    info_check = str(res)[:40]
    for r in rows:
        r["decrypted"] = info_check
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--bfv-digits", type=int, default=0)
    ap.add_argument("--ckks-digits", type=int, default=6)
    ap.add_argument("--schemes", default="BFV,CKKS")
    a = ap.parse_args()
    for s in a.schemes.split(","):
        for r in bench(s, a.bfv_digits if s == "BFV" else a.ckks_digits, a.reps):
            print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
