//! BGV in the file workflow: integers mod t in the `n` batched slots (t
//! prime, `≡ 1 mod 2n`); `modswitch` is BGV's modulus switch, which
//! keeps the noise in check between products.

use std::sync::Arc;

use rnsfhe::bgv::{
    BatchEncoder, BgvContext, BgvParameters, Ciphertext, Decryptor, Encryptor, Evaluator, Plaintext,
};
use rnsfhe::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};

use super::args::KeygenArgs;
use super::workflow::{common_ops, depth_preset, encode_integers, integers, Decrypted, Scheme};
use crate::common::CliResult;

/// The BGV scheme of the workflow.
pub struct Bgv;

impl Scheme for Bgv {
    const NAME: &'static str = "BGV";
    type Ctx = BgvContext;
    type Params = BgvParameters;
    type Ct = Ciphertext;
    type Pt = Plaintext;
    type Ev = Evaluator;
    type Value = i64;

    common_ops!();

    fn params_from_bytes(bytes: &[u8]) -> rnsfhe::Result<BgvParameters> {
        BgvParameters::from_bytes(bytes)
    }

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

    fn context(params: BgvParameters) -> rnsfhe::Result<Arc<BgvContext>> {
        BgvContext::new(params)
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

    fn encode(ctx: &Arc<BgvContext>, values: &[i64]) -> rnsfhe::Result<Plaintext> {
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
        Ok(integers(
            values,
            ctx.plain_modulus().value(),
            signed,
            budget,
        ))
    }

    fn mul(
        ev: &Evaluator,
        a: &Ciphertext,
        b: &Ciphertext,
        rk: &RelinKey,
    ) -> rnsfhe::Result<Ciphertext> {
        ev.multiply_relin(a, b, rk)
    }

    fn rotate(
        ev: &Evaluator,
        a: &Ciphertext,
        steps: i64,
        gk: &GaloisKeys,
    ) -> rnsfhe::Result<Ciphertext> {
        ev.rotate_rows(a, steps, gk)
    }

    fn mod_switch(
        ev: &Evaluator,
        a: &Ciphertext,
        level: Option<usize>,
    ) -> rnsfhe::Result<Ciphertext> {
        match level {
            Some(l) => ev.mod_switch_to(a, l),
            None => ev.mod_switch_to_next(a),
        }
    }
}
