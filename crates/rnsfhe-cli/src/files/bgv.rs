//! BGV in the file workflow: integers mod t in the `n` batched slots (t
//! prime, `≡ 1 mod 2n`); `modswitch` is BGV's modulus switch, which
//! keeps the noise in check between products.

use std::sync::Arc;

use rnsfhe::bgv::{
    BatchEncoder, BgvContext, BgvParameters, Ciphertext, Decryptor, Encryptor, Evaluator, Plaintext,
};
use rnsfhe::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};

use super::args::KeygenArgs;
use super::workflow::{
    common_ops, depth_preset, encode_integers, integer_ops, integers, Decrypted, Scheme,
};
use rnsfhe::Result;

use crate::common::CliResult;

/// The BGV scheme of the workflow.
pub struct Bgv;

impl Scheme for Bgv {
    common_ops!("BGV", BgvContext, BgvParameters, i64);

    /// `LOGN,DEPTH`: `DEPTH` primes of `--prime-bits` bits after a first
    /// prime 10 bits larger (at most 60), plaintext modulus `--t`.
    fn preset(args: &KeygenArgs) -> CliResult<BgvParameters> {
        let (log_n, depth) = depth_preset(&args.params)?;
        let bits = args.prime_bits;
        Ok(
            BgvParameters::for_depth(depth, args.t, bits, (bits + 10).min(60))
                .degree(1 << log_n)
                .security(args.security)
                .build()?,
        )
    }

    fn describe(ctx: &BgvContext) -> String {
        let p = ctx.params();
        format!(
            "BGV n = {}, t = {}, {} levels, log2 Q = {} ({} primes, {} special), {} security",
            p.degree(),
            p.plain_modulus(),
            p.max_level(),
            p.log2_q(),
            p.coeff_moduli().len(),
            p.key_switching_moduli().len(),
            p.security_level()
        )
    }

    fn encode(ctx: &Arc<BgvContext>, values: &[i64]) -> Result<Plaintext> {
        let b = BatchEncoder::new(ctx)?;
        let t = ctx.plain_modulus().value();
        encode_integers(values, t, |r| b.encode(r), |v| b.encode_signed(v))
    }

    fn decrypt(
        ctx: &Arc<BgvContext>,
        sk: &SecretKey,
        ct: &Ciphertext,
        signed: bool,
    ) -> CliResult<Decrypted> {
        let dec = Decryptor::new(ctx, sk)?;
        let values = BatchEncoder::new(ctx)?.decode(&dec.decrypt(ct)?)?;
        let budget = dec.noise_budget(ct)?;
        let t = ctx.plain_modulus().value();
        Ok(integers(values, t, signed, budget))
    }

    fn mul(ev: &Evaluator, a: &Ciphertext, b: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        ev.multiply_relin(a, b, rk)
    }

    integer_ops!();
}
