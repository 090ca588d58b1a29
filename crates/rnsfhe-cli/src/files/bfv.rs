//! BFV in the file workflow: integers mod t, batched when t allows it
//! (prime, `≡ 1 mod 2n`), else polynomial coefficients.

use std::sync::Arc;

use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Ciphertext, CoefficientEncoder, Decryptor, Encryptor,
    Evaluator, Plaintext, Variant,
};
use rnsfhe::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};

use super::args::KeygenArgs;
use super::workflow::{common_ops, encode_integers, integer_ops, integers, Decrypted, Scheme};
use rnsfhe::Result;

use crate::common::{parse_set, CliError, CliResult};

/// The BFV scheme of the workflow.
pub struct Bfv;

impl Scheme for Bfv {
    common_ops!("BFV", BfvContext, BfvParameters, i64);

    /// `LOGN,LOGQ`: the HPS preset, rebuilt at the requested security.
    fn preset(args: &KeygenArgs) -> CliResult<BfvParameters> {
        let (log_n, log_q) = parse_set(&args.params)
            .map_err(|e| CliError(format!("--params: not a file, and not a preset: {e}")))?;
        let p = BfvParameters::preset(log_n, log_q, args.t, Variant::Hps)?;
        if args.security == rnsfhe::SecurityLevel::Tc128 {
            return Ok(p);
        }
        // Rebuild with the requested level (the preset enforces 128 bits).
        Ok(BfvParameters::builder()
            .degree(p.degree())
            .plain_modulus(args.t)
            .coeff_moduli(p.coeff_moduli())
            .security(args.security)
            .build()?)
    }

    fn describe(ctx: &BfvContext) -> String {
        let p = ctx.params();
        format!(
            "n = {}, t = {}, log2 q = {:.1} ({} moduli), {} security",
            p.degree(),
            p.plain_modulus(),
            p.log2_q(),
            p.coeff_moduli().len(),
            p.security_level()
        )
    }

    fn encode(ctx: &Arc<BfvContext>, values: &[i64]) -> Result<Plaintext> {
        let t = ctx.plain_modulus().value();
        match BatchEncoder::new(ctx) {
            Ok(b) => encode_integers(values, t, |r| b.encode(r), |v| b.encode_signed(v)),
            Err(_) => {
                let c = CoefficientEncoder::new(ctx);
                encode_integers(values, t, |r| c.encode(r), |v| c.encode_signed(v))
            }
        }
    }

    fn decrypt(
        ctx: &Arc<BfvContext>,
        sk: &SecretKey,
        ct: &Ciphertext,
        signed: bool,
    ) -> CliResult<Decrypted> {
        let dec = Decryptor::new(ctx, sk)?;
        let pt = dec.decrypt(ct)?;
        let budget = dec.invariant_noise_budget(ct)?;
        let values = match BatchEncoder::new(ctx) {
            Ok(b) => b.decode(&pt)?,
            Err(_) => CoefficientEncoder::new(ctx).decode(&pt)?,
        };
        let t = ctx.plain_modulus().value();
        Ok(integers(values, t, signed, budget))
    }

    fn mul(ev: &Evaluator, a: &Ciphertext, b: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        if std::ptr::eq(a, b) {
            return ev.square_relin(a, rk);
        }
        ev.multiply_relin(a, b, rk)
    }

    integer_ops!();
}
