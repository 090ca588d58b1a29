//! Moving ciphertexts and keys between host and device.

use rnsfhe::bfv::{Ciphertext, GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::rlwe::KeySwitchingKey;
use rnsfhe::rnsfhe_math::{Coeff, Ntt, RnsPoly};

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::runtime::{DevPoly, DeviceKsk};

use super::setup::{CudaBfv, DeviceGaloisKeys, DevicePublicKey, DeviceSecretKey};

impl CudaBfv {
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
}
