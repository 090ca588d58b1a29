//! Compiles every kernel module with NVRTC for one architecture (no GPU
//! needed) and writes the CUBINs to a folder, with each module's compile
//! time, for reading the machine code offline:
//!
//! ```sh
//! RNSFHE_NVRTC_PATH=…/nvidia/cuda_nvrtc/lib \
//!   cargo run --release -p rnsfhe-cuda --example dump_cubin -- /tmp/cubin sm_90
//! nvdisasm -c /tmp/cubin/ntt.cu.cubin | less   # nvidia-cuda-nvdisasm wheel
//! ```

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "cubin".into());
    let arch = args.next().unwrap_or_else(|| "sm_90".into());
    std::fs::create_dir_all(&dir)?;
    for m in &rnsfhe_cuda::kernels::MODULES {
        let t = Instant::now();
        let cubin = rnsfhe_cuda::kernels::compile(m, &arch)?;
        let path = format!("{dir}/{}.cubin", m.file);
        std::fs::write(&path, &cubin)?;
        println!("{path}: {} bytes, {:.2?}", cubin.len(), t.elapsed());
    }
    Ok(())
}
