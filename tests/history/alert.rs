//! The alert text printed by a local run: verdict first, DRIFT, a query of the
//! offending keys (run here with DuckDB) and the dashboard link.

use super::{bin, run_cli, sample, two_pair_config};

#[test]
fn the_terminal_alert_is_actionable() {
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
    let alert = &text[text.find("\nalert: ").expect("an alert") + 1..];
    assert!(
        alert.starts_with("alert: glue-recon FAIL DRIFT:"),
        "{alert}"
    );
    assert!(
        alert.contains("DRIFT: clean for the last 1 run(s)"),
        "{alert}"
    );
    // Athena reads only S3: a local run's offending keys come with a query of its
    // diffs.parquet that DuckDB runs as printed.
    assert!(!alert.contains("CREATE EXTERNAL TABLE"), "{alert}");
    let query = alert
        .lines()
        .skip_while(|l| l.trim() != "offending keys (DuckDB):")
        .nth(1)
        .unwrap_or_else(|| panic!("no DuckDB query in {alert}"))
        .trim();
    assert!(query.contains("diffs.parquet')"), "{query}");
    let rows = duckdb_rows(query);
    assert!(!rows.is_empty(), "{query}");
    assert!(
        rows.iter()
            .all(|r| ["MISSING_IN_TARGET", "EXTRA_IN_TARGET", "MISMATCH"].contains(&r.as_str())),
        "{rows:?}"
    );
    assert!(alert.contains("sample keys:"), "{alert}");
    assert!(alert.contains(&format!(
        "dashboard: {}",
        out.join("dashboard/index.html").display()
    )));
    // beta stayed clean: no drift, a PASS is not in the alert's failing pairs.
    assert!(!alert.contains("DRIFT: beta"), "{alert}");
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
