//! The short summary printed after a pair's run.

use glue_recon::partial::FindingKind;
use glue_recon::report::Report;
use glue_recon::runner::ReportLocation;

/// Print the verdict, the counts, the top columns and where the report is.
pub fn print(r: &Report, loc: &ReportLocation) {
    let t = &r.totals;
    out!(
        "{} {}{}  ({} source rows, {} target rows, {} partitions)",
        r.status,
        r.pair,
        if r.complete { "" } else { " INCOMPLETE" },
        t.source_rows,
        t.target_rows,
        r.partitions.len()
    );
    for reason in &r.reasons {
        out!("  - {reason}");
    }
    out!("  {:<20} {:>12}", "finding", "keys");
    out!("  {:<20} {:>12}", "matched", t.matched);
    for kind in FindingKind::ALL {
        out!("  {:<20} {:>12}", kind.as_str(), t.of(kind));
    }
    if !r.columns.is_empty() {
        let top: Vec<String> = r
            .columns
            .iter()
            .take(5)
            .map(|c| format!("{} ({})", c.column, c.mismatch))
            .collect();
        out!("  columns that differ most: {}", top.join(", "));
    }
    for p in r.partitions.iter().filter(|p| p.error.is_some()) {
        if let Some(e) = &p.error {
            out!("  partition {} not reconciled: {}", p.partition, e.message);
        }
    }
    out!("  report: {}", loc.html);
}
