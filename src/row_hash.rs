//! The SHA-256 of a row's canonical bytes, computed in the row's own buffer.
//!
//! The standard padding (FIPS 180-4 §5.1.1) is appended to the buffer and its blocks
//! are compressed where they lie: no copy into a hasher's block buffer, and the digest
//! stays as the eight state words ([`RowHash`]), which is all the differ needs
//! (equality). The result is plain SHA-256; the tests check it against [`sha2::Sha256`].

use sha2::block_api::compress256;

/// A row's SHA-256 as its eight state words (the digest is their big-endian bytes).
pub type RowHash = [u32; 8];

/// SHA-256's initial state (FIPS 180-4 §5.3.3).
const INITIAL: RowHash = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The SHA-256 of the bytes in `buf`. Appends the padding to `buf`: clear it before
/// reusing it.
pub fn sha256_in_place(buf: &mut Vec<u8>) -> RowHash {
    let bits = (buf.len() as u64).wrapping_mul(8);
    buf.push(0x80);
    let padded = (buf.len() + 8).next_multiple_of(64);
    buf.resize(padded - 8, 0);
    buf.extend_from_slice(&bits.to_be_bytes());
    let (blocks, rest) = buf.as_chunks::<64>();
    debug_assert!(rest.is_empty());
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
            let mut buf = msg.clone();
            let words = sha256_in_place(&mut buf);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
            assert_eq!(bytes, Sha256::digest(&msg).to_vec(), "length {len}");
            assert_eq!(buf.len() % 64, 0, "length {len}: padded to whole blocks");
        }
    }
}
