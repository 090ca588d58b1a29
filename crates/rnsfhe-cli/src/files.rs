//! `rnsfhe keygen | encrypt | eval | decrypt`: the client/server file
//! workflow of 004 Fig. 1 for BFV, CKKS and BGV. `keygen --scheme` picks
//! the scheme (a parameter file brings its own); the other commands read
//! it from the key directory's `params.bin`. The workflow is written once
//! ([`workflow`]), generic over the [`workflow::Scheme`] each scheme's
//! small file implements.

use std::path::Path;
use std::process::ExitCode;

use rnsfhe::serialization::{inspect, ObjectKind};

pub use args::{DecryptArgs, EncryptArgs, EvalArgs, FileScheme, KeygenArgs};
pub use party::PartyArgs;
use workflow::{file_error, read, PARAMS_FILE};

use crate::common::{CliError, CliResult};

mod args;
mod bfv;
mod bgv;
mod ckks;
mod party;
mod workflow;

/// The scheme of a parameter file, from its header.
fn scheme_of(path: &Path) -> CliResult<FileScheme> {
    let header = inspect(&read(path)?).map_err(|e| file_error(path, e))?;
    match header.kind {
        ObjectKind::Parameters => Ok(FileScheme::Bfv),
        ObjectKind::CkksParameters => Ok(FileScheme::Ckks),
        ObjectKind::BgvParameters => Ok(FileScheme::Bgv),
        other => Err(file_error(
            path,
            format!("the file holds a {other}, not parameters"),
        )),
    }
}

/// Runs `$f::<Scheme>(args)` for the scheme `$s`.
macro_rules! dispatch {
    ($s:expr, $f:ident, $args:expr) => {
        match $s {
            FileScheme::Bfv => workflow::Workflow::<bfv::Bfv>::$f($args),
            FileScheme::Ckks => workflow::Workflow::<ckks::Ckks>::$f($args),
            FileScheme::Bgv => workflow::Workflow::<bgv::Bgv>::$f($args),
        }
    };
}

/// `rnsfhe keygen`.
pub fn keygen(args: &KeygenArgs) -> CliResult<ExitCode> {
    let path = Path::new(&args.params);
    let scheme = if path.is_file() {
        let found = scheme_of(path)?;
        if let Some(s) = args.scheme.filter(|&s| s != found) {
            return Err(CliError(format!(
                "{}: {found:?} parameters, not {s:?} (--scheme)",
                path.display()
            )));
        }
        found
    } else {
        args.scheme.unwrap_or(FileScheme::Bfv)
    };
    dispatch!(scheme, keygen, args)
}

/// `rnsfhe encrypt`.
pub fn encrypt(args: &EncryptArgs) -> CliResult<ExitCode> {
    dispatch!(scheme_of(&args.keys.join(PARAMS_FILE))?, encrypt, args)
}

/// `rnsfhe eval`.
pub fn eval(args: &EvalArgs) -> CliResult<ExitCode> {
    dispatch!(scheme_of(&args.keys.join(PARAMS_FILE))?, eval, args)
}

/// `rnsfhe decrypt`.
pub fn decrypt(args: &DecryptArgs) -> CliResult<ExitCode> {
    dispatch!(scheme_of(&args.keys.join(PARAMS_FILE))?, decrypt, args)
}

/// `rnsfhe party`: the multiparty protocols over files.
pub fn party(args: &PartyArgs) -> CliResult<ExitCode> {
    use party::{Party, Step};
    let params = match &args.step {
        Step::Crs { out } => return party::write_crs(out),
        Step::Init { params, .. } | Step::Combine { params, .. } => params.clone(),
        Step::KeygenShare { dir, .. } | Step::DecryptShare { dir, .. } => dir.join(PARAMS_FILE),
    };
    match scheme_of(&params)? {
        FileScheme::Bfv => Party::<bfv::Bfv>::run(&args.step),
        FileScheme::Ckks => Party::<ckks::Ckks>::run(&args.step),
        FileScheme::Bgv => Party::<bgv::Bgv>::run(&args.step),
    }
}
