//! The catalog port: what the engine asks of a data catalog (the Glue Data Catalog in
//! AWS, `recon_aws::glue::GlueCatalog`). Like [`crate::storage::ObjectStore`], the
//! engine holds it as a trait object, so it runs without the AWS SDK's types.

use std::collections::HashMap;

use futures::future::BoxFuture;

use crate::config::PairConfig;
use crate::error::{ReconError, Result};
use crate::report::Report;
use crate::table::{Location, TableListing};

/// A data catalog that resolves `glue://database/table` to files, and tells the
/// arguments of the job runs that write its tables.
pub trait Catalog: Send + Sync {
    /// The arguments of run `run_id` of Glue job `job` (`--partitions` ->
    /// `dt=2024-01-01`), as the run was started with them.
    fn job_run_arguments<'a>(
        &'a self,
        job: &'a str,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<HashMap<String, String>>>;

    /// Resolve a table (and its partitions matching `filter`, in Glue expression
    /// syntax, and, when `partitions` is given, only those of these labels,
    /// `dt=2024-01-01/region=eu`) to its files.
    fn resolve<'a>(
        &'a self,
        database: &'a str,
        table: &'a str,
        filter: Option<&'a str>,
        partitions: Option<&'a [String]>,
    ) -> BoxFuture<'a, Result<TableListing>>;

    /// Set `parameters` on table `database.table`, keeping its other parameters and
    /// everything else about it as it is.
    fn set_table_parameters<'a>(
        &'a self,
        database: &'a str,
        table: &'a str,
        parameters: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<()>>;
}

/// The prefix of the table parameters [`record_statuses`] writes.
pub const STATUS_PARAMETER_PREFIX: &str = "glue_recon.";

/// The table parameters of a report's verdict: `glue_recon.last_status`,
/// `glue_recon.last_run_id` and `glue_recon.last_run_at` (when it finished, RFC 3339).
pub fn status_parameters(report: &Report) -> Vec<(String, String)> {
    [
        ("last_status", report.status.to_string()),
        ("last_run_id", report.run_id.clone()),
        ("last_run_at", report.finished_at.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (format!("{STATUS_PARAMETER_PREFIX}{k}"), v))
    .collect()
}

/// Write the verdict of each report on the target table of its pair when the pair
/// opts in (`catalog_status`, a glue:// target); reports of other pairs are skipped.
pub async fn record_statuses<'a>(
    catalog: Option<&dyn Catalog>,
    pairs: &[&PairConfig],
    reports: impl IntoIterator<Item = &'a Report>,
) -> Result<()> {
    for report in reports {
        let Some(pair) = pairs
            .iter()
            .find(|p| p.name == report.pair && p.catalog_status)
        else {
            continue;
        };
        let Location::Glue { database, table } = Location::parse(&pair.target)? else {
            continue;
        };
        let catalog = catalog.ok_or_else(|| {
            ReconError::InvalidInput(format!(
                "pair {}: `catalog_status` writes to the Glue Data Catalog, which this run has no client for",
                pair.name
            ))
        })?;
        catalog
            .set_table_parameters(&database, &table, &status_parameters(report))
            .await?;
    }
    Ok(())
}
