//! The progress line in a real terminal (tmux, 80 columns): rows hashed of the rows
//! the footers hold, percentage, integer rate, ETA, partitions done, then a visible
//! "writing report" phase; never wider than the terminal.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use glue_recon::report::thousands;

use super::bin;

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("tmux: {e}; `make setup` installs it"))
}

/// Text of a terminal byte stream: escape sequences removed, split where the
/// terminal starts a line again (`\r`, `\n`).
fn screen_lines(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ params final-byte; other escapes: ESC and one more char.
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
        } else {
            plain.push(c);
        }
    }
    plain
        .split(['\r', '\n'])
        .map(str::to_string)
        .filter(|l| !l.trim().is_empty())
        .collect()
}

fn run_in_tmux(dir: &Path, config: &Path) -> Vec<u8> {
    let socket = format!("glue-recon-test-{}", std::process::id());
    let go = dir.join("go");
    let log = dir.join("pane.log");
    let command = format!(
        "while [ ! -e '{go}' ]; do sleep 0.05; done; exec '{bin}' run --parallelism 1 --config '{config}' --out '{out}'",
        go = go.display(),
        bin = bin().get_program().to_string_lossy(),
        config = config.display(),
        out = dir.join("out").display(),
    );
    let o = tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "80",
            "-y",
            "24",
            &command,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pipe = format!("cat > '{}'", log.display());
    let o = tmux(&socket, &["pipe-pane", "-t", "t", "-o", &pipe]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(&go, b"").unwrap();
    let start = Instant::now();
    while tmux(&socket, &["has-session", "-t", "t"]).status.success() {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "the run did not end"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = tmux(&socket, &["kill-server"]);
    std::fs::read(&log).unwrap()
}

#[test]
fn the_progress_line_shows_total_percent_rate_and_eta_within_80_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    glue_recon::sample::generate(&glue_recon::sample::SampleSpec {
        out: dir.join("data"),
        rows: 600_000,
        partitions: 6,
        seed: 3,
        changes: 0.001,
        edge_cases: false,
    })
    .unwrap();
    let config = dir.join("data/recon.toml");
    let lines = screen_lines(&run_in_tmux(dir, &config));
    let progress: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("rows/s") || l.contains("writing report"))
        .collect();
    let hashing: Vec<&&String> = progress.iter().filter(|l| l.contains("rows/s")).collect();
    // The sample's partitions whose footers already differ, said before the hashing.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  dt=") && l.ends_with("the footers already differ:")),
        "no footer check in {lines:#?}"
    );
    assert!(!hashing.is_empty(), "no progress line in {lines:#?}");
    // Both sides hashed: the total is the rows the footers hold, as the report counts.
    let report = std::fs::read_dir(dir.join("out/orders"))
        .unwrap()
        .map(|e| e.unwrap().path().join("report.json"))
        .find(|p| p.exists())
        .expect("a report");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    let total = report["totals"]["source_rows"].as_u64().unwrap()
        + report["totals"]["target_rows"].as_u64().unwrap();
    let total = format!("/{} rows", thousands(total));
    assert!(
        hashing.iter().any(|l| l.contains("% 0/")) && hashing.iter().any(|l| l.contains("100% ")),
        "the bar goes from 0% to 100%: {lines:#?}"
    );
    for l in &hashing {
        assert!(l.contains(&total), "{total} not in {l}");
        assert!(l.contains("% "), "{l}");
        assert!(l.contains("ETA "), "{l}");
        assert!(l.contains("/6 partitions"), "{l}");
        let rate = l.split(" rows/s").next().unwrap();
        let number = rate.rsplit(' ').next().unwrap();
        assert!(
            number.chars().all(|c| c.is_ascii_digit() || c == ','),
            "an integer rate: {l}"
        );
    }
    assert!(
        progress.iter().any(|l| l.contains("writing report")),
        "no writing phase in {lines:#?}"
    );
    for l in &progress {
        assert!(l.chars().count() <= 80, "wider than the terminal: {l}");
    }
    // Nothing is drawn before the bar has its style (indicatif's bare "0/0").
    assert!(
        !lines.iter().any(|l| l.trim_end().ends_with(" 0/0")),
        "an unstyled bar was drawn: {lines:#?}"
    );
    // The summary follows, once.
    let verdicts = lines
        .iter()
        .filter(|l| l.starts_with("FAIL orders"))
        .count();
    assert_eq!(verdicts, 1, "{lines:#?}");
}
