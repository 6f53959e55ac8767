//! What a local run prints: verdict first, DRIFT, a query of the offending keys (run
//! here with DuckDB), the dashboard link; each said once.

use super::{bin, run_cli, sample, two_pair_config};

#[test]
fn the_terminal_summary_is_actionable_and_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    sample(&dir.join("a"), 31, 0.0);
    sample(&dir.join("b"), 32, 0.0);
    let config = two_pair_config(dir);
    run_cli(&config, &out);
    sample(&dir.join("a"), 33, 0.002);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = bin()
        .args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    let alpha = &text[text.find("FAIL alpha").expect("alpha's verdict first")..];
    assert!(
        alpha.contains("  - DRIFT: clean for the last 1 run,"),
        "{text}"
    );
    // Athena reads only S3: a local run's offending keys come with a query of its
    // diffs.parquet that DuckDB runs as printed.
    assert!(!text.contains("CREATE EXTERNAL TABLE"), "{text}");
    let query = alpha
        .lines()
        .skip_while(|l| l.trim() != "offending keys (DuckDB):")
        .nth(1)
        .unwrap_or_else(|| panic!("no DuckDB query in {text}"))
        .trim();
    assert!(query.contains("diffs.parquet')"), "{query}");
    let rows = duckdb_rows(query);
    assert!(!rows.is_empty(), "{query}");
    assert!(
        rows.iter()
            .all(|r| ["MISSING_IN_TARGET", "EXTRA_IN_TARGET", "MISMATCH"].contains(&r.as_str())),
        "{rows:?}"
    );
    assert!(alpha.contains("mismatched values (first "), "{text}");
    assert!(alpha.contains("MISSING_IN_TARGET e.g. id="), "{text}");
    // Every count, the run line and the dashboard once; no alert block when no
    // topic is set (nothing was published).
    let once = |needle: &str| text.matches(needle).count();
    assert_eq!(once("  matched "), 2, "{text}");
    assert_eq!(
        once("run: FAIL, 2 pairs: alpha FAIL, beta PASS"),
        1,
        "{text}"
    );
    assert_eq!(
        once(&format!(
            "dashboard: {}",
            out.join("dashboard/index.html").display()
        )),
        1,
        "{text}"
    );
    assert!(!text.contains("alert:"), "{text}");
    // The Athena manifest points at the run's diffs.parquet.
    let manifest = walk_find(&out.join("alpha"), "diffs.txt");
    let target = std::fs::read_to_string(&manifest).unwrap();
    assert!(target.trim_end().ends_with("diffs.parquet"));
    assert!(std::path::Path::new(target.trim_end()).is_file());
}

/// The first column (diff_type) of every row `query` returns, run by DuckDB from the
/// repository's venv (`make setup`).
fn duckdb_rows(query: &str) -> Vec<String> {
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let o = std::process::Command::new(&python)
        .args([
            "-c",
            "import duckdb, sys\nfor r in duckdb.sql(sys.argv[1]).fetchall(): print(r[0])",
            query,
        ])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}; run `make setup`", python.display()));
    assert!(
        o.status.success(),
        "DuckDB refused {query}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn walk_find(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == name) {
                found.push(p);
            }
        }
    }
    found.sort();
    found
        .pop()
        .unwrap_or_else(|| panic!("no {name} under {}", dir.display()))
}
