//! The canonical bytes of a batch's rows, each row in a fixed-size slot of one
//! buffer, written a column at a time.
//!
//! A row's slot has room for the most its columns can take ([`Encoder::max_len`]),
//! so writes need no capacity check or growth, and a value is stored in one go (see
//! [`Out::word`]), and for SHA-256's padding, written in fixed-size stores
//! ([`RowSlots::pad_sha256`]). Nothing is zeroed between batches: a row's bytes are
//! only ever read up to what was written.
//!
//! [`Encoder::max_len`]: crate::canonical::Encoder::max_len

use crate::out::Out;
use crate::row_hash::{self, RowHash};

/// Bytes of slots one chunk of rows aims at: a chunk stays in a core's L2 cache,
/// beside the batch's columns and Parquet's pages, while its columns are encoded one
/// after the other and its rows hashed. 32 to 256 KiB took 1.5-3% less CPU on the
/// bench data than 1 MiB (64 KiB the least); 16 KiB as much as 1 MiB.
const CHUNK_BYTES: usize = 64 << 10;

/// Room after a row's bound for a sixteen-byte store at its end.
const SLACK: usize = 16;

/// What the slots are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Keys: bytes only.
    Keys,
    /// Row hashes: bytes followed by room for SHA-256's padding, in whole blocks.
    Sha256,
}

/// Rows of canonical bytes in fixed-size slots; see the module docs.
pub struct RowSlots {
    /// `lens.len()` slots of `stride` bytes.
    buf: Vec<u8>,
    lens: Vec<usize>,
    stride: usize,
    usage: Use,
}

impl RowSlots {
    /// Slots for keys.
    pub fn for_keys() -> Self {
        Self::new(Use::Keys)
    }

    /// Slots for rows to hash with SHA-256 ([`RowSlots::pad_sha256`]).
    pub fn for_sha256() -> Self {
        Self::new(Use::Sha256)
    }

    fn new(usage: Use) -> Self {
        RowSlots {
            buf: Vec::new(),
            lens: Vec::new(),
            stride: 64,
            usage,
        }
    }

    /// How many rows whose encodings take at most `bound` bytes one chunk of these
    /// slots holds: whole groups of the rows SHA-256 hashes together
    /// ([`row_hash::ROWS_TOGETHER`]), so that only a batch's last chunk has rows
    /// hashed one by one.
    pub(crate) fn rows_per_chunk(&self, bound: usize) -> usize {
        let rows = CHUNK_BYTES / self.stride_for(bound);
        match rows >= row_hash::ROWS_TOGETHER {
            true => rows - rows % row_hash::ROWS_TOGETHER,
            false => rows.max(1),
        }
    }

    /// The slot size for rows of at most `bound` bytes: room for a sixteen-byte
    /// store at the end, and for hashed rows for the padding too.
    fn stride_for(&self, bound: usize) -> usize {
        let room = match self.usage {
            Use::Keys => SLACK,
            Use::Sha256 => SLACK.max(row_hash::PADDING_ROOM),
        };
        bound.saturating_add(room).next_multiple_of(16)
    }

    /// Make `rows` empty slots of room for `bound` bytes each.
    pub fn reset(&mut self, rows: usize, bound: usize) {
        self.stride = self.stride_for(bound);
        let need = rows
            .checked_mul(self.stride)
            .expect("row slots exceed the address space");
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        self.lens.clear();
        self.lens.resize(rows, 0);
    }

    /// The bytes of memory the slots hold.
    pub(crate) fn bytes_held(&self) -> usize {
        self.buf.capacity() + self.lens.capacity() * size_of::<usize>()
    }

    /// The bytes written so far to each row.
    #[inline]
    pub(crate) fn lens(&self) -> &[usize] {
        &self.lens
    }

    /// The bytes of row `r`.
    #[inline]
    pub fn row(&self, r: usize) -> &[u8] {
        let start = r * self.stride;
        &self.buf[start..start + self.lens[r]]
    }

    /// A writer per row, with the row numbers `first..` of the batch they stand for.
    pub(crate) fn outs(&mut self, first: usize) -> impl Iterator<Item = (usize, SlotOut<'_>)> {
        self.buf
            .chunks_exact_mut(self.stride)
            .zip(self.lens.iter_mut())
            .map(|(slot, len)| SlotOut { slot, len })
            .enumerate()
            .map(move |(r, out)| (first + r, out))
    }

    /// Append SHA-256's padding to every row, after all rows are written and before
    /// any is hashed (see `row_hash::sha256_padded`); a row then spans whole
    /// blocks.
    pub fn pad_sha256(&mut self) {
        assert_eq!(self.usage, Use::Sha256, "padding key slots");
        for (slot, &len) in self.buf.chunks_exact_mut(self.stride).zip(&self.lens) {
            row_hash::pad(slot, len);
        }
    }

    /// The SHA-256 of every row, after [`RowSlots::pad_sha256`], passed to `each`
    /// with the row's number, in row order (see [`row_hash::sha256_rows`]).
    pub fn sha256_rows(&self, each: impl FnMut(usize, &RowHash)) {
        assert_eq!(self.usage, Use::Sha256, "hashing key slots");
        row_hash::sha256_rows(&self.buf, self.stride, &self.lens, each);
    }
}

/// Writes one row's slot: bounds-checked stores into room [`RowSlots::reset`] made.
pub(crate) struct SlotOut<'a> {
    slot: &'a mut [u8],
    len: &'a mut usize,
}

impl Out for SlotOut<'_> {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.slot[*self.len] = b;
        *self.len += 1;
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        let at = *self.len;
        copy_short(&mut self.slot[at..at + b.len()], b);
        *self.len += b.len();
    }

    #[inline]
    fn word(&mut self, w: u128, n: usize) {
        // The bytes above `n` are zero, as the slot is there.
        let at = *self.len;
        self.slot[at..at + 16].copy_from_slice(&w.to_le_bytes());
        *self.len += n;
    }
}

/// `dst.copy_from_slice(src)` for the short strings of typical rows without a call
/// to `memcpy`: two fixed-size copies that overlap in the middle cover every length
/// from one size to twice it.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    fn overlapping<const N: usize>(dst: &mut [u8], src: &[u8]) {
        let n = src.len();
        dst[..N].copy_from_slice(&src[..N]);
        dst[n - N..].copy_from_slice(&src[n - N..]);
    }
    match src.len() {
        0 => {}
        1..4 => dst.iter_mut().zip(src).for_each(|(d, s)| *d = *s),
        4..8 => overlapping::<4>(dst, src),
        8..16 => overlapping::<8>(dst, src),
        16..=32 => overlapping::<16>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{Encoder, StringRules};
    use arrow::array::{Array, StringArray};
    use sha2::{Digest, Sha256};

    /// Encode `a` into `slots`, pad and check every row's SHA-256 against
    /// [`sha2::Sha256`] of what the row path writes.
    fn check_hashes(slots: &mut RowSlots, a: &StringArray, rules: StringRules) {
        let enc = Encoder::new(a, rules, "s").unwrap();
        slots.reset(a.len(), enc.max_len(0..a.len()));
        enc.encode_rows(0, slots);
        slots.pad_sha256();
        let mut hashes = Vec::new();
        slots.sha256_rows(|_, hash| hashes.push(*hash));
        assert_eq!(hashes.len(), a.len(), "a hash a row");
        for (r, hash) in hashes.iter().enumerate() {
            let mut want = Vec::new();
            enc.encode(r, &mut want);
            assert_eq!(slots.row(r), want.as_slice(), "row {r}");
            let got: Vec<u8> = hash.iter().flat_map(|w| w.to_be_bytes()).collect();
            assert_eq!(got, Sha256::digest(&want).to_vec(), "row {r}");
        }
    }

    #[test]
    fn a_chunk_is_whole_groups_of_rows_hashed_together_within_its_bytes() {
        let slots = RowSlots::for_sha256();
        for bound in (0..5000).step_by(7).chain([CHUNK_BYTES, 10 * CHUNK_BYTES]) {
            let rows = slots.rows_per_chunk(bound);
            let stride = slots.stride_for(bound);
            assert!(rows >= 1, "bound {bound}: no rows");
            assert!(
                rows == 1 || rows * stride <= CHUNK_BYTES,
                "bound {bound}: {rows} rows of {stride} bytes"
            );
            if CHUNK_BYTES / stride >= row_hash::ROWS_TOGETHER {
                assert_eq!(
                    rows % row_hash::ROWS_TOGETHER,
                    0,
                    "bound {bound}: {rows} rows"
                );
                assert!(
                    (rows + row_hash::ROWS_TOGETHER) * stride > CHUNK_BYTES,
                    "bound {bound}: room for another group"
                );
            }
        }
    }

    #[test]
    fn short_copies_copy_every_length() {
        for n in 0..=80usize {
            let src: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37) | 1).collect();
            let mut dst = vec![0u8; n];
            copy_short(&mut dst, &src);
            assert_eq!(dst, src, "length {n}");
        }
    }

    #[test]
    fn a_reused_buffer_hashes_short_rows_after_long_ones() {
        let mut slots = RowSlots::for_sha256();
        let long = StringArray::from(vec!["a".repeat(300), "b".repeat(100)]);
        let short = StringArray::from(vec![Some("x"), None, Some(""), Some("yz")]);
        check_hashes(&mut slots, &long, StringRules::default());
        check_hashes(&mut slots, &short, StringRules::default());
        check_hashes(&mut slots, &long, StringRules::default());
    }

    #[test]
    fn lower_casing_that_lengthens_text_stays_in_its_slot() {
        // U+0130 (2 bytes) lower-cases to "i" and U+0307 (3 bytes).
        let grows = StringArray::from(vec!["İ".repeat(50), "İx".into(), String::new()]);
        let rules = StringRules {
            ignore_case: true,
            ..StringRules::default()
        };
        check_hashes(&mut RowSlots::for_sha256(), &grows, rules);
    }
}
