//! The SHA-256 of a row's canonical bytes, in the row's own slot.
//!
//! The padding is written into the slot ([`pad`]) and its blocks are
//! compressed where they lie ([`sha256_padded`]): no copy into a hasher's block
//! buffer, and the digest stays as the eight state words ([`RowHash`]), which is all
//! the differ needs (equality). The result is plain SHA-256; the tests check it
//! against [`sha2::Sha256`].

use sha2::block_api::compress256;

/// A row's SHA-256 as its eight state words (the digest is their big-endian bytes).
pub type RowHash = [u32; 8];

/// SHA-256's initial state (FIPS 180-4 §5.3.3).
const INITIAL: RowHash = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The fewest bytes the padding adds: the 1 bit (a byte) and the 8-byte length.
pub const PADDING_MIN: usize = 9;

/// The length of a `len`-byte message with its padding: whole 64-byte blocks.
#[inline]
pub fn padded_len(len: usize) -> usize {
    (len + PADDING_MIN).next_multiple_of(64)
}

/// Room [`pad`] needs after a message: the most padding adds (63 bytes to end a
/// block plus the fewest), which also holds the 1 bit's byte and the 64 zero bytes
/// stored after it in one go.
pub const PADDING_ROOM: usize = PADDING_MIN + 63;

/// Append SHA-256's padding (FIPS 180-4 §5.1.1) to the `len`-byte message at the
/// start of `buf`: a 1 bit, zeros, and the message length in bits at the end of the
/// last block. `buf` needs [`PADDING_ROOM`] bytes after the message (and at least
/// [`padded_len`] bytes); the zeros are one fixed-size store, whatever the length.
#[inline]
pub fn pad(buf: &mut [u8], len: usize) {
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
pub fn sha256_padded(padded: &[u8]) -> RowHash {
    let (blocks, rest) = padded.as_chunks::<64>();
    debug_assert!(rest.is_empty(), "not padded");
    let mut state = INITIAL;
    compress256(&mut state, blocks);
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

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
}
