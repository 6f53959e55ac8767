//! Where tables and reports live: the engine talks to [`ObjectStore`], and the local
//! folder (`local::LocalStore`) and S3 implementations sit behind it.

pub mod coalesce;
pub mod local;

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

use crate::error::{ReconError, Result};
pub use crate::model::FileRef;

/// The storage port of the engine.
pub trait ObjectStore: Send + Sync {
    /// Every object below `prefix` (recursively), sorted by URI. A prefix with no
    /// objects gives an empty list; a prefix that cannot exist is an error.
    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<FileRef>>>;
    /// Open an object for ranged reads by the Parquet reader.
    fn open<'a>(&'a self, file: &'a FileRef) -> BoxFuture<'a, Result<Box<dyn AsyncFileReader>>>;
    /// Write a whole object, replacing any previous one (idempotent).
    fn put<'a>(&'a self, uri: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>>;
    /// Read a whole object.
    fn get<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Bytes>>;
    /// Delete an object (deleting one that does not exist succeeds).
    fn delete<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<()>>;
}

/// Routes URIs to the store that serves them: `s3://` to S3, anything else to the
/// local file system.
#[derive(Clone)]
pub struct Storage {
    local: Arc<local::LocalStore>,
    s3: Option<Arc<dyn ObjectStore>>,
}

impl Default for Storage {
    fn default() -> Self {
        Storage::local_only()
    }
}

impl Storage {
    /// Local folders only.
    pub fn local_only() -> Self {
        Storage {
            local: Arc::new(local::LocalStore),
            s3: None,
        }
    }

    /// Local folders and S3 through `s3`.
    pub fn with_s3(s3: Arc<dyn ObjectStore>) -> Self {
        Storage {
            local: Arc::new(local::LocalStore),
            s3: Some(s3),
        }
    }

    /// The store for a URI.
    pub fn for_uri(&self, uri: &str) -> Result<Arc<dyn ObjectStore>> {
        if uri.starts_with("s3://") {
            self.s3.clone().ok_or_else(|| {
                ReconError::InvalidInput(format!("{uri} is on S3 but no S3 client is configured"))
            })
        } else {
            Ok(self.local.clone())
        }
    }

    /// Join a base location (folder or s3 prefix) and a relative path.
    pub fn join(base: &str, rel: &str) -> String {
        if base.is_empty() {
            return rel.to_string();
        }
        format!(
            "{}/{}",
            base.trim_end_matches('/'),
            rel.trim_start_matches('/')
        )
    }
}

/// Read a Parquet footer with the file size already known: one ranged read of the
/// tail (64 KiB prefetch) covers most footers.
pub async fn read_footer<R: AsyncFileReader>(
    reader: &mut R,
    size: u64,
    options: Option<&ArrowReaderOptions>,
) -> parquet::errors::Result<Arc<ParquetMetaData>> {
    let meta = ParquetMetaDataReader::new()
        .with_prefetch_hint(Some(64 * 1024))
        .with_arrow_reader_options(options)
        .load_and_finish(reader, size)
        .await?;
    Ok(Arc::new(meta))
}
