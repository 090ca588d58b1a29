//! CKKS in the file workflow: real numbers in the `n/2` slots, encoded at
//! the parameters' scale; `mul` and `square` leave the scale squared until
//! `rescale`, `modswitch` drops primes at the same scale.

use std::sync::Arc;

use rnsfhe::ckks::{
    Ciphertext, CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, Plaintext,
};
use rnsfhe::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};

use super::args::{KeygenArgs, Op};
use super::workflow::{common_ops, depth_preset, Decrypted, Scheme};
use rnsfhe::Result;

use crate::common::CliResult;

/// The CKKS scheme of the workflow.
pub struct Ckks;

impl Scheme for Ckks {
    common_ops!("CKKS", CkksContext, CkksParameters, f64);

    /// `LOGN,DEPTH`: `DEPTH` scaling primes of `--prime-bits` bits (the
    /// scale) after a first prime 20 bits larger (at most 60).
    fn preset(args: &KeygenArgs) -> CliResult<CkksParameters> {
        let (log_n, depth) = depth_preset(&args.params)?;
        let bits = args.prime_bits;
        Ok(CkksParameters::for_depth(depth, bits, (bits + 20).min(60))
            .degree(1 << log_n)
            .security(args.security)
            .build()?)
    }

    fn describe(ctx: &CkksContext) -> String {
        let p = ctx.params();
        format!(
            "CKKS n = {} ({} slots), {} levels, scale 2^{}, log2 Q = {} ({} primes, {} special), {} security",
            p.degree(),
            p.slots(),
            p.max_level(),
            p.scale_bits(),
            p.log2_q(),
            p.coeff_moduli().len(),
            p.key_switching_moduli().len(),
            p.security_level()
        )
    }

    fn encode(ctx: &Arc<CkksContext>, values: &[f64]) -> Result<Plaintext> {
        Encoder::new(ctx).encode(values)
    }

    /// At the ciphertext's level; at its scale for `add`/`sub`, at the
    /// parameters' scale for a product (rescaled afterwards).
    fn encode_operand(
        ctx: &Arc<CkksContext>,
        values: &[f64],
        ct: &Ciphertext,
        op: Op,
    ) -> Result<Plaintext> {
        let scale = match op {
            Op::Add | Op::Sub => ct.scale(),
            _ => ctx.params().default_scale(),
        };
        Encoder::new(ctx).encode_at(values, scale, ct.level())
    }

    fn decrypt(
        ctx: &Arc<CkksContext>,
        sk: &SecretKey,
        ct: &Ciphertext,
        _signed: bool,
    ) -> CliResult<Decrypted> {
        let values = Decryptor::new(ctx, sk)?.decrypt_decode(ct)?;
        Ok(Decrypted {
            // A CKKS ciphertext knows how many values it holds: print them all.
            zero: vec![false; values.len()],
            values: values.iter().map(|v| format!("{v:.6}")).collect(),
            fields: vec![
                ("level", ct.level().to_string()),
                ("log2_scale", format!("{:.4}", ct.scale().log2())),
            ],
            exhausted: false,
        })
    }

    fn mul(ev: &Evaluator, a: &Ciphertext, b: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        ev.relinearize(&ev.multiply(a, b)?, rk)
    }

    fn rotate(ev: &Evaluator, a: &Ciphertext, steps: i64, gk: &GaloisKeys) -> Result<Ciphertext> {
        ev.rotate(a, steps, gk)
    }

    fn mod_switch(ev: &Evaluator, a: &Ciphertext, level: Option<usize>) -> Result<Ciphertext> {
        let level = match level {
            Some(l) => l,
            None => a.level().checked_sub(1).ok_or_else(|| {
                rnsfhe::Error::InvalidArgument(
                    "the ciphertext is at level 0: no prime left to drop".into(),
                )
            })?,
        };
        ev.drop_to_level(a, level)
    }

    fn dot_product(ev: &Evaluator, p: Ciphertext) -> Result<Ciphertext> {
        ev.rescale(&p)
    }

    fn rescale(ev: &Evaluator, a: &Ciphertext) -> CliResult<Ciphertext> {
        Ok(ev.rescale(a)?)
    }
}
