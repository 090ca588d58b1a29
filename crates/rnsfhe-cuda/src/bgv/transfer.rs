//! Moving BGV ciphertexts and keys between host and device (the shared
//! launch plans of [`crate::ops::transfer`]; ciphertexts at any level, in
//! NTT form, with their correction factor; hybrid keys only).

use rnsfhe::bgv::{Ciphertext, GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::rnsfhe_math::Ntt;

use crate::context::DeviceCiphertext;
use crate::error::Result;
use crate::ops::leveled::upload_keys;
use crate::ops::transfer::{download_polys, upload_ksk, upload_polys};
use crate::ops::DeviceGaloisKeys;
use crate::runtime::DeviceKsk;

use super::setup::CudaBgv;
use super::{DeviceBgvGaloisKeys, DeviceBgvKeys};

impl CudaBgv {
    /// Copies a CPU ciphertext to the device.
    pub fn upload(&self, ct: &Ciphertext) -> Result<DeviceCiphertext> {
        self.base.cpu.check_id(ct.params_id())?;
        let polys = upload_polys(&self.base.e, ct.polys())?;
        Ok(self.new_ct(ct.key_id(), polys, ct.correction_factor()))
    }

    /// Copies a device ciphertext back.
    pub fn download(&self, ct: &DeviceCiphertext) -> Result<Ciphertext> {
        self.check(ct)?;
        let polys = download_polys::<Ntt>(&self.base.e, &ct.polys)?;
        Ok(Ciphertext::from_parts(
            &self.base.cpu,
            ct.key_id,
            ct.correction,
            polys,
        )?)
    }

    /// Uploads the public key and/or the secret key (`NTT(s)` over `Q`).
    pub fn upload_keys(
        &self,
        pk: Option<&PublicKey>,
        sk: Option<&SecretKey>,
    ) -> Result<DeviceBgvKeys> {
        let ring = self.base.cpu.ring_at(self.base.cpu.max_level())?;
        upload_keys(self, ring, pk, sk)
    }

    /// Uploads a relinearization key.
    pub fn upload_relin_key(&self, rk: &RelinKey) -> Result<DeviceKsk> {
        upload_ksk(self, rk.key_switching_key())
    }

    /// Uploads Galois keys.
    pub fn upload_galois_keys(&self, gk: &GaloisKeys) -> Result<DeviceBgvGaloisKeys> {
        DeviceGaloisKeys::upload(self, gk)
    }
}
