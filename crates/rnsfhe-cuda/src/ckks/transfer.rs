//! Moving ciphertexts and keys between host and device.

use rnsfhe::ckks::{Ciphertext, GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::rlwe::KeySwitchingKey;
use rnsfhe::rnsfhe_math::{Ntt, RnsPoly};

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::runtime::DeviceKsk;
use crate::tables::galois_ntt_map;

use super::setup::{CudaCkks, DeviceCkksGaloisKeys, DeviceCkksKeys};

impl CudaCkks {
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
}
