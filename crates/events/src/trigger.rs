//! What `recon-trigger` decides: a Glue Job State Change starts one reconciliation
//! (execution `glue-<jobRunId>`), and an EventBridge Scheduled Event runs the
//! catch-up sweep, because Glue's events are best-effort: for each job of the sweep,
//! the latest successful run that completed within the lookback window is started
//! the same way, with a synthesized Glue Job State Change as input, so a run whose
//! event was lost is reconciled and one already reconciled is not
//! (`ExecutionAlreadyExists`).
//!
//! The trigger speaks to two ports: [`JobRuns`] (Glue's job runs; adapter
//! [`crate::aws::GlueJobs`], feature `aws`) and [`Executions`] (the state machine; adapter
//! [`crate::aws::StepFunctions`]).

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::StreamExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::contract::{GLUE_JOB_STATE_CHANGE, GlueJobEvent, TriggerOutput, execution_name};
use crate::error::{EventError, Result};

/// `2024-01-01T03:00:00Z`: the time format of EventBridge events.
pub fn rfc3339(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The `detail-type` of an EventBridge schedule's events.
pub(crate) const SCHEDULED_EVENT: &str = "Scheduled Event";
/// The `source` of an EventBridge schedule's events.
pub(crate) const SCHEDULED_SOURCE: &str = "aws.events";
/// The environment variable naming the Glue jobs the sweep looks at (comma-separated;
/// the template sets it from `GlueJobNames`, the jobs of the event rule).
pub const SWEEP_GLUE_JOBS: &str = "SWEEP_GLUE_JOBS";
/// The environment variable of the sweep's lookback window, in hours.
pub const SWEEP_LOOKBACK_HOURS: &str = "SWEEP_LOOKBACK_HOURS";
/// The lookback window when [`SWEEP_LOOKBACK_HOURS`] is not set.
pub(crate) const DEFAULT_LOOKBACK_HOURS: u32 = 24;
/// The longest lookback window: Glue keeps job runs for 90 days, and Step Functions
/// refuses a reused execution name for 90 days after the execution closed (beyond
/// that, a sweep could reconcile an old run a second time).
pub const MAX_LOOKBACK_HOURS: u32 = 90 * 24;
/// Job runs per GetJobRuns page.
pub const JOB_RUNS_PER_PAGE: i32 = 50;
/// Jobs swept at once.
const JOBS_IN_FLIGHT: usize = 4;

/// One run of a Glue job, as the sweep and the lookup read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRunInfo {
    /// The run id (`jr_...`).
    pub id: String,
    /// `SUCCEEDED`, `FAILED`, `RUNNING`, ...
    pub state: String,
    /// When it started.
    pub started_on: Option<DateTime<Utc>>,
    /// When it ended.
    pub completed_on: Option<DateTime<Utc>>,
    /// The run's arguments (`--partitions` -> `dt=2024-01-01`).
    pub arguments: HashMap<String, String>,
}

/// One page of a job's runs, newest first as Glue lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobRunsPage {
    /// The runs.
    pub runs: Vec<JobRunInfo>,
    /// The token of the next page, if any.
    pub next_token: Option<String>,
}

/// Glue's job runs.
pub trait JobRuns: Send + Sync {
    /// One page of `job`'s runs (GetJobRuns), from `next_token`.
    fn runs_page<'a>(
        &'a self,
        job: &'a str,
        next_token: Option<String>,
    ) -> BoxFuture<'a, Result<JobRunsPage>>;
}

/// What a start of the state machine did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// A new execution (or, with the same name and input, the running one).
    Started {
        /// Its ARN.
        execution_arn: String,
    },
    /// An execution of that name exists with another input or has ended:
    /// the job run is already reconciled (or being reconciled).
    AlreadyExists,
}

/// The reconcile state machine.
pub trait Executions: Send + Sync {
    /// StartExecution with `name` and `input`.
    fn start<'a>(&'a self, name: &'a str, input: &'a str) -> BoxFuture<'a, Result<Start>>;
}

/// The sweep's settings, read once at cold start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepSettings {
    /// The jobs to sweep.
    pub jobs: Vec<String>,
    /// The lookback window in hours.
    pub lookback_hours: u32,
}

impl SweepSettings {
    /// Settings from the values of [`SWEEP_GLUE_JOBS`] and [`SWEEP_LOOKBACK_HOURS`]
    /// (unset or empty: no jobs, `DEFAULT_LOOKBACK_HOURS`).
    pub fn from_values(jobs: Option<&str>, lookback_hours: Option<&str>) -> Result<SweepSettings> {
        let mut names: Vec<String> = Vec::new();
        for job in jobs.unwrap_or_default().split(',').map(str::trim) {
            if !job.is_empty() && !names.iter().any(|n| n == job) {
                names.push(job.to_string());
            }
        }
        let lookback_hours = match lookback_hours.map(str::trim).filter(|v| !v.is_empty()) {
            None => DEFAULT_LOOKBACK_HOURS,
            Some(v) => v
                .parse::<u32>()
                .ok()
                .filter(|h| (1..=MAX_LOOKBACK_HOURS).contains(h))
                .ok_or_else(|| EventError::InvalidConfig {
                    file: format!("environment variable {SWEEP_LOOKBACK_HOURS}"),
                    message: format!(
                        "`{v}` is not a whole number of hours from 1 to {MAX_LOOKBACK_HOURS} \
                         (the SweepLookbackHours parameter of the template sets it)"
                    ),
                })?,
        };
        Ok(SweepSettings {
            jobs: names,
            lookback_hours,
        })
    }

    /// Settings from the environment.
    pub fn from_env() -> Result<SweepSettings> {
        let jobs = std::env::var(SWEEP_GLUE_JOBS).ok();
        let hours = std::env::var(SWEEP_LOOKBACK_HOURS).ok();
        SweepSettings::from_values(jobs.as_deref(), hours.as_deref())
    }
}

/// An EventBridge schedule's event; only the fields the sweep reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScheduledEvent {
    /// The event id (unique per scheduled event).
    pub id: String,
    /// The scheduled time: the window ends here.
    pub time: DateTime<Utc>,
    /// The account.
    pub account: String,
    /// The region.
    pub region: String,
}

/// A [`ScheduledEvent`] as EventBridge delivers it.
#[derive(Deserialize)]
struct RawScheduledEvent {
    id: String,
    time: String,
    #[serde(default)]
    account: String,
    #[serde(default)]
    region: String,
}

/// The trigger's input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TriggerEvent {
    /// A Glue job run changed state; `input` is the event as delivered (the
    /// execution input).
    GlueJob {
        /// The parsed event.
        event: GlueJobEvent,
        /// The event's JSON text.
        input: String,
    },
    /// The sweep's schedule fired.
    Scheduled(ScheduledEvent),
}

impl TriggerEvent {
    /// Tell a Scheduled Event (`source: aws.events`) from a Glue Job State Change.
    pub fn parse(event: serde_json::Value) -> Result<TriggerEvent> {
        let text = |k: &str| event.get(k).and_then(|v| v.as_str()).map(str::to_string);
        if text("detail-type").as_deref() == Some(SCHEDULED_EVENT) {
            if text("source").as_deref() != Some(SCHEDULED_SOURCE) {
                return Err(EventError::InvalidInput(format!(
                    "a `{SCHEDULED_EVENT}` must come from `{SCHEDULED_SOURCE}`, not `{}`",
                    text("source").unwrap_or_default()
                )));
            }
            let e: RawScheduledEvent = serde_json::from_value(event).map_err(|e| {
                EventError::InvalidInput(format!("not a valid {SCHEDULED_EVENT}: {e}"))
            })?;
            let time = DateTime::parse_from_rfc3339(&e.time)
                .map_err(|err| {
                    EventError::InvalidInput(format!(
                        "the {SCHEDULED_EVENT}'s time `{}` is not an RFC 3339 time: {err}",
                        e.time
                    ))
                })?
                .with_timezone(&Utc);
            return Ok(TriggerEvent::Scheduled(ScheduledEvent {
                id: e.id,
                time,
                account: e.account,
                region: e.region,
            }));
        }
        let input = event.to_string();
        let e: GlueJobEvent = serde_json::from_value(event).map_err(|e| {
            EventError::InvalidInput(format!(
                "neither a {GLUE_JOB_STATE_CHANGE} event nor a {SCHEDULED_EVENT}: {e}"
            ))
        })?;
        if e.detail_type != GLUE_JOB_STATE_CHANGE {
            return Err(EventError::InvalidInput(format!(
                "event detail-type `{}` is neither `{GLUE_JOB_STATE_CHANGE}` nor `{SCHEDULED_EVENT}`",
                e.detail_type
            )));
        }
        Ok(TriggerEvent::GlueJob { event: e, input })
    }
}

/// What the sweep did for one job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SweepOutcome {
    /// The run had no execution; this sweep started one.
    Started {
        /// The run.
        job_run_id: String,
        /// When it completed.
        completed_on: String,
        /// `glue-<jobRunId>`.
        execution_name: String,
        /// The execution started.
        execution_arn: String,
    },
    /// The run's execution exists (its event arrived, or an earlier sweep found it).
    AlreadyReconciled {
        /// The run.
        job_run_id: String,
        /// When it completed.
        completed_on: String,
        /// `glue-<jobRunId>`.
        execution_name: String,
    },
    /// No successful run completed within the window.
    NoRecentSuccessfulRun {
        /// The latest successful run found, completed before the window, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        latest_success_completed_on: Option<String>,
    },
}

/// One job of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSweep {
    /// The Glue job.
    pub job: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: SweepOutcome,
}

/// The sweep's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepOutput {
    /// The window's start: runs completed since then count.
    pub since: String,
    /// The window's end (the schedule's time).
    pub until: String,
    /// Every job swept, in the order configured.
    pub jobs: Vec<JobSweep>,
    /// Jobs whose run this sweep started.
    pub started: usize,
    /// Jobs whose run was already reconciled.
    pub already_reconciled: usize,
    /// Jobs without a successful run in the window.
    pub no_recent_successful_run: usize,
}

/// What the trigger returns: for a Glue event [`TriggerOutput`], for a schedule
/// [`SweepOutput`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum TriggerResult {
    /// A Glue job event.
    Glue(TriggerOutput),
    /// A sweep.
    Sweep(SweepOutput),
}

/// The latest successful run among pages of runs read newest first, and whether
/// another page is needed: reading stops at the first page holding a successful run
/// (later pages hold runs that started earlier) or a run that started before the
/// window (later pages started earlier still).
#[derive(Debug)]
pub(crate) struct LatestSuccess {
    since: DateTime<Utc>,
    best: Option<JobRunInfo>,
    reached_window_start: bool,
}

impl LatestSuccess {
    /// Look for runs that completed at or after `since`.
    pub fn new(since: DateTime<Utc>) -> Self {
        LatestSuccess {
            since,
            best: None,
            reached_window_start: false,
        }
    }

    /// Take one page; true when the next page (if any) must be read.
    pub(crate) fn add_page(&mut self, runs: Vec<JobRunInfo>) -> bool {
        for run in runs {
            if run.started_on.is_some_and(|s| s < self.since) {
                self.reached_window_start = true;
            }
            if run.state != "SUCCEEDED" {
                continue;
            }
            let key = |r: &JobRunInfo| (r.started_on, r.completed_on);
            if self.best.as_ref().is_none_or(|b| key(&run) > key(b)) {
                self.best = Some(run);
            }
        }
        self.best.is_none() && !self.reached_window_start
    }

    /// The latest successful run if it completed within the window, else the
    /// completion time of the latest successful run found (before the window).
    pub fn finish(self) -> std::result::Result<JobRunInfo, Option<DateTime<Utc>>> {
        match self.best {
            Some(run) if run.completed_on.or(run.started_on) >= Some(self.since) => Ok(run),
            Some(run) => Err(run.completed_on),
            None => Err(None),
        }
    }
}

/// The Glue Job State Change EventBridge would have delivered for a successful run,
/// found by the sweep of the scheduled event `at` (its id, account and region).
pub(crate) fn synthesized_event(
    job: &str,
    run: &JobRunInfo,
    at: &ScheduledEvent,
) -> serde_json::Value {
    let time = run.completed_on.unwrap_or(at.time);
    serde_json::json!({
        "version": "0",
        "id": at.id,
        "detail-type": GLUE_JOB_STATE_CHANGE,
        "source": "aws.glue",
        "account": at.account,
        "time": rfc3339(time),
        "region": at.region,
        "resources": [],
        "detail": {
            "jobName": job,
            "severity": "INFO",
            "state": "SUCCEEDED",
            "jobRunId": run.id,
            "message": "Job run succeeded (found by the glue-recon catch-up sweep)",
        },
    })
}

/// recon-trigger's decisions over its two ports.
#[derive(Clone)]
pub struct Trigger {
    /// The reconcile state machine.
    pub executions: Arc<dyn Executions>,
    /// Glue's job runs (the sweep).
    pub job_runs: Arc<dyn JobRuns>,
    /// The sweep's jobs and window.
    pub sweep: SweepSettings,
}

impl Trigger {
    /// Handle one event.
    pub async fn handle(&self, event: serde_json::Value) -> Result<TriggerResult> {
        match TriggerEvent::parse(event)? {
            TriggerEvent::GlueJob { event, input } => self
                .on_glue_event(&event, &input)
                .await
                .map(TriggerResult::Glue),
            TriggerEvent::Scheduled(at) => self.run_sweep(&at).await.map(TriggerResult::Sweep),
        }
    }

    /// Start the execution of a successful run; a run that did not succeed starts
    /// nothing, and an execution that exists is success (a re-delivered event).
    pub(crate) async fn on_glue_event(
        &self,
        event: &GlueJobEvent,
        input: &str,
    ) -> Result<TriggerOutput> {
        let d = &event.detail;
        let name = execution_name(&d.job_run_id);
        if d.state != "SUCCEEDED" {
            tracing::info!(job = %d.job_name, state = %d.state, "not a successful run; nothing started");
            return Ok(TriggerOutput {
                execution_name: name,
                started: false,
                execution_arn: None,
            });
        }
        Ok(match self.executions.start(&name, input).await? {
            Start::Started { execution_arn } => {
                tracing::info!(execution = %name, "started");
                TriggerOutput {
                    execution_name: name,
                    started: true,
                    execution_arn: Some(execution_arn),
                }
            }
            Start::AlreadyExists => {
                tracing::info!(execution = %name, "already started (re-delivered event)");
                TriggerOutput {
                    execution_name: name,
                    started: false,
                    execution_arn: None,
                }
            }
        })
    }

    /// The catch-up sweep of the schedule's event `at`: every job, each on its own
    /// (a job that fails does not stop the others); when any failed, the error names
    /// each failed job, after the others were started.
    pub(crate) async fn run_sweep(&self, at: &ScheduledEvent) -> Result<SweepOutput> {
        let since = at.time - chrono::Duration::hours(i64::from(self.sweep.lookback_hours));
        let results: Vec<(String, Result<SweepOutcome>)> = futures::stream::iter(&self.sweep.jobs)
            .map(|job| async move { (job.clone(), self.sweep_job(job, since, at).await) })
            .buffered(JOBS_IN_FLIGHT)
            .collect()
            .await;
        let mut jobs = Vec::new();
        let mut failed: Vec<(String, EventError)> = Vec::new();
        for (job, result) in results {
            match result {
                Ok(outcome) => {
                    tracing::info!(%job, ?outcome, "swept");
                    jobs.push(JobSweep { job, outcome });
                }
                Err(e) => failed.push((job, e)),
            }
        }
        let count = |f: fn(&SweepOutcome) -> bool| jobs.iter().filter(|j| f(&j.outcome)).count();
        let out = SweepOutput {
            since: rfc3339(since),
            until: rfc3339(at.time),
            started: count(|o| matches!(o, SweepOutcome::Started { .. })),
            already_reconciled: count(|o| matches!(o, SweepOutcome::AlreadyReconciled { .. })),
            no_recent_successful_run: count(|o| {
                matches!(o, SweepOutcome::NoRecentSuccessfulRun { .. })
            }),
            jobs,
        };
        if failed.is_empty() {
            return Ok(out);
        }
        Err(sweep_failure(&out, failed))
    }

    async fn sweep_job(
        &self,
        job: &str,
        since: DateTime<Utc>,
        at: &ScheduledEvent,
    ) -> Result<SweepOutcome> {
        let mut latest = LatestSuccess::new(since);
        let mut token = None;
        loop {
            let page = self.job_runs.runs_page(job, token).await?;
            if !latest.add_page(page.runs) || page.next_token.is_none() {
                break;
            }
            token = page.next_token;
        }
        let run = match latest.finish() {
            Ok(run) => run,
            Err(before) => {
                return Ok(SweepOutcome::NoRecentSuccessfulRun {
                    latest_success_completed_on: before.map(rfc3339),
                });
            }
        };
        let name = execution_name(&run.id);
        let input = synthesized_event(job, &run, at).to_string();
        let completed_on = run.completed_on.map(rfc3339).unwrap_or_default();
        Ok(match self.executions.start(&name, &input).await? {
            Start::Started { execution_arn } => SweepOutcome::Started {
                job_run_id: run.id,
                completed_on,
                execution_name: name,
                execution_arn,
            },
            Start::AlreadyExists => SweepOutcome::AlreadyReconciled {
                job_run_id: run.id,
                completed_on,
                execution_name: name,
            },
        })
    }
}

/// One error for a sweep in which some jobs failed: the first failure's type (an
/// error of configuration or permission before a transient one, so it is not
/// mistaken for something a retry fixes), every failed job named with its error, and
/// what the other jobs did.
fn sweep_failure(out: &SweepOutput, failed: Vec<(String, EventError)>) -> EventError {
    let lines: Vec<String> = failed
        .iter()
        .map(|(job, e)| format!("job `{job}`: {e}"))
        .collect();
    let summary = format!(
        "the sweep failed for {} of {} Glue jobs ({}); the others: {} started, {} already reconciled, {} without a successful run since {}",
        failed.len(),
        failed.len() + out.jobs.len(),
        lines.join("; "),
        out.started,
        out.already_reconciled,
        out.no_recent_successful_run,
        out.since
    );
    let (_, first) = failed
        .into_iter()
        .min_by_key(|(_, e)| matches!(e, EventError::Transient { .. }))
        .expect("at least one failure");
    match first {
        EventError::Transient { resource, .. } => EventError::Transient {
            resource,
            reason: summary,
        },
        EventError::AccessDenied { resource, .. } => EventError::AccessDenied {
            resource,
            reason: summary,
        },
        EventError::InvalidConfig { file, .. } => EventError::InvalidConfig {
            file,
            message: summary,
        },
        EventError::InvalidInput(_) => EventError::InvalidInput(summary),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(h: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + h * 3600, 0).unwrap()
    }

    fn run(id: &str, state: &str, started: i64, completed: i64) -> JobRunInfo {
        JobRunInfo {
            id: id.into(),
            state: state.into(),
            started_on: Some(at(started)),
            completed_on: Some(at(completed)),
            arguments: HashMap::new(),
        }
    }

    #[test]
    fn the_latest_successful_run_wins_whatever_the_order_within_a_page() {
        let mut l = LatestSuccess::new(at(0));
        let more = l.add_page(vec![
            run("old", "SUCCEEDED", 1, 2),
            run("new", "SUCCEEDED", 5, 6),
            run("failed", "FAILED", 7, 8),
        ]);
        assert!(!more, "a page with a successful run ends the search");
        assert_eq!(l.finish().unwrap().id, "new");
    }

    #[test]
    fn pages_are_read_until_a_success_or_the_window_start() {
        let mut l = LatestSuccess::new(at(0));
        assert!(l.add_page(vec![run("r", "RUNNING", 9, 9), run("f", "FAILED", 3, 4)]));
        assert!(
            !l.add_page(vec![run("f2", "FAILED", -2, -1)]),
            "started before the window"
        );
        assert_eq!(l.finish(), Err(None));
        // The latest success completed before the window: reported with its time.
        let mut l = LatestSuccess::new(at(0));
        assert!(!l.add_page(vec![run("s", "SUCCEEDED", -5, -3)]));
        assert_eq!(l.finish(), Err(Some(at(-3))));
    }

    #[test]
    fn lookback_is_validated_and_jobs_are_deduplicated() {
        let s = SweepSettings::from_values(Some(" a, b ,a,,"), None).unwrap();
        assert_eq!(s.jobs, vec!["a", "b"]);
        assert_eq!(s.lookback_hours, DEFAULT_LOOKBACK_HOURS);
        assert_eq!(
            SweepSettings::from_values(None, Some("48"))
                .unwrap()
                .lookback_hours,
            48
        );
        for bad in ["0", "-1", "1.5", "2161", "day"] {
            let err = SweepSettings::from_values(None, Some(bad))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(SWEEP_LOOKBACK_HOURS) && err.contains(bad),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn scheduled_and_glue_events_are_told_apart() {
        let scheduled: serde_json::Value = serde_json::from_str(include_str!(
            "../../../functions/trigger/fixtures/scheduled-event.json"
        ))
        .unwrap();
        let TriggerEvent::Scheduled(s) = TriggerEvent::parse(scheduled.clone()).unwrap() else {
            panic!("a scheduled event")
        };
        assert_eq!(rfc3339(s.time), "2024-01-02T04:00:00Z");
        assert_eq!(s.id, "89d1a02d-5ec7-412e-82f5-13505f849b41");
        let mut spoofed = scheduled;
        spoofed["source"] = "custom.app".into();
        assert!(TriggerEvent::parse(spoofed).is_err());
        let glue: serde_json::Value = serde_json::from_str(include_str!(
            "../../../functions/trigger/fixtures/glue-job-succeeded.json"
        ))
        .unwrap();
        assert!(matches!(
            TriggerEvent::parse(glue).unwrap(),
            TriggerEvent::GlueJob { .. }
        ));
        let err = TriggerEvent::parse(serde_json::json!("warm-up")).unwrap_err();
        assert_eq!(err.error_type(), "InvalidInput");
    }

    /// The synthesized event has the keys of a real one, and lookup reads it as the
    /// same job run.
    #[test]
    fn a_synthesized_event_has_the_shape_of_a_real_one() {
        let real: serde_json::Value = serde_json::from_str(include_str!(
            "../../../functions/trigger/fixtures/glue-job-succeeded.json"
        ))
        .unwrap();
        let at_event = ScheduledEvent {
            id: "e1".into(),
            time: at(10),
            account: "123456789012".into(),
            region: "us-east-1".into(),
        };
        let synth = synthesized_event("load-orders", &run("jr_1", "SUCCEEDED", 1, 2), &at_event);
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&synth), keys(&real));
        assert_eq!(keys(&synth["detail"]), keys(&real["detail"]));
        assert_eq!(synth["time"], rfc3339(at(2)));
        let crate::contract::LookupRequest::GlueJob(e) =
            crate::contract::LookupRequest::parse(synth).unwrap()
        else {
            panic!("a Glue event")
        };
        assert_eq!(
            (e.detail.job_name.as_str(), e.detail.job_run_id.as_str()),
            ("load-orders", "jr_1")
        );
        assert_eq!(e.detail.state, "SUCCEEDED");
    }

    #[test]
    fn a_sweep_failure_names_every_failed_job_and_prefers_a_lasting_error_type() {
        let out = SweepOutput {
            since: "s".into(),
            until: "u".into(),
            jobs: vec![],
            started: 0,
            already_reconciled: 0,
            no_recent_successful_run: 0,
        };
        let err = sweep_failure(
            &out,
            vec![
                (
                    "a".into(),
                    EventError::Transient {
                        resource: "Glue job `a`".into(),
                        reason: "throttled".into(),
                    },
                ),
                (
                    "b".into(),
                    EventError::AccessDenied {
                        resource: "Glue job `b`".into(),
                        reason: "needs glue:GetJobRuns".into(),
                    },
                ),
            ],
        );
        assert_eq!(err.error_type(), "AccessDenied");
        let text = err.to_string();
        assert!(
            text.contains("job `a`")
                && text.contains("job `b`")
                && text.contains("glue:GetJobRuns"),
            "{text}"
        );
    }
}
