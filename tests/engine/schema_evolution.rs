//! Tables whose files do not all have the same columns: a side's schema is the
//! union of its files' columns, and a file without a column reads it as NULL.

use arrow::array::*;

use super::fixtures::*;

/// `id, a` rows, and `b` when given (one value per id).
fn rows(ids: &[i64], b: Option<Vec<Option<i64>>>) -> RecordBatch {
    let mut cols = vec![
        ("id", arr(Int64Array::from(ids.to_vec()))),
        (
            "a",
            arr(StringArray::from_iter_values(
                ids.iter().map(|i| format!("a{i}")),
            )),
        ),
    ];
    if let Some(b) = b {
        cols.push(("b", arr(Int64Array::from(b))));
    }
    batch(cols)
}

#[test]
fn a_column_added_in_later_files_is_compared_and_older_files_read_it_as_null() {
    let lab = Lab::new();
    // The source gained `b` in its second partition; the target has it everywhere.
    lab.write("source/dt=1/p.parquet", &rows(&[1, 2], None));
    lab.write(
        "source/dt=2/p.parquet",
        &rows(&[3, 4], Some(vec![Some(30), None])),
    );
    lab.write(
        "target/dt=1/p.parquet",
        &rows(&[1, 2], Some(vec![None, Some(20)])),
    );
    lab.write(
        "target/dt=2/p.parquet",
        &rows(&[3, 4], Some(vec![Some(31), None])),
    );
    let run = lab.run(&["id"], "");
    let schema = &run.report.schema;
    assert!(
        schema.only_in_source.is_empty() && schema.only_in_target.is_empty(),
        "{schema:?}"
    );
    assert!(
        schema.compared_columns.iter().any(|c| c == "b"),
        "{schema:?}"
    );
    assert_eq!(
        diffs(&run),
        vec![
            diff("2", "b", None, Some("20")),
            diff("3", "b", Some("30"), Some("31")),
        ]
    );
    assert_eq!(run.report.totals.matched, 2, "ids 1 and 4 are equal");
}

#[test]
fn files_of_one_partition_may_differ_in_columns() {
    let lab = Lab::new();
    // The first file (in name order) lacks `b`; `b` is still compared.
    lab.write("source/part-0.parquet", &rows(&[1], None));
    lab.write("source/part-1.parquet", &rows(&[2], Some(vec![Some(7)])));
    lab.write(
        "target/part-0.parquet",
        &rows(&[1, 2], Some(vec![None, Some(8)])),
    );
    let run = lab.run(&["id"], "");
    assert_eq!(diffs(&run), vec![diff("2", "b", Some("7"), Some("8"))]);
    assert_eq!(run.report.totals.matched, 1, "id 1: NULL in both");
    assert!(!run.report.schema.drifted(), "{:?}", run.report.schema);
}

#[test]
fn a_column_stored_as_another_kind_of_value_in_one_file_cannot_run() {
    let lab = Lab::new();
    lab.write("source/part-0.parquet", &rows(&[1], Some(vec![Some(1)])));
    lab.write(
        "source/part-1.parquet",
        &batch(vec![
            ("id", arr(Int64Array::from(vec![2]))),
            ("b", arr(StringArray::from(vec!["x"]))),
        ]),
    );
    lab.write("target/part-0.parquet", &rows(&[1], Some(vec![Some(1)])));
    assert_cannot_run(
        &lab,
        &["id"],
        "",
        &[
            "`b`",
            "part-0.parquet",
            "part-1.parquet",
            "Int64",
            "Utf8",
            "exclude",
        ],
    );
}

#[test]
fn columns_whose_names_differ_only_in_case_in_one_file_cannot_run() {
    let lab = Lab::new();
    lab.write(
        "source/part-0.parquet",
        &batch(vec![
            ("id", arr(Int64Array::from(vec![1]))),
            ("ID", arr(Int64Array::from(vec![2]))),
        ]),
    );
    lab.write("target/part-0.parquet", &rows(&[1], None));
    assert_cannot_run(&lab, &["id"], "", &["part-0.parquet", "`id`", "`ID`"]);
}
