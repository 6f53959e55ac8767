//! What the terminal shows after each pair and at the end of a run: the verdict and
//! its reasons, the counts, the columns and values that differ, where to look next.
//! Each thing is said once; the alert that is published carries the same facts.

use glue_recon::hints::hint_lines;
use glue_recon::layout::ReportLocation;
use glue_recon::partial::FindingKind;
use glue_recon::report::NotRun;
use glue_recon::report::{Report, Sample};
use glue_recon::report::{count, thousands};

/// Mismatched rows whose values are shown.
const MISMATCHES_SHOWN: usize = 3;
/// Root-cause hints shown per pair.
const HINTS_SHOWN: usize = 3;
/// Keys shown per other finding kind.
const KEYS_SHOWN: usize = 3;
/// Characters of a value shown (the report has more, diffs.parquet all).
const VALUE_CHARS: usize = 40;

/// A value as the terminal shows it: NULL bare, text quoted (so '' is visibly not
/// NULL), long text cut; `chars` is the whole length of a value the report cut.
fn shown(v: &Option<String>, chars: Option<u64>) -> String {
    match v {
        None => "NULL".into(),
        Some(s) if chars.is_some() || s.chars().count() > VALUE_CHARS => {
            let cut: String = s.chars().take(VALUE_CHARS).collect();
            let whole = chars.unwrap_or(s.chars().count() as u64);
            format!("'{cut}...' ({} chars)", thousands(whole))
        }
        Some(s) => format!("'{s}'"),
    }
}

fn key_text(s: &Sample) -> String {
    let key: Vec<String> = s
        .key
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("NULL")))
        .collect();
    if s.partition.is_empty() {
        key.join(" ")
    } else {
        format!("{} [{}]", key.join(" "), s.partition)
    }
}

/// Print the verdict, the counts, what differs and where the report is.
pub fn print(r: &Report, loc: &ReportLocation, athena_database: &str) {
    let t = &r.totals;
    // An incomplete run's counts are of the partitions it reconciled, and say so.
    let failed = r.partitions.iter().filter(|p| p.error.is_some()).count();
    let of = if failed == 0 {
        count(r.partitions.len(), "partition")
    } else {
        format!(
            "in {} of {} reconciled",
            thousands((r.partitions.len() - failed) as u64),
            count(r.partitions.len(), "partition")
        )
    };
    out!(
        "{} {}{}  ({} source rows, {} target rows, {of})",
        r.status,
        r.pair,
        if r.complete { "" } else { " INCOMPLETE" },
        thousands(t.source_rows),
        thousands(t.target_rows),
    );
    for reason in &r.reasons {
        out!("  - {reason}");
    }
    if let Some(d) = r.drift.as_ref().filter(|d| !d.detected) {
        out!("  vs baseline: {}", d.delta());
    }
    for line in hint_lines(&r.hints, HINTS_SHOWN) {
        out!("  {line}");
    }
    out!("  {:<20} {:>13}", "matched", thousands(t.matched));
    for kind in FindingKind::ALL {
        let n = t.of(kind);
        if n > 0 {
            out!("  {:<20} {:>13}", kind.as_str(), thousands(n));
        }
    }
    if !r.columns.is_empty() {
        let top: Vec<String> = r
            .columns
            .iter()
            .take(5)
            .map(|c| format!("{} ({})", c.column, thousands(c.mismatch)))
            .collect();
        out!("  columns that differ most: {}", top.join(", "));
    }
    for (kind, samples) in &r.samples {
        if samples.is_empty() {
            continue;
        }
        if *kind == FindingKind::Mismatch {
            out!(
                "  mismatched values (first {}):",
                samples.len().min(MISMATCHES_SHOWN)
            );
            for s in samples.iter().take(MISMATCHES_SHOWN) {
                let diffs: Vec<String> = s
                    .diffs
                    .iter()
                    .map(|d| {
                        format!(
                            "{} {} -> {}",
                            d.column,
                            shown(&d.source, d.source_chars),
                            shown(&d.target, d.target_chars)
                        )
                    })
                    .collect();
                out!("    {}: {}", key_text(s), diffs.join("; "));
            }
        } else {
            let keys: Vec<String> = samples.iter().take(KEYS_SHOWN).map(key_text).collect();
            out!("  {} e.g. {}", kind.as_str(), keys.join("; "));
        }
    }
    for p in r.partitions.iter().filter(|p| p.error.is_some()) {
        if let Some(e) = &p.error {
            out!("  partition {} not reconciled: {}", p.partition, e.message);
        }
    }
    if t.findings() > 0 {
        let (engine, query) = glue_recon::history::offending_keys_query(r, loc, athena_database);
        out!("  offending keys ({engine}):");
        for line in query.lines() {
            out!("    {line}");
        }
    }
    out!("  report: {}", loc.html);
}

/// Print a pair that could not run.
pub fn print_not_run(n: &NotRun, record: Option<&str>) {
    out!("ERROR {}  (could not run: {})", n.pair, n.error_type);
    out!("  - {}", n.error);
    if let Some(uri) = record {
        out!("  record: {uri}");
    }
}

/// The run's last line: every configured pair, ERROR included.
pub fn run_line(verdicts: &[(String, String)]) -> String {
    let worst = ["ERROR", "FAIL", "WARN", "PASS"]
        .into_iter()
        .find(|s| verdicts.iter().any(|(_, v)| v == s))
        .unwrap_or("PASS");
    let listed: Vec<String> = verdicts.iter().map(|(p, v)| format!("{p} {v}")).collect();
    format!(
        "run: {worst}, {}: {}",
        count(verdicts.len(), "pair"),
        listed.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_not_null() {
        assert_eq!(shown(&None, None), "NULL");
        assert_eq!(shown(&Some(String::new()), None), "''");
        assert_eq!(shown(&Some("NULL".into()), None), "'NULL'");
        assert!(shown(&Some("x".repeat(5_000_000)), None).len() < 100);
        assert!(shown(&Some("x".repeat(1_000)), Some(5_000_000)).ends_with("(5,000,000 chars)"));
    }

    #[test]
    fn the_run_line_counts_every_pair() {
        let v = |p: &str, s: &str| (p.to_string(), s.to_string());
        let line = run_line(&[v("a", "FAIL"), v("b", "PASS"), v("c", "ERROR")]);
        assert_eq!(line, "run: ERROR, 3 pairs: a FAIL, b PASS, c ERROR");
    }
}
