//! The file workflow of 004 Fig. 1's client/server model, on the
//! serialized format of [`rnsfhe::serialization`] (`docs/format.md`):
//!
//! * `rnsfhe keygen --params PRESET_OR_FILE --out KEYDIR` (client): the
//!   parameters, the secret key (flagged secret, mode 0600), and the
//!   public, relinearization and Galois keys (seed-compressed), one file
//!   each;
//! * `rnsfhe encrypt --keys KEYDIR --in VALUES --out CT` (client): a
//!   `.json` list or a `.csv` column of integers, batch-encoded when `t`
//!   allows it, encrypted under the public key;
//! * `rnsfhe eval --keys KEYDIR --op OP --in CT [CT2] [--plain VALUES]
//!   --out CT` (server): reads public material only — never the secret key;
//! * `rnsfhe decrypt --keys KEYDIR --in CT [--json]` (client).
//!
//! Every bad input — a missing, truncated, corrupted or foreign file, a
//! secret key where a ciphertext belongs, a value `≥ t` — is one line on
//! stderr and a non-zero exit, via the typed errors of the loaders.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use rnsfhe::bfv::{
    BatchEncoder, BfvContext, BfvParameters, Ciphertext, CoefficientEncoder, Decryptor, Encryptor,
    Evaluator, GaloisKeys, Plaintext, PublicKey, RelinKey, SecretKey, Variant,
};
use rnsfhe::serialization::{inspect, FromBytes, ToBytes};
use rnsfhe::SecurityLevel;

use crate::common::{errln, outln, parse_security, parse_set, CliError, CliResult};

/// File names inside a key directory.
pub const PARAMS_FILE: &str = "params.bin";
/// The secret key (the only secret file).
pub const SECRET_FILE: &str = "secret.key";
/// The public key.
pub const PUBLIC_FILE: &str = "public.key";
/// The relinearization key.
pub const RELIN_FILE: &str = "relin.key";
/// The Galois keys (default set: every power-of-two rotation and the
/// column swap).
pub const GALOIS_FILE: &str = "galois.key";

// ------------------------------------------------------------------ keygen

/// Arguments of `rnsfhe keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// A parameter file (written by an earlier keygen) or a preset
    /// `LOGN,LOGQ` such as `12,109` (moduli of at most 60 bits).
    #[arg(long)]
    params: String,
    /// Plaintext modulus t for a preset (65537 allows batching up to
    /// n = 2^15).
    #[arg(long, default_value_t = 65537)]
    t: u64,
    /// Security level enforced for a preset: 128, 192, 256 or none.
    #[arg(long, default_value = "128", value_parser = parse_security)]
    security: SecurityLevel,
    /// Key directory to create (files: params.bin, secret.key, public.key,
    /// relin.key, galois.key).
    #[arg(long)]
    out: PathBuf,
    /// Skip the Galois keys (no `sum` or `dot` then).
    #[arg(long)]
    no_galois: bool,
    /// Overwrite existing key files.
    #[arg(long)]
    force: bool,
}

/// Loads parameters from a file, or builds a preset.
fn parameters(spec: &str, t: u64, security: SecurityLevel) -> CliResult<BfvParameters> {
    let path = Path::new(spec);
    if path.is_file() {
        let bytes = read(path)?;
        return BfvParameters::from_bytes(&bytes).map_err(|e| file_error(path, e));
    }
    let (log_n, log_q) = parse_set(spec)
        .map_err(|e| CliError(format!("--params: not a file, and not a preset: {e}")))?;
    let p = BfvParameters::preset(log_n, log_q, t, Variant::Hps)?;
    if security == SecurityLevel::Tc128 {
        return Ok(p);
    }
    // Rebuild with the requested level (the preset enforces 128 bits).
    Ok(BfvParameters::builder()
        .degree(p.degree())
        .plain_modulus(t)
        .coeff_moduli(p.coeff_moduli())
        .security(security)
        .build()?)
}

/// `rnsfhe keygen`.
pub fn keygen(args: &KeygenArgs) -> CliResult<ExitCode> {
    let params = parameters(&args.params, args.t, args.security)?;
    let ctx = BfvContext::new(params)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError(format!("cannot create {}: {e}", args.out.display())))?;
    let mut names = vec![PARAMS_FILE, SECRET_FILE, PUBLIC_FILE, RELIN_FILE];
    if !args.no_galois {
        names.push(GALOIS_FILE);
    }
    if !args.force {
        if let Some(existing) = names.iter().map(|n| args.out.join(n)).find(|p| p.exists()) {
            return Err(CliError(format!(
                "{} exists: refusing to overwrite keys (use --force)",
                existing.display()
            )));
        }
    }
    let sk = SecretKey::generate(&ctx)?;
    let pk = PublicKey::generate(&ctx, &sk)?;
    let rk = RelinKey::generate(&ctx, &sk)?;
    write(
        &args.out.join(PARAMS_FILE),
        &ctx.params().to_bytes()?,
        false,
    )?;
    write(&args.out.join(SECRET_FILE), &sk.to_bytes(&ctx)?, true)?;
    write(
        &args.out.join(PUBLIC_FILE),
        &pk.to_bytes_smallest(&ctx)?,
        false,
    )?;
    write(
        &args.out.join(RELIN_FILE),
        &rk.to_bytes_smallest(&ctx)?,
        false,
    )?;
    if !args.no_galois {
        let gk = GaloisKeys::generate_default(&ctx, &sk)?;
        write(
            &args.out.join(GALOIS_FILE),
            &gk.to_bytes_smallest(&ctx)?,
            false,
        )?;
    }
    let p = ctx.params();
    outln!(
        "keys for n = {}, t = {}, log2 q = {:.1} ({} moduli), {} security written to {}",
        p.degree(),
        p.plain_modulus(),
        p.log2_q(),
        p.coeff_moduli().len(),
        p.security_level(),
        args.out.display()
    );
    outln!(
        "{SECRET_FILE} is SECRET: keep it on the client; the server needs only {PARAMS_FILE}, {RELIN_FILE}{}",
        if args.no_galois {
            String::new()
        } else {
            format!(" and {GALOIS_FILE}")
        }
    );
    Ok(ExitCode::SUCCESS)
}

// ----------------------------------------------------------------- encrypt

/// Arguments of `rnsfhe encrypt`.
#[derive(Debug, Args)]
pub struct EncryptArgs {
    /// Key directory (reads params.bin and public.key).
    #[arg(long)]
    keys: PathBuf,
    /// Values: a `.json` list of integers or a `.csv` column (one value per
    /// line, an optional header line). Negative values mean `t − |x|`.
    #[arg(long = "in")]
    input: PathBuf,
    /// Output ciphertext file.
    #[arg(long)]
    out: PathBuf,
}

/// `rnsfhe encrypt`.
pub fn encrypt(args: &EncryptArgs) -> CliResult<ExitCode> {
    let ctx = load_context(&args.keys)?;
    let pk: PublicKey = load(&ctx, &args.keys.join(PUBLIC_FILE))?;
    let values = read_values(&args.input)?;
    let pt = encode(&ctx, &values).map_err(|e| file_error(&args.input, e))?;
    let ct = Encryptor::from_public_key(&ctx, &pk)?.encrypt(&pt)?;
    write(&args.out, &ct.to_bytes(&ctx)?, false)?;
    Ok(ExitCode::SUCCESS)
}

// -------------------------------------------------------------------- eval

/// Homomorphic operations of `rnsfhe eval`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Op {
    /// CT + CT2, or CT + VALUES.
    Add,
    /// CT − CT2, or CT − VALUES.
    Sub,
    /// CT · CT2 (relinearized), or CT · VALUES.
    Mul,
    /// CT² (relinearized).
    Square,
    /// The sum of all slots, in every slot (needs galois.key).
    Sum,
    /// The inner product with CT2 or VALUES, in every slot (needs galois.key).
    Dot,
    /// CT switched down to `--level` (default: one level down), so that the
    /// file sent back is smaller (the decryption result is the same while
    /// the noise budget lasts).
    Modswitch,
}

/// Arguments of `rnsfhe eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Key directory: reads params.bin, relin.key and galois.key only —
    /// never the secret key.
    #[arg(long)]
    keys: PathBuf,
    /// The operation.
    #[arg(long, value_enum)]
    op: Op,
    /// One or two ciphertext files.
    #[arg(long = "in", num_args = 1..=2, required = true)]
    input: Vec<PathBuf>,
    /// A plaintext operand (`.json` list or `.csv` column) instead of a
    /// second ciphertext.
    #[arg(long)]
    plain: Option<PathBuf>,
    /// Output ciphertext file.
    #[arg(long)]
    out: PathBuf,
    /// `--op modswitch`: the target level (0 = one modulus left; `rnsfhe
    /// params` lists the chain). Default: one level below the input's.
    #[arg(long)]
    level: Option<usize>,
}

/// `rnsfhe eval`.
pub fn eval(args: &EvalArgs) -> CliResult<ExitCode> {
    let ctx = load_context(&args.keys)?;
    let ev = Evaluator::new(&ctx);
    let a: Ciphertext = load(&ctx, &args.input[0])?;
    let b: Option<Ciphertext> = match args.input.get(1) {
        Some(p) => Some(load(&ctx, p)?),
        None => None,
    };
    let plain = match &args.plain {
        Some(p) => {
            let values = read_values(p)?;
            Some(encode(&ctx, &values).map_err(|e| file_error(p, e))?)
        }
        None => None,
    };
    let op_name = format!("{:?}", args.op).to_lowercase();
    let operand = || -> CliResult<Operand<'_>> {
        match (&b, &plain) {
            (Some(b), None) => Ok(Operand::Cipher(b)),
            (None, Some(p)) => Ok(Operand::Plain(p)),
            (Some(_), Some(_)) => Err(CliError(format!(
                "--op {op_name} takes a second ciphertext or --plain, not both"
            ))),
            (None, None) => Err(CliError(format!(
                "--op {op_name} needs a second ciphertext (--in CT CT2) or --plain VALUES"
            ))),
        }
    };
    let relin = || load::<RelinKey>(&ctx, &args.keys.join(RELIN_FILE));
    let galois = || load::<GaloisKeys>(&ctx, &args.keys.join(GALOIS_FILE));
    let out = match args.op {
        Op::Add => match operand()? {
            Operand::Cipher(b) => ev.add(&a, b)?,
            Operand::Plain(p) => ev.add_plain(&a, p)?,
        },
        Op::Sub => match operand()? {
            Operand::Cipher(b) => ev.sub(&a, b)?,
            Operand::Plain(p) => ev.sub_plain(&a, p)?,
        },
        Op::Mul => match operand()? {
            Operand::Cipher(b) => ev.multiply_relin(&a, b, &relin()?)?,
            Operand::Plain(p) => ev.multiply_plain(&a, p)?,
        },
        Op::Square => {
            if b.is_some() || plain.is_some() {
                return Err("--op square takes one ciphertext".into());
            }
            ev.square_relin(&a, &relin()?)?
        }
        Op::Sum => {
            if b.is_some() || plain.is_some() {
                return Err("--op sum takes one ciphertext".into());
            }
            ev.sum_slots(&a, &galois()?)?
        }
        Op::Dot => match operand()? {
            Operand::Cipher(b) => {
                let prod = ev.multiply_relin(&a, b, &relin()?)?;
                ev.sum_slots(&prod, &galois()?)?
            }
            Operand::Plain(p) => ev.dot_product(&a, p, &galois()?)?,
        },
        Op::Modswitch => {
            if b.is_some() || plain.is_some() {
                return Err("--op modswitch takes one ciphertext".into());
            }
            match args.level {
                Some(l) => ev.mod_switch_to(&a, l)?,
                None => ev.mod_switch_to_next(&a)?,
            }
        }
    };
    if args.level.is_some() && args.op != Op::Modswitch {
        return Err("--level is for --op modswitch".into());
    }
    write(&args.out, &out.to_bytes(&ctx)?, false)?;
    Ok(ExitCode::SUCCESS)
}

enum Operand<'a> {
    Cipher(&'a Ciphertext),
    Plain(&'a Plaintext),
}

// ----------------------------------------------------------------- decrypt

/// Arguments of `rnsfhe decrypt`.
#[derive(Debug, Args)]
pub struct DecryptArgs {
    /// Key directory (reads params.bin and secret.key).
    #[arg(long)]
    keys: PathBuf,
    /// Ciphertext file.
    #[arg(long = "in")]
    input: PathBuf,
    /// Print `{"values": [...], "noise_budget_bits": N}` instead of one
    /// value per line.
    #[arg(long)]
    json: bool,
    /// Print exactly this many values (default: up to the last non-zero
    /// one).
    #[arg(long)]
    count: Option<usize>,
    /// Print values as signed integers in (−t/2, t/2].
    #[arg(long)]
    signed: bool,
}

/// `rnsfhe decrypt`.
pub fn decrypt(args: &DecryptArgs) -> CliResult<ExitCode> {
    let ctx = load_context(&args.keys)?;
    let sk: SecretKey = load(&ctx, &args.keys.join(SECRET_FILE))?;
    let ct: Ciphertext = load(&ctx, &args.input)?;
    let dec = Decryptor::new(&ctx, &sk)?;
    let pt = dec.decrypt(&ct)?;
    let budget = dec.invariant_noise_budget(&ct)?;
    let t = ctx.plain_modulus().value();
    let mut values: Vec<i128> = decode(&ctx, &pt)?
        .into_iter()
        .map(|v| {
            if args.signed && v > t / 2 {
                i128::from(v) - i128::from(t)
            } else {
                i128::from(v)
            }
        })
        .collect();
    let keep = match args.count {
        Some(c) => c.min(values.len()),
        None => values.iter().rposition(|&v| v != 0).map_or(1, |i| i + 1),
    };
    values.truncate(keep);
    if budget == 0 {
        errln!("warning: the noise budget is exhausted: the values are likely wrong");
    }
    if args.json {
        let list: Vec<String> = values.iter().map(i128::to_string).collect();
        outln!(
            "{{\"values\": [{}], \"noise_budget_bits\": {budget}}}",
            list.join(", ")
        );
    } else {
        for v in values {
            outln!("{v}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------- helpers

/// Prefixes an error with the file it came from.
fn file_error(path: &Path, e: impl std::fmt::Display) -> CliError {
    CliError(format!("{}: {e}", path.display()))
}

fn read(path: &Path) -> CliResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))
}

/// Writes a file; secret files are created with mode 0600 on Unix.
fn write(path: &Path, bytes: &[u8], secret: bool) -> CliResult<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    opts.open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))
}

/// The context of a key directory (`params.bin`).
fn load_context(keys: &Path) -> CliResult<Arc<BfvContext>> {
    let path = keys.join(PARAMS_FILE);
    let bytes = read(&path)?;
    let params = BfvParameters::from_bytes(&bytes).map_err(|e| file_error(&path, e))?;
    Ok(BfvContext::new(params)?)
}

/// Loads an object of `ctx` from `path`, naming the file in errors.
fn load<T: FromBytes>(ctx: &Arc<BfvContext>, path: &Path) -> CliResult<T> {
    let bytes = read(path)?;
    T::from_bytes(ctx, &bytes).map_err(|e| {
        // Name the kind found when it is not the one expected.
        let found = inspect(&bytes)
            .map(|h| format!(" (the file holds a {})", h.kind))
            .unwrap_or_default();
        match e {
            rnsfhe::Error::Format(
                rnsfhe::serialization::FormatError::WrongKind { .. }
                | rnsfhe::serialization::FormatError::UnexpectedSecret { .. },
            ) => file_error(path, format!("{e}{found}")),
            _ => file_error(path, e),
        }
    })
}

/// Reads a `.json` list of integers or a `.csv` column.
fn read_values(path: &Path) -> CliResult<Vec<i64>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        || text.trim_start().starts_with('[');
    let values = if is_json {
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| file_error(path, format!("invalid JSON: {e}")))?;
        let list = v
            .as_array()
            .ok_or_else(|| file_error(path, "expected a JSON list of integers"))?;
        list.iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_i64().ok_or_else(|| {
                    file_error(path, format!("entry {i} ({x}) is not a 64-bit integer"))
                })
            })
            .collect::<CliResult<Vec<i64>>>()?
    } else {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            // First column of a CSV line.
            let cell = line
                .split(',')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches('"');
            if cell.is_empty() {
                continue;
            }
            match cell.parse::<i64>() {
                Ok(v) => out.push(v),
                // A header line (first non-empty line only).
                Err(_) if out.is_empty() && i == 0 => {}
                Err(_) => {
                    return Err(file_error(
                        path,
                        format!("line {}: '{cell}' is not an integer", i + 1),
                    ))
                }
            }
        }
        out
    };
    if values.is_empty() {
        return Err(file_error(path, "no values"));
    }
    Ok(values)
}

/// Batch-encodes when `t` allows it (prime, `≡ 1 mod 2n`), else encodes
/// the values as polynomial coefficients.
fn encode(ctx: &Arc<BfvContext>, values: &[i64]) -> rnsfhe::Result<Plaintext> {
    let t = ctx.plain_modulus().value();
    let signed = values.iter().any(|&v| v < 0);
    let unsigned = || -> rnsfhe::Result<Vec<u64>> {
        values
            .iter()
            .enumerate()
            .map(|(index, &v)| {
                if (v as u64) < t {
                    Ok(v as u64)
                } else {
                    Err(rnsfhe::Error::PlaintextOutOfRange {
                        index,
                        value: v as u64,
                        t,
                    })
                }
            })
            .collect()
    };
    match BatchEncoder::new(ctx) {
        Ok(b) if signed => b.encode_signed(values),
        Ok(b) => b.encode(&unsigned()?),
        Err(_) if signed => CoefficientEncoder::new(ctx).encode_signed(values),
        Err(_) => CoefficientEncoder::new(ctx).encode(&unsigned()?),
    }
}

/// The inverse of [`encode`].
fn decode(ctx: &Arc<BfvContext>, pt: &Plaintext) -> rnsfhe::Result<Vec<u64>> {
    match BatchEncoder::new(ctx) {
        Ok(b) => b.decode(pt),
        Err(_) => CoefficientEncoder::new(ctx).decode(pt),
    }
}
