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
    q_to_p: DevConv,
    p_to_q: DevConv,
    to_t: ScaleToTTables,
    to_t_dev: [DevArray<u64>; 5],
    to_p_dev: [DevArray<u64>; 6],
    to_p_words: usize,
}

struct BehzDev {
    rows_b: Rows,
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
    rows_q_group: Rows,
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

/// Digits of the RNS decomposition transformed and accumulated per launch.
pub const DIGIT_GROUP: usize = 8;

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
        let group: Vec<u64> = (0..DIGIT_GROUP.min(k))
            .flat_map(|_| q.iter().copied())
            .collect();
        let table = gaussian_table(cpu.gaussian());
        let ident: Vec<u32> = (0..k as u32).collect();
        Ok(Self {
            rows_q: e.mt.rows(g, &q)?,
            rows_q_group: e.mt.rows(g, &group)?,
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

    /// A coefficient-form copy of `p` (inverse-transformed when `ntt`).
    fn coeff_copy(&self, p: &DevPoly, ntt: bool) -> Result<DevPoly> {
        let mut c = self.e.clone_poly(p)?;
        if ntt {
            self.e.ntt_inverse(&mut c, &self.rows_q)?;
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
        let polys: Vec<DevPoly> = ct
            .polys
            .iter()
            .map(|p| self.ntt_copy(p, !ct.ntt))
            .collect::<Result<_>>()?;
        // Horner in NTT form: x = ((c_d s + c_{d−1}) s + …) s + c_0.
        let mut x = self.e.clone_poly(
            polys
                .last()
                .ok_or_else(|| CudaError::InvalidArgument("empty".into()))?,
        )?;
        for c in polys[..polys.len() - 1].iter().rev() {
            self.e.pointwise(
                "poly_mul_add",
                &self.rows_q,
                &[
                    Arg::W(x.ptr()),
                    Arg::W(x.ptr()),
                    Arg::W(sk.s.ptr()),
                    Arg::W(c.ptr()),
                ],
            )?;
        }
        self.free_all(polys);
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
        self.check_top(a)?;
        self.check_top(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch("add".into()));
        }
        let ntt = a.ntt || b.ntt;
        let size = a.size().max(b.size());
        let mut out = Vec::with_capacity(size);
        for i in 0..size {
            let pa = a
                .polys
                .get(i)
                .map(|p| self.ntt_or_copy(p, ntt && !a.ntt))
                .transpose()?;
            let pb = b
                .polys
                .get(i)
                .map(|p| self.ntt_or_copy(p, ntt && !b.ntt))
                .transpose()?;
            match (pa, pb) {
                (Some(x), Some(y)) => {
                    self.e
                        .binary("poly_add", x.ptr(), x.ptr(), y.ptr(), &self.rows_q)?;
                    self.e.free(y);
                    out.push(x);
                }
                (Some(x), None) | (None, Some(x)) => out.push(x),
                (None, None) => {}
            }
        }
        Ok(self.new_ct(a.key_id, out, ntt))
    }

    fn ntt_or_copy(&self, p: &DevPoly, transform: bool) -> Result<DevPoly> {
        self.ntt_copy(p, transform)
    }

    /// `a · b` without relinearization (3 polynomials, coefficient form) by
    /// the HPS or BEHZ lift-and-scale.
    pub fn multiply(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        variant: Variant,
    ) -> Result<DeviceCiphertext> {
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
        let forms = [a.ntt, a.ntt, b.ntt, b.ntt];
        let mut coeff = Vec::with_capacity(4);
        let mut over_q = Vec::with_capacity(4);
        for p in a.polys.iter().chain(&b.polys) {
            coeff.push(self.e.clone_poly(p)?);
            over_q.push(self.e.clone_poly(p)?);
        }
        // Both forms of all four inputs: one batched NTT each way.
        let to_coeff: Vec<u64> = coeff
            .iter()
            .zip(&forms)
            .filter(|(_, &ntt)| ntt)
            .map(|(p, _)| p.ptr())
            .collect();
        self.e.ntt_many(&to_coeff, &self.rows_q, true)?;
        let to_ntt: Vec<u64> = over_q
            .iter()
            .zip(&forms)
            .filter(|(_, &ntt)| !ntt)
            .map(|(p, _)| p.ptr())
            .collect();
        self.e.ntt_many(&to_ntt, &self.rows_q, false)?;
        let out = match variant {
            Variant::Hps => self.lift_scale_hps(&coeff, &over_q),
            Variant::Behz => self.lift_scale_behz(&coeff, &over_q),
            other => Err(CudaError::Unsupported(format!("variant {other:?}"))),
        };
        self.free_all(coeff);
        self.free_all(over_q);
        Ok(self.new_ct(a.key_id, out?, false))
    }

    /// The Karatsuba tensor over `rows` of four NTT-form inputs: three
    /// coefficient-form outputs.
    fn tensor(&self, x: &[DevPoly], rows: &Rows) -> Result<Vec<DevPoly>> {
        let limbs = rows.len();
        let c: Vec<DevPoly> = (0..3).map(|_| self.e.alloc(limbs)).collect::<Result<_>>()?;
        self.e.pointwise(
            "poly_tensor",
            rows,
            &[
                Arg::W(c[0].ptr()),
                Arg::W(c[1].ptr()),
                Arg::W(c[2].ptr()),
                Arg::W(x[0].ptr()),
                Arg::W(x[1].ptr()),
                Arg::W(x[2].ptr()),
                Arg::W(x[3].ptr()),
            ],
        )?;
        let ptrs: Vec<u64> = c.iter().map(DevPoly::ptr).collect();
        self.e.ntt_many(&ptrs, rows, true)?;
        Ok(c)
    }

    fn lift_scale_hps(&self, coeff: &[DevPoly], over_q: &[DevPoly]) -> Result<Vec<DevPoly>> {
        let h = &self.hps;
        let kp = h.rows_p.len();
        let mut over_p = Vec::with_capacity(4);
        for c in coeff {
            let y = self.e.alloc(kp)?;
            h.q_to_p.run(&self.e, y.ptr(), c.ptr(), true)?;
            over_p.push(y);
        }
        let ptrs: Vec<u64> = over_p.iter().map(DevPoly::ptr).collect();
        self.e.ntt_many(&ptrs, &h.rows_p, false)?;
        let cq = self.tensor(over_q, &self.rows_q)?;
        let cp = self.tensor(&over_p, &h.rows_p)?;
        self.free_all(over_p);
        let n = self.e.n();
        let shape = geometry::conversion(n, self.k, 2)?;
        let d = &h.to_p_dev;
        let mut out = Vec::with_capacity(3);
        for (xq, xp) in cq.iter().zip(&cp) {
            let s = self.e.alloc(kp)?;
            let th = self.threshold_p();
            self.e.gpu.launch(
                "hps_scale_base",
                shape,
                &[
                    Arg::W(s.ptr()),
                    Arg::W(h.rows_p.dev.ptr()),
                    Arg::U(kp as u32),
                    Arg::W(xq.ptr()),
                    Arg::U(self.k as u32),
                    Arg::W(xp.ptr()),
                    Arg::W(d[0].ptr()),
                    Arg::W(d[1].ptr()),
                    Arg::W(th),
                    Arg::W(d[2].ptr()),
                    Arg::W(d[3].ptr()),
                    Arg::U(h.to_p_words as u32),
                    Arg::W(d[4].ptr()),
                    Arg::W(d[5].ptr()),
                    Arg::W(self.e.mt.mods_ptr()),
                    Arg::U(n as u32),
                ],
            )?;
            let o = self.e.alloc(self.k)?;
            h.p_to_q.run(&self.e, o.ptr(), s.ptr(), true)?;
            self.e.free(s);
            out.push(o);
        }
        self.free_all(cq);
        self.free_all(cp);
        Ok(out)
    }

    /// The fast-path threshold of the eq. 8 rounder (`2^64 − 2k`).
    fn threshold_p(&self) -> u64 {
        0u64.wrapping_sub(2 * self.k as u64)
    }

    fn lift_scale_behz(&self, coeff: &[DevPoly], over_q: &[DevPoly]) -> Result<Vec<DevPoly>> {
        let z = &self.behz;
        let n = self.e.n();
        let kb = z.kb;
        let mods = self.e.mt.mods_ptr();
        let mut over_b = Vec::with_capacity(4);
        for c in coeff {
            // S0: FastBaseConv_I(|m̃ c|_q) into B_sk ∪ {m̃}; S1: SmMRq.
            let mc = self.e.alloc(self.k)?;
            self.e
                .scalar_mul(mc.ptr(), c.ptr(), &z.mt_q, &self.rows_q)?;
            let ext = self.e.alloc(kb + 1)?;
            z.q_to_bm.run(&self.e, ext.ptr(), mc.ptr(), false)?;
            let y = self.e.alloc(kb)?;
            let s = &z.sm_dev;
            self.e.gpu.launch(
                "behz_sm_mrq",
                geometry::pointwise(n, 1)?,
                &[
                    Arg::W(y.ptr()),
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
            self.e.free(mc);
            self.e.free(ext);
            over_b.push(y);
        }
        let ptrs: Vec<u64> = over_b.iter().map(DevPoly::ptr).collect();
        self.e.ntt_many(&ptrs, &z.rows_b, false)?;
        let cq = self.tensor(over_q, &self.rows_q)?;
        let cb = self.tensor(&over_b, &z.rows_b)?;
        self.free_all(over_b);
        let mut out = Vec::with_capacity(3);
        for (xq, xb) in cq.iter().zip(&cb) {
            // S3: fastRNSFloor_q(t·c) into B_sk; S4: Shenoy-Kumaresan to q.
            let tq = self.e.alloc(self.k)?;
            self.e
                .scalar_mul(tq.ptr(), xq.ptr(), &z.t_q, &self.rows_q)?;
            let tb = self.e.alloc(kb)?;
            self.e.scalar_mul(tb.ptr(), xb.ptr(), &z.t_b, &z.rows_b)?;
            let fl = self.e.alloc(kb)?;
            self.e.gpu.launch(
                "behz_floor",
                geometry::conversion(n, self.k, 0)?,
                &[
                    Arg::W(fl.ptr()),
                    Arg::W(tq.ptr()),
                    Arg::W(self.rows_q.dev.ptr()),
                    Arg::U(self.k as u32),
                    Arg::W(tb.ptr()),
                    Arg::W(z.rows_b.dev.ptr()),
                    Arg::U(kb as u32),
                    Arg::W(z.qhi.ptr()),
                    Arg::W(z.qhis.ptr()),
                    Arg::W(z.floor_w.ptr()),
                    Arg::W(mods),
                    Arg::U(n as u32),
                ],
            )?;
            let o = self.e.alloc(self.k)?;
            let d = &z.sk_dev;
            self.e.gpu.launch(
                "behz_sk",
                geometry::conversion(n, kb + 1, 2)?,
                &[
                    Arg::W(o.ptr()),
                    Arg::W(self.rows_q.dev.ptr()),
                    Arg::U(self.k as u32),
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
            self.free_all(vec![tq, tb, fl]);
            out.push(o);
        }
        self.free_all(cq);
        self.free_all(cb);
        Ok(out)
    }

    /// The key switch of `c` (coefficient form over q) with `key`: the two
    /// NTT-form sums.
    fn switch(&self, c: &DevPoly, key: &DeviceKsk) -> Result<(DevPoly, DevPoly)> {
        check_id(self.ctx.id(), key.ctx_id)?;
        if key.hybrid {
            let lv = self.hybrid.as_ref().ok_or_else(|| {
                CudaError::InvalidArgument(
                    "a hybrid key for a context without special primes".into(),
                )
            })?;
            return self.e.hybrid_switch(lv, key, c);
        }
        let (n, k) = (self.e.n(), self.k);
        if key.pairs.len() != k {
            return Err(CudaError::InvalidArgument(
                "key-switching key of the wrong size".into(),
            ));
        }
        let acc0 = self.e.alloc(k)?;
        let acc1 = self.e.alloc(k)?;
        let g = DIGIT_GROUP.min(k);
        let mut digits = self.e.alloc(g * k)?;
        let mut i0 = 0;
        while i0 < k {
            let cnt = g.min(k - i0);
            for d in 0..cnt {
                self.e.pointwise(
                    "poly_reduce_from",
                    &self.rows_q,
                    &[Arg::W(digits.row(d * k, n)), Arg::W(c.row(i0 + d, n))],
                )?;
            }
            if cnt == g {
                self.e.ntt_forward(&mut digits, &self.rows_q_group)?;
            } else {
                for d in 0..cnt {
                    self.e.ntt_forward_at(digits.row(d * k, n), &self.rows_q)?;
                }
            }
            self.e.ks_mac(
                acc0.ptr(),
                acc1.ptr(),
                digits.ptr(),
                k * n,
                cnt,
                key,
                i0,
                &self.key_rows_q,
                &self.rows_q,
                i0 == 0,
            )?;
            i0 += cnt;
        }
        self.e.free(digits);
        Ok((acc0, acc1))
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
        let c2 = self.coeff_copy(&a.polys[2], a.ntt)?;
        let (k0, k1) = self.switch(&c2, rk)?;
        self.e.free(c2);
        let c0 = self.e.clone_poly(&a.polys[0])?;
        let c1 = self.e.clone_poly(&a.polys[1])?;
        if !a.ntt {
            self.e
                .ntt_many(&[c0.ptr(), c1.ptr()], &self.rows_q, false)?;
        }
        self.e
            .binary("poly_add", c0.ptr(), c0.ptr(), k0.ptr(), &self.rows_q)?;
        self.e
            .binary("poly_add", c1.ptr(), c1.ptr(), k1.ptr(), &self.rows_q)?;
        self.e.free(k0);
        self.e.free(k1);
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
        let t = self.multiply(a, b, variant)?;
        let r = self.relinearize(&t, rk);
        self.release(t);
        r
    }

    /// The batch entry point: `multiply_relin` of every pair, launched
    /// back to back on the stream with no synchronisation in between (the
    /// device overlaps their kernels; the pool serves every buffer after
    /// the first pair).
    pub fn multiply_relin_batch(
        &self,
        pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
        rk: &DeviceKsk,
        variant: Variant,
    ) -> Result<Vec<DeviceCiphertext>> {
        pairs
            .iter()
            .map(|(a, b)| self.multiply_relin(a, b, rk, variant))
            .collect()
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
        let polys = a
            .polys
            .iter()
            .map(|p| self.e.clone_poly(p))
            .collect::<Result<Vec<_>>>()?;
        if !a.ntt {
            let ptrs: Vec<u64> = polys.iter().map(DevPoly::ptr).collect();
            self.e.ntt_many(&ptrs, &self.rows_q, false)?;
        }
        let mut cur = self.new_ct(a.key_id, polys, true);
        for el in elements {
            let next = self.apply_galois(&cur, el, gk)?;
            self.release(cur);
            cur = next;
        }
        Ok(cur)
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
        let (k0, k1) = self.switch(&c1, key)?;
        self.e.free(c1);
        self.e
            .binary("poly_add", c0.ptr(), c0.ptr(), k0.ptr(), &self.rows_q)?;
        self.e.free(k0);
        Ok(self.new_ct(a.key_id, vec![c0, k1], true))
    }

    /// Every limb count the device tables cover (for diagnostics).
    pub fn limbs(&self) -> usize {
        self.k
    }
}
