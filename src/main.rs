//! The `glue-recon` command line. Exit codes: 0 PASS or WARN, 1 FAIL, 2 could not run.

mod cli;

/// Parquet decoding allocates and frees large buffers for every batch; mimalloc keeps
/// them for reuse where the system allocator hands them back to the kernel and pays
/// page faults and zeroing to get them again.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
