//! The in-memory index of one partition: every key of both sides with its row hash,
//! occurrence count and location. Sharded by key hash so that several row-group
//! tasks insert concurrently with little lock contention; memory is bounded by the
//! partition (about 120 bytes per distinct key), not by the table.

use std::hash::BuildHasher;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use hashbrown::HashTable;

use crate::plan::Side;

/// Number of shards (a power of two).
pub const SHARDS: usize = 16;

/// Where a row is: file index (within its side of the item) and row number in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowLoc {
    /// Index of the file in the side's file list.
    pub file: u32,
    /// Row number within the file.
    pub row: u64,
}

/// What one side knows about a key.
#[derive(Debug, Clone, Copy)]
pub struct RowInfo {
    /// SHA-256 of the canonical encoding of the hashed columns.
    pub hash: [u8; 32],
    /// How many rows have this key on this side.
    pub count: u32,
    /// Where the first such row is.
    pub loc: RowLoc,
    /// Offset of the row's tolerance-column values in the shard's arena.
    pub tol: u32,
}

/// What the hash table holds: small, so probing stays in cache; the key's data is
/// in [`Shard::entries`], appended in insertion order.
#[derive(Clone, Copy)]
struct Slot {
    hash64: u64,
    entry: u32,
}

struct Entry {
    key_start: usize,
    key_len: u32,
    sides: [Option<RowInfo>; 2],
}

/// One shard: a hash table of slots, the entries, the key bytes arena and
/// tolerance values.
#[derive(Default)]
pub struct Shard {
    table: HashTable<Slot>,
    entries: Vec<Entry>,
    keys: Vec<u8>,
    tol: Vec<Option<f64>>,
}

/// A row waiting to be inserted (built by the scanner, outside any lock).
#[derive(Debug, Clone, Copy)]
pub struct PendingRow {
    /// Hash of the key bytes (selects the shard).
    pub hash64: u64,
    /// Range of the key bytes in [`Pending::keys`].
    pub key_start: u32,
    /// Length of the key bytes.
    pub key_len: u32,
    /// Row hash.
    pub row_hash: [u8; 32],
    /// Location.
    pub loc: RowLoc,
    /// Start of the tolerance values in [`Pending::tol`].
    pub tol_start: u32,
}

/// Rows of one record batch, grouped by shard.
pub struct Pending {
    /// Rows per shard.
    pub shards: Vec<Vec<PendingRow>>,
    /// Key bytes of all rows.
    pub keys: Vec<u8>,
    /// Tolerance values of all rows (`tol_width` per row).
    pub tol: Vec<Option<f64>>,
}

impl Default for Pending {
    fn default() -> Self {
        Pending {
            shards: (0..SHARDS).map(|_| Vec::new()).collect(),
            keys: Vec::new(),
            tol: Vec::new(),
        }
    }
}

impl Pending {
    /// Forget the rows, keep the buffers.
    pub fn clear(&mut self) {
        self.shards.iter_mut().for_each(Vec::clear);
        self.keys.clear();
        self.tol.clear();
    }
}

/// A row with a NULL key column.
#[derive(Debug, Clone)]
pub struct NullKeyRow {
    /// The side.
    pub side: Side,
    /// Canonical key bytes (some values NULL).
    pub key: Vec<u8>,
    /// Where it is.
    pub loc: RowLoc,
}

/// The index of one partition (both sides).
pub struct PartitionIndex {
    shards: Vec<Mutex<Shard>>,
    null_keys: Mutex<Vec<NullKeyRow>>,
    tol_width: usize,
    rows: [AtomicU64; 2],
    hasher: foldhash::fast::FixedState,
}

/// One key of the index, as seen by the differ.
pub struct KeyView<'a> {
    /// Canonical key bytes.
    pub key: &'a [u8],
    /// Source side, if present.
    pub source: Option<&'a RowInfo>,
    /// Target side, if present.
    pub target: Option<&'a RowInfo>,
    /// Tolerance values of the source row.
    pub source_tol: &'a [Option<f64>],
    /// Tolerance values of the target row.
    pub target_tol: &'a [Option<f64>],
}

fn slot(side: Side) -> usize {
    match side {
        Side::Source => 0,
        Side::Target => 1,
    }
}

impl PartitionIndex {
    /// An empty index for rows with `tol_width` tolerance columns, sized for about
    /// `expected_keys` distinct keys (from the Parquet footers) so it never rehashes.
    pub fn new(tol_width: usize, expected_keys: usize) -> Self {
        let per_shard = expected_keys.div_ceil(SHARDS) + expected_keys / (SHARDS * 16);
        PartitionIndex {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        table: HashTable::with_capacity(per_shard),
                        entries: Vec::with_capacity(per_shard),
                        keys: Vec::new(),
                        tol: Vec::new(),
                    })
                })
                .collect(),
            null_keys: Mutex::new(Vec::new()),
            tol_width,
            rows: [AtomicU64::new(0), AtomicU64::new(0)],
            hasher: foldhash::fast::FixedState::with_seed(0x5eed_2ec0),
        }
    }

    /// Hash of key bytes (shard selection and table hash).
    #[inline]
    pub fn key_hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The shard of a key hash: bits 48.. that hashbrown uses for neither the bucket
    /// (low bits) nor the control byte (top 7 bits). Sharding by the top bits would
    /// leave every key of a shard with nearly the same control byte, and each probe
    /// would compare many slots.
    #[inline]
    pub fn shard_of(hash64: u64) -> usize {
        (hash64 >> 48) as usize & (SHARDS - 1)
    }

    /// Rows read on a side (NULL keys included).
    pub fn rows(&self, side: Side) -> u64 {
        self.rows[slot(side)].load(Ordering::Relaxed)
    }

    /// Record rows with NULL keys.
    pub fn add_null_keys(&self, rows: Vec<NullKeyRow>) {
        if !rows.is_empty() {
            self.null_keys.lock().expect("poisoned").extend(rows);
        }
    }

    /// Count rows read on a side.
    pub fn add_rows(&self, side: Side, n: u64) {
        self.rows[slot(side)].fetch_add(n, Ordering::Relaxed);
    }

    /// Insert a batch of pending rows of one side.
    pub fn insert(&self, side: Side, pending: &Pending) {
        let s = slot(side);
        let w = self.tol_width;
        for (shard_no, rows) in pending.shards.iter().enumerate() {
            if rows.is_empty() {
                continue;
            }
            let mut guard = self.shards[shard_no].lock().expect("poisoned");
            let shard = &mut *guard;
            for r in rows {
                let key = &pending.keys[r.key_start as usize..(r.key_start + r.key_len) as usize];
                let (arena, entries) = (&shard.keys, &shard.entries);
                let found = shard
                    .table
                    .find(r.hash64, |slot| {
                        slot.hash64 == r.hash64 && {
                            let e = &entries[slot.entry as usize];
                            e.key_len == r.key_len
                                && &arena[e.key_start..e.key_start + e.key_len as usize] == key
                        }
                    })
                    .map(|slot| slot.entry as usize);
                let tol_at = shard.tol.len() as u32;
                let tol_vals = &pending.tol[r.tol_start as usize..r.tol_start as usize + w];
                let info = RowInfo {
                    hash: r.row_hash,
                    count: 1,
                    loc: r.loc,
                    tol: tol_at,
                };
                match found {
                    Some(at) => match &mut shard.entries[at].sides[s] {
                        Some(info) => info.count += 1,
                        side @ None => {
                            *side = Some(info);
                            shard.tol.extend_from_slice(tol_vals);
                        }
                    },
                    None => {
                        let key_start = shard.keys.len();
                        shard.keys.extend_from_slice(key);
                        let mut sides = [None, None];
                        sides[s] = Some(info);
                        shard.tol.extend_from_slice(tol_vals);
                        let entry = u32::try_from(shard.entries.len())
                            .expect("fewer than 2^32 distinct keys per shard");
                        shard.entries.push(Entry {
                            key_start,
                            key_len: r.key_len,
                            sides,
                        });
                        shard.table.insert_unique(
                            r.hash64,
                            Slot {
                                hash64: r.hash64,
                                entry,
                            },
                            |slot| slot.hash64,
                        );
                    }
                }
            }
        }
    }

    /// Take the rows with NULL keys.
    pub fn take_null_keys(&self) -> Vec<NullKeyRow> {
        std::mem::take(&mut *self.null_keys.lock().expect("poisoned"))
    }

    /// Visit every key (shard by shard).
    pub fn for_each(&self, mut f: impl FnMut(KeyView<'_>)) {
        let w = self.tol_width;
        for shard in &self.shards {
            let shard = shard.lock().expect("poisoned");
            for e in &shard.entries {
                let tol = |info: &Option<RowInfo>| -> &[Option<f64>] {
                    match info {
                        Some(i) => &shard.tol[i.tol as usize..i.tol as usize + w],
                        None => &[],
                    }
                };
                f(KeyView {
                    key: &shard.keys[e.key_start..e.key_start + e.key_len as usize],
                    source: e.sides[0].as_ref(),
                    target: e.sides[1].as_ref(),
                    source_tol: tol(&e.sides[0]),
                    target_tol: tol(&e.sides[1]),
                });
            }
        }
    }
}
