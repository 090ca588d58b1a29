// Lattigo v6 multiparty timing, the counterpart of rnsfhe's
// multiparty_timing example: per-party share generation and aggregation
// of 3 shares for the collective public key (PublicKeyGenProtocol), the
// relinearization key (RelinearizationKeyGenProtocol, two rounds) and
// decryption (KeySwitchProtocol to the zero secret key), at BFV
// (log n = 14, six 60-bit Q primes, t = 65537; bgv parameters, which the
// scale-invariant evaluator uses for BFV) and CKKS (log n = 15, a 60-bit
// first prime and 16 primes of 40 bits). One thread (GOMAXPROCS=1), median
// of -reps timings; share bytes are MarshalBinary lengths (Lattigo has no
// seed-compressed share form either: the CRPs are never sent).
//
// Output: one JSON object per line,
// {library, scheme, op, median_ms, share_bytes, ...parameters}.
//
//	GOMAXPROCS=1 go run . -reps 11 -bfv-p 0 -ckks-p 3 > lattigo.jsonl
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/multiparty"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"
)

const parties = 3

func fatal(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// medianMs is the median of reps timings of f, in milliseconds.
func medianMs(reps int, f func()) float64 {
	t := make([]float64, reps)
	for i := range t {
		s := time.Now()
		f()
		t[i] = float64(time.Since(s).Nanoseconds()) / 1e6
	}
	sort.Float64s(t)
	return t[len(t)/2]
}

func crs(tag byte) multiparty.CRS {
	prng, err := sampling.NewKeyedPRNG([]byte{'m', 'p', tag})
	fatal(err)
	return prng
}

func emit(rec map[string]any) {
	b, err := json.Marshal(rec)
	fatal(err)
	fmt.Println(string(b))
}

func bench(scheme string, params rlwe.Parameters, ct *rlwe.Ciphertext, sk []*rlwe.SecretKey,
	reps int, sigma float64, info map[string]any) {
	out := func(op string, ms float64, bytes int) {
		rec := map[string]any{"library": "lattigo", "scheme": scheme, "op": op, "median_ms": ms}
		if bytes >= 0 {
			rec["share_bytes"] = bytes
		} else {
			rec["share_bytes"] = nil
		}
		for k, v := range info {
			rec[k] = v
		}
		emit(rec)
	}

	// Collective public key: share = -s_i*a + e_i over QP.
	ckg := multiparty.NewPublicKeyGenProtocol(params)
	crp := ckg.SampleCRP(crs(1))
	pkShares := make([]multiparty.PublicKeyGenShare, parties)
	for i := range pkShares {
		pkShares[i] = ckg.AllocateShare()
	}
	ms := medianMs(reps, func() { ckg.GenShare(sk[0], crp, &pkShares[0]) })
	for i := range pkShares {
		ckg.GenShare(sk[i], crp, &pkShares[i])
	}
	b, err := pkShares[0].MarshalBinary()
	fatal(err)
	out("pk_share", ms, len(b))
	pkAgg := ckg.AllocateShare()
	pk := rlwe.NewPublicKey(params)
	ms = medianMs(reps, func() {
		ckg.AggregateShares(pkShares[0], pkShares[1], &pkAgg)
		ckg.AggregateShares(pkAgg, pkShares[2], &pkAgg)
		ckg.GenPublicKey(pkAgg, crp, pk)
	})
	out("pk_aggregate", ms, -1)

	// Relinearization key, two rounds.
	rkg := multiparty.NewRelinearizationKeyGenProtocol(params)
	rcrp := rkg.SampleCRP(crs(2))
	eph := make([]*rlwe.SecretKey, parties)
	r1 := make([]multiparty.RelinearizationKeyGenShare, parties)
	r2 := make([]multiparty.RelinearizationKeyGenShare, parties)
	for i := range eph {
		eph[i], r1[i], r2[i] = rkg.AllocateShare()
	}
	ms = medianMs(reps, func() { rkg.GenShareRoundOne(sk[0], rcrp, eph[0], &r1[0]) })
	for i := range eph {
		rkg.GenShareRoundOne(sk[i], rcrp, eph[i], &r1[i])
	}
	b, err = r1[0].MarshalBinary()
	fatal(err)
	out("rlk_round1_share", ms, len(b))
	_, r1Agg, r2Agg := rkg.AllocateShare()
	ms = medianMs(reps, func() {
		rkg.AggregateShares(r1[0], r1[1], &r1Agg)
		rkg.AggregateShares(r1Agg, r1[2], &r1Agg)
	})
	out("rlk_round1_aggregate", ms, -1)
	ms = medianMs(reps, func() { rkg.GenShareRoundTwo(eph[0], sk[0], r1Agg, &r2[0]) })
	for i := range eph {
		rkg.GenShareRoundTwo(eph[i], sk[i], r1Agg, &r2[i])
	}
	b, err = r2[0].MarshalBinary()
	fatal(err)
	out("rlk_round2_share", ms, len(b))
	rlk := rlwe.NewRelinearizationKey(params)
	ms = medianMs(reps, func() {
		rkg.AggregateShares(r2[0], r2[1], &r2Agg)
		rkg.AggregateShares(r2Agg, r2[2], &r2Agg)
		rkg.GenRelinearizationKey(r1Agg, r2Agg, rlk)
	})
	out("rlk_round2_aggregate", ms, -1)

	// Decryption: key switch to the zero key, with smudging noise.
	cks, err := multiparty.NewKeySwitchProtocol(params, ring.DiscreteGaussian{Sigma: sigma, Bound: 6 * sigma})
	fatal(err)
	zero := rlwe.NewSecretKey(params)
	ds := make([]multiparty.KeySwitchShare, parties)
	for i := range ds {
		ds[i] = cks.AllocateShare(ct.Level())
	}
	ms = medianMs(reps, func() { cks.GenShare(sk[0], zero, ct, &ds[0]) })
	for i := range ds {
		cks.GenShare(sk[i], zero, ct, &ds[i])
	}
	b, err = ds[0].MarshalBinary()
	fatal(err)
	out("dec_share", ms, len(b))
	dAgg := cks.AllocateShare(ct.Level())
	opened := rlwe.NewCiphertext(params, 1, ct.Level())
	ms = medianMs(reps, func() {
		fatal(cks.AggregateShares(ds[0], ds[1], &dAgg))
		fatal(cks.AggregateShares(dAgg, ds[2], &dAgg))
		cks.KeySwitch(ct, dAgg, opened)
	})
	out("dec_aggregate", ms, -1)
}

// setup makes the parties' secret keys and a fresh ciphertext (of a
// zero plaintext) under their collective public key.
func setup(params rlwe.Parameters) ([]*rlwe.SecretKey, *rlwe.Ciphertext) {
	kgen := rlwe.NewKeyGenerator(params)
	sk := make([]*rlwe.SecretKey, parties)
	ideal := rlwe.NewSecretKey(params)
	for i := range sk {
		sk[i] = kgen.GenSecretKeyNew()
		params.RingQP().Add(ideal.Value, sk[i].Value, ideal.Value)
	}
	pk := kgen.GenPublicKeyNew(ideal)
	enc := rlwe.NewEncryptor(params, pk)
	ct := enc.EncryptZeroNew(params.MaxLevel())
	return sk, ct
}

func logs(m []uint64) []float64 {
	out := make([]float64, len(m))
	for i, q := range m {
		out[i] = math.Round(math.Log2(float64(q))*100) / 100
	}
	return out
}

func main() {
	reps := flag.Int("reps", 11, "timings per operation (median)")
	bfvP := flag.Int("bfv-p", 0, "BFV: number of 60-bit special primes P (0: one digit per Q limb)")
	ckksP := flag.Int("ckks-p", 3, "CKKS: number of 60-bit special primes P")
	logSigma := flag.Float64("log-sigma", 30, "smudging: Gaussian sigma = 2^log-sigma, bound 6 sigma")
	schemes := flag.String("schemes", "BFV,CKKS", "BFV, CKKS or both")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	sigma := math.Exp2(*logSigma)
	smudge := fmt.Sprintf("Gaussian sigma 2^%g bound 6 sigma (combined with the fresh-SK noise)", *logSigma)

	for _, s := range []string{"BFV", "CKKS"} {
		if !contains(*schemes, s) {
			continue
		}
		var params rlwe.Parameters
		if s == "BFV" {
			logQ := []int{60, 60, 60, 60, 60, 60}
			logP := repeated(*bfvP, 60)
			p, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{
				LogN: 14, LogQ: logQ, LogP: logP, PlaintextModulus: 65537})
			fatal(err)
			params = *p.GetRLWEParameters()
		} else {
			logQ := append([]int{60}, repeated(16, 40)...)
			logP := repeated(*ckksP, 60)
			p, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{
				LogN: 15, LogQ: logQ, LogP: logP, LogDefaultScale: 40})
			fatal(err)
			params = *p.GetRLWEParameters()
		}
		sk, ct := setup(params)
		info := map[string]any{
			"log_n": params.LogN(), "q_limbs": params.QCount(), "p_limbs": params.PCount(),
			"digits":  params.BaseRNSDecompositionVectorSize(params.MaxLevelQ(), params.MaxLevelP()),
			"parties": parties, "smudging": smudge,
			"log2_q": logs(params.Q()), "log2_p": logs(params.P()),
			"secret": fmt.Sprintf("%+v", params.Xs()), "error": fmt.Sprintf("%+v", params.Xe()),
		}
		bench(s, params, ct, sk, *reps, sigma, info)
	}
}

// repeated is n copies of v.
func repeated(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func contains(list, s string) bool {
	for _, x := range splitComma(list) {
		if x == s {
			return true
		}
	}
	return false
}

func splitComma(s string) []string {
	var out []string
	cur := ""
	for _, c := range s {
		if c == ',' {
			out = append(out, cur)
			cur = ""
		} else {
			cur += string(c)
		}
	}
	return append(out, cur)
}
