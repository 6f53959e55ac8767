//! Hashing the rows of one decoded batch: each row's canonical key bytes and the
//! SHA-256 of its compared values.
//!
//! Columns are encoded one at a time into fixed-size row slots ([`RowSlots`]), keys
//! and values apart; then every value row is padded, and only then are rows hashed
//! and visited. The stores of the encoding are long done when the hash and the key
//! lookups load the bytes back.

use crate::canonical::{Encoder, is_null_encoding};
use crate::row_hash::RowHash;
use crate::row_slots::RowSlots;

/// One hashed row of a batch.
pub struct HashedRow<'a> {
    /// Row number in the batch.
    pub row: usize,
    /// Canonical bytes of the key columns, in key order.
    pub key: &'a [u8],
    /// SHA-256 of the value columns; `None` when a key column is NULL (the row is
    /// not matched).
    pub hash: Option<&'a RowHash>,
}

/// Reusable buffers for hashing batches (one per task).
pub struct RowHasher {
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
