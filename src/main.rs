//! The `glue-recon` command line. Exit codes: 0 PASS or WARN, 1 FAIL, 2 could not run.

mod cli;
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
mod cpu_check;

/// Parquet decoding allocates and frees large buffers for every batch; mimalloc keeps
/// them for reuse where the system allocator hands them back to the kernel and pays
/// page faults and zeroing to get them again.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` of mimalloc.h (the same in mimalloc 2 and 3), which
/// libmimalloc-sys does not name.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[allow(unsafe_code)] // mimalloc and prctl settings, each with its SAFETY comment.
fn main() -> std::process::ExitCode {
    // First of all: a CPU without the instructions this build uses gets a message and
    // exit 2, not an illegal instruction later.
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    cpu_check::refuse_unless_x86_64_v3();
    // Never hand freed memory back to the kernel: a run frees and allocates the same
    // amounts partition after partition, and re-faulting (zeroing) the pages cost
    // about 8% of the time on the benchmark. Peak memory is unchanged.
    // SAFETY: sets an integer option, which mimalloc reads atomically at any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    // No transparent huge pages (mimalloc asks for them): in a virtual machine the
    // kernel zeroes each 2 MiB page on first touch at a cost that varies with the
    // host; on the benchmark it took 2.5-3.5 s of system time against 0.5 s with
    // 4 KiB pages, for the same peak memory. The join works on cache-sized buckets,
    // so larger pages buy little. A failure (an old kernel) leaves the default.
    // SAFETY: prctl(PR_SET_THP_DISABLE) takes integers and sets a flag of this process.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0)
    };
    cli::main()
}
