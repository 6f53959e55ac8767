//! The SHA-256 of a row's canonical bytes, in the row's own buffer.
//!
//! The padding is appended to the buffer ([`pad`]) and its blocks are compressed where
//! they lie ([`sha256_padded`]): no copy into a hasher's block buffer, and the digest
//! stays as the eight state words ([`RowHash`]), which is all the differ needs
//! (equality). The result is plain SHA-256; the tests check it against [`sha2::Sha256`].

use sha2::block_api::compress256;

/// A row's SHA-256 as its eight state words (the digest is their big-endian bytes).
pub type RowHash = [u32; 8];

/// SHA-256's initial state (FIPS 180-4 §5.3.3).
const INITIAL: RowHash = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// Append SHA-256's padding to a message (FIPS 180-4 §5.1.1): a 1 bit, zeros, and
/// the message length in bits, making whole 64-byte blocks for [`sha256_padded`].
pub fn pad(message: &mut Vec<u8>) {
    let len = message.len();
    let padded = (len + 9).next_multiple_of(64);
    message.resize(padded, 0);
    message[len] = 0x80;
    let bits = (len as u64).wrapping_mul(8);
    message[padded - 8..].copy_from_slice(&bits.to_be_bytes());
}

/// The SHA-256 of a message that [`pad`] padded. Pad a batch of rows first and hash
/// them after: the padding's narrow stores are then long done when the wide loads of
/// the compression read them (loading right after storing stalls the CPU).
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
            let mut padded = msg.clone();
            pad(&mut padded);
            assert_eq!(padded.len() % 64, 0, "length {len}: whole blocks");
            let words = sha256_padded(&padded);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
            assert_eq!(bytes, Sha256::digest(&msg).to_vec(), "length {len}");
        }
    }
}
