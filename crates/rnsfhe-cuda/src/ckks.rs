//! CKKS on the GPU (001 §II-V on the RNS variant): public-key encryption
//! (over `Q_l·p_1` and the exact division by `p_1`, as the CPU), decryption
//! to the plaintext polynomial, addition, `multiply_relin_rescale` (tensor,
//! hybrid ModUp and inner product, one exact division by `P·q_l`) and slot
//! rotations, at any level, bit-identical to rnsfhe's CPU path. Needs a
//! context with special primes (hybrid key switching, CKKS's default).

use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rnsfhe::ckks::{
    Ciphertext, CkksContext, GaloisKeys, Plaintext, PublicKey, RelinKey, SecretKey,
};
use rnsfhe::rlwe::{KeySwitchingKey, SchemeContext};
use rnsfhe::rnsfhe_math::{Modulus, Ntt, RnsPoly};

use crate::context::{CudaContext, DeviceCiphertext};
use crate::device::{Arg, DevArray};
use crate::error::{check_id, CudaError, Result};
use crate::geometry;
use crate::runtime::{Consts, DevPoly, DeviceKsk, Engine, HybridLevel, ModTable, Rows};
use crate::tables::{chacha_key_words, galois_ntt_map, gaussian_table};
use rnsfhe::ckks::evaluator::SCALE_TOLERANCE;

/// Device keys of CKKS: public key (over `Q·P` or `Q`), `NTT(s)`.
#[derive(Debug)]
pub struct DeviceCkksKeys {
    ctx_id: u64,
    key_id: u64,
    pk: Option<(DevPoly, DevPoly)>,
    s: Option<DevPoly>,
}

/// Device Galois keys of CKKS.
#[derive(Debug)]
pub struct DeviceCkksGaloisKeys {
    ctx_id: u64,
    cpu: GaloisKeys,
    keys: Vec<(u64, DeviceKsk, DevArray<u32>)>,
}

/// CKKS operations of one [`CkksContext`] on one [`CudaContext`].
pub struct CudaCkks {
    ctx: CudaContext,
    cpu: Arc<CkksContext>,
    e: Engine,
    q: Vec<u64>,
    special: Vec<u64>,
    /// Per limb count `kl = 1..=k`: rows of Q_l, rows Q_l ∪ {p_1}, hybrid
    /// tables, `[p_1]_{q_i}` and `[p_1^{-1}]_{q_i}`.
    levels: Vec<(Rows, Rows, HybridLevel, Consts, Consts)>,
    rows_p1: Rows,
    /// Per limb count `kl ≥ 2` (index `kl − 2`): the rescaling tables.
    rescales: Vec<RescaleLevel>,
    gauss: DevArray<u64>,
    gauss_len: usize,
}

/// Rescaling by the last prime `q_l` of a level (001 §II): the row of
/// `q_l`, `[⌊q_l/2⌋]_{q_i}` and `[q_l^{-1}]_{q_i}` on the kept rows.
#[derive(Debug)]
struct RescaleLevel {
    rows_last: Rows,
    half: u64,
    half_q: DevArray<u64>,
    inv: Consts,
}

impl core::fmt::Debug for CudaCkks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CudaCkks")
            .field("device", &self.ctx.device_name())
            .field("n", &self.e.n())
            .finish_non_exhaustive()
    }
}

impl CudaCkks {
    /// Uploads the tables of every level of `cpu`.
    pub fn new(ctx: &CudaContext, cpu: &Arc<CkksContext>) -> Result<Self> {
        let n = cpu.degree();
        geometry::check_degree(n)?;
        let params = cpu.params();
        let q = params.coeff_moduli().to_vec();
        let special = params.special_moduli().to_vec();
        let sp = cpu
            .rlwe()
            .special_primes()
            .ok_or_else(|| CudaError::Unsupported("CKKS without special primes".into()))?;
        let mut ntt = q.clone();
        ntt.extend(&special);
        let gpu = Arc::clone(&ctx.gpu);
        let mt = ModTable::new(&gpu, n, &ntt, &[])?;
        let e = Engine { gpu, mt };
        let p1 = *special
            .first()
            .ok_or_else(|| CudaError::Unsupported("no special prime".into()))?;
        let mut levels = Vec::with_capacity(q.len());
        for kl in 1..=q.len() {
            let ql = &q[..kl];
            let mut with_p1 = ql.to_vec();
            with_p1.push(p1);
            let pm: Vec<u64> = ql.iter().map(|&qi| p1 % qi).collect();
            let pinv = ql
                .iter()
                .zip(&pm)
                .map(|(&qi, &x)| Ok(Modulus::new(qi)?.inv(x)?))
                .collect::<Result<Vec<_>>>()?;
            levels.push((
                e.mt.rows(&e.gpu, ql)?,
                e.mt.rows(&e.gpu, &with_p1)?,
                HybridLevel::new(&e, &q, &special, sp.alpha(), kl)?,
                Consts::new(&e.gpu, &pm, ql)?,
                Consts::new(&e.gpu, &pinv, ql)?,
            ));
        }
        let mut rescales = Vec::with_capacity(q.len().saturating_sub(1));
        for kl in 2..=q.len() {
            let ql = q[kl - 1];
            let half = ql / 2;
            let low = &q[..kl - 1];
            let half_q: Vec<u64> = low.iter().map(|&qi| half % qi).collect();
            let inv = low
                .iter()
                .map(|&qi| {
                    let m = Modulus::new(qi)?;
                    Ok(m.inv(m.reduce(ql))?)
                })
                .collect::<Result<Vec<_>>>()?;
            rescales.push(RescaleLevel {
                rows_last: e.mt.rows(&e.gpu, &[ql])?,
                half,
                half_q: e.gpu.array(&half_q)?,
                inv: Consts::new(&e.gpu, &inv, low)?,
            });
        }
        let table = gaussian_table(cpu.rlwe().gaussian());
        Ok(Self {
            rescales,
            rows_p1: e.mt.rows(&e.gpu, &[p1])?,
            gauss: e.gpu.array(&table)?,
            gauss_len: table.len(),
            ctx: ctx.clone(),
            cpu: Arc::clone(cpu),
            q,
            special,
            levels,
            e,
        })
    }

    fn level(&self, kl: usize) -> Result<&(Rows, Rows, HybridLevel, Consts, Consts)> {
        kl.checked_sub(1)
            .and_then(|i| self.levels.get(i))
            .ok_or_else(|| CudaError::InvalidArgument(format!("no level with {kl} limbs")))
    }

    fn new_ct(&self, key_id: u64, polys: Vec<DevPoly>, scale: f64, len: usize) -> DeviceCiphertext {
        DeviceCiphertext {
            ctx_id: self.ctx.id(),
            params_id: self.cpu.id(),
            key_id,
            polys,
            ntt: true,
            scale,
            len,
        }
    }

    fn check(&self, ct: &DeviceCiphertext) -> Result<()> {
        ct.check(self.ctx.id(), self.cpu.id())
    }

    /// Copies a CPU ciphertext to the device.
    pub fn upload(&self, ct: &Ciphertext) -> Result<DeviceCiphertext> {
        self.cpu.check_id(ct.params_id())?;
        let polys = ct
            .polys()
            .iter()
            .map(|p| self.e.upload(p.data(), p.limbs()))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.new_ct(ct.key_id(), polys, ct.scale(), ct.len()))
    }

    /// Copies a device ciphertext back.
    pub fn download(&self, ct: &DeviceCiphertext) -> Result<Ciphertext> {
        self.check(ct)?;
        let n = self.e.n();
        let polys = ct
            .polys
            .iter()
            .map(|p| {
                Ok(RnsPoly::<Ntt>::from_data(
                    n,
                    p.limbs(),
                    self.e.download(p)?,
                )?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Ciphertext::from_parts(
            &self.cpu, ct.key_id, ct.scale, ct.len, polys,
        )?)
    }

    /// Uploads the public key and/or the secret key.
    pub fn upload_keys(
        &self,
        pk: Option<&PublicKey>,
        sk: Option<&SecretKey>,
    ) -> Result<DeviceCkksKeys> {
        let mut key_id = None;
        let pk = match pk {
            Some(pk) => {
                self.cpu.check_id(pk.params_id())?;
                key_id = Some(pk.key_id());
                Some((
                    self.e.upload(pk.pk0().data(), pk.pk0().limbs())?,
                    self.e.upload(pk.pk1().data(), pk.pk1().limbs())?,
                ))
            }
            None => None,
        };
        let s = match sk {
            Some(sk) => {
                self.cpu.check_id(sk.params_id())?;
                if key_id.is_some_and(|k| k != sk.key_id()) {
                    return Err(CudaError::KeyMismatch("public and secret key".into()));
                }
                key_id = Some(sk.key_id());
                let ring = self.cpu.ring_at(self.cpu.max_level())?;
                let mut data = ring
                    .to_ntt(ring.from_signed(sk.coefficients())?)?
                    .into_data();
                let r = self.e.upload(&data, self.q.len());
                zeroize::Zeroize::zeroize(&mut data);
                Some(r?)
            }
            None => None,
        };
        Ok(DeviceCkksKeys {
            ctx_id: self.ctx.id(),
            key_id: key_id.ok_or_else(|| CudaError::InvalidArgument("no key given".into()))?,
            pk,
            s,
        })
    }

    fn upload_ksk(&self, ksk: &KeySwitchingKey) -> Result<DeviceKsk> {
        self.cpu.check_id(ksk.params_id())?;
        if !ksk.is_hybrid() {
            return Err(CudaError::Unsupported(
                "CKKS keys without special primes".into(),
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
        DeviceKsk::new(&self.e, self.ctx.id(), ksk.key_id(), pairs, true)
    }

    /// Uploads a relinearization key.
    pub fn upload_relin_key(&self, rk: &RelinKey) -> Result<DeviceKsk> {
        self.upload_ksk(rk.key_switching_key())
    }

    /// Uploads Galois keys.
    pub fn upload_galois_keys(&self, gk: &GaloisKeys) -> Result<DeviceCkksGaloisKeys> {
        self.cpu.check_id(gk.params_id())?;
        let mut keys = Vec::new();
        for el in gk.elements() {
            let ksk = gk
                .key_switching_key(el)
                .ok_or(CudaError::InvalidArgument(format!("no key for {el}")))?;
            keys.push((
                el,
                self.upload_ksk(ksk)?,
                self.e.gpu.array(&galois_ntt_map(self.e.n(), el))?,
            ));
        }
        Ok(DeviceCkksGaloisKeys {
            ctx_id: self.ctx.id(),
            cpu: gk.clone(),
            keys,
        })
    }

    /// Public-key encryption of `pt` (its level and scale), drawing `u`,
    /// `e_0`, `e_1` from `rng` as `Encryptor::encrypt_with_rng` does; the
    /// rng is advanced to the same position.
    pub fn encrypt(
        &self,
        keys: &DeviceCkksKeys,
        pt: &Plaintext,
        rng: &mut ChaCha20Rng,
    ) -> Result<DeviceCiphertext> {
        check_id(self.ctx.id(), keys.ctx_id)?;
        self.cpu.check_id(pt.params_id())?;
        let (pk0, pk1) = keys
            .pk
            .as_ref()
            .ok_or(CudaError::InvalidArgument("no public key uploaded".into()))?;
        if rng.get_stream() != 0 {
            return Err(CudaError::Unsupported(
                "ChaCha20Rng streams other than 0".into(),
            ));
        }
        let n = self.e.n();
        let k = self.q.len();
        let kl = pt.level() + 1;
        let (rows_q, rows_q1, _, p1_mod, p1_inv) = self.level(kl)?;
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
        let key_ptr = st.at(4);
        let u = self.e.alloc(1)?;
        let e0 = self.e.alloc(1)?;
        let e1 = self.e.alloc(1)?;
        g.launch(
            "sample_ternary",
            geometry::sampler_block(),
            &[
                Arg::W(u.ptr()),
                Arg::U(n as u32),
                Arg::W(key_ptr),
                Arg::W(st.at(0)),
                Arg::W(st.at(1)),
                Arg::U(geometry::ternary_budget(n) as u32),
                Arg::W(status.ptr()),
            ],
        )?;
        for (i, e) in [(1usize, &e0), (2, &e1)] {
            g.launch(
                "sample_gaussian",
                geometry::pointwise(n, 1)?,
                &[
                    Arg::W(e.ptr()),
                    Arg::U(n as u32),
                    Arg::W(key_ptr),
                    Arg::W(st.at(i)),
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
                &[Arg::W(st.at(i + 1)), Arg::W(st.at(i)), Arg::U(n as u32)],
            )?;
        }
        let over_qp = pk0.limbs() > k;
        let mut out = Vec::with_capacity(2);
        if over_qp {
            // u over Q_l ∪ {p_1}; per b: x = u·pk_b, the p_1 row back to
            // coefficients, c = [x_p + e_b]_{p_1}, d = [e_b − v]_{q_i},
            // out = (x_q + NTT(d))·p_1^{-1}.
            let mut uu = self.e.alloc(kl + 1)?;
            self.e.pointwise(
                "poly_from_signed",
                rows_q1,
                &[Arg::W(uu.ptr()), Arg::W(u.ptr())],
            )?;
            self.e.ntt_forward(&mut uu, rows_q1)?;
            let p1 = self.special[0];
            for (pk, e) in [(pk0, &e0), (pk1, &e1)] {
                let x = self.e.alloc(kl + 1)?;
                self.e
                    .binary("poly_mul", x.ptr(), uu.ptr(), pk.ptr(), rows_q)?;
                self.e.binary(
                    "poly_mul",
                    x.row(kl, n),
                    uu.row(kl, n),
                    pk.row(k, n),
                    &self.rows_p1,
                )?;
                self.e.ntt_inverse_at(x.row(kl, n), &self.rows_p1)?;
                let cp = self.e.alloc(1)?;
                self.e.pointwise(
                    "ckks_enc_p1_row",
                    &self.rows_p1,
                    &[Arg::W(cp.ptr()), Arg::W(x.row(kl, n)), Arg::W(e.ptr())],
                )?;
                let mut d = self.e.alloc(kl)?;
                self.e.pointwise(
                    "ckks_enc_q_rows",
                    rows_q,
                    &[
                        Arg::W(d.ptr()),
                        Arg::W(cp.ptr()),
                        Arg::W(e.ptr()),
                        Arg::W(p1),
                        Arg::W(p1_mod.w.ptr()),
                        Arg::W(0),
                        Arg::W(p1_mod.ws.ptr()),
                        Arg::U(0),
                    ],
                )?;
                self.e.ntt_forward(&mut d, rows_q)?;
                let o = self.e.alloc(kl)?;
                self.e.pointwise(
                    "poly_add_then_scalar",
                    rows_q,
                    &[
                        Arg::W(o.ptr()),
                        Arg::W(x.ptr()),
                        Arg::W(d.ptr()),
                        Arg::W(p1_inv.w.ptr()),
                        Arg::W(p1_inv.ws.ptr()),
                    ],
                )?;
                for p in [x, cp, d] {
                    self.e.free(p);
                }
                out.push(o);
            }
            self.e.free(uu);
        } else {
            let mut uu = self.e.alloc(kl)?;
            self.e.pointwise(
                "poly_from_signed",
                rows_q,
                &[Arg::W(uu.ptr()), Arg::W(u.ptr())],
            )?;
            self.e.ntt_forward(&mut uu, rows_q)?;
            for (pk, e) in [(pk0, &e0), (pk1, &e1)] {
                let mut c = self.e.alloc(kl)?;
                self.e.pointwise(
                    "poly_from_signed",
                    rows_q,
                    &[Arg::W(c.ptr()), Arg::W(e.ptr())],
                )?;
                self.e.ntt_forward(&mut c, rows_q)?;
                self.e
                    .binary("poly_mul_acc", c.ptr(), uu.ptr(), pk.ptr(), rows_q)?;
                out.push(c);
            }
            self.e.free(uu);
        }
        let m = self.e.upload(pt.poly().data(), kl)?;
        if let Some(c0) = out.first() {
            self.e
                .binary("poly_add", c0.ptr(), c0.ptr(), m.ptr(), rows_q)?;
        }
        self.e.free(m);
        let words = g.download(&st, 4)?;
        let flag = g.download(&status, 1)?;
        for p in [u, e0, e1] {
            self.e.free(p);
        }
        g.give(st);
        g.give(status);
        if flag.first().copied().unwrap_or(1) & 0xffff_ffff != 0 {
            return Err(CudaError::SamplerBudget);
        }
        rng.set_word_pos(u128::from(words.get(3).copied().unwrap_or(0)));
        Ok(self.new_ct(keys.key_id, out, pt.scale(), pt.len()))
    }

    /// The phase `c_0 + c_1 s (+ c_2 s²)` as a plaintext
    /// (`Decryptor::decrypt`).
    pub fn decrypt(&self, keys: &DeviceCkksKeys, ct: &DeviceCiphertext) -> Result<Plaintext> {
        self.check(ct)?;
        check_id(self.ctx.id(), keys.ctx_id)?;
        if keys.key_id != ct.key_id {
            return Err(CudaError::KeyMismatch("secret key and ciphertext".into()));
        }
        let s = keys
            .s
            .as_ref()
            .ok_or(CudaError::InvalidArgument("no secret key uploaded".into()))?;
        let kl = ct.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let last = ct
            .polys
            .last()
            .ok_or_else(|| CudaError::InvalidArgument("empty".into()))?;
        let h = self.e.clone_poly(last)?;
        for c in ct.polys[..ct.polys.len() - 1].iter().rev() {
            self.e.pointwise(
                "poly_mul_add",
                rows_q,
                &[
                    Arg::W(h.ptr()),
                    Arg::W(h.ptr()),
                    Arg::W(s.ptr()),
                    Arg::W(c.ptr()),
                ],
            )?;
        }
        let data = self.e.download(&h)?;
        self.e.free(h);
        let poly = RnsPoly::<Ntt>::from_data(self.e.n(), kl, data)?;
        Ok(Plaintext::from_parts(&self.cpu, poly, ct.scale, ct.len)?)
    }

    /// `a + b` (equal levels and scales).
    pub fn add(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        self.check(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch("add".into()));
        }
        if a.limbs() != b.limbs() || (a.scale - b.scale).abs() > a.scale * 1e-9 {
            return Err(CudaError::InvalidArgument(
                "add needs equal levels and scales".into(),
            ));
        }
        let (rows_q, ..) = self.level(a.limbs())?;
        let mut out = Vec::new();
        for i in 0..a.size().max(b.size()) {
            match (a.polys.get(i), b.polys.get(i)) {
                (Some(x), Some(y)) => {
                    let o = self.e.alloc(a.limbs())?;
                    self.e
                        .binary("poly_add", o.ptr(), x.ptr(), y.ptr(), rows_q)?;
                    out.push(o);
                }
                (Some(x), None) | (None, Some(x)) => out.push(self.e.clone_poly(x)?),
                (None, None) => {}
            }
        }
        Ok(self.new_ct(a.key_id, out, a.scale, a.len.max(b.len)))
    }

    /// Checks two operands of an addition: same key, level and scale
    /// (relative difference at most 2^-40, the CPU's tolerance).
    fn check_sum(&self, a: &DeviceCiphertext, b: &DeviceCiphertext, op: &str) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch(op.into()));
        }
        if a.limbs() != b.limbs() || ((a.scale - b.scale) / b.scale).abs() > SCALE_TOLERANCE {
            return Err(CudaError::InvalidArgument(format!(
                "{op} needs equal levels and scales"
            )));
        }
        Ok(())
    }

    /// `a − b` (`Evaluator::sub`): equal levels and scales.
    pub fn sub(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check_sum(a, b, "sub")?;
        let kl = a.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let mut out = Vec::new();
        for i in 0..a.size().max(b.size()) {
            let o = self.e.alloc(kl)?;
            match (a.polys.get(i), b.polys.get(i)) {
                (Some(x), Some(y)) => {
                    self.e
                        .binary("poly_sub", o.ptr(), x.ptr(), y.ptr(), rows_q)?
                }
                (Some(x), None) => self.e.gpu.copy_words(o.ptr(), x.ptr(), kl * self.e.n())?,
                (None, Some(y)) => {
                    self.e
                        .pointwise("poly_neg", rows_q, &[Arg::W(o.ptr()), Arg::W(y.ptr())])?
                }
                (None, None) => {}
            }
            out.push(o);
        }
        Ok(self.new_ct(a.key_id, out, a.scale, a.len.max(b.len)))
    }

    /// `−a` (`Evaluator::negate`).
    pub fn negate(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let kl = a.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let mut out = Vec::with_capacity(a.size());
        for p in &a.polys {
            let o = self.e.alloc(kl)?;
            self.e
                .pointwise("poly_neg", rows_q, &[Arg::W(o.ptr()), Arg::W(p.ptr())])?;
            out.push(o);
        }
        Ok(self.new_ct(a.key_id, out, a.scale, a.len))
    }

    /// A plaintext's polynomial on the device, checked against `a`'s
    /// context and level.
    fn upload_plain(
        &self,
        a: &DeviceCiphertext,
        pt: &Plaintext,
        op: &'static str,
    ) -> Result<DevPoly> {
        self.check(a)?;
        self.cpu.check_id(pt.params_id())?;
        let p = pt.poly();
        if p.limbs() != a.limbs() {
            return Err(CudaError::Scheme(rnsfhe::Error::LevelMismatch {
                operation: op,
                left: a.limbs().saturating_sub(1),
                right: pt.level(),
            }));
        }
        self.e.upload(p.data(), p.limbs())
    }

    /// `a ± pt` on `c_0` (`Evaluator::add_plain` / `sub_plain`).
    fn add_plain_signed(
        &self,
        a: &DeviceCiphertext,
        pt: &Plaintext,
        negate: bool,
        op: &'static str,
    ) -> Result<DeviceCiphertext> {
        if ((a.scale - pt.scale()) / pt.scale()).abs() > SCALE_TOLERANCE {
            return Err(CudaError::InvalidArgument(format!(
                "{op} needs equal scales (2^{:.3} and 2^{:.3})",
                a.scale.log2(),
                pt.scale().log2()
            )));
        }
        let m = self.upload_plain(a, pt, op)?;
        let kl = a.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let mut out = Vec::with_capacity(a.size());
        for (i, p) in a.polys.iter().enumerate() {
            let o = self.e.alloc(kl)?;
            if i == 0 {
                let k = if negate { "poly_sub" } else { "poly_add" };
                self.e.binary(k, o.ptr(), p.ptr(), m.ptr(), rows_q)?;
            } else {
                self.e.gpu.copy_words(o.ptr(), p.ptr(), kl * self.e.n())?;
            }
            out.push(o);
        }
        self.e.free(m);
        Ok(self.new_ct(a.key_id, out, a.scale, a.len))
    }

    /// `a + pt` (`Evaluator::add_plain`): equal level and scale.
    pub fn add_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.add_plain_signed(a, pt, false, "add_plain")
    }

    /// `a − pt` (`Evaluator::sub_plain`): equal level and scale.
    pub fn sub_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        self.add_plain_signed(a, pt, true, "sub_plain")
    }

    /// `a · pt` (`Evaluator::multiply_plain`): equal level; the scale is
    /// the product of the scales.
    pub fn multiply_plain(&self, a: &DeviceCiphertext, pt: &Plaintext) -> Result<DeviceCiphertext> {
        let m = self.upload_plain(a, pt, "multiply_plain")?;
        let kl = a.limbs();
        let (rows_q, ..) = self.level(kl)?;
        let mut out = Vec::with_capacity(a.size());
        for p in &a.polys {
            let o = self.e.alloc(kl)?;
            self.e
                .binary("poly_mul", o.ptr(), p.ptr(), m.ptr(), rows_q)?;
            out.push(o);
        }
        self.e.free(m);
        Ok(self.new_ct(a.key_id, out, a.scale * pt.scale(), a.len))
    }

    /// `a + c` for a real constant (`Evaluator::add_const`): `c` encoded
    /// exactly at `a`'s scale and level, no level used.
    pub fn add_const(&self, a: &DeviceCiphertext, c: f64) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let scaled = c * a.scale;
        if !scaled.is_finite() {
            return Err(CudaError::Scheme(rnsfhe::Error::ValueOutOfRange(format!(
                "constant {c} at scale 2^{:.1}",
                a.scale.log2()
            ))));
        }
        let level = a.limbs().saturating_sub(1);
        let pt = rnsfhe::ckks::Encoder::new(&self.cpu).encode_constant(c, a.scale, level)?;
        self.add_plain(a, &pt)
    }

    /// `a · c` for a real constant (`Evaluator::multiply_const`): `c`
    /// rounded at the scale of the prime the next rescaling removes, so
    /// the scale is `a.scale · q_l`; needs a level ≥ 1.
    pub fn multiply_const(&self, a: &DeviceCiphertext, c: f64) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let kl = a.limbs();
        if kl < 2 {
            return Err(CudaError::Scheme(rnsfhe::Error::LevelExhausted(
                "multiplying by a constant needs a level to rescale".into(),
            )));
        }
        let q = self.q[kl - 1] as f64;
        let scaled = (c * q).round();
        if !scaled.is_finite() || scaled.abs() >= (1u64 << 62) as f64 {
            return Err(CudaError::Scheme(rnsfhe::Error::ValueOutOfRange(format!(
                "constant {c} does not fit at scale 2^{:.1}",
                q.log2()
            ))));
        }
        let (rows_q, ..) = self.level(kl)?;
        let mag = scaled.abs() as u64;
        let neg = scaled < 0.0;
        let moduli = &self.q[..kl];
        let w: Vec<u64> = moduli.iter().map(|&qi| mag % qi).collect();
        let consts = Consts::new(&self.e.gpu, &w, moduli)?;
        let mut out = Vec::with_capacity(a.size());
        for p in &a.polys {
            let o = self.e.alloc(kl)?;
            self.e.scalar_mul(o.ptr(), p.ptr(), &consts, rows_q)?;
            if neg {
                self.e
                    .pointwise("poly_neg", rows_q, &[Arg::W(o.ptr()), Arg::W(o.ptr())])?;
            }
            out.push(o);
        }
        Ok(self.new_ct(a.key_id, out, a.scale * q, a.len))
    }

    /// The tensor `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` (`Evaluator::multiply`
    /// at equal levels): a 3-polynomial ciphertext at scale `Δ_a·Δ_b`.
    pub fn multiply(&self, a: &DeviceCiphertext, b: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        self.check(b)?;
        if a.key_id != b.key_id {
            return Err(CudaError::KeyMismatch("multiply".into()));
        }
        let kl = a.limbs();
        if b.limbs() != kl || a.size() != 2 || b.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "multiply needs two 2-polynomial ciphertexts at one level".into(),
            ));
        }
        let (rows_q, ..) = self.level(kl)?;
        let n = self.e.n();
        let d: Vec<DevPoly> = (0..3).map(|_| self.e.alloc(kl)).collect::<Result<_>>()?;
        self.e.gpu.launch(
            "poly_tensor",
            geometry::pointwise(n, kl)?,
            &[
                Arg::W(d[0].ptr()),
                Arg::W(d[1].ptr()),
                Arg::W(d[2].ptr()),
                Arg::W(a.polys[0].ptr()),
                Arg::W(a.polys[1].ptr()),
                Arg::W(b.polys[0].ptr()),
                Arg::W(b.polys[1].ptr()),
                Arg::W(rows_q.dev.ptr()),
                Arg::W(self.e.mt.mods_ptr()),
                Arg::U(n as u32),
                Arg::W(0),
                Arg::W(0),
            ],
        )?;
        Ok(self.new_ct(a.key_id, d, a.scale * b.scale, a.len.max(b.len)))
    }

    /// Relinearizes a 3-polynomial ciphertext (`Evaluator::relinearize`):
    /// hybrid key switching of `c_2` added to `(c_0, c_1)`.
    pub fn relinearize(&self, a: &DeviceCiphertext, rk: &DeviceKsk) -> Result<DeviceCiphertext> {
        self.check(a)?;
        check_id(self.ctx.id(), rk.ctx_id)?;
        if rk.key_id != a.key_id {
            return Err(CudaError::KeyMismatch("relinearization key".into()));
        }
        if a.size() != 3 {
            return Err(CudaError::InvalidArgument(
                "relinearize needs 3 polynomials".into(),
            ));
        }
        let kl = a.limbs();
        let (rows_q, _, lv, ..) = self.level(kl)?;
        let c2 = self.e.alloc(kl)?;
        self.e
            .ntt_pairs(&[(c2.ptr(), a.polys[2].ptr())], rows_q.span(1)?, true)?;
        let r = self.e.hybrid_switch_at(lv, rk, c2.ptr());
        self.e.free(c2);
        let (k0, k1) = r?;
        for (k, p) in [(&k0, &a.polys[0]), (&k1, &a.polys[1])] {
            self.e
                .binary("poly_add", k.ptr(), k.ptr(), p.ptr(), rows_q)?;
        }
        Ok(self.new_ct(a.key_id, vec![k0, k1], a.scale, a.len))
    }

    /// Divides by the last prime `q_l` with rounding (`Evaluator::rescale`,
    /// 001 §II): level `l − 1`, scale `Δ/q_l`.
    pub fn rescale(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let kl = a.limbs();
        let rs = kl
            .checked_sub(2)
            .and_then(|i| self.rescales.get(i))
            .ok_or_else(|| {
                CudaError::Scheme(rnsfhe::Error::LevelExhausted(
                    "cannot rescale a ciphertext at level 0".into(),
                ))
            })?;
        let (rows_low, ..) = self.level(kl - 1)?;
        let n = self.e.n();
        let low = kl - 1;
        let size = a.size();
        // The last limb of every polynomial in coefficient form.
        let tail = self.e.alloc(size)?;
        let pairs: Vec<(u64, u64)> = a
            .polys
            .iter()
            .enumerate()
            .map(|(b, p)| (tail.row(b, n), p.row(low, n)))
            .collect();
        self.e.ntt_pairs(&pairs, rs.rows_last.span(1)?, true)?;
        let corr = self.e.alloc(size * low)?;
        let last = self.e.mt.idx(self.q[kl - 1])?;
        for b in 0..size {
            self.e.gpu.launch(
                "rescale_correction",
                geometry::pointwise(n, low)?,
                &[
                    Arg::W(corr.row(b * low, n)),
                    Arg::W(tail.row(b, n)),
                    Arg::W(rs.half),
                    Arg::U(last),
                    Arg::W(rs.half_q.ptr()),
                    Arg::W(rows_low.dev.ptr()),
                    Arg::W(self.e.mt.mods_ptr()),
                    Arg::U(n as u32),
                ],
            )?;
        }
        let pairs: Vec<(u64, u64)> = (0..size).map(|b| (corr.row(b * low, n), 0)).collect();
        self.e.ntt_pairs(&pairs, rows_low.span(1)?, false)?;
        let mut out = Vec::with_capacity(size);
        for (b, p) in a.polys.iter().enumerate() {
            let o = self.e.alloc(low)?;
            self.e.pointwise(
                "poly_sub_then_scalar",
                rows_low,
                &[
                    Arg::W(o.ptr()),
                    Arg::W(p.ptr()),
                    Arg::W(corr.row(b * low, n)),
                    Arg::W(rs.inv.w.ptr()),
                    Arg::W(rs.inv.ws.ptr()),
                ],
            )?;
            out.push(o);
        }
        self.e.free(tail);
        self.e.free(corr);
        Ok(self.new_ct(a.key_id, out, a.scale / self.q[kl - 1] as f64, a.len))
    }

    /// Complex conjugation of every slot (`Evaluator::conjugate`; needs
    /// the Galois key of `2n − 1`).
    pub fn conjugate(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        self.check(a)?;
        check_id(self.ctx.id(), gk.ctx_id)?;
        if gk.cpu.key_id() != a.key_id {
            return Err(CudaError::KeyMismatch("Galois keys".into()));
        }
        self.apply_galois(
            a,
            rnsfhe::rlwe::galois_keys::conjugation_element(self.e.n()),
            gk,
        )
    }

    /// Every slot set to the sum of all `n/2` slots (`Evaluator::sum_slots`:
    /// rotate-and-add with the `2^i` rotations).
    pub fn sum_slots(
        &self,
        a: &DeviceCiphertext,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        self.check(a)?;
        let half = self.e.n() / 2;
        let mut acc = self.copy(a)?;
        let mut step = 1usize;
        while step < half {
            let r = self.rotate(&acc, step as i64, gk)?;
            let next = self.add(&acc, &r);
            self.release(r);
            let next = next?;
            self.release(std::mem::replace(&mut acc, next));
            step <<= 1;
        }
        acc.len = a.len;
        Ok(acc)
    }

    /// A copy of `a` on the device.
    fn copy(&self, a: &DeviceCiphertext) -> Result<DeviceCiphertext> {
        let polys = a
            .polys
            .iter()
            .map(|p| self.e.clone_poly(p))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.new_ct(a.key_id, polys, a.scale, a.len))
    }

    /// `Evaluator::multiply_relin_rescale`: the tensor, hybrid key switching
    /// of d2 fused with the rescaling by q_l (`relinearize_rescale_hybrid`).
    /// Inputs: two 2-polynomial ciphertexts at one level ≥ 1, one key.
    pub fn multiply_relin_rescale(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        rk: &DeviceKsk,
    ) -> Result<DeviceCiphertext> {
        self.multiply_relin_rescale_batch(&[(a, b)], rk)?
            .pop()
            .ok_or_else(|| CudaError::InvalidArgument("multiply_relin_rescale".into()))
    }

    fn check_product(
        &self,
        a: &DeviceCiphertext,
        b: &DeviceCiphertext,
        rk: &DeviceKsk,
    ) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_id(self.ctx.id(), rk.ctx_id)?;
        if a.key_id != b.key_id || rk.key_id != a.key_id {
            return Err(CudaError::KeyMismatch("multiply_relin_rescale".into()));
        }
        let kl = a.limbs();
        if b.limbs() != kl || a.size() != 2 || b.size() != 2 {
            return Err(CudaError::InvalidArgument(
                "two 2-polynomial ciphertexts at one level".into(),
            ));
        }
        if kl < 2 {
            return Err(CudaError::Scheme(rnsfhe::Error::LevelExhausted(
                "cannot rescale a ciphertext at level 0".into(),
            )));
        }
        Ok(())
    }

    /// Products per batched launch sequence at `kl` limbs: a 2 GiB
    /// working set, at most 64.
    pub fn batch_cap(&self, kl: usize) -> usize {
        let n = self.e.n();
        let kp = self.special.len();
        let rows_ext = kl + kp;
        let dnum = kl.div_ceil(kp.max(1));
        let per = 7 * kl + dnum * rows_ext + 2 * rows_ext + 4 * kl;
        ((1usize << 28) / n / per).clamp(1, 64)
    }

    /// `multiply_relin_rescale` of every pair, batched: consecutive pairs
    /// at one level share every launch (tensor, ModUp, the NTTs, the inner
    /// product, ModDown and rescaling run once for up to
    /// [`Self::batch_cap`] products). Results in order, bit-identical to
    /// the single calls.
    pub fn multiply_relin_rescale_batch(
        &self,
        pairs: &[(&DeviceCiphertext, &DeviceCiphertext)],
        rk: &DeviceKsk,
    ) -> Result<Vec<DeviceCiphertext>> {
        for (a, b) in pairs {
            self.check_product(a, b, rk)?;
        }
        let n = self.e.n();
        let mut out = Vec::with_capacity(pairs.len());
        let mut start = 0;
        while start < pairs.len() {
            let kl = pairs[start].0.limbs();
            let cap = self.batch_cap(kl);
            let mut end = start + 1;
            while end < pairs.len() && end - start < cap && pairs[end].0.limbs() == kl {
                end += 1;
            }
            let chunk = &pairs[start..end];
            let bn = chunk.len();
            let (rows_q, _, lv, ..) = self.level(kl)?;
            // d = [d0, d1, d2] per product, product after product.
            let d = self.e.alloc(3 * kl * bn)?;
            let (x, tensor_in, zs_in) = if bn == 1 {
                let (a, b) = chunk[0];
                let p = [
                    a.polys[0].ptr(),
                    a.polys[1].ptr(),
                    b.polys[0].ptr(),
                    b.polys[1].ptr(),
                ];
                (None, p, 0)
            } else {
                let x = self.e.alloc(4 * kl * bn)?;
                let copies: Vec<(u64, u64)> = chunk
                    .iter()
                    .enumerate()
                    .flat_map(|(i, (a, b))| {
                        [&a.polys[0], &a.polys[1], &b.polys[0], &b.polys[1]]
                            .into_iter()
                            .enumerate()
                            .map(move |(j, p)| (i * 4 + j, p.ptr()))
                    })
                    .map(|(r, p)| (x.row(r * kl, n), p))
                    .collect();
                self.e.gather(&copies, kl * n)?;
                let p = [0, 1, 2, 3].map(|j| x.row(j * kl, n));
                (Some(x), p, 4 * kl * n)
            };
            let mut shape = geometry::pointwise(n, kl)?;
            shape.grid.2 = bn as u32;
            self.e.gpu.launch(
                "poly_tensor",
                shape,
                &[
                    Arg::W(d.ptr()),
                    Arg::W(d.row(kl, n)),
                    Arg::W(d.row(2 * kl, n)),
                    Arg::W(tensor_in[0]),
                    Arg::W(tensor_in[1]),
                    Arg::W(tensor_in[2]),
                    Arg::W(tensor_in[3]),
                    Arg::W(rows_q.dev.ptr()),
                    Arg::W(self.e.mt.mods_ptr()),
                    Arg::U(n as u32),
                    Arg::W(zs_in as u64),
                    Arg::W((3 * kl * n) as u64),
                ],
            )?;
            if let Some(x) = x {
                self.e.free(x);
            }
            let d2: Vec<(u64, u64)> = (0..bn).map(|i| (d.row((3 * i + 2) * kl, n), 0)).collect();
            self.e.ntt_pairs(&d2, rows_q.span(1)?, true)?;
            let r = self.e.relin_rescale_many(lv, rk, &d, bn);
            self.e.free(d);
            let mut polys = r?.into_iter();
            let q_l = self.q[kl - 1] as f64;
            for (a, b) in chunk {
                match (polys.next(), polys.next()) {
                    (Some(o0), Some(o1)) => out.push(self.new_ct(
                        a.key_id,
                        vec![o0, o1],
                        a.scale * b.scale / q_l,
                        a.len.max(b.len),
                    )),
                    _ => return Err(CudaError::InvalidArgument("relinearize-rescale".into())),
                }
            }
            start = end;
        }
        Ok(out)
    }

    /// Rotates the slots left by `steps` (`Evaluator::rotate`).
    pub fn rotate(
        &self,
        a: &DeviceCiphertext,
        steps: i64,
        gk: &DeviceCkksGaloisKeys,
    ) -> Result<DeviceCiphertext> {
        self.check(a)?;
        check_id(self.ctx.id(), gk.ctx_id)?;
        if gk.cpu.key_id() != a.key_id {
            return Err(CudaError::KeyMismatch("Galois keys".into()));
        }
        let g = self.cpu.rlwe().rotation_generator();
        let elements = gk.cpu.rotation_elements(self.e.n(), g, steps)?;
        crate::context::apply_in_turn(
            a,
            None,
            &elements,
            |x, el| self.apply_galois(x, el, gk),
            |c| self.release(c),
            || self.copy(a),
        )
    }

    fn apply_galois(
        &self,
        a: &DeviceCiphertext,
        el: u64,
        gk: &DeviceCkksGaloisKeys,
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
        let kl = a.limbs();
        let (rows_q, _, lv, ..) = self.level(kl)?;
        let shape = geometry::pointwise(n, kl)?;
        let c0 = self.e.alloc(kl)?;
        let mut c1 = self.e.alloc(kl)?;
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
        self.e.ntt_inverse(&mut c1, rows_q)?;
        let (k0, k1) = self.e.hybrid_switch(lv, key, &c1)?;
        self.e.free(c1);
        self.e
            .binary("poly_add", c0.ptr(), c0.ptr(), k0.ptr(), rows_q)?;
        self.e.free(k0);
        Ok(self.new_ct(a.key_id, vec![c0, k1], a.scale, a.len))
    }

    /// Returns a ciphertext's buffers to the pool.
    pub fn release(&self, ct: DeviceCiphertext) {
        for p in ct.polys {
            self.e.free(p);
        }
    }

    /// The CPU context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.cpu
    }
}
