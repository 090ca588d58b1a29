//! The arguments of `rnsfhe keygen`, `encrypt`, `eval` and `decrypt`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use rnsfhe::SecurityLevel;

use crate::common::parse_security;

/// `keygen --scheme`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FileScheme {
    /// BFV: integers mod t (batched when t allows it).
    Bfv,
    /// CKKS: real numbers, approximately.
    Ckks,
    /// BGV: integers mod t (batched).
    Bgv,
}

/// Arguments of `rnsfhe keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The scheme (default: the parameter file's, or bfv for a preset).
    #[arg(long, value_enum)]
    pub scheme: Option<FileScheme>,
    /// A parameter file (written by an earlier keygen) or a preset: BFV
    /// `LOGN,LOGQ` such as `12,109` (moduli of at most 60 bits); CKKS and
    /// BGV `LOGN,DEPTH` such as `13,2` (DEPTH multiplications).
    #[arg(long)]
    pub params: String,
    /// Plaintext modulus t for a BFV or BGV preset (65537 allows batching
    /// up to n = 2^15).
    #[arg(long, default_value_t = 65537)]
    pub t: u64,
    /// CKKS and BGV presets: bits of each prime of the chain (CKKS: the
    /// scale 2^BITS; the first prime has 20 (CKKS) or 10 (BGV) bits more,
    /// at most 60).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(20..=60))]
    pub prime_bits: u32,
    /// Security level enforced for a preset: 128, 192, 256 or none.
    #[arg(long, default_value = "128", value_parser = parse_security)]
    pub security: SecurityLevel,
    /// Key directory to create (files: params.bin, secret.key, public.key,
    /// relin.key, galois.key).
    #[arg(long)]
    pub out: PathBuf,
    /// Skip the Galois keys (no `sum`, `dot` or `rotate` then).
    #[arg(long)]
    pub no_galois: bool,
    /// Overwrite existing key files.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `rnsfhe encrypt`.
#[derive(Debug, Args)]
pub struct EncryptArgs {
    /// Key directory (reads params.bin and public.key; the scheme is the
    /// one of params.bin).
    #[arg(long)]
    pub keys: PathBuf,
    /// Values: a `.json` list or a `.csv` column (one value per line, an
    /// optional header line). BFV and BGV: integers, negative values mean
    /// `t − |x|`; CKKS: real numbers.
    #[arg(long = "in")]
    pub input: PathBuf,
    /// Output ciphertext file.
    #[arg(long)]
    pub out: PathBuf,
}

/// Homomorphic operations of `rnsfhe eval`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Op {
    /// CT + CT2, or CT + VALUES.
    Add,
    /// CT − CT2, or CT − VALUES.
    Sub,
    /// CT · CT2 (relinearized), or CT · VALUES. CKKS: the scale is squared;
    /// follow with `rescale`.
    Mul,
    /// CT² (relinearized; CKKS: follow with `rescale`).
    Square,
    /// The sum of all slots, in every slot (BFV, CKKS; needs galois.key).
    Sum,
    /// The inner product with CT2 or VALUES, in every slot (BFV, CKKS;
    /// needs galois.key; CKKS rescales the product).
    Dot,
    /// The slots rotated left by `--steps` (needs galois.key; BFV and BGV
    /// rotate both rows of the slot matrix).
    Rotate,
    /// CT switched down to `--level` (default: one level down), so that the
    /// file sent back is smaller (the decryption result is the same while
    /// the noise budget lasts; CKKS drops primes, keeping the scale).
    Modswitch,
    /// CKKS: divides by the last prime of the level (after `mul`/`square`).
    Rescale,
}

/// Arguments of `rnsfhe eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Key directory: reads params.bin, relin.key and galois.key only —
    /// never the secret key.
    #[arg(long)]
    pub keys: PathBuf,
    /// The operation.
    #[arg(long, value_enum)]
    pub op: Op,
    /// One or two ciphertext files.
    #[arg(long = "in", num_args = 1..=2, required = true)]
    pub input: Vec<PathBuf>,
    /// A plaintext operand (`.json` list or `.csv` column) instead of a
    /// second ciphertext.
    #[arg(long)]
    pub plain: Option<PathBuf>,
    /// Output ciphertext file.
    #[arg(long)]
    pub out: PathBuf,
    /// `--op modswitch`: the target level (0 = one modulus left; `rnsfhe
    /// params` lists the chain). Default: one level below the input's.
    #[arg(long)]
    pub level: Option<usize>,
    /// `--op rotate`: slots to rotate left (negative: right).
    #[arg(long, allow_hyphen_values = true)]
    pub steps: Option<i64>,
}

/// Arguments of `rnsfhe decrypt`.
#[derive(Debug, Args)]
pub struct DecryptArgs {
    /// Key directory (reads params.bin and secret.key).
    #[arg(long)]
    pub keys: PathBuf,
    /// Ciphertext file.
    #[arg(long = "in")]
    pub input: PathBuf,
    /// Print `{"values": [...], …}` (BFV, BGV: with `noise_budget_bits`;
    /// CKKS: with `level` and `log2_scale`) instead of one value per line.
    #[arg(long)]
    pub json: bool,
    /// Print at most this many values (default: BFV, BGV up to the last
    /// non-zero one; CKKS as many as were encrypted).
    #[arg(long)]
    pub count: Option<usize>,
    /// BFV, BGV: print values as signed integers in (−t/2, t/2].
    #[arg(long)]
    pub signed: bool,
}
