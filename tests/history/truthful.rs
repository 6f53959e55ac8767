//! Issue 37: what the CLI tells must be true. No green page from a history that is
//! not there, no drift that never clears, no pair that vanishes, no option that is
//! silently ignored, no AWS set-up problem dressed as a transient failure, no report
//! root found unwritable only after the compare, no run half recorded unnoticed.

use std::path::Path;
use std::process::{Command, Output};

use glue_recon::report::{Report, Status};

use super::{bin, run_cli, sample};

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A one-pair config `orders` over `<dir>/data`, with `report_dir = "reports"`.
fn orders_config(dir: &Path, extra: &str) -> std::path::PathBuf {
    let path = dir.join("cfg.toml");
    std::fs::write(
        &path,
        format!(
            "[defaults]\nreport_dir = \"reports\"\ndrift_baseline_runs = 3\ndrift_band = \"0.5%\"\n\n[[pair]]\nname = \"orders\"\nsource = \"data/source\"\ntarget = \"data/target\"\nkey = [\"id\"]\n{extra}"
        ),
    )
    .unwrap();
    path
}

/// `glue-recon resolve` of the latest run of `orders`, found through `--config`.
fn resolve_orders(config: &Path, accept: bool) -> Output {
    bin()
        .args([
            "resolve", "--pair", "orders", "--by", "dana", "--note", "reloaded",
        ])
        .args(accept.then_some("--accept"))
        .arg("--config")
        .arg(config)
        .output()
        .unwrap()
}

fn run_config(config: &Path) -> (i32, Report) {
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = bin()
        .args(["run", "--json", "--config"])
        .arg(config)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    let code = o.status.code().unwrap();
    assert!(code < 2, "{stdout}\n{stderr}");
    (code, serde_json::from_str(&stdout).expect("report JSON"))
}

#[test]
fn a_history_that_is_not_there_is_an_error_and_the_config_root_is_honoured() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A typo in --out: no green dashboard "across 0 pairs", but exit 2 naming it.
    let typo = dir.join("recon-outt");
    let o = bin()
        .arg("dashboard")
        .arg("--out")
        .arg(&typo)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("holds no ledger"), "{stderr}");
    assert!(stderr.contains("the folder does not exist"), "{stderr}");
    assert!(stderr.contains(&typo.display().to_string()), "{stderr}");
    assert!(!typo.join("dashboard/index.html").exists());
    // An existing folder without a ledger is no history either.
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let o = bin()
        .arg("dashboard")
        .arg("--out")
        .arg(dir.join("empty"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("nothing under"), "{}", text(&o).1);

    // After `run --config`, resolve and dashboard find the runs through --config.
    sample(&dir.join("data"), 7, 0.002);
    let config = orders_config(dir, "");
    let (code, report) = run_config(&config);
    assert_eq!(code, 1);
    let o = resolve_orders(&config, false);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains(&report.run_id), "{stdout}");
    let o = bin()
        .arg("dashboard")
        .arg("-c")
        .arg(&config)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let index = dir.join("reports/dashboard/index.html");
    assert!(stdout.contains(&index.display().to_string()), "{stdout}");
    assert!(stdout.contains("(0 open findings)"), "{stdout}");
}

#[test]
fn a_drift_clears_when_runs_return_to_the_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = orders_config(dir, "");
    let clean = || sample(&dir.join("data"), 11, 0.0);
    let broken = || sample(&dir.join("data"), 11, 0.03);
    // A week: three clean days, a bad one (resolved: the data was reloaded), then
    // clean days again.
    clean();
    for _ in 0..3 {
        assert_eq!(run_config(&config).1.status, Status::Pass);
    }
    broken();
    let (code, bad) = run_config(&config);
    assert_eq!(code, 1);
    assert!(bad.drift.as_ref().unwrap().detected, "{:?}", bad.drift);
    let o = resolve_orders(&config, false);
    assert!(o.status.success(), "{}", text(&o).1);
    clean();
    for day in 5..=7 {
        let (code, r) = run_config(&config);
        let d = r.drift.as_ref().unwrap();
        assert_eq!(code, 0, "day {day}: {:?}", r.reasons);
        assert_eq!(r.status, Status::Pass, "day {day}: {:?}", r.reasons);
        assert!(
            !d.detected,
            "day {day}: the bad day stays in the baseline: {d:?}"
        );
        assert_eq!(d.left_out_runs, 1, "day {day}: {d:?}");
        assert_eq!(d.baseline_runs, 3, "day {day}: {d:?}");
    }

    // A difference accepted as the new normal joins the baseline.
    broken();
    let (_, again) = run_config(&config);
    assert!(again.drift.as_ref().unwrap().detected);
    let o = resolve_orders(&config, true);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("accepted as the new normal"), "{stdout}");
    let (_, next) = run_config(&config);
    let d = next.drift.as_ref().unwrap();
    assert_eq!(
        d.left_out_runs, 1,
        "the accepted run is in the baseline: {d:?}"
    );
}

#[test]
fn a_pair_that_cannot_run_is_counted_in_the_summary_the_ledger_and_the_dashboard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(&dir.join("a"), 1, 0.0);
    sample(&dir.join("b"), 2, 0.0);
    let config = dir.join("three.toml");
    let pair = |name: &str, sub: &str| {
        format!(
            "[[pair]]\nname = \"{name}\"\nsource = \"{sub}/source\"\ntarget = \"{sub}/target\"\nkey = [\"id\"]\n\n"
        )
    };
    std::fs::write(
        &config,
        format!(
            "{}{}{}",
            pair("alpha", "a"),
            pair("beta", "b"),
            pair("gamma", "gone")
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = bin()
        .args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("run: ERROR, 3 pairs: alpha PASS, beta PASS, gamma ERROR"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ERROR gamma  (could not run: TableNotFound)"),
        "{stdout}"
    );
    // The ledger has gamma's row, and the dashboard shows it and counts it open.
    let ledger = futures::executor::block_on(glue_recon::ledger::read_ledger(
        &glue_recon::storage::Storage::local_only(),
        out.to_str().unwrap(),
        &Default::default(),
    ))
    .unwrap();
    let gamma: Vec<_> = ledger.runs.iter().filter(|r| r.pair == "gamma").collect();
    assert_eq!(gamma.len(), 1, "{:?}", ledger.runs);
    assert_eq!(gamma[0].status, "ERROR");
    assert_eq!(gamma[0].partitions.len(), 1, "{:?}", gamma[0]);
    assert_eq!(gamma[0].failed_partitions, 1);
    let record = std::fs::read_to_string(&gamma[0].report_uri).unwrap();
    assert!(record.contains("TableNotFound"), "{record}");
    let index = std::fs::read_to_string(out.join("dashboard/index.html")).unwrap();
    assert!(index.contains("across 3 pairs"), "every pair counted");
    assert!(index.contains("data-open=\"1\""), "gamma's failure is open");
    assert!(index.contains(">gamma<") && index.contains("verdict ERROR"));
    assert!(
        !index.contains("class=\"counter zero\""),
        "no green counter"
    );
}

#[test]
fn the_alert_of_a_run_lists_the_pairs_that_could_not_run() {
    let tmp = tempfile::tempdir().unwrap();
    sample(&tmp.path().join("a"), 5, 0.002);
    sample(&tmp.path().join("b"), 6, 0.0);
    let (_, reports) = run_cli(&super::two_pair_config(tmp.path()), &tmp.path().join("out"));
    let alpha = &reports[0];
    let loc = glue_recon::layout::ReportLocation::of("out/alpha/r".into(), &alpha.artifacts);
    let gone = glue_recon::report::NotRun::new(
        "gamma",
        &glue_recon::error::ReconError::TableNotFound {
            location: "gone/source".into(),
            reason: "no such folder".into(),
        },
    );
    let alert = glue_recon::alert::Alert::for_run(
        &[(alpha, &loc)],
        std::slice::from_ref(&gone),
        glue_recon::history::DEFAULT_ATHENA_DATABASE,
    )
    .unwrap();
    assert!(
        alert
            .subject
            .starts_with("glue-recon ERROR: 2 of 2 pairs not PASS: gamma ERROR, alpha FAIL"),
        "{}",
        alert.subject
    );
    assert!(
        alert
            .message
            .starts_with("glue-recon reconciliation: ERROR (2 pairs, 1 could not run)")
    );
    assert!(
        alert.message.contains("gamma (TableNotFound)"),
        "{}",
        alert.message
    );
    assert!(alert.message.contains("FAIL alpha"), "{}", alert.message);
    assert_eq!(alert.attributes.status, "ERROR");
    // A run where every pair passed sends nothing.
    assert!(glue_recon::alert::Alert::for_run(&[], &[], "glue_recon").is_none());
}

/// `glue-recon diff` of the sample tables with extra options; exit code and stderr.
fn diff(dir: &Path, options: &[&str]) -> (i32, String) {
    let o = bin()
        .arg("diff")
        .arg(dir.join("source"))
        .arg(dir.join("target"))
        .args(["--key", "id", "--quiet", "--out"])
        .arg(dir.join("out"))
        .args(options)
        .output()
        .unwrap();
    (o.status.code().unwrap(), text(&o).1)
}

#[test]
fn options_that_would_be_silently_ignored_are_errors_naming_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir, 3, 0.002);
    for (options, wanted) in [
        (
            &["--rename", "note=status"][..],
            "rename `note` -> `status`: the source already has a column `status`",
        ),
        (
            &["--exclude", "no_such"],
            "exclude names column `no_such`, which neither table has",
        ),
        (&["--trim", "amount"], "columns.amount.trim applies to text"),
        (
            &["--ignore-case", "qty"],
            "columns.qty.ignore_case applies to text",
        ),
        (&["--key", "id"], "key column `id` is listed twice"),
        (&["--parallelism", "0"], "must be at least 1"),
        (
            &["--abs-tolerance", "amount=inf"],
            "must be a finite number >= 0, got inf",
        ),
    ] {
        let (code, stderr) = diff(dir, options);
        assert_eq!(code, 2, "{options:?}: {stderr}");
        assert!(stderr.contains(wanted), "{options:?}: {stderr}");
        assert!(!stderr.contains("unsupported unit type"), "{stderr}");
    }
    // The options that do apply still run.
    let (code, stderr) = diff(dir, &["--trim", "status", "--exclude", "note"]);
    assert!(code < 2, "{stderr}");
}

#[test]
fn sample_data_never_overwrites_a_config_it_did_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    let mine =
        "[[pair]]\nname = \"prod\"\nsource = \"s3://x/y\"\ntarget = \"s3://x/z\"\nkey = [\"id\"]\n";
    std::fs::write(tmp.path().join("recon.toml"), mine).unwrap();
    let o = bin()
        .args(["sample-data", "--rows", "100", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("was not written by sample-data") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("recon.toml")).unwrap(),
        mine
    );
    // Its own config is rewritten freely, and --force overwrites another.
    let o = bin()
        .args(["sample-data", "--rows", "100", "--force", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let o = bin()
        .args(["sample-data", "--rows", "100", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
}

/// The CLI on s3:// tables with the AWS environment replaced by `env`.
fn on_aws_without(env: &[(&str, &str)]) -> (i32, String) {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_glue-recon"));
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    let o = cmd
        .args([
            "diff",
            "s3://bucket/source/",
            "s3://bucket/target/",
            "--key",
            "id",
            "--out",
        ])
        .arg(home.path().join("out"))
        .env("HOME", home.path())
        .env("AWS_CONFIG_FILE", home.path().join("none"))
        .env("AWS_SHARED_CREDENTIALS_FILE", home.path().join("none"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (o.status.code().unwrap(), text(&o).1)
}

#[test]
fn a_missing_aws_region_or_credentials_says_what_to_set() {
    let (code, stderr) = on_aws_without(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no AWS region is set: set AWS_REGION"),
        "{stderr}"
    );
    assert!(!stderr.contains("transient"), "{stderr}");
    assert!(
        stderr.len() < 400,
        "a short message, not the SDK's chain: {stderr}"
    );
    let (code, stderr) = on_aws_without(&[("AWS_REGION", "eu-west-1")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no AWS credentials were found"), "{stderr}");
    assert!(
        stderr.contains("AWS_ACCESS_KEY_ID") && stderr.contains("AWS_ENDPOINT_URL"),
        "{stderr}"
    );
    assert!(!stderr.contains("transient"), "{stderr}");
}

#[test]
fn an_unwritable_out_fails_before_any_table_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    // The tables do not exist: a run that read them first would say so instead.
    let o = bin()
        .args([
            "diff",
            "no/such/source",
            "no/such/target",
            "--key",
            "id",
            "--out",
        ])
        .arg(&file)
        .output()
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("could not write {}", file.display())),
        "{stderr}"
    );
    assert!(stderr.contains("choose another --out"), "{stderr}");
    assert!(!stderr.contains("table not found"), "{stderr}");
    assert_eq!(
        stderr.matches("(os error").count(),
        1,
        "the OS error once: {stderr}"
    );
}

/// Pair runs of `out`'s ledger: (pair, status).
fn ledger_pairs(out: &Path) -> Vec<(String, String)> {
    let ledger = futures::executor::block_on(glue_recon::ledger::read_ledger(
        &glue_recon::storage::Storage::local_only(),
        out.to_str().unwrap(),
        &Default::default(),
    ))
    .unwrap();
    let mut pairs: Vec<(String, String)> = ledger
        .runs
        .iter()
        .map(|r| (r.pair.clone(), r.status.clone()))
        .collect();
    pairs.dedup();
    pairs
}

/// Tables of a big pair and a small one, and their config.
fn slow_pairs(dir: &Path) -> std::path::PathBuf {
    glue_recon::sample::generate(&glue_recon::sample::SampleSpec {
        out: dir.join("big"),
        rows: 1_000_000,
        partitions: 3,
        seed: 9,
        changes: 0.0,
        edge_cases: false,
    })
    .unwrap();
    sample(&dir.join("small"), 4, 0.0);
    let config = dir.join("two.toml");
    std::fs::write(
        &config,
        "[[pair]]\nname = \"big\"\nsource = \"big/source\"\ntarget = \"big/target\"\nkey = [\"id\"]\n\n[[pair]]\nname = \"small\"\nsource = \"small/source\"\ntarget = \"small/target\"\nkey = [\"id\"]\n",
    )
    .unwrap();
    config
}

/// Start a run of [`slow_pairs`]; wait until it has started.
fn start_slow_run(dir: &Path, config: &Path) -> std::process::Child {
    let child = bin()
        .args(["run", "--parallelism", "1", "--config"])
        .arg(config)
        .arg("--out")
        .arg(dir.join("out"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let marker_dir = dir.join("out/in-progress");
    for _ in 0..600 {
        if std::fs::read_dir(&marker_dir).is_ok_and(|mut d| d.next().is_some()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(marker_dir.is_dir(), "the run never started");
    std::thread::sleep(std::time::Duration::from_millis(300));
    child
}

#[test]
fn ctrl_c_records_the_run_and_a_killed_run_is_shown_as_not_wholly_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    // Ctrl-C: the pair being hashed and the one after it are recorded as
    // interrupted; the run is wholly recorded, its marker gone.
    let config = slow_pairs(dir);
    let child = start_slow_run(dir, &config);
    // SAFETY: kill(2) with a pid and a signal number touches no memory of ours.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT)
    };
    let o = child.wait_with_output().unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(
        stdout.contains("run: ERROR, 2 pairs: big ERROR, small ERROR"),
        "{stdout}"
    );
    assert_eq!(
        ledger_pairs(&out),
        [
            ("big".to_string(), "ERROR".to_string()),
            ("small".into(), "ERROR".into())
        ]
    );
    assert_eq!(
        std::fs::read_dir(out.join("in-progress")).unwrap().count(),
        0
    );

    // Killed outright: the marker stays and the next dashboard says which run.
    let mut child = start_slow_run(dir, &config);
    child.kill().unwrap();
    child.wait().unwrap();
    let o = bin()
        .arg("dashboard")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("was not wholly recorded"), "{stderr}");
    assert!(
        stderr.contains("pairs not recorded: big, small"),
        "{stderr}"
    );
    let index = std::fs::read_to_string(out.join("dashboard/index.html")).unwrap();
    assert!(
        index.contains("id=\"unfinished\""),
        "the dashboard lists it"
    );
}

#[test]
fn a_run_as_of_a_past_day_is_recorded_on_that_day_and_a_future_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(&dir.join("data"), 8, 0.0);
    let config = orders_config(dir, "");
    let as_of = |at: &str| {
        bin()
            .args(["run", "--json", "--as-of", at, "--config"])
            .arg(&config)
            .output()
            .unwrap()
    };
    for (at, recorded) in [
        ("2026-11-02T06:30:00Z", "2026-11-02T06:30:00Z"),
        ("2026-11-03", "2026-11-03T00:00:00Z"),
    ] {
        let o = as_of(at);
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
        let report: Report = serde_json::from_str(&stdout).unwrap();
        assert_eq!(report.started_at, recorded);
        let stamp: String = recorded
            .chars()
            .filter(|c| *c != '-' && *c != ':')
            .collect();
        assert!(report.run_id.starts_with(&stamp), "{}", report.run_id);
        let ledger = dir
            .join("reports/ledger")
            .join(format!("run_date={}", &recorded[..10]))
            .join(format!("{}.parquet", report.run_id));
        assert!(ledger.is_file(), "no {}", ledger.display());
    }
    // The dashboard has both days.
    let html = std::fs::read_to_string(dir.join("reports/dashboard/index.html")).unwrap();
    assert!(html.contains("data-date=\"2026-11-02\""), "{html}");
    assert!(html.contains("data-date=\"2026-11-03\""), "{html}");

    for (at, says) in [
        ("2999-01-01T00:00:00Z", "is in the future"),
        ("yesterday", "is not a time"),
    ] {
        let o = as_of(at);
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(stderr.contains("--as-of"), "{stderr}");
    }
}
