//! The keys of one partition (both sides) with their row hashes, built in two phases
//! so the join stays in cache however large the partition is:
//!
//! 1. **Scatter.** Every row-group task appends its hashed rows to a private
//!    `Spill`, one bucket per range of key hashes (sequential writes, no locks),
//!    and hands the buckets to the `PartitionIndex` when it is done.
//! 2. **Join.** `PartitionIndex::drain_keys` takes one bucket at a time, joins its
//!    rows of both sides in a hash table small enough for the core's cache, and
//!    visits every key.
//!
//! The index takes about 60 bytes a row of the partition. A partition whose index
//! does not fit the memory budget keeps its buckets in a temporary file instead
//! (`PartitionIndex::on_disk`): memory then holds the tasks in flight and one bucket.

#![allow(unsafe_code)] // Unchecked bucket writes on the join's hot path: each block says why it is sound.

mod on_disk;

use std::hash::BuildHasher;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use hashbrown::HashTable;

use crate::error::Result;
use crate::plan::Side;
use crate::row_hash::{self, RowHash, RowHashPrefix};
use on_disk::OnDisk;

/// Keys per bucket the index aims at: a bucket's join table and entries (about 60
/// bytes a key) fit in a core's L2 cache, and the scatter writes to few enough
/// buckets at once to keep its stores flowing (1024 keys a bucket cost 3-4% more CPU
/// on the bench data, 4096 to 16384 were alike).
const KEYS_PER_BUCKET: usize = 8192;

/// Most buckets an index uses.
const MAX_BUCKETS: usize = 4096;

/// Bits of a packed [`RowLoc`] that hold the row number; the file's index is above.
const ROW_BITS: u32 = 40;

/// Most files one side of a partition may have (a row's location is packed in 64
/// bits: `RowLoc::packed`).
pub(crate) const MAX_FILES: usize = 1 << (64 - ROW_BITS);

/// Most rows one file may have.
pub(crate) const MAX_FILE_ROWS: u64 = 1 << ROW_BITS;

/// Where a row is: file index (within its side of the item) and row number in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct RowLoc {
    /// Index of the file in the side's file list.
    pub file: u32,
    /// Row number within the file.
    pub row: u64,
}

impl RowLoc {
    /// The location in one word, ordered as (file, row): the file's index in the top
    /// bits, the row below. The file must be below [`MAX_FILES`] and the row below
    /// [`MAX_FILE_ROWS`] (the caller checks the files' footers first).
    #[inline]
    fn packed(self) -> u64 {
        debug_assert!((self.file as usize) < MAX_FILES && self.row < MAX_FILE_ROWS);
        (self.file as u64) << ROW_BITS | self.row
    }

    /// The location `RowLoc::packed` packed.
    #[inline]
    fn unpacked(word: u64) -> Self {
        RowLoc {
            file: (word >> ROW_BITS) as u32,
            row: word & (MAX_FILE_ROWS - 1),
        }
    }
}

/// What one side knows about a key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowInfo {
    /// SHA-256 of the canonical encoding of the hashed columns (its first 128 bits).
    pub hash: RowHashPrefix,
    /// How many rows have this key on this side.
    pub count: u32,
    /// Where the first such row is (in file order).
    pub loc: RowLoc,
    /// Whether every row with this key on this side has the same hash and
    /// tolerance values (exact copies; true for a single row).
    pub identical: bool,
}

/// One hashed row in a bucket: exactly half a cache line, so the join reads a line
/// for two rows and the index takes half the memory of a line a row (the scatter
/// still streams a whole line a row: [`stream_rec`]). Records and their keys are
/// appended in the same order, so a record's key is the next `key_len` bytes of its
/// chunk's key arena; its tolerance values are the `tol_width` at its position
/// times that width in the tolerance arena.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Rec {
    row_hash: RowHashPrefix,
    /// [`join_bits`] of the key hash.
    join_bits: u32,
    key_len: u32,
    /// `RowLoc::packed`.
    loc: u64,
}

impl Rec {
    fn loc(&self) -> RowLoc {
        RowLoc::unpacked(self.loc)
    }
}

const _: () = assert!(std::mem::size_of::<Rec>() == 32);

/// Bits of a key hash kept below the top seven in [`join_bits`].
const JOIN_LOW_BITS: u32 = 25;

/// The bits of a key hash the join table uses, in 32: hashbrown places a key by the
/// low bits of its hash (25 address 32 million slots, far more than a bucket has)
/// and tells keys apart within a group by the top seven. The bucket's bits
/// ([`bucket_of`]) are the same for every key of a bucket and are not kept.
#[inline]
fn join_bits(hash64: u64) -> u32 {
    (hash64 as u32 & ((1 << JOIN_LOW_BITS) - 1)) | ((hash64 >> 57) as u32) << JOIN_LOW_BITS
}

/// The join table's hash of a key, from its [`join_bits`].
#[inline]
fn join_hash(bits: u32) -> u64 {
    (bits & ((1 << JOIN_LOW_BITS) - 1)) as u64 | ((bits >> JOIN_LOW_BITS) as u64) << 57
}

/// The rows of one side, one task and one bucket.
#[derive(Default)]
struct Chunk {
    recs: Vec<Rec>,
    keys: Vec<u8>,
    tol: Vec<Option<f64>>,
}

impl Chunk {
    /// The `len` key bytes at `start` of this chunk's key arena.
    #[inline]
    fn key_at(&self, start: u32, len: u32) -> &[u8] {
        &self.keys[start as usize..(start + len) as usize]
    }

    /// The tolerance values of record `rec`.
    #[inline]
    fn tol_of(&self, rec: u32, width: usize) -> &[Option<f64>] {
        &self.tol[rec as usize * width..][..width]
    }

    /// Append `other`'s rows, or give `other` back when the join could no longer
    /// address this chunk's records or key bytes with 32-bit numbers.
    fn append(&mut self, other: Chunk) -> Option<Chunk> {
        let fits = |now: usize, more: usize| now + more <= u32::MAX as usize;
        if !fits(self.keys.len(), other.keys.len()) || !fits(self.recs.len(), other.recs.len()) {
            return Some(other);
        }
        self.recs.extend_from_slice(&other.recs);
        self.keys.extend_from_slice(&other.keys);
        self.tol.extend_from_slice(&other.tol);
        None
    }
}

/// Chunks of fewer rows than this are copied into their bucket's shared chunk of
/// their side instead of kept apart: a task of a small row group scatters a row or
/// two to each bucket, and 4000 files of 250 rows a side made a million chunks whose
/// allocations took three times the memory of their rows.
const SMALL_CHUNK: usize = 64;

/// The rows the tasks handed over for one bucket.
#[derive(Default)]
struct Bucket {
    /// Chunks as the tasks wrote them, with their side.
    chunks: Vec<(Side, Chunk)>,
    /// Per side, the rows of the small chunks, together.
    small: [Chunk; 2],
}

impl Bucket {
    /// Take the bucket's chunks (the small ones' together last).
    fn take(&mut self) -> Vec<(Side, Chunk)> {
        let mut chunks = std::mem::take(&mut self.chunks);
        for side in [Side::Source, Side::Target] {
            let small = std::mem::take(&mut self.small[side.index()]);
            if !small.recs.is_empty() {
                chunks.push((side, small));
            }
        }
        chunks
    }
}

/// The rows one task hashed, by bucket; given to [`PartitionIndex::absorb`] at the end.
pub(crate) struct Spill {
    side: Side,
    chunks: Vec<Chunk>,
    /// Per chunk, the cache line its last record went to, as written (`stream_rec`).
    lines: Vec<Line>,
    bucket_mask: usize,
}

impl Spill {
    /// Add rows: `add` pushes them through a [`SpillWriter`]. The records are
    /// written past the cache (`stream_rec`), so they are fenced before this
    /// returns and the spill can go to another thread.
    pub fn write<R>(&mut self, add: impl FnOnce(&mut SpillWriter<'_>) -> R) -> R {
        let out = add(&mut SpillWriter { spill: self });
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a store fence has no preconditions.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
        out
    }
}

/// Adds rows to a [`Spill`] ([`Spill::write`]).
pub(crate) struct SpillWriter<'a> {
    spill: &'a mut Spill,
}

impl SpillWriter<'_> {
    /// Add one hashed row. `tol` yields the row's tolerance-column values.
    #[inline]
    pub fn push(
        &mut self,
        hash64: u64,
        key: &[u8],
        row_hash: &RowHash,
        loc: RowLoc,
        tol: impl Iterator<Item = Option<f64>>,
    ) {
        let bucket = bucket_of(hash64, self.spill.bucket_mask);
        let c = &mut self.spill.chunks[bucket];
        let rec = Rec {
            row_hash: row_hash::prefix(row_hash),
            join_bits: join_bits(hash64),
            key_len: key.len() as u32,
            loc: loc.packed(),
        };
        stream_rec(&mut c.recs, &mut self.spill.lines[bucket], rec);
        if c.keys.is_empty() {
            // Room for the rows the records have room for, if keys are about this long.
            c.keys.reserve(c.recs.capacity() * key.len());
        }
        c.keys.extend_from_slice(key);
        // The key arena's line a few keys on: a task scatters to many buckets, and a
        // store that waits for its line stalls the stores behind it.
        prefetch(c.keys.as_ptr().wrapping_add(c.keys.len() + 32));
        c.tol.extend(tol);
    }
}

/// The bytes of two records: one cache line of a chunk's records, as words.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// Append `rec` to `recs` with non-temporal stores: `rec` takes its half of `line`
/// (which holds the line's other half already, or stale bytes past the end), and
/// four 16-byte stores write the whole line, which goes to memory without being
/// read first or taking a line of the cache. A task scatters its rows over many
/// buckets and the join reads them long after, from memory either way; stored
/// through the cache, every line first waited to be read (-5% of the CPU against a
/// prefetch of that line, on the Intel host), and a half line streamed alone is
/// written to memory apart from its other half. So a line is written twice, once
/// per record: no branch on which half a record takes, which the scatter over many
/// buckets could not predict (a record that waited for its partner to stream a
/// line once took 2% more of the CPU). The caller fences ([`Spill::write`]).
#[inline(always)]
fn stream_rec(recs: &mut Vec<Rec>, line: &mut Line, rec: Rec) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_load_si128, _mm_set_epi64x, _mm_store_si128, _mm_stream_si128,
        };
        let at = recs.len();
        // Room for the whole line, whichever half `rec` takes.
        if recs.capacity() < (at | 1) + 1 {
            recs.reserve(2);
        }
        let [a, b, c, d] = rec_words(&rec);
        // SAFETY: `line` is 64 bytes aligned to 64, so its halves' 16-byte stores and
        // loads are in bounds and aligned (and each load reads what one store
        // wrote, so it is forwarded from the store whole). The line of slot `at`
        // (slots `at & !1` and the next) is within the capacity (reserved above);
        // the four streamed stores fill exactly its two slots, which hold plain
        // integers only, so any bytes make valid records; the slot past `at` (when
        // `at` is even) is past the length and rewritten by the next record; the
        // length grows once the slot is written.
        unsafe {
            let half = line.0.as_mut_ptr().add((at & 1) * 4).cast::<__m128i>();
            _mm_store_si128(half, _mm_set_epi64x(b as i64, a as i64));
            _mm_store_si128(half.add(1), _mm_set_epi64x(d as i64, c as i64));
            let src = line.0.as_ptr().cast::<__m128i>();
            let dst = recs.as_mut_ptr().add(at & !1).cast::<__m128i>();
            for i in 0..4 {
                _mm_stream_si128(dst.add(i), _mm_load_si128(src.add(i)));
            }
            recs.set_len(at + 1);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = line;
        recs.push(rec);
    }
}

/// A record's bytes as four little-endian words, each field where its offset puts
/// it (two 32-bit fields share a word), built in registers.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rec_words(rec: &Rec) -> [u64; 4] {
    use std::mem::offset_of;
    let pair = |lo: u32, hi: u32| lo as u64 | (hi as u64) << 32;
    let mut w = [0u64; 4];
    for (i, p) in rec.row_hash.as_chunks::<2>().0.iter().enumerate() {
        w[offset_of!(Rec, row_hash) / 8 + i] = pair(p[0], p[1]);
    }
    w[offset_of!(Rec, join_bits) / 8] = pair(rec.join_bits, rec.key_len);
    w[offset_of!(Rec, loc) / 8] = rec.loc;
    w
}

// `rec_words` pairs these fields in one word, and the rest are whole words.
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Rec, row_hash) == 0 && offset_of!(Rec, join_bits) == 16);
    assert!(offset_of!(Rec, key_len) == 20 && offset_of!(Rec, loc) == 24);
};

/// The bucket of a key hash: the low bits of its upper half (bits 32..44 at most),
/// which hashbrown uses for neither the slot (the low bits) nor the control byte (the
/// top 7 bits), so the keys of one bucket still spread over their join table and
/// keep distinct control bytes.
#[inline]
fn bucket_of(hash64: u64, mask: usize) -> usize {
    (hash64 >> 32) as usize & mask
}

/// A row with a NULL key column.
#[derive(Debug, Clone)]
pub(crate) struct NullKeyRow {
    /// The side.
    pub side: Side,
    /// Canonical key bytes (some values NULL).
    pub key: Vec<u8>,
}

/// The index of one partition (both sides).
pub(crate) struct PartitionIndex {
    /// Per bucket, the rows the tasks handed over.
    buckets: Vec<Mutex<Bucket>>,
    /// Where the chunks go instead, for a partition kept on disk.
    disk: Option<OnDisk>,
    bucket_mask: usize,
    null_keys: Mutex<Vec<NullKeyRow>>,
    tol_width: usize,
    rows: [AtomicU64; 2],
    hasher: foldhash::fast::FixedState,
}

/// One key of the index, as seen by the differ.
pub(crate) struct KeyView<'a> {
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

/// A key while its bucket is joined: where its bytes are (in the chunk of the row
/// that brought it), and per side how many rows have it and where the first is
/// (chunk and record in the bucket; [`NONE`] while the count is 0).
struct Entry {
    hash64: u64,
    key_chunk: u32,
    key_start: u32,
    key_len: u32,
    first: [(u32, u32); 2],
    count: [u32; 2],
    /// Per side: a row of the key differs from its first row (not an exact copy).
    differs: [bool; 2],
}

/// How many records ahead of the one it joins the join asks the CPU to fetch: the
/// records of a bucket were written long before and are read once, in order, and a
/// hint 1-2 KiB ahead took 4-5% off a reconciliation's CPU on an Intel Xeon host,
/// where the hardware alone left the join waiting on memory for half its time.
const JOIN_AHEAD: usize = 64;

/// How many keys ahead of the one it visits the join fetches the keys' first rows.
const KEYS_AHEAD: usize = 8;

/// Ask the CPU to bring the cache line at `p` in (a hint: `p` need not be valid).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
}

/// No row on this side.
const NONE: (u32, u32) = (u32::MAX, u32::MAX);

/// `a == b` for the few bytes of typical keys without a call to `memcmp`: two
/// fixed-size loads that overlap in the middle cover every length from one size to
/// twice it.
#[inline(always)]
fn key_eq(a: &[u8], b: &[u8]) -> bool {
    fn overlapping<const N: usize>(a: &[u8], b: &[u8]) -> bool {
        let n = a.len();
        a[..N] == b[..N] && a[n - N..] == b[n - N..]
    }
    if a.len() != b.len() {
        return false;
    }
    match a.len() {
        0..4 => a == b,
        4..8 => overlapping::<4>(a, b),
        8..16 => overlapping::<8>(a, b),
        16..=32 => overlapping::<16>(a, b),
        _ => a == b,
    }
}

impl PartitionIndex {
    /// An empty index for rows with `tol_width` tolerance columns, with buckets for
    /// about `expected_keys` distinct keys (from the Parquet footers).
    pub fn new(tol_width: usize, expected_keys: usize) -> Self {
        let buckets = Self::buckets_for(expected_keys);
        Self::with_store(tol_width, buckets, None)
    }

    /// An empty index like [`PartitionIndex::new`] whose buckets wait for the join
    /// in a temporary file.
    pub(crate) fn on_disk(tol_width: usize, expected_keys: usize) -> Result<Self> {
        let buckets = Self::buckets_for(expected_keys);
        let disk = OnDisk::new(buckets)?;
        Ok(Self::with_store(tol_width, buckets, Some(disk)))
    }

    fn buckets_for(expected_keys: usize) -> usize {
        expected_keys
            .div_ceil(KEYS_PER_BUCKET)
            .next_power_of_two()
            .clamp(1, MAX_BUCKETS)
    }

    fn with_store(tol_width: usize, buckets: usize, disk: Option<OnDisk>) -> Self {
        PartitionIndex {
            buckets: (0..buckets).map(|_| Mutex::default()).collect(),
            disk,
            bucket_mask: buckets - 1,
            null_keys: Mutex::new(Vec::new()),
            tol_width,
            rows: [AtomicU64::new(0), AtomicU64::new(0)],
            hasher: foldhash::fast::FixedState::with_seed(0x5eed_2ec0),
        }
    }

    /// Hash of key bytes (bucket selection and join table hash).
    #[inline]
    pub(crate) fn key_hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// An empty spill for a task that will hash about `rows` rows of `side`.
    pub fn spill(&self, side: Side, rows: usize) -> Spill {
        let n = self.buckets.len();
        let per = rows / n + rows / (n * 8) + 4;
        Spill {
            side,
            chunks: (0..n)
                .map(|_| Chunk {
                    recs: Vec::with_capacity(per),
                    keys: Vec::new(),
                    tol: Vec::with_capacity(per * self.tol_width),
                })
                .collect(),
            lines: vec![Line([0; 8]); n],
            bucket_mask: self.bucket_mask,
        }
    }

    /// Whether the buckets are kept in a temporary file.
    #[cfg(test)]
    fn is_on_disk(&self) -> bool {
        self.disk.is_some()
    }

    /// Take over a task's rows.
    pub(crate) fn absorb(&self, spill: Spill) -> Result<()> {
        let (side, chunks) = (spill.side, spill.chunks);
        if let Some(disk) = &self.disk {
            return disk.write(side, &chunks);
        }
        for (bucket, chunk) in self.buckets.iter().zip(chunks) {
            if chunk.recs.is_empty() {
                continue;
            }
            let mut bucket = bucket.lock().expect("poisoned");
            let apart = match chunk.recs.len() < SMALL_CHUNK {
                true => bucket.small[side.index()].append(chunk),
                false => Some(chunk),
            };
            if let Some(chunk) = apart {
                bucket.chunks.push((side, chunk));
            }
        }
        Ok(())
    }

    /// Rows read on a side (NULL keys included).
    pub fn rows(&self, side: Side) -> u64 {
        self.rows[side.index()].load(Ordering::Relaxed)
    }

    /// Record rows with NULL keys.
    pub(crate) fn add_null_keys(&self, rows: Vec<NullKeyRow>) {
        if !rows.is_empty() {
            self.null_keys.lock().expect("poisoned").extend(rows);
        }
    }

    /// Count rows read on a side.
    pub fn add_rows(&self, side: Side, n: u64) {
        self.rows[side.index()].fetch_add(n, Ordering::Relaxed);
    }

    /// Take the rows with NULL keys.
    pub(crate) fn take_null_keys(&self) -> Vec<NullKeyRow> {
        std::mem::take(&mut *self.null_keys.lock().expect("poisoned"))
    }

    /// Visit every key, bucket by bucket, releasing each bucket's rows once joined.
    /// Within a key, the first row of a side is the first in (file, row) order.
    pub(crate) fn drain_keys(&self, mut f: impl FnMut(KeyView<'_>)) -> Result<()> {
        let w = self.tol_width;
        let mut table: HashTable<u32> = HashTable::new();
        let mut entries: Vec<Entry> = Vec::new();
        for (bucket_no, bucket) in self.buckets.iter().enumerate() {
            let mut chunks = bucket.lock().expect("poisoned").take();
            if let Some(disk) = &self.disk {
                chunks.extend(disk.take(bucket_no)?);
            }
            // Sides and files in order, whatever order the tasks ended in, so the
            // first row of a key is mostly seen first (a shared chunk of small ones
            // holds rows of many files: the visit keeps the first by location).
            chunks.sort_by_key(|(side, c)| (side.index(), c.recs[0].loc()));
            let rec = |(chunk, rec): (u32, u32)| {
                let c = &chunks[chunk as usize].1;
                (c, &c.recs[rec as usize])
            };
            table.clear();
            entries.clear();
            let key_of = |e: &Entry| {
                chunks[e.key_chunk as usize]
                    .1
                    .key_at(e.key_start, e.key_len)
            };
            for (chunk_no, (side, chunk)) in chunks.iter().enumerate() {
                let s = side.index();
                let mut key_start = 0;
                for (rec_no, r) in chunk.recs.iter().enumerate() {
                    prefetch(chunk.recs.as_ptr().wrapping_add(rec_no + JOIN_AHEAD));
                    let here = (chunk_no as u32, rec_no as u32);
                    let key = chunk.key_at(key_start, r.key_len);
                    let hash64 = join_hash(r.join_bits);
                    let slot = table.entry(
                        hash64,
                        |&e| {
                            let e = &entries[e as usize];
                            e.hash64 == hash64 && key_eq(key_of(e), key)
                        },
                        |&e| entries[e as usize].hash64,
                    );
                    let at = match slot {
                        hashbrown::hash_table::Entry::Occupied(o) => *o.get() as usize,
                        hashbrown::hash_table::Entry::Vacant(v) => {
                            let at = entries.len();
                            v.insert(at as u32);
                            entries.push(Entry {
                                hash64,
                                key_chunk: chunk_no as u32,
                                key_start,
                                key_len: r.key_len,
                                first: [NONE; 2],
                                count: [0; 2],
                                differs: [false; 2],
                            });
                            at
                        }
                    };
                    key_start += r.key_len;
                    let e = &mut entries[at];
                    if e.count[s] == 0 {
                        e.first[s] = here;
                    } else {
                        // A duplicate (rare): is it a copy of the first row?
                        let (first_chunk, first) = rec(e.first[s]);
                        e.differs[s] |= first.row_hash != r.row_hash
                            || first_chunk.tol_of(e.first[s].1, w)
                                != chunk.tol_of(rec_no as u32, w);
                        if r.loc < first.loc {
                            e.first[s] = here;
                        }
                    }
                    e.count[s] += 1;
                }
            }
            let side = |e: &Entry, s: usize| -> Option<(RowInfo, &[Option<f64>])> {
                (e.count[s] > 0).then(|| {
                    let (c, r) = rec(e.first[s]);
                    let info = RowInfo {
                        hash: r.row_hash,
                        count: e.count[s],
                        loc: r.loc(),
                        identical: !e.differs[s],
                    };
                    (info, c.tol_of(e.first[s].1, w))
                })
            };
            for (i, e) in entries.iter().enumerate() {
                // The first rows of keys further on, which for the target side are
                // anywhere in the bucket.
                if let Some(ahead) = entries.get(i + KEYS_AHEAD) {
                    for s in 0..2 {
                        if ahead.count[s] > 0 {
                            let (chunk, rec) = ahead.first[s];
                            prefetch(&chunks[chunk as usize].1.recs[rec as usize]);
                        }
                    }
                }
                let (source, target) = (side(e, 0), side(e, 1));
                f(KeyView {
                    key: key_of(e),
                    source: source.as_ref().map(|(i, _)| i),
                    target: target.as_ref().map(|(i, _)| i),
                    source_tol: source.as_ref().map_or(&[], |(_, t)| t),
                    target_tol: target.as_ref().map_or(&[], |(_, t)| t),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// The streamed stores write every field where the record has it, in order.
    #[test]
    fn streamed_records_hold_their_fields() {
        let rec = |i: u32| Rec {
            row_hash: std::array::from_fn(|w| 0x1000 * (i + 1) + w as u32),
            join_bits: 0x0506_0708 * (i + 1),
            key_len: 3 + i,
            loc: RowLoc {
                file: 7 + i,
                row: 0x1_0000_0000 + i as u64,
            }
            .packed(),
        };
        let fields = |r: &Rec| (r.row_hash, r.join_bits, r.key_len, r.loc());
        let mut recs = Vec::new();
        let mut line = Line([0; 8]);
        // Past the first capacity, so growing keeps the streamed records too; an
        // odd number, so the last line's second half is past the end.
        for i in 0..41 {
            stream_rec(&mut recs, &mut line, rec(i));
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a store fence has no preconditions.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
        assert_eq!(recs.len(), 41);
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(fields(r), fields(&rec(i as u32)), "record {i}");
        }
    }

    #[test]
    fn locations_pack_in_file_then_row_order_at_the_limits() {
        let locs = [
            RowLoc { file: 0, row: 0 },
            RowLoc {
                file: 0,
                row: MAX_FILE_ROWS - 1,
            },
            RowLoc { file: 1, row: 0 },
            RowLoc {
                file: MAX_FILES as u32 - 1,
                row: MAX_FILE_ROWS - 1,
            },
        ];
        for pair in locs.windows(2) {
            assert!(pair[0].packed() < pair[1].packed(), "{pair:?}");
        }
        for loc in locs {
            assert_eq!(RowLoc::unpacked(loc.packed()), loc);
        }
    }

    #[test]
    fn join_bits_keep_the_hash_bits_the_join_table_reads() {
        for h in [0u64, u64::MAX, 0x8123_4567_89ab_cdef, 0x0000_0fff_0000_0001] {
            let back = join_hash(join_bits(h));
            let low = (1u64 << JOIN_LOW_BITS) - 1;
            assert_eq!(back & low, h & low, "{h:x}: slot bits");
            assert_eq!(back >> 57, h >> 57, "{h:x}: control bits");
        }
    }

    /// What the join says about one key: per side, (count, first location, row hash's
    /// first word, tolerance values).
    type Seen = [Option<(u32, RowLoc, u32, Vec<Option<f64>>)>; 2];

    fn push(index: &PartitionIndex, spill: &mut Spill, key: &str, file: u32, row: u64) {
        let tol = [Some(row as f64 + 0.5)];
        let loc = RowLoc { file, row };
        let hash = [row as u32; 8];
        spill.write(|w| {
            w.push(
                index.key_hash(key.as_bytes()),
                key.as_bytes(),
                &hash,
                loc,
                tol.into_iter(),
            )
        });
    }

    fn drain(index: &PartitionIndex) -> BTreeMap<String, Seen> {
        let mut seen = BTreeMap::new();
        let drained = index.drain_keys(|v| {
            let side = |info: Option<&RowInfo>, tol: &[Option<f64>]| {
                info.map(|i| (i.count, i.loc, i.hash[0], tol.to_vec()))
            };
            let key = String::from_utf8(v.key.to_vec()).unwrap();
            let sides = [side(v.source, v.source_tol), side(v.target, v.target_tol)];
            assert!(seen.insert(key, sides).is_none(), "a key visited twice");
        });
        drained.unwrap();
        seen
    }

    #[test]
    fn key_equality_sees_every_byte_at_every_length() {
        for n in 0..=40usize {
            let a: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(29) ^ 0x5a).collect();
            assert!(key_eq(&a, &a.clone()), "length {n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 1;
                assert!(!key_eq(&a, &b), "length {n}, byte {i}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!key_eq(&a, &longer), "length {n} against {}", n + 1);
        }
    }

    #[test]
    fn keys_join_across_tasks_with_counts_and_the_first_row_in_file_order() {
        // Few expected keys: one bucket, so every key meets every other in one table.
        let cases = [1, 100_000]
            .into_iter()
            .flat_map(|n| [(n, false), (n, true)]);
        for (expected, disk) in cases {
            let index = if disk {
                PartitionIndex::on_disk(1, expected).unwrap()
            } else {
                PartitionIndex::new(1, expected)
            };
            assert_eq!(index.is_on_disk(), disk);
            // Tasks end in any order: file 1's task hands its rows over first.
            let mut later = index.spill(Side::Source, 4);
            push(&index, &mut later, "a", 1, 0);
            push(&index, &mut later, "b", 1, 1);
            index.absorb(later).unwrap();
            let mut earlier = index.spill(Side::Source, 4);
            push(&index, &mut earlier, "a", 0, 7);
            push(&index, &mut earlier, "a", 0, 9);
            index.absorb(earlier).unwrap();
            let mut target = index.spill(Side::Target, 4);
            push(&index, &mut target, "c", 0, 3);
            push(&index, &mut target, "a", 0, 2);
            index.absorb(target).unwrap();

            let seen = drain(&index);
            let at = |file, row| RowLoc { file, row };
            let tol = |row: u64| vec![Some(row as f64 + 0.5)];
            assert_eq!(seen.len(), 3, "{expected} {disk}: {seen:?}");
            assert_eq!(
                seen["a"],
                [
                    Some((3, at(0, 7), 7, tol(7))),
                    Some((1, at(0, 2), 2, tol(2)))
                ]
            );
            assert_eq!(seen["b"], [Some((1, at(1, 1), 1, tol(1))), None]);
            assert_eq!(seen["c"], [None, Some((1, at(0, 3), 3, tol(3)))]);
            // Drained: a second pass sees nothing.
            assert!(drain(&index).is_empty());
        }
    }

    #[test]
    fn small_chunks_copied_together_keep_their_rows_and_the_first_row() {
        let index = PartitionIndex::new(1, 1);
        // A task of its own chunk (file 2), then small ones of files 1 and 0, which
        // share one chunk in the order they end.
        let mut big = index.spill(Side::Source, 100);
        for i in 0..SMALL_CHUNK as u64 * 2 {
            push(&index, &mut big, &format!("k{i}"), 2, i);
        }
        index.absorb(big).unwrap();
        for (file, row) in [(1, 4), (0, 6)] {
            let mut small = index.spill(Side::Source, 2);
            push(&index, &mut small, "k5", file, row);
            push(&index, &mut small, &format!("only{file}"), file, row + 1);
            index.absorb(small).unwrap();
        }
        let seen = drain(&index);
        let at = |file, row| RowLoc { file, row };
        assert_eq!(seen.len(), SMALL_CHUNK * 2 + 2);
        assert_eq!(seen["k5"][0], Some((3, at(0, 6), 6, vec![Some(6.5)])));
        assert_eq!(seen["k7"][0], Some((1, at(2, 7), 7, vec![Some(7.5)])));
        assert_eq!(seen["only1"][0], Some((1, at(1, 5), 5, vec![Some(5.5)])));
        assert_eq!(seen["only0"][0], Some((1, at(0, 7), 7, vec![Some(7.5)])));
    }
}
