//! The file workflow of 004 Fig. 1's client/server model, written once
//! for every scheme: `keygen`, `encrypt`, `eval` and `decrypt` over the
//! serialized format of [`rnsfhe::serialization`] (`docs/format.md`),
//! generic over a [`Scheme`] that says how to build, encode, compute and
//! decode (BFV, CKKS and BGV each implement it in a small file).
//!
//! Every bad input — a missing, truncated, corrupted or foreign file, a
//! secret key where a ciphertext belongs, another scheme's file, a value
//! out of range — is one line on stderr and a non-zero exit, via the typed
//! errors of the loaders.

use std::marker::PhantomData;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use rnsfhe::rlwe::SchemeContext;
use rnsfhe::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::serialization::{inspect, FromBytes, ToBytes};

use super::args::{DecryptArgs, EncryptArgs, EvalArgs, KeygenArgs, Op};
use crate::common::{errln, outln, CliError, CliResult};

/// File names inside a key directory.
pub const PARAMS_FILE: &str = "params.bin";
/// The secret key (the only secret file).
pub const SECRET_FILE: &str = "secret.key";
/// The public key.
pub const PUBLIC_FILE: &str = "public.key";
/// The relinearization key.
pub const RELIN_FILE: &str = "relin.key";
/// The Galois keys (default set: every power-of-two rotation and the
/// conjugation / column swap).
pub const GALOIS_FILE: &str = "galois.key";

/// A value of an input file: an integer (BFV, BGV) or a real (CKKS).
pub trait PlainValue: Sized + Copy {
    /// What the value is, for errors (`integer`, `finite number`).
    const WHAT: &'static str;
    /// From a JSON list entry.
    fn from_json(v: &serde_json::Value) -> Option<Self>;
    /// From a CSV cell.
    fn parse(cell: &str) -> Option<Self>;
}

impl PlainValue for i64 {
    const WHAT: &'static str = "64-bit integer";
    fn from_json(v: &serde_json::Value) -> Option<Self> {
        v.as_i64()
    }
    fn parse(cell: &str) -> Option<Self> {
        cell.parse().ok()
    }
}

impl PlainValue for f64 {
    const WHAT: &'static str = "finite number";
    fn from_json(v: &serde_json::Value) -> Option<Self> {
        v.as_f64().filter(|x| x.is_finite())
    }
    fn parse(cell: &str) -> Option<Self> {
        cell.parse::<f64>().ok().filter(|x| x.is_finite())
    }
}

/// A decrypted ciphertext, ready to print.
pub struct Decrypted {
    /// The slot (or coefficient) values, formatted.
    pub values: Vec<String>,
    /// Whether each value counts as zero (trailing zeros are not printed
    /// unless `--count` asks for them).
    pub zero: Vec<bool>,
    /// Further JSON fields, e.g. `("noise_budget_bits", "42")`.
    pub fields: Vec<(&'static str, String)>,
    /// The noise budget is spent: the values are likely wrong.
    pub exhausted: bool,
}

/// One scheme of the file workflow: its parameter file, its context and
/// the operations `eval` maps onto. The operations a scheme lacks keep the
/// default, a clear error.
pub trait Scheme {
    /// The name in messages (`BFV`).
    const NAME: &'static str;
    /// The context (keys and objects load against it).
    type Ctx: SchemeContext;
    /// The parameters (`params.bin`).
    type Params;
    /// A ciphertext.
    type Ct: ToBytes<Self::Ctx> + FromBytes<Self::Ctx>;
    /// A plaintext operand.
    type Pt;
    /// The evaluator.
    type Ev;
    /// A value of the input files.
    type Value: PlainValue;

    /// Parses a parameter file.
    fn params_from_bytes(bytes: &[u8]) -> rnsfhe::Result<Self::Params>;
    /// Writes the context's parameters.
    fn params_to_bytes(ctx: &Self::Ctx) -> rnsfhe::Result<Vec<u8>>;
    /// The preset of `keygen --params LOGN,…`.
    fn preset(args: &KeygenArgs) -> CliResult<Self::Params>;
    /// The context of the parameters.
    fn context(params: Self::Params) -> rnsfhe::Result<Arc<Self::Ctx>>;
    /// One line describing the parameters (after keygen).
    fn describe(ctx: &Self::Ctx) -> String;
    /// An evaluator.
    fn evaluator(ctx: &Arc<Self::Ctx>) -> Self::Ev;
    /// Encodes input values for encryption.
    fn encode(ctx: &Arc<Self::Ctx>, values: &[Self::Value]) -> rnsfhe::Result<Self::Pt>;
    /// Encodes a plaintext operand of `op` on `ct` (CKKS: at its level
    /// and at the scale the op needs; the integer schemes: as
    /// [`Scheme::encode`]).
    fn encode_operand(
        ctx: &Arc<Self::Ctx>,
        values: &[Self::Value],
        ct: &Self::Ct,
        op: Op,
    ) -> rnsfhe::Result<Self::Pt> {
        let _ = (ct, op);
        Self::encode(ctx, values)
    }
    /// Public-key encryption.
    fn encrypt(ctx: &Arc<Self::Ctx>, pk: &PublicKey, pt: &Self::Pt) -> rnsfhe::Result<Self::Ct>;
    /// Decryption and decoding.
    fn decrypt(
        ctx: &Arc<Self::Ctx>,
        sk: &SecretKey,
        ct: &Self::Ct,
        signed: bool,
    ) -> CliResult<Decrypted>;

    /// `a + b`.
    fn add(ev: &Self::Ev, a: &Self::Ct, b: &Self::Ct) -> rnsfhe::Result<Self::Ct>;
    /// `a − b`.
    fn sub(ev: &Self::Ev, a: &Self::Ct, b: &Self::Ct) -> rnsfhe::Result<Self::Ct>;
    /// `a + p`.
    fn add_plain(ev: &Self::Ev, a: &Self::Ct, p: &Self::Pt) -> rnsfhe::Result<Self::Ct>;
    /// `a − p`.
    fn sub_plain(ev: &Self::Ev, a: &Self::Ct, p: &Self::Pt) -> rnsfhe::Result<Self::Ct>;
    /// `a · p`.
    fn mul_plain(ev: &Self::Ev, a: &Self::Ct, p: &Self::Pt) -> rnsfhe::Result<Self::Ct>;
    /// `a · b`, relinearized.
    fn mul(ev: &Self::Ev, a: &Self::Ct, b: &Self::Ct, rk: &RelinKey) -> rnsfhe::Result<Self::Ct>;
    /// The slots rotated left by `steps`.
    fn rotate(ev: &Self::Ev, a: &Self::Ct, steps: i64, gk: &GaloisKeys)
        -> rnsfhe::Result<Self::Ct>;
    /// Down to `level`, or one level down.
    fn mod_switch(ev: &Self::Ev, a: &Self::Ct, level: Option<usize>) -> rnsfhe::Result<Self::Ct>;

    /// The sum of all slots, in every slot.
    fn sum(ev: &Self::Ev, a: &Self::Ct, gk: &GaloisKeys) -> rnsfhe::Result<Self::Ct>;
    /// The product to sum in `dot` (CKKS rescales it).
    fn dot_product(ev: &Self::Ev, p: Self::Ct) -> rnsfhe::Result<Self::Ct> {
        let _ = ev;
        Ok(p)
    }
    /// Divides by the last prime of the level.
    fn rescale(ev: &Self::Ev, a: &Self::Ct) -> CliResult<Self::Ct> {
        let _ = (ev, a);
        Err(unsupported::<Self>(Op::Rescale))
    }
}

fn unsupported<S: Scheme + ?Sized>(op: Op) -> CliError {
    let name = format!("{op:?}").to_lowercase();
    CliError(format!("--op {name} is not available for {} keys", S::NAME))
}

/// The second operand of a binary op.
enum Operand<'a, S: Scheme> {
    Cipher(&'a S::Ct),
    Plain(S::Pt),
}

/// A key type that loads and saves against the contexts `C`.
// Used in bounds only, which the dead-code lint does not count.
#[allow(dead_code)]
pub trait KeyFile<C>: ToBytes<C> + FromBytes<C> {}
impl<C, T: ToBytes<C> + FromBytes<C>> KeyFile<C> for T {}

/// The four commands for the scheme `S`.
pub struct Workflow<S>(PhantomData<S>);

impl<S: Scheme> Workflow<S>
where
    SecretKey: KeyFile<S::Ctx>,
    PublicKey: KeyFile<S::Ctx>,
    RelinKey: KeyFile<S::Ctx>,
    GaloisKeys: KeyFile<S::Ctx>,
{
    /// `rnsfhe keygen`: parameters, secret key (mode 0600), and the public,
    /// relinearization and Galois keys (seed-compressed), one file each.
    pub fn keygen(args: &KeygenArgs) -> CliResult<ExitCode> {
        let path = Path::new(&args.params);
        let params = if path.is_file() {
            S::params_from_bytes(&read(path)?).map_err(|e| file_error(path, e))?
        } else {
            S::preset(args)?
        };
        let ctx = S::context(params)?;
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
            &S::params_to_bytes(&ctx)?,
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
        outln!(
            "keys for {} written to {}",
            S::describe(&ctx),
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

    /// `rnsfhe encrypt`: values encoded and encrypted under the public key.
    pub fn encrypt(args: &EncryptArgs) -> CliResult<ExitCode> {
        let ctx = load_context::<S>(&args.keys)?;
        let pk: PublicKey = load(&ctx, &args.keys.join(PUBLIC_FILE))?;
        let values = read_values::<S::Value>(&args.input)?;
        let pt = S::encode(&ctx, &values).map_err(|e| file_error(&args.input, e))?;
        let ct = S::encrypt(&ctx, &pk, &pt)?;
        write(&args.out, &ct.to_bytes(&ctx)?, false)?;
        Ok(ExitCode::SUCCESS)
    }

    /// `rnsfhe eval`: one operation on ciphertext files, with public material
    /// only.
    pub fn eval(args: &EvalArgs) -> CliResult<ExitCode> {
        let op_name = format!("{:?}", args.op).to_lowercase();
        if args.level.is_some() && args.op != Op::Modswitch {
            return Err("--level is for --op modswitch".into());
        }
        if args.steps.is_some() != (args.op == Op::Rotate) {
            return Err(CliError(if args.op == Op::Rotate {
                "--op rotate needs --steps K".into()
            } else {
                "--steps is for --op rotate".into()
            }));
        }
        let ctx = load_context::<S>(&args.keys)?;
        let ev = S::evaluator(&ctx);
        let a: S::Ct = load(&ctx, &args.input[0])?;
        let b: Option<S::Ct> = match args.input.get(1) {
            Some(p) => Some(load(&ctx, p)?),
            None => None,
        };
        let plain = match &args.plain {
            Some(p) => Some((p, read_values::<S::Value>(p)?)),
            None => None,
        };
        let unary = matches!(
            args.op,
            Op::Square | Op::Sum | Op::Rotate | Op::Modswitch | Op::Rescale
        );
        if unary && (b.is_some() || plain.is_some()) {
            return Err(CliError(format!("--op {op_name} takes one ciphertext")));
        }
        let operand = || -> CliResult<Operand<'_, S>> {
            match (&b, &plain) {
                (Some(b), None) => Ok(Operand::Cipher(b)),
                (None, Some((p, v))) => Ok(Operand::Plain(
                    S::encode_operand(&ctx, v, &a, args.op).map_err(|e| file_error(p, e))?,
                )),
                (Some(_), Some(_)) => Err(CliError(format!(
                    "--op {op_name} takes a second ciphertext or --plain, not both"
                ))),
                (None, None) => Err(CliError(format!(
                    "--op {op_name} needs a second ciphertext (--in CT CT2) or --plain VALUES"
                ))),
            }
        };
        let relin = || load::<S::Ctx, RelinKey>(&ctx, &args.keys.join(RELIN_FILE));
        let galois = || load::<S::Ctx, GaloisKeys>(&ctx, &args.keys.join(GALOIS_FILE));
        let out = match args.op {
            Op::Add => match operand()? {
                Operand::Cipher(b) => S::add(&ev, &a, b)?,
                Operand::Plain(p) => S::add_plain(&ev, &a, &p)?,
            },
            Op::Sub => match operand()? {
                Operand::Cipher(b) => S::sub(&ev, &a, b)?,
                Operand::Plain(p) => S::sub_plain(&ev, &a, &p)?,
            },
            Op::Mul => match operand()? {
                Operand::Cipher(b) => S::mul(&ev, &a, b, &relin()?)?,
                Operand::Plain(p) => S::mul_plain(&ev, &a, &p)?,
            },
            Op::Square => S::mul(&ev, &a, &a, &relin()?)?,
            Op::Sum => S::sum(&ev, &a, &galois()?)?,
            Op::Dot => {
                let prod = match operand()? {
                    Operand::Cipher(b) => S::mul(&ev, &a, b, &relin()?)?,
                    Operand::Plain(p) => S::mul_plain(&ev, &a, &p)?,
                };
                S::sum(&ev, &S::dot_product(&ev, prod)?, &galois()?)?
            }
            Op::Rotate => S::rotate(&ev, &a, args.steps.unwrap_or(0), &galois()?)?,
            Op::Modswitch => S::mod_switch(&ev, &a, args.level)?,
            Op::Rescale => S::rescale(&ev, &a)?,
        };
        write(&args.out, &out.to_bytes(&ctx)?, false)?;
        Ok(ExitCode::SUCCESS)
    }

    /// `rnsfhe decrypt`: the values, one per line or as JSON.
    pub fn decrypt(args: &DecryptArgs) -> CliResult<ExitCode> {
        let ctx = load_context::<S>(&args.keys)?;
        let sk: SecretKey = load(&ctx, &args.keys.join(SECRET_FILE))?;
        let ct: S::Ct = load(&ctx, &args.input)?;
        let mut d = S::decrypt(&ctx, &sk, &ct, args.signed)?;
        let keep = match args.count {
            Some(c) => c.min(d.values.len()),
            None => d.zero.iter().rposition(|&z| !z).map_or(1, |i| i + 1),
        };
        d.values.truncate(keep);
        if d.exhausted {
            errln!("warning: the noise budget is exhausted: the values are likely wrong");
        }
        if args.json {
            let fields: String = d
                .fields
                .iter()
                .map(|(k, v)| format!(", \"{k}\": {v}"))
                .collect();
            outln!("{{\"values\": [{}]{fields}}}", d.values.join(", "));
        } else {
            for v in d.values {
                outln!("{v}");
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Integers as residues mod `t` for an integer encoder: non-negative
/// values must be below `t` (`unsigned`), negative ones mean `t − |x|`
/// (`signed`, which checks their range).
pub fn encode_integers<P>(
    values: &[i64],
    t: u64,
    unsigned: impl FnOnce(&[u64]) -> rnsfhe::Result<P>,
    signed: impl FnOnce(&[i64]) -> rnsfhe::Result<P>,
) -> rnsfhe::Result<P> {
    if values.iter().any(|&v| v < 0) {
        return signed(values);
    }
    let residues = values
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
        .collect::<rnsfhe::Result<Vec<u64>>>()?;
    unsigned(&residues)
}

/// Decrypted integers mod `t` (signed in `(−t/2, t/2]` if asked) with the
/// noise budget.
pub fn integers(values: Vec<u64>, t: u64, signed: bool, budget: u32) -> Decrypted {
    let values: Vec<i128> = values
        .into_iter()
        .map(|v| {
            if signed && v > t / 2 {
                i128::from(v) - i128::from(t)
            } else {
                i128::from(v)
            }
        })
        .collect();
    Decrypted {
        zero: values.iter().map(|&v| v == 0).collect(),
        values: values.iter().map(i128::to_string).collect(),
        fields: vec![("noise_budget_bits", budget.to_string())],
        exhausted: budget == 0,
    }
}

/// The CKKS and BGV preset `LOGN,DEPTH` of `keygen --params`.
pub fn depth_preset(spec: &str) -> CliResult<(u32, usize)> {
    let err = || {
        CliError(format!(
            "--params: not a file, and not a preset LOGN,DEPTH (e.g. 13,2): '{spec}'"
        ))
    };
    let (n, d) = spec.split_once([',', ':']).ok_or_else(err)?;
    let log_n: u32 = n.trim().parse().map_err(|_| err())?;
    let depth: usize = d.trim().parse().map_err(|_| err())?;
    if !(10..=17).contains(&log_n) {
        return Err(CliError(format!(
            "--params: log n = {log_n} must be in 10..=17"
        )));
    }
    if depth == 0 || depth > 64 {
        return Err(CliError(format!(
            "--params: depth {depth} must be in 1..=64"
        )));
    }
    Ok((log_n, depth))
}

/// The evaluator calls every scheme spells alike, for an `impl Scheme`.
macro_rules! common_ops {
    ($name:literal, $ctx:ident, $params:ident, $value:ty) => {
        const NAME: &'static str = $name;
        type Ctx = $ctx;
        type Params = $params;
        type Ct = Ciphertext;
        type Pt = Plaintext;
        type Ev = Evaluator;
        type Value = $value;
        fn params_from_bytes(bytes: &[u8]) -> rnsfhe::Result<$params> {
            $params::from_bytes(bytes)
        }
        fn context(params: $params) -> rnsfhe::Result<Arc<$ctx>> {
            $ctx::new(params)
        }
        fn add(ev: &Self::Ev, a: &Self::Ct, b: &Self::Ct) -> rnsfhe::Result<Self::Ct> {
            ev.add(a, b)
        }
        fn sub(ev: &Self::Ev, a: &Self::Ct, b: &Self::Ct) -> rnsfhe::Result<Self::Ct> {
            ev.sub(a, b)
        }
        fn add_plain(ev: &Self::Ev, a: &Self::Ct, p: &Self::Pt) -> rnsfhe::Result<Self::Ct> {
            ev.add_plain(a, p)
        }
        fn sub_plain(ev: &Self::Ev, a: &Self::Ct, p: &Self::Pt) -> rnsfhe::Result<Self::Ct> {
            ev.sub_plain(a, p)
        }
        fn mul_plain(ev: &Self::Ev, a: &Self::Ct, p: &Self::Pt) -> rnsfhe::Result<Self::Ct> {
            ev.multiply_plain(a, p)
        }
        fn sum(ev: &Self::Ev, a: &Self::Ct, gk: &GaloisKeys) -> rnsfhe::Result<Self::Ct> {
            ev.sum_slots(a, gk)
        }
        fn evaluator(ctx: &Arc<Self::Ctx>) -> Self::Ev {
            Evaluator::new(ctx)
        }
        fn encrypt(
            ctx: &Arc<Self::Ctx>,
            pk: &PublicKey,
            pt: &Self::Pt,
        ) -> rnsfhe::Result<Self::Ct> {
            Encryptor::from_public_key(ctx, pk)?.encrypt(pt)
        }
        fn params_to_bytes(ctx: &Self::Ctx) -> rnsfhe::Result<Vec<u8>> {
            ctx.params().to_bytes()
        }
    };
}
pub(crate) use common_ops;

/// The operations BFV and BGV share in the workflow: row rotations and
/// the modulus switch (to the next level or down to a given one).
macro_rules! integer_ops {
    () => {
        fn rotate(ev: &Evaluator, a: &Ciphertext, k: i64, gk: &GaloisKeys) -> Result<Ciphertext> {
            ev.rotate_rows(a, k, gk)
        }

        fn mod_switch(ev: &Evaluator, a: &Ciphertext, l: Option<usize>) -> Result<Ciphertext> {
            match l {
                Some(l) => ev.mod_switch_to(a, l),
                None => ev.mod_switch_to_next(a),
            }
        }
    };
}
pub(crate) use integer_ops;

// ---------------------------------------------------------------- helpers

/// Prefixes an error with the file it came from.
pub fn file_error(path: &Path, e: impl std::fmt::Display) -> CliError {
    CliError(format!("{}: {e}", path.display()))
}

/// Reads a whole file, after checking its size against the resource limit
/// in force (`RNSFHE_MAX_ALLOC_BYTES`, default 16 GiB): a huge file is
/// refused before it is read into memory.
pub fn read(path: &Path) -> CliResult<Vec<u8>> {
    if let Ok(meta) = std::fs::metadata(path) {
        rnsfhe::limits::check("reading the file", meta.len()).map_err(|e| file_error(path, e))?;
    }
    std::fs::read(path).map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))
}

/// Writes a file; secret files are created with mode 0600 on Unix.
pub(super) fn write(path: &Path, bytes: &[u8], secret: bool) -> CliResult<()> {
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
pub(super) fn load_context<S: Scheme>(keys: &Path) -> CliResult<Arc<S::Ctx>> {
    let path = keys.join(PARAMS_FILE);
    let bytes = read(&path)?;
    let params = S::params_from_bytes(&bytes).map_err(|e| file_error(&path, e))?;
    Ok(S::context(params)?)
}

/// Loads an object of `ctx` from `path`, naming the file in errors.
pub(super) fn load<C, T: FromBytes<C>>(ctx: &Arc<C>, path: &Path) -> CliResult<T> {
    let mut bytes = read(path)?;
    let header = inspect(&bytes);
    let loaded = T::from_bytes(ctx, &bytes);
    // The bytes of a secret key or share are wiped once parsed.
    if header.as_ref().is_ok_and(|h| h.secret) {
        rnsfhe::zeroize::Zeroize::zeroize(&mut bytes);
    }
    loaded.map_err(|e| {
        // Name the kind found when it is not the one expected.
        let found = header
            .as_ref()
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

/// Reads a `.json` list or a `.csv` column of values.
fn read_values<V: PlainValue>(path: &Path) -> CliResult<Vec<V>> {
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
            .ok_or_else(|| file_error(path, format!("expected a JSON list of {}s", V::WHAT)))?;
        list.iter()
            .enumerate()
            .map(|(i, x)| {
                V::from_json(x).ok_or_else(|| {
                    file_error(path, format!("entry {i} ({x}) is not a {}", V::WHAT))
                })
            })
            .collect::<CliResult<Vec<V>>>()?
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
            match V::parse(cell) {
                Some(v) => out.push(v),
                // A header line (first non-empty line only).
                None if out.is_empty() && i == 0 => {}
                None => {
                    return Err(file_error(
                        path,
                        format!("line {}: '{cell}' is not a {}", i + 1, V::WHAT),
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
