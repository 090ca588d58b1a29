//! What a leveled scheme's encryptor shares: its keys and their
//! constructors (written once for BGV and CKKS; the schemes add how a
//! plaintext joins the encryption of zero).

/// `from_public_key`, `from_secret_key` and `encrypt_symmetric` (over the
/// scheme's `encrypt_symmetric_with_rng`) for an `Encryptor` with fields
/// `ctx: Arc<$ctx>`, `pk: Option<PublicKey>` and `sk: Option<SecretKey>`.
macro_rules! encryptor_constructors {
    ($ctx:ty) => {
        /// A public-key encryptor. Errors with
        /// [`Error::ParameterMismatch`](crate::Error::ParameterMismatch)
        /// for a key of another context.
        pub fn from_public_key(
            ctx: &std::sync::Arc<$ctx>,
            pk: &$crate::rlwe::keys::PublicKey,
        ) -> $crate::Result<Self> {
            ctx.check_id(pk.params_id())?;
            Ok(Self {
                ctx: ctx.clone(),
                pk: Some(pk.clone()),
                sk: None,
            })
        }

        /// A secret-key encryptor (its fresh ciphertexts are smaller: `c_1`
        /// comes from a seed). Errors for a key of another context.
        pub fn from_secret_key(
            ctx: &std::sync::Arc<$ctx>,
            sk: &$crate::rlwe::keys::SecretKey,
        ) -> $crate::Result<Self> {
            ctx.check_id(sk.params_id())?;
            Ok(Self {
                ctx: ctx.clone(),
                pk: None,
                sk: Some(sk.clone()),
            })
        }

        /// The public key for a plaintext of `params_id`: errors with
        /// [`Error::MissingKey`](crate::Error::MissingKey) without one, and
        /// for a plaintext of another context.
        fn public_key_for(&self, params_id: u64) -> $crate::Result<&$crate::rlwe::keys::PublicKey> {
            let pk = self
                .pk
                .as_ref()
                .ok_or($crate::Error::MissingKey("public key"))?;
            self.ctx.check_id(params_id)?;
            Ok(pk)
        }

        /// The secret key for a plaintext of `params_id` (errors as
        /// `public_key_for`).
        fn secret_key_for(&self, params_id: u64) -> $crate::Result<&$crate::rlwe::keys::SecretKey> {
            let sk = self
                .sk
                .as_ref()
                .ok_or($crate::Error::MissingKey("secret key"))?;
            self.ctx.check_id(params_id)?;
            Ok(sk)
        }

        /// Encrypts `pt` with the secret key and an OS-seeded rng (see
        /// [`Self::encrypt_symmetric_with_rng`]). Errors with
        /// [`Error::MissingKey`](crate::Error::MissingKey) without a secret
        /// key.
        pub fn encrypt_symmetric(&self, pt: &Plaintext) -> $crate::Result<Ciphertext> {
            let mut rng = rnsfhe_math::sampling::rng_from_os()?;
            self.encrypt_symmetric_with_rng(pt, &mut rng)
        }
    };
}
pub(crate) use encryptor_constructors;
