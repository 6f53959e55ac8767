//! Masked columns never show a value: not in report.json, report.html,
//! diffs.parquet, nor on stdout; they show `hmac:<12 hex>`, keyed by the deployment's
//! masking key, instead.

use std::path::Path;

use arrow::array::*;

use super::fixtures::*;
use glue_recon::partial::FindingKind;

/// Values that must never be printed.
const SECRETS: [&str; 5] = [
    "alice@secret.example",
    "alice@changed.example",
    "carol@secret.example",
    "123-45-6789",
    "987-65-4321",
];

/// A lab where `email` differs for key 1, key 2 is missing in the target (with its
/// email) and `ssn`, a second masked column, differs for key 1 too.
fn masked_lab() -> Lab {
    let source = batch(vec![
        ("id", ids(3)),
        (
            "email",
            arr(StringArray::from(vec![
                "same@secret.example",
                "alice@secret.example",
                "carol@secret.example",
            ])),
        ),
        (
            "ssn",
            arr(StringArray::from(vec![
                Some("000-00-0000"),
                Some("123-45-6789"),
                None,
            ])),
        ),
        ("name", arr(StringArray::from(vec!["s", "alice", "carol"]))),
    ]);
    let target = batch(vec![
        ("id", ids(2)),
        (
            "email",
            arr(StringArray::from(vec![
                "same@secret.example",
                "alice@changed.example",
            ])),
        ),
        (
            "ssn",
            arr(StringArray::from(vec![
                Some("000-00-0000"),
                Some("987-65-4321"),
            ])),
        ),
        ("name", arr(StringArray::from(vec!["s", "alicia"]))),
    ]);
    Lab::with(&source, &target)
}

const MASKED: &str = "masked = [\"email\", \"SSN\"]";

fn is_masked(v: &Option<String>) -> bool {
    v.as_deref().is_some_and(|v| {
        v.strip_prefix("hmac:")
            .is_some_and(|h| h.len() == 12 && h.chars().all(|c| c.is_ascii_hexdigit()))
    })
}

fn assert_no_secret(what: &str, text: &str) {
    for s in SECRETS {
        assert!(
            !text.contains(s),
            "{what} shows the masked value {s}:\n{text}"
        );
    }
    assert!(
        text.contains("hmac:"),
        "{what} shows no masked token:\n{text}"
    );
}

fn file_text(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
}

#[test]
fn masked_columns_show_a_hash_prefix_in_findings() {
    let run = masked_lab().run(&["id"], MASKED);
    let d = diffs(&run);
    let columns: Vec<&str> = d.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(columns, vec!["email", "name", "ssn"]);
    for (_, column, source, target) in &d {
        if column != "name" {
            assert!(is_masked(source) && is_masked(target), "{d:?}");
            assert_ne!(source, target);
        }
    }
    // Unmasked columns still show their values.
    assert_eq!(d[1], diff("1", "name", Some("alice"), Some("alicia")));
}

#[test]
fn masked_values_are_absent_from_every_report_file() {
    let lab = masked_lab();
    let run = lab.run(&["id"], MASKED);
    assert_eq!(run.report.totals.mismatch, 1);
    let loc = lab.write_report(&run);
    assert_no_secret("report.json", &file_text(Path::new(&loc.json)));
    assert_no_secret("report.html", &file_text(Path::new(&loc.html)));
    let rows = read_rows_as_text(Path::new(&loc.diff_rows));
    assert_no_secret("diffs.parquet", &format!("{rows:?}"));
    // Nor in the raw bytes (column statistics are stored uncompressed).
    let raw = file_text(Path::new(&loc.diff_rows));
    for s in SECRETS {
        assert!(!raw.contains(s), "diffs.parquet bytes hold {s}");
    }
}

#[test]
fn masked_values_are_absent_from_stdout() {
    let lab = masked_lab();
    let config = lab.write_config(&["id"], MASKED);
    let config = config.to_str().unwrap();
    let summary = lab
        .cli(&["run", "--config", config, "--out", "out"])
        .expect_code(1);
    for s in SECRETS {
        assert!(!summary.stdout.contains(s), "{summary:#?}");
        assert!(!summary.stderr.contains(s), "{summary:#?}");
    }
    let json = lab
        .cli(&["run", "--config", config, "--out", "out2", "--json"])
        .expect_code(1);
    assert_no_secret("--json stdout", &json.stdout);
    let diff = lab
        .cli(&[
            "diff", "source", "target", "--key", "id", "--mask", "email", "--mask", "ssn", "--out",
            "out3", "--json",
        ])
        .expect_code(1);
    assert_no_secret("diff --json stdout", &diff.stdout);
}

#[test]
fn a_masked_key_is_shown_as_a_hash() {
    let lab = masked_lab();
    let run = lab.run(&["email"], "masked = [\"email\", \"ssn\"]");
    let missing = findings(&run, FindingKind::MissingInTarget);
    let extra = findings(&run, FindingKind::ExtraInTarget);
    assert_eq!(
        (missing.len(), extra.len()),
        (2, 1),
        "{missing:?} {extra:?}"
    );
    for (_, f) in missing.iter().chain(&extra) {
        assert!(is_masked(&f.key[0]), "{f:?}");
    }
    let loc = lab.write_report(&run);
    assert_no_secret("report.json", &file_text(Path::new(&loc.json)));
    assert_no_secret("report.html", &file_text(Path::new(&loc.html)));
    assert_no_secret(
        "diffs.parquet",
        &format!("{:?}", read_rows_as_text(Path::new(&loc.diff_rows))),
    );
}

#[test]
fn equal_masked_values_show_the_same_hash() {
    // Two keys whose masked column changes from the same value to the same value:
    // the hashes agree, so a reader can see "the same value" without seeing it.
    let source = batch(vec![
        ("id", ids(2)),
        (
            "email",
            arr(StringArray::from(vec![
                "a@secret.example",
                "a@secret.example",
            ])),
        ),
    ]);
    let target = batch(vec![
        ("id", ids(2)),
        (
            "email",
            arr(LargeStringArray::from(vec!["b@x.example", "b@x.example"])),
        ),
    ]);
    let run = Lab::with(&source, &target).run(&["id"], "masked = [\"email\"]");
    let d = diffs(&run);
    assert_eq!(d.len(), 2);
    assert_eq!((&d[0].2, &d[0].3), (&d[1].2, &d[1].3));
    assert!(is_masked(&d[0].2));
}

#[test]
fn tokens_are_keyed_by_the_masking_key_file() {
    let lab = masked_lab();
    let dir = tempfile::tempdir().unwrap();
    let key = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (a, b) = (
        key("a.key", "first key of this deployment, 40 bytes\n"),
        key("b.key", "another deployment's key, also long enough"),
    );
    let email_tokens = |key_file: &str, out: &str| -> Vec<String> {
        let diff = lab
            .cli_env(
                &[
                    "diff", "source", "target", "--key", "id", "--mask", "email", "--mask", "ssn",
                    "--out", out, "--json",
                ],
                &[("GLUE_RECON_MASK_KEY_FILE", key_file)],
            )
            .expect_code(1);
        assert_no_secret("diff --json stdout", &diff.stdout);
        let report = diff.json();
        let mismatches = report["samples"]["MISMATCH"].as_array().unwrap();
        mismatches
            .iter()
            .flat_map(|m| m["diffs"].as_array().unwrap())
            .filter(|c| c["column"] == "email")
            .flat_map(|c| [c["source"].clone(), c["target"].clone()])
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let first = email_tokens(&a, "a1");
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(
        first.iter().all(|t| is_masked(&Some(t.clone()))),
        "{first:?}"
    );
    // The same key, the same tokens: equal values can be recognised across runs.
    assert_eq!(email_tokens(&a, "a2"), first);
    // Another key, other tokens: a token cannot be matched against guesses without it.
    let other = email_tokens(&b, "b1");
    assert!(
        other.iter().all(|t| !first.contains(t)),
        "{first:?} {other:?}"
    );

    // A key file that is missing or too short stops the run, naming it.
    let missing = dir.path().join("missing.key");
    let missing = missing.to_str().unwrap();
    let short = key("short.key", "short");
    for (file, says) in [(missing, "missing.key"), (short.as_str(), "at least 16")] {
        let run = lab
            .cli_env(
                &[
                    "diff", "source", "target", "--key", "id", "--mask", "email", "--out", "c",
                ],
                &[("GLUE_RECON_MASK_KEY_FILE", file)],
            )
            .expect_code(2);
        assert!(run.stderr.contains(says), "{run:#?}");
    }
}
