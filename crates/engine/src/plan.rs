//! The compare plan of a pair: which columns are the key, which are hashed, which
//! are compared with a tolerance, how each is encoded, and how the two schemas differ.

use std::collections::{BTreeMap, HashMap};

use arrow::datatypes::{DataType, Field, Schema};
use serde::{Deserialize, Serialize};

use crate::canonical::{StringRules, family, is_numeric};
use crate::config::PairConfig;
use crate::error::{ReconError, Result};
pub use crate::model::Side;

/// How a column's values are brought to a common form before encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareMode {
    /// Both sides have types of the same family: canonical encoding as is.
    Native,
    /// Numbers of different families (e.g. decimal vs double): both as float64.
    AsFloat,
    /// Other type families differ: both rendered as text.
    AsString,
}

/// One compared (or key) column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanColumn {
    /// The column's name in the target (and in every report).
    pub name: String,
    /// Its name in the source (differs when renamed).
    pub source_name: String,
    /// How values are normalised.
    pub mode: CompareMode,
    /// String rewrites.
    pub rules: StringRulesDef,
    /// Whether values are masked in every output.
    pub masked: bool,
    /// Absolute tolerance (tolerance columns only).
    pub abs_tolerance: Option<f64>,
    /// Relative tolerance (tolerance columns only).
    pub rel_tolerance: Option<f64>,
}

/// Serializable mirror of [`StringRules`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StringRulesDef {
    /// Trim white space.
    pub trim: bool,
    /// Case-insensitive.
    pub ignore_case: bool,
    /// Empty string is NULL.
    pub empty_as_null: bool,
}

impl StringRulesDef {
    /// The config name of the first rule set, if any (`trim`, `ignore_case`,
    /// `empty_as_null`).
    pub(crate) fn first_set(&self) -> Option<&'static str> {
        [
            ("trim", self.trim),
            ("ignore_case", self.ignore_case),
            ("empty_as_null", self.empty_as_null),
        ]
        .into_iter()
        .find_map(|(name, set)| set.then_some(name))
    }
}

impl From<StringRulesDef> for StringRules {
    fn from(d: StringRulesDef) -> Self {
        StringRules {
            trim: d.trim,
            ignore_case: d.ignore_case,
            empty_as_null: d.empty_as_null,
        }
    }
}

impl PlanColumn {
    /// The column's name on one side.
    pub(crate) fn name_on(&self, side: Side) -> &str {
        match side {
            Side::Source => &self.source_name,
            Side::Target => &self.name,
        }
    }
}

/// A column whose type differs between the sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeChange {
    /// The column (target name).
    pub column: String,
    /// The source type.
    pub source: String,
    /// The target type.
    pub target: String,
    /// Whether values still compare natively (same type family, e.g. int32 vs int64).
    pub compatible: bool,
}

/// How the two schemas differ.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaDiff {
    /// Columns only in the source (after rename and exclude).
    pub only_in_source: Vec<String>,
    /// Columns only in the target.
    pub only_in_target: Vec<String>,
    /// Columns whose types differ.
    pub type_changes: Vec<TypeChange>,
    /// The columns compared (key first).
    pub compared_columns: Vec<String>,
}

impl SchemaDiff {
    /// The drift in one line: columns only on one side and incompatible type changes
    /// (`only in target: b, c; type changed: name Utf8 -> Binary`), the parts that apply.
    pub fn describe(&self) -> String {
        let changed: Vec<String> = self
            .type_changes
            .iter()
            .filter(|t| !t.compatible)
            .map(|t| format!("{} {} -> {}", t.column, t.source, t.target))
            .collect();
        [
            ("only in source", &self.only_in_source),
            ("only in target", &self.only_in_target),
            ("type changed", &changed),
        ]
        .into_iter()
        .filter(|(_, columns)| !columns.is_empty())
        .map(|(what, columns)| format!("{what}: {}", columns.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
    }

    /// Whether the schema drifted: a column appeared or disappeared, or a type
    /// changed family.
    pub fn drifted(&self) -> bool {
        !self.only_in_source.is_empty()
            || !self.only_in_target.is_empty()
            || self.type_changes.iter().any(|t| !t.compatible)
    }
}

/// The compare plan of a pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparePlan {
    /// Key columns, in key order.
    pub key: Vec<PlanColumn>,
    /// Hashed value columns, sorted by name (column order never matters).
    pub values: Vec<PlanColumn>,
    /// Columns compared numerically with a tolerance (not hashed).
    pub tolerant: Vec<PlanColumn>,
    /// The schema differences.
    pub schema: SchemaDiff,
}

fn base_type(t: &DataType) -> &DataType {
    match t {
        DataType::Dictionary(_, v) => base_type(v),
        t => t,
    }
}

/// Whether values of the two types compare natively: the same family, or one side
/// of Arrow's Null type (a column every row of which is NULL, as pandas writes an
/// all-`None` column), whose NULLs compare with any type.
fn same_family(s: &DataType, t: &DataType) -> bool {
    let (fs, ft) = (family(s), family(t));
    fs == ft || fs == "null" || ft == "null"
}

fn mode_for(s: &DataType, t: &DataType) -> CompareMode {
    if same_family(s, t) {
        CompareMode::Native
    } else if is_numeric(s) && is_numeric(t) {
        CompareMode::AsFloat
    } else {
        CompareMode::AsString
    }
}

/// Field metadata marking a column whose values are partition values: text from
/// the `k=v` folders.
const PARTITION_VALUES: &str = "glue-recon:partition-values";

/// Whether a field's values are partition values ([`with_partition_columns`]).
fn is_partition_values(f: &Field) -> bool {
    f.metadata().contains_key(PARTITION_VALUES)
}

/// Add partition columns (as text) that the file schema does not have.
pub(crate) fn with_partition_columns(schema: &Schema, partition_columns: &[String]) -> Schema {
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for p in partition_columns {
        if !fields.iter().any(|f| f.name().eq_ignore_ascii_case(p)) {
            let marked = HashMap::from([(PARTITION_VALUES.to_string(), "true".to_string())]);
            fields.push(Field::new(p, DataType::Utf8, true).with_metadata(marked));
        }
    }
    Schema::new(fields)
}

impl ComparePlan {
    /// Build the plan of `pair` from the two schemas (partition columns included).
    pub fn build(pair: &PairConfig, source: &Schema, target: &Schema) -> Result<ComparePlan> {
        let mismatch = |reason: String| ReconError::SchemaMismatch {
            table: format!("pair `{}`", pair.name),
            reason,
        };
        let lower = |s: &str| s.to_lowercase();
        let excluded = |name: &str| pair.exclude.iter().any(|e| e.eq_ignore_ascii_case(name));
        // Source columns under their target names.
        let renamed: BTreeMap<String, (String, &Field)> = source
            .fields()
            .iter()
            .map(|f| {
                let target_name = pair
                    .rename
                    .iter()
                    .find(|(from, _)| from.eq_ignore_ascii_case(f.name()))
                    .map(|(_, to)| to.clone())
                    .unwrap_or_else(|| f.name().clone());
                (lower(&target_name), (f.name().clone(), f.as_ref()))
            })
            .filter(|(k, _)| !excluded(k))
            .collect();
        let targets: BTreeMap<String, &Field> = target
            .fields()
            .iter()
            .map(|f| (lower(f.name()), f.as_ref()))
            .filter(|(k, _)| !excluded(k))
            .collect();

        for from in pair.rename.keys() {
            if !source
                .fields()
                .iter()
                .any(|f| f.name().eq_ignore_ascii_case(from))
            {
                return Err(mismatch(format!(
                    "rename names source column `{from}`, which the source does not have"
                )));
            }
        }
        for (from, to) in &pair.rename {
            let taken = source.fields().iter().find(|f| {
                f.name().eq_ignore_ascii_case(to)
                    && !f.name().eq_ignore_ascii_case(from)
                    && !excluded(f.name())
                    && !pair.rename.keys().any(|r| r.eq_ignore_ascii_case(f.name()))
            });
            if let Some(f) = taken {
                return Err(ReconError::InvalidConfig {
                    file: format!("pair `{}`", pair.name),
                    message: format!(
                        "rename `{from}` -> `{to}`: the source already has a column `{}`, which would then never be compared; rename or exclude that column too",
                        f.name()
                    ),
                });
            }
        }
        let in_either = |name: &str| {
            source
                .fields()
                .iter()
                .chain(target.fields().iter())
                .any(|f| f.name().eq_ignore_ascii_case(name))
        };
        if let Some(name) = pair.exclude.iter().find(|e| !in_either(e)) {
            return Err(ReconError::InvalidConfig {
                file: format!("pair `{}`", pair.name),
                message: format!(
                    "exclude names column `{name}`, which neither table has (a typo?); columns are: {}",
                    targets.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        for name in pair.columns.keys().chain(pair.masked.iter()) {
            if !targets.contains_key(&lower(name)) && !renamed.contains_key(&lower(name)) {
                return Err(ReconError::InvalidConfig {
                    file: format!("pair `{}`", pair.name),
                    message: format!(
                        "column `{name}` (in `columns` or `masked`) is in neither table; columns are: {}",
                        targets.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                });
            }
        }

        let column = |name: &str, sf: &(String, &Field), tf: &Field| {
            let opts = pair.column_options(name);
            PlanColumn {
                name: tf.name().clone(),
                source_name: sf.0.clone(),
                mode: mode_for(sf.1.data_type(), tf.data_type()),
                rules: StringRulesDef {
                    trim: opts.trim,
                    ignore_case: opts.ignore_case,
                    empty_as_null: opts.empty_as_null,
                },
                masked: pair.is_masked(name),
                abs_tolerance: opts.abs_tolerance,
                rel_tolerance: opts.rel_tolerance,
            }
        };

        let mut key = Vec::new();
        for k in &pair.key {
            let lk = lower(k);
            let sf = renamed.get(&lk).ok_or_else(|| {
                mismatch(format!(
                    "key column `{k}` is missing in the source ({}); columns: {}",
                    pair.source,
                    renamed.keys().cloned().collect::<Vec<_>>().join(", ")
                ))
            })?;
            let tf = targets.get(&lk).ok_or_else(|| {
                mismatch(format!(
                    "key column `{k}` is missing in the target ({}); columns: {}",
                    pair.target,
                    targets.keys().cloned().collect::<Vec<_>>().join(", ")
                ))
            })?;
            let (st, tt) = (base_type(sf.1.data_type()), base_type(tf.data_type()));
            // Partition values are text whatever the column's type on the other side
            // (a `dt=2024-01-01` folder against a date column): both are then compared
            // as text.
            let from_folders = is_partition_values(sf.1) || is_partition_values(tf);
            if family(st) != family(tt) && !from_folders {
                return Err(mismatch(format!(
                    "key column `{k}` has incompatible types: {st} in the source, {tt} in the target; cast one side or choose another key"
                )));
            }
            key.push(column(k, sf, tf));
        }

        let mut schema = SchemaDiff::default();
        let (mut values, mut tolerant) = (Vec::new(), Vec::new());
        for (name, sf) in &renamed {
            let Some(tf) = targets.get(name) else {
                schema.only_in_source.push(sf.0.clone());
                continue;
            };
            let (st, tt) = (sf.1.data_type(), tf.data_type());
            if base_type(st) != base_type(tt) {
                schema.type_changes.push(TypeChange {
                    column: tf.name().clone(),
                    source: st.to_string(),
                    target: tt.to_string(),
                    compatible: same_family(st, tt),
                });
            }
            if pair.key.iter().any(|k| lower(k) == *name) {
                continue;
            }
            let c = column(name, sf, tf);
            if let Some(rule) = c.rules.first_set()
                && c.mode != CompareMode::AsString
                && ![st, tt].iter().any(|t| family(t) == "string")
            {
                return Err(ReconError::InvalidConfig {
                    file: format!("pair `{}`", pair.name),
                    message: format!(
                        "columns.{name}.{rule} applies to text, but the column is {st} / {tt}; remove the option"
                    ),
                });
            }
            if c.abs_tolerance.is_some() || c.rel_tolerance.is_some() {
                if !(is_numeric(st) && is_numeric(tt)) {
                    return Err(ReconError::InvalidConfig {
                        file: format!("pair `{}`", pair.name),
                        message: format!(
                            "columns.{name}: a tolerance needs numbers, but the column is {st} / {tt}"
                        ),
                    });
                }
                tolerant.push(c);
            } else {
                values.push(c);
            }
        }
        schema.only_in_target = targets
            .iter()
            .filter(|(k, _)| !renamed.contains_key(*k))
            .map(|(_, f)| f.name().clone())
            .collect();
        schema.compared_columns = key
            .iter()
            .chain(values.iter())
            .chain(tolerant.iter())
            .map(|c| c.name.clone())
            .collect();
        if pair.require_same_schema && schema.drifted() {
            return Err(mismatch(format!(
                "schemas differ and require_same_schema is set: {}",
                schema.describe()
            )));
        }
        Ok(ComparePlan {
            key,
            values,
            tolerant,
            schema,
        })
    }

    /// Every column the plan reads, key first.
    pub(crate) fn all_columns(&self) -> impl Iterator<Item = &PlanColumn> {
        self.key
            .iter()
            .chain(self.values.iter())
            .chain(self.tolerant.iter())
    }

    /// Whether a column's values are masked in findings.
    pub fn masks_columns(&self) -> bool {
        self.all_columns().any(|c| c.masked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn pair(extra: &str) -> PairConfig {
        let text = format!("[[pair]]\nname='p'\nsource='s'\ntarget='t'\nkey=['id']\n{extra}");
        Config::parse(&text, "t").unwrap().pairs.remove(0)
    }

    fn schema(fields: &[(&str, DataType)]) -> Schema {
        Schema::new(
            fields
                .iter()
                .map(|(n, t)| Field::new(*n, t.clone(), true))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn rename_exclude_and_drift() {
        let p = pair("exclude=['load_ts']\nrename={cust='customer'}\n");
        let s = schema(&[
            ("ID", DataType::Int32),
            ("cust", DataType::Utf8),
            ("old", DataType::Int8),
            ("load_ts", DataType::Int64),
        ]);
        let t = schema(&[
            ("id", DataType::Int64),
            ("customer", DataType::LargeUtf8),
            ("new", DataType::Int8),
        ]);
        let plan = ComparePlan::build(&p, &s, &t).unwrap();
        assert_eq!(plan.key[0].source_name, "ID");
        assert_eq!(plan.values.len(), 1);
        assert_eq!(plan.values[0].source_name, "cust");
        assert_eq!(plan.schema.only_in_source, vec!["old"]);
        assert_eq!(plan.schema.only_in_target, vec!["new"]);
        assert!(plan.schema.drifted());
        assert!(plan.schema.type_changes.iter().all(|t| t.compatible));
        assert_eq!(
            plan.schema.describe(),
            "only in source: old; only in target: new"
        );
    }

    #[test]
    fn missing_and_incompatible_keys_are_errors() {
        let p = pair("");
        let s = schema(&[("id", DataType::Utf8)]);
        let t = schema(&[("id", DataType::Int64)]);
        let e = ComparePlan::build(&p, &s, &t).unwrap_err().to_string();
        assert!(e.contains("incompatible") && e.contains("id"), "{e}");
        let e = ComparePlan::build(&p, &schema(&[("x", DataType::Utf8)]), &t)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing in the source"), "{e}");
    }

    #[test]
    fn numeric_family_change_compares_as_float() {
        let p = pair("");
        let s = schema(&[
            ("id", DataType::Int32),
            ("amount", DataType::Decimal128(12, 2)),
        ]);
        let t = schema(&[("id", DataType::Int32), ("amount", DataType::Float64)]);
        let plan = ComparePlan::build(&p, &s, &t).unwrap();
        assert_eq!(plan.values[0].mode, CompareMode::AsFloat);
        assert!(plan.schema.drifted());
        assert_eq!(
            plan.schema.describe(),
            "type changed: amount Decimal128(12, 2) -> Float64"
        );
    }
}
