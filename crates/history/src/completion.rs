//! The "Reconciliation Completed" event: one per pair at the end of every run, for
//! other automation (a Glue workflow, a ticket) to react to through an EventBridge
//! rule. It carries the verdict, the counts and where the report is; never a value
//! of a row, so masked columns cannot leak through it. [`EventSink`] is the port
//! the merge and the CLI send them through (`recon_aws::events` puts them on a bus).

use futures::future::BoxFuture;
use serde::Serialize;

use recon_engine::error::Result;
use recon_engine::layout::ReportLocation;
use recon_engine::partial::Totals;
use recon_engine::report::{NotRun, Report};

/// The events' `source`.
pub const SOURCE: &str = "glue-recon";
/// The events' `detail-type`.
pub const DETAIL_TYPE: &str = "Reconciliation Completed";
/// The longest error text an event carries.
const ERROR_MAX: usize = 1024;

/// The `detail` of a "Reconciliation Completed" event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completed {
    /// The pair.
    pub pair: String,
    /// The run id.
    pub run_id: String,
    /// `PASS`, `WARN`, `FAIL`, or `ERROR` when the pair could not run.
    pub status: String,
    /// Whether every partition was reconciled (false for `ERROR`).
    pub complete: bool,
    /// What started the run (`on-demand`, `glue:<job>:<run id>`).
    pub trigger: String,
    /// The source and target tables (absent for `ERROR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The target table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The counts (absent for `ERROR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Totals>,
    /// report.json (absent for `ERROR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_uri: Option<String>,
    /// report.html.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html_uri: Option<String>,
    /// Why the pair could not run (`ERROR`): the error type and its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// The error, cut to 1 KiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The events of a run: one per reported pair, then one per pair that could not run
/// (its `trigger` is `trigger`).
pub fn completed(
    run_id: &str,
    trigger: &str,
    reports: &[(Report, ReportLocation)],
    not_run: &[NotRun],
) -> Vec<Completed> {
    let reported = reports.iter().map(|(r, loc)| Completed {
        pair: r.pair.clone(),
        run_id: r.run_id.clone(),
        status: r.status.to_string(),
        complete: r.complete,
        trigger: r.trigger.clone(),
        source: Some(r.source.clone()),
        target: Some(r.target.clone()),
        counts: Some(r.totals),
        report_uri: Some(loc.json.clone()),
        html_uri: Some(loc.html.clone()),
        error_type: None,
        error: None,
    });
    let failed = not_run.iter().map(|n| Completed {
        pair: n.pair.clone(),
        run_id: run_id.to_string(),
        status: n.status.to_string(),
        complete: false,
        trigger: trigger.to_string(),
        source: None,
        target: None,
        counts: None,
        report_uri: None,
        html_uri: None,
        error_type: Some(n.error_type.to_string()),
        error: Some(cut(&n.error, ERROR_MAX)),
    });
    reported.chain(failed).collect()
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Where completion events go (an EventBridge bus in AWS).
pub trait EventSink: Send + Sync {
    /// Send the events, all of them or an error.
    fn send<'a>(&'a self, events: &'a [Completed]) -> BoxFuture<'a, Result<()>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_that_could_not_run_has_an_error_event_cut_to_a_kib() {
        let err = recon_engine::error::ReconError::InvalidInput("é".repeat(2000));
        let events = completed("r1", "on-demand", &[], &[NotRun::new("orders", &err)]);
        assert_eq!(events.len(), 1);
        let e = &events[0];
        assert_eq!((e.status.as_str(), e.complete), ("ERROR", false));
        assert_eq!(e.error_type.as_deref(), Some("InvalidInput"));
        assert!(e.error.as_ref().unwrap().len() <= ERROR_MAX + '…'.len_utf8());
        let json = serde_json::to_value(e).unwrap();
        assert!(json.get("counts").is_none() && json.get("report_uri").is_none());
        assert_eq!(json["run_id"], "r1");
    }
}
