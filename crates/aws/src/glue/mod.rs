//! [`GlueCatalog`]: `glue://database/table` resolved through the Glue Data Catalog.
//! GetTable gives the location and the partition keys; GetPartitions (paginated, the
//! pair's partition filter and any requested partitions passed as the Glue
//! `Expression`) gives each partition's
//! values and its own location, which is honoured even when it lies outside the
//! table's location. Files are listed on S3.
//! A table with partition projection has no registered partitions; its files are
//! found by listing the prefixes its projection rules allow (the `projection` module).
//! GetJobRun gives the arguments of a job run (the partitions a run names).

mod projection;

use std::sync::Arc;

use aws_config::SdkConfig;
use aws_sdk_glue::Client;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};

use crate::map_sdk_error;
use projection::Projection;
use recon_aws_client::job_permission_hint;
use recon_engine::catalog::Catalog;
use recon_engine::error::{ReconError, Result};
use recon_engine::partition_filter::Filter;
use recon_engine::storage::{FileRef, ObjectStore, Storage};
use recon_engine::table::{
    PartitionValues, TableFile, TableListing, list_table, parse_relative_path, s3_form,
};

/// Partition folders listed at once.
const LISTINGS_IN_FLIGHT: usize = 16;
/// Partitions per GetPartitions page (Glue's maximum `MaxResults`).
const PARTITIONS_PER_PAGE: i32 = 1000;
/// The longest GetPartitions `Expression` Glue accepts (its documented length
/// constraint).
const MAX_EXPRESSION_CHARS: usize = 2048;
/// Hive's name for a NULL partition value.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// The Glue Data Catalog as a [`Catalog`].
#[derive(Clone)]
pub struct GlueCatalog {
    client: Client,
    storage: Storage,
}

impl GlueCatalog {
    /// A catalog on the given config; table files are listed with
    /// [`super::storage`] on the same config.
    pub fn from_conf(conf: &SdkConfig) -> Self {
        GlueCatalog::new(Client::new(conf), super::storage(conf))
    }

    /// A catalog on an existing client, listing files through `storage`.
    pub fn new(client: Client, storage: Storage) -> Self {
        GlueCatalog { client, storage }
    }

    /// The table `database.table` (GetTable); a missing one is `TableNotFound`.
    async fn get_table(&self, database: &str, table: &str) -> Result<aws_sdk_glue::types::Table> {
        let uri = format!("glue://{database}/{table}");
        let missing = |reason: String| ReconError::TableNotFound {
            location: uri.clone(),
            reason: format!(
                "no table `{table}` in Glue database `{database}` (or no such database): {reason}"
            ),
        };
        let got = self
            .client
            .get_table()
            .database_name(database)
            .name(table)
            .send()
            .await
            .map_err(|e| map_sdk_error(e, &uri, missing))?;
        got.table.ok_or_else(|| ReconError::TableNotFound {
            location: uri,
            reason: "GetTable returned no table".into(),
        })
    }

    async fn resolve_table(
        &self,
        database: &str,
        table: &str,
        filter: Option<&str>,
        requested: Option<&[String]>,
    ) -> Result<TableListing> {
        let uri = format!("glue://{database}/{table}");
        let t = &self.get_table(database, table).await?;
        if let Some(why) = not_plain_parquet(t) {
            return Err(ReconError::InvalidInput(format!(
                "{uri}: {why}; glue-recon reads tables of plain Parquet files"
            )));
        }
        let location = t
            .storage_descriptor()
            .and_then(|sd| sd.location())
            .filter(|l| !l.trim().is_empty())
            .ok_or_else(|| ReconError::TableNotFound {
                location: uri.clone(),
                reason: "the Glue table has no storage location (StorageDescriptor.Location); glue-recon reads tables whose data is on S3".into(),
            })?;
        let location = on_s3(location, &uri)?;
        let keys: Vec<String> = t
            .partition_keys()
            .iter()
            .map(|c| c.name().to_lowercase())
            .collect();
        let store = self.storage.for_uri(&location)?;
        if keys.is_empty() {
            let mut listing = list_table(store.as_ref(), &location, None).await?;
            listing.location = uri;
            return Ok(listing);
        }
        let now = chrono::Utc::now().naive_utc();
        if let Some(projection) =
            Projection::from_table(t.parameters(), &keys, &location, &uri, now)?
        {
            let files =
                projected_files(&projection, store.as_ref(), filter, requested, &uri).await?;
            return Ok(TableListing {
                location: uri,
                partition_columns: keys,
                files,
            });
        }
        let typed: Vec<(String, String)> = t
            .partition_keys()
            .iter()
            .map(|c| {
                (
                    c.name().to_lowercase(),
                    c.r#type().unwrap_or("string").to_ascii_lowercase(),
                )
            })
            .collect();
        let expressions = match requested {
            None => vec![filter.map(str::to_string)],
            Some(labels) => partition_expressions(&typed, labels, filter, &uri)?
                .into_iter()
                .map(Some)
                .collect(),
        };
        let mut partitions = Vec::new();
        for expression in expressions {
            let mut pages = self
                .client
                .get_partitions()
                .database_name(database)
                .table_name(table)
                .set_expression(expression)
                .max_results(PARTITIONS_PER_PAGE)
                .into_paginator()
                .send();
            while let Some(page) = pages.next().await {
                let page = page.map_err(|e| {
                    map_sdk_error(e, &uri, |reason| ReconError::TableNotFound {
                        location: uri.clone(),
                        reason,
                    })
                })?;
                partitions.extend(page.partitions().iter().cloned());
            }
        }
        // Owned (values, location) pairs: the listing futures borrow nothing from
        // the SDK's pages.
        let wanted: Vec<(PartitionValues, String)> = partitions
            .iter()
            .map(|p| {
                let values: PartitionValues = keys
                    .iter()
                    .cloned()
                    .zip(
                        p.values()
                            .iter()
                            .map(|v| (v != HIVE_NULL).then(|| v.clone())),
                    )
                    .collect();
                let part_location = match p.storage_descriptor().and_then(|sd| sd.location()) {
                    Some(l) if !l.trim().is_empty() => on_s3(l, &uri)?,
                    _ => Storage::join(&location, &hive_path(&values)),
                };
                Ok((values, part_location))
            })
            .collect::<Result<_>>()?;
        // A whole-table read lists the table's location once (a LIST per 1,000
        // objects) instead of once per partition; partitions registered outside it,
        // and a few requested ones, are listed on their own.
        let table_root = format!("{}/", location.trim_end_matches('/'));
        let under_table = wanted
            .iter()
            .filter(|(_, l)| l.starts_with(&table_root))
            .count();
        let table_objects = if requested.is_none() && under_table > LISTINGS_IN_FLIGHT {
            Some(Arc::new(store.list(&table_root).await?))
        } else {
            None
        };
        let listed: Vec<Result<Vec<TableFile>>> = futures::stream::iter(wanted)
            .map(|(values, part_location)| {
                let store = store.clone();
                let table_objects = table_objects
                    .clone()
                    .filter(|_| part_location.starts_with(&table_root));
                async move {
                    // A registered partition with no files is an empty partition
                    // of this side: its rows on the other side are missing.
                    let found = match table_objects {
                        Some(all) => {
                            let prefix = format!("{}/", part_location.trim_end_matches('/'));
                            let start = all.partition_point(|o| o.uri < prefix);
                            let objects = all[start..]
                                .iter()
                                .take_while(|o| o.uri.starts_with(&prefix))
                                .cloned()
                                .collect();
                            data_files(objects, &part_location, &values)
                        }
                        None => {
                            data_files(store.list(&part_location).await?, &part_location, &values)
                        }
                    };
                    Ok(found)
                }
            })
            .buffered(LISTINGS_IN_FLIGHT)
            .collect()
            .await;
        let mut files = Vec::new();
        for found in listed {
            files.extend(found?);
        }
        files.sort_by(|a, b| a.file.cmp(&b.file));
        Ok(TableListing {
            location: uri,
            partition_columns: keys,
            files,
        })
    }
}

/// The data files of a table with partition projection: the prefixes the projection
/// allows (with the pair's `filter` and the `requested` partition labels) are
/// listed, and each object whose path gives values the rules accept, the filter
/// matches and a requested label names is a file of that partition.
async fn projected_files(
    projection: &Projection,
    store: &dyn ObjectStore,
    filter: Option<&str>,
    requested: Option<&[String]>,
    table: &str,
) -> Result<Vec<TableFile>> {
    let filter = filter
        .map(|f| {
            Filter::parse(f).map_err(|e| {
                ReconError::InvalidInput(format!(
                    "{table}: {e} (the table uses partition projection, so glue-recon evaluates \
                     the filter itself: =, <>, <, <=, >, >=, IN, BETWEEN, AND, OR, NOT)"
                ))
            })
        })
        .transpose()?;
    if let Some(f) = &filter
        && let Some(c) = f.columns().into_iter().find(|c| !projection.has_key(c))
    {
        return Err(ReconError::InvalidInput(format!(
            "{table}: the partition_filter names `{c}`, which is not a partition key of the \
             table (its keys: {})",
            projection.keys().join(", ")
        )));
    }
    let requested: Option<Vec<_>> = requested.map(|labels| {
        labels
            .iter()
            .filter_map(|l| projection.label_values(l))
            .collect()
    });
    let prefixes = projection.prefixes(filter.as_ref(), requested.as_deref());
    let listed: Vec<Result<Vec<FileRef>>> = futures::stream::iter(prefixes)
        .map(|prefix| async move { store.list(&prefix).await })
        .buffered(LISTINGS_IN_FLIGHT)
        .collect()
        .await;
    let mut files = Vec::new();
    for objects in listed {
        for file in objects? {
            let Some((values, end)) = projection.partition_of(&file.uri) else {
                continue;
            };
            let wanted = filter.as_ref().is_none_or(|f| f.matches(&values))
                && requested
                    .as_ref()
                    .is_none_or(|parts| parts.contains(&values));
            if wanted && parse_relative_path(&file.uri[end..]).is_some() {
                files.push(TableFile {
                    file,
                    partition: values,
                });
            }
        }
    }
    files.sort_by(|a, b| a.file.uri.cmp(&b.file.uri));
    files.dedup_by(|a, b| a.file.uri == b.file.uri);
    Ok(files)
}

/// Why a catalog table is not a table of plain Parquet files, if it is not: a table
/// format whose location also holds the files of earlier versions and of deletes
/// (Iceberg, Delta Lake, Hudi), or data in another file format (what Spark's
/// `spark.sql.sources.provider`, a crawler's `classification` or the InputFormat says).
fn not_plain_parquet(t: &aws_sdk_glue::types::Table) -> Option<String> {
    let param = |k: &str| {
        t.parameters()
            .and_then(|p| p.get(k))
            .map(|v| v.to_ascii_lowercase())
    };
    let input = t
        .storage_descriptor()
        .and_then(|sd| sd.input_format())
        .unwrap_or_default();
    let declared = ["table_type", "spark.sql.sources.provider", "classification"]
        .iter()
        .filter_map(|k| param(k));
    let versioned = declared
        .chain(
            input
                .to_ascii_lowercase()
                .contains("hudi")
                .then(|| "hudi".into()),
        )
        .find_map(|format| match format.as_str() {
            "iceberg" => Some("an Apache Iceberg"),
            "delta" => Some("a Delta Lake"),
            "hudi" => Some("an Apache Hudi"),
            _ => None,
        });
    if let Some(kind) = versioned {
        return Some(format!(
            "it is {kind} table, whose location also holds the files of earlier versions and of \
             deletes, so reading all of them would count rows the table no longer has \
             (reconcile a Parquet export of the version you want)"
        ));
    }
    let format = param("spark.sql.sources.provider").or_else(|| param("classification"));
    match format {
        Some(f) if f != "parquet" => Some(format!("its data is {f}, not Parquet")),
        Some(_) => None,
        None if !input.is_empty() && !input.to_ascii_lowercase().contains("parquet") => {
            Some(format!("its data is not Parquet (InputFormat {input})"))
        }
        None => None,
    }
}

/// A catalog location (of `table`, `glue://DB/TABLE`) in its `s3://` form; a location
/// that is not on S3 (`hdfs://`, a local path) cannot be read.
fn on_s3(location: &str, table: &str) -> Result<String> {
    s3_form(location.trim()).ok_or_else(|| ReconError::TableNotFound {
        location: table.to_string(),
        reason: format!(
            "the catalog gives the location `{location}`, which is not on S3; glue-recon reads tables whose data is on S3 (s3://, s3a:// or s3n://)"
        ),
    })
}

/// GetPartitions expressions selecting the partitions of `labels` (`k=v/k2=v2`) of a
/// table whose partition keys are `keys` (name, Glue type), within `filter` when set:
/// `(filter) AND ((k='v' AND k2=3) OR ...)`, string values quoted (a `'` doubled),
/// integer values of integer keys unquoted, as Glue's expression grammar takes them.
/// The labels are split over as many expressions as keep each within Glue's 2,048
/// characters. A label that does not name exactly this table's keys selects nothing
/// (the run then reports it as a partition the pair does not have); no labels give
/// no expressions, so nothing is fetched.
fn partition_expressions(
    keys: &[(String, String)],
    labels: &[String],
    filter: Option<&str>,
    table: &str,
) -> Result<Vec<String>> {
    let (head, tail) = match filter {
        Some(f) => (format!("({f}) AND ("), ")"),
        None => (String::new(), ""),
    };
    let budget = MAX_EXPRESSION_CHARS.saturating_sub(head.len() + tail.len());
    let mut out = Vec::new();
    let mut current = String::new();
    for label in labels {
        let Some(clause) = partition_clause(keys, label) else {
            continue;
        };
        if clause.len() > budget {
            return Err(ReconError::InvalidInput(format!(
                "{table}: the partition `{label}` with the pair's partition_filter makes a Glue \
                 expression over {MAX_EXPRESSION_CHARS} characters; shorten the partition_filter"
            )));
        }
        if !current.is_empty() && current.len() + " OR ".len() + clause.len() > budget {
            out.push(format!("{head}{current}{tail}"));
            current.clear();
        }
        if !current.is_empty() {
            current.push_str(" OR ");
        }
        current.push_str(&clause);
    }
    if !current.is_empty() {
        out.push(format!("{head}{current}{tail}"));
    }
    Ok(out)
}

/// `(k='v' AND k2=3)` for a label `k=v/k2=3` naming exactly `keys`, in their order.
fn partition_clause(keys: &[(String, String)], label: &str) -> Option<String> {
    let parts: Vec<(&str, &str)> = label
        .split('/')
        .map(|kv| kv.split_once('='))
        .collect::<Option<_>>()?;
    if parts.len() != keys.len() {
        return None;
    }
    let terms: Vec<String> = keys
        .iter()
        .zip(&parts)
        .map(|((key, ty), (k, v))| {
            if !k.eq_ignore_ascii_case(key) {
                return None;
            }
            let integer = matches!(ty.as_str(), "bigint" | "int" | "smallint" | "tinyint")
                && v.parse::<i64>().is_ok();
            Some(if integer {
                format!("{key}={v}")
            } else {
                format!("{key}='{}'", v.replace('\'', "''"))
            })
        })
        .collect::<Option<_>>()?;
    Some(format!("({})", terms.join(" AND ")))
}

/// `k1=v1/k2=v2` of a partition (the Hive folder path).
fn hive_path(values: &PartitionValues) -> String {
    values
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or(HIVE_NULL)))
        .collect::<Vec<_>>()
        .join("/")
}

/// The data files among `objects` (those under a partition's `location`), carrying
/// the catalog's values (not values parsed from the path, which need not be
/// Hive-style).
fn data_files(objects: Vec<FileRef>, location: &str, values: &PartitionValues) -> Vec<TableFile> {
    let root = location.trim_end_matches('/');
    objects
        .into_iter()
        .filter(|o| {
            let rel = o.uri.strip_prefix(root).unwrap_or(&o.uri);
            let rel = if rel.is_empty() {
                o.uri.rsplit('/').next().unwrap_or(&o.uri)
            } else {
                rel
            };
            parse_relative_path(rel).is_some()
        })
        .map(|file| TableFile {
            file,
            partition: values.clone(),
        })
        .collect()
}

/// The error of a failed call on Glue job `job`; a refusal names the permission.
fn job_error<E>(
    err: aws_sdk_glue::error::SdkError<E, aws_sdk_s3::config::http::HttpResponse>,
    job: &str,
    call: &str,
    not_found: impl FnOnce(String) -> ReconError,
) -> ReconError
where
    E: aws_sdk_s3::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match map_sdk_error(err, &format!("Glue job `{job}`"), not_found) {
        ReconError::AccessDenied { resource, reason } => ReconError::AccessDenied {
            reason: job_permission_hint(&reason, job, call, "recon-lookup's role"),
            resource,
        },
        e => e,
    }
}

impl GlueCatalog {
    /// The arguments of one run of a job (GetJobRun), for the partitions a run names.
    async fn run_arguments(
        &self,
        job: &str,
        run_id: &str,
    ) -> Result<std::collections::HashMap<String, String>> {
        let out = self
            .client
            .get_job_run()
            .job_name(job)
            .run_id(run_id)
            .send()
            .await
            .map_err(|e| {
                job_error(e, job, "GetJobRun", |reason| {
                    ReconError::InvalidInput(format!(
                        "Glue job `{job}` has no run `{run_id}` ({reason})"
                    ))
                })
            })?;
        let run = out.job_run().ok_or_else(|| {
            ReconError::InvalidInput(format!(
                "GetJobRun of job `{job}`, run `{run_id}` returned no run"
            ))
        })?;
        Ok(run.arguments().cloned().unwrap_or_default())
    }
}

/// UpdateTable calls made at most when another writer changes the table between our
/// GetTable and UpdateTable (Glue refuses the stale version).
const UPDATE_ATTEMPTS: usize = 3;

impl GlueCatalog {
    /// Set `parameters` on a table: GetTable, then UpdateTable of the same table
    /// with the parameters merged in, at the version read (a concurrent change is
    /// refused by Glue and read again) and without archiving a table version.
    async fn update_parameters(
        &self,
        database: &str,
        table: &str,
        parameters: &[(String, String)],
    ) -> Result<()> {
        let uri = format!("glue://{database}/{table}");
        for attempt in 1..=UPDATE_ATTEMPTS {
            let t = &self.get_table(database, table).await?;
            let mut input = table_input(t);
            for (k, v) in parameters {
                input = input.parameters(k, v);
            }
            let input = input.build().map_err(|e| {
                ReconError::InvalidInput(format!("{uri}: the table cannot be updated: {e}"))
            })?;
            let sent = self
                .client
                .update_table()
                .database_name(database)
                .table_input(input)
                .skip_archive(true)
                .set_version_id(t.version_id().map(str::to_string))
                .send()
                .await;
            match sent {
                Ok(_) => return Ok(()),
                Err(e)
                    if attempt < UPDATE_ATTEMPTS
                        && e.as_service_error()
                            .is_some_and(|s| s.is_concurrent_modification_exception()) => {}
                Err(e) => {
                    return Err(map_sdk_error(e, &uri, |reason| ReconError::TableNotFound {
                        location: uri.clone(),
                        reason,
                    }));
                }
            }
        }
        unreachable!("the last attempt returns")
    }
}

/// A table's definition as UpdateTable takes it back: everything GetTable gave that
/// a `TableInput` holds, so an update changes only what the caller adds.
fn table_input(t: &aws_sdk_glue::types::Table) -> aws_sdk_glue::types::builders::TableInputBuilder {
    aws_sdk_glue::types::TableInput::builder()
        .name(t.name())
        .set_description(t.description().map(str::to_string))
        .set_owner(t.owner().map(str::to_string))
        .set_last_access_time(t.last_access_time().cloned())
        .set_last_analyzed_time(t.last_analyzed_time().cloned())
        .retention(t.retention())
        .set_storage_descriptor(t.storage_descriptor().cloned())
        .set_partition_keys(Some(t.partition_keys().to_vec()))
        .set_view_original_text(t.view_original_text().map(str::to_string))
        .set_view_expanded_text(t.view_expanded_text().map(str::to_string))
        .set_table_type(t.table_type().map(str::to_string))
        .set_parameters(t.parameters().cloned())
        .set_target_table(t.target_table().cloned())
}

impl Catalog for GlueCatalog {
    fn job_run_arguments<'a>(
        &'a self,
        job: &'a str,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<std::collections::HashMap<String, String>>> {
        self.run_arguments(job, run_id).boxed()
    }

    fn resolve<'a>(
        &'a self,
        database: &'a str,
        table: &'a str,
        filter: Option<&'a str>,
        partitions: Option<&'a [String]>,
    ) -> BoxFuture<'a, Result<TableListing>> {
        self.resolve_table(database, table, filter, partitions)
            .boxed()
    }

    fn set_table_parameters<'a>(
        &'a self,
        database: &'a str,
        table: &'a str,
        parameters: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<()>> {
        self.update_parameters(database, table, parameters).boxed()
    }
}

/// A [`GlueCatalog`] behind the engine's catalog port.
pub fn catalog(conf: &SdkConfig) -> Arc<dyn Catalog> {
    Arc::new(GlueCatalog::from_conf(conf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<(String, String)> {
        vec![
            ("day".into(), "int".into()),
            ("region".into(), "string".into()),
        ]
    }

    #[test]
    fn requested_partitions_become_quoted_clauses_within_the_filter() {
        let labels = vec!["day=7/region=o'neil".to_string(), "day=x/region=eu".into()];
        let got = partition_expressions(&keys(), &labels, Some("day > 1"), "t").unwrap();
        assert_eq!(
            got,
            vec!["(day > 1) AND ((day=7 AND region='o''neil') OR (day='x' AND region='eu'))"]
        );
        // A label of other keys selects nothing; no labels, no call.
        let other = vec!["dt=1".to_string()];
        assert!(
            partition_expressions(&keys(), &other, None, "t")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn many_requested_partitions_are_split_within_glues_expression_limit() {
        let labels: Vec<String> = (0..500).map(|d| format!("day={d}/region=r{d}")).collect();
        let got = partition_expressions(&keys(), &labels, Some("region <> 'x'"), "t").unwrap();
        assert!(got.len() > 1, "{}", got.len());
        assert!(got.iter().all(|e| e.len() <= MAX_EXPRESSION_CHARS));
        let clauses: usize = got.iter().map(|e| e.matches(" AND region=").count()).sum();
        assert_eq!(clauses, 500);
        let long = "x".repeat(MAX_EXPRESSION_CHARS);
        let err = partition_expressions(&keys(), &labels[..1], Some(&long), "glue://d/t");
        assert!(err.unwrap_err().to_string().contains("glue://d/t"));
    }
}
