//! `rnsfhe party …`: the multiparty protocols as a file workflow, so that
//! `N` parties on different machines can make a collective key and decrypt
//! together by exchanging files (written once, generic over the schemes of
//! [`Scheme`]).
//!
//! A party directory holds `params.bin`, the party's secret-key share
//! `share.key` (mode 0600, never sent), `party.json` (`index`, `parties`)
//! and, between the two rounds of relinearization-key generation, the
//! ephemeral secret `relin.ephemeral` (mode 0600). Every other file is a
//! public message: shares go to whoever aggregates; the aggregates —
//! `public.key`, `relin.key`, `galois.key` — make an ordinary key
//! directory with `params.bin`, so `rnsfhe encrypt` and `rnsfhe eval` work
//! unchanged. Decryption needs one share from every party
//! (`decrypt-share`), then `combine --what decryption`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use rnsfhe::multiparty::{
    CollectiveDecryption, CommonReferenceString, DecryptionShare, GaloisKeyGeneration,
    GaloisKeyShare, PublicKeyGeneration, PublicKeyShare, RelinKeyEphemeral, RelinKeyGeneration,
    RelinKeyRound1, RelinKeyShare, SchemeNoise, SharedCiphertext, Smudging,
};
use rnsfhe::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::serialization::ToBytes;

use super::workflow::{file_error, load, load_context, read, write, KeyFile, Scheme, PARAMS_FILE};
use crate::common::{outln, CliError, CliResult};

/// The party's secret-key share (the only long-term secret).
pub const SHARE_FILE: &str = "share.key";
/// The party's index and the number of parties.
pub const PARTY_FILE: &str = "party.json";
/// The ephemeral secret between the rounds of relinearization-key
/// generation.
pub const EPHEMERAL_FILE: &str = "relin.ephemeral";

/// What a share or an aggregate is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Message {
    /// The collective public key (one round).
    PublicKey,
    /// Relinearization key, round 1 (keeps `relin.ephemeral`).
    RelinRound1,
    /// Relinearization key, round 2 (needs the round-1 aggregate).
    RelinRound2,
    /// Galois keys for the default rotations (powers of two, the column
    /// swap / conjugation).
    Galois,
    /// Collective decryption (`combine` only: the shares come from
    /// `decrypt-share`).
    Decryption,
}

/// Arguments of `rnsfhe party`.
#[derive(Debug, Args)]
pub struct PartyArgs {
    /// The step.
    #[command(subcommand)]
    pub step: Step,
}

/// The steps of `rnsfhe party`.
#[derive(Debug, clap::Subcommand)]
pub enum Step {
    /// Write a fresh common reference string (a 32-byte random seed; one
    /// per key generation, shared with every party).
    Crs {
        /// Output file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Make a party directory: the parameters and a fresh secret-key share.
    Init {
        /// A parameter file (`params.bin` of `rnsfhe keygen`, any scheme).
        #[arg(long)]
        params: PathBuf,
        /// This party's index, `0 ≤ INDEX < PARTIES`.
        #[arg(long)]
        index: u32,
        /// The number of parties.
        #[arg(long)]
        parties: u32,
        /// The party directory to create.
        #[arg(long)]
        out: PathBuf,
    },
    /// This party's share of a key-generation protocol.
    KeygenShare {
        /// The party directory.
        #[arg(long)]
        dir: PathBuf,
        /// The protocol.
        #[arg(long, value_enum)]
        what: Message,
        /// The common reference string of this key (a fresh one per key).
        #[arg(long)]
        crs: PathBuf,
        /// The collective public key (relinearization and Galois keys).
        #[arg(long)]
        public_key: Option<PathBuf>,
        /// The round-1 aggregate (relinearization key, round 2).
        #[arg(long)]
        round1: Option<PathBuf>,
        /// Output share file (public: send it to the aggregator).
        #[arg(long)]
        out: PathBuf,
    },
    /// This party's decryption share of a ciphertext, with smudging noise.
    DecryptShare {
        /// The party directory.
        #[arg(long)]
        dir: PathBuf,
        /// The collective public key the ciphertext is under.
        #[arg(long)]
        public_key: PathBuf,
        /// The ciphertext (size 2: relinearized).
        #[arg(long = "in")]
        input: PathBuf,
        /// Bits of the smudging noise (default: BFV and BGV the widest
        /// whose sum over the parties stays within a quarter of the
        /// ciphertext's room; CKKS statistical security 40 over a fresh
        /// encryption's noise, refused where the scale is too small for
        /// it).
        #[arg(long)]
        smudging_bits: Option<u32>,
        /// Output share file (public).
        #[arg(long)]
        out: PathBuf,
    },
    /// Aggregate the shares of every party (public: anyone can run it).
    Combine {
        /// A parameter file.
        #[arg(long)]
        params: PathBuf,
        /// The number of parties.
        #[arg(long)]
        parties: u32,
        /// The protocol.
        #[arg(long, value_enum)]
        what: Message,
        /// The common reference string (key generation).
        #[arg(long)]
        crs: Option<PathBuf>,
        /// The collective public key (relinearization and Galois keys,
        /// decryption).
        #[arg(long)]
        public_key: Option<PathBuf>,
        /// The round-1 aggregate (relinearization key, round 2).
        #[arg(long)]
        round1: Option<PathBuf>,
        /// The ciphertext (decryption).
        #[arg(long)]
        ciphertext: Option<PathBuf>,
        /// One share file per party.
        #[arg(long = "in", num_args = 1.., required = true)]
        input: Vec<PathBuf>,
        /// Output file (key generation): `public.key`, the round-1
        /// aggregate, `relin.key` or `galois.key`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Decryption: print `{"values": [...]}`.
        #[arg(long)]
        json: bool,
        /// Decryption, BFV and BGV: signed values in (−t/2, t/2].
        #[arg(long)]
        signed: bool,
    },
}

/// The steps for the scheme `S`.
pub struct Party<S>(std::marker::PhantomData<S>);

impl<S: Scheme> Party<S>
where
    S::Ctx: SchemeNoise,
    S::Ct: SharedCiphertext,
    SecretKey: KeyFile<S::Ctx>,
    PublicKey: KeyFile<S::Ctx>,
    RelinKey: KeyFile<S::Ctx>,
    GaloisKeys: KeyFile<S::Ctx>,
    PublicKeyShare: KeyFile<S::Ctx>,
    RelinKeyShare: KeyFile<S::Ctx>,
    RelinKeyRound1: KeyFile<S::Ctx>,
    RelinKeyEphemeral: KeyFile<S::Ctx>,
    GaloisKeyShare: KeyFile<S::Ctx>,
    DecryptionShare: KeyFile<S::Ctx>,
{
    /// Runs `step` (all but `crs`, which needs no scheme).
    pub fn run(step: &Step) -> CliResult<ExitCode> {
        match step {
            Step::Crs { .. } => unreachable_crs(),
            Step::Init {
                params,
                index,
                parties,
                out,
            } => Self::init(params, *index, *parties, out),
            Step::KeygenShare {
                dir,
                what,
                crs,
                public_key,
                round1,
                out,
            } => Self::keygen_share(
                dir,
                *what,
                crs,
                public_key.as_deref(),
                round1.as_deref(),
                out,
            ),
            Step::DecryptShare {
                dir,
                public_key,
                input,
                smudging_bits,
                out,
            } => Self::decrypt_share(dir, public_key, input, *smudging_bits, out),
            Step::Combine { .. } => Self::combine(step),
        }
    }

    fn init(params: &Path, index: u32, parties: u32, out: &Path) -> CliResult<ExitCode> {
        if index >= parties {
            return Err(CliError(format!(
                "--index {index} is not below --parties {parties}"
            )));
        }
        let ctx =
            S::context(S::params_from_bytes(&read(params)?).map_err(|e| file_error(params, e))?)?;
        std::fs::create_dir_all(out)
            .map_err(|e| CliError(format!("cannot create {}: {e}", out.display())))?;
        if out.join(SHARE_FILE).exists() {
            return Err(CliError(format!(
                "{} exists: refusing to overwrite a key share",
                out.join(SHARE_FILE).display()
            )));
        }
        let sk = SecretKey::generate(&ctx)?;
        write(&out.join(PARAMS_FILE), &S::params_to_bytes(&ctx)?, false)?;
        write(&out.join(SHARE_FILE), &sk.to_bytes(&ctx)?, true)?;
        let info = serde_json::json!({ "index": index, "parties": parties });
        write(&out.join(PARTY_FILE), info.to_string().as_bytes(), false)?;
        outln!(
            "party {index} of {parties} ({}) in {}: {SHARE_FILE} is SECRET, never send it",
            S::describe(&ctx),
            out.display()
        );
        Ok(ExitCode::SUCCESS)
    }

    fn keygen_share(
        dir: &Path,
        what: Message,
        crs: &Path,
        public_key: Option<&Path>,
        round1: Option<&Path>,
        out: &Path,
    ) -> CliResult<ExitCode> {
        let (ctx, index, parties) = Self::open(dir)?;
        let sk: SecretKey = load(&ctx, &dir.join(SHARE_FILE))?;
        let crs = read_crs(crs)?;
        let pk = || -> CliResult<PublicKey> { load(&ctx, need(public_key, "--public-key")?) };
        let bytes = match what {
            Message::PublicKey => PublicKeyGeneration::new(&ctx, crs, parties)?
                .share(&sk, index)?
                .to_bytes(&ctx)?,
            Message::RelinRound1 => {
                let rkg = RelinKeyGeneration::new(&ctx, crs, &pk()?, parties)?;
                let (ephemeral, share) = rkg.round1(&sk, index)?;
                write(&dir.join(EPHEMERAL_FILE), &ephemeral.to_bytes(&ctx)?, true)?;
                share.to_bytes(&ctx)?
            }
            Message::RelinRound2 => {
                let rkg = RelinKeyGeneration::new(&ctx, crs, &pk()?, parties)?;
                let ephemeral: RelinKeyEphemeral = load(&ctx, &dir.join(EPHEMERAL_FILE))?;
                let h: RelinKeyRound1 = load(&ctx, need(round1, "--round1")?)?;
                let share = rkg.round2(&sk, &ephemeral, &h)?;
                // The ephemeral secret is spent: never use it again.
                let _ = std::fs::remove_file(dir.join(EPHEMERAL_FILE));
                share.to_bytes(&ctx)?
            }
            Message::Galois => {
                GaloisKeyGeneration::new(&ctx, crs, &pk()?, parties, &default_elements::<S>(&ctx))?
                    .share(&sk, index)?
                    .to_bytes(&ctx)?
            }
            Message::Decryption => {
                return Err("decryption shares come from `rnsfhe party decrypt-share`".into())
            }
        };
        write(out, &bytes, false)?;
        Ok(ExitCode::SUCCESS)
    }

    fn decrypt_share(
        dir: &Path,
        public_key: &Path,
        input: &Path,
        smudging_bits: Option<u32>,
        out: &Path,
    ) -> CliResult<ExitCode> {
        let (ctx, index, parties) = Self::open(dir)?;
        let sk: SecretKey = load(&ctx, &dir.join(SHARE_FILE))?;
        let pk: PublicKey = load(&ctx, public_key)?;
        let ct: S::Ct = load(&ctx, input)?;
        let smudging = match smudging_bits {
            Some(b) => Smudging::bits(b)?,
            None => Smudging::default_for(ctx.as_ref(), &ct, parties)?,
        };
        let bits = smudging.width_bits();
        let dec = CollectiveDecryption::new(&ctx, &pk, parties, smudging)?;
        write(out, &dec.share(&sk, index, &ct)?.to_bytes(&ctx)?, false)?;
        outln!("decryption share of party {index} with {bits}-bit smudging noise");
        Ok(ExitCode::SUCCESS)
    }

    fn combine(step: &Step) -> CliResult<ExitCode> {
        let Step::Combine {
            params,
            parties,
            what,
            crs,
            public_key,
            round1,
            ciphertext,
            input,
            out,
            json,
            signed,
        } = step
        else {
            return Err("not a combine step".into());
        };
        let parties = *parties;
        let ctx =
            S::context(S::params_from_bytes(&read(params)?).map_err(|e| file_error(params, e))?)?;
        let crs = || read_crs(need(crs.as_deref(), "--crs")?);
        let pk =
            || -> CliResult<PublicKey> { load(&ctx, need(public_key.as_deref(), "--public-key")?) };
        let out = || need(out.as_deref(), "--out");
        match what {
            Message::PublicKey => {
                let shares: Vec<PublicKeyShare> = load_all(&ctx, input)?;
                let pk = PublicKeyGeneration::new(&ctx, crs()?, parties)?.aggregate(&shares)?;
                write(out()?, &pk.to_bytes(&ctx)?, false)?;
            }
            Message::RelinRound1 => {
                let shares: Vec<RelinKeyShare> = load_all(&ctx, input)?;
                let h = RelinKeyGeneration::new(&ctx, crs()?, &pk()?, parties)?
                    .aggregate_round1(&shares)?;
                write(out()?, &h.to_bytes(&ctx)?, false)?;
            }
            Message::RelinRound2 => {
                let shares: Vec<RelinKeyShare> = load_all(&ctx, input)?;
                let h: RelinKeyRound1 = load(&ctx, need(round1.as_deref(), "--round1")?)?;
                let rk =
                    RelinKeyGeneration::new(&ctx, crs()?, &pk()?, parties)?.finish(&h, &shares)?;
                write(out()?, &rk.to_bytes(&ctx)?, false)?;
            }
            Message::Galois => {
                let shares: Vec<GaloisKeyShare> = load_all(&ctx, input)?;
                let elements = default_elements::<S>(&ctx);
                let gk = GaloisKeyGeneration::new(&ctx, crs()?, &pk()?, parties, &elements)?
                    .aggregate(&shares)?;
                write(out()?, &gk.to_bytes(&ctx)?, false)?;
            }
            Message::Decryption => {
                let shares: Vec<DecryptionShare> = load_all(&ctx, input)?;
                let ct: S::Ct = load(&ctx, need(ciphertext.as_deref(), "--ciphertext")?)?;
                // The smudging width only matters to the shares' makers.
                let dec = CollectiveDecryption::new(&ctx, &pk()?, parties, Smudging::bits(0)?)?;
                let opened = dec.combine(&ct, &shares)?;
                let d = S::decrypt(&ctx, &dec.opening_key()?, &opened, *signed)?;
                let keep = d.zero.iter().rposition(|&z| !z).map_or(1, |i| i + 1);
                let values = &d.values[..keep.min(d.values.len())];
                if *json {
                    outln!("{{\"values\": [{}]}}", values.join(", "));
                } else {
                    for v in values {
                        outln!("{v}");
                    }
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    }

    /// The context, index and number of parties of a party directory.
    fn open(dir: &Path) -> CliResult<(Arc<S::Ctx>, u32, u32)> {
        let ctx = load_context::<S>(dir)?;
        let path = dir.join(PARTY_FILE);
        let info: serde_json::Value = serde_json::from_slice(&read(&path)?)
            .map_err(|e| file_error(&path, format!("not JSON: {e}")))?;
        let field = |k: &str| {
            info.get(k)
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| file_error(&path, format!("no `{k}`")))
        };
        let (index, parties) = (field("index")?, field("parties")?);
        if index >= parties {
            return Err(file_error(&path, "index not below parties"));
        }
        Ok((ctx, index, parties))
    }
}

/// `crs` needs no scheme; it is run before dispatch.
fn unreachable_crs() -> CliResult<ExitCode> {
    Err("internal: `party crs` is not scheme-specific".into())
}

/// `rnsfhe party crs`: a fresh 32-byte seed from the OS.
pub fn write_crs(out: &Path) -> CliResult<ExitCode> {
    let crs = CommonReferenceString::generate()?;
    write(out, crs.seed(), false)?;
    outln!(
        "common reference string {:#018x} written to {}: give it to every party, use it for one key",
        crs.instance_id(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn read_crs(path: &Path) -> CliResult<CommonReferenceString> {
    let bytes = read(path)?;
    let seed: [u8; 32] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| file_error(path, format!("{} bytes, a CRS is 32", bytes.len())))?;
    Ok(CommonReferenceString::from_seed(seed))
}

fn need<'a>(p: Option<&'a Path>, flag: &str) -> CliResult<&'a Path> {
    p.ok_or_else(|| CliError(format!("this step needs {flag}")))
}

fn load_all<C, T: rnsfhe::serialization::FromBytes<C>>(
    ctx: &Arc<C>,
    paths: &[PathBuf],
) -> CliResult<Vec<T>> {
    paths.iter().map(|p| load(ctx, p)).collect()
}

/// The Galois elements of the default rotations (what `rnsfhe keygen`
/// makes): every power-of-two step both ways and the column swap.
fn default_elements<S: Scheme>(ctx: &Arc<S::Ctx>) -> Vec<u64> {
    let core = rnsfhe::rlwe::SchemeContext::rlwe(ctx.as_ref());
    rnsfhe::rlwe::galois_keys::default_elements(core.degree(), core.rotation_generator())
}
