//! The catalog port: what the engine asks of a data catalog (the Glue Data Catalog in
//! AWS, `recon_aws::glue::GlueCatalog`). Like [`crate::storage::ObjectStore`], the
//! engine holds it as a trait object, so it runs without the AWS SDK's types.

use std::collections::HashMap;

use futures::future::BoxFuture;

use crate::error::Result;
use crate::table::TableListing;

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
}
