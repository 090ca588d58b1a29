//! Moving ciphertexts and keys between host and device (the shared
//! launch plans of [`crate::ops::transfer`]; here CKKS's checks: any
//! level, NTT form, hybrid keys only).

use rnsfhe::ckks::{Ciphertext, GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::rnsfhe_math::Ntt;

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::ops::transfer::{download_polys, upload_ksk, upload_polys, upload_secret};
use crate::ops::DeviceGaloisKeys;
use crate::runtime::DeviceKsk;

use super::setup::{CudaCkks, DeviceCkksGaloisKeys, DeviceCkksKeys};

impl CudaCkks {
    /// Copies a CPU ciphertext to the device.
    pub fn upload(&self, ct: &Ciphertext) -> Result<DeviceCiphertext> {
        self.base.cpu.check_id(ct.params_id())?;
        let polys = upload_polys(&self.base.e, ct.polys())?;
        Ok(self.new_ct(ct.key_id(), polys, ct.scale(), ct.len()))
    }

    /// Copies a device ciphertext back.
    pub fn download(&self, ct: &DeviceCiphertext) -> Result<Ciphertext> {
        self.check(ct)?;
        let polys = download_polys::<Ntt>(&self.base.e, &ct.polys)?;
        Ok(Ciphertext::from_parts(
            &self.base.cpu,
            ct.key_id,
            ct.scale,
            ct.len,
            polys,
        )?)
    }

    /// Uploads the public key and/or the secret key.
    pub fn upload_keys(
        &self,
        pk: Option<&PublicKey>,
        sk: Option<&SecretKey>,
    ) -> Result<DeviceCkksKeys> {
        let mut key_id = None;
        let e = &self.base.e;
        let pk = match pk {
            Some(pk) => {
                self.base.cpu.check_id(pk.params_id())?;
                key_id = Some(pk.key_id());
                Some((
                    e.upload(pk.pk0().data(), pk.pk0().limbs())?,
                    e.upload(pk.pk1().data(), pk.pk1().limbs())?,
                ))
            }
            None => None,
        };
        let s = match sk {
            Some(sk) => {
                self.base.cpu.check_id(sk.params_id())?;
                if key_id.is_some_and(|k| k != sk.key_id()) {
                    return Err(CudaError::KeyMismatch("public and secret key".into()));
                }
                key_id = Some(sk.key_id());
                let ring = self.base.cpu.ring_at(self.base.cpu.max_level())?;
                Some(upload_secret(e, ring, sk, self.chain.q.len())?)
            }
            None => None,
        };
        Ok(DeviceCkksKeys {
            ctx_id: self.base.ctx.id(),
            key_id: key_id.ok_or_else(|| CudaError::InvalidArgument("no key given".into()))?,
            pk,
            s,
        })
    }

    /// Uploads a relinearization key.
    pub fn upload_relin_key(&self, rk: &RelinKey) -> Result<DeviceKsk> {
        upload_ksk(self, rk.key_switching_key())
    }

    /// Uploads Galois keys.
    pub fn upload_galois_keys(&self, gk: &GaloisKeys) -> Result<DeviceCkksGaloisKeys> {
        DeviceGaloisKeys::upload(self, gk)
    }
}
