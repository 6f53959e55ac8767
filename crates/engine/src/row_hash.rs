//! The SHA-256 of a row's canonical bytes, in the row's own slot.
//!
//! The padding is written into the slot (`pad`) and its blocks are
//! compressed where they lie (`sha256_padded`): no copy into a hasher's block
//! buffer, and the digest stays as the eight state words (`RowHash`), which is all
//! the differ needs (equality). The result is plain SHA-256; the tests check it
//! against [`sha2::Sha256`].
//!
//! A batch's rows are hashed together ([`sha256_rows`]): sixteen at a time with
//! AVX-512 where the CPU has it (`sixteen_lanes`), else one by one with `sha2`
//! (SHA-NI where the CPU has that).

use sha2::block_api::compress256;

#[cfg(target_arch = "x86_64")]
mod sixteen_lanes;

/// How many rows [`sha256_rows`] hashes at once where it can; the rest of a batch
/// past the last whole group is hashed one row at a time, at about twice the cost a
/// block.
#[cfg(target_arch = "x86_64")]
pub(crate) const ROWS_TOGETHER: usize = sixteen_lanes::LANES;
/// How many rows [`sha256_rows`] hashes at once.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) const ROWS_TOGETHER: usize = 1;

/// A row's SHA-256 as its eight state words (the digest is their big-endian bytes).
pub(crate) type RowHash = [u32; 8];

/// The first 128 bits of a row's SHA-256 (its first four state words): what the key
/// index keeps and compares. Two different rows of one key agree on them with a
/// probability of 2^-128, and the index's records stay half a cache line.
pub(crate) type RowHashPrefix = [u32; 4];

/// The `RowHashPrefix` of a row's SHA-256.
#[inline]
pub fn prefix(hash: &RowHash) -> RowHashPrefix {
    [hash[0], hash[1], hash[2], hash[3]]
}

/// SHA-256's initial state (FIPS 180-4 §5.3.3).
const INITIAL: RowHash = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The fewest bytes the padding adds: the 1 bit (a byte) and the 8-byte length.
pub(crate) const PADDING_MIN: usize = 9;

/// The length of a `len`-byte message with its padding: whole 64-byte blocks.
#[inline]
pub(crate) fn padded_len(len: usize) -> usize {
    (len + PADDING_MIN).next_multiple_of(64)
}

/// Room [`pad`] needs after a message: the most padding adds (63 bytes to end a
/// block plus the fewest), which also holds the 1 bit's byte and the 64 zero bytes
/// stored after it in one go.
pub(crate) const PADDING_ROOM: usize = PADDING_MIN + 63;

/// Append SHA-256's padding (FIPS 180-4 §5.1.1) to the `len`-byte message at the
/// start of `buf`: a 1 bit, zeros, and the message length in bits at the end of the
/// last block. `buf` needs [`PADDING_ROOM`] bytes after the message (and at least
/// [`padded_len`] bytes); the zeros are one fixed-size store, whatever the length.
#[inline]
pub(crate) fn pad(buf: &mut [u8], len: usize) {
    let padded = padded_len(len);
    let zeros: &mut [u8; 64] = (&mut buf[len + 1..len + 65]).try_into().expect("64 bytes");
    *zeros = [0; 64];
    buf[len] = 0x80;
    let bits = (len as u64).wrapping_mul(8);
    buf[padded - 8..padded].copy_from_slice(&bits.to_be_bytes());
}

/// The SHA-256 of a message that [`pad`] padded. Pad a batch of rows first
/// and hash them after: the padding's narrow stores are then long done when the wide
/// loads of the compression read them (loading right after storing stalls the CPU).
#[inline]
pub(crate) fn sha256_padded(padded: &[u8]) -> RowHash {
    let (blocks, rest) = padded.as_chunks::<64>();
    debug_assert!(rest.is_empty(), "not padded");
    let mut state = INITIAL;
    compress256(&mut state, blocks);
    state
}

/// The SHA-256 of each of `lens.len()` padded rows laid out `stride` bytes apart in
/// `buf` (row `r` is the `lens[r]`-byte message at `r * stride`, padded by `pad`),
/// passed to `each` with the row's number, in row order. Rows are handed on as soon
/// as their group of sixteen is hashed, so what `each` stores to memory drains while
/// the next group is computed.
pub fn sha256_rows(
    buf: &[u8],
    stride: usize,
    lens: &[usize],
    mut each: impl FnMut(usize, &RowHash),
) {
    let one = |r: usize| sha256_padded(&buf[r * stride..r * stride + padded_len(lens[r])]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if sixteen_lanes::usable(stride) {
        use sixteen_lanes::LANES;
        for group in lens.as_chunks::<LANES>().0 {
            let hashes = sixteen_lanes::sha256_16(&buf[done * stride..], stride, group);
            for hash in &hashes.0 {
                each(done, hash);
                done += 1;
            }
        }
    }
    for r in done..lens.len() {
        each(r, &one(r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// make portable-check runs these tests with the feature: they must then take the
    /// one-row path, whatever the CPU.
    #[cfg(all(target_arch = "x86_64", feature = "portable"))]
    #[test]
    fn the_portable_build_never_takes_the_sixteen_lane_path() {
        assert!(!sixteen_lanes::usable(64));
    }

    #[test]
    fn equals_sha256_at_every_length_around_the_block_edges() {
        for len in 0..=200usize {
            let msg: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
            // Junk after the message: the padding must not depend on what is there.
            let mut buf = msg.clone();
            buf.resize(len + 128, 0xA5);
            pad(&mut buf, len);
            let padded = &buf[..padded_len(len)];
            assert_eq!(padded.len() % 64, 0, "length {len}: whole blocks");
            let words = sha256_padded(padded);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
            assert_eq!(bytes, Sha256::digest(&msg).to_vec(), "length {len}");
        }
    }

    /// Rows of every length from 0 to 299 bytes (1 to 6 blocks) mixed within each
    /// group of sixteen, and a count that leaves a partial group: every lane keeps
    /// its own block count, and the rows past the last group are hashed too.
    #[test]
    fn rows_hashed_together_equal_sha256_of_each_row() {
        let stride = padded_len(299).next_multiple_of(16) + 16;
        for rows in [1usize, 15, 16, 17, 100, 301] {
            let lens: Vec<usize> = (0..rows).map(|r| (r * 37 + rows) % 300).collect();
            let mut buf = vec![0x5Au8; rows * stride];
            let mut msgs = Vec::new();
            for (r, &len) in lens.iter().enumerate() {
                let msg: Vec<u8> = (0..len).map(|i| (i * 13 + r * 7) as u8).collect();
                buf[r * stride..r * stride + len].copy_from_slice(&msg);
                pad(&mut buf[r * stride..], len);
                msgs.push(msg);
            }
            let mut seen = Vec::new();
            sha256_rows(&buf, stride, &lens, |r, words| seen.push((r, *words)));
            assert_eq!(seen.len(), rows, "{rows} rows: every row once");
            for (want_r, (r, words)) in seen.into_iter().enumerate() {
                assert_eq!(r, want_r, "{rows} rows: in row order");
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
                let want = Sha256::digest(&msgs[r]).to_vec();
                assert_eq!(bytes, want, "{rows} rows: row {r} of {} bytes", lens[r]);
            }
        }
    }
}
