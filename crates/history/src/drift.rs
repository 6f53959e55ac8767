//! Drift: a pair compared with its own trailing baseline (its last N runs in the
//! ledger that read every partition and were clean or within the band, or whose
//! findings a resolution accepted: [`LedgerRun::joins_baseline`]). A pair that was clean for its whole baseline and now is not, or whose
//! finding rate or row counts moved beyond the configured band, is DRIFT. The check
//! is recorded in the report ([`Report::drift`]) with the delta, and a detected drift
//! raises a PASS to WARN so it alerts.

use crate::ledger::LedgerRun;
use recon_engine::config::Limit;
use recon_engine::report::{DriftCheck, Report, Status};

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// Whether `current` moved beyond `band` from `baseline`. A percentage band is
/// relative (`rows`) or in percentage points (`rate`); a count band is absolute.
fn beyond(band: &Limit, baseline: f64, current: f64, relative: bool) -> bool {
    let delta = (current - baseline).abs();
    match band {
        Limit::Count(n) => delta > *n as f64,
        Limit::Percent(p) if relative => {
            if baseline == 0.0 {
                current != 0.0
            } else {
                delta * 100.0 / baseline > *p
            }
        }
        Limit::Percent(p) => delta > *p,
        Limit::Unlimited => false,
    }
}

/// Compare a run of a pair (its report, with counts) with `history`: earlier runs of
/// the same pair, oldest first. Only the last `baseline_runs` runs are used.
pub fn check(
    report: &Report,
    history: &[LedgerRun],
    baseline_runs: usize,
    band: &Limit,
) -> DriftCheck {
    let earlier: Vec<&LedgerRun> = history
        .iter()
        .filter(|r| r.pair == report.pair && r.run_id != report.run_id)
        .collect();
    let qualifying: Vec<&LedgerRun> = earlier
        .iter()
        .copied()
        .filter(|r| r.joins_baseline())
        .collect();
    let baseline = &qualifying[qualifying.len().saturating_sub(baseline_runs)..];
    let t = &report.totals;
    let findings = t.findings();
    let failed = report
        .partitions
        .iter()
        .filter(|p| p.error.is_some())
        .count();
    let clean_now = findings == 0 && report.complete && failed == 0;
    let rate = if t.source_rows == 0 {
        if findings == 0 { 0.0 } else { 100.0 }
    } else {
        findings as f64 * 100.0 / t.source_rows as f64
    };
    let mut d = DriftCheck {
        baseline_runs: baseline.len(),
        left_out_runs: earlier.len() - qualifying.len(),
        baseline_clean_runs: baseline.iter().filter(|r| r.clean()).count(),
        band: band.to_string(),
        detected: false,
        reasons: Vec::new(),
        baseline_finding_rate: mean(baseline.iter().map(|r| r.finding_rate())),
        finding_rate: rate,
        baseline_findings: mean(baseline.iter().map(|r| r.findings as f64)),
        baseline_source_rows: mean(baseline.iter().map(|r| r.source_rows as f64)),
        baseline_target_rows: mean(baseline.iter().map(|r| r.target_rows as f64)),
    };
    if baseline.is_empty() {
        return d;
    }
    if d.baseline_clean_runs == baseline.len() && !clean_now {
        d.reasons.push(format!(
            "clean for the last {}, now {}{}",
            recon_engine::report::count(baseline.len(), "run"),
            recon_engine::report::count(findings as usize, "finding"),
            if report.complete {
                ""
            } else {
                " and incomplete"
            }
        ));
    }
    // Findings only drift upwards: fewer findings than the baseline is a fix, not
    // an alarm. (Row counts drift both ways.)
    let rate_band = match band {
        Limit::Count(_) => {
            findings as f64 > d.baseline_findings
                && beyond(band, d.baseline_findings, findings as f64, false)
        }
        Limit::Percent(_) => {
            rate > d.baseline_finding_rate && beyond(band, d.baseline_finding_rate, rate, false)
        }
        Limit::Unlimited => false,
    };
    if rate_band {
        d.reasons.push(format!(
            "finding rate {:.3}% vs baseline {:.3}% ({:+.3} pp, band {band}); findings {} vs {}",
            rate,
            d.baseline_finding_rate,
            rate - d.baseline_finding_rate,
            recon_engine::report::thousands(findings),
            recon_engine::report::thousands(d.baseline_findings.round() as u64)
        ));
    }
    for (side, base, now) in [
        ("source", d.baseline_source_rows, t.source_rows),
        ("target", d.baseline_target_rows, t.target_rows),
    ] {
        if beyond(band, base, now as f64, true) {
            let pct = if base == 0.0 {
                f64::INFINITY
            } else {
                (now as f64 - base) * 100.0 / base
            };
            d.reasons.push(format!(
                "{side} rows {} vs baseline {} ({pct:+.2}%, band {band})",
                recon_engine::report::thousands(now),
                recon_engine::report::thousands(base.round() as u64)
            ));
        }
    }
    d.detected = !d.reasons.is_empty();
    d
}

/// Check a report against its history, record the check in the report, and make a
/// detected drift at least WARN with a `drift: ...` reason.
pub fn apply(report: &mut Report, history: &[LedgerRun], baseline_runs: usize, band: &Limit) {
    let d = check(report, history, baseline_runs, band);
    if d.detected {
        report.status = report.status.max(Status::Warn);
        report.reasons.push(d.summary());
    }
    report.drift = Some(d);
}

#[cfg(test)]
mod tests {
    use super::*;
    use recon_engine::test_support::one_partition_report as report;

    fn earlier(findings: u64) -> LedgerRun {
        LedgerRun {
            run_id: "before".into(),
            run_time: "2026-01-01T00:00:00Z".into(),
            pair: "p".into(),
            status: "FAIL".into(),
            complete: true,
            drift: None,
            report_uri: "r".into(),
            source_rows: 1000,
            target_rows: 1000,
            findings,
            failed_partitions: 0,
            partitions: Vec::new(),
            accepted_findings: 0,
        }
    }

    #[test]
    fn fewer_findings_than_the_baseline_is_not_drift() {
        let band = Limit::Percent(0.5);
        assert!(!check(&report(1), &[earlier(100)], 7, &band).detected);
        assert!(check(&report(100), &[earlier(1)], 7, &band).detected);
    }
}
