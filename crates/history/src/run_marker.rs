//! Markers of runs being recorded: `<root>/in-progress/<run_id>.json`, written before a
//! run's first report and deleted once its last ledger row is written. A marker that
//! is still there when the dashboard is built is a run that was stopped (Ctrl-C, a
//! killed process, a lost machine) or is still running: the dashboard lists it, with
//! the pairs the ledger has of it and the ones it does not, so a report without a
//! ledger entry never passes unnoticed.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::ledger::{LedgerProblem, LedgerRun, read_objects};
use recon_engine::error::{ReconError, Result};
use recon_engine::layout::IN_PROGRESS_DIR;
use recon_engine::storage::Storage;

/// A run being recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMarker {
    /// The run id.
    pub run_id: String,
    /// When it started (RFC 3339 UTC).
    pub started_at: String,
    /// The pairs it was to reconcile.
    pub pairs: Vec<String>,
}

impl RunMarker {
    /// The marker's URI under `root`.
    pub fn uri(&self, root: &str) -> String {
        Storage::join(root, &format!("{IN_PROGRESS_DIR}/{}.json", self.run_id))
    }

    /// Write the marker (before the run writes anything else).
    pub async fn write(&self, storage: &Storage, root: &str) -> Result<()> {
        let uri = self.uri(root);
        let json = serde_json::to_vec(self).map_err(|e| ReconError::Write {
            target: uri.clone(),
            reason: e.to_string(),
        })?;
        storage.for_uri(&uri)?.put(&uri, Bytes::from(json)).await
    }

    /// Delete the marker: the run is wholly recorded.
    pub async fn remove(&self, storage: &Storage, root: &str) -> Result<()> {
        let uri = self.uri(root);
        storage.for_uri(&uri)?.delete(&uri).await
    }
}

/// A run whose marker is still there: stopped before it was wholly recorded, or
/// still running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedRun {
    /// The marker.
    pub marker: RunMarker,
    /// Its pairs that have ledger rows of this run.
    pub recorded: Vec<String>,
    /// Its pairs that have none (a report may have been written without its rows).
    pub unrecorded: Vec<String>,
}

impl UnfinishedRun {
    /// One line for people.
    pub fn describe(&self) -> String {
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        format!(
            "run {} (started {}) was not wholly recorded: it was stopped, or is still running; pairs in the ledger: {}; pairs not recorded: {}",
            self.marker.run_id,
            self.marker.started_at,
            list(&self.recorded),
            list(&self.unrecorded)
        )
    }
}

/// The runs under `root` whose markers are still there, against the ledger's `runs`;
/// markers that cannot be read are returned as problems.
pub(crate) async fn unfinished_runs(
    storage: &Storage,
    root: &str,
    runs: &[LedgerRun],
) -> Result<(Vec<UnfinishedRun>, Vec<LedgerProblem>)> {
    let (markers, problems) = read_objects(storage, root, IN_PROGRESS_DIR, ".json", |d| {
        serde_json::from_slice::<RunMarker>(d)
            .map_err(|e| ReconError::InvalidInput(format!("not a run marker: {e}")))
    })
    .await?;
    let mut out: Vec<UnfinishedRun> = markers
        .into_iter()
        .map(|marker| {
            let (recorded, unrecorded) = marker.pairs.iter().cloned().partition(|p| {
                runs.iter()
                    .any(|r| r.run_id == marker.run_id && &r.pair == p)
            });
            UnfinishedRun {
                marker,
                recorded,
                unrecorded,
            }
        })
        .collect();
    out.sort_by(|a, b| a.marker.started_at.cmp(&b.marker.started_at));
    Ok((out, problems))
}
