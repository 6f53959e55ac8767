//! Upper bounds of the bytes the encoding of rows takes, so a batch's rows can be
//! encoded into fixed-size slots ([`crate::row_slots::RowSlots`]) without a capacity
//! check per byte.

use std::ops::Range;

use super::{DictValues, Encoder, Kind, StringRules};

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

/// The longest of `lens` (`Fold::Max`) or their sum (`Fold::Sum`).
#[inline]
fn fold_lens(fold: Fold, lens: impl Iterator<Item = usize>) -> usize {
    match fold {
        Fold::Max => lens.max().unwrap_or(0),
        Fold::Sum => lens.fold(0, usize::saturating_add),
    }
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
        fn offset_lens<O: Copy + Into<i64>>(
            offsets: &[O],
            rows: Range<usize>,
        ) -> impl Iterator<Item = usize> + '_ {
            offsets[rows.start..=rows.end]
                .windows(2)
                .map(|w| (w[1].into() - w[0].into()) as usize)
        }
        fn view_lens(views: &[u128], rows: Range<usize>) -> impl Iterator<Item = usize> + '_ {
            views[rows].iter().map(|v| *v as u32 as usize)
        }
        Some(match &self.kind {
            Kind::Utf8(a, rules) => self.fold(&rows, fold, rules.growth(), |r| {
                offset_lens(a.value_offsets(), r)
            }),
            Kind::LargeUtf8(a, rules) => self.fold(&rows, fold, rules.growth(), |r| {
                offset_lens(a.value_offsets(), r)
            }),
            Kind::Utf8View(a, rules) => {
                self.fold(&rows, fold, rules.growth(), |r| view_lens(a.views(), r))
            }
            Kind::Binary(a) => self.fold(&rows, fold, 1, |r| offset_lens(a.value_offsets(), r)),
            Kind::LargeBinary(a) => {
                self.fold(&rows, fold, 1, |r| offset_lens(a.value_offsets(), r))
            }
            Kind::BinaryView(a) => self.fold(&rows, fold, 1, |r| view_lens(a.views(), r)),
            Kind::Dict {
                keys,
                values: DictValues::Encoded(values),
                ..
            } => self.fold(&rows, fold, 1, |r| {
                keys[r].iter().map(|&k| values.get(k).map_or(0, Vec::len))
            }),
            Kind::Dict {
                keys,
                values: DictValues::Words(words),
                ..
            } => self.fold(&rows, fold, 1, |r| {
                keys[r].iter().map(|&k| words.get(k).map_or(0, |w| w.1))
            }),
            Kind::Dict {
                keys,
                values: DictValues::PerRow { values, len },
                ..
            } => self.fold(&rows, fold, 1, |r| {
                keys[r].iter().map(|&k| match k < *len {
                    true => values.max_len(k..k + 1),
                    false => 0,
                })
            }),
            _ => return None,
        })
    }

    /// [`Encoder::values_bound`] given the value lengths of any range of rows
    /// (`lens`); NULL rows count one byte, whatever their slot in the array holds.
    #[inline]
    fn fold<I: Iterator<Item = usize>>(
        &self,
        rows: &Range<usize>,
        fold: Fold,
        growth: usize,
        lens: impl Fn(Range<usize>) -> I,
    ) -> usize {
        let count = rows.len();
        let bytes = match self.nulls {
            None => fold_lens(fold, lens(rows.clone())),
            // The validity bits a word at a time: a word of valid rows folds their
            // lengths as they are, one of NULL rows adds nothing, and only a word of
            // both masks each length by its bit, without a branch (a bit iterator per
            // row took 1.5% of the CPU on the bench, for one nullable text column).
            Some(n) => {
                let valid = n.inner().slice(rows.start, count);
                let chunks = valid.bit_chunks();
                let words = chunks
                    .iter()
                    .chain(std::iter::once(chunks.remainder_bits()));
                let per_word = words.enumerate().map(|(w, word)| {
                    let start = rows.start + 64 * w;
                    let part = start..(start + 64).min(rows.end);
                    let all = u64::MAX >> (64 - part.len().max(1));
                    match word & all {
                        0 => 0,
                        some if some == all => fold_lens(fold, lens(part)),
                        some => fold_lens(
                            fold,
                            lens(part).enumerate().map(|(i, len)| {
                                len & 0usize.wrapping_sub((some >> i) as usize & 1)
                            }),
                        ),
                    }
                });
                // The longest of the words' longest, or the sum of their sums.
                fold_lens(fold, per_word)
            }
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        Array, ArrayRef, BinaryArray, DictionaryArray, LargeStringArray, StringArray,
        StringViewArray,
    };
    use arrow::buffer::{NullBuffer, OffsetBuffer};
    use arrow::datatypes::Int32Type;

    use super::*;

    /// Values whose NULL rows hold long bytes in their slots, as a writer may leave
    /// them, in every layout with its own lengths, whole and sliced; over several
    /// 64-row words of validity bits (words of NULL rows only, of valid rows only,
    /// and of both), and sliced within and across words.
    fn arrays() -> Vec<ArrayRef> {
        let (valid, long, longer) = ("x".repeat(30), "y".repeat(40), "z".repeat(300));
        let five = ["ab", &longer, "héllo", "", &long];
        let texts: Vec<&str> = five.iter().copied().cycle().take(5 * 40).collect();
        let nulls = NullBuffer::from_iter(texts.iter().map(|t| t.len() < 40));
        let utf8 = StringArray::new(
            OffsetBuffer::from_lengths(texts.iter().map(|t| t.len())),
            texts.concat().into_bytes().into(),
            Some(nulls.clone()),
        );
        let large = LargeStringArray::from(utf8.iter().collect::<Vec<_>>());
        let view = StringViewArray::from(texts.to_vec());
        let view = StringViewArray::new(
            view.views().clone(),
            view.data_buffers().to_vec(),
            Some(nulls),
        );
        let binary = BinaryArray::from_iter(utf8.iter().map(|t| t.map(str::as_bytes)));
        let dict: DictionaryArray<Int32Type> = texts.iter().copied().collect();
        // Whole words of NULL rows, of valid rows, and of both.
        let runs: Vec<&str> = [longer.as_str(), &valid, &long]
            .iter()
            .flat_map(|t| std::iter::repeat_n(*t, 64))
            .chain(five.iter().copied().cycle().take(20))
            .collect();
        let run_nulls = NullBuffer::from_iter(runs.iter().map(|t| t.len() < 40));
        let runs = StringViewArray::from(runs);
        let runs = StringViewArray::new(
            runs.views().clone(),
            runs.data_buffers().to_vec(),
            Some(run_nulls),
        );
        let mut out: Vec<ArrayRef> = vec![
            Arc::new(utf8),
            Arc::new(large),
            Arc::new(view),
            Arc::new(binary),
            Arc::new(dict),
            Arc::new(runs),
        ];
        let sliced: Vec<ArrayRef> = out
            .iter()
            .flat_map(|a| [a.slice(1, 3), a.slice(61, 100)])
            .collect();
        out.extend(sliced);
        out
    }

    #[test]
    fn string_bounds_cover_every_row_and_skip_what_nulls_hide() {
        for a in arrays() {
            let enc = Encoder::new(a.as_ref(), StringRules::default(), "s").unwrap();
            let lens: Vec<usize> = (0..a.len())
                .map(|r| {
                    let mut b = Vec::new();
                    enc.encode(r, &mut b);
                    b.len()
                })
                .collect();
            let bound = enc.max_len(0..a.len());
            assert!(
                lens.iter().all(|&n| n <= bound),
                "{}: {lens:?} > {bound}",
                a.data_type()
            );
            let total = enc.total_len(0..a.len());
            assert!(lens.iter().sum::<usize>() <= total, "{}", a.data_type());
            // The NULL rows' 300 and 40 bytes do not count (the dictionary's values are
            // all valid, so its 300-byte value does).
            if a.null_count() > 0 {
                assert!(bound < 40, "{}: {bound}", a.data_type());
            }
            for (r, &len) in lens.iter().enumerate() {
                assert!(len <= enc.max_len(r..r + 1), "{} row {r}", a.data_type());
            }
        }
    }
}
