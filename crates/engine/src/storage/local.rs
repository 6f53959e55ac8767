//! Local folders as an [`ObjectStore`]: plain paths or `file://` URIs.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

use super::{FileRef, ObjectStore, read_footer};
use crate::error::{ReconError, Result};

/// The local file system.
#[derive(Debug, Default)]
pub(crate) struct LocalStore;

/// Strip an optional `file://` scheme.
pub fn local_path(uri: &str) -> PathBuf {
    PathBuf::from(uri.strip_prefix("file://").unwrap_or(uri))
}

fn walk(dir: &Path, out: &mut Vec<FileRef>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| ReconError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| ReconError::io(dir, e))?;
        let path = entry.path();
        let meta = std::fs::metadata(&path).map_err(|e| ReconError::io(&path, e))?;
        if meta.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(FileRef {
                uri: path.to_string_lossy().into_owned(),
                size: meta.len(),
            });
        }
    }
    Ok(())
}

impl ObjectStore for LocalStore {
    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<FileRef>>> {
        async move {
            let root = local_path(prefix);
            let meta = std::fs::metadata(&root).map_err(|e| ReconError::TableNotFound {
                location: prefix.to_string(),
                reason: format!("cannot open the folder: {e}"),
            })?;
            let mut out = Vec::new();
            if meta.is_dir() {
                walk(&root, &mut out)?;
            } else {
                out.push(FileRef {
                    uri: root.to_string_lossy().into_owned(),
                    size: meta.len(),
                });
            }
            out.sort();
            Ok(out)
        }
        .boxed()
    }

    fn open<'a>(&'a self, file: &'a FileRef) -> BoxFuture<'a, Result<Box<dyn AsyncFileReader>>> {
        async move {
            let path = local_path(&file.uri);
            let f = File::open(&path).map_err(|e| ReconError::io(&path, e))?;
            Ok(Box::new(LocalFileReader {
                file: f,
                size: file.size,
            }) as Box<dyn AsyncFileReader>)
        }
        .boxed()
    }

    fn put<'a>(&'a self, uri: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>> {
        async move {
            let path = local_path(uri);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| ReconError::io(parent, e))?;
            }
            // Whole-object semantics: write a temporary sibling, then rename over.
            let tmp = path.with_extension(format!(
                "{}.tmp-{}",
                path.extension().and_then(|e| e.to_str()).unwrap_or(""),
                std::process::id()
            ));
            std::fs::write(&tmp, &data).map_err(|e| ReconError::io(&tmp, e))?;
            std::fs::rename(&tmp, &path).map_err(|e| ReconError::io(&path, e))?;
            Ok(())
        }
        .boxed()
    }

    fn delete<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<()>> {
        async move {
            let path = local_path(uri);
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ReconError::io(&path, e)),
                _ => Ok(()),
            }
        }
        .boxed()
    }

    fn get<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Bytes>> {
        async move {
            let path = local_path(uri);
            std::fs::read(&path)
                .map(Bytes::from)
                .map_err(|e| ReconError::io(&path, e))
        }
        .boxed()
    }
}

/// Positional reads of a local file. Reads are served from the page cache and are
/// short, so they run inline on the async worker instead of a blocking pool.
struct LocalFileReader {
    file: File,
    size: u64,
}

/// Read `len` bytes at `start` into a fresh buffer that is not zeroed first (the
/// reader writes into its spare capacity); a short file is an `UnexpectedEof`. The
/// reader owns its `File`, so moving the shared offset is harmless.
fn read_range(file: &File, start: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut file = file;
    file.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity(len);
    file.take(len as u64).read_to_end(&mut buf)?;
    if buf.len() < len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "{len} bytes at offset {start} asked, the file ends after {}",
                buf.len()
            ),
        ));
    }
    Ok(buf)
}

impl AsyncFileReader for LocalFileReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        let result = usize::try_from(range.end - range.start)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
            .and_then(|len| read_range(&self.file, range.start, len))
            .map(Bytes::from)
            .map_err(|e| ParquetError::External(Box::new(e)));
        futures::future::ready(result).boxed()
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
    fn ranges_are_read_whole_or_refused() {
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, b"0123456789").unwrap();
        assert_eq!(read_range(&f, 2, 5).unwrap(), b"23456");
        // A later read at an earlier offset: positional, whatever the last read did.
        assert_eq!(read_range(&f, 0, 3).unwrap(), b"012");
        assert_eq!(read_range(&f, 7, 0).unwrap(), b"");
        let short = read_range(&f, 8, 5).unwrap_err();
        assert_eq!(short.kind(), std::io::ErrorKind::UnexpectedEof);
        assert!(short.to_string().contains("5 bytes at offset 8"), "{short}");
    }
}
