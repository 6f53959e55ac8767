//! Where canonical bytes go ([`Out`]), and numbers as LEB128 varints built in a
//! register ([`uvarint_word`]) so a value is one store, not a store per byte.

/// A destination of canonical bytes: a growable buffer (`Vec<u8>`: keys, mismatch
/// details) or a row's slot in a batch buffer ([`crate::row_slots::RowSlots`]: row
/// hashes).
pub trait Out {
    /// Append one byte.
    fn byte(&mut self, b: u8);
    /// Append bytes.
    fn bytes(&mut self, b: &[u8]);
    /// Append the low `n` bytes of `w`, lowest first. The bytes of `w` above the
    /// `n`th are zero, so a destination with room may store all sixteen at once.
    fn word(&mut self, w: u128, n: usize);
}

impl Out for Vec<u8> {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.push(b);
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }

    #[inline]
    fn word(&mut self, w: u128, n: usize) {
        self.extend_from_slice(&w.to_le_bytes()[..n]);
    }
}

impl<T: Out + ?Sized> Out for &mut T {
    #[inline]
    fn byte(&mut self, b: u8) {
        (**self).byte(b);
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        (**self).bytes(b);
    }

    #[inline]
    fn word(&mut self, w: u128, n: usize) {
        (**self).word(w, n);
    }
}

/// The continuation bits of an `n`-byte varint: the high bit of every byte but the
/// last.
const CONTINUATION: [u128; 11] = {
    let mut t = [0u128; 11];
    let mut n = 2;
    while n <= 10 {
        t[n] = t[n - 1] | 0x80 << (8 * (n - 2));
        n += 1;
    }
    t
};

/// `v` as unsigned LEB128 (seven bits a byte, lowest group first, the high bit set
/// on every byte but the last, no needless high byte) in the low bytes of a word,
/// and its length (1 to 10 bytes). No branches: the seven-bit groups are spread to
/// bytes with masks and shifts.
#[inline]
pub fn uvarint_word(v: u64) -> (u128, usize) {
    let n = ((70 - v.leading_zeros() as usize) / 7).max(1);
    // Groups 0..8 (the low 56 bits) into the low eight bytes: halves of 28 bits into
    // 32-bit lanes, then 14-bit groups into 16-bit lanes, then 7-bit groups into bytes.
    let mut lo = v & 0x00FF_FFFF_FFFF_FFFF;
    lo = (lo & 0x0000_0000_0FFF_FFFF) | ((lo & 0x00FF_FFFF_F000_0000) << 4);
    lo = (lo & 0x0000_3FFF_0000_3FFF) | ((lo & 0x0FFF_C000_0FFF_C000) << 2);
    lo = (lo & 0x007F_007F_007F_007F) | ((lo & 0x3F80_3F80_3F80_3F80) << 1);
    // Groups 8 and 9 (bits 56..64) into bytes 8 and 9.
    let hi = ((v >> 56) & 0x7F) | ((v >> 63) << 8);
    (lo as u128 | (hi as u128) << 64 | CONTINUATION[n], n)
}

/// Zigzag-map a signed number (0, -1, 1, -2 ... to 0, 1, 2, 3 ...), so small
/// magnitudes of either sign make short varints.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Append `v` as unsigned LEB128 (see [`uvarint_word`]).
#[inline]
pub fn uvarint(out: &mut impl Out, v: u64) {
    let (w, n) = uvarint_word(v);
    out.word(w, n);
}

/// Append a signed number zigzag-mapped as unsigned LEB128. Numbers beyond 64 bits
/// (wide decimals, nanoseconds of far timestamps) take up to 19 bytes.
#[inline]
pub fn ivarint(out: &mut impl Out, v: i128) {
    match i64::try_from(v) {
        Ok(v) => uvarint(out, zigzag(v)),
        Err(_) => {
            let mut z = ((v << 1) ^ (v >> 127)) as u128;
            let mut buf = [0u8; 19];
            let mut n = 0;
            while z >= 0x80 {
                buf[n] = z as u8 | 0x80;
                z >>= 7;
                n += 1;
            }
            buf[n] = z as u8;
            out.bytes(&buf[..=n]);
        }
    }
}

/// `tag` followed by a signed varint, as one word (at most 11 bytes) when the number
/// fits 64 bits.
#[inline(always)]
pub fn tagged_ivarint(out: &mut impl Out, tag: u8, v: i128) {
    match i64::try_from(v) {
        Ok(v) => {
            let (w, n) = uvarint_word(zigzag(v));
            out.word(tag as u128 | w << 8, n + 1);
        }
        Err(_) => tagged_wide(out, tag, v),
    }
}

/// [`tagged_ivarint`] of a number beyond 64 bits (rare: kept out of the loops).
#[cold]
#[inline(never)]
fn tagged_wide(out: &mut impl Out, tag: u8, v: i128) {
    out.byte(tag);
    ivarint(out, v);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook byte-at-a-time LEB128, to check the branch-free one against.
    fn reference(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    }

    #[test]
    fn uvarint_word_is_leb128_at_every_length_and_edge() {
        let mut values = vec![0, 1, 0x7F, 0x80, 300, u64::MAX, u64::MAX - 1, 1 << 63];
        for bits in 1..64 {
            values.extend([(1u64 << bits) - 1, 1 << bits, (1 << bits) + 1]);
        }
        values.extend((0..2000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64)));
        for v in values {
            let (w, n) = uvarint_word(v);
            let want = reference(v);
            assert_eq!(&w.to_le_bytes()[..n], want.as_slice(), "{v:#x}");
            assert_eq!(w >> (8 * n), 0, "{v:#x}: bytes above the length are zero");
        }
    }

    #[test]
    fn ivarint_zigzags_and_spills_past_64_bits() {
        let enc = |v: i128| {
            let mut out = Vec::new();
            ivarint(&mut out, v);
            out
        };
        assert_eq!(enc(0), [0x00]);
        assert_eq!(enc(-1), [0x01]);
        assert_eq!(enc(1), [0x02]);
        assert_eq!(enc(150), [0xAC, 0x02]);
        assert_eq!(enc(i64::MIN as i128), reference(u64::MAX));
        // 2^64: zigzag 2^65, 66 bits, ten bytes.
        assert_eq!(
            enc(1 << 64),
            [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x04]
        );
        assert_eq!(enc(i128::MIN).len(), 19);
        let mut tagged = Vec::new();
        tagged_ivarint(&mut tagged, 0x08, -2);
        assert_eq!(tagged, [0x08, 0x03]);
    }
}
