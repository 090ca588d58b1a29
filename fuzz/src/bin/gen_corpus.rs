//! Writes the seed corpus `corpus/<target>/<name>` (run from `fuzz/`:
//! `cargo run --release --bin gen_corpus`).

fn main() -> std::io::Result<()> {
    for (target, name, bytes) in rnsfhe_fuzz::seed_objects()
        .into_iter()
        .chain(rnsfhe_fuzz::ckks_seed_objects())
        .chain(rnsfhe_fuzz::ckks_bootstrapping_seed_objects())
        .chain(rnsfhe_fuzz::bgv_seed_objects())
        .chain(rnsfhe_fuzz::multiparty_seed_objects())
    {
        let dir = std::path::Path::new("corpus").join(target);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}
