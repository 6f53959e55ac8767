//! Numbers as their fewest little-endian bytes, counted in the value's header byte
//! ([`header`]) and built in a register with it, so a value is one store into an
//! [`crate::out::Out`].

use crate::out::Out;

/// The fewest bytes that hold `v`: 0 for zero, up to 16.
#[inline]
pub(crate) fn byte_len(v: u128) -> usize {
    (135 - v.leading_zeros() as usize) / 8
}

/// [`byte_len`] of a 64-bit number (0 to 8), without 128-bit arithmetic.
#[inline]
pub(crate) fn byte_len64(v: u64) -> usize {
    (71 - v.leading_zeros() as usize) / 8
}

/// Zigzag-map a signed number (0, -1, 1, -2 ... to 0, 1, 2, 3 ...), so small
/// magnitudes of either sign take few bytes.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// [`zigzag`] of a 128-bit number.
#[inline]
pub(crate) fn zigzag128(v: i128) -> u128 {
    ((v << 1) ^ (v >> 127)) as u128
}

/// The inverse of [`zigzag128`].
#[inline]
pub(crate) fn unzigzag(u: u128) -> i128 {
    (u >> 1) as i128 ^ -((u & 1) as i128)
}

/// The most bytes a number after a header takes: the header's high four bits.
pub(crate) const MAX_NUMBER_BYTES: usize = 15;

/// A value's header byte: its kind in the low four bits and, for kinds followed by
/// a number, how many bytes the number takes in the high four.
#[inline]
pub fn header(kind: u8, n: usize) -> u8 {
    debug_assert!(kind < 16 && n <= MAX_NUMBER_BYTES);
    kind | (n as u8) << 4
}

/// `kind`'s header and an unsigned 64-bit number (a length, a count): one store.
#[inline]
pub(crate) fn tagged_uint(out: &mut impl Out, kind: u8, v: u64) {
    let n = byte_len64(v);
    out.word(header(kind, n) as u128 | (v as u128) << 8, n + 1);
}

/// `kind`'s header and a signed 64-bit number, zigzag-mapped: one store.
#[inline]
pub(crate) fn tagged_int(out: &mut impl Out, kind: u8, v: i64) {
    tagged_uint(out, kind, zigzag(v));
}

/// `kind`'s header and a signed number whose zigzag fits [`MAX_NUMBER_BYTES`] (every
/// caller's values do: nanoseconds of 64-bit seconds, milliseconds or microseconds
/// are below 2^94): one store.
#[inline]
pub(crate) fn tagged_int128(out: &mut impl Out, kind: u8, v: i128) {
    match i64::try_from(v) {
        Ok(small) => tagged_int(out, kind, small),
        Err(_) => {
            let z = zigzag128(v);
            let n = byte_len(z);
            assert!(n <= MAX_NUMBER_BYTES, "{v} is too wide for a number");
            out.word(header(kind, n) as u128 | z << 8, n + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tagged(v: i128) -> Vec<u8> {
        let mut out = Vec::new();
        tagged_int128(&mut out, 0x8, v);
        out
    }

    #[test]
    fn numbers_take_their_fewest_little_endian_bytes_counted_in_the_header() {
        assert_eq!(tagged(0), [0x08]);
        assert_eq!(tagged(-1), [0x18, 0x01]);
        assert_eq!(tagged(1), [0x18, 0x02]);
        assert_eq!(tagged(150), [0x28, 0x2c, 0x01]);
        assert_eq!(
            tagged(i64::MIN as i128),
            [&[0x88u8][..], &[0xff; 8]].concat()
        );
        // 2^64: zigzag 2^65, nine bytes.
        assert_eq!(tagged(1 << 64), [0x98, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        let mut len = Vec::new();
        tagged_uint(&mut len, 0x5, 300);
        assert_eq!(len, [0x25, 0x2c, 0x01]);
    }

    #[test]
    fn byte_lengths_at_every_edge() {
        assert_eq!(byte_len(0), 0);
        for bits in 1..=128u32 {
            let v = if bits == 128 {
                u128::MAX
            } else {
                (1u128 << bits) - 1
            };
            assert_eq!(byte_len(v), bits.div_ceil(8) as usize, "{bits} bits");
            if bits <= 64 {
                assert_eq!(
                    byte_len64(v as u64),
                    bits.div_ceil(8) as usize,
                    "{bits} bits"
                );
            }
        }
        for v in [0i128, 1, -1, i64::MIN as i128, i128::MIN, i128::MAX] {
            assert_eq!(unzigzag(zigzag128(v)), v);
        }
    }

    #[test]
    #[should_panic(expected = "too wide")]
    fn a_number_beyond_fifteen_bytes_is_refused() {
        tagged(i128::MAX);
    }
}
