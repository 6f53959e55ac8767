//! Parquet columns that the parquet crate reads in a form that cannot be compared as
//! it is, and the form they are compared in.
//!
//! - **INTERVAL** is twelve bytes: months, days and milliseconds, each a
//!   little-endian 32-bit number (DuckDB writes them). The parquet crate reads it as
//!   Arrow's day-time interval, which has no months, so two intervals a month apart
//!   would read the same. A file with INTERVAL columns is therefore read with them as
//!   their twelve raw bytes, and a top-level one is compared as Arrow's
//!   month-day-nanosecond interval, which keeps all three parts. An INTERVAL inside a
//!   list, struct or map stays twelve bytes, compared exactly.
//! - **UUID** is sixteen bytes, which the parquet crate reads as fixed-size binary. A
//!   top-level UUID column is compared as its text (`8-4-4-4-12` lower-case hex
//!   digits), so a UUID column matches the same UUIDs stored as strings (as Spark and
//!   Glue jobs write them), and reports show UUIDs the way people read them.

use std::fmt::Write;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, IntervalMonthDayNanoArray, StringArray};
use arrow::datatypes::{DataType, FieldRef, IntervalMonthDayNano, IntervalUnit, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::basic::{ConvertedType, LogicalType};
use parquet::errors::Result;
use parquet::file::metadata::{FileMetaData, ParquetMetaData};
use parquet::schema::types::{ColumnDescriptor, SchemaDescriptor, Type, TypePtr};

/// A top-level column read in one form and compared in another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// INTERVAL read as twelve raw bytes, compared as a month-day-nanosecond interval.
    Interval,
    /// UUID read as sixteen bytes, compared as text.
    Uuid,
}

impl Form {
    /// The Arrow type a column of this form is compared as.
    pub(crate) fn compared_type(self) -> DataType {
        match self {
            Form::Interval => DataType::Interval(IntervalUnit::MonthDayNano),
            Form::Uuid => DataType::Utf8,
        }
    }

    /// Bytes of a value as read.
    fn bytes(self) -> i32 {
        match self {
            Form::Interval => 12,
            Form::Uuid => 16,
        }
    }

    /// Values as read (fixed-size binary of `Form::bytes`), in the compared form
    /// (NULLs kept).
    pub(crate) fn convert(self, read: &ArrayRef) -> ArrayRef {
        let read = read.as_fixed_size_binary();
        let rows = 0..read.len();
        let value = |r: usize| read.is_valid(r).then(|| read.value(r));
        match self {
            Form::Interval => Arc::new(
                rows.map(|r| value(r).map(interval))
                    .collect::<IntervalMonthDayNanoArray>(),
            ),
            Form::Uuid => Arc::new(
                rows.map(|r| value(r).map(uuid_text))
                    .collect::<StringArray>(),
            ),
        }
    }
}

/// The form of a column from its leaf in the file's schema (top-level leaves only).
fn form_of(c: &ColumnDescriptor) -> Option<Form> {
    if c.path().parts().len() != 1 {
        return None;
    }
    if is_interval(c) {
        Some(Form::Interval)
    } else if matches!(c.logical_type_ref(), Some(LogicalType::Uuid)) {
        Some(Form::Uuid)
    } else {
        None
    }
}

fn is_interval(c: &ColumnDescriptor) -> bool {
    c.converted_type() == ConvertedType::INTERVAL
}

/// A file's reader metadata (INTERVAL columns read as raw bytes), its Arrow schema
/// as compared (top-level columns of a [`Form`] in their compared type), and the
/// form of each top-level column. Files without such columns come back unchanged.
pub(crate) fn read_as_compared(
    meta: ArrowReaderMetadata,
) -> Result<(ArrowReaderMetadata, SchemaRef, Vec<Option<Form>>)> {
    let descr = meta.metadata().file_metadata().schema_descr();
    let forms: Vec<(String, Form)> = descr
        .columns()
        .iter()
        .filter_map(|c| Some((c.name().to_string(), form_of(c)?)))
        .collect();
    let meta = if descr.columns().iter().any(|c| is_interval(c)) {
        let old = meta.metadata();
        let fm = old.file_metadata();
        let raw = FileMetaData::new(
            fm.version(),
            fm.num_rows(),
            fm.created_by().map(str::to_string),
            fm.key_value_metadata().cloned(),
            Arc::new(SchemaDescriptor::new(intervals_as_bytes(
                &descr.root_schema_ptr(),
            )?)),
            fm.column_orders().cloned(),
        );
        ArrowReaderMetadata::try_new(
            Arc::new(ParquetMetaData::new(raw, old.row_groups().to_vec())),
            ArrowReaderOptions::new(),
        )?
    } else {
        meta
    };
    // Only where the reader gives the raw bytes, which [`Form::convert`] reads.
    let form = |f: &FieldRef| {
        let (_, form) = forms.iter().find(|(n, _)| n == f.name())?;
        (f.data_type() == &DataType::FixedSizeBinary(form.bytes())).then_some(*form)
    };
    let top: Vec<Option<Form>> = meta.schema().fields().iter().map(form).collect();
    if top.iter().all(Option::is_none) {
        let schema = meta.schema().clone();
        return Ok((meta, schema, top));
    }
    let fields: Vec<_> = meta
        .schema()
        .fields()
        .iter()
        .zip(&top)
        .map(|(f, form)| match form {
            Some(form) => Arc::new(f.as_ref().clone().with_data_type(form.compared_type())),
            None => f.clone(),
        })
        .collect();
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        meta.schema().metadata().clone(),
    ));
    Ok((meta, schema, top))
}

/// `t` with every INTERVAL leaf a plain twelve-byte FIXED_LEN_BYTE_ARRAY.
fn intervals_as_bytes(t: &TypePtr) -> Result<TypePtr> {
    let info = t.get_basic_info();
    match t.as_ref() {
        Type::PrimitiveType {
            physical_type,
            type_length,
            ..
        } if info.converted_type() == ConvertedType::INTERVAL => {
            let mut b = Type::primitive_type_builder(info.name(), *physical_type)
                .with_repetition(info.repetition())
                .with_length(*type_length);
            if info.has_id() {
                b = b.with_id(Some(info.id()));
            }
            Ok(Arc::new(b.build()?))
        }
        Type::PrimitiveType { .. } => Ok(t.clone()),
        Type::GroupType { fields, .. } => {
            let fields = fields
                .iter()
                .map(intervals_as_bytes)
                .collect::<Result<_>>()?;
            let mut b = Type::group_type_builder(info.name())
                .with_fields(fields)
                .with_converted_type(info.converted_type())
                .with_logical_type(info.logical_type_ref().cloned());
            if info.has_repetition() {
                b = b.with_repetition(info.repetition());
            }
            if info.has_id() {
                b = b.with_id(Some(info.id()));
            }
            Ok(Arc::new(b.build()?))
        }
    }
}

/// Twelve INTERVAL bytes as months, days and nanoseconds.
fn interval(b: &[u8]) -> IntervalMonthDayNano {
    let part = |i: usize| i32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    IntervalMonthDayNano::new(part(0), part(1), i64::from(part(2)) * 1_000_000)
}

/// Sixteen UUID bytes as `8-4-4-4-12` lower-case hex digits.
fn uuid_text(b: &[u8]) -> String {
    let mut s = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        write!(s, "{byte:02x}").expect("writing to a String");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_read_as_their_text() {
        let bytes: Vec<u8> = (0u8..16).map(|i| i * 17).collect();
        assert_eq!(uuid_text(&bytes), "00112233-4455-6677-8899-aabbccddeeff");
    }

    #[test]
    fn intervals_keep_months_days_and_milliseconds() {
        let b = [[2, 0, 0, 0], [3, 0, 0, 0], [0xff, 0xff, 0xff, 0xff]].concat();
        assert_eq!(interval(&b), IntervalMonthDayNano::new(2, 3, -1_000_000));
    }
}
