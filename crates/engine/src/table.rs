//! Tables as lists of Parquet files grouped into partitions, and the alignment of a
//! source table's partitions with a target table's.
//!
//! A folder or S3 prefix is read Hive-style: `k=v/` folder levels (values
//! URL-decoded, `__HIVE_DEFAULT_PARTITION__` is NULL) become partition values, which are
//! also values of every row in them. Files and folders whose names start with `_` or
//! `.` (`_SUCCESS`, `_temporary/`, `.crc`) are ignored, and so are the `_$folder$`
//! markers of Hadoop's S3 file systems (EMR), as are files with an extension
//! other than `.parquet`, `.parq` or `.pq` (Glue also writes extension-less part files,
//! which are read).

use std::collections::BTreeMap;

use crate::error::{ReconError, Result};
pub use crate::model::{ItemRef, PartitionValues, Presence, TableFile, WorkItem};
use crate::partition_filter::Filter;
use crate::storage::{ObjectStore, Storage};

/// Where a table lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local folder (or a single file).
    Local(String),
    /// An `s3://bucket/prefix/` URI.
    S3(String),
    /// A table of the Glue Data Catalog.
    Glue {
        /// The database name.
        database: String,
        /// The table name.
        table: String,
    },
}

impl Location {
    /// Parse a location as written in the config or on the command line.
    pub fn parse(text: &str) -> Result<Location> {
        let t = text.trim();
        if let Some(rest) = t.strip_prefix("glue://") {
            let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
            return match parts.as_slice() {
                [db, table] if !db.is_empty() && !table.is_empty() => Ok(Location::Glue {
                    database: db.to_string(),
                    table: table.to_string(),
                }),
                _ => Err(ReconError::InvalidInput(format!(
                    "`{text}` is not a Glue table; write glue://DATABASE/TABLE"
                ))),
            };
        }
        if let Some(uri) = s3_form(t) {
            let rest = &uri["s3://".len()..];
            if rest.is_empty() || rest.starts_with('/') {
                return Err(ReconError::InvalidInput(format!(
                    "`{text}` has no bucket; write s3://BUCKET/PREFIX/"
                )));
            }
            return Ok(Location::S3(uri));
        }
        if t.contains("://") && !t.starts_with("file://") {
            return Err(ReconError::InvalidInput(format!(
                "`{text}`: unsupported scheme; use a folder path, file://, s3:// or glue://"
            )));
        }
        if t.is_empty() {
            return Err(ReconError::InvalidInput("empty table location".into()));
        }
        Ok(Location::Local(t.to_string()))
    }
}

/// An S3 location in its `s3://` form, or `None` when it is not on S3. Hadoop's
/// `s3a://` and `s3n://` name the same objects (Spark and EMR write them into the
/// Glue Data Catalog).
pub fn s3_form(location: &str) -> Option<String> {
    ["s3://", "s3a://", "s3n://"]
        .iter()
        .find_map(|scheme| location.strip_prefix(scheme))
        .map(|rest| format!("s3://{rest}"))
}

/// `location` in its `s3://` form when it is on S3 ([`s3_form`]), else unchanged.
pub fn s3_normalized(location: String) -> String {
    s3_form(&location).unwrap_or(location)
}

/// A table resolved to its files.
#[derive(Debug, Clone, PartialEq)]
pub struct TableListing {
    /// The location as the user wrote it.
    pub location: String,
    /// Partition column names (lower-case), in folder order; empty if unpartitioned.
    pub partition_columns: Vec<String>,
    /// The files, sorted by URI.
    pub files: Vec<TableFile>,
}

/// Hidden files and folders, and the empty `name_$folder$` objects that Hadoop's S3
/// file systems (EMR) leave beside every folder they create.
fn is_hidden(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.') || name.ends_with("_$folder$")
}

fn is_data_file(name: &str) -> bool {
    match name.rsplit_once('.') {
        None => true,
        Some((_, ext)) => {
            let ext = ext.to_ascii_lowercase();
            matches!(ext.as_str(), "parquet" | "parq" | "pq")
                || name.to_ascii_lowercase().ends_with(".snappy") // part-0000.snappy
        }
    }
}

/// Percent-decode a Hive partition value (`a%2Fb` is `a/b`).
pub fn url_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(v) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse the Hive partition folders of a path relative to the table root.
/// Returns `None` for hidden or non-data files.
pub fn parse_relative_path(rel: &str) -> Option<PartitionValues> {
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let (file, dirs) = parts.split_last()?;
    if is_hidden(file) || !is_data_file(file) || dirs.iter().any(|d| is_hidden(d)) {
        return None;
    }
    Some(
        dirs.iter()
            .filter_map(|d| d.split_once('='))
            .map(|(k, v)| {
                let v = url_decode(v);
                let v = (v != "__HIVE_DEFAULT_PARTITION__").then_some(v);
                (url_decode(k).to_lowercase(), v)
            })
            .collect(),
    )
}

/// `uri` relative to the folder `root` (no leading `/`).
fn relative<'a>(uri: &'a str, root: &str) -> &'a str {
    uri.strip_prefix(root)
        .unwrap_or(uri)
        .trim_start_matches('/')
}

/// The table format whose metadata a folder's files (paths relative to it) show:
/// Delta Lake (`_delta_log/`), Apache Iceberg (`metadata/*.metadata.json`) or Apache
/// Hudi (`.hoodie/`), with its article; `None` for plain Parquet.
fn table_format<'a>(mut paths: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    paths.find_map(|p| {
        let (first, rest) = p.split_once('/')?;
        match first {
            "_delta_log" => Some("a Delta Lake"),
            ".hoodie" => Some("an Apache Hudi"),
            "metadata" if rest.ends_with(".metadata.json") => Some("an Apache Iceberg"),
            _ => None,
        }
    })
}

/// List a folder or S3 prefix as a table, applying the partition filter.
pub async fn list_table(
    store: &dyn ObjectStore,
    location: &str,
    filter: Option<&Filter>,
) -> Result<TableListing> {
    let objects = store.list(location).await?;
    let root = location.trim_end_matches('/');
    let single_file = objects.len() == 1 && objects[0].uri.trim_end_matches('/') == root;
    if let Some(format) = table_format(objects.iter().map(|o| relative(&o.uri, root))) {
        return Err(ReconError::InvalidInput(format!(
            "{location} is {format} table: its folder also holds the Parquet files of earlier \
             versions (and of deletes), so reading all of them would count rows the table no \
             longer has; glue-recon reads plain Parquet tables: reconcile a Parquet export of \
             the version you want (e.g. CREATE TABLE AS SELECT in Athena)"
        )));
    }
    let mut files = Vec::new();
    let mut layout: Option<Vec<String>> = None;
    for obj in objects {
        let rel = if single_file {
            obj.uri.rsplit('/').next().unwrap_or(&obj.uri).to_string()
        } else {
            relative(&obj.uri, root).to_string()
        };
        let Some(partition) = parse_relative_path(&rel) else {
            tracing::debug!(file = %obj.uri, "ignored (hidden or not a data file)");
            continue;
        };
        let columns: Vec<String> = partition.iter().map(|(k, _)| k.clone()).collect();
        match &layout {
            None => layout = Some(columns),
            Some(l) if *l != columns => {
                return Err(ReconError::InvalidInput(format!(
                    "{location}: inconsistent partition layout: {} is under partitions ({}) but other files are under ({}); point the pair at one table",
                    obj.uri,
                    columns.join(", "),
                    l.join(", ")
                )));
            }
            Some(_) => {}
        }
        if let Some(f) = filter
            && !f.matches(&partition)
        {
            continue;
        }
        files.push(TableFile {
            file: obj,
            partition,
        });
    }
    let Some(partition_columns) = layout else {
        return Err(ReconError::TableNotFound {
            location: location.to_string(),
            reason: "no Parquet files found (hidden files and non-Parquet extensions are ignored)"
                .into(),
        });
    };
    if let Some(f) = filter {
        for c in f.columns() {
            if !partition_columns.iter().any(|p| p == c) {
                return Err(ReconError::InvalidInput(format!(
                    "{location}: partition_filter names `{c}`, which is not a partition column (partition columns: {})",
                    if partition_columns.is_empty() {
                        "none".to_string()
                    } else {
                        partition_columns.join(", ")
                    }
                )));
            }
        }
    }
    Ok(TableListing {
        location: location.to_string(),
        partition_columns,
        files,
    })
}

/// List a local or S3 table through `storage`.
pub(crate) async fn list_location(
    storage: &Storage,
    location: &str,
    filter: Option<&Filter>,
) -> Result<TableListing> {
    list_table(storage.for_uri(location)?.as_ref(), location, filter).await
}

/// The label of a partition (`dt=2024-01-01/region=eu`, `*` for an unpartitioned
/// table), as work items and on-demand requests name it.
pub(crate) fn partition_label(values: &PartitionValues) -> String {
    if values.is_empty() {
        return "*".into();
    }
    values
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}={}",
                v.as_deref().unwrap_or("__HIVE_DEFAULT_PARTITION__")
            )
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A stable id for an item: depends only on the pair and the partition label.
pub fn item_id(pair: &str, partition: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{pair}\0{partition}").as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Pair up the partitions of two tables. When both have the same partition
/// columns, partitions are matched by value (one item each, one-sided partitions
/// included); otherwise the whole tables form one item.
pub fn align(pair: &str, source: &TableListing, target: &TableListing) -> Vec<WorkItem> {
    let same_layout = source.partition_columns == target.partition_columns
        && !source.partition_columns.is_empty();
    if !same_layout {
        return vec![WorkItem {
            item_id: item_id(pair, "*"),
            pair: pair.to_string(),
            partition: "*".into(),
            presence: Presence::Both,
            source: source.files.clone(),
            target: target.files.clone(),
        }];
    }
    let mut groups: BTreeMap<String, (Vec<TableFile>, Vec<TableFile>)> = BTreeMap::new();
    for f in &source.files {
        groups
            .entry(partition_label(&f.partition))
            .or_default()
            .0
            .push(f.clone());
    }
    for f in &target.files {
        groups
            .entry(partition_label(&f.partition))
            .or_default()
            .1
            .push(f.clone());
    }
    groups
        .into_iter()
        .map(|(partition, (s, t))| WorkItem {
            item_id: item_id(pair, &partition),
            pair: pair.to_string(),
            presence: match (s.is_empty(), t.is_empty()) {
                (false, true) => Presence::SourceOnly,
                (true, false) => Presence::TargetOnly,
                _ => Presence::Both,
            },
            partition,
            source: s,
            target: t,
        })
        .collect()
}

/// Whether any of these locations (table locations, report roots) is on AWS
/// (`s3://`, `s3a://`, `s3n://` or `glue://`), so AWS clients are needed.
pub fn is_aws_location<'a>(locations: impl IntoIterator<Item = &'a str>) -> bool {
    locations
        .into_iter()
        .any(|l| l.starts_with("glue://") || s3_form(l).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FileRef;

    #[test]
    fn hive_paths_are_decoded_and_hidden_files_skipped() {
        assert_eq!(
            parse_relative_path("dt=2024-01-01/city=S%C3%A3o%20Paulo/part-0.parquet"),
            Some(vec![
                ("dt".into(), Some("2024-01-01".into())),
                ("city".into(), Some("São Paulo".into()))
            ])
        );
        assert_eq!(parse_relative_path("dt=1/_SUCCESS"), None);
        assert_eq!(parse_relative_path("_temporary/0/part.parquet"), None);
        assert_eq!(parse_relative_path("dt=1/.part.parquet.crc"), None);
        assert_eq!(parse_relative_path("notes.txt"), None);
        // EMR's folder markers, beside the partitions and within them.
        assert_eq!(parse_relative_path("dt=2024-01-01_$folder$"), None);
        assert_eq!(parse_relative_path("dt=1/city=x_$folder$"), None);
        assert_eq!(
            parse_relative_path("k=__HIVE_DEFAULT_PARTITION__/run-123-part-r-00000"),
            Some(vec![("k".into(), None)])
        );
    }

    #[test]
    fn delta_iceberg_and_hudi_folders_are_told_from_plain_parquet() {
        let format = |paths: &[&str]| table_format(paths.iter().copied());
        assert_eq!(
            format(&["part-0.parquet", "_delta_log/00000000000000000000.json"]),
            Some("a Delta Lake")
        );
        assert_eq!(
            format(&["data/a.parquet", "metadata/00001-ab.metadata.json"]),
            Some("an Apache Iceberg")
        );
        assert_eq!(
            format(&["dt=1/a.parquet", ".hoodie/hoodie.properties"]),
            Some("an Apache Hudi")
        );
        // A partition or column folder called `metadata` is not Iceberg's.
        assert_eq!(format(&["metadata/part-0.parquet", "dt=1/_SUCCESS"]), None);
        assert_eq!(format(&["part-0.parquet"]), None);
    }

    #[test]
    fn locations_parse_or_explain() {
        assert_eq!(
            Location::parse("s3a://b/warehouse/t/").unwrap(),
            Location::S3("s3://b/warehouse/t/".into())
        );
        assert_eq!(
            Location::parse("s3n://b/t").unwrap(),
            Location::S3("s3://b/t".into())
        );
        assert!(Location::parse("s3a://").is_err());
        assert_eq!(
            Location::parse("glue://db/t").unwrap(),
            Location::Glue {
                database: "db".into(),
                table: "t".into()
            }
        );
        assert!(Location::parse("glue://db").is_err());
        assert!(
            Location::parse("gs://x")
                .unwrap_err()
                .to_string()
                .contains("unsupported")
        );
        assert_eq!(
            Location::parse("s3://b/p/").unwrap(),
            Location::S3("s3://b/p/".into())
        );
    }

    #[test]
    fn one_sided_partitions_are_items() {
        let file = |dt: &str| TableFile {
            file: FileRef {
                uri: format!("x/dt={dt}/p.parquet"),
                size: 1,
            },
            partition: vec![("dt".into(), Some(dt.into()))],
        };
        let listing = |files: Vec<TableFile>| TableListing {
            location: "x".into(),
            partition_columns: vec!["dt".into()],
            files,
        };
        let items = align(
            "p",
            &listing(vec![file("1"), file("2")]),
            &listing(vec![file("2"), file("3")]),
        );
        let presence: Vec<_> = items
            .iter()
            .map(|i| (i.partition.as_str(), i.presence))
            .collect();
        assert_eq!(
            presence,
            vec![
                ("dt=1", Presence::SourceOnly),
                ("dt=2", Presence::Both),
                ("dt=3", Presence::TargetOnly)
            ]
        );
        assert_eq!(items[0].item_id, item_id("p", "dt=1"));
    }
}
