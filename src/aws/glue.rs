//! [`GlueCatalog`]: `glue://database/table` resolved through the Glue Data Catalog.
//! GetTable gives the location and the partition keys; GetPartitions (paginated, the
//! pair's partition filter passed as the Glue `Expression`) gives each partition's
//! values and its own location, which is honoured even when it lies outside the
//! table's location. Files are listed on S3.

use std::sync::Arc;

use aws_config::SdkConfig;
use aws_sdk_glue::Client;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};

use super::map_sdk_error;
use crate::error::{ReconError, Result};
use crate::runner::Catalog;
use crate::storage::{ObjectStore, Storage};
use crate::table::{
    PartitionValues, TableFile, TableListing, list_table, parse_relative_path, s3_form,
};

/// Partition folders listed at once.
const LISTINGS_IN_FLIGHT: usize = 16;
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

    async fn resolve_table(
        &self,
        database: &str,
        table: &str,
        filter: Option<&str>,
    ) -> Result<TableListing> {
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
        let t = got.table().ok_or_else(|| ReconError::TableNotFound {
            location: uri.clone(),
            reason: "GetTable returned no table".into(),
        })?;
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
        let mut pages = self
            .client
            .get_partitions()
            .database_name(database)
            .table_name(table)
            .set_expression(filter.map(str::to_string))
            .into_paginator()
            .send();
        let mut partitions = Vec::new();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| {
                map_sdk_error(e, &uri, |reason| ReconError::TableNotFound {
                    location: uri.clone(),
                    reason,
                })
            })?;
            partitions.extend(page.partitions().iter().cloned());
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
        let listed: Vec<Result<Vec<TableFile>>> = futures::stream::iter(wanted)
            .map(|(values, part_location)| {
                let (store, uri) = (store.clone(), uri.clone());
                async move {
                    let found = partition_files(store.as_ref(), &part_location, &values).await?;
                    if found.is_empty() {
                        return Err(ReconError::TableNotFound {
                            location: part_location,
                            reason: format!(
                                "partition {} of {uri} has no data files at its location",
                                hive_path(&values)
                            ),
                        });
                    }
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

/// `k1=v1/k2=v2` of a partition (the Hive folder path).
fn hive_path(values: &PartitionValues) -> String {
    values
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or(HIVE_NULL)))
        .collect::<Vec<_>>()
        .join("/")
}

/// The data files under a partition's location, carrying the catalog's values
/// (not values parsed from the path, which need not be Hive-style).
async fn partition_files(
    store: &dyn ObjectStore,
    location: &str,
    values: &PartitionValues,
) -> Result<Vec<TableFile>> {
    let root = location.trim_end_matches('/');
    let objects = store.list(location).await?;
    Ok(objects
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
        .collect())
}

impl Catalog for GlueCatalog {
    fn resolve<'a>(
        &'a self,
        database: &'a str,
        table: &'a str,
        filter: Option<&'a str>,
    ) -> BoxFuture<'a, Result<TableListing>> {
        self.resolve_table(database, table, filter).boxed()
    }
}

/// A [`GlueCatalog`] behind the engine's catalog port.
pub fn catalog(conf: &SdkConfig) -> Arc<dyn Catalog> {
    Arc::new(GlueCatalog::from_conf(conf))
}
