//! BFV on the GPU (000 §V.B): encryption, decryption, addition,
//! multiplication with the HPS (000 §IV.A.2) or BEHZ (000 §IV.A.1, 002
//! Alg. 3) lift-and-scale, relinearization (RNS decomposition, 002 §4.5,
//! or hybrid key switching), `multiply_relin`, row rotations and a batch
//! entry point — every step on the device, ciphertexts resident in device
//! memory, bit-identical to rnsfhe's CPU path (same words for the same
//! inputs and rng state).
//!
//! Scope: ciphertexts at the top level (fresh ones and the results of
//! these operations; `mod_switch` is CPU-only), variants HPS and BEHZ,
//! relinearization keys with the RNS decomposition without second-level
//! digits, or hybrid. Anything else is [`CudaError::Unsupported`].

use std::sync::Arc;

use num_bigint::BigUint;
use rand_chacha::ChaCha20Rng;
use rnsfhe::bfv::{
    BfvContext, Ciphertext, GaloisKeys, Plaintext, PublicKey, RelinKey, SecretKey, Variant,
};
use rnsfhe::rlwe::KeySwitchingKey;
use rnsfhe::rnsfhe_math::{Coeff, Modulus, Ntt, RnsPoly};

use crate::context::{CudaContext, DeviceCiphertext};
use crate::device::{Arg, DevArray};
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::runtime::{Consts, DevConv, DevPoly, DeviceKsk, Engine, HybridLevel, ModTable, Rows};
use crate::tables::{
    big_residue, chacha_key_words, floor_weights, gaussian_table, BehzDecryptTables,
    ScaleToBaseTables, ScaleToTTables, SkTables, SmMrqTables,
};

/// BEHZ's redundant Montgomery modulus `m̃` (rnsfhe's `M_TILDE`).
pub const M_TILDE: u64 = 1 << 32;

/// The device copy of a public key (NTT form over q).
#[derive(Debug)]
pub struct DevicePublicKey {
    ctx_id: u64,
    key_id: u64,
    pk0: DevPoly,
    pk1: DevPoly,
}

/// The device copy of a secret key (`NTT(s)` over q).
#[derive(Debug)]
pub struct DeviceSecretKey {
    ctx_id: u64,
    key_id: u64,
    s: DevPoly,
}

/// Device Galois keys: per element the key-switching key and the
/// NTT-form permutation.
#[derive(Debug)]
pub struct DeviceGaloisKeys {
    ctx_id: u64,
    cpu: GaloisKeys,
    keys: Vec<(u64, DeviceKsk, DevArray<u32>)>,
}

struct HpsDev {
    rows_p: Rows,
    rows_p_rep: Rows,
    q_to_p: DevConv,
    p_to_q: DevConv,
    to_t: ScaleToTTables,
    to_t_dev: [DevArray<u64>; 5],
    to_p_dev: [DevArray<u64>; 6],
    to_p_words: usize,
}

struct BehzDev {
    rows_b: Rows,
    rows_b_rep: Rows,
    kb: usize,
    mt_q: Consts,
    t_q: Consts,
    t_b: Consts,
    q_to_bm: DevConv,
    sm: SmMrqTables,
    sm_dev: [DevArray<u64>; 5],
    floor_w: DevArray<u64>,
    qhi: DevArray<u64>,
    qhis: DevArray<u64>,
    sk: SkTables,
    sk_dev: [DevArray<u64>; 4],
    msk: u64,
    dec: BehzDecryptTables,
    dec_dev: Vec<DevArray<u64>>,
}

/// BFV operations of one [`BfvContext`] on one [`CudaContext`]: the
/// context's tables live in device memory from construction on.
pub struct CudaBfv {
    ctx: CudaContext,
    cpu: Arc<BfvContext>,
    e: Engine,
    k: usize,
    t: Modulus,
    rows_q: Rows,
    /// `rows_q` repeated for as many polynomials as one launch takes.
    rows_q_rep: Rows,
    /// Three polynomials over q then three over P (HPS) or B_sk (BEHZ):
    /// the two tensors of one product, inverse-transformed in one launch.
    rows_qp3: Rows,
    rows_qb3: Rows,
    key_rows_q: DevArray<u32>,
    delta: Consts,
    hps: HpsDev,
    behz: BehzDev,
    hybrid: Option<HybridLevel>,
    gauss: DevArray<u64>,
    gauss_len: usize,
}

impl core::fmt::Debug for CudaBfv {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CudaBfv")
            .field("device", &self.ctx.device_name())
            .field("n", &self.e.n())
            .field("k", &self.k)
            .finish_non_exhaustive()
    }
}

impl CudaBfv {
    /// Uploads the tables of `cpu` (NTT twiddles of `q`, `P`, `B_sk` and
    /// the special primes; conversion, scaling and decryption constants).
    pub fn new(ctx: &CudaContext, cpu: &Arc<BfvContext>) -> Result<Self> {
        let params = cpu.params();
        let n = cpu.degree();
        geometry::check_degree(n)?;
        let q = params.coeff_moduli().to_vec();
        let k = q.len();
        let t = *cpu.plain_modulus();
        let p = cpu.hps_base_p().values();
        let bsk = cpu.behz_base_bsk().values();
        let special = params.special_moduli().to_vec();
        let gamma = cpu.behz_gamma();
        let pow2 = cpu.behz_gamma_is_power_of_two();
        let gamma_mod = if pow2 { gamma * t.value() } else { gamma };
        let mut ntt = q.clone();
        ntt.extend(&p);
        ntt.extend(&bsk);
        ntt.extend(&special);
        let gpu = Arc::clone(&ctx.gpu);
        let mt = ModTable::new(&gpu, n, &ntt, &[t.value(), M_TILDE, gamma_mod])?;
        let e = Engine { gpu, mt };
        let g = &e.gpu;
        let base_q = rnsfhe::rnsfhe_math::RnsBase::new(&q)?;
        let base_p = rnsfhe::rnsfhe_math::RnsBase::new(&p)?;
        let base_b = rnsfhe::rnsfhe_math::RnsBase::new(&bsk)?;
        // Δ = ⌊q/t⌋ mod q_i.
        let delta_big: BigUint = base_q.product() / t.value();
        let delta: Vec<u64> = q.iter().map(|&qi| big_residue(&delta_big, qi)).collect();
        // HPS.
        let to_t = ScaleToTTables::new(&base_q, &t)?;
        let to_p = ScaleToBaseTables::new(&base_q, &base_p, t.value())?;
        let r = &to_t.rounder;
        let to_t_dev = [
            g.array(&r.theta_hi)?,
            g.array(&r.theta_lo)?,
            g.array(&r.exact_terms)?,
            g.array(&r.q_words)?,
            g.array(&to_t.omega)?,
        ];
        let rp = &to_p.rounder;
        let to_p_dev = [
            g.array(&rp.theta_hi)?,
            g.array(&rp.theta_lo)?,
            g.array(&rp.exact_terms)?,
            g.array(&rp.q_words)?,
            g.array(&to_p.weights)?,
            g.array(&to_p.own)?,
        ];
        let hps = HpsDev {
            rows_p: e.mt.rows(g, &p)?,
            rows_p_rep: e.mt.rows_repeated(g, &p, 65_535 / p.len())?,
            q_to_p: DevConv::new(&e, &q, &p, None)?,
            p_to_q: DevConv::new(&e, &p, &q, None)?,
            to_t_dev,
            to_p_dev,
            to_p_words: rp.words,
            to_t,
        };
        // BEHZ.
        let mut bm = bsk.clone();
        bm.push(M_TILDE);
        let sm = SmMrqTables::new(&base_q, &base_b, M_TILDE)?;
        let sk = SkTables::new(&base_b, &base_q)?;
        let dec = BehzDecryptTables::new(&base_q, &t, gamma, pow2)?;
        let dec_dev = match &dec {
            BehzDecryptTables::PowerOfTwo { mult, q_hat_gt, .. } => vec![
                g.array(&mult.iter().map(|x| x.0).collect::<Vec<_>>())?,
                g.array(&mult.iter().map(|x| x.1).collect::<Vec<_>>())?,
                g.array(q_hat_gt)?,
            ],
            BehzDecryptTables::Prime {
                mult,
                q_hat_t,
                q_hat_g,
                ..
            } => vec![
                g.array(&mult.iter().map(|x| x.0).collect::<Vec<_>>())?,
                g.array(&mult.iter().map(|x| x.1).collect::<Vec<_>>())?,
                g.array(q_hat_t)?,
                g.array(q_hat_g)?,
            ],
        };
        let msk = *bsk
            .last()
            .ok_or_else(|| CudaError::InvalidArgument("empty B_sk".into()))?;
        let behz = BehzDev {
            rows_b: e.mt.rows(g, &bsk)?,
            rows_b_rep: e.mt.rows_repeated(g, &bsk, 65_535 / bsk.len())?,
            kb: bsk.len(),
            mt_q: Consts::new(g, &q.iter().map(|&qi| M_TILDE % qi).collect::<Vec<_>>(), &q)?,
            t_q: Consts::new(
                g,
                &q.iter().map(|&qi| t.value() % qi).collect::<Vec<_>>(),
                &q,
            )?,
            t_b: Consts::new(
                g,
                &bsk.iter().map(|&b| t.value() % b).collect::<Vec<_>>(),
                &bsk,
            )?,
            q_to_bm: DevConv::new(&e, &q, &bm, None)?,
            sm_dev: [
                g.array(&sm.w1)?,
                g.array(&sm.w1s)?,
                g.array(&sm.w2)?,
                g.array(&sm.w2s)?,
                g.array(&sm.q_mod_b)?,
            ],
            sm,
            floor_w: g.array(&floor_weights(&base_q, &base_b)?)?,
            qhi: g.array(base_q.q_hat_inv())?,
            qhis: g.array(base_q.q_hat_inv_shoup())?,
            sk_dev: [
                g.array(&sk.bhi)?,
                g.array(&sk.bhis)?,
                g.array(&sk.bhat_msk)?,
                g.array(&sk.weights)?,
            ],
            sk,
            msk,
            dec,
            dec_dev,
        };
        let hybrid = match params.relin_method() {
            rnsfhe::bfv::RelinMethod::Hybrid { .. } => {
                let sp = rnsfhe::rlwe::SchemeContext::rlwe(&**cpu)
                    .special_primes()
                    .ok_or_else(|| {
                        CudaError::InvalidArgument("hybrid without special primes".into())
                    })?;
                Some(HybridLevel::new(&e, &q, &special, sp.alpha(), k)?)
            }
            _ => None,
        };
        let table = gaussian_table(cpu.gaussian());
        let ident: Vec<u32> = (0..k as u32).collect();
        Ok(Self {
            rows_q: e.mt.rows(g, &q)?,
            rows_q_rep: e.mt.rows_repeated(g, &q, 65_535 / k)?,
            rows_qp3: e.mt.rows(g, &[&q[..], &q, &q, &p, &p, &p].concat())?,
            rows_qb3: e.mt.rows(g, &[&q[..], &q, &q, &bsk, &bsk, &bsk].concat())?,
            key_rows_q: g.array(&ident)?,
            delta: Consts::new(g, &delta, &q)?,
            gauss: g.array(&table)?,
            gauss_len: table.len(),
            ctx: ctx.clone(),
            cpu: Arc::clone(cpu),
            k,
            t,
            hps,
            behz,
            hybrid,
            e,
        })
    }

    /// The CPU context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.cpu
    }

    fn ids(&self) -> (u64, u64) {
        (self.ctx.id(), self.cpu.id())
    }

    fn new_ct(&self, key_id: u64, polys: Vec<DevPoly>, ntt: bool) -> DeviceCiphertext {
        DeviceCiphertext {
            ctx_id: self.ctx.id(),
            params_id: self.cpu.id(),
            key_id,
            polys,
            ntt,
            scale: 1.0,
            len: 0,
        }
    }

    fn check_top(&self, ct: &DeviceCiphertext) -> Result<()> {
        let (c, p) = self.ids();
        ct.check(c, p)?;
        if ct.limbs() != self.k {
            return Err(CudaError::Unsupported(format!(
                "a ciphertext at level {} (the device path works at the top level {})",
                ct.limbs().saturating_sub(1),
                self.k - 1
            )));
        }
        Ok(())
    }

    /// Copies a CPU ciphertext (either form, top level) to the device.
    pub fn upload(&self, ct: &Ciphertext) -> Result<DeviceCiphertext> {
        self.cpu.check_id(ct.params_id())?;
        if ct.level() != self.cpu.max_level() {
            return Err(CudaError::Unsupported(format!(
                "a ciphertext at level {} (the device path works at the top level)",
                ct.level()
            )));
        }
        let (polys, ntt) = match (ct.ntt_polys(), ct.coeff_polys()) {
            (Some(v), _) => (
                v.iter()
                    .map(|p| self.e.upload(p.data(), p.limbs()))
                    .collect::<Result<Vec<_>>>()?,
                true,
            ),
            (None, Some(v)) => (
                v.iter()
                    .map(|p| self.e.upload(p.data(), p.limbs()))
                    .collect::<Result<Vec<_>>>()?,
                false,
            ),
            (None, None) => return Err(CudaError::InvalidArgument("an empty ciphertext".into())),
        };
        Ok(self.new_ct(ct.key_id(), polys, ntt))
    }

    /// Copies a device ciphertext back (in its form).
    pub fn download(&self, ct: &DeviceCiphertext) -> Result<Ciphertext> {
        let (c, p) = self.ids();
        ct.check(c, p)?;
        let n = self.e.n();
        let mut datas = Vec::with_capacity(ct.polys.len());
        for poly in &ct.polys {
            datas.push((self.e.download(poly)?, poly.limbs()));
        }
        Ok(if ct.ntt {
            let v = datas
                .into_iter()
                .map(|(d, l)| RnsPoly::<Ntt>::from_data(n, l, d))
                .collect::<core::result::Result<Vec<_>, _>>()?;
            Ciphertext::from_ntt_polys(&self.cpu, ct.key_id, v)?
        } else {
            let v = datas
                .into_iter()
                .map(|(d, l)| RnsPoly::<Coeff>::from_data(n, l, d))
                .collect::<core::result::Result<Vec<_>, _>>()?;
            Ciphertext::from_coeff_polys(&self.cpu, ct.key_id, v)?
        })
    }

    /// Uploads a public key (over q).
    pub fn upload_public_key(&self, pk: &PublicKey) -> Result<DevicePublicKey> {
        self.cpu.check_id(pk.params_id())?;
        let lim = |p: &RnsPoly<Ntt>| -> Result<DevPoly> {
            let d = p
                .data()
                .get(..self.k * self.e.n())
                .ok_or_else(|| CudaError::InvalidArgument("public key shorter than q".into()))?;
            self.e.upload(d, self.k)
        };
        Ok(DevicePublicKey {
            ctx_id: self.ctx.id(),
            key_id: pk.key_id(),
            pk0: lim(pk.pk0())?,
            pk1: lim(pk.pk1())?,
        })
    }

    /// Uploads a secret key (its NTT form over q, computed here).
    pub fn upload_secret_key(&self, sk: &SecretKey) -> Result<DeviceSecretKey> {
        self.cpu.check_id(sk.params_id())?;
        let ring = self.cpu.ring();
        let s = ring.to_ntt(ring.from_signed(sk.coefficients())?)?;
        let mut data = s.into_data();
        let r = self.e.upload(&data, self.k);
        zeroize::Zeroize::zeroize(&mut data);
        Ok(DeviceSecretKey {
            ctx_id: self.ctx.id(),
            key_id: sk.key_id(),
            s: r?,
        })
    }

    fn upload_ksk(&self, ksk: &KeySwitchingKey) -> Result<DeviceKsk> {
        self.cpu.check_id(ksk.params_id())?;
        if !ksk.is_hybrid() && ksk.digit_bits().is_some() {
            return Err(CudaError::Unsupported(
                "RNS-decomposition keys with second-level digits".into(),
            ));
        }
        let pairs = ksk
            .keys()
            .iter()
            .map(|(a, b)| {
                Ok((
                    self.e.upload(a.data(), a.limbs())?,
                    self.e.upload(b.data(), b.limbs())?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        DeviceKsk::new(&self.e, self.ctx.id(), ksk.key_id(), pairs, ksk.is_hybrid())
    }

    /// Uploads a relinearization key.
    pub fn upload_relin_key(&self, rk: &RelinKey) -> Result<DeviceKsk> {
        self.upload_ksk(rk.key_switching_key())
    }

    /// Uploads Galois keys (every element they hold).
    pub fn upload_galois_keys(&self, gk: &GaloisKeys) -> Result<DeviceGaloisKeys> {
        self.cpu.check_id(gk.params_id())?;
        let n = self.e.n();
        let mut keys = Vec::new();
        for el in gk.elements() {
            let ksk = gk
                .key_switching_key(el)
                .ok_or(CudaError::InvalidArgument(format!("no key for {el}")))?;
            let map = crate::tables::galois_ntt_map(n, el);
            keys.push((el, self.upload_ksk(ksk)?, self.e.gpu.array(&map)?));
        }
        Ok(DeviceGaloisKeys {
            ctx_id: self.ctx.id(),
            cpu: gk.clone(),
            keys,
        })
    }

    // ------------------------------------------------------------ helpers

    /// An NTT-form copy of `p` (transformed when `coeff`).
    fn ntt_copy(&self, p: &DevPoly, coeff: bool) -> Result<DevPoly> {
        let mut c = self.e.clone_poly(p)?;
        if coeff {
            self.e.ntt_forward(&mut c, &self.rows_q)?;
        }
        Ok(c)
    }

    fn free_all(&self, v: Vec<DevPoly>) {
        for p in v {
            self.e.free(p);
        }
    }

    // ---------------------------------------------------------- encryption

    /// Public-key encryption (000 §II.E), drawing `u`, `e_1`, `e_2` from
    /// `rng` in the CPU's order with the device samplers; the result (NTT
    /// form) and the rng's state afterwards equal
    /// `Encryptor::encrypt_with_rng`'s. Waits for the device once (to read
    /// the sampler's final position back into `rng`).
    pub fn encrypt(
        &self,
        pk: &DevicePublicKey,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<DeviceCiphertext> {
        check_id(self.ctx.id(), pk.ctx_id)?;
        self.cpu.check_id(pt.params_id())?;
        if rng.get_stream() != 0 {
            return Err(CudaError::Unsupported(
                "ChaCha20Rng streams other than 0".into(),
            ));
        }
        let n = self.e.n();
        let g = &self.e.gpu;
        let key = chacha_key_words(&rng.get_seed());
        let mut state = [0u64; 8];
        state[0] = u64::try_from(rng.get_word_pos())
            .map_err(|_| CudaError::Unsupported("rng word position beyond 2^64".into()))?;
        for (i, pair) in key.chunks_exact(2).enumerate() {
            state[4 + i] = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
        }
        let st = g.upload(&state)?;
        let mut status = g.take(1)?;
        g.zero(&mut status)?;
        let (pos, key_ptr) = (|i: usize| st.at(i), st.at(4));
        let u = self.e.alloc(1)?;
        let mut e1 = self.e.alloc(1)?;
        let mut e2 = self.e.alloc(1)?;
        let budget = geometry::ternary_budget(n);
        g.launch(
            "sample_ternary",
            geometry::sampler_block(),
            &[
                Arg::W(u.ptr()),
                Arg::U(n as u32),
                Arg::W(key_ptr),
                Arg::W(pos(0)),
                Arg::W(pos(1)),
                Arg::U(budget as u32),
                Arg::W(status.ptr()),
            ],
        )?;
        let gshape = geometry::pointwise(n, 1)?;
        for (i, e) in [(1usize, &mut e1), (2, &mut e2)] {
            g.launch(
                "sample_gaussian",
                gshape,
                &[
                    Arg::W(e.ptr()),
                    Arg::U(n as u32),
                    Arg::W(key_ptr),
                    Arg::W(pos(i)),
                    Arg::W(self.gauss.ptr()),
                    Arg::U(self.gauss_len as u32),
                ],
            )?;
            g.launch(
                "advance_gaussian",
                geometry::Launch {
                    grid: (1, 1, 1),
                    block: (1, 1, 1),
                    shared_bytes: 0,
                },
                &[Arg::W(pos(i + 1)), Arg::W(pos(i)), Arg::U(n as u32)],
            )?;
        }
        let msg = g.upload(pt.coefficients())?;
        let u_ntt = self.e.alloc(self.k)?;
        self.e.pointwise(
            "poly_from_signed",
            &self.rows_q,
            &[Arg::W(u_ntt.ptr()), Arg::W(u.ptr())],
        )?;
        let c0 = self.e.alloc(self.k)?;
        self.e.pointwise(
            "poly_signed_plus_scaled",
            &self.rows_q,
            &[
                Arg::W(c0.ptr()),
                Arg::W(e1.ptr()),
                Arg::W(msg.ptr()),
                Arg::W(self.delta.w.ptr()),
                Arg::W(self.delta.ws.ptr()),
            ],
        )?;
        let c1 = self.e.alloc(self.k)?;
        self.e.pointwise(
            "poly_from_signed",
            &self.rows_q,
            &[Arg::W(c1.ptr()), Arg::W(e2.ptr())],
        )?;
        self.e
            .ntt_many(&[u_ntt.ptr(), c0.ptr(), c1.ptr()], &self.rows_q, false)?;
        self.e.binary(
            "poly_mul_acc",
            c0.ptr(),
            u_ntt.ptr(),
            pk.pk0.ptr(),
            &self.rows_q,
        )?;
        self.e.binary(
            "poly_mul_acc",
            c1.ptr(),
            u_ntt.ptr(),
            pk.pk1.ptr(),
            &self.rows_q,
        )?;
        let words = g.download(&st, 4)?;
        let flag = g.download(&status, 1)?;
        self.free_all(vec![u, e1, e2, u_ntt]);
        g.give(msg);
        g.give(st);
        g.give(status);
        if flag.first().copied().unwrap_or(1) & 0xffff_ffff != 0 {
            return Err(CudaError::SamplerBudget);
        }
        rng.set_word_pos(u128::from(words.get(3).copied().unwrap_or(0)));
        Ok(self.new_ct(pk.key_id, vec![c0, c1], true))
    }

    // ---------------------------------------------------------- decryption

    /// Decryption with `variant` (HPS: 000 eq. 6; BEHZ: 002 Alg. 1 / Lemma
    /// 3): the same plaintext as `Decryptor::decrypt`.
    pub fn decrypt(
        &self,
        sk: &DeviceSecretKey,
        ct: &DeviceCiphertext,
        variant: Variant,
    ) -> Result<Plaintext> {
        self.check_top(ct)?;
        check_id(self.ctx.id(), sk.ctx_id)?;
        if sk.key_id != ct.key_id {
            return Err(CudaError::KeyMismatch("secret key and ciphertext".into()));
        }
        let n = self.e.n();
        if ct.polys.len() < 2 {
            return Err(CudaError::InvalidArgument(
                "a ciphertext of fewer than 2 polynomials".into(),
            ));
        }
        // NTT forms of coefficient-form inputs, transformed out of place in
        // one launch sequence.
        let copies: Vec<DevPoly> = if ct.ntt {
            Vec::new()
        } else {
            ct.polys
                .iter()
                .map(|_| self.e.alloc(self.k))
                .collect::<Result<_>>()?
        };
        let pairs: Vec<(u64, u64)> = copies
            .iter()
            .zip(&ct.polys)
            .map(|(d, s)| (d.ptr(), s.ptr()))
            .collect();
        self.e.ntt_pairs(&pairs, self.rows_q_rep.span(1)?, false)?;
        let polys: Vec<u64> = if ct.ntt {
            ct.polys.iter().map(DevPoly::ptr).collect()
        } else {
            copies.iter().map(DevPoly::ptr).collect()
        };
        // Horner in NTT form: x = ((c_d s + c_{d−1}) s + …) s + c_0, the
        // first step writing the fresh buffer x.
        let mut x = self.e.alloc(self.k)?;
        let last = polys.len() - 1;
        for (i, &c) in polys[..last].iter().enumerate().rev() {
            let acc = if i + 1 == last { polys[last] } else { x.ptr() };
            self.e.pointwise(
                "poly_mul_add",
                &self.rows_q,
                &[Arg::W(x.ptr()), Arg::W(acc), Arg::W(sk.s.ptr()), Arg::W(c)],
            )?;
        }
        self.free_all(copies);
        self.e.ntt_inverse(&mut x, &self.rows_q)?;
        let out = self.e.gpu.take(n)?;
        let shape = geometry::pointwise(n, 1)?;
        let mods = self.e.mt.mods_ptr();
        let k = self.k as u32;
        match variant {
            Variant::Hps => {
                let d = &self.hps.to_t_dev;
                let r = &self.hps.to_t.rounder;
                self.e.gpu.launch(
                    "hps_scale_t",
                    shape,
                    &[
                        Arg::W(out.ptr()),
                        Arg::W(x.ptr()),
                        Arg::U(k),
                        Arg::W(d[0].ptr()),
                        Arg::W(d[1].ptr()),
                        Arg::W(r.threshold),
                        Arg::W(d[2].ptr()),
                        Arg::W(d[3].ptr()),
                        Arg::U(r.words as u32),
                        Arg::W(d[4].ptr()),
                        Arg::W(mods),
                        Arg::U(self.e.mt.idx(self.t.value())?),
                        Arg::U(n as u32),
                    ],
                )?;
            }
            Variant::Behz => match &self.behz.dec {
                BehzDecryptTables::PowerOfTwo {
                    bits,
                    gt,
                    neg_q_inv,
                    ..
                } => {
                    let d = &self.behz.dec_dev;
                    self.e.gpu.launch(
                        "behz_decrypt_pow2",
                        shape,
                        &[
                            Arg::W(out.ptr()),
                            Arg::W(x.ptr()),
                            Arg::W(self.rows_q.dev.ptr()),
                            Arg::U(k),
                            Arg::W(d[0].ptr()),
                            Arg::W(d[1].ptr()),
                            Arg::W(d[2].ptr()),
                            Arg::U(self.e.mt.idx(*gt)?),
                            Arg::W(*neg_q_inv),
                            Arg::U(*bits),
                            Arg::W(mods),
                            Arg::U(n as u32),
                        ],
                    )?;
                }
                BehzDecryptTables::Prime {
                    gamma,
                    neg_q_inv_t,
                    neg_q_inv_g,
                    g_inv_t,
                    ..
                } => {
                    let d = &self.behz.dec_dev;
                    self.e.gpu.launch(
                        "behz_decrypt_prime",
                        shape,
                        &[
                            Arg::W(out.ptr()),
                            Arg::W(x.ptr()),
                            Arg::W(self.rows_q.dev.ptr()),
                            Arg::U(k),
                            Arg::W(d[0].ptr()),
                            Arg::W(d[1].ptr()),
                            Arg::W(d[2].ptr()),
                            Arg::W(d[3].ptr()),
                            Arg::U(self.e.mt.idx(self.t.value())?),
                            Arg::U(self.e.mt.idx(*gamma)?),
                            Arg::W(*neg_q_inv_t),
                            Arg::W(*neg_q_inv_g),
                            Arg::W(*g_inv_t),
                            Arg::W(mods),
                            Arg::U(n as u32),
                        ],
                    )?;
                }
            },
            other => return Err(CudaError::Unsupported(format!("variant {other:?}"))),
        }
        let words = self.e.gpu.download(&out, n)?;
        self.e.gpu.give(out);
        self.e.free(x);
        Ok(Plaintext::new(&self.cpu, &words)?)
    }

    // ---------------------------------------------------------- arithmetic

    /// `a + b` (sizes may differ; mixed forms give NTT form), as
    /// `Evaluator::add`.
    pub fn add(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.add_sub(a, b, false)
    }

    /// `a − b` as `Evaluator::sub` (sizes may differ; the result has the
    /// larger size; NTT form when either operand is).
    pub fn sub(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.add_sub(a, b, true)
    }

    /// `−a` as `Evaluator::negate` (in `a`'s form).
    pub fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        let mut out = Vec::with_capacity(a.size());
        for p in &a.polys {
            let o = self.e.alloc(self.k)?;
            self.e.pointwise(
                "poly_neg",
                &self.rows_q,
                &[Arg::W(o.ptr()), Arg::W(p.ptr())],
            )?;
            out.push(o);
        }
        Ok(self.new_ct(a.key_id, out, a.ntt))
    }

    fn add_sub(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        subtract: bool,
    ) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        self.check_top(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch(
                if subtract { "sub" } else { "add" }.into(),
            ));
        }
        let kernel = if subtract { "poly_sub" } else { "poly_add" };
        let ntt = a.ntt || b.ntt;
        let size = a.size().max(b.size());
        let words = self.k * self.e.n();
        // Operands in the result's form: the inputs themselves, or NTT
        // copies of coefficient-form ones.
        let mut copies = Vec::new();
        let mut form = |c: &DeviceCiphertext| -> Result<Vec<u64>> {
            if c.ntt == ntt {
                return Ok(c.polys.iter().map(DevPoly::ptr).collect());
            }
            let mut v = Vec::with_capacity(c.size());
            for p in &c.polys {
                let d = self.ntt_copy(p, true)?;
                v.push(d.ptr());
                copies.push(d);
            }
            Ok(v)
        };
        let (pa, pb) = (form(a)?, form(b)?);
        let mut out = Vec::with_capacity(size);
        for i in 0..size {
            let o = self.e.alloc(self.k)?;
            match (pa.get(i), pb.get(i)) {
                (Some(&x), Some(&y)) => self.e.binary(kernel, o.ptr(), x, y, &self.rows_q)?,
                (Some(&x), None) => self.e.gpu.copy_words(o.ptr(), x, words)?,
                (None, Some(&y)) if subtract => {
                    self.e
                        .pointwise("poly_neg", &self.rows_q, &[Arg::W(o.ptr()), Arg::W(y)])?
                }
                (None, Some(&y)) => self.e.gpu.copy_words(o.ptr(), y, words)?,
                (None, None) => {}
            }
            out.push(o);
        }
        self.free_all(copies);
        Ok(self.new_ct(a.key_id, out, ntt))
    }

    /// Checks a pair of multiplicands.
    fn check_pair(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<()> {
        self.check_top(a)?;
        self.check_top(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch("multiply".into()));
        }
        if a.size() != 2 || b.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "multiply needs two 2-polynomial ciphertexts".into(),
            ));
        }
        Ok(())
    }

    /// Products per batched launch sequence: as many as fit a 2 GiB
    /// working set and the launch limits (65535 rows per launch), at most
    /// 128; BEHZ runs one product at a time.
    pub fn batch_cap(&self, variant: Variant) -> usize {
        if variant != Variant::Hps {
            return 1;
        }
        let (n, k) = (self.e.n(), self.k);
        let kp = self.hps.rows_p.len();
        // Rows per product: inputs in both forms, P, the two tensors, the
        // scaled P rows, the product, one group of digits, the outputs.
        let per = 8 * k + 4 * kp + 3 * k + 6 * kp + 3 * k + k * k.min(8) + 2 * k;
        let budget_rows = (1usize << 28) / n;
        (budget_rows / per)
            .min(65_535 / (4 * k.max(kp)))
            .min(self.rows_q_rep.times() / 4)
            .min(self.hps.rows_p_rep.times() / 4)
            .clamp(1, 128)
    }

    /// Address `words` words past `base`.
    fn at(base: u64, words: usize) -> u64 {
        base + (words * 8) as u64
    }

    /// The Karatsuba tensor of `bn` products over `limbs` rows per
    /// polynomial: `x = [a0, a1, b0, b1]` input addresses (`zs_in` words
    /// from one product to the next), output three planar polynomials
    /// `[c0 of every product | c1 … | c2 …]` at `out`.
    fn tensor_planar(
        &self,
        out: u64,
        x: [u64; 4],
        zs_in: usize,
        bn: usize,
        rows: &Rows,
    ) -> Result<()> {
        let n = self.e.n();
        let limbs = rows.len();
        let mut shape = geometry::pointwise(n, limbs)?;
        shape.grid.2 = bn as u32;
        let plane = bn * limbs * n;
        self.e.gpu.launch(
            "poly_tensor",
            shape,
            &[
                Arg::W(out),
                Arg::W(Self::at(out, plane)),
                Arg::W(Self::at(out, 2 * plane)),
                Arg::W(x[0]),
                Arg::W(x[1]),
                Arg::W(x[2]),
                Arg::W(x[3]),
                Arg::W(rows.dev.ptr()),
                Arg::W(self.e.mt.mods_ptr()),
                Arg::U(n as u32),
                Arg::W(zs_in as u64),
                Arg::W((limbs * n) as u64),
            ],
        )
    }

    /// The products of `pairs` (checked, at most [`Self::batch_cap`]) by
    /// the HPS or BEHZ lift-and-scale (000 §IV.A): the three
    /// coefficient-form polynomials of every product in one planar buffer
    /// `[c0 of every product | c1 … | c2 …]` (`3·B·k` rows). Every step runs
    /// once for the whole batch (one launch, `gridDim.y` or `gridDim.z`
    /// spanning every polynomial).
    fn multiply_planar(
        &self,
        pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
        variant: Variant,
    ) -> Result<DevPoly> {
        let (n, k) = (self.e.n(), self.k);
        let bn = pairs.len();
        let kn = k * n;
        // C: the four inputs of every product in coefficient form, planar
        // (input j of product b at rows (j·B + b)·k).
        let c = self.e.alloc(4 * bn * k)?;
        let slot = |j: usize, b: usize| c.row((j * bn + b) * k, n);
        let mut to_coeff = Vec::with_capacity(4 * bn);
        let mut all_ntt = true;
        for (b, (x, y)) in pairs.iter().enumerate() {
            for (j, (p, ntt)) in [
                (&x.polys[0], x.ntt),
                (&x.polys[1], x.ntt),
                (&y.polys[0], y.ntt),
                (&y.polys[1], y.ntt),
            ]
            .into_iter()
            .enumerate()
            {
                if ntt {
                    to_coeff.push((slot(j, b), p.ptr()));
                } else {
                    all_ntt = false;
                    self.e.gpu.copy_words(slot(j, b), p.ptr(), kn)?;
                }
            }
        }
        self.e
            .ntt_pairs(&to_coeff, self.rows_q_rep.span(1)?, true)?;
        // The NTT-form inputs of the tensor: the inputs themselves for one
        // product, else gathered into one planar buffer in one launch (the
        // coefficient-form ones transformed there from C).
        let (x_ntt, tensor_in, zs_in) = if bn == 1 && all_ntt {
            let (x, y) = pairs[0];
            let ptrs = [
                x.polys[0].ptr(),
                x.polys[1].ptr(),
                y.polys[0].ptr(),
                y.polys[1].ptr(),
            ];
            (None, ptrs, 0)
        } else {
            let x = self.e.alloc(4 * bn * k)?;
            let mut copy = Vec::with_capacity(4 * bn);
            let mut transform = Vec::new();
            for (b, (u, v)) in pairs.iter().enumerate() {
                for (j, (p, ntt)) in [
                    (&u.polys[0], u.ntt),
                    (&u.polys[1], u.ntt),
                    (&v.polys[0], v.ntt),
                    (&v.polys[1], v.ntt),
                ]
                .into_iter()
                .enumerate()
                {
                    let dst = x.row((j * bn + b) * k, n);
                    if ntt {
                        copy.push((dst, p.ptr()));
                    } else {
                        transform.push((dst, slot(j, b)));
                    }
                }
            }
            self.e.gather(&copy, kn)?;
            self.e
                .ntt_pairs(&transform, self.rows_q_rep.span(1)?, false)?;
            let ptrs = [0, 1, 2, 3].map(|j| x.row(j * bn * k, n));
            (Some(x), ptrs, kn)
        };
        // The two tensors (over q here, over the extension base in the
        // variant) share one buffer, so that one inverse NTT covers both.
        let ext = match variant {
            Variant::Hps => self.hps.rows_p.len(),
            _ => self.behz.kb,
        };
        let tq = self.e.alloc(3 * bn * (k + ext))?;
        self.tensor_planar(tq.ptr(), tensor_in, zs_in, bn, &self.rows_q)?;
        if let Some(x) = x_ntt {
            self.e.free(x);
        }
        let out = match variant {
            Variant::Hps => self.lift_scale_hps(&c, &tq, bn),
            Variant::Behz if bn == 1 => self.lift_scale_behz(&c, &tq),
            Variant::Behz => Err(CudaError::InvalidArgument(
                "BEHZ products run one at a time".into(),
            )),
            other => Err(CudaError::Unsupported(format!("variant {other:?}"))),
        };
        self.e.free(c);
        self.e.free(tq);
        out
    }

    /// HPS (000 §IV.A.2, eq. 8): the inputs `c` (coefficient form) are
    /// extended to P (FastBaseConv_F), transformed, tensored there; with
    /// the tensor over q (`tq`, coefficient form) the product is scaled by
    /// t/q into P and converted back to q.
    fn lift_scale_hps(&self, c: &DevPoly, tq: &DevPoly, bn: usize) -> Result<DevPoly> {
        let h = &self.hps;
        let (n, k) = (self.e.n(), self.k);
        let kp = h.rows_p.len();
        let p4 = self.e.alloc(4 * bn * kp)?;
        h.q_to_p
            .run_many(&self.e, (p4.ptr(), kp * n), (c.ptr(), k * n), 4 * bn, true)?;
        self.e
            .ntt_pairs(&[(p4.ptr(), 0)], h.rows_p_rep.span(4 * bn)?, false)?;
        // tp: the second part of tq's buffer.
        let tp = tq.row(3 * bn * k, n);
        let x = [0, 1, 2, 3].map(|j| p4.row(j * bn * kp, n));
        self.tensor_planar(tp, x, kp * n, bn, &h.rows_p)?;
        self.e.free(p4);
        if bn == 1 {
            self.e
                .ntt_pairs(&[(tq.ptr(), 0)], self.rows_qp3.span(1)?, true)?;
        } else {
            self.e
                .ntt_pairs(&[(tq.ptr(), 0)], self.rows_q_rep.span(3 * bn)?, true)?;
            self.e
                .ntt_pairs(&[(tp, 0)], h.rows_p_rep.span(3 * bn)?, true)?;
        }
        let mut shape = geometry::conversion(n, k, 2)?;
        shape.grid.2 = (3 * bn) as u32;
        let d = &h.to_p_dev;
        let s = self.e.alloc(3 * bn * kp)?;
        self.e.gpu.launch(
            "hps_scale_base",
            shape,
            &[
                Arg::W(s.ptr()),
                Arg::W(h.rows_p.dev.ptr()),
                Arg::U(kp as u32),
                Arg::W(tq.ptr()),
                Arg::U(k as u32),
                Arg::W(tp),
                Arg::W(d[0].ptr()),
                Arg::W(d[1].ptr()),
                Arg::W(self.threshold_p()),
                Arg::W(d[2].ptr()),
                Arg::W(d[3].ptr()),
                Arg::U(h.to_p_words as u32),
                Arg::W(d[4].ptr()),
                Arg::W(d[5].ptr()),
                Arg::W(self.e.mt.mods_ptr()),
                Arg::U(n as u32),
                Arg::W((k * n) as u64),
                Arg::W((kp * n) as u64),
                Arg::W((kp * n) as u64),
            ],
        )?;
        let m = self.e.alloc(3 * bn * k)?;
        h.p_to_q
            .run_many(&self.e, (m.ptr(), k * n), (s.ptr(), kp * n), 3 * bn, true)?;
        self.e.free(s);
        Ok(m)
    }

    /// The fast-path threshold of the eq. 8 rounder (`2^64 − 2k`).
    fn threshold_p(&self) -> u64 {
        0u64.wrapping_sub(2 * self.k as u64)
    }

    /// BEHZ (000 §IV.A.1, 002 Alg. 3) for one product: the inputs `c` are
    /// extended to B_sk by FastBaseConv_I with SmMRq (S0-S1), transformed
    /// and tensored there; with the tensor over q (`tq`), fastRNSFloor and
    /// Shenoy-Kumaresan (S3-S4) give the product over q.
    fn lift_scale_behz(&self, c: &DevPoly, tq: &DevPoly) -> Result<DevPoly> {
        let z = &self.behz;
        let (n, k) = (self.e.n(), self.k);
        let kb = z.kb;
        let mods = self.e.mt.mods_ptr();
        let y = self.e.alloc(4 * kb)?;
        let mc = self.e.alloc(k)?;
        let ext = self.e.alloc(kb + 1)?;
        for j in 0..4 {
            // S0: FastBaseConv_I(|m̃ c|_q) into B_sk ∪ {m̃}; S1: SmMRq.
            self.e
                .scalar_mul(mc.ptr(), c.row(j * k, n), &z.mt_q, &self.rows_q)?;
            z.q_to_bm.run(&self.e, ext.ptr(), mc.ptr(), false)?;
            let s = &z.sm_dev;
            self.e.gpu.launch(
                "behz_sm_mrq",
                geometry::pointwise(n, 1)?,
                &[
                    Arg::W(y.row(j * kb, n)),
                    Arg::W(ext.ptr()),
                    Arg::W(z.rows_b.dev.ptr()),
                    Arg::U(kb as u32),
                    Arg::U(self.e.mt.idx(M_TILDE)?),
                    Arg::W(z.sm.neg_q_inv.0),
                    Arg::W(z.sm.neg_q_inv.1),
                    Arg::W(z.sm.half),
                    Arg::W(s[0].ptr()),
                    Arg::W(s[1].ptr()),
                    Arg::W(s[2].ptr()),
                    Arg::W(s[3].ptr()),
                    Arg::W(s[4].ptr()),
                    Arg::W(mods),
                    Arg::U(n as u32),
                ],
            )?;
        }
        self.e.free(mc);
        self.e.free(ext);
        self.e
            .ntt_pairs(&[(y.ptr(), 0)], z.rows_b_rep.span(4)?, false)?;
        let tb = tq.row(3 * k, n);
        let x = [0, 1, 2, 3].map(|j| y.row(j * kb, n));
        self.tensor_planar(tb, x, 0, 1, &z.rows_b)?;
        self.e.free(y);
        self.e
            .ntt_pairs(&[(tq.ptr(), 0)], self.rows_qb3.span(1)?, true)?;
        let m = self.e.alloc(3 * k)?;
        let tqs = self.e.alloc(k)?;
        let tbs = self.e.alloc(kb)?;
        let fl = self.e.alloc(kb)?;
        for j in 0..3 {
            // S3: fastRNSFloor_q(t·c) into B_sk; S4: Shenoy-Kumaresan to q.
            self.e
                .scalar_mul(tqs.ptr(), tq.row(j * k, n), &z.t_q, &self.rows_q)?;
            self.e
                .scalar_mul(tbs.ptr(), Self::at(tb, j * kb * n), &z.t_b, &z.rows_b)?;
            self.e.gpu.launch(
                "behz_floor",
                geometry::conversion(n, k, 0)?,
                &[
                    Arg::W(fl.ptr()),
                    Arg::W(tqs.ptr()),
                    Arg::W(self.rows_q.dev.ptr()),
                    Arg::U(k as u32),
                    Arg::W(tbs.ptr()),
                    Arg::W(z.rows_b.dev.ptr()),
                    Arg::U(kb as u32),
                    Arg::W(z.qhi.ptr()),
                    Arg::W(z.qhis.ptr()),
                    Arg::W(z.floor_w.ptr()),
                    Arg::W(mods),
                    Arg::U(n as u32),
                ],
            )?;
            let d = &z.sk_dev;
            self.e.gpu.launch(
                "behz_sk",
                geometry::conversion(n, kb + 1, 2)?,
                &[
                    Arg::W(m.row(j * k, n)),
                    Arg::W(self.rows_q.dev.ptr()),
                    Arg::U(k as u32),
                    Arg::W(fl.ptr()),
                    Arg::W(z.rows_b.dev.ptr()),
                    Arg::U((kb - 1) as u32),
                    Arg::U(self.e.mt.idx(z.msk)?),
                    Arg::W(d[0].ptr()),
                    Arg::W(d[1].ptr()),
                    Arg::W(d[2].ptr()),
                    Arg::W(z.sk.m_inv.0),
                    Arg::W(z.sk.m_inv.1),
                    Arg::W(d[3].ptr()),
                    Arg::W(mods),
                    Arg::U(n as u32),
                ],
            )?;
        }
        self.free_all(vec![tqs, tbs, fl]);
        Ok(m)
    }

    /// `a · b` without relinearization (3 polynomials, coefficient form) by
    /// the HPS or BEHZ lift-and-scale.
    pub fn multiply(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        variant: Variant,
    ) -> Result<DeviceCiphertext> {
        self.check_pair(a, b)?;
        let m = self.multiply_planar(&[(a, b)], variant)?;
        let n = self.e.n();
        let mut out = Vec::with_capacity(3);
        for j in 0..3 {
            let p = self.e.alloc(self.k)?;
            self.e
                .gpu
                .copy_words(p.ptr(), m.row(j * self.k, n), self.k * n)?;
            out.push(p);
        }
        self.e.free(m);
        Ok(self.new_ct(a.key_id, out, false))
    }

    /// Relinearization of `bn` products: `c2` is the address of the c2
    /// polynomial of the first (coefficient form; the others follow, `k`
    /// rows apart), `c01[b]` the addresses of c0 and c1 of product b
    /// (coefficient form, or NTT form when `c01_ntt`). Key switching by
    /// the RNS decomposition (002 §4.5: every digit lifted, transformed and
    /// multiplied with the key in a few launches for the whole batch) or
    /// hybrid. NTT-form results `[c0', c1']` per product.
    fn relinearize_many(
        &self,
        c2: u64,
        c01: &[(u64, u64)],
        c01_ntt: bool,
        rk: &DeviceKsk,
    ) -> Result<Vec<[DevPoly; 2]>> {
        check_id(self.ctx.id(), rk.ctx_id)?;
        let (n, k) = (self.e.n(), self.k);
        let bn = c01.len();
        let mut outs = Vec::with_capacity(bn);
        for _ in 0..bn {
            outs.push([self.e.alloc(k)?, self.e.alloc(k)?]);
        }
        // The outputs start as NTT(c0), NTT(c1): the key-switching sums are
        // accumulated onto them.
        if c01_ntt {
            for (o, &(x0, x1)) in outs.iter().zip(c01) {
                self.e.gpu.copy_words(o[0].ptr(), x0, k * n)?;
                self.e.gpu.copy_words(o[1].ptr(), x1, k * n)?;
            }
            self.switch_into(c2, &outs, rk, &[])?;
        } else {
            let pairs: Vec<(u64, u64)> = outs
                .iter()
                .zip(c01)
                .flat_map(|(o, &(x0, x1))| [(o[0].ptr(), x0), (o[1].ptr(), x1)])
                .collect();
            self.switch_into(c2, &outs, rk, &pairs)?;
        }
        Ok(outs)
    }

    /// Key switching of `outs.len()` polynomials `c` (coefficient form over
    /// q, the first at address `c`, the others `k` rows apart) with `rk`,
    /// accumulated onto `outs[b]` (NTT form): `outs[b][i] += ks_i(c_b)`.
    /// `pending`: forward NTTs `(dst, src)` over q that must happen first
    /// (they share the digits' launch when few enough).
    fn switch_into(
        &self,
        c2: u64,
        outs: &[[DevPoly; 2]],
        rk: &DeviceKsk,
        pending: &[(u64, u64)],
    ) -> Result<()> {
        check_id(self.ctx.id(), rk.ctx_id)?;
        let (n, k) = (self.e.n(), self.k);
        let bn = outs.len();
        if bn == 0 {
            return Ok(());
        }
        // Few enough polynomials for one argument-passed launch: the
        // pending transforms join the digits' (one product, k ≤ 6).
        let merge = !rk.hybrid && bn * k + pending.len() <= geometry::NTT_MAX_POLYS;
        if !merge {
            self.e.ntt_pairs(pending, self.rows_q_rep.span(1)?, false)?;
        }
        if rk.hybrid {
            let lv = self.hybrid.as_ref().ok_or_else(|| {
                CudaError::InvalidArgument(
                    "a hybrid key for a context without special primes".into(),
                )
            })?;
            for (b, o) in outs.iter().enumerate() {
                let (k0, k1) = self.e.hybrid_switch_at(lv, rk, Self::at(c2, b * k * n))?;
                self.e
                    .binary("poly_add", o[0].ptr(), o[0].ptr(), k0.ptr(), &self.rows_q)?;
                self.e
                    .binary("poly_add", o[1].ptr(), o[1].ptr(), k1.ptr(), &self.rows_q)?;
                self.e.free(k0);
                self.e.free(k1);
            }
            return Ok(());
        }
        if rk.pairs.len() != k {
            return Err(CudaError::InvalidArgument(
                "key-switching key of the wrong size".into(),
            ));
        }
        // Digits per group: all k when the launch limits and a 1 GiB
        // working set allow.
        let budget_rows = (1usize << 27) / n;
        let group = k
            .min((65_535 / (bn * k)).max(1))
            .min((budget_rows / (bn * k)).max(1))
            .min(self.rows_q_rep.times() / bn)
            .max(1);
        let table = if bn > 1 {
            let words: Vec<u64> = outs.iter().flat_map(|o| [o[0].ptr(), o[1].ptr()]).collect();
            Some(self.e.gpu.upload(&words)?)
        } else {
            None
        };
        let digits = self.e.alloc(bn * group * k)?;
        let mut g0 = 0;
        let mut result = Ok(());
        while g0 < k && result.is_ok() {
            let cnt = group.min(k - g0);
            result = (|| {
                let mut shape = geometry::pointwise(n, k)?;
                shape.grid.2 = (bn * cnt) as u32;
                self.e.gpu.launch(
                    "poly_reduce_rows",
                    shape,
                    &[
                        Arg::W(digits.ptr()),
                        Arg::W(c2),
                        Arg::W((k * n) as u64),
                        Arg::U(cnt as u32),
                        Arg::U(k as u32),
                        Arg::U(g0 as u32),
                        Arg::W(self.rows_q.dev.ptr()),
                        Arg::W(self.e.mt.mods_ptr()),
                        Arg::U(n as u32),
                    ],
                )?;
                if merge && g0 == 0 {
                    let mut pairs: Vec<(u64, u64)> =
                        (0..bn * cnt).map(|d| (digits.row(d * k, n), 0)).collect();
                    pairs.extend_from_slice(pending);
                    self.e.ntt_pairs(&pairs, self.rows_q_rep.span(1)?, false)?;
                } else {
                    self.e.ntt_pairs(
                        &[(digits.ptr(), 0)],
                        self.rows_q_rep.span(bn * cnt)?,
                        false,
                    )?;
                }
                self.e.ks_mac_table(
                    (outs[0][0].ptr(), outs[0][1].ptr(), 0),
                    table.as_ref().map_or(0, DevArray::ptr),
                    (digits.ptr(), k * n, cnt * k * n),
                    cnt,
                    rk,
                    g0,
                    &self.key_rows_q,
                    &self.rows_q,
                    false,
                    bn,
                )
            })();
            g0 += cnt;
        }
        self.e.free(digits);
        if let Some(t) = table {
            self.e.gpu.give(t);
        }
        result
    }

    /// Relinearizes a 3-polynomial ciphertext (NTT-form result), as
    /// `Evaluator::relinearize`.
    pub fn relinearize(&self, a: &DeviceCiphertext, rk: &DeviceKsk) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        if rk.key_id != a.key_id {
            return Err(CudaError::KeyMismatch("relinearization key".into()));
        }
        if a.size() != 3 {
            return Err(CudaError::InvalidArgument(
                "relinearize needs 3 polynomials".into(),
            ));
        }
        let c01 = [(a.polys[0].ptr(), a.polys[1].ptr())];
        let out = if a.ntt {
            let c2 = self.e.alloc(self.k)?;
            self.e.ntt_pairs(
                &[(c2.ptr(), a.polys[2].ptr())],
                self.rows_q_rep.span(1)?,
                true,
            )?;
            let r = self.relinearize_many(c2.ptr(), &c01, true, rk);
            self.e.free(c2);
            r?
        } else {
            self.relinearize_many(a.polys[2].ptr(), &c01, false, rk)?
        };
        let [c0, c1] = out
            .into_iter()
            .next()
            .ok_or_else(|| CudaError::InvalidArgument("relinearize".into()))?;
        Ok(self.new_ct(a.key_id, vec![c0, c1], true))
    }

    /// `relinearize(a · b)` (NTT form), as `Evaluator::multiply_relin`.
    pub fn multiply_relin(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        rk: &DeviceKsk,
        variant: Variant,
    ) -> Result<DeviceCiphertext> {
        self.multiply_relin_batch(&[(a, b)], rk, variant)?
            .pop()
            .ok_or_else(|| CudaError::InvalidArgument("multiply_relin".into()))
    }

    /// `multiply_relin` of every pair, batched: up to [`Self::batch_cap`]
    /// products (HPS) share every launch, so a batch runs the launch
    /// sequence of one product with many times the work per launch (BEHZ:
    /// one product at a time). Results in order, bit-identical to the
    /// single calls.
    pub fn multiply_relin_batch(
        &self,
        pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
        rk: &DeviceKsk,
        variant: Variant,
    ) -> Result<Vec<DeviceCiphertext>> {
        for (a, b) in pairs {
            self.check_pair(a, b)?;
            if rk.key_id != a.key_id {
                return Err(CudaError::KeyMismatch("relinearization key".into()));
            }
        }
        check_id(self.ctx.id(), rk.ctx_id)?;
        let (n, k) = (self.e.n(), self.k);
        let mut out = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(self.batch_cap(variant)) {
            let bn = chunk.len();
            let m = self.multiply_planar(chunk, variant)?;
            let c01: Vec<(u64, u64)> = (0..bn)
                .map(|b| (m.row(b * k, n), m.row((bn + b) * k, n)))
                .collect();
            let r = self.relinearize_many(m.row(2 * bn * k, n), &c01, false, rk);
            self.e.free(m);
            for ([c0, c1], (a, _)) in r?.into_iter().zip(chunk) {
                out.push(self.new_ct(a.key_id, vec![c0, c1], true));
            }
        }
        Ok(out)
    }

    /// Returns a ciphertext's buffers to the pool.
    pub fn release(&self, ct: DeviceCiphertext) {
        self.free_all(ct.polys);
    }

    /// Rotates the batched rows left by `steps` (`Evaluator::rotate_rows`):
    /// the automorphisms of the elements the CPU would apply, each a slot
    /// permutation and a key switch of `σ(c_1)`. NTT-form result.
    pub fn rotate_rows(
        &self,
        a: &DeviceCiphertext,
        steps: i64,
        gk: &DeviceGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        self.check_top(a)?;
        check_id(self.ctx.id(), gk.ctx_id)?;
        if gk.cpu.key_id() != a.key_id {
            return Err(CudaError::KeyMismatch("Galois keys".into()));
        }
        let elements =
            gk.cpu
                .rotation_elements(self.e.n(), rnsfhe::bfv::galois::ROW_GENERATOR, steps)?;
        // NTT form first (a copy only for a coefficient-form input), then
        // the automorphisms in turn.
        let mut cur: Option<DeviceCiphertext> = None;
        if !a.ntt {
            let polys = a
                .polys
                .iter()
                .map(|_| self.e.alloc(self.k))
                .collect::<Result<Vec<_>>>()?;
            let pairs: Vec<(u64, u64)> = polys
                .iter()
                .zip(&a.polys)
                .map(|(d, s)| (d.ptr(), s.ptr()))
                .collect();
            self.e.ntt_pairs(&pairs, self.rows_q_rep.span(1)?, false)?;
            cur = Some(self.new_ct(a.key_id, polys, true));
        }
        crate::context::apply_in_turn(
            a,
            cur,
            &elements,
            |x, el| self.apply_galois(x, el, gk),
            |c| self.release(c),
            || {
                let polys = a
                    .polys
                    .iter()
                    .map(|p| self.e.clone_poly(p))
                    .collect::<Result<Vec<_>>>()?;
                Ok(self.new_ct(a.key_id, polys, true))
            },
        )
    }

    fn apply_galois(
        &self,
        a: &DeviceCiphertext,
        el: u64,
        gk: &DeviceGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        let (_, key, map) = gk
            .keys
            .iter()
            .find(|(e, _, _)| *e == el)
            .ok_or(CudaError::Scheme(rnsfhe::Error::MissingGaloisKey {
                element: el,
            }))?;
        if a.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "rotation needs 2 polynomials".into(),
            ));
        }
        let n = self.e.n();
        let shape = geometry::pointwise(n, self.k)?;
        let c0 = self.e.alloc(self.k)?;
        let mut c1 = self.e.alloc(self.k)?;
        self.e.gpu.launch(
            "poly_permute",
            shape,
            &[
                Arg::W(c0.ptr()),
                Arg::W(a.polys[0].ptr()),
                Arg::W(map.ptr()),
                Arg::U(n as u32),
            ],
        )?;
        self.e.gpu.launch(
            "poly_permute",
            shape,
            &[
                Arg::W(c1.ptr()),
                Arg::W(a.polys[1].ptr()),
                Arg::W(map.ptr()),
                Arg::U(n as u32),
            ],
        )?;
        self.e.ntt_inverse(&mut c1, &self.rows_q)?;
        let mut z = self.e.alloc(self.k)?;
        self.e.zero(&mut z)?;
        let outs = [[c0, z]];
        let r = self.switch_into(c1.ptr(), &outs, key, &[]);
        self.e.free(c1);
        let [[c0, c1]] = outs;
        if let Err(e) = r {
            self.e.free(c0);
            self.e.free(c1);
            return Err(e);
        }
        Ok(self.new_ct(a.key_id, vec![c0, c1], true))
    }

    /// Every limb count the device tables cover (for diagnostics).
    pub fn limbs(&self) -> usize {
        self.k
    }
}
