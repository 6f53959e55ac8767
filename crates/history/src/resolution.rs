//! Resolutions: how a mismatch gets closed without editing history.
//!
//! `glue-recon resolve` appends one JSON object per resolution under
//! `<root>/resolutions/resolved_date=YYYY-MM-DD/<pair>-<time>-<id>.json` (one JSON
//! document on one line, so Athena's JSON SerDe can read the folder too). A
//! resolution names a pair, a run and optionally partitions; it covers the
//! findings of those ledger rows. Nothing is ever rewritten: a new key per record.
//!
//! Open mismatches (`open_findings`) are the findings of the latest run of each
//! pair that no resolution covers; a partition that could not be reconciled counts
//! as one open finding, so an incomplete run is never "clean".

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::ledger::{Accepted, LedgerProblem, LedgerRead, LedgerRow, LedgerRun, read_objects};
use recon_engine::error::{ReconError, Result};
use recon_engine::layout::RESOLUTIONS_DIR;
use recon_engine::storage::Storage;

/// Version of the resolution record.
pub(crate) const RESOLUTION_SCHEMA_VERSION: u32 = 1;

/// One resolution record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    /// Schema version of the record.
    pub schema_version: u32,
    /// The pair.
    pub pair: String,
    /// The run whose findings are resolved.
    pub run_id: String,
    /// The partitions resolved (empty: every partition of the run).
    #[serde(default)]
    pub partitions: Vec<String>,
    /// When it was resolved (RFC 3339 UTC).
    pub resolved_at: String,
    /// Who resolved it.
    pub resolved_by: String,
    /// Why (the fix, the ticket, the accepted difference).
    pub note: String,
    /// Findings covered when it was recorded.
    pub findings: u64,
    /// Start of the unbroken streak of runs with findings that this closes.
    pub open_since: String,
    /// Seconds from `open_since` to `resolved_at`.
    pub time_to_resolve_seconds: i64,
    /// The difference is accepted as the pair's new normal (`resolve --accept`): the
    /// run joins the pair's drift baseline. A resolution that fixed the data leaves
    /// the run out of it.
    #[serde(default)]
    pub accepted: bool,
}

impl Resolution {
    /// Whether this resolution covers a ledger row.
    pub fn covers(&self, row: &LedgerRow) -> bool {
        self.pair == row.pair
            && self.run_id == row.run_id
            && (self.partitions.is_empty() || self.partitions.contains(&row.partition))
    }
}

/// What the accepted ones of `resolutions` make the new normal, for a ledger read.
pub fn accepted(resolutions: &[Resolution]) -> Accepted {
    Accepted::new(
        resolutions
            .iter()
            .filter(|r| r.accepted)
            .map(|r| (r.pair.clone(), r.run_id.clone(), r.partitions.clone())),
    )
}

/// What a person asks to resolve.
#[derive(Debug, Clone)]
pub struct ResolveRequest {
    /// The pair.
    pub pair: String,
    /// The run (default: the pair's latest run in the ledger).
    pub run_id: Option<String>,
    /// Partitions (default: all of the run).
    pub partitions: Vec<String>,
    /// Who.
    pub by: String,
    /// Why.
    pub note: String,
    /// Accept the difference as the new normal (see [`Resolution::accepted`]).
    pub accepted: bool,
}

/// Every resolution under `root`, oldest first, and the objects that could not be read.
pub async fn read_resolutions(
    storage: &Storage,
    root: &str,
) -> Result<(Vec<Resolution>, Vec<LedgerProblem>)> {
    let (mut out, problems) = read_objects(storage, root, RESOLUTIONS_DIR, ".json", |d| {
        let r: Resolution = serde_json::from_slice(d)
            .map_err(|e| ReconError::InvalidInput(format!("not a resolution record: {e}")))?;
        if r.schema_version != RESOLUTION_SCHEMA_VERSION {
            return Err(ReconError::InvalidInput(format!(
                "resolution schema version {} is not known to glue-recon {} (it reads version {RESOLUTION_SCHEMA_VERSION})",
                r.schema_version,
                recon_engine::ENGINE_VERSION
            )));
        }
        Ok(r)
    })
    .await?;
    out.sort_by(|a, b| a.resolved_at.cmp(&b.resolved_at));
    Ok((out, problems))
}

/// Start of the unbroken streak of non-clean runs of the pair (restricted to
/// `partitions` when given) that ends with `mine[end]`; `mine` are the pair's runs,
/// oldest first. Restricted to partitions, an older run's rows are read back.
async fn open_since(
    storage: &Storage,
    ledger: &LedgerRead,
    mine: &[&LedgerRun],
    end: usize,
    partitions: &[String],
) -> Result<String> {
    let mut start = end;
    while start > 0 {
        let earlier = mine[start - 1];
        let dirty = if partitions.is_empty() {
            earlier.findings > 0 || earlier.failed_partitions > 0
        } else {
            ledger
                .partitions_of(storage, earlier)
                .await?
                .iter()
                .filter(|p| partitions.contains(&p.partition))
                .any(|p| p.findings() > 0 || p.failed())
        };
        if !dirty {
            break;
        }
        start -= 1;
    }
    Ok(mine
        .get(start)
        .map(|r| r.run_time.clone())
        .unwrap_or_default())
}

fn seconds_between(from: &str, to: &str) -> i64 {
    match (
        chrono::DateTime::parse_from_rfc3339(from),
        chrono::DateTime::parse_from_rfc3339(to),
    ) {
        (Ok(a), Ok(b)) => (b - a).num_seconds().max(0),
        _ => 0,
    }
}

/// The pair's runs among `runs` (their indexes, oldest first) and which of them the
/// request names: `--run`, else the latest. An unknown pair or run is an
/// [`ReconError::InvalidInput`] that lists what exists.
fn requested_run(req: &ResolveRequest, runs: &[LedgerRun]) -> Result<(Vec<usize>, usize)> {
    let mine: Vec<usize> = (0..runs.len())
        .filter(|&i| runs[i].pair == req.pair)
        .collect();
    if mine.is_empty() {
        let pairs: std::collections::BTreeSet<&str> =
            runs.iter().map(|r| r.pair.as_str()).collect();
        return Err(ReconError::InvalidInput(format!(
            "no pair `{}` in the ledger (pairs with runs: {})",
            req.pair,
            if pairs.is_empty() {
                "none; run glue-recon first".to_string()
            } else {
                pairs.into_iter().collect::<Vec<_>>().join(", ")
            }
        )));
    }
    let at = match &req.run_id {
        Some(id) => mine
            .iter()
            .position(|&i| &runs[i].run_id == id)
            .ok_or_else(|| {
                let recent: Vec<&str> = mine
                    .iter()
                    .rev()
                    .take(10)
                    .map(|&i| runs[i].run_id.as_str())
                    .collect();
                ReconError::InvalidInput(format!(
                    "pair `{}` has no run `{id}` in the ledger (latest runs: {})",
                    req.pair,
                    recent.join(", ")
                ))
            })?,
        None => mine.len() - 1,
    };
    Ok((mine, at))
}

/// The findings of `rows` (a run's partition rows) a request covers; a partition it
/// names that the run does not have is an [`ReconError::InvalidInput`] listing them.
fn covered_findings(req: &ResolveRequest, run: &LedgerRun, rows: &[LedgerRow]) -> Result<u64> {
    for p in &req.partitions {
        if !rows.iter().any(|r| &r.partition == p) {
            let known: Vec<&str> = rows.iter().map(|r| r.partition.as_str()).collect();
            return Err(ReconError::InvalidInput(format!(
                "run `{}` of pair `{}` has no partition `{p}` (it has: {})",
                run.run_id,
                req.pair,
                known.join(", ")
            )));
        }
    }
    let findings: u64 = rows
        .iter()
        .filter(|p| req.partitions.is_empty() || req.partitions.contains(&p.partition))
        .map(|p| p.findings() + u64::from(p.failed()))
        .sum();
    if findings == 0 {
        return Err(ReconError::InvalidInput(format!(
            "run `{}` of pair `{}` has no findings{}; nothing to resolve",
            run.run_id,
            req.pair,
            if req.partitions.is_empty() {
                String::new()
            } else {
                format!(" in {}", req.partitions.join(", "))
            }
        )));
    }
    Ok(findings)
}

/// Check a request against `ledger` (the ledger under the root `storage` reads) and
/// build its record, resolved at `now`. An unknown pair, run or partition, or a run
/// with nothing to resolve, is an [`ReconError::InvalidInput`] that lists what exists.
pub async fn prepare(
    storage: &Storage,
    ledger: &LedgerRead,
    req: &ResolveRequest,
    now: &str,
) -> Result<Resolution> {
    let (indexes, at) = requested_run(req, &ledger.runs)?;
    let mine: Vec<&LedgerRun> = indexes.iter().map(|&i| &ledger.runs[i]).collect();
    let run = mine[at];
    let rows = ledger.partitions_of(storage, run).await?;
    let findings = covered_findings(req, run, &rows)?;
    if req.by.trim().is_empty() || req.note.trim().is_empty() {
        return Err(ReconError::InvalidInput(
            "a resolution needs --by (who) and --note (why)".into(),
        ));
    }
    let since = open_since(storage, ledger, &mine, at, &req.partitions).await?;
    Ok(Resolution {
        schema_version: RESOLUTION_SCHEMA_VERSION,
        pair: req.pair.clone(),
        run_id: run.run_id.clone(),
        partitions: req.partitions.clone(),
        resolved_at: now.to_string(),
        resolved_by: req.by.clone(),
        note: req.note.clone(),
        findings,
        time_to_resolve_seconds: seconds_between(&since, now),
        open_since: since,
        accepted: req.accepted,
    })
}

/// Write a resolution as a new object (its key is unique to the record: time and a
/// hash of its content) and return the URI. Existing objects are never touched.
pub(crate) async fn write_resolution(
    storage: &Storage,
    root: &str,
    r: &Resolution,
) -> Result<String> {
    use sha2::{Digest, Sha256};
    let json = serde_json::to_string(r).map_err(|e| ReconError::Write {
        target: RESOLUTIONS_DIR.into(),
        reason: e.to_string(),
    })?;
    let digest = Sha256::digest(format!("{json}{}", std::process::id()).as_bytes());
    let id: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let stamp: String = r
        .resolved_at
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let uri = Storage::join(
        root,
        &format!(
            "{RESOLUTIONS_DIR}/resolved_date={}/{}-{stamp}-{id}.json",
            r.resolved_at.get(..10).unwrap_or("unknown"),
            r.pair
        ),
    );
    storage
        .for_uri(&uri)?
        .put(&uri, Bytes::from(format!("{json}\n")))
        .await?;
    Ok(uri)
}

/// What [`resolve`] did.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The record appended.
    pub record: Resolution,
    /// Its URI.
    pub uri: String,
    /// The ledger as read to check the request: the dashboard refreshes it
    /// ([`crate::ledger::refresh_ledger`]) instead of reading it again.
    pub ledger: LedgerRead,
}

/// Resolve: check the request against `ledger` (the ledger under `root`, as read),
/// append the record.
pub async fn resolve(
    storage: &Storage,
    root: &str,
    ledger: LedgerRead,
    req: &ResolveRequest,
) -> Result<Resolved> {
    let record = prepare(storage, &ledger, req, &recon_engine::report::now_rfc3339()).await?;
    let uri = write_resolution(storage, root, &record).await?;
    Ok(Resolved {
        record,
        uri,
        ledger,
    })
}

/// Open findings of one pair: its latest run, per partition.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenPair {
    /// The pair.
    pub pair: String,
    /// Its latest run.
    pub run_id: String,
    /// Open findings (a failed partition counts one).
    pub open: u64,
    /// Findings covered by resolutions.
    pub resolved: u64,
}

/// Open findings of the latest run of every pair, not covered by a resolution.
pub(crate) fn open_findings(runs: &[LedgerRun], resolutions: &[Resolution]) -> Vec<OpenPair> {
    let mut latest: std::collections::BTreeMap<&str, &LedgerRun> = Default::default();
    for r in runs {
        latest.insert(r.pair.as_str(), r); // runs are oldest first
    }
    latest
        .into_values()
        .map(|run| {
            let (mut open, mut resolved) = (0, 0);
            for p in &run.partitions {
                let n = p.findings() + u64::from(p.failed());
                if resolutions.iter().any(|r| r.covers(p)) {
                    resolved += n;
                } else {
                    open += n;
                }
            }
            OpenPair {
                pair: run.pair.clone(),
                run_id: run.run_id.clone(),
                open,
                resolved,
            }
        })
        .collect()
}
