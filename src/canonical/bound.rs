//! Upper bounds of the bytes the encoding of rows takes, so a batch's rows can be
//! encoded into fixed-size slots ([`crate::row_slots::RowSlots`]) without a capacity
//! check per byte.

use std::ops::Range;

use super::{Encoder, Kind, StringRules};

/// A header and a 64-bit number (a length, a count).
const TAG_NUMBER: usize = 9;
/// A header, a scale byte and a 32-byte mantissa: the longest exact number.
const WIDEST_EXACT: usize = 34;

/// Whether a bound is of one row (the longest) or of all rows together.
#[derive(Clone, Copy)]
enum Fold {
    Max,
    Sum,
}

impl StringRules {
    /// How many times longer a string can get: lower-casing one character gives at
    /// most two characters (U+0130 `İ` becomes `i` and a combining dot), and no
    /// character's UTF-8 is longer than four bytes.
    fn growth(&self) -> usize {
        if self.ignore_case { 4 } else { 1 }
    }
}

impl Encoder<'_> {
    /// The most bytes [`Encoder::encode`] writes for any one of `rows`.
    pub fn max_len(&self, rows: Range<usize>) -> usize {
        if let Some(n) = self.fixed_len() {
            return n;
        }
        if let Some(n) = self.values_bound(rows.clone(), Fold::Max) {
            return n;
        }
        rows.map(|r| self.total_len(r..r + 1)).max().unwrap_or(1)
    }

    /// The most bytes the encodings of all of `rows` take together.
    fn total_len(&self, rows: Range<usize>) -> usize {
        if let Some(n) = self.values_bound(rows.clone(), Fold::Sum) {
            return n;
        }
        let count = rows.len();
        match &self.kind {
            Kind::List { offsets, child } => {
                let elements = match rows.is_empty() {
                    true => 0..0,
                    false => offsets.range(rows.start).start..offsets.range(rows.end - 1).end,
                };
                TAG_NUMBER
                    .saturating_mul(count)
                    .saturating_add(child.total_len(elements))
            }
            Kind::Struct(fields) => {
                fields
                    .iter()
                    .fold(TAG_NUMBER.saturating_mul(count), |sum, (name, enc)| {
                        let per_row = (TAG_NUMBER + name.len()).saturating_mul(count);
                        sum.saturating_add(per_row)
                            .saturating_add(enc.total_len(rows.clone()))
                    })
            }
            Kind::Map {
                offsets,
                keys,
                values,
            } => {
                let entries = match rows.is_empty() {
                    true => 0..0,
                    false => offsets[rows.start] as usize..offsets[rows.end] as usize,
                };
                TAG_NUMBER
                    .saturating_mul(count)
                    .saturating_add(keys.total_len(entries.clone()))
                    .saturating_add(values.total_len(entries))
            }
            // Every other kind has a fixed bound.
            _ => self
                .fixed_len()
                .unwrap_or(WIDEST_EXACT)
                .saturating_mul(count),
        }
    }

    /// The bound of kinds whose values have their own lengths (strings, binaries,
    /// dictionaries): a tag and a length per row, plus the longest value's bytes
    /// (`Fold::Max`) or all of them (`Fold::Sum`).
    fn values_bound(&self, rows: Range<usize>, fold: Fold) -> Option<usize> {
        Some(match &self.kind {
            Kind::Utf8(a, rules) => {
                self.fold(rows, fold, rules.growth(), |r| a.value_length(r) as usize)
            }
            Kind::LargeUtf8(a, rules) => {
                self.fold(rows, fold, rules.growth(), |r| a.value_length(r) as usize)
            }
            Kind::Utf8View(a, rules) => {
                self.fold(rows, fold, rules.growth(), |r| a.views()[r] as u32 as usize)
            }
            Kind::Binary(a) => self.fold(rows, fold, 1, |r| a.value_length(r) as usize),
            Kind::LargeBinary(a) => self.fold(rows, fold, 1, |r| a.value_length(r) as usize),
            Kind::BinaryView(a) => self.fold(rows, fold, 1, |r| a.views()[r] as u32 as usize),
            Kind::Dict { keys, values, .. } => {
                self.fold(rows, fold, 1, |r| values.get(keys[r]).map_or(0, Vec::len))
            }
            _ => return None,
        })
    }

    /// [`Encoder::values_bound`] for value lengths `len_of`; NULL rows count one byte,
    /// whatever their slot in the array holds.
    #[inline]
    fn fold(
        &self,
        rows: Range<usize>,
        fold: Fold,
        growth: usize,
        len_of: impl Fn(usize) -> usize,
    ) -> usize {
        let count = rows.len();
        let lens = rows
            .filter(|&r| self.nulls.is_none_or(|n| n.is_valid(r)))
            .map(len_of);
        let bytes = match fold {
            Fold::Max => lens.max().unwrap_or(0),
            Fold::Sum => lens.fold(0, usize::saturating_add),
        };
        let per_row = match fold {
            Fold::Max => TAG_NUMBER,
            Fold::Sum => TAG_NUMBER.saturating_mul(count),
        };
        per_row.saturating_add(bytes.saturating_mul(growth))
    }

    /// The bound of kinds whose values all take at most the same bytes (NULL, one
    /// byte, included).
    fn fixed_len(&self) -> Option<usize> {
        Some(match &self.kind {
            Kind::AllNull => 1,
            Kind::Constant(bytes) => bytes.len().max(1),
            Kind::Bool(_) => 2,
            Kind::I8(_)
            | Kind::I16(_)
            | Kind::I32(_)
            | Kind::I64(_)
            | Kind::U8(_)
            | Kind::U16(_)
            | Kind::U32(_)
            | Kind::U64(_) => 2 + 9,
            Kind::Dec32(_, s) | Kind::Dec64(_, s) if *s >= 0 => 2 + 9,
            Kind::Dec32(..) | Kind::Dec64(..) | Kind::Dec128(..) | Kind::Dec256(..) => WIDEST_EXACT,
            Kind::F16(_) | Kind::F32(_) | Kind::F64(_) => 9,
            Kind::Date32(_) | Kind::Date64(_) => 1 + 4,
            // Nanoseconds of 64-bit ticks: below 2^94, twelve bytes zigzagged.
            Kind::Timestamp(..) | Kind::Duration(..) => 1 + 12,
            Kind::Time32(..) | Kind::Time64(..) => TAG_NUMBER,
            Kind::IntervalYm(_) | Kind::IntervalDt(_) | Kind::IntervalMdn(_) => 1 + 16,
            Kind::FixedBinary(a) => TAG_NUMBER + a.value_length().max(0) as usize,
            _ => return None,
        })
    }
}
