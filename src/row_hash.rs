//! The SHA-256 of a row's canonical bytes, straight from the row's buffer.
//!
//! The whole blocks are compressed where they lie and only the last one is padded
//! (FIPS 180-4 §5.1.1) in a stack copy: no copy into a hasher's block buffer, and the
//! digest stays as the eight state words ([`RowHash`]), which is all the differ needs
//! (equality). The result is plain SHA-256; the tests check it against [`sha2::Sha256`].

use sha2::block_api::compress256;

/// A row's SHA-256 as its eight state words (the digest is their big-endian bytes).
pub type RowHash = [u32; 8];

/// SHA-256's initial state (FIPS 180-4 §5.3.3).
const INITIAL: RowHash = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The SHA-256 of `bytes`: their whole blocks are compressed where they lie, the
/// last partial block and the padding in a stack copy.
pub fn sha256(bytes: &[u8]) -> RowHash {
    let (blocks, rest) = bytes.as_chunks::<64>();
    let mut state = INITIAL;
    compress256(&mut state, blocks);
    // rest, 0x80, zeros, the length in bits (big-endian, last 8 bytes): 1 or 2 blocks.
    let mut tail = [[0u8; 64]; 2];
    let used = if rest.len() + 9 <= 64 { 1 } else { 2 };
    let flat = tail.as_flattened_mut();
    flat[..rest.len()].copy_from_slice(rest);
    flat[rest.len()] = 0x80;
    let bits = (bytes.len() as u64).wrapping_mul(8);
    flat[used * 64 - 8..used * 64].copy_from_slice(&bits.to_be_bytes());
    compress256(&mut state, &tail[..used]);
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
            let words = sha256(&msg);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
            assert_eq!(bytes, Sha256::digest(&msg).to_vec(), "length {len}");
        }
    }
}
