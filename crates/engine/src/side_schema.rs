//! The schema of one side of a pair: the union, by column name (case-insensitive),
//! of the columns of all its files.
//!
//! Tables evolve: a column added last month is in the newer files only, and the
//! older files read it as NULL (as Athena and Spark read such tables). Taking one
//! file's columns would leave such a column out of the compare, or report it as
//! missing from a side that has it. Files of one side may store a column with
//! different types of one family (int32 here, int64 there): values are compared, not
//! types. Different families (a number here, text there) cannot be compared as one
//! column, and a file with two columns whose names differ only in case is
//! ambiguous: both are errors that name the files.

use std::collections::HashMap;

use arrow::datatypes::{Field, Schema};

use crate::canonical::family;
use crate::error::{ReconError, Result};

/// Builds the union schema of one side, one file at a time (in file order, so the
/// first file's column order and types lead).
pub(crate) struct SideSchema {
    location: String,
    columns: Vec<Column>,
    /// Lower-cased name to column index.
    by_name: HashMap<String, usize>,
    files: usize,
}

/// One column of the union.
struct Column {
    field: Field,
    /// The file its type was taken from.
    typed_in: String,
    /// How many files have it.
    files: usize,
}

impl Column {
    /// Merge a later file's field: a typed column replaces an all-NULL one; another
    /// family is an error (the reason).
    fn merge(&mut self, uri: &str, f: &Field) -> std::result::Result<(), String> {
        self.files += 1;
        let (have, new) = (family(self.field.data_type()), family(f.data_type()));
        if have == "null" && new != "null" {
            self.field = f.clone().with_name(self.field.name()).with_nullable(true);
            self.typed_in = uri.to_string();
        } else if new != "null" && have != new {
            let name = self.field.name();
            return Err(format!(
                "column `{name}` is {} in {} but {} in {uri}; the files of one table must \
                 store a column as one kind of value: rewrite the odd files, or leave the \
                 column out of the compare (`exclude = [\"{name}\"]`)",
                self.field.data_type(),
                self.typed_in,
                f.data_type(),
            ));
        }
        Ok(())
    }
}

impl SideSchema {
    /// An empty union for the table at `location` (named in errors).
    pub fn new(location: &str) -> Self {
        SideSchema {
            location: location.to_string(),
            columns: Vec::new(),
            by_name: HashMap::new(),
            files: 0,
        }
    }

    /// Add the columns of the file at `uri`.
    pub fn add(&mut self, uri: &str, schema: &Schema) -> Result<()> {
        let mut in_file: HashMap<String, &str> = HashMap::new();
        for f in schema.fields() {
            let lower = f.name().to_lowercase();
            if let Some(other) = in_file.insert(lower.clone(), f.name()) {
                return Err(self.error(format!(
                    "{uri} has two columns whose names differ only in case, `{other}` and `{}`; \
                     columns are matched case-insensitively, so rename one",
                    f.name()
                )));
            }
            match self.by_name.get(&lower) {
                None => {
                    self.by_name.insert(lower, self.columns.len());
                    self.columns.push(Column {
                        field: f.as_ref().clone(),
                        typed_in: uri.to_string(),
                        files: 1,
                    });
                }
                Some(&i) => self.columns[i].merge(uri, f).map_err(|r| self.error(r))?,
            }
        }
        self.files += 1;
        Ok(())
    }

    /// How many files were added.
    pub fn files(&self) -> usize {
        self.files
    }

    /// The union: every column of every file, in order of first appearance. A
    /// column some files lack, or store as all-NULL, is nullable.
    pub fn finish(self) -> Schema {
        let files = self.files;
        let fields = self.columns.into_iter().map(|c| {
            let nullable = c.field.is_nullable() || c.files < files;
            c.field.with_nullable(nullable)
        });
        Schema::new(fields.collect::<Vec<_>>())
    }

    fn error(&self, reason: String) -> ReconError {
        ReconError::SchemaMismatch {
            table: self.location.clone(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::DataType;

    /// A schema of required columns.
    fn schema<const N: usize>(fields: [(&str, DataType); N]) -> Schema {
        Schema::new(fields.map(|(n, t)| Field::new(n, t, false)).to_vec())
    }

    fn names(s: &Schema) -> Vec<(String, DataType, bool)> {
        s.fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone(), f.is_nullable()))
            .collect()
    }

    #[test]
    fn columns_of_later_files_are_added_and_nullable() {
        let mut u = SideSchema::new("t");
        u.add(
            "a",
            &schema([("id", DataType::Int64), ("v", DataType::Utf8)]),
        )
        .unwrap();
        u.add(
            "b",
            &schema([
                ("V", DataType::LargeUtf8),
                ("ID", DataType::Int32),
                ("new", DataType::Float64),
            ]),
        )
        .unwrap();
        assert_eq!(u.files(), 2);
        assert_eq!(
            names(&u.finish()),
            vec![
                ("id".into(), DataType::Int64, false),
                ("v".into(), DataType::Utf8, false),
                ("new".into(), DataType::Float64, true),
            ]
        );
    }

    #[test]
    fn a_typed_column_replaces_an_all_null_one() {
        let mut u = SideSchema::new("t");
        u.add("a", &schema([("x", DataType::Null)])).unwrap();
        u.add("b", &schema([("X", DataType::Date32)])).unwrap();
        u.add("c", &schema([("x", DataType::Null)])).unwrap();
        assert_eq!(
            names(&u.finish()),
            vec![("x".into(), DataType::Date32, true)]
        );
    }

    #[test]
    fn another_family_in_a_later_file_names_both_files() {
        let mut u = SideSchema::new("s3://b/t");
        u.add("s3://b/t/1.parquet", &schema([("x", DataType::Int64)]))
            .unwrap();
        let e = u
            .add("s3://b/t/2.parquet", &schema([("x", DataType::Utf8)]))
            .unwrap_err()
            .to_string();
        for part in [
            "s3://b/t",
            "1.parquet",
            "2.parquet",
            "Int64",
            "Utf8",
            "exclude",
        ] {
            assert!(e.contains(part), "{part} not in: {e}");
        }
    }

    #[test]
    fn names_that_differ_only_in_case_in_one_file_are_ambiguous() {
        let mut u = SideSchema::new("t");
        let e = u
            .add(
                "f.parquet",
                &schema([("id", DataType::Int64), ("ID", DataType::Int64)]),
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("f.parquet") && e.contains("`id`") && e.contains("`ID`"),
            "{e}"
        );
    }
}
