//! The `glue-recon` binary: exit codes, the summary, `--json`, `diff`, `sample-data`.

use std::path::Path;

use arrow::array::*;

use super::fixtures::*;
use glue_recon::sample::{SampleSpec, generate};

/// A lab whose `v` differs on `changed` of 100 keys, with a WARN band for
/// mismatches up to 2 and FAIL beyond.
fn lab_with_changes(changed: usize) -> (Lab, String) {
    let n = 100;
    let v = |c: usize| {
        arr(Int32Array::from_iter_values(
            (0..n as i32).map(|i| if (i as usize) < c { -1 } else { i }),
        ))
    };
    let lab = Lab::with(
        &batch(vec![("id", ids(n)), ("v", v(0))]),
        &batch(vec![("id", ids(n)), ("v", v(changed))]),
    );
    let config = lab.write_config(
        &["id"],
        "[pair.thresholds.warn]\nmismatch = 0\n[pair.thresholds.fail]\nmismatch = 2\n",
    );
    (lab, config.to_string_lossy().into_owned())
}

#[test]
fn pass_warn_and_fail_exit_0_0_and_1() {
    for (changed, code, status) in [(0, 0, "PASS"), (2, 0, "WARN"), (3, 1, "FAIL")] {
        let (lab, config) = lab_with_changes(changed);
        let out = lab
            .cli(&["run", "--config", &config, "--out", "out"])
            .expect_code(code);
        assert!(out.stdout.starts_with(&format!("{status} t")), "{out:#?}");
        let counted = out
            .stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("MISMATCH"))
            .map(str::trim);
        // Zero counts are left out; a count is printed with its kind.
        let expected = (changed > 0).then(|| changed.to_string());
        assert_eq!(counted, expected.as_deref(), "{out:#?}");
        let html = run_dir(&lab.path("out"), "t").join("report.html");
        let html = html
            .strip_prefix(lab.root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            out.stdout.contains(&format!("report: {html}")),
            "the summary names the report: {out:#?}"
        );
        let json = lab
            .cli(&["run", "--config", &config, "--out", "json-out", "--json"])
            .expect_code(code)
            .json();
        assert_eq!(json["status"], status);
        assert_eq!(json["totals"]["mismatch"], changed);
    }
}

#[test]
fn json_output_is_only_the_report() {
    let (lab, config) = lab_with_changes(1);
    let out = lab
        .cli(&["run", "--config", &config, "--out", "out", "--json"])
        .expect_code(0);
    let json = out.json();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["pair"], "t");
    // The report on stdout is the report written to the folder.
    let written: serde_json::Value = serde_json::from_slice(
        &std::fs::read(run_dir(&lab.path("out"), "t").join("report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["run_id"], written["run_id"]);
    assert_eq!(json["totals"], written["totals"]);
}

#[test]
fn quiet_prints_nothing() {
    let (lab, config) = lab_with_changes(3);
    let out = lab
        .cli(&["run", "--config", &config, "--out", "out", "--quiet"])
        .expect_code(1);
    assert_eq!(out.stdout, "");
}

#[test]
fn several_pairs_print_a_json_array_and_the_worst_status_decides() {
    let (lab, _) = lab_with_changes(3);
    let text = format!(
        "{}{}",
        lab.config_text(&["id"], ""),
        lab.config_text(&["id"], "exclude = [\"v\"]")
            .replace("name = \"t\"", "name = \"u\"")
    );
    std::fs::write(lab.path("two.toml"), text).unwrap();
    let both = lab
        .cli(&["run", "--config", "two.toml", "--out", "out", "--json"])
        .expect_code(1)
        .json();
    let statuses: Vec<(&str, &str)> = both
        .as_array()
        .expect("an array")
        .iter()
        .map(|r| (r["pair"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, vec![("t", "FAIL"), ("u", "PASS")]);
    let one = lab
        .cli(&[
            "run", "--config", "two.toml", "--pair", "u", "--out", "out", "--json",
        ])
        .expect_code(0)
        .json();
    assert_eq!(one["pair"], "u");
}

#[test]
fn run_restricted_to_a_partition() {
    let lab = Lab::new();
    for (dt, n) in [("1", 2), ("2", 3)] {
        lab.write(
            &format!("source/dt={dt}/p.parquet"),
            &batch(vec![("id", ids(n))]),
        );
        lab.write(
            &format!("target/dt={dt}/p.parquet"),
            &batch(vec![("id", ids(2))]),
        );
    }
    let config = lab.write_config(&["id"], "");
    let config = config.to_str().unwrap();
    let only = |dt: &str, code| {
        lab.cli(&[
            "run",
            "--config",
            config,
            "--partition",
            dt,
            "--out",
            "out",
            "--json",
        ])
        .expect_code(code)
        .json()
    };
    assert_eq!(only("dt=1", 0)["partitions"].as_array().unwrap().len(), 1);
    assert_eq!(only("dt=2", 1)["totals"]["missing_in_target"], 1);
}

#[test]
fn diff_subcommand_reconciles_two_folders() {
    let source = batch(vec![
        ("a", arr(StringArray::from(vec!["x", "x", "y"]))),
        ("b", arr(Int32Array::from(vec![1, 2, 1]))),
        ("v", arr(StringArray::from(vec!["p", "q", "r"]))),
        ("load_ts", arr(Int64Array::from(vec![1, 2, 3]))),
    ]);
    let target = batch(vec![
        ("a", arr(StringArray::from(vec!["x", "x", "y"]))),
        ("b", arr(Int64Array::from(vec![1, 2, 1]))),
        ("v", arr(StringArray::from(vec!["p", "Q", "r"]))),
        ("load_ts", arr(Int64Array::from(vec![7, 8, 9]))),
    ]);
    let lab = Lab::with(&source, &target);
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "diff", "source", "target", "--key", "a", "--key", "b", "--out", "out",
        ];
        a.extend_from_slice(extra);
        a
    };
    let json = lab
        .cli(&args(&["--exclude", "load_ts", "--json"]))
        .expect_code(1)
        .json();
    assert_eq!(json["key"], serde_json::json!(["a", "b"]));
    assert_eq!(json["totals"]["matched"], 2);
    assert_eq!(
        json["samples"]["MISMATCH"][0],
        serde_json::json!({"partition": "*", "key": {"a": "x", "b": "2"},
                           "diffs": [{"column": "v", "source": "q", "target": "Q"}]})
    );
    // Without --exclude, load_ts differs on every key.
    let all = lab.cli(&args(&["--json"])).expect_code(1).json();
    assert_eq!(all["totals"]["mismatch"], 3);
    // The summary form names the report under <out>/<name>/<run_id>/, the name from
    // the two locations unless --name gives one.
    let summary = lab.cli(&args(&[])).expect_code(1);
    assert!(summary.stdout.contains("report.html"), "{summary:#?}");
    assert_eq!(
        json["pair"], all["pair"],
        "the same tables, the same history"
    );
    let name = json["pair"].as_str().unwrap();
    assert!(name.starts_with("diff-") && name.len() == 13, "{name}");
    assert!(lab.path("out").join(name).is_dir());
    let named = lab
        .cli(&args(&["--name", "orders", "--json"]))
        .expect_code(1);
    assert_eq!(named.json()["pair"], "orders");
    assert!(lab.path("out/orders").is_dir());
}

/// Runs of other tables into the same report folder do not share a history: the
/// second pair's first run has no baseline, so no drift against the first pair.
#[test]
fn diffs_of_other_tables_get_other_names() {
    let lab = Lab::new();
    lab.write("source/p.parquet", &batch(vec![("id", ids(4))]));
    lab.write("target/p.parquet", &batch(vec![("id", ids(4))]));
    lab.write("small/p.parquet", &batch(vec![("id", ids(1))]));
    let run = |s: &str, t: &str| {
        lab.cli(&["diff", s, t, "--key", "id", "--out", "out", "--json"])
            .expect_code(0)
            .json()
    };
    let first = run("source", "target");
    let other = run("small", "small");
    assert_ne!(first["pair"], other["pair"]);
    assert_eq!(other["drift"]["baseline_runs"], 0, "{other:#}");
    assert_eq!(other["drift"]["detected"], false, "{other:#}");
    assert_eq!(run("source", "target")["drift"]["baseline_runs"], 1);
}

/// A diff of the same tables by another key is another history: its findings (here a
/// duplicated key on each side) are not measured against the runs by the first key.
#[test]
fn diffs_by_another_key_get_other_names() {
    let lab = Lab::new();
    let rows = || {
        batch(vec![
            ("id", ids(4)),
            ("grp", arr(Int64Array::from(vec![1, 1, 2, 3]))),
        ])
    };
    lab.write("source/p.parquet", &rows());
    lab.write("target/p.parquet", &rows());
    let run = |key: &str, code: i32| {
        lab.cli(&[
            "diff", "source", "target", "--key", key, "--out", "out", "--json",
        ])
        .expect_code(code)
        .json()
    };
    let by_id = run("id", 0);
    let by_group = run("grp", 1);
    assert_ne!(by_id["pair"], by_group["pair"]);
    assert_eq!(by_group["drift"]["baseline_runs"], 0, "{by_group:#}");
    // The key's case is not another key.
    assert_eq!(run("ID", 0)["pair"], by_id["pair"]);
}

/// `diff` takes the options of a config's pair: rename, tolerances, string rules,
/// and a strict schema.
#[test]
fn diff_options_are_the_pair_options() {
    let source = batch(vec![
        ("id", ids(3)),
        ("cust", arr(StringArray::from(vec!["a", "b", "c"]))),
        ("amount", arr(Float64Array::from(vec![1.0, 2.0, 3.0]))),
        ("name", arr(StringArray::from(vec![" Ann", "", "Cy"]))),
    ]);
    let target = batch(vec![
        ("id", ids(3)),
        ("customer", arr(StringArray::from(vec!["a", "b", "c"]))),
        ("amount", arr(Float64Array::from(vec![1.004, 2.0, 3.5]))),
        (
            "name",
            arr(StringArray::from(vec![Some("ann"), None, Some("CY")])),
        ),
    ]);
    let lab = Lab::with(&source, &target);
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", "source", "target", "--key", "id", "--out", "out"];
        args.extend_from_slice(extra);
        args.push("--json");
        lab.cli(&args)
    };
    let strict = diff(&["--require-same-schema"]).expect_code(2);
    assert!(strict.stderr.contains("require_same_schema"), "{strict:#?}");
    let plain = diff(&[]).expect_code(1).json();
    assert_eq!(
        plain["schema"]["only_in_source"],
        serde_json::json!(["cust"])
    );
    assert_eq!(plain["totals"]["mismatch"], 3);
    let opts = [
        "--rename",
        "cust=customer",
        "--abs-tolerance",
        "amount=0.01",
        "--trim",
        "name",
        "--ignore-case",
        "name",
        "--empty-as-null",
        "name",
    ];
    let json = diff(&opts).expect_code(1).json();
    assert_eq!(json["schema"]["only_in_source"], serde_json::json!([]));
    assert_eq!(json["totals"]["mismatch"], 1, "{json:#}");
    assert_eq!(
        json["samples"]["MISMATCH"][0]["diffs"],
        serde_json::json!([{"column": "amount", "source": "3.0", "target": "3.5"}])
    );
    let bad = diff(&["--abs-tolerance", "amount=lots"]).expect_code(2);
    assert!(bad.stderr.contains("`lots`"), "{bad:#?}");
}

#[test]
fn sample_data_planted_counts_exclude_a_changed_row_that_was_duplicated() {
    // Regression: the generator duplicated target row 3 even when it was a planted
    // MISMATCH (or the NULL-vs-'' row), and still counted the mismatch, although a
    // duplicated key is not value-compared. With this seed it did (53 planted, 52 real).
    let lab = Lab::new();
    let planted = generate(&SampleSpec {
        out: lab.path("demo"),
        rows: 6000,
        partitions: 4,
        seed: 7,
        changes: 0.01,
        edge_cases: true,
    })
    .unwrap();
    assert!(
        planted.mismatch > 0 && planted.extra_in_target > 0,
        "{planted:?}"
    );
    let config = lab.path("demo/recon.toml");
    let json = lab.run_json(&config, 1);
    let t = &json["totals"];
    assert_eq!(t["source_rows"], planted.source_rows);
    assert_eq!(t["target_rows"], planted.target_rows);
    assert_eq!(t["missing_in_target"], planted.missing_in_target);
    assert_eq!(t["extra_in_target"], planted.extra_in_target);
    assert_eq!(t["mismatch"], planted.mismatch);
    assert_eq!(t["duplicate_key_target"], planted.duplicate_key_target);
    assert_eq!(t["null_key_target"], planted.null_key_target);
    assert_eq!(t["duplicate_key_source"], 0);
    let presence: Vec<&str> = json["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["presence"].as_str().unwrap())
        .collect();
    assert_eq!(presence, vec!["both", "both", "both", "source_only"]);
}

#[test]
fn sample_data_subcommand_clean_tables_pass() {
    let lab = Lab::new();
    lab.cli(&[
        "sample-data",
        "--out",
        "demo",
        "--rows",
        "3000",
        "--partitions",
        "3",
        "--clean",
    ])
    .expect_code(0);
    let out = lab
        .cli(&["run", "--config", "demo/recon.toml", "--out", "out"])
        .expect_code(0);
    assert!(out.stdout.starts_with("PASS orders"), "{out:#?}");
    assert!(Path::new(&lab.path("demo/target")).is_dir());
}

/// Regression: `glue-recon ... | head` panicked ("failed printing to stdout: Broken
/// pipe") once the reader closed the pipe. The output now ends quietly and the exit
/// code still carries the verdict.
#[test]
fn a_closed_stdout_pipe_is_not_a_panic() {
    use std::io::Read;
    // 3,000 missing keys with samples of all of them: far more JSON than a pipe buffers.
    let n = 3000;
    let lab = Lab::with(&batch(vec![("id", ids(n))]), &batch(vec![("id", ids(0))]));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_glue-recon"))
        .args([
            "diff",
            &lab.loc("source"),
            &lab.loc("target"),
            "--key",
            "id",
        ])
        .args(["--json", "--sample-limit", "3000", "--out", &lab.loc("out")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

/// A binary built for x86-64-v3 (`.cargo/config.toml`) on a CPU without AVX2 says what
/// it needs and exits 2 instead of dying on an illegal instruction, and runs on a CPU
/// with it: the binary under QEMU's user-mode emulation of an Intel Nehalem (2008: SSE4.2,
/// no AVX) and of a Haswell (2013: AVX2, BMI2, FMA).
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
#[test]
fn an_x86_64_v3_build_refuses_an_older_cpu_with_a_message() {
    let on = |cpu: &str| {
        std::process::Command::new("qemu-x86_64")
            .args(["-cpu", cpu, env!("CARGO_BIN_EXE_glue-recon"), "--version"])
            .output()
            .unwrap_or_else(|e| {
                panic!("qemu-x86_64 (Debian's qemu-user; scripts/setup.sh installs it): {e}")
            })
    };
    let old = on("Nehalem");
    let stderr = String::from_utf8_lossy(&old.stderr);
    assert_eq!(old.status.code(), Some(2), "{old:?}");
    assert!(
        stderr.starts_with("glue-recon: this build needs an x86-64-v3 CPU"),
        "{stderr}"
    );
    assert!(
        stderr.contains("RUSTFLAGS= cargo build --release"),
        "{stderr}"
    );
    assert!(old.stdout.is_empty(), "{old:?}");

    let new = on("Haswell");
    assert_eq!(new.status.code(), Some(0), "{new:?}");
    let version = String::from_utf8_lossy(&new.stdout);
    assert!(version.starts_with("glue-recon "), "{version}");
}
