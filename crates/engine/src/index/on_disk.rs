//! The buckets of a partition index in a temporary file, for a partition whose index
//! does not fit the memory budget ([`crate::budget::MemoryBudget`]).
//!
//! A task's rows go to the file as soon as the task ends, all its buckets in one
//! write, and each bucket notes where its pieces are. The join then reads one bucket
//! at a time, so memory holds the tasks in flight and one bucket, however large the
//! partition. The file is unnamed (removed by the system when closed, even if the
//! process dies) and lives in the temporary folder (`TMPDIR`, `/tmp` in Lambda).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Chunk, Rec};
use crate::error::{ReconError, Result};
use crate::plan::Side;

/// Bytes of a chunk's header: side, record count, key bytes, tolerance values.
const HEADER: usize = 1 + 4 + 4 + 4;

/// Bytes of one stored [`Rec`].
const REC: usize = 32;

/// Bytes of one stored tolerance value: whether it is there, and its bits.
const TOL: usize = 9;

/// A partition's buckets on disk.
pub(super) struct OnDisk {
    /// The file and its length (where the next write goes, wherever a read left the
    /// cursor).
    file: Mutex<(File, u64)>,
    /// Per bucket, the (offset, length) of each chunk written for it.
    pieces: Vec<Mutex<Vec<(u64, usize)>>>,
    /// The folder of the file, for messages.
    dir: PathBuf,
}

impl OnDisk {
    /// An empty file in the temporary folder for `buckets` buckets.
    pub(super) fn new(buckets: usize) -> Result<Self> {
        let dir = std::env::temp_dir();
        let file = tempfile::tempfile_in(&dir).map_err(|e| storage_error(&dir, e))?;
        Ok(Self::in_file(file, dir, buckets))
    }

    /// `buckets` buckets in `file` (empty), which lives in `dir`.
    fn in_file(file: File, dir: PathBuf, buckets: usize) -> Self {
        OnDisk {
            file: Mutex::new((file, 0)),
            pieces: (0..buckets).map(|_| Mutex::new(Vec::new())).collect(),
            dir,
        }
    }

    /// Append one task's chunks (one per bucket; empty ones are skipped).
    pub(super) fn write(&self, side: Side, chunks: &[Chunk]) -> Result<()> {
        let mut buf = Vec::new();
        let mut placed = Vec::new();
        for (bucket, chunk) in chunks.iter().enumerate() {
            if !chunk.recs.is_empty() {
                let start = buf.len();
                encode(side, chunk, &mut buf);
                placed.push((bucket, start, buf.len() - start));
            }
        }
        let base = {
            let mut file = self.file.lock().expect("poisoned");
            let base = file.1;
            file.0
                .seek(SeekFrom::Start(base))
                .and_then(|_| file.0.write_all(&buf))
                .map_err(|e| storage_error(&self.dir, e))?;
            file.1 += buf.len() as u64;
            base
        };
        for (bucket, start, len) in placed {
            self.pieces[bucket]
                .lock()
                .expect("poisoned")
                .push((base + start as u64, len));
        }
        Ok(())
    }

    /// Read back (and forget) the chunks of one bucket.
    pub(super) fn take(&self, bucket: usize) -> Result<Vec<(Side, Chunk)>> {
        let pieces = std::mem::take(&mut *self.pieces[bucket].lock().expect("poisoned"));
        let mut file = self.file.lock().expect("poisoned");
        let mut buf = Vec::new();
        pieces
            .into_iter()
            .map(|(offset, len)| {
                buf.resize(len, 0);
                file.0
                    .seek(SeekFrom::Start(offset))
                    .and_then(|_| file.0.read_exact(&mut buf))
                    .map_err(|e| storage_error(&self.dir, e))?;
                Ok(decode(&buf))
            })
            .collect()
    }
}

/// The temporary index file in `dir` could not be made, written or read back.
fn storage_error(dir: &Path, e: std::io::Error) -> ReconError {
    ReconError::LocalStorage {
        path: dir.to_path_buf(),
        reason: format!("the key index of a large partition spills there: {e}"),
    }
}

fn encode(side: Side, c: &Chunk, out: &mut Vec<u8>) {
    out.reserve(HEADER + c.recs.len() * REC + c.keys.len() + c.tol.len() * TOL);
    out.push(side.index() as u8);
    for n in [c.recs.len(), c.keys.len(), c.tol.len()] {
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    for r in &c.recs {
        for w in r.row_hash.into_iter().chain([r.join_bits, r.key_len]) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&r.loc.to_le_bytes());
    }
    out.extend_from_slice(&c.keys);
    for t in &c.tol {
        out.push(t.is_some() as u8);
        out.extend_from_slice(&t.unwrap_or(0.0).to_bits().to_le_bytes());
    }
}

/// Reads what [`encode`] wrote.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_first_chunk::<N>().expect("a whole chunk");
        self.0 = rest;
        *head
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}

fn decode(bytes: &[u8]) -> (Side, Chunk) {
    let mut r = Reader(bytes);
    let side = if r.take::<1>()[0] == 0 {
        Side::Source
    } else {
        Side::Target
    };
    let (recs, keys, tol) = (r.u32() as usize, r.u32() as usize, r.u32() as usize);
    let recs = (0..recs)
        .map(|_| Rec {
            row_hash: std::array::from_fn(|_| r.u32()),
            join_bits: r.u32(),
            key_len: r.u32(),
            loc: r.u64(),
        })
        .collect();
    let (key_bytes, rest) = r.0.split_at(keys);
    r.0 = rest;
    let chunk = Chunk {
        recs,
        keys: key_bytes.to_vec(),
        tol: (0..tol)
            .map(|_| {
                let present = r.take::<1>()[0] == 1;
                let bits = r.u64();
                present.then(|| f64::from_bits(bits))
            })
            .collect(),
    };
    debug_assert!(r.0.is_empty(), "a chunk is read whole");
    (side, chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::RowLoc;

    /// A chunk read back: side, the records' file numbers, key bytes, tolerances.
    type Seen = (Side, Vec<u32>, Vec<u8>, Vec<Option<f64>>);

    #[test]
    fn chunks_come_back_as_written_by_bucket() {
        let rec = |i: u32| Rec {
            row_hash: [i, 1, 2, u32::MAX],
            join_bits: u32::MAX - i,
            key_len: 1,
            loc: RowLoc {
                file: i,
                row: (1 << 39) | i as u64,
            }
            .packed(),
        };
        let chunk = |ids: &[u32]| Chunk {
            recs: ids.iter().map(|&i| rec(i)).collect(),
            keys: ids.iter().map(|&i| b'a' + i as u8).collect(),
            tol: ids
                .iter()
                .flat_map(|&i| [Some(i as f64 - 0.5), None])
                .collect(),
        };
        let empty = || chunk(&[]);
        let disk = OnDisk::new(3).unwrap();
        disk.write(Side::Target, &[chunk(&[0, 1]), empty(), chunk(&[2])])
            .unwrap();
        disk.write(Side::Source, &[empty(), empty(), chunk(&[3])])
            .unwrap();
        let seen = |b: usize| -> Vec<Seen> {
            disk.take(b)
                .unwrap()
                .into_iter()
                .map(|(side, c)| {
                    assert!(c.recs.iter().all(|r| r.row_hash[3] == u32::MAX));
                    assert!(
                        c.recs
                            .iter()
                            .all(|r| r.join_bits == u32::MAX - r.loc().file)
                    );
                    assert!(
                        c.recs
                            .iter()
                            .all(|r| r.loc().row == (1 << 39) | r.loc().file as u64)
                    );
                    let ids = c.recs.iter().map(|r| r.loc().file).collect();
                    (side, ids, c.keys, c.tol)
                })
                .collect()
        };
        assert_eq!(
            seen(0),
            vec![(
                Side::Target,
                vec![0, 1],
                b"ab".to_vec(),
                vec![Some(-0.5), None, Some(0.5), None]
            )]
        );
        assert!(seen(1).is_empty());
        let two = seen(2);
        assert_eq!(two.len(), 2);
        assert_eq!((two[0].0, &two[0].1), (Side::Target, &vec![2]));
        assert_eq!((two[1].0, &two[1].1), (Side::Source, &vec![3]));
        assert!(seen(2).is_empty(), "taken once");
    }

    #[test]
    fn a_full_disk_is_a_local_storage_error_naming_the_settings() {
        // /dev/full accepts the seek and fails every write with ENOSPC, as a full /tmp.
        let full = File::options()
            .read(true)
            .write(true)
            .open("/dev/full")
            .unwrap();
        let disk = OnDisk::in_file(full, PathBuf::from("/tmp"), 1);
        let chunk = Chunk {
            recs: vec![Rec {
                row_hash: [1, 2, 3, 4],
                join_bits: 5,
                key_len: 1,
                loc: RowLoc { file: 0, row: 0 }.packed(),
            }],
            keys: b"k".to_vec(),
            tol: Vec::new(),
        };
        let e = disk.write(Side::Source, &[chunk]).unwrap_err();
        assert_eq!(e.error_type(), "LocalStorage", "{e}");
        let text = e.to_string();
        for named in [
            "/tmp",
            "No space left on device",
            "TMPDIR",
            "HashTmpStorage",
        ] {
            assert!(text.contains(named), "`{named}` not in: {text}");
        }
    }
}
