//! Moving ciphertexts and keys between host and device (the shared
//! launch plans of [`crate::ops::transfer`]; here BFV's checks: the top
//! level, both forms, no second-level digits).

use rnsfhe::bfv::{Ciphertext, GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::rnsfhe_math::{Coeff, Ntt, RnsPoly};

use crate::context::DeviceCiphertext;
use crate::error::{CudaError, Result};
use crate::ops::transfer::{download_polys, upload_ksk, upload_polys, upload_secret};
use crate::ops::DeviceGaloisKeys;
use crate::runtime::{DevPoly, DeviceKsk};

use super::setup::{CudaBfv, DevicePublicKey, DeviceSecretKey};

impl CudaBfv {
    /// Copies a CPU ciphertext (either form, top level) to the device.
    pub fn upload(&self, ct: &Ciphertext) -> Result<DeviceCiphertext> {
        self.base.cpu.check_id(ct.params_id())?;
        if ct.level() != self.base.cpu.max_level() {
            return Err(CudaError::Unsupported(format!(
                "a ciphertext at level {} (the device path works at the top level)",
                ct.level()
            )));
        }
        let (polys, ntt) = match (ct.ntt_polys(), ct.coeff_polys()) {
            (Some(v), _) => (upload_polys(&self.base.e, v)?, true),
            (None, Some(v)) => (upload_polys(&self.base.e, v)?, false),
            (None, None) => return Err(CudaError::InvalidArgument("an empty ciphertext".into())),
        };
        Ok(self.new_ct(ct.key_id(), polys, ntt))
    }

    /// Copies a device ciphertext back (in its form).
    pub fn download(&self, ct: &DeviceCiphertext) -> Result<Ciphertext> {
        let (c, p) = self.ids();
        ct.check(c, p)?;
        Ok(if ct.ntt {
            let v = download_polys::<Ntt>(&self.base.e, &ct.polys)?;
            Ciphertext::from_ntt_polys(&self.base.cpu, ct.key_id, v)?
        } else {
            let v = download_polys::<Coeff>(&self.base.e, &ct.polys)?;
            Ciphertext::from_coeff_polys(&self.base.cpu, ct.key_id, v)?
        })
    }

    /// Uploads a public key (over q).
    pub fn upload_public_key(&self, pk: &PublicKey) -> Result<DevicePublicKey> {
        self.base.cpu.check_id(pk.params_id())?;
        let lim = |p: &RnsPoly<Ntt>| -> Result<DevPoly> {
            let d = p
                .data()
                .get(..self.k * self.base.e.n())
                .ok_or_else(|| CudaError::InvalidArgument("public key shorter than q".into()))?;
            self.base.e.upload(d, self.k)
        };
        Ok(DevicePublicKey {
            ctx_id: self.base.ctx.id(),
            key_id: pk.key_id(),
            pk0: lim(pk.pk0())?,
            pk1: lim(pk.pk1())?,
        })
    }

    /// Uploads a secret key (its NTT form over q, computed here).
    pub fn upload_secret_key(&self, sk: &SecretKey) -> Result<DeviceSecretKey> {
        self.base.cpu.check_id(sk.params_id())?;
        Ok(DeviceSecretKey {
            ctx_id: self.base.ctx.id(),
            key_id: sk.key_id(),
            s: upload_secret(&self.base.e, self.base.cpu.ring(), sk, self.k)?,
        })
    }

    /// Uploads a relinearization key.
    pub fn upload_relin_key(&self, rk: &RelinKey) -> Result<DeviceKsk> {
        upload_ksk(self, rk.key_switching_key())
    }

    /// Uploads Galois keys (every element they hold).
    pub fn upload_galois_keys(&self, gk: &GaloisKeys) -> Result<DeviceGaloisKeys> {
        DeviceGaloisKeys::upload(self, gk)
    }
}
