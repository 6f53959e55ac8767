//! The canonical value encoding fed to SHA-256 (see `docs/hash-encoding.md`).
//!
//! Two rows hash the same exactly when their compared values are equal *as values*,
//! whatever their physical Parquet/Arrow types: every integer width and every decimal
//! precision/scale of the same number, every timestamp unit of the same instant, every
//! string layout (utf8, large, view, dictionary) of the same text encode to the same
//! bytes. NULL has its own tag, so it never equals `''` or `0`; `-0.0` is written as
//! `0.0` and every NaN as one NaN. Lists, structs and maps are encoded recursively,
//! struct fields by name and map entries in key order.
//!
//! The encoding is versioned by [`HASH_ENCODING_VERSION`]: any change to the bytes
//! written here must bump it, because reports and ledger rows record the version their
//! verdicts were computed with. Numbers, lengths and counts take their fewest
//! little-endian bytes (zigzag for signed numbers), counted in the value's header
//! byte, so a typical row fits two SHA-256 blocks and a value is one store.

use arrow::array::{
    Array, AsArray, FixedSizeBinaryArray, GenericByteArray, GenericByteViewArray,
    MAX_INLINE_VIEW_LEN, StructArray,
};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::datatypes::*;

use crate::error::{ReconError, Result};
use crate::row_slots::RowSlots;

mod bound;
mod out;

pub use crate::out::Out;
use out::{
    MAX_NUMBER_BYTES, byte_len, byte_len64, header, tagged_int, tagged_int128, tagged_uint,
    unzigzag, zigzag, zigzag128,
};

/// Version of the canonical encoding. Bump on any change to the bytes.
pub const HASH_ENCODING_VERSION: u32 = 3;

/// Kinds: the low four bits of every value's header byte (the high four count the
/// bytes of the number that follows, for kinds followed by one).
mod tag {
    pub const NULL: u8 = 0x00;
    pub(crate) const BOOL: u8 = 0x01;
    pub(crate) const EXACT: u8 = 0x02;
    pub(crate) const EXACT_WIDE: u8 = 0x03;
    pub(crate) const FLOAT: u8 = 0x04;
    pub(crate) const STRING: u8 = 0x05;
    pub(crate) const BINARY: u8 = 0x06;
    pub(crate) const DATE: u8 = 0x07;
    pub(crate) const TIMESTAMP: u8 = 0x08;
    pub const TIME: u8 = 0x09;
    pub(crate) const DURATION: u8 = 0x0A;
    pub const INTERVAL: u8 = 0x0B;
    pub const LIST: u8 = 0x0C;
    pub(crate) const STRUCT: u8 = 0x0D;
    pub(crate) const MAP: u8 = 0x0E;
}

/// String rewrites applied before encoding (per-column config options).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StringRules {
    /// Strip leading/trailing white space.
    pub trim: bool,
    /// Lower-case before comparing.
    pub ignore_case: bool,
    /// An empty string (after trim) is NULL.
    pub empty_as_null: bool,
}

impl StringRules {
    fn is_identity(&self) -> bool {
        !(self.trim || self.ignore_case || self.empty_as_null)
    }
}

/// The nulls of an array, including NULL values behind dictionary keys.
fn nulls_of(array: &dyn Array) -> Option<&NullBuffer> {
    array.nulls()
}

/// How to get the value offsets of one list row.
enum ListOffsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
    Fixed(usize),
}

impl ListOffsets<'_> {
    fn range(&self, row: usize) -> std::ops::Range<usize> {
        match self {
            ListOffsets::Small(o) => o[row] as usize..o[row + 1] as usize,
            ListOffsets::Large(o) => o[row] as usize..o[row + 1] as usize,
            ListOffsets::Fixed(n) => row * n..(row + 1) * n,
        }
    }
}

/// Encodes the values of one Arrow array, row by row, into canonical bytes.
///
/// Built once per column per record batch; [`Encoder::encode`] is the hot path and
/// dispatches on a small enum so the per-value cost is one predictable branch.
pub struct Encoder<'a> {
    nulls: Option<&'a NullBuffer>,
    kind: Kind<'a>,
}

/// The values of a dictionary-encoded column's batch. A dictionary is the whole row
/// group's (a Parquet dictionary page holds up to a megabyte of values), which can be
/// far more values than the batch has rows.
enum DictValues<'a> {
    /// Each value encoded once, when the batch has at least twice as many rows.
    Encoded(Vec<Vec<u8>>),
    /// [`DictValues::Encoded`] when every value's bytes fit one 16-byte word (codes,
    /// statuses, short names): each value's word and length, so a row is one store
    /// instead of a copy by its length.
    Words(Vec<(u128, usize)>),
    /// Each row's value encoded as the row is: a batch of 8192 rows that pointed into
    /// 100,000 values took six times as long encoded up front.
    PerRow {
        values: Box<Encoder<'a>>,
        /// How many values there are (keys of NULL rows may point anywhere).
        len: usize,
    },
}

impl DictValues<'_> {
    /// The values encoded once: as [`DictValues::Words`] when every one fits a word.
    fn of_encoded(encoded: Vec<Vec<u8>>) -> Self {
        if !encoded.iter().all(|v| v.len() <= size_of::<u128>()) {
            return DictValues::Encoded(encoded);
        }
        let word = |v: &Vec<u8>| {
            let mut bytes = [0u8; size_of::<u128>()];
            bytes[..v.len()].copy_from_slice(v);
            (u128::from_le_bytes(bytes), v.len())
        };
        DictValues::Words(encoded.iter().map(word).collect())
    }
}

enum Kind<'a> {
    AllNull,
    /// The same pre-encoded value on every row (partition values).
    Constant(Vec<u8>),
    Bool(&'a BooleanBuffer),
    /// Any integer or decimal that fits i128, with its scale.
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    Dec32(&'a [i32], i8),
    Dec64(&'a [i64], i8),
    Dec128(&'a [i128], i8),
    Dec256(&'a [i256], i8),
    F16(&'a [<Float16Type as ArrowPrimitiveType>::Native]),
    F32(&'a [f32]),
    F64(&'a [f64]),
    Utf8(&'a GenericByteArray<GenericStringType<i32>>, StringRules),
    LargeUtf8(&'a GenericByteArray<GenericStringType<i64>>, StringRules),
    Utf8View(&'a GenericByteViewArray<StringViewType>, StringRules),
    Binary(&'a GenericByteArray<GenericBinaryType<i32>>),
    LargeBinary(&'a GenericByteArray<GenericBinaryType<i64>>),
    BinaryView(&'a GenericByteViewArray<BinaryViewType>),
    FixedBinary(&'a FixedSizeBinaryArray),
    Date32(&'a [i32]),
    Date64(&'a [i64]),
    /// Timestamp ticks and the factor to nanoseconds.
    Timestamp(&'a [i64], i128),
    Time32(&'a [i32], i64),
    Time64(&'a [i64], i64),
    Duration(&'a [i64], i128),
    IntervalYm(&'a [i32]),
    IntervalDt(&'a [IntervalDayTime]),
    IntervalMdn(&'a [IntervalMonthDayNano]),
    /// Dictionary: rows point at its values.
    Dict {
        keys: Vec<usize>,
        values: DictValues<'a>,
        /// Whether a value is NULL (so rows with valid keys may still be NULL).
        null_value: bool,
    },
    List {
        offsets: ListOffsets<'a>,
        child: Box<Encoder<'a>>,
    },
    Struct(Vec<(String, Encoder<'a>)>),
    Map {
        offsets: &'a [i32],
        keys: Box<Encoder<'a>>,
        values: Box<Encoder<'a>>,
    },
}

fn prim<T: ArrowPrimitiveType>(a: &dyn Array) -> &[T::Native] {
    a.as_primitive::<T>().values()
}

fn unit_nanos(unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

impl<'a> Encoder<'a> {
    /// Build the encoder of `array`; `column` names it in errors.
    pub fn new(array: &'a dyn Array, rules: StringRules, column: &str) -> Result<Encoder<'a>> {
        let kind = match array.data_type() {
            DataType::Null => Kind::AllNull,
            DataType::Boolean => Kind::Bool(array.as_boolean().values()),
            DataType::Int8 => Kind::I8(prim::<Int8Type>(array)),
            DataType::Int16 => Kind::I16(prim::<Int16Type>(array)),
            DataType::Int32 => Kind::I32(prim::<Int32Type>(array)),
            DataType::Int64 => Kind::I64(prim::<Int64Type>(array)),
            DataType::UInt8 => Kind::U8(prim::<UInt8Type>(array)),
            DataType::UInt16 => Kind::U16(prim::<UInt16Type>(array)),
            DataType::UInt32 => Kind::U32(prim::<UInt32Type>(array)),
            DataType::UInt64 => Kind::U64(prim::<UInt64Type>(array)),
            DataType::Decimal32(_, s) => Kind::Dec32(prim::<Decimal32Type>(array), *s),
            DataType::Decimal64(_, s) => Kind::Dec64(prim::<Decimal64Type>(array), *s),
            DataType::Decimal128(_, s) => Kind::Dec128(prim::<Decimal128Type>(array), *s),
            DataType::Decimal256(_, s) => Kind::Dec256(prim::<Decimal256Type>(array), *s),
            DataType::Float16 => Kind::F16(prim::<Float16Type>(array)),
            DataType::Float32 => Kind::F32(prim::<Float32Type>(array)),
            DataType::Float64 => Kind::F64(prim::<Float64Type>(array)),
            DataType::Utf8 => Kind::Utf8(array.as_string::<i32>(), rules),
            DataType::LargeUtf8 => Kind::LargeUtf8(array.as_string::<i64>(), rules),
            DataType::Utf8View => Kind::Utf8View(array.as_string_view(), rules),
            DataType::Binary => Kind::Binary(array.as_binary::<i32>()),
            DataType::LargeBinary => Kind::LargeBinary(array.as_binary::<i64>()),
            DataType::BinaryView => Kind::BinaryView(array.as_binary_view()),
            DataType::FixedSizeBinary(_) => Kind::FixedBinary(array.as_fixed_size_binary()),
            DataType::Date32 => Kind::Date32(prim::<Date32Type>(array)),
            DataType::Date64 => Kind::Date64(prim::<Date64Type>(array)),
            DataType::Timestamp(unit, _) => {
                Kind::Timestamp(timestamp_ticks(array), unit_nanos(unit) as i128)
            }
            DataType::Time32(unit) => Kind::Time32(time32_ticks(array), unit_nanos(unit)),
            DataType::Time64(unit) => Kind::Time64(time64_ticks(array), unit_nanos(unit)),
            DataType::Duration(unit) => {
                Kind::Duration(duration_ticks(array), unit_nanos(unit) as i128)
            }
            DataType::Interval(IntervalUnit::YearMonth) => {
                Kind::IntervalYm(prim::<IntervalYearMonthType>(array))
            }
            DataType::Interval(IntervalUnit::DayTime) => {
                Kind::IntervalDt(prim::<IntervalDayTimeType>(array))
            }
            DataType::Interval(IntervalUnit::MonthDayNano) => {
                Kind::IntervalMdn(prim::<IntervalMonthDayNanoType>(array))
            }
            DataType::Dictionary(_, _) => {
                let dict = array.as_any_dictionary();
                let values_enc = Encoder::new(dict.values().as_ref(), rules, column)?;
                let (null_value, values) = if dict.values().len() <= array.len() / 2 {
                    let encoded: Vec<Vec<u8>> = (0..dict.values().len())
                        .map(|i| {
                            let mut buf = Vec::new();
                            values_enc.encode(i, &mut buf);
                            buf
                        })
                        .collect();
                    let null_value = encoded.iter().any(|v| is_null_encoding(v));
                    (null_value, DictValues::of_encoded(encoded))
                } else {
                    let null_value = values_enc.may_be_null();
                    let len = dict.values().len();
                    let values = Box::new(values_enc);
                    (null_value, DictValues::PerRow { values, len })
                };
                Kind::Dict {
                    keys: dict.normalized_keys(),
                    null_value,
                    values,
                }
            }
            DataType::List(_) => {
                let l = array.as_list::<i32>();
                Kind::List {
                    offsets: ListOffsets::Small(l.value_offsets()),
                    child: Box::new(Encoder::new(l.values().as_ref(), rules, column)?),
                }
            }
            DataType::LargeList(_) => {
                let l = array.as_list::<i64>();
                Kind::List {
                    offsets: ListOffsets::Large(l.value_offsets()),
                    child: Box::new(Encoder::new(l.values().as_ref(), rules, column)?),
                }
            }
            DataType::FixedSizeList(_, n) => {
                let l = array.as_fixed_size_list();
                Kind::List {
                    offsets: ListOffsets::Fixed(*n as usize),
                    child: Box::new(Encoder::new(l.values().as_ref(), rules, column)?),
                }
            }
            DataType::Struct(_) => {
                let s: &StructArray = array.as_struct();
                let mut fields = s
                    .fields()
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| {
                        let name = f.name().to_lowercase();
                        let path = format!("{column}.{}", f.name());
                        Ok((name, Encoder::new(c.as_ref(), rules, &path)?))
                    })
                    .collect::<Result<Vec<_>>>()?;
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Kind::Struct(fields)
            }
            DataType::Map(_, _) => {
                let m = array.as_map();
                Kind::Map {
                    offsets: m.value_offsets(),
                    keys: Box::new(Encoder::new(m.keys().as_ref(), rules, column)?),
                    values: Box::new(Encoder::new(m.values().as_ref(), rules, column)?),
                }
            }
            other => {
                return Err(ReconError::UnsupportedType {
                    column: column.to_string(),
                    data_type: other.to_string(),
                });
            }
        };
        let nulls = match kind {
            // Dictionary nulls are carried by the encoded values (keys may also be null).
            Kind::Dict { .. } => array.as_any_dictionary().keys().nulls(),
            _ => nulls_of(array),
        };
        Ok(Encoder { nulls, kind })
    }

    /// An encoder that writes the same text value on every row (a partition value
    /// that is not stored in the file), or NULL.
    pub fn constant_text(value: Option<&str>, rules: StringRules) -> Encoder<'static> {
        let mut bytes = Vec::new();
        match value {
            Some(v) => string(&mut bytes, v, rules),
            None => bytes.push(tag::NULL),
        }
        Encoder {
            nulls: None,
            kind: Kind::Constant(bytes),
        }
    }

    /// An encoder that writes NULL on every row (a column a file does not have).
    pub(crate) fn all_null() -> Encoder<'static> {
        Encoder {
            nulls: None,
            kind: Kind::AllNull,
        }
    }

    /// Whether some row may encode as NULL: `false` when none can (no NULL in the
    /// array, no NULL dictionary value, no rule that turns text into NULL).
    pub(crate) fn may_be_null(&self) -> bool {
        self.nulls.is_some_and(|n| n.null_count() > 0)
            || match &self.kind {
                Kind::AllNull => true,
                Kind::Constant(bytes) => is_null_encoding(bytes),
                Kind::Dict { null_value, .. } => *null_value,
                Kind::Utf8(_, r) | Kind::LargeUtf8(_, r) | Kind::Utf8View(_, r) => r.empty_as_null,
                _ => false,
            }
    }

    /// Append the canonical encoding of `row` to `out`.
    #[inline]
    pub fn encode<O: Out + ?Sized>(&self, row: usize, out: &mut O) {
        self.encode_each(std::iter::once((row, out)));
    }

    /// Append the canonical encoding of rows `first..` to the slots, one row each, the
    /// whole column in one loop: the type is dispatched once, not per value. The slots
    /// must have room for [`Encoder::max_len`] of those rows.
    pub fn encode_rows(&self, first: usize, slots: &mut RowSlots) {
        self.encode_each(slots.outs(first));
    }

    /// The one definition of the encoding, looped over `(row, buffer)` pairs inside
    /// each type's arm.
    #[inline(always)]
    fn encode_each<O: Out>(&self, rows: impl Iterator<Item = (usize, O)>) {
        match &self.kind {
            Kind::AllNull => self.each(rows, |_, out| out.byte(tag::NULL)),
            Kind::Constant(bytes) => self.each(rows, |_, out| out.bytes(bytes)),
            Kind::Bool(a) => self.each(rows, |row, out| {
                out.word(tag::BOOL as u128 | (a.value(row) as u128) << 8, 2)
            }),
            Kind::I8(v) => self.each(rows, |row, out| integer(out, v[row] as i64)),
            Kind::I16(v) => self.each(rows, |row, out| integer(out, v[row] as i64)),
            Kind::I32(v) => self.each(rows, |row, out| integer(out, v[row] as i64)),
            Kind::I64(v) => self.each(rows, |row, out| integer(out, v[row])),
            Kind::U8(v) => self.each(rows, |row, out| integer(out, v[row] as i64)),
            Kind::U16(v) => self.each(rows, |row, out| integer(out, v[row] as i64)),
            Kind::U32(v) => self.each(rows, |row, out| integer(out, v[row] as i64)),
            Kind::U64(v) => self.each(rows, |row, out| exact(out, v[row] as i128, 0)),
            Kind::Dec32(v, s) => self.each(rows, |row, out| exact(out, v[row] as i128, *s)),
            Kind::Dec64(v, s) => self.each(rows, |row, out| exact(out, v[row] as i128, *s)),
            Kind::Dec128(v, s) => self.each(rows, |row, out| exact(out, v[row], *s)),
            Kind::Dec256(v, s) => self.each(rows, |row, out| exact_wide(out, v[row], *s)),
            Kind::F16(v) => self.each(rows, |row, out| float(out, f64::from(v[row]))),
            Kind::F32(v) => self.each(rows, |row, out| float(out, v[row] as f64)),
            Kind::F64(v) => self.each(rows, |row, out| float(out, v[row])),
            Kind::Utf8(a, r) => self.each(rows, |row, out| string(out, a.value(row), *r)),
            Kind::LargeUtf8(a, r) => self.each(rows, |row, out| string(out, a.value(row), *r)),
            Kind::Utf8View(a, r) if r.is_identity() => self.each(rows, |row, out| {
                viewed(out, tag::STRING, a.views()[row], || a.value(row).as_bytes())
            }),
            Kind::Utf8View(a, r) => self.each(rows, |row, out| string(out, a.value(row), *r)),
            Kind::Binary(a) => self.each(rows, |row, out| bytes(out, tag::BINARY, a.value(row))),
            Kind::LargeBinary(a) => {
                self.each(rows, |row, out| bytes(out, tag::BINARY, a.value(row)))
            }
            Kind::BinaryView(a) => self.each(rows, |row, out| {
                viewed(out, tag::BINARY, a.views()[row], || a.value(row))
            }),
            Kind::FixedBinary(a) => {
                self.each(rows, |row, out| bytes(out, tag::BINARY, a.value(row)))
            }
            Kind::Date32(v) => self.each(rows, |row, out| date(out, v[row])),
            Kind::Date64(v) => self.each(rows, |row, out| {
                date(out, v[row].div_euclid(86_400_000) as i32)
            }),
            Kind::Timestamp(v, f) => self.each(rows, |row, out| {
                tagged_int128(out, tag::TIMESTAMP, v[row] as i128 * f)
            }),
            Kind::Time32(v, f) => self.each(rows, |row, out| time(out, v[row] as i64 * f)),
            Kind::Time64(v, f) => self.each(rows, |row, out| time(out, v[row] * f)),
            Kind::Duration(v, f) => self.each(rows, |row, out| {
                tagged_int128(out, tag::DURATION, v[row] as i128 * f)
            }),
            Kind::IntervalYm(v) => self.each(rows, |row, out| interval(out, v[row], 0, 0)),
            Kind::IntervalDt(v) => self.each(rows, |row, out| {
                interval(out, 0, v[row].days, v[row].milliseconds as i64 * 1_000_000)
            }),
            Kind::IntervalMdn(v) => self.each(rows, |row, out| {
                interval(out, v[row].months, v[row].days, v[row].nanoseconds)
            }),
            Kind::Dict {
                keys,
                values: DictValues::Encoded(values),
                ..
            } => self.each(rows, |row, out| out.bytes(&values[keys[row]])),
            Kind::Dict {
                keys,
                values: DictValues::Words(words),
                ..
            } => self.each(rows, |row, out| {
                let (word, len) = words[keys[row]];
                out.word(word, len)
            }),
            // Through `&mut dyn Out`, as nested values below.
            Kind::Dict {
                keys,
                values: DictValues::PerRow { values, .. },
                ..
            } => self.each(rows, |row, out| {
                values.encode(keys[row], out as &mut dyn Out)
            }),
            // Nested values go through `&mut dyn Out`: with the writer's own type, each
            // level would instantiate the encoder for `&mut` of the level above, forever.
            Kind::List { offsets, child } => self.each(rows, |row, out| {
                let range = offsets.range(row);
                tagged_uint(out, tag::LIST, range.len() as u64);
                for i in range {
                    child.encode(i, out as &mut dyn Out);
                }
            }),
            Kind::Struct(fields) => self.each(rows, |row, out| {
                tagged_uint(out, tag::STRUCT, fields.len() as u64);
                for (name, enc) in fields {
                    bytes(out, tag::STRING, name.as_bytes());
                    enc.encode(row, out as &mut dyn Out);
                }
            }),
            Kind::Map {
                offsets,
                keys,
                values,
            } => self.each(rows, |row, out| {
                let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                let mut entries: Vec<(Vec<u8>, Vec<u8>)> = (start..end)
                    .map(|i| {
                        let (mut k, mut v) = (Vec::new(), Vec::new());
                        keys.encode(i, &mut k);
                        values.encode(i, &mut v);
                        (k, v)
                    })
                    .collect();
                entries.sort();
                tagged_uint(out, tag::MAP, entries.len() as u64);
                for (k, v) in entries {
                    out.bytes(&k);
                    out.bytes(&v);
                }
            }),
        }
    }

    /// Run `f` on every non-NULL row; NULL rows get the NULL tag.
    #[inline(always)]
    fn each<O: Out>(&self, rows: impl Iterator<Item = (usize, O)>, f: impl Fn(usize, &mut O)) {
        match self.nulls {
            Some(n) => {
                for (row, mut out) in rows {
                    if n.is_null(row) {
                        out.byte(tag::NULL);
                    } else {
                        f(row, &mut out);
                    }
                }
            }
            None => rows.for_each(|(row, mut out)| f(row, &mut out)),
        }
    }
}

fn timestamp_ticks(a: &dyn Array) -> &[i64] {
    match a.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => prim::<TimestampSecondType>(a),
        DataType::Timestamp(TimeUnit::Millisecond, _) => prim::<TimestampMillisecondType>(a),
        DataType::Timestamp(TimeUnit::Microsecond, _) => prim::<TimestampMicrosecondType>(a),
        _ => prim::<TimestampNanosecondType>(a),
    }
}

fn time32_ticks(a: &dyn Array) -> &[i32] {
    match a.data_type() {
        DataType::Time32(TimeUnit::Second) => prim::<Time32SecondType>(a),
        _ => prim::<Time32MillisecondType>(a),
    }
}

fn time64_ticks(a: &dyn Array) -> &[i64] {
    match a.data_type() {
        DataType::Time64(TimeUnit::Microsecond) => prim::<Time64MicrosecondType>(a),
        _ => prim::<Time64NanosecondType>(a),
    }
}

fn duration_ticks(a: &dyn Array) -> &[i64] {
    match a.data_type() {
        DataType::Duration(TimeUnit::Second) => prim::<DurationSecondType>(a),
        DataType::Duration(TimeUnit::Millisecond) => prim::<DurationMillisecondType>(a),
        DataType::Duration(TimeUnit::Microsecond) => prim::<DurationMicrosecondType>(a),
        _ => prim::<DurationNanosecondType>(a),
    }
}

/// Write an integer: an exact number of scale 0 (what [`exact`] writes for it).
#[inline]
fn integer(out: &mut impl Out, v: i64) {
    exact64(out, v, 0);
}

/// An exact number whose mantissa fits 64 bits: header, scale and mantissa in one
/// store.
#[inline]
fn exact64(out: &mut impl Out, m: i64, scale: u8) {
    let z = zigzag(m);
    let n = byte_len64(z);
    out.word(
        header(tag::EXACT, n) as u128 | (scale as u128) << 8 | (z as u128) << 16,
        n + 2,
    );
}

/// Write an exact number as (normalised scale, mantissa): trailing zeros of the
/// fraction are removed, so 1.50 (scale 2) and 1.5 (scale 1) and 15/10 agree. A
/// mantissa beyond [`MAX_NUMBER_BYTES`] is written wide.
#[inline(always)]
fn exact(out: &mut impl Out, mut m: i128, mut scale: i8) {
    if scale < 0 {
        match 10i128
            .checked_pow(scale.unsigned_abs() as u32)
            .and_then(|f| m.checked_mul(f))
        {
            Some(v) => {
                m = v;
                scale = 0;
            }
            None => return exact_wide(out, i256::from_i128(m), scale),
        }
    }
    if m == 0 {
        scale = 0;
    }
    // Strip trailing zeros; in i64 while the value fits (i128 division is a call).
    while scale > 0 {
        let (quotient, rest) = match i64::try_from(m) {
            Ok(small) => ((small / 10) as i128, small % 10),
            Err(_) => (m / 10, (m % 10) as i64),
        };
        if rest != 0 {
            break;
        }
        m = quotient;
        scale -= 1;
    }
    match i64::try_from(m) {
        Ok(small) => exact64(out, small, scale as u8),
        Err(_) => exact128(out, m, scale as u8),
    }
}

/// [`exact`] of a normalised mantissa beyond 64 bits (rare: kept out of the loops).
#[cold]
#[inline(never)]
fn exact128(out: &mut impl Out, m: i128, scale: u8) {
    let z = zigzag128(m);
    let n = byte_len(z);
    if n <= MAX_NUMBER_BYTES {
        out.byte(header(tag::EXACT, n));
        out.word(scale as u128 | z << 8, n + 1);
    } else {
        wide(out, i256::from_i128(m), scale);
    }
}

/// A wide exact number: header, scale and the 32 bytes of the mantissa.
fn wide(out: &mut impl Out, m: i256, scale: u8) {
    out.word(header(tag::EXACT_WIDE, 0) as u128 | (scale as u128) << 8, 2);
    out.bytes(&m.to_le_bytes());
}

/// 256-bit decimals: written like [`exact`] when the normalised value fits i128.
fn exact_wide(out: &mut impl Out, mut m: i256, mut scale: i8) {
    let ten = i256::from_i128(10);
    while scale < 0 {
        match m.checked_mul(ten) {
            Some(v) => {
                m = v;
                scale += 1;
            }
            None => break,
        }
    }
    if m == i256::ZERO {
        scale = 0;
    }
    while scale > 0 && m.checked_rem(ten) == Some(i256::ZERO) {
        m = m.wrapping_div(ten);
        scale -= 1;
    }
    match m.to_i128() {
        Some(small) if scale >= 0 => exact(out, small, scale),
        _ => wide(out, m, scale as u8),
    }
}

#[inline]
fn float(out: &mut impl Out, v: f64) {
    let v = if v == 0.0 {
        0.0 // folds -0.0
    } else if v.is_nan() {
        f64::NAN
    } else {
        v
    };
    out.word(tag::FLOAT as u128 | (v.to_bits() as u128) << 8, 9);
}

#[inline(always)]
fn bytes(out: &mut impl Out, t: u8, b: &[u8]) {
    tagged_uint(out, t, b.len() as u64);
    out.bytes(b);
}

/// [`bytes`] of a value of a view array, given its view: a value of at most twelve
/// bytes is in the view itself (after its 4-byte length), so its header, length and
/// bytes are built in a register and stored at once, with no slice of the value and
/// no copy by its length (2-3% of the CPU on the bench data, whose three text columns
/// hold 0-22 bytes); a longer one is written from `value()`'s bytes.
#[inline(always)]
fn viewed<'v>(out: &mut impl Out, t: u8, view: u128, value: impl FnOnce() -> &'v [u8]) {
    let len = view as u32 as usize;
    if len <= MAX_INLINE_VIEW_LEN as usize {
        // The fewest bytes of the length: none for 0, else one.
        let n = usize::from(len != 0);
        // The bytes after the value are zero (Arrow refuses views padded otherwise).
        let data = view >> 32;
        let word = header(t, n) as u128 | (len as u128) << 8 | data << (8 * (1 + n));
        out.word(word, 1 + n + len);
    } else {
        bytes(out, t, value());
    }
}

#[inline(always)]
fn string(out: &mut impl Out, s: &str, rules: StringRules) {
    if rules.is_identity() {
        bytes(out, tag::STRING, s.as_bytes());
    } else {
        string_by_rules(out, s, rules);
    }
}

/// [`string`] under a column's trim, ignore-case and empty-as-NULL rules.
#[inline(never)]
fn string_by_rules(out: &mut impl Out, s: &str, rules: StringRules) {
    let s = if rules.trim { s.trim() } else { s };
    if rules.empty_as_null && s.is_empty() {
        out.byte(tag::NULL);
    } else if rules.ignore_case {
        bytes(out, tag::STRING, s.to_lowercase().as_bytes());
    } else {
        bytes(out, tag::STRING, s.as_bytes());
    }
}

#[inline]
fn date(out: &mut impl Out, days: i32) {
    tagged_int(out, tag::DATE, days as i64);
}

#[inline]
fn time(out: &mut impl Out, nanos: i64) {
    tagged_int(out, tag::TIME, nanos);
}

/// An interval: months and days (4 bytes each) and nanoseconds (8 bytes), little
/// endian, after the header.
fn interval(out: &mut impl Out, months: i32, days: i32, nanos: i64) {
    out.byte(tag::INTERVAL);
    out.word(
        months as u32 as u128 | (days as u32 as u128) << 32 | (nanos as u64 as u128) << 64,
        16,
    );
}

/// Whether encoded bytes are a NULL value.
#[inline]
pub(crate) fn is_null_encoding(encoded: &[u8]) -> bool {
    encoded == [tag::NULL]
}

/// Render canonical bytes of one scalar value for people (reports, alerts).
/// Returns `None` for NULL. Nested values are rendered as JSON-like text.
pub fn display(encoded: &[u8]) -> Option<String> {
    let mut cursor = encoded;
    let value = read_display(&mut cursor);
    if value == "NULL" && encoded.first() == Some(&tag::NULL) {
        None
    } else {
        Some(value)
    }
}

/// Split a buffer holding several encoded values (e.g. a composite key) into the
/// encoded bytes of each value.
pub(crate) fn split_values(mut encoded: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    while !encoded.is_empty() {
        let before = encoded;
        let mut cursor = encoded;
        read_display(&mut cursor);
        let used = before.len() - cursor.len();
        parts.push(&before[..used]);
        encoded = cursor;
    }
    parts
}

fn take<'b>(cursor: &mut &'b [u8], n: usize) -> &'b [u8] {
    let n = n.min(cursor.len());
    let (head, rest) = cursor.split_at(n);
    *cursor = rest;
    head
}

/// Read an `n`-byte little-endian number (see [`out::tagged_uint`]).
fn take_uint(cursor: &mut &[u8], n: usize) -> u128 {
    take(cursor, n)
        .iter()
        .rev()
        .fold(0u128, |v, &b| v << 8 | b as u128)
}

/// Read an `n`-byte zigzag number.
fn take_int(cursor: &mut &[u8], n: usize) -> i128 {
    unzigzag(take_uint(cursor, n))
}

/// Read an `n`-byte length or count.
fn take_len(cursor: &mut &[u8], n: usize) -> usize {
    usize::try_from(take_uint(cursor, n)).unwrap_or(usize::MAX)
}

fn take_array<const N: usize>(cursor: &mut &[u8]) -> [u8; N] {
    let b = take(cursor, N);
    let mut a = [0u8; N];
    a[..b.len()].copy_from_slice(b);
    a
}

/// Format a mantissa with a scale as a decimal string.
fn decimal_string(m: String, scale: usize) -> String {
    if scale == 0 {
        return m;
    }
    let (sign, digits) = m.strip_prefix('-').map_or(("", m.as_str()), |d| ("-", d));
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

fn format_nanos(nanos: i128) -> String {
    let secs = nanos.div_euclid(1_000_000_000);
    let sub = nanos.rem_euclid(1_000_000_000) as u32;
    match i64::try_from(secs)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, sub))
    {
        Some(t) if sub == 0 => t.format("%Y-%m-%dT%H:%M:%S").to_string(),
        Some(t) => {
            let f = t.format("%Y-%m-%dT%H:%M:%S%.9f").to_string();
            f.trim_end_matches('0').to_string()
        }
        None => format!("{nanos}ns"),
    }
}

/// A counted run of `name: value` entries (struct fields, map entries) as `{a: 1, b: 2}`.
fn braces(cursor: &mut &[u8], count: usize) -> String {
    // Every entry takes at least one byte: a count beyond the input is corrupt.
    let entries: Vec<String> = (0..count.min(cursor.len()))
        .map(|_| {
            let name = read_display(cursor);
            format!("{name}: {}", read_display(cursor))
        })
        .collect();
    format!("{{{}}}", entries.join(", "))
}

fn read_display(cursor: &mut &[u8]) -> String {
    let h = take(cursor, 1).first().copied().unwrap_or(tag::NULL);
    let (kind, n) = (h & 0x0F, (h >> 4) as usize);
    match kind {
        tag::NULL if n == 0 => "NULL".into(),
        tag::BOOL if n == 0 => (take(cursor, 1).first() == Some(&1)).to_string(),
        tag::EXACT => {
            let scale = take(cursor, 1).first().copied().unwrap_or(0) as usize;
            decimal_string(take_int(cursor, n).to_string(), scale)
        }
        tag::EXACT_WIDE if n == 0 => {
            let scale = take(cursor, 1).first().copied().unwrap_or(0) as usize;
            let m = i256::from_le_bytes(take_array(cursor));
            decimal_string(m.to_string(), scale)
        }
        tag::FLOAT if n == 0 => f64::from_bits(u64::from_le_bytes(take_array(cursor))).to_string(),
        tag::STRING => {
            let len = take_len(cursor, n);
            String::from_utf8_lossy(take(cursor, len)).into_owned()
        }
        tag::BINARY => {
            let len = take_len(cursor, n);
            let hex: String = take(cursor, len)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("0x{hex}")
        }
        tag::DATE => {
            let days = take_int(cursor, n);
            i64::try_from(days)
                .ok()
                .and_then(chrono::TimeDelta::try_days)
                .and_then(|d| chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?.checked_add_signed(d))
                .map_or_else(|| format!("{days}d"), |d| d.format("%Y-%m-%d").to_string())
        }
        tag::TIMESTAMP => format_nanos(take_int(cursor, n)),
        tag::TIME => {
            let s = format_nanos(take_int(cursor, n));
            s.split_once('T').map_or(s.clone(), |(_, t)| t.to_string())
        }
        tag::DURATION => format!("{}ns", take_int(cursor, n)),
        tag::INTERVAL if n == 0 => {
            let months = i32::from_le_bytes(take_array(cursor));
            let days = i32::from_le_bytes(take_array(cursor));
            let nanos = i64::from_le_bytes(take_array(cursor));
            format!("{months} months {days} days {nanos}ns")
        }
        tag::LIST => {
            // Every element takes at least one byte: a count beyond the input is corrupt.
            let count = take_len(cursor, n).min(cursor.len());
            let items: Vec<String> = (0..count).map(|_| read_display(cursor)).collect();
            format!("[{}]", items.join(", "))
        }
        // Struct fields are a name (a string value) and a value, map entries a key and
        // a value: both read as `name: value`.
        tag::STRUCT | tag::MAP => {
            let count = take_len(cursor, n);
            braces(cursor, count)
        }
        _ => {
            // Unknown header: consume the rest so callers stop.
            *cursor = &[];
            format!("<header {h:#x}>")
        }
    }
}

/// Whether an Arrow type is a number (for tolerance comparisons and numeric coercion).
pub(crate) fn is_numeric(t: &DataType) -> bool {
    t.is_numeric() || matches!(t, DataType::Dictionary(_, v) if v.is_numeric())
}

/// The coarse family of a type: values of different families never compare equal
/// natively, so a pair whose column types are in different families is coerced.
pub(crate) fn family(t: &DataType) -> &'static str {
    match t {
        DataType::Dictionary(_, v) => family(v),
        DataType::Null => "null",
        DataType::Boolean => "bool",
        t if t.is_integer()
            || matches!(
                t,
                DataType::Decimal32(..)
                    | DataType::Decimal64(..)
                    | DataType::Decimal128(..)
                    | DataType::Decimal256(..)
            ) =>
        {
            "exact"
        }
        t if t.is_floating() => "float",
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string",
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => "binary",
        DataType::Date32 | DataType::Date64 => "date",
        DataType::Timestamp(_, _) => "timestamp",
        DataType::Time32(_) | DataType::Time64(_) => "time",
        DataType::Duration(_) => "duration",
        DataType::Interval(_) => "interval",
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _) => "list",
        DataType::Struct(_) => "struct",
        DataType::Map(_, _) => "map",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        BinaryArray, BinaryViewArray, DictionaryArray, Int32Array, Int64Builder, MapBuilder,
        StringArray, StringBuilder, StringViewArray,
    };
    use arrow::datatypes::Field;

    use super::*;
    use arrow::array::ArrayRef;

    /// The canonical bytes of one value of `array` at `row`.
    fn encode_value(array: &ArrayRef, row: usize, rules: StringRules) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Encoder::new(array.as_ref(), rules, "value")?.encode(row, &mut out);
        Ok(out)
    }

    /// Each row of `a` encoded alone into a vector, and all rows into row slots.
    fn both_paths(a: &dyn Array) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let enc = Encoder::new(a, StringRules::default(), "s").unwrap();
        let alone = (0..a.len())
            .map(|r| {
                let mut out = Vec::new();
                enc.encode(r, &mut out);
                out
            })
            .collect();
        let mut slots = RowSlots::for_keys();
        slots.reset(a.len(), enc.max_len(0..a.len()));
        enc.encode_rows(0, &mut slots);
        let in_slots = (0..a.len()).map(|r| slots.row(r).to_vec()).collect();
        (alone, in_slots)
    }

    /// Assert that `got` encodes as `want` does, row by row, alone and in row slots.
    fn assert_encodes_as(got: &dyn Array, want: &dyn Array) {
        let (want, want_in_slots) = both_paths(want);
        assert_eq!(want, want_in_slots);
        let (alone, in_slots) = both_paths(got);
        assert_eq!(alone, want, "{}", got.data_type());
        assert_eq!(in_slots, want, "{}", got.data_type());
    }

    /// Texts of 0 to 14 bytes, with two-byte characters, and a NULL.
    fn texts_up_to_fourteen_bytes() -> Vec<Option<String>> {
        (0..=14)
            .map(|n| Some("é".repeat(n / 2) + &"x".repeat(n % 2)))
            .chain([None])
            .collect()
    }

    #[test]
    fn view_values_of_every_length_around_the_inline_twelve_encode_as_offset_arrays_do() {
        let texts = texts_up_to_fourteen_bytes();
        let bytes: Vec<Option<&[u8]>> = texts
            .iter()
            .map(|t| t.as_deref().map(str::as_bytes))
            .collect();
        let pairs: [(ArrayRef, ArrayRef); 2] = [
            (
                Arc::new(StringArray::from(texts.clone())),
                Arc::new(StringViewArray::from(texts.clone())),
            ),
            (
                Arc::new(BinaryArray::from(bytes.clone())),
                Arc::new(BinaryViewArray::from(bytes.clone())),
            ),
        ];
        for (offsets, views) in pairs {
            assert_encodes_as(views.as_ref(), offsets.as_ref());
        }
        let (text, _) = both_paths(&StringViewArray::from(vec!["", "ab", "éééééé"]));
        assert_eq!(text[0], [0x05]);
        assert_eq!(text[1], [0x15, 2, b'a', b'b']);
        assert_eq!(text[2], [&[0x15, 12][..], "éééééé".as_bytes()].concat());
    }

    #[test]
    fn dictionaries_of_values_in_one_word_and_longer_encode_as_their_values() {
        // Values whose bytes (header and length included) take 1 to 16 bytes, so every
        // one fits a word, and the same with one longer; repeated so each batch's
        // dictionary is encoded up front; NULL values and NULL keys.
        let short = texts_up_to_fourteen_bytes();
        let long: Vec<Option<String>> = short
            .iter()
            .cloned()
            .chain([Some("a value of more than sixteen bytes".into())])
            .collect();
        for values in [short, long] {
            let rows: Vec<Option<&str>> = values
                .iter()
                .map(Option::as_deref)
                .cycle()
                .take(4 * values.len())
                .collect();
            let dict: DictionaryArray<Int32Type> = rows.iter().copied().collect();
            let with_null_keys = DictionaryArray::<Int32Type>::try_new(
                Int32Array::from_iter(
                    dict.keys()
                        .iter()
                        .enumerate()
                        .map(|(i, k)| k.filter(|_| i % 5 != 0)),
                ),
                dict.values().clone(),
            )
            .unwrap();
            for d in [dict, with_null_keys] {
                let plain = StringArray::from_iter(d.downcast_dict::<StringArray>().unwrap());
                assert_encodes_as(&d, &plain);
            }
        }
    }

    #[test]
    fn may_be_null_is_false_only_when_no_row_can_encode_as_null() {
        let rules = StringRules::default();
        let may = |a: &dyn Array, rules| Encoder::new(a, rules, "k").unwrap().may_be_null();
        assert!(!may(&Int32Array::from(vec![1, 2]), rules));
        assert!(may(&Int32Array::from(vec![Some(1), None]), rules));
        // A NULL dictionary value behind a valid key.
        let values = StringArray::from(vec![Some("a"), None]);
        let keys = Int32Array::from(vec![0, 1]);
        let dict = DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).unwrap();
        assert!(may(&dict, rules));
        let text = StringArray::from(vec!["a", ""]);
        assert!(!may(&text, rules));
        let empty_as_null = StringRules {
            empty_as_null: true,
            ..rules
        };
        assert!(may(&text, empty_as_null));
        assert!(Encoder::constant_text(None, rules).may_be_null());
        assert!(!Encoder::constant_text(Some("x"), rules).may_be_null());
        assert!(Encoder::all_null().may_be_null());
    }

    #[test]
    fn dictionary_rows_encode_as_their_values_whether_encoded_up_front_or_per_row() {
        let values = || {
            Arc::new(StringArray::from(vec![
                Some("a"),
                None,
                Some(""),
                Some("ccc"),
            ]))
        };
        // Three rows point into four values (encoded per row); twenty into the same
        // four (encoded up front). NULL keys and the NULL value both encode as NULL.
        let few = vec![Some(3), None, Some(1)];
        let many: Vec<Option<i32>> = (0..20).map(|i| (i % 6 != 5).then_some(i % 4)).collect();
        for keys in [few, many] {
            let dict =
                DictionaryArray::<Int32Type>::try_new(Int32Array::from(keys.clone()), values())
                    .unwrap();
            let plain: StringArray = keys
                .iter()
                .map(|k| k.and_then(|k| [Some("a"), None, Some(""), Some("ccc")][k as usize]))
                .collect();
            let rules = StringRules::default();
            let (d, p) = (
                Encoder::new(&dict, rules, "d").unwrap(),
                Encoder::new(&plain, rules, "p").unwrap(),
            );
            let mut slots = RowSlots::for_keys();
            slots.reset(keys.len(), d.max_len(0..keys.len()));
            d.encode_rows(0, &mut slots);
            for r in 0..keys.len() {
                let (mut got, mut want) = (Vec::new(), Vec::new());
                d.encode(r, &mut got);
                p.encode(r, &mut want);
                assert_eq!(got, want, "row {r} of {}", keys.len());
                assert_eq!(slots.row(r), want.as_slice(), "slot {r} of {}", keys.len());
            }
            assert!(d.may_be_null());
        }
    }

    #[test]
    fn nested_values_display_as_braces_in_canonical_order() {
        let s: ArrayRef = Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("B", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("a", DataType::Int32, true)),
                Arc::new(Int32Array::from(vec![1])) as ArrayRef,
            ),
        ]));
        let encoded = encode_value(&s, 0, StringRules::default()).unwrap();
        assert_eq!(display(&encoded).as_deref(), Some("{a: 1, b: x}"));
        let mut m = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
        for (k, v) in [("b", 2), ("a", 1)] {
            m.keys().append_value(k);
            m.values().append_value(v);
        }
        m.append(true).unwrap();
        let m: ArrayRef = Arc::new(m.finish());
        let encoded = encode_value(&m, 0, StringRules::default()).unwrap();
        assert_eq!(display(&encoded).as_deref(), Some("{a: 1, b: 2}"));
        // A count beyond the bytes is corrupt input, not a long loop.
        assert_eq!(display(&[header(tag::MAP, 1), 0x7f]).as_deref(), Some("{}"));
    }
}
