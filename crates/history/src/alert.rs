//! The alert of a run: an e-mail-friendly subject and plain-text body built from the
//! reports, and the message attributes (`status`, `pair`) that SNS subscription
//! filter policies match on. The CLI prints it, the merge Lambda returns it for the
//! state machine to publish, and `recon_aws::sns::SnsPublisher` publishes it.
//! Sample keys come from the reports, where masked columns are already hashed.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use recon_engine::hints::hint_lines;
use recon_engine::layout::ReportLocation;
use recon_engine::partial::FindingKind;
use recon_engine::report::{NotRun, Report, Status};
use recon_events::bounded::{ALERT_MESSAGE_MAX, prefix, shortened};

/// The longest subject sent: SNS takes subjects under 100 characters.
pub(crate) const SUBJECT_MAX: usize = 99;
/// Pairs named in the `pair` attribute; a run over more names the first ones (the
/// message and the reports name them all).
pub(crate) const ATTRIBUTE_PAIRS_MAX: usize = 100;
/// Sample keys shown per finding kind.
const SAMPLE_KEYS: usize = 3;
/// Columns shown in "columns that differ most".
const TOP_COLUMNS: usize = 5;
/// Root-cause hints shown per pair, the most findings first.
const HINTS_SHOWN: usize = 5;
/// Partitions not reconciled named per pair; the rest are counted.
pub const FAILED_PARTITIONS_SHOWN: usize = 10;
/// The longest error text quoted for a partition.
const PARTITION_ERROR_MAX: usize = 400;
/// Room kept under [`ALERT_MESSAGE_MAX`] for the note on what was left out and the
/// dashboard line.
const MESSAGE_TAIL_ROOM: usize = 1024;

/// Message attributes of an alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertAttributes {
    /// The worst verdict: `PASS`, `WARN` or `FAIL`.
    pub status: String,
    /// The pairs of the run as JSON array text (`["orders","customers"]`), the value
    /// of an SNS `String.Array` attribute, so a filter policy on one pair matches a
    /// run over several; at most `ATTRIBUTE_PAIRS_MAX` names.
    pub pair: String,
}

/// An alert ready to publish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alert {
    /// At most `SUBJECT_MAX` printable ASCII characters, no line breaks.
    pub subject: String,
    /// Plain text for a person: verdict first, then counts, columns, samples and
    /// where the reports are; at most [`ALERT_MESSAGE_MAX`] bytes (the first
    /// [`FAILED_PARTITIONS_SHOWN`] failed partitions of a pair, the worst pairs first,
    /// and counts of what was left out).
    pub message: String,
    /// For subscription filter policies.
    pub attributes: AlertAttributes,
}

/// A report and where it was written.
pub(crate) type WrittenReport<'a> = (&'a Report, &'a ReportLocation);

/// The `pair` attribute's value: the names as a JSON array of strings.
fn pair_attribute<S: AsRef<str>>(names: &[S]) -> String {
    let names: Vec<&str> = names
        .iter()
        .take(ATTRIBUTE_PAIRS_MAX)
        .map(AsRef::as_ref)
        .collect();
    serde_json::to_string(&names).expect("a list of strings serializes")
}

/// SNS subjects must be ASCII without control characters, under 100 long.
fn subject_text(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                ' '
            }
        })
        .collect();
    if clean.len() <= SUBJECT_MAX {
        return clean;
    }
    format!("{}...", &clean[..SUBJECT_MAX - 3])
}

fn headline(r: &Report) -> String {
    let t = &r.totals;
    let parts: Vec<String> = FindingKind::ALL
        .iter()
        .filter(|k| t.of(**k) > 0)
        .map(|k| {
            format!(
                "{} {}",
                t.of(*k),
                k.as_str().to_lowercase().replace('_', " ")
            )
        })
        .collect();
    let mut line = if parts.is_empty() {
        "no differences".to_string()
    } else {
        parts.join(", ")
    };
    if !r.complete {
        line = format!("INCOMPLETE, {line}");
    }
    line
}

fn pair_section(out: &mut String, r: &Report, loc: &ReportLocation, athena_database: &str) {
    let t = &r.totals;
    let _ = writeln!(
        out,
        "{} {}{}: {}",
        r.status,
        r.pair,
        if r.complete { "" } else { " (INCOMPLETE)" },
        headline(r)
    );
    let _ = writeln!(out, "  source: {}", r.source);
    let _ = writeln!(out, "  target: {}", r.target);
    let _ = writeln!(out, "  run: {} ({})", r.run_id, r.trigger);
    for reason in &r.reasons {
        let _ = writeln!(out, "  - {reason}");
    }
    // A detected drift is already a `DRIFT: ...` reason above; otherwise the delta.
    if let Some(d) = r.drift.as_ref().filter(|d| !d.detected) {
        let _ = writeln!(out, "  vs baseline: {}", d.delta());
    }
    for line in hint_lines(&r.hints, HINTS_SHOWN) {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(
        out,
        "  rows: {} source, {} target, {} matched keys",
        t.source_rows, t.target_rows, t.matched
    );
    for kind in FindingKind::ALL {
        let _ = writeln!(out, "    {:<18} {:>10}", kind.as_str(), t.of(kind));
    }
    let failed: Vec<_> = r
        .partitions
        .iter()
        .filter_map(|p| p.error.as_ref().map(|e| (p, e)))
        .collect();
    for (p, e) in failed.iter().take(FAILED_PARTITIONS_SHOWN) {
        let _ = writeln!(
            out,
            "  partition {} not reconciled ({}): {}",
            p.partition,
            e.error_type,
            shortened(&e.message, PARTITION_ERROR_MAX)
        );
    }
    if failed.len() > FAILED_PARTITIONS_SHOWN {
        let _ = writeln!(
            out,
            "  ... and {} more partitions not reconciled (all {} are in the report)",
            failed.len() - FAILED_PARTITIONS_SHOWN,
            failed.len()
        );
    }
    if !r.columns.is_empty() {
        let top: Vec<String> = r
            .columns
            .iter()
            .take(TOP_COLUMNS)
            .map(|c| format!("{} ({})", c.column, c.mismatch))
            .collect();
        let _ = writeln!(out, "  columns that differ most: {}", top.join(", "));
    }
    let mut samples = r.samples.iter().filter(|(_, s)| !s.is_empty()).peekable();
    if samples.peek().is_some() {
        let _ = writeln!(out, "  sample keys:");
    }
    for (kind, list) in samples {
        let keys: Vec<String> = list
            .iter()
            .take(SAMPLE_KEYS)
            .map(|s| {
                let key: Vec<String> = s
                    .key
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("NULL")))
                    .collect();
                format!("{} [{}]", key.join(" "), s.partition)
            })
            .collect();
        let _ = writeln!(out, "    {:<18} {}", kind.as_str(), keys.join("; "));
    }
    if r.totals.findings() > 0 {
        // Athena reads only S3: a local run's keys are one read_parquet away instead.
        let (engine, query) = crate::history::offending_keys_query(r, loc, athena_database);
        let _ = writeln!(out, "  offending keys ({engine}):");
        for line in query.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    let _ = writeln!(out, "  report: {}", loc.json);
    let _ = writeln!(out, "  html:   {}", loc.html);
}

/// `message` within [`ALERT_MESSAGE_MAX`] less the tail room: whole lines from the
/// start (the worst pair leads), then a line saying how many were left out.
fn bounded_message(message: String) -> String {
    let max = ALERT_MESSAGE_MAX - MESSAGE_TAIL_ROOM;
    if message.len() <= max {
        return message;
    }
    let head = prefix(&message, max);
    let kept = head.rfind('\n').map_or(head.len(), |i| i + 1);
    let left_out = message[kept..].lines().count();
    let mut out = message[..kept].to_string();
    let _ = writeln!(
        out,
        "... {left_out} more lines left out (an alert is at most {} KiB): every pair's report has them all",
        ALERT_MESSAGE_MAX / 1024
    );
    out
}

impl Alert {
    /// Add the link to the dashboard (`dashboard/index.html`) at the end of the message.
    pub(crate) fn with_dashboard(mut self, uri: &str) -> Alert {
        let line = format!("dashboard: {uri}");
        let _ = writeln!(self.message, "{}", shortened(&line, MESSAGE_TAIL_ROOM / 2));
        self
    }

    /// The alert that pairs could not run (status `ERROR`, as the state machine's
    /// alert when a reconciliation cannot run).
    pub fn for_not_run(pairs: &[NotRun]) -> Alert {
        let names: Vec<&str> = pairs.iter().map(|p| p.pair.as_str()).collect();
        let subject = format!(
            "glue-recon ERROR: {} pair{} could not run: {}",
            pairs.len(),
            if pairs.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
        let mut message = String::from("glue-recon could not run the reconciliation of:\n\n");
        for p in pairs {
            let _ = writeln!(message, "{} ({}): {}", p.pair, p.error_type, p.error);
        }
        Alert {
            subject: subject_text(&subject),
            message: bounded_message(message),
            attributes: AlertAttributes {
                status: "ERROR".into(),
                pair: pair_attribute(&names),
            },
        }
    }

    /// The alert of a run: every pair it was to reconcile, those that could not run
    /// (ERROR) included; `None` when every pair passed.
    pub fn for_run(
        reports: &[WrittenReport<'_>],
        not_run: &[NotRun],
        athena_database: &str,
    ) -> Option<Alert> {
        let not_pass: Vec<String> = not_run
            .iter()
            .map(|n| format!("{} ERROR", n.pair))
            .chain(
                reports
                    .iter()
                    .filter(|(r, _)| r.status != Status::Pass)
                    .map(|(r, _)| format!("{} {}", r.pair, r.status)),
            )
            .collect();
        if not_pass.is_empty() {
            return None;
        }
        if not_run.is_empty() {
            return Some(Alert::for_reports(reports, athena_database));
        }
        if reports.is_empty() {
            return Some(Alert::for_not_run(not_run));
        }
        let all = reports.len() + not_run.len();
        let of_reports = Alert::for_reports(reports, athena_database);
        let mut message = format!(
            "glue-recon reconciliation: ERROR ({all} pairs, {} could not run)\n\n",
            not_run.len()
        );
        message.push_str(&Alert::for_not_run(not_run).message);
        message.push('\n');
        // The reports' sections, without their own headline.
        let sections = of_reports
            .message
            .split_once("\n\n")
            .map_or("", |(_, rest)| rest);
        message.push_str(sections);
        let pairs: Vec<&str> = not_run
            .iter()
            .map(|n| n.pair.as_str())
            .chain(reports.iter().map(|(r, _)| r.pair.as_str()))
            .collect();
        Some(Alert {
            subject: subject_text(&format!(
                "glue-recon ERROR: {} of {all} pairs not PASS: {}",
                not_pass.len(),
                not_pass.join(", ")
            )),
            message: bounded_message(message),
            attributes: AlertAttributes {
                status: "ERROR".into(),
                pair: pair_attribute(&pairs),
            },
        })
    }

    /// The alert of one run over one or more pairs (the worst verdict leads).
    pub(crate) fn for_reports(reports: &[WrittenReport<'_>], athena_database: &str) -> Alert {
        let worst = reports
            .iter()
            .map(|(r, _)| r.status)
            .max()
            .unwrap_or(Status::Pass);
        let pairs: Vec<&str> = reports.iter().map(|(r, _)| r.pair.as_str()).collect();
        let subject = match reports {
            [(r, _)] => format!("glue-recon {}: {} - {}", r.status, r.pair, headline(r)),
            _ => {
                let not_pass: Vec<&str> = reports
                    .iter()
                    .filter(|(r, _)| r.status != Status::Pass)
                    .map(|(r, _)| r.pair.as_str())
                    .collect();
                format!(
                    "glue-recon {worst}: {} of {} pairs not PASS: {}",
                    not_pass.len(),
                    reports.len(),
                    not_pass.join(", ")
                )
            }
        };
        let drifted: Vec<&str> = reports
            .iter()
            .filter(|(r, _)| r.drift.as_ref().is_some_and(|d| d.detected))
            .map(|(r, _)| r.pair.as_str())
            .collect();
        let drift_note = if drifted.is_empty() {
            String::new()
        } else {
            format!(", DRIFT: {}", drifted.join(", "))
        };
        let subject = if drifted.is_empty() {
            subject
        } else {
            subject.replacen(':', " DRIFT:", 1)
        };
        let mut message = String::new();
        let _ = writeln!(
            message,
            "glue-recon reconciliation: {worst} ({} pair{}{drift_note})\n",
            reports.len(),
            if reports.len() == 1 { "" } else { "s" }
        );
        let mut ordered: Vec<&WrittenReport<'_>> = reports.iter().collect();
        ordered.sort_by(|a, b| b.0.status.cmp(&a.0.status).then(a.0.pair.cmp(&b.0.pair)));
        for (r, loc) in ordered {
            pair_section(&mut message, r, loc, athena_database);
            message.push('\n');
        }
        Alert {
            subject: subject_text(&subject),
            message: bounded_message(message),
            attributes: AlertAttributes {
                status: worst.to_string(),
                pair: pair_attribute(&pairs),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::DEFAULT_ATHENA_DATABASE;

    #[test]
    fn offending_keys_are_queried_where_the_report_is() {
        let report = recon_engine::test_support::one_partition_report(3);
        let s3_loc = ReportLocation::of("s3://b/reports/p/r1".into(), &report.artifacts);
        let s3 = Alert::for_reports(&[(&report, &s3_loc)], DEFAULT_ATHENA_DATABASE).message;
        assert!(s3.contains("offending keys (Athena):"), "{s3}");
        assert!(s3.contains("CREATE EXTERNAL TABLE IF NOT EXISTS glue_recon.diffs_p_now"));
        assert!(
            s3.contains("LOCATION 's3://b/reports/p/r1/athena/'"),
            "{s3}"
        );
        assert!(s3.contains("FROM glue_recon.diffs_p_now ORDER BY"), "{s3}");
        // The stack's ledger database, whatever it was deployed with.
        let named = Alert::for_reports(&[(&report, &s3_loc)], "analytics_recon").message;
        assert!(
            named.contains("CREATE EXTERNAL TABLE IF NOT EXISTS analytics_recon.diffs_p_now")
                && named.contains("FROM analytics_recon.diffs_p_now ORDER BY")
                && !named.contains("glue_recon."),
            "{named}"
        );
        // Athena cannot read a local folder: a local run gets a read_parquet query of
        // its diffs.parquet by absolute path, quotes doubled.
        let local = Alert::for_reports(
            &[(
                &report,
                &ReportLocation::of("out/it's/p/r1".into(), &report.artifacts),
            )],
            DEFAULT_ATHENA_DATABASE,
        )
        .message;
        assert!(local.contains("offending keys (DuckDB):"), "{local}");
        assert!(!local.contains("CREATE EXTERNAL TABLE"), "{local}");
        let cwd = std::env::current_dir().unwrap();
        let wanted = format!(
            "FROM read_parquet('{}/out/it''s/p/r1/diffs.parquet') ORDER BY diff_type, \"partition\", \"key_id\" LIMIT 1000;",
            cwd.display()
        );
        assert!(local.contains(&wanted), "{local}\nwanted: {wanted}");
    }

    #[test]
    fn subjects_are_short_ascii_single_lines() {
        let s = subject_text(&format!(
            "glue-recon FAIL: {}\nsecond line é",
            "x".repeat(200)
        ));
        assert!(s.len() <= SUBJECT_MAX, "{}", s.len());
        assert!(s.chars().all(|c| c.is_ascii() && !c.is_ascii_control()));
        assert_eq!(subject_text("ok é\n"), "ok   ");
    }

    #[test]
    fn a_run_over_many_pairs_is_cut_at_whole_lines_worst_first() {
        let reports: Vec<Report> = (0..400)
            .map(|i| {
                let mut r = recon_engine::test_support::one_partition_report(if i % 2 == 0 {
                    3
                } else {
                    0
                });
                r.pair = format!("pair{i:03}");
                if i % 2 == 1 {
                    r.status = Status::Pass;
                }
                r
            })
            .collect();
        let locs: Vec<ReportLocation> = reports
            .iter()
            .map(|r| ReportLocation::of(format!("s3://b/reports/{}/now", r.pair), &r.artifacts))
            .collect();
        let refs: Vec<WrittenReport<'_>> = reports.iter().zip(&locs).collect();
        let alert = Alert::for_reports(&refs, DEFAULT_ATHENA_DATABASE)
            .with_dashboard("s3://b/dashboard/index.html");
        let m = &alert.message;
        assert!(m.len() <= ALERT_MESSAGE_MAX, "{}", m.len());
        assert!(
            m.starts_with("glue-recon reconciliation: FAIL (400 pairs)"),
            "{m}"
        );
        // The worst lead: the first section is a failing pair's.
        let first = m.lines().nth(2).unwrap();
        assert!(first.starts_with("FAIL pair000"), "{first}");
        let note = m.lines().rev().nth(1).unwrap();
        assert!(
            note.starts_with("... ") && note.contains("more lines left out"),
            "{note}"
        );
        assert!(
            m.ends_with("dashboard: s3://b/dashboard/index.html\n"),
            "{m}"
        );
        let left_out: usize = note.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(left_out > 0, "{note}");
        // Cut at a line end: the line before the note is a whole line of a section.
        let before = m.lines().rev().nth(2).unwrap();
        assert!(before.starts_with("  ") || before.is_empty(), "{before}");
    }
}
