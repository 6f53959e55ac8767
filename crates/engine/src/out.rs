//! Where canonical bytes go: [`Out`], a growable buffer or a row's slot in a batch
//! buffer. Below both the encoder ([`crate::canonical`]) and the slots
//! ([`crate::row_slots`]), so neither imports the other's half.

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
