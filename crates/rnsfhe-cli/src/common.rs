//! Helpers shared by the subcommands: output that never panics, errors,
//! argument parsers, formatting and machine information.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::ValueEnum;
use rnsfhe::bfv::Variant;
use rnsfhe::rnsfhe_math::sampling::rng_from_seed;
use rnsfhe::{ChaCha20Rng, SecurityLevel};

/// `println!` that ignores a closed stdout (e.g. `rnsfhe bench | head`)
/// instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that ignores write errors.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub(crate) use errln;
pub(crate) use outln;

/// An error of the tool: one line for the user.
#[derive(Debug)]
pub struct CliError(pub String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keep it on one line whatever the source said.
        let one: Vec<&str> = self.0.lines().map(str::trim).collect();
        f.write_str(&one.join(" "))
    }
}

impl From<rnsfhe::Error> for CliError {
    fn from(e: rnsfhe::Error) -> Self {
        CliError(e.to_string())
    }
}

impl From<String> for CliError {
    fn from(s: String) -> Self {
        CliError(s)
    }
}

impl From<&str> for CliError {
    fn from(s: &str) -> Self {
        CliError(s.to_string())
    }
}

/// Result of a subcommand.
pub type CliResult<T> = Result<T, CliError>;

/// Writes `text` to `path`, naming the file in the error.
pub fn write_file(path: &str, text: &str) -> CliResult<()> {
    std::fs::write(path, text).map_err(|e| CliError(format!("cannot write {path}: {e}")))
}

/// Writes `value` to `path` as pretty-printed JSON.
pub fn write_json(path: &str, value: &impl serde::Serialize) -> CliResult<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError(format!("cannot serialize the results: {e}")))?;
    write_file(path, &text)
}

/// `--variant hps|behz|both`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum VariantChoice {
    /// Halevi-Polyakov-Shoup.
    Hps,
    /// Bajard-Eynard-Hasan-Zucca.
    Behz,
    /// Both, HPS first.
    Both,
    /// HPS "P over Q" (KPZ21 Alg. 2).
    #[value(name = "hpspoverq")]
    HpsPOverQ,
    /// HPS "P over Q", leveled (a modulus switch after every relinearized
    /// product).
    #[value(name = "hpspoverqleveled")]
    HpsPOverQLeveled,
    /// All four: HPS, BEHZ, HPSPOVERQ, HPSPOVERQLEVELED.
    All,
}

impl VariantChoice {
    /// The selected variants.
    pub fn variants(self) -> Vec<Variant> {
        match self {
            VariantChoice::Hps => vec![Variant::Hps],
            VariantChoice::Behz => vec![Variant::Behz],
            VariantChoice::Both => vec![Variant::Hps, Variant::Behz],
            VariantChoice::HpsPOverQ => vec![Variant::HpsPOverQ],
            VariantChoice::HpsPOverQLeveled => vec![Variant::HpsPOverQLeveled],
            VariantChoice::All => vec![
                Variant::Hps,
                Variant::Behz,
                Variant::HpsPOverQ,
                Variant::HpsPOverQLeveled,
            ],
        }
    }

    /// The variants of a comma list of choices, each once, in order.
    pub fn variants_of(choices: &[VariantChoice]) -> Vec<Variant> {
        let mut out: Vec<Variant> = Vec::new();
        for v in choices.iter().flat_map(|c| c.variants()) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }
}

/// `--variant hps|behz` (one variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OneVariant {
    /// Halevi-Polyakov-Shoup.
    Hps,
    /// Bajard-Eynard-Hasan-Zucca.
    Behz,
    /// HPS "P over Q" (KPZ21).
    #[value(name = "hpspoverq")]
    HpsPOverQ,
    /// HPS "P over Q", leveled (a modulus switch after every product).
    #[value(name = "hpspoverqleveled")]
    HpsPOverQLeveled,
}

impl From<OneVariant> for Variant {
    fn from(v: OneVariant) -> Self {
        match v {
            OneVariant::Hps => Variant::Hps,
            OneVariant::Behz => Variant::Behz,
            OneVariant::HpsPOverQ => Variant::HpsPOverQ,
            OneVariant::HpsPOverQLeveled => Variant::HpsPOverQLeveled,
        }
    }
}

/// "HPS" / "BEHZ".
pub fn variant_upper(v: Variant) -> &'static str {
    v.name()
}

/// "hps" / "behz".
pub fn variant_lower(v: Variant) -> &'static str {
    match v {
        Variant::Hps => "hps",
        Variant::Behz => "behz",
        Variant::HpsPOverQ => "hpspoverq",
        Variant::HpsPOverQLeveled => "hpspoverqleveled",
    }
}

/// Parses `128`, `192`, `256` or `none` (also `0`).
pub fn parse_security(s: &str) -> Result<SecurityLevel, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "none" | "0" => Ok(SecurityLevel::None),
        other => other
            .parse::<u32>()
            .ok()
            .and_then(SecurityLevel::from_bits)
            .ok_or_else(|| format!("expected 128, 192, 256 or none, got '{s}'")),
    }
}

/// Parses a parameter set `LOGN,LOGQ` (or `LOGN:LOGQ`).
pub fn parse_set(s: &str) -> Result<(u32, u32), String> {
    let parts: Vec<&str> = s.split([',', ':']).map(str::trim).collect();
    let err = || format!("expected LOGN,LOGQ (e.g. 13,120), got '{s}'");
    if parts.len() != 2 {
        return Err(err());
    }
    let log_n: u32 = parts[0].parse().map_err(|_| err())?;
    let log_q: u32 = parts[1].parse().map_err(|_| err())?;
    if !(10..=17).contains(&log_n) {
        return Err(format!("log n = {log_n} must be in 10..=17"));
    }
    if log_q == 0 {
        return Err("log q must be positive".into());
    }
    Ok((log_n, log_q))
}

/// A reproducible rng from a small seed.
pub fn rng(seed: u64) -> ChaCha20Rng {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..16].copy_from_slice(b"rnsfhe-c");
    rng_from_seed(s)
}

/// A fresh rng seeded from the clock and the process id (for the demo and
/// the benchmark, where reproducibility does not matter).
pub fn rng_from_clock() -> ChaCha20Rng {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    rng(nanos ^ (u64::from(std::process::id()) << 32))
}

/// Milliseconds with 3 significant digits, like the peers harness.
pub fn fmt_ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else if x >= 0.1 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

/// `[60, 60, 60, 30] → "3x60+30"`.
pub fn compress_bits(bits: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bits.len() {
        let mut j = i;
        while j < bits.len() && bits[j] == bits[i] {
            j += 1;
        }
        if j - i > 1 {
            out.push(format!("{}x{}", j - i, bits[i]));
        } else {
            out.push(bits[i].to_string());
        }
        i = j;
    }
    out.join("+")
}

/// Bit length of each modulus.
pub fn moduli_bits(moduli: &[u64]) -> Vec<u32> {
    moduli.iter().map(|&q| 64 - q.leading_zeros()).collect()
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SS+00:00`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (H. Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+00:00",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// The 1-, 5- and 15-minute load averages (Linux), if readable.
pub fn loadavg() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = s.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// Machine description for the JSON `meta.machine` (keys as in the peers
/// harness).
#[derive(Debug, serde::Serialize)]
pub struct MachineInfo {
    /// Host name.
    pub hostname: Option<String>,
    /// OS and architecture.
    pub platform: String,
    /// Logical CPUs.
    pub nproc: Option<usize>,
    /// CPUs this process may use.
    pub nproc_available: Option<usize>,
    /// `model name` from `/proc/cpuinfo`.
    pub cpu_model: Option<String>,
    /// `cpu MHz` from `/proc/cpuinfo`.
    pub cpu_mhz: Option<f64>,
    /// `MemTotal` from `/proc/meminfo`.
    pub mem_total_kb: Option<u64>,
}

/// Collects [`MachineInfo`] (Linux files; fields are `None` elsewhere).
pub fn machine_info() -> MachineInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_string())
        })
    };
    let nproc = std::thread::available_parallelism().ok().map(|n| n.get());
    let cpus = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let mem_total_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|v| v.parse().ok());
    MachineInfo {
        hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_string()),
        platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        nproc: if cpus > 0 { Some(cpus) } else { nproc },
        nproc_available: nproc,
        cpu_model: field("model name"),
        cpu_mhz: field("cpu MHz").and_then(|v| v.parse().ok()),
        mem_total_kb,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers() {
        assert_eq!(parse_set("13,120"), Ok((13, 120)));
        assert_eq!(parse_set("16:1770"), Ok((16, 1770)));
        assert!(parse_set("9,60").is_err());
        assert!(parse_set("13").is_err());
        assert!(parse_set("13,x").is_err());
        assert_eq!(parse_security("none"), Ok(SecurityLevel::None));
        assert_eq!(parse_security("192"), Ok(SecurityLevel::Tc192));
        assert!(parse_security("100").is_err());
        assert_eq!(compress_bits(&[60, 60, 60, 30]), "3x60+30");
        assert_eq!(compress_bits(&[59]), "59");
        assert_eq!(fmt_ms(0.01234), "0.0123");
        assert_eq!(fmt_ms(123.4), "123");
    }

    #[test]
    fn utc_format() {
        let s = utc_now();
        assert_eq!(s.len(), 25, "{s}");
        assert!(s.starts_with("20") && s.ends_with("+00:00"));
    }
}

/// `--device`: where `bench` and `demo` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceChoice {
    /// The CPU (the default).
    Cpu,
    /// An NVIDIA GPU through rnsfhe-cuda (needs the `cuda` feature, the
    /// NVIDIA driver and NVRTC).
    Cuda,
}

/// A secret key with its public, relinearization and Galois keys, drawn
/// from one generator in that order (the order every CLI run used, so
/// seeded runs keep their keys).
pub struct KeySet {
    /// The secret key.
    pub sk: rnsfhe::rlwe::SecretKey,
    /// Its public key.
    pub pk: rnsfhe::rlwe::PublicKey,
    /// Its relinearization key.
    pub rk: rnsfhe::rlwe::RelinKey,
    /// Its Galois keys.
    pub gk: rnsfhe::rlwe::GaloisKeys,
}

impl KeySet {
    /// Keys of `ctx` with Galois keys for the rotation `steps`, or for the
    /// default rotations (powers of two and the column swap) when `None`.
    pub fn generate<C: rnsfhe::rlwe::SchemeContext + ?Sized>(
        ctx: &C,
        steps: Option<&[i64]>,
        rng: &mut ChaCha20Rng,
    ) -> rnsfhe::Result<Self> {
        use rnsfhe::rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
        let sk = SecretKey::generate_with_rng(ctx, rng)?;
        let pk = PublicKey::generate_with_rng(ctx, &sk, rng)?;
        let rk = RelinKey::generate_with_rng(ctx, &sk, rng)?;
        let gk = match steps {
            Some(steps) => GaloisKeys::generate_for_steps_with_rng(ctx, &sk, steps, rng)?,
            None => GaloisKeys::generate_default_with_rng(ctx, &sk, rng)?,
        };
        Ok(KeySet { sk, pk, rk, gk })
    }
}
