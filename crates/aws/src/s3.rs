//! [`S3Store`]: the [`ObjectStore`] port on Amazon S3 (aws-sdk-s3). Listing is
//! ListObjectsV2, paginated; Parquet is read with ranged GETs using the size from the
//! listing (no HEAD), the footer first and then the column chunks the reader asks
//! for, adjacent or nearby chunks coalesced into one GET ([`recon_engine::storage::coalesce`]),
//! several GETs in flight; writes are whole-object PutObjects.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_config::SdkConfig;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

use super::map_sdk_error;
use recon_engine::error::{ReconError, Result};
use recon_engine::storage::coalesce::{Coalesced, MAX_GAP, MAX_READ};
use recon_engine::storage::{FileRef, ObjectStore, read_footer};

/// Ranged GETs of one file in flight at once (a row group's coalesced column chunks).
const RANGES_IN_FLIGHT: usize = 8;

/// An `s3://bucket/key` URI split into its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct S3Uri {
    /// The bucket.
    pub bucket: String,
    /// The key (may be empty: the whole bucket).
    pub key: String,
}

impl S3Uri {
    /// Parse `s3://bucket/key`.
    pub fn parse(uri: &str) -> Result<S3Uri> {
        let rest = uri.strip_prefix("s3://").ok_or_else(|| {
            ReconError::InvalidInput(format!("`{uri}` is not an s3://BUCKET/KEY URI"))
        })?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(ReconError::InvalidInput(format!(
                "`{uri}` has no bucket; write s3://BUCKET/KEY"
            )));
        }
        Ok(S3Uri {
            bucket: bucket.to_string(),
            key: key.to_string(),
        })
    }
}

impl std::fmt::Display for S3Uri {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.key)
    }
}

/// Amazon S3 (or an S3-compatible endpoint) as an [`ObjectStore`].
#[derive(Debug, Clone)]
pub struct S3Store {
    client: Client,
    /// GetObject requests sent by this store and its readers (clones share it).
    gets: Arc<AtomicU64>,
}

impl S3Store {
    /// A store on the given config. Path-style addressing is used when an endpoint
    /// is configured (`AWS_ENDPOINT_URL`), as S3 emulators expect.
    pub fn from_conf(conf: &SdkConfig) -> Self {
        let s3_conf = aws_sdk_s3::config::Builder::from(conf)
            .force_path_style(conf.endpoint_url().is_some())
            .build();
        S3Store::new(Client::from_conf(s3_conf))
    }

    /// A store on an existing client.
    pub fn new(client: Client) -> Self {
        S3Store {
            client,
            gets: Arc::default(),
        }
    }

    /// How many GetObject requests this store (and every clone of it) has sent: what
    /// S3 bills per request, and the measure of how well ranged reads are coalesced.
    pub fn get_requests(&self) -> u64 {
        self.gets.load(Ordering::Relaxed)
    }

    fn range_reader(&self, uri: &str) -> Result<RangeReader> {
        Ok(RangeReader {
            client: self.client.clone(),
            uri: uri.to_string(),
            loc: S3Uri::parse(uri)?,
            gets: self.gets.clone(),
        })
    }
}

fn not_found(uri: &str) -> impl FnOnce(String) -> ReconError + '_ {
    move |reason| ReconError::TableNotFound {
        location: uri.to_string(),
        reason,
    }
}

/// A failed write (PUT, DELETE) of `uri`: a missing bucket is a [`ReconError::Write`].
fn write_error<E>(err: SdkError<E, HttpResponse>, uri: &str) -> ReconError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    map_sdk_error(err, uri, |reason| ReconError::Write {
        target: uri.to_string(),
        reason,
    })
}

impl ObjectStore for S3Store {
    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<FileRef>>> {
        async move {
            let loc = S3Uri::parse(prefix)?;
            // A folder (`.../orders/`) is listed by its own prefix, which is what an
            // IAM `s3:prefix` condition such as `orders/*` allows. Without the slash,
            // list by the bare prefix and keep the object itself or what is below
            // `prefix/`, so `s3://b/t/orders` does not pick up `s3://b/t/orders_old/`.
            let folder = format!("{}/", loc.key.trim_end_matches('/'));
            let mut pages = self
                .client
                .list_objects_v2()
                .bucket(&loc.bucket)
                .prefix(&loc.key)
                .into_paginator()
                .send();
            let mut out = Vec::new();
            while let Some(page) = pages.next().await {
                let page = page.map_err(|e| map_sdk_error(e, prefix, not_found(prefix)))?;
                for obj in page.contents() {
                    let Some(key) = obj.key() else { continue };
                    let below = loc.key.trim_end_matches('/').is_empty()
                        || key == loc.key.trim_end_matches('/')
                        || key.starts_with(&folder);
                    if below && !key.ends_with('/') {
                        out.push(FileRef {
                            uri: format!("s3://{}/{key}", loc.bucket),
                            size: u64::try_from(obj.size().unwrap_or(0)).unwrap_or(0),
                        });
                    }
                }
            }
            out.sort();
            Ok(out)
        }
        .boxed()
    }

    fn open<'a>(&'a self, file: &'a FileRef) -> BoxFuture<'a, Result<Box<dyn AsyncFileReader>>> {
        async move {
            Ok(Box::new(S3FileReader {
                inner: Arc::new(self.range_reader(&file.uri)?),
                size: file.size,
            }) as Box<dyn AsyncFileReader>)
        }
        .boxed()
    }

    fn put<'a>(&'a self, uri: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>> {
        async move {
            let loc = S3Uri::parse(uri)?;
            self.client
                .put_object()
                .bucket(&loc.bucket)
                .key(&loc.key)
                .body(ByteStream::from(data))
                .send()
                .await
                .map_err(|e| write_error(e, uri))?;
            Ok(())
        }
        .boxed()
    }

    fn delete<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<()>> {
        async move {
            let loc = S3Uri::parse(uri)?;
            self.client
                .delete_object()
                .bucket(&loc.bucket)
                .key(&loc.key)
                .send()
                .await
                .map_err(|e| write_error(e, uri))?;
            Ok(())
        }
        .boxed()
    }

    fn get<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Bytes>> {
        async move { self.range_reader(uri)?.fetch(None).await }.boxed()
    }
}

/// GETs of one object, whole or by range.
#[derive(Debug)]
struct RangeReader {
    client: Client,
    uri: String,
    loc: S3Uri,
    gets: Arc<AtomicU64>,
}

impl RangeReader {
    async fn fetch(&self, range: Option<Range<u64>>) -> Result<Bytes> {
        let mut req = self
            .client
            .get_object()
            .bucket(&self.loc.bucket)
            .key(&self.loc.key);
        if let Some(r) = &range {
            if r.start >= r.end {
                return Ok(Bytes::new());
            }
            req = req.range(format!("bytes={}-{}", r.start, r.end - 1));
        }
        self.gets.fetch_add(1, Ordering::Relaxed);
        let out = req
            .send()
            .await
            .map_err(|e| map_sdk_error(e, &self.uri, not_found(&self.uri)))?;
        let body = out
            .body
            .collect()
            .await
            .map_err(|e| ReconError::Transient {
                resource: self.uri.clone(),
                reason: format!("reading the response body: {e}"),
            })?;
        let bytes = body.into_bytes();
        if let Some(r) = range
            && bytes.len() as u64 != r.end - r.start
        {
            return Err(ReconError::CorruptParquet {
                file: self.uri.clone(),
                reason: format!(
                    "asked for bytes {}..{} but got {} bytes (the object is shorter than listed; was it overwritten?)",
                    r.start,
                    r.end,
                    bytes.len()
                ),
            });
        }
        Ok(bytes)
    }
}

/// The Parquet reader's view of an S3 object of known size.
struct S3FileReader {
    inner: Arc<RangeReader>,
    size: u64,
}

/// Carry an engine error through the Parquet reader, so the scan reports the S3
/// failure (access denied, transient) rather than a corrupt file.
fn external(e: ReconError) -> ParquetError {
    ParquetError::External(Box::new(e))
}

impl AsyncFileReader for S3FileReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        let inner = self.inner.clone();
        async move { inner.fetch(Some(range)).await.map_err(external) }.boxed()
    }

    /// The ranges (a row group's column chunks) are coalesced ([`Coalesced`]): one
    /// GET per run of adjacent or nearby chunks, several in flight, sliced back into
    /// the ranges asked for.
    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        let inner = self.inner.clone();
        async move {
            use futures::StreamExt;
            let plan = Coalesced::plan(&ranges, MAX_GAP, MAX_READ);
            let fetched: Vec<Result<Bytes>> = futures::stream::iter(plan.reads().to_vec())
                .map(|r| {
                    let inner = inner.clone();
                    async move { inner.fetch(Some(r)).await }
                })
                .buffered(RANGES_IN_FLIGHT)
                .collect()
                .await;
            let fetched = fetched
                .into_iter()
                .collect::<Result<Vec<_>>>()
                .map_err(external)?;
            Ok(plan.split(&fetched))
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        let size = self.size;
        async move { read_footer(self, size, options).await }.boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_uris_split_or_explain() {
        assert_eq!(
            S3Uri::parse("s3://b/k/x.parquet").unwrap(),
            S3Uri {
                bucket: "b".into(),
                key: "k/x.parquet".into()
            }
        );
        assert_eq!(S3Uri::parse("s3://b").unwrap().key, "");
        assert!(S3Uri::parse("s3:///k").is_err());
        assert!(S3Uri::parse("/tmp/x").is_err());
    }
}
