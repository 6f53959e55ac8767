//! Hashing the rows of one decoded batch: each row's canonical key bytes and the
//! SHA-256 of its compared values.
//!
//! Columns are encoded one at a time into fixed-size row slots ([`RowSlots`]), keys
//! and values apart; then every value row is padded, and only then are rows hashed
//! and visited. The stores of the encoding are long done when the hash and the key
//! lookups load the bytes back.

use std::cell::RefCell;

use crate::canonical::{Encoder, is_null_encoding};
use crate::row_hash::RowHash;
use crate::row_slots::RowSlots;

/// One hashed row of a batch.
pub(crate) struct HashedRow<'a> {
    /// Row number in the batch.
    pub row: usize,
    /// Canonical bytes of the key columns, in key order.
    pub key: &'a [u8],
    /// SHA-256 of the value columns; `None` when a key column is NULL (the row is
    /// not matched).
    pub hash: Option<&'a RowHash>,
}

/// Slot bytes a thread's hasher keeps between batches
/// ([`RowHasher::with_thread_local`]); buffers grown past this by rows of very long
/// values are freed after their batch.
const KEPT_BYTES: usize = 8 << 20;

thread_local! {
    static THREAD_HASHER: RefCell<RowHasher> = RefCell::default();
}

/// Reusable buffers for hashing batches.
pub(crate) struct RowHasher {
    keys: RowSlots,
    values: RowSlots,
    /// Per row, where the key column being encoded starts.
    starts: Vec<usize>,
    /// Per row, whether a key column is NULL.
    null_key: Vec<bool>,
}

impl Default for RowHasher {
    fn default() -> Self {
        RowHasher {
            keys: RowSlots::for_keys(),
            values: RowSlots::for_sha256(),
            starts: Vec::new(),
            null_key: Vec::new(),
        }
    }
}

impl RowHasher {
    /// Run `f` with this thread's hasher, whose buffers are kept from batch to batch
    /// and from task to task: a hasher per row-group task zeroed and faulted in
    /// fresh slots each time (about 1% of the CPU on the bench data, when they took
    /// a megabyte).
    pub(crate) fn with_thread_local<R>(f: impl FnOnce(&mut RowHasher) -> R) -> R {
        THREAD_HASHER.with_borrow_mut(|hasher| {
            let out = f(hasher);
            if hasher.bytes_held() > KEPT_BYTES {
                *hasher = RowHasher::default();
            }
            out
        })
    }

    /// The bytes of memory the slots hold.
    fn bytes_held(&self) -> usize {
        self.keys.bytes_held() + self.values.bytes_held()
    }

    /// Hash rows `0..rows` of a batch given the encoders of its key and value
    /// columns; `visit` sees every row, in order.
    pub fn hash(
        &mut self,
        rows: usize,
        keys: &[Encoder<'_>],
        values: &[Encoder<'_>],
        mut visit: impl FnMut(HashedRow<'_>),
    ) {
        let bound = |encoders: &[Encoder<'_>]| {
            encoders
                .iter()
                .map(|e| e.max_len(0..rows))
                .fold(0, usize::saturating_add)
        };
        let (key_bound, value_bound) = (bound(keys), bound(values));
        // Value slots are the larger for one bound (room for the padding).
        let chunk = self.values.rows_per_chunk(key_bound.max(value_bound));
        for first in (0..rows).step_by(chunk) {
            let n = chunk.min(rows - first);
            self.values.reset(n, value_bound);
            for e in values {
                e.encode_rows(first, &mut self.values);
            }
            self.values.pad_sha256();
            self.encode_keys(first, n, key_bound, keys);
            self.values.sha256_rows(|r, hash| {
                visit(HashedRow {
                    row: first + r,
                    key: self.keys.row(r),
                    hash: (!self.null_key[r]).then_some(hash),
                })
            });
        }
    }

    /// Encode the key columns of rows `first..first + n`, noting rows with a NULL
    /// key column.
    fn encode_keys(&mut self, first: usize, n: usize, bound: usize, keys: &[Encoder<'_>]) {
        self.keys.reset(n, bound);
        self.null_key.clear();
        self.null_key.resize(n, false);
        for e in keys {
            if !e.may_be_null() {
                e.encode_rows(first, &mut self.keys);
                continue;
            }
            self.starts.clear();
            self.starts.extend_from_slice(self.keys.lens());
            e.encode_rows(first, &mut self.keys);
            for (r, &start) in self.starts.iter().enumerate() {
                self.null_key[r] |= is_null_encoding(&self.keys.row(r)[start..]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::StringRules;
    use arrow::array::{Array, StringArray};

    /// Hash every row of `a` (key and value) with this thread's hasher; the key bytes
    /// of each row and the hasher's held bytes after the batch.
    fn hash_with_thread_local(a: &StringArray) -> (Vec<Vec<u8>>, usize) {
        let enc = || [Encoder::new(a, StringRules::default(), "s").unwrap()];
        let (keys, values) = (enc(), enc());
        RowHasher::with_thread_local(|hasher| {
            let mut seen = Vec::new();
            hasher.hash(a.len(), &keys, &values, |h| seen.push(h.key.to_vec()));
            let held = hasher.bytes_held();
            (seen, held)
        })
    }

    #[test]
    fn the_thread_hasher_keeps_ordinary_buffers_and_frees_huge_ones() {
        let short = StringArray::from(vec!["a"; 1000]);
        let (keys, held) = hash_with_thread_local(&short);
        assert_eq!(keys.len(), 1000);
        assert!(held > 0 && held <= KEPT_BYTES, "kept: {held}");
        let kept = || THREAD_HASHER.with_borrow(RowHasher::bytes_held);
        assert_eq!(kept(), held, "the buffers are kept after the batch");
        let (_, again) = hash_with_thread_local(&short);
        assert_eq!(again, held, "the same buffers serve the next batch");

        // Two rows of 5 MB each: slots of 10 MB and more, freed after the batch.
        let long = StringArray::from(vec!["x".repeat(5 << 20); 2]);
        let (keys, _) = hash_with_thread_local(&long);
        assert_eq!(keys[1].len(), keys[0].len());
        assert_eq!(kept(), 0, "huge buffers are not kept");

        // A short batch after them is hashed like the first.
        let (after, _) = hash_with_thread_local(&short);
        let mut want = Vec::new();
        Encoder::new(&short, StringRules::default(), "s")
            .unwrap()
            .encode(999, &mut want);
        assert_eq!(after[999], want);
    }
}
