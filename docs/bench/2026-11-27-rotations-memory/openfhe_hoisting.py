"""Eight rotations of one ciphertext in OpenFHE at (2^15, L = 16): eight
EvalRotate calls against EvalFastRotationPrecompute + eight
EvalFastRotation, in alternation (medians of 9 rounds, 1 thread).

Run with the peers' Python 3.10 venv, OMP_NUM_THREADS=1, and PEERS_DIR
naming the peers harness folder (its bench_peers_ckks.py builds the
context exactly as the rotate benchmark does)."""
import os, time, statistics, sys
sys.path.insert(0, os.environ.get("PEERS_DIR", "../shared/peers"))
import bench_peers_ckks as b
be = b.OpenFHEBackend("HYBRID")
be.setup(15, 16, 40)
cc, sk, c1 = be.cc, be.sk, be.c1
steps = list(range(1, 9))
cc.EvalRotateKeyGen(sk, steps)
m = cc.GetCyclotomicOrder()
def single():
    for s in steps: cc.EvalRotate(c1, s)
def hoisted():
    pre = cc.EvalFastRotationPrecompute(c1)
    for s in steps: cc.EvalFastRotation(c1, s, m, pre)
for f in (single, hoisted): f()
res = {}
for r in range(int(sys.argv[1]) if len(sys.argv) > 1 else 9):
    for name, f in (("single8", single), ("hoisted8", hoisted)):
        t = time.perf_counter(); f(); res.setdefault(name, []).append((time.perf_counter() - t) * 1e3)
s, h = statistics.median(res["single8"]), statistics.median(res["hoisted8"])
print(f"OpenFHE 8 single {s:.1f} ms, hoisted 8 {h:.1f} ms, ratio {h/s:.3f}")
