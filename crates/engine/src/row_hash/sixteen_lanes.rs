//! SHA-256 of sixteen messages at once, one in each 32-bit lane of AVX-512
//! registers: the rounds of FIPS 180-4 §6.2.2 on sixteen states side by side.
//!
//! SHA-NI compresses one block at a time, each round waiting on the one before; a
//! row of a table is one or two blocks, so rows are hashed sixteen together instead:
//! the rotations are one instruction each (`vprord`), the choice, majority and
//! three-way XOR one each (`vpternlogd`). On the Intel Xeon host of the bench, a
//! block takes 23 ns this way against 36 ns with SHA-NI (perf samples of a whole
//! reconciliation of the bench data): 4% less CPU in all (5 alternating runs).

#![allow(unsafe_code)] // AVX-512 intrinsics: each block says why it is sound.

use std::arch::x86_64::*;

use super::{INITIAL, RowHash, padded_len};

/// The round constants (FIPS 180-4 §4.2.2).
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// Messages hashed together.
pub(crate) const LANES: usize = 16;

/// The hashes of sixteen rows, aligned to a cache line: each pair of rows is
/// stored in one go, and a store that spans two lines is not forwarded to the loads
/// that read a row's hash right after (a third of the time of visiting the rows,
/// before this alignment).
#[repr(C, align(64))]
pub(crate) struct Hashes(pub [RowHash; LANES]);

/// Whether [`sha256_16`] runs on this CPU for rows `stride` bytes apart (sixteen
/// strides must fit the gather's 32-bit offsets). Never with the `portable` feature.
pub(crate) fn usable(stride: usize) -> bool {
    !cfg!(feature = "portable")
        && LANES * stride <= i32::MAX as usize
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
}

/// The SHA-256 of the sixteen padded messages at `buf[j * stride..]` (`j` < 16) of
/// `lens[j]` bytes each. Lanes with fewer blocks than the longest keep their state
/// once their own blocks are done.
///
/// # Panics
/// When it is not [`usable`], or a padded message does not fit its `stride`, or
/// `buf` holds fewer than sixteen strides.
pub(crate) fn sha256_16(buf: &[u8], stride: usize, lens: &[usize; LANES]) -> Hashes {
    assert!(
        usable(stride),
        "sha256_16 needs AVX-512 F and BW and short strides"
    );
    let padded = lens.map(padded_len);
    assert!(
        padded.iter().all(|&p| p <= stride) && buf.len() >= LANES * stride,
        "padded messages must fit their strides"
    );
    let blocks = padded.map(|p| p / 64);
    // SAFETY: the CPU has the features (checked above); every load is of a block
    // `b` < the lane's or the longest lane's block count, which lies within that
    // lane's stride (every padded message fits its stride), inside `buf`.
    unsafe { compress_lanes(buf.as_ptr(), stride, &blocks) }
}

/// Three-way XOR.
macro_rules! xor3 {
    ($a:expr, $b:expr, $c:expr) => {
        _mm512_ternarylogic_epi32::<0x96>($a, $b, $c)
    };
}

/// Σ and σ (FIPS 180-4 §4.1.2): the XOR of three rotations, or of two and a shift.
macro_rules! sigma {
    (ror $x:expr, $r1:literal, $r2:literal, $r3:literal) => {
        xor3!(
            _mm512_ror_epi32::<$r1>($x),
            _mm512_ror_epi32::<$r2>($x),
            _mm512_ror_epi32::<$r3>($x)
        )
    };
    (shr $x:expr, $r1:literal, $r2:literal, $s:literal) => {
        xor3!(
            _mm512_ror_epi32::<$r1>($x),
            _mm512_ror_epi32::<$r2>($x),
            _mm512_srli_epi32::<$s>($x)
        )
    };
}

/// One round on the working variables named in their current order: `d` becomes
/// the new `e` and `h` the new `a`; the next round names them one further.
macro_rules! round {
    ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $kw:expr) => {
        // ch = e ? f : g; maj = the majority of a, b, c.
        let ch = _mm512_ternarylogic_epi32::<0xCA>($e, $f, $g);
        let t1 = _mm512_add_epi32(
            _mm512_add_epi32($h, sigma!(ror $e, 6, 11, 25)),
            _mm512_add_epi32(ch, $kw),
        );
        let maj = _mm512_ternarylogic_epi32::<0xE8>($a, $b, $c);
        $d = _mm512_add_epi32($d, t1);
        $h = _mm512_add_epi32(t1, _mm512_add_epi32(sigma!(ror $a, 2, 13, 22), maj));
    };
}

/// Sixteen rounds from round `$t` on, with the schedule's sixteen words `$w`
/// (word `i` of them is word `$t + i` of the schedule).
macro_rules! sixteen_rounds {
    ($w:ident, $t:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident) => {
        sixteen_rounds!(@eight $w, $t, 0, $a, $b, $c, $d, $e, $f, $g, $h);
        sixteen_rounds!(@eight $w, $t, 8, $a, $b, $c, $d, $e, $f, $g, $h);
    };
    (@eight $w:ident, $t:expr, $i:literal, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident) => {
        round!($a, $b, $c, $d, $e, $f, $g, $h, kw!($w, $t, $i + 0));
        round!($h, $a, $b, $c, $d, $e, $f, $g, kw!($w, $t, $i + 1));
        round!($g, $h, $a, $b, $c, $d, $e, $f, kw!($w, $t, $i + 2));
        round!($f, $g, $h, $a, $b, $c, $d, $e, kw!($w, $t, $i + 3));
        round!($e, $f, $g, $h, $a, $b, $c, $d, kw!($w, $t, $i + 4));
        round!($d, $e, $f, $g, $h, $a, $b, $c, kw!($w, $t, $i + 5));
        round!($c, $d, $e, $f, $g, $h, $a, $b, kw!($w, $t, $i + 6));
        round!($b, $c, $d, $e, $f, $g, $h, $a, kw!($w, $t, $i + 7));
    };
}

/// The next sixteen words of the message schedule, in place:
/// `w[i] += σ1(w[i - 2]) + w[i - 7] + σ0(w[i - 15])`, indices mod 16.
macro_rules! schedule {
    ($w:ident) => {
        schedule!(@ $w; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
    };
    (@ $w:ident; $($i:literal)*) => {
        $(
            $w[$i] = _mm512_add_epi32(
                _mm512_add_epi32($w[$i], sigma!(shr $w[($i + 14) % 16], 17, 19, 10)),
                _mm512_add_epi32($w[($i + 9) % 16], sigma!(shr $w[($i + 1) % 16], 7, 18, 3)),
            );
        )*
    };
}

/// Round `t + i`'s constant plus its schedule word.
macro_rules! kw {
    ($w:ident, $t:expr, $i:expr) => {
        _mm512_add_epi32($w[$i], _mm512_set1_epi32(K[$t + $i] as i32))
    };
}

#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn compress_lanes(base: *const u8, stride: usize, blocks: &[usize; LANES]) -> Hashes {
    // Big-endian words: reverse the bytes of every 32-bit lane.
    let bswap = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
    let starts = _mm512_mullo_epi32(
        _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
        _mm512_set1_epi32(stride as i32),
    );
    let mut state: [__m512i; 8] = INITIAL.map(|v| _mm512_set1_epi32(v as i32));
    let longest = blocks.iter().copied().max().unwrap_or(0);
    for b in 0..longest {
        let active = (0..LANES)
            .filter(|&j| b < blocks[j])
            .fold(0u16, |m, j| m | 1 << j);
        let mut w = [_mm512_setzero_si512(); 16];
        for (i, wi) in w.iter_mut().enumerate() {
            // SAFETY: see `sha256_16`: lane j reads 4 bytes at j * stride + 64b + 4i.
            let words =
                unsafe { _mm512_i32gather_epi32::<1>(starts, base.add(64 * b + 4 * i).cast()) };
            *wi = _mm512_shuffle_epi8(words, bswap);
        }
        let [mut a, mut bb, mut c, mut d, mut e, mut f, mut g, mut h] = state;
        sixteen_rounds!(w, 0, a, bb, c, d, e, f, g, h);
        for t in [16, 32, 48] {
            schedule!(w);
            sixteen_rounds!(w, t, a, bb, c, d, e, f, g, h);
        }
        for (s, v) in state.iter_mut().zip([a, bb, c, d, e, f, g, h]) {
            *s = _mm512_mask_add_epi32(*s, active, *s, v);
        }
    }
    rows_of(state)
}

/// `_mm512_permutex2var_epi32` indices that interleave the words of lanes `8h..8h +
/// 8` of two vectors, `[x[8h], y[8h], x[8h + 1], y[8h + 1], ...]`, for h = 0, 1.
const INTERLEAVE_WORDS: [[i32; 16]; 2] = [
    [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23],
    [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31],
];

/// `_mm512_permutex2var_epi64` indices that interleave the 64-bit elements `4q..4q +
/// 4` of two vectors, for q = 0, 1.
const INTERLEAVE_PAIRS: [[i64; 8]; 2] = [[0, 8, 1, 9, 2, 10, 3, 11], [4, 12, 5, 13, 6, 14, 7, 15]];

/// `_mm512_permutex2var_epi64` indices that put the 128-bit chunks `2r` and `2r + 1`
/// of two vectors side by side, `[x[2r], y[2r], x[2r + 1], y[2r + 1]]`, for r = 0, 1.
const JOIN_HALVES: [[i64; 8]; 2] = [[0, 1, 8, 9, 2, 3, 10, 11], [4, 5, 12, 13, 6, 7, 14, 15]];

/// One vector from a 64-byte array of indexes.
#[target_feature(enable = "avx512f")]
fn load_64_bytes<T, const N: usize>(indexes: &[T; N]) -> __m512i {
    const { assert!(size_of::<[T; N]>() == 64) };
    // SAFETY: `indexes` is 64 bytes (checked at compile time above), what an unaligned
    // 512-bit load reads.
    unsafe { _mm512_loadu_si512(indexes.as_ptr().cast()) }
}

/// The eight state vectors (word `i` of every lane in vector `i`) as sixteen
/// rows of eight words, transposed in registers: the words of a row are stored
/// together, so loading a row's hash back is forwarded from one store.
#[target_feature(enable = "avx512f")]
fn rows_of(state: [__m512i; 8]) -> Hashes {
    let words_idx = INTERLEAVE_WORDS.map(|i| load_64_bytes(&i));
    let pairs_idx = INTERLEAVE_PAIRS.map(|i| load_64_bytes(&i));
    let join_idx = JOIN_HALVES.map(|i| load_64_bytes(&i));
    let mut rows = Hashes([[0; 8]; LANES]);
    for (h, words_idx) in words_idx.into_iter().enumerate() {
        // Words 2k and 2k + 1 of lanes 8h.. side by side.
        let pair: [__m512i; 4] = std::array::from_fn(|k| {
            _mm512_permutex2var_epi32(state[2 * k], words_idx, state[2 * k + 1])
        });
        for (q, pairs_idx) in pairs_idx.into_iter().enumerate() {
            // Words 0..4 and 4..8 of lanes 8h + 4q.. in 128-bit chunks.
            let low = _mm512_permutex2var_epi64(pair[0], pairs_idx, pair[1]);
            let high = _mm512_permutex2var_epi64(pair[2], pairs_idx, pair[3]);
            for (r, join_idx) in join_idx.into_iter().enumerate() {
                let both = _mm512_permutex2var_epi64(low, join_idx, high);
                let first = 8 * h + 4 * q + 2 * r;
                // SAFETY: a 64-byte store into rows `first` and `first + 1`.
                unsafe { _mm512_storeu_si512(rows.0[first..first + 2].as_mut_ptr().cast(), both) };
            }
        }
    }
    rows
}
