//! The records and the table of the peers harness's layout
//! (`he-peers-bench/1`, read by `bench_peers.py --merge`), shared by the
//! integer schemes (BFV, BGV): the columns every record starts with, the
//! correctness checks, and the per-set table with one median and one
//! minimum column per (variant, thread count). CKKS reuses [`OpRecord`]
//! with its own columns.

use serde::Serialize;

use crate::bench_args::Timing;
use crate::common::{fmt_ms, outln};

/// The leading fields of a `results` and a `variants` record (field
/// order as in the harness).
#[derive(Clone, Debug, Serialize)]
pub struct Columns {
    /// Always `rnsfhe`.
    pub library: &'static str,
    /// `bgv` for BGV; absent for BFV (the harness's default scheme).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<&'static str>,
    /// `HPS`, `BEHZ`, …, or `HYBRID` (BGV).
    pub variant: &'static str,
    /// `log2 n`.
    pub logn: u32,
    /// The ring degree.
    pub n: usize,
    /// The set's target `log2 q`.
    pub logq_target: u32,
    /// Threads of the run.
    pub threads: usize,
    /// `packed` or `coef`.
    pub encoding: &'static str,
    /// `t`.
    pub plain_modulus: u64,
    /// Bits of `q`.
    pub logq: u32,
    /// Moduli of `q`.
    pub limbs: usize,
    /// Bits of every modulus of the set (special primes included where
    /// the record counts them).
    pub logq_total: u32,
    /// Number of those moduli.
    pub limbs_total: usize,
}

/// One `results` record: the set's columns, the op and its timing.
#[derive(Clone, Debug, Serialize)]
pub struct OpRecord<I> {
    /// The set's columns (flattened).
    #[serde(flatten)]
    pub info: I,
    /// The op's name.
    pub op: &'static str,
    /// Its statistics (flattened).
    #[serde(flatten)]
    pub timing: Timing,
}

impl<I: Clone> OpRecord<I> {
    /// One record per timed op, all with the columns `info`.
    pub fn all(info: &I, timed: Vec<(&'static str, Timing)>) -> Vec<Self> {
        timed
            .into_iter()
            .map(|(op, timing)| OpRecord {
                info: info.clone(),
                op,
                timing,
            })
            .collect()
    }
}

/// One `variants` record: the columns, then what describes the set.
#[derive(Clone, Debug, Serialize)]
pub struct VariantRecord<P> {
    /// The set's columns (flattened).
    #[serde(flatten)]
    pub cols: Columns,
    /// Bits of each modulus of `q`.
    pub moduli_bits: Vec<u32>,
    /// The parameters; the harness prints the first three entries.
    pub params: P,
    /// The correctness checks.
    pub checks: Checks,
    /// Context setup time (s).
    pub setup_s: f64,
    /// The crate version.
    pub version: &'static str,
}

/// Correctness checks against plain arithmetic modulo t (those not run
/// are left out).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Checks {
    /// Decrypt(Encrypt(a)) = a.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enc_dec: Option<bool>,
    /// a + b.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add: Option<bool>,
    /// a · b, relinearized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mult_relin: Option<bool>,
    /// Relinearizing the 3-part product.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relin: Option<bool>,
    /// A rotation by one slot (BGV).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotate: Option<bool>,
    /// A modulus switch of the product (BGV).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mod_switch: Option<bool>,
    /// The noise budget of a fresh ciphertext (bits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fresh_noise_budget: Option<u32>,
}

impl Checks {
    fn named(&self) -> [(&'static str, Option<bool>); 6] {
        [
            ("enc/dec", self.enc_dec),
            ("add", self.add),
            ("mult_relin", self.mult_relin),
            ("relin", self.relin),
            ("rotate", self.rotate),
            ("mod_switch", self.mod_switch),
        ]
    }

    /// Whether every check that ran passed.
    pub fn all_ok(&self) -> bool {
        self.named().iter().all(|(_, c)| c.unwrap_or(true))
    }

    /// `enc/dec ok, add ok, …, fresh noise budget N bits`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = self
            .named()
            .into_iter()
            .filter_map(|(name, c)| {
                c.map(|ok| format!("{name} {}", if ok { "ok" } else { "WRONG" }))
            })
            .collect();
        if let Some(b) = self.fresh_noise_budget {
            parts.push(format!("fresh noise budget {b} bits"));
        }
        parts.join(", ")
    }
}

/// The results of one set: per (variant, threads) its record and its ops.
pub type SetResult<P> = Vec<(VariantRecord<P>, Vec<OpRecord<Columns>>)>;

/// The table body of one set: a median and a minimum column per (variant,
/// threads), a row per op, then a blank line.
pub fn print_op_table<P>(set: &SetResult<P>, ops: &[&str]) {
    let mut header = String::from("| op (ms) |");
    let mut rule = String::from("|---|");
    for (v, _) in set {
        let col = format!("{} {}T", v.cols.variant, v.cols.threads);
        header.push_str(&format!(" {col} median | {col} min |"));
        rule.push_str("---|---|");
    }
    outln!("{header}");
    outln!("{rule}");
    for &op in ops {
        let mut line = format!("| {op} |");
        for (_, recs) in set {
            match recs.iter().find(|r| r.op == op) {
                Some(r) => line.push_str(&format!(
                    " {} | {} |",
                    fmt_ms(r.timing.median_ms),
                    fmt_ms(r.timing.min_ms)
                )),
                None => line.push_str(" - | - |"),
            }
        }
        outln!("{line}");
    }
    outln!();
}

/// One `checks VARIANT nT: …` line per column whose checks ran, then a
/// blank line.
pub fn print_checks<P>(set: &SetResult<P>) {
    for (v, _) in set {
        if v.checks.enc_dec.is_some() {
            outln!(
                "checks {} {}T: {}",
                v.cols.variant,
                v.cols.threads,
                v.checks.summary()
            );
        }
    }
    outln!();
}

/// Files the records of a set into the report, variant records first.
pub fn file_set<P>(
    set: SetResult<P>,
    report: &mut super::driver::Report<OpRecord<Columns>, VariantRecord<P>>,
) {
    for (v, recs) in set {
        report.all_ok &= v.checks.all_ok();
        report.variants.push(v);
        report.results.extend(recs);
    }
}
