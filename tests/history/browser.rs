//! The generated dashboard opened from disk by headless Chromium (Debian `chromium`,
//! installed by scripts/setup.sh). A missing browser fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{run_cli, sample, two_pair_config};

fn chromium(args: &[String]) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    let browser = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
    Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot start `{browser}` ({e}); install it with scripts/setup.sh (Debian package chromium)")
        })
}

fn test_output() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-output");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn chromium_shows_the_counter_and_links_heat_map_cells_to_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    // A clean day, then a day with problems in alpha.
    sample(&dir.join("a"), 11, 0.0);
    sample(&dir.join("b"), 12, 0.0);
    let config = two_pair_config(dir);
    run_cli(&config, &out);
    sample(&dir.join("a"), 13, 0.002);
    let (_, reports) = run_cli(&config, &out);
    let alpha = reports.iter().find(|r| r.pair == "alpha").unwrap();
    let open = alpha.totals.findings();
    assert!(open > 0);

    let index = out.join("dashboard/index.html");
    let url = format!("file://{}", index.display());
    let o = chromium(&["--dump-dom".into(), url.clone()]);
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(
        dom.contains("id=\"open-counter\""),
        "no counter in the DOM (stderr: {})\n{dom}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        dom.contains(&format!("class=\"counter open\" data-open=\"{open}\"")),
        "{dom}"
    );
    // The heat map cell of alpha's run links, relatively, to its report.
    let link = format!("../alpha/{}/report.html", alpha.run_id);
    assert!(dom.contains(&format!("href=\"{link}\"")), "{dom}");
    assert!(
        out.join("dashboard").join(&link).is_file(),
        "{link} does not resolve"
    );
    assert!(dom.contains("data-pair=\"alpha\""), "{dom}");

    // The engineer view links to the diff rows.
    let engineer = std::fs::read_to_string(out.join("dashboard/engineer.html")).unwrap();
    let diffs = format!("../alpha/{}/diffs.parquet", alpha.run_id);
    assert!(engineer.contains(&diffs));
    assert!(out.join("dashboard").join(&diffs).is_file());

    let shot = test_output().join("dashboard.png");
    let _ = std::fs::remove_file(&shot);
    let o = chromium(&[
        format!("--screenshot={}", shot.display()),
        "--window-size=1200,800".into(),
        url,
    ]);
    assert!(
        shot.is_file(),
        "no screenshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}
