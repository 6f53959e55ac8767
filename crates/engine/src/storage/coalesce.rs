//! Coalescing of ranged reads: the byte ranges a Parquet reader asks for at once (a
//! row group's column chunks) are merged into fewer, larger reads where they are
//! adjacent or close, and the bytes read are sliced back into the ranges asked for.
//!
//! ```
//! use recon_engine::storage::coalesce::{Coalesced, MAX_GAP, MAX_READ};
//! let plan = Coalesced::plan(&[10..20, 0..10, 25..30], MAX_GAP, MAX_READ);
//! assert_eq!(plan.reads(), &[0..30]);
//! let read = bytes::Bytes::from((0..30u8).collect::<Vec<u8>>());
//! let parts = plan.split(&[read]);
//! assert_eq!(&parts[0][..], &(10..20u8).collect::<Vec<u8>>()[..]);
//! ```

use std::ops::Range;

use bytes::Bytes;

/// Ranges at most this far apart are read together: 1 MiB. A GET's first byte takes
/// tens of milliseconds on S3, about the time 1 MiB more takes to arrive, so reading
/// a gap this small (a column not projected, a page index) is no slower than a second
/// request, and it costs no request charge.
pub const MAX_GAP: u64 = 1 << 20;

/// A merged read is at most this long: 128 MiB, Spark's and parquet-mr's row-group
/// size (`parquet.block.size`), so a row group written by them is one GET. Longer
/// spans are split into several reads, which then run in parallel; one attempt of a
/// read this long takes a few seconds, well inside the SDK's attempt timeout, so a
/// retry re-reads little. The bytes are held either way: the Parquet reader keeps
/// every column chunk of the row group it decodes.
pub const MAX_READ: u64 = 128 << 20;

/// How a list of requested ranges is read: the merged reads, and where each requested
/// range lies in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coalesced {
    reads: Vec<Range<u64>>,
    /// Per requested range, in request order: the read that holds it and its offset
    /// and length there; `None` for an empty range, which needs no read.
    pieces: Vec<Option<Piece>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    read: usize,
    offset: usize,
    len: usize,
}

impl Coalesced {
    /// Plan the reads of `ranges` (in any order, overlapping or repeated): ranges
    /// that overlap, touch or are at most `max_gap` bytes apart share a read, unless
    /// the read would grow beyond `max_read` bytes (a single range longer than that is
    /// read on its own, whole). Empty ranges (`start >= end`) are read as nothing.
    pub fn plan(ranges: &[Range<u64>], max_gap: u64, max_read: u64) -> Coalesced {
        let mut order: Vec<usize> = (0..ranges.len())
            .filter(|&i| ranges[i].start < ranges[i].end)
            .collect();
        order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
        let mut reads: Vec<Range<u64>> = Vec::new();
        let mut pieces = vec![None; ranges.len()];
        for i in order {
            let r = &ranges[i];
            let joins = reads.last().is_some_and(|last| {
                r.start <= last.end.saturating_add(max_gap)
                    && r.end.max(last.end) - last.start <= max_read
            });
            match reads.last_mut() {
                Some(last) if joins => last.end = last.end.max(r.end),
                _ => reads.push(r.clone()),
            }
            let read = reads.len() - 1;
            pieces[i] = Some(Piece {
                read,
                offset: usize_of(r.start - reads[read].start),
                len: usize_of(r.end - r.start),
            });
        }
        Coalesced { reads, pieces }
    }

    /// The reads to make, sorted by offset.
    pub fn reads(&self) -> &[Range<u64>] {
        &self.reads
    }

    /// The requested ranges, in request order, sliced (without copying) out of the
    /// bytes of [`Coalesced::reads`], given in the same order and each as long as its
    /// read (a short read is the caller's error to report first; this panics on one).
    pub fn split(&self, read: &[Bytes]) -> Vec<Bytes> {
        self.pieces
            .iter()
            .map(|p| match p {
                Some(p) => read[p.read].slice(p.offset..p.offset + p.len),
                None => Bytes::new(),
            })
            .collect()
    }
}

/// A length within one read, which is held in memory, so it fits a `usize`.
fn usize_of(n: u64) -> usize {
    usize::try_from(n).expect("a range held in memory fits usize")
}

#[cfg(test)]
// The lists below are lists of byte ranges, some deliberately empty or reversed.
#[allow(clippy::single_range_in_vec_init, clippy::reversed_empty_ranges)]
mod tests {
    use super::*;

    fn plan(ranges: &[Range<u64>]) -> Coalesced {
        Coalesced::plan(ranges, 10, 100)
    }

    /// The bytes of an object whose byte at offset `i` is `i % 251`.
    fn object_bytes(r: &Range<u64>) -> Bytes {
        r.clone()
            .map(|i| (i % 251) as u8)
            .collect::<Vec<u8>>()
            .into()
    }

    /// Read the plan from that object and check every piece against a direct read.
    fn check_split(ranges: &[Range<u64>], c: &Coalesced) {
        let read: Vec<Bytes> = c.reads().iter().map(object_bytes).collect();
        let parts = c.split(&read);
        assert_eq!(parts.len(), ranges.len());
        for (r, part) in ranges.iter().zip(&parts) {
            let want = if r.start < r.end {
                object_bytes(r)
            } else {
                Bytes::new()
            };
            assert_eq!(part, &want, "range {r:?}");
        }
    }

    #[test]
    fn adjacent_ranges_are_one_read() {
        let ranges = [0..10, 10..30, 30..31];
        let c = plan(&ranges);
        assert_eq!(c.reads(), &[0..31]);
        check_split(&ranges, &c);
    }

    #[test]
    fn unsorted_ranges_come_back_in_request_order() {
        let ranges = [40..50, 0..10, 20..30];
        let c = plan(&ranges);
        assert_eq!(c.reads(), &[0..50]);
        check_split(&ranges, &c);
    }

    #[test]
    fn overlapping_and_repeated_ranges_share_a_read() {
        let ranges = [0..20, 5..15, 10..30, 5..15, 0..20];
        let c = plan(&ranges);
        assert_eq!(c.reads(), &[0..30]);
        check_split(&ranges, &c);
    }

    #[test]
    fn gaps_up_to_the_threshold_are_read_through_and_wider_ones_split() {
        // 20..30 starts 10 bytes (the threshold) after 0..10; 41..50 11 bytes after 20..30.
        let ranges = [0..10, 20..30, 41..50];
        let c = plan(&ranges);
        assert_eq!(c.reads(), &[0..30, 41..50]);
        check_split(&ranges, &c);
        // With no gap allowed only touching ranges merge.
        let c = Coalesced::plan(&ranges, 0, 100);
        assert_eq!(c.reads(), &[0..10, 20..30, 41..50]);
        check_split(&ranges, &c);
    }

    #[test]
    fn a_read_never_grows_past_the_cap_but_a_long_range_is_read_whole() {
        let ranges = [0..60, 60..100, 100..130, 130..400, 400..410];
        let c = plan(&ranges);
        assert_eq!(c.reads(), &[0..100, 100..130, 130..400, 400..410]);
        check_split(&ranges, &c);
    }

    #[test]
    fn empty_requests_and_empty_ranges_need_no_read() {
        let c = plan(&[]);
        assert!(c.reads().is_empty());
        assert!(c.split(&[]).is_empty());
        let ranges = [5..5, 0..10, 9..3];
        let c = plan(&ranges);
        assert_eq!(c.reads(), &[0..10]);
        check_split(&ranges, &c);
        let c = plan(&[7..7]);
        assert!(c.reads().is_empty());
        assert_eq!(c.split(&[]), vec![Bytes::new()]);
    }

    #[test]
    fn slices_share_the_read_buffer() {
        let c = plan(&[0..4, 4..8]);
        let read = Bytes::from_static(b"abcdefgh");
        let parts = c.split(std::slice::from_ref(&read));
        assert_eq!(parts[1].as_ptr(), read[4..].as_ptr());
    }
}
