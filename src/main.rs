//! The `glue-recon` command line. Exit codes: 0 PASS or WARN, 1 FAIL, 2 could not run.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
