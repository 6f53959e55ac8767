//! Glue tables with partition projection on moto. Such a table registers no
//! partitions; its files are found by listing the prefixes the `projection.*` rules and
//! the `storage.location.template` allow. A projected table reconciles with the same
//! counts as the same files registered as partitions, a registered partition with no
//! files is an empty partition, and a partition filter limits the prefixes listed.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use arrow::array::{Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use futures::future::BoxFuture;
use glue_recon::aws::glue::GlueCatalog;
use glue_recon::aws::s3::S3Store;
use glue_recon::catalog::Catalog;
use glue_recon::config::Config;
use glue_recon::error::Result;
use glue_recon::mask::MaskKey;
use glue_recon::runner::{RunOptions, run_pair};
use glue_recon::storage::{FileRef, ObjectStore, Storage};
use parquet::arrow::ArrowWriter;
use parquet::arrow::async_reader::AsyncFileReader;

use super::moto;

/// S3 that records the prefixes it is asked to list.
struct Listed {
    s3: S3Store,
    prefixes: Mutex<Vec<String>>,
}

impl Listed {
    fn new(conf: &aws_config::SdkConfig) -> Arc<Listed> {
        Arc::new(Listed {
            s3: S3Store::from_conf(conf),
            prefixes: Mutex::new(Vec::new()),
        })
    }

    /// The prefixes listed since the last call.
    fn take(&self) -> Vec<String> {
        let mut got = std::mem::take(&mut *self.prefixes.lock().unwrap());
        got.sort();
        got
    }
}

impl ObjectStore for Listed {
    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<FileRef>>> {
        self.prefixes.lock().unwrap().push(prefix.to_string());
        self.s3.list(prefix)
    }
    fn open<'a>(&'a self, file: &'a FileRef) -> BoxFuture<'a, Result<Box<dyn AsyncFileReader>>> {
        self.s3.open(file)
    }
    fn put<'a>(&'a self, uri: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>> {
        self.s3.put(uri, data)
    }
    fn get<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Bytes>> {
        self.s3.get(uri)
    }
    fn delete<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<()>> {
        self.s3.delete(uri)
    }
}

/// A Glue table at `location`, partitioned by `keys`, with these table parameters.
async fn table(
    glue: &aws_sdk_glue::Client,
    db: &str,
    name: &str,
    location: &str,
    keys: &[&str],
    parameters: &[(&str, &str)],
) {
    moto::table_with_parameters(glue, db, name, Some(location), keys, parameters).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_projected_table_reconciles_like_its_partitions_registered() {
    let conf = moto::sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    moto::sample(dir.path());
    let bucket = moto::unique("gr-proj");
    let db = moto::unique("gr_proj").replace('-', "_");
    let s3 = moto::s3(&conf);
    let glue = aws_sdk_glue::Client::new(&conf);
    moto::bucket(&s3, &bucket).await;
    moto::database(&glue, &db).await;
    moto::upload_dir(&s3, &dir.path().join("source"), &bucket, "source").await;

    // The target's partitions at `tgt/<dt>/data/`; the last one registered but
    // without files (deleted locally too, so the local run sees the same table).
    let dts: Vec<String> = moto::partition_dirs(&dir.path().join("target"))
        .iter()
        .map(|d| d.trim_start_matches("dt=").to_string())
        .collect();
    assert!(dts.len() >= 2, "{dts:?}");
    let location = format!("s3://{bucket}/tgt/");
    table(&glue, &db, "registered", &location, &["dt"], &[]).await;
    let (empty, filled) = dts.split_last().unwrap();
    for dt in filled {
        let local = dir.path().join("target").join(format!("dt={dt}"));
        moto::upload_dir(&s3, &local, &bucket, &format!("tgt/{dt}/data")).await;
    }
    std::fs::remove_dir_all(dir.path().join("target").join(format!("dt={empty}"))).unwrap();
    for dt in &dts {
        moto::partition(
            &glue,
            &db,
            "registered",
            &[dt],
            &format!("s3://{bucket}/tgt/{dt}/data/"),
        )
        .await;
    }
    let range = format!("{},NOW", dts[0]);
    let template = format!("s3a://{bucket}/tgt/${{dt}}/data");
    table(
        &glue,
        &db,
        "projected",
        &location,
        &["dt"],
        &[
            ("projection.enabled", "true"),
            ("projection.dt.type", "date"),
            ("projection.dt.format", "yyyy-MM-dd"),
            ("projection.dt.range", &range),
            ("storage.location.template", &template),
        ],
    )
    .await;

    let local_config = Config::from_file(&dir.path().join("recon.toml")).unwrap();
    let key = MaskKey::new(moto::MASK_SECRET.as_bytes(), "test").unwrap();
    let local_opts = RunOptions {
        mask_key: Some(key.clone()),
        ..RunOptions::local()
    };
    let local = run_pair(&local_config.pairs[0], &local_config.defaults, &local_opts)
        .await
        .unwrap();
    assert!(local.totals.missing_in_target > 0);

    let store = Listed::new(&conf);
    let storage = Storage::with_s3(store.clone());
    let catalog: Arc<dyn Catalog> = Arc::new(GlueCatalog::new(
        aws_sdk_glue::Client::new(&conf),
        storage.clone(),
    ));
    let opts = RunOptions {
        storage,
        catalog: Some(catalog),
        mask_key: Some(key),
        ..RunOptions::local()
    };
    let text = std::fs::read_to_string(dir.path().join("recon.toml")).unwrap();
    let mut totals = Vec::new();
    for target in ["registered", "projected"] {
        let config = text
            .replace(
                "source = \"source\"",
                &format!("source = \"s3://{bucket}/source/\""),
            )
            .replace(
                "target = \"target\"",
                &format!("target = \"glue://{db}/{target}\""),
            );
        let config = Config::parse(&config, "aws.toml").unwrap();
        let report = run_pair(&config.pairs[0], &config.defaults, &opts)
            .await
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(report.complete, "{target}");
        let partitions: Vec<_> = report
            .partitions
            .iter()
            .map(|p| (p.partition.clone(), p.totals))
            .collect();
        totals.push((target, report.totals, partitions));
    }
    let local_partitions: Vec<_> = local
        .partitions
        .iter()
        .map(|p| (p.partition.clone(), p.totals))
        .collect();
    for (target, t, partitions) in &totals {
        assert_eq!(
            *t, local.totals,
            "{target} totals differ from the local run"
        );
        assert_eq!(*partitions, local_partitions, "{target} partitions differ");
    }
    // The projected table was found by listing its template's root once.
    let listed = store.take();
    assert!(
        listed.contains(&format!("s3://{bucket}/tgt/")),
        "{listed:?}"
    );
}

/// One Parquet file of rows `ids`, with a string column.
fn parquet(ids: &[i64]) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(StringArray::from(names)),
        ],
    )
    .unwrap();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    buf
}

#[tokio::test(flavor = "multi_thread")]
async fn a_filter_lists_only_the_prefixes_of_the_partitions_it_allows() {
    let conf = moto::sdk_config().await;
    let bucket = moto::unique("gr-projf");
    let db = moto::unique("gr_projf").replace('-', "_");
    let s3 = moto::s3(&conf);
    let glue = aws_sdk_glue::Client::new(&conf);
    moto::bucket(&s3, &bucket).await;
    moto::database(&glue, &db).await;
    let regions = ["eu", "us", "ap"];
    let days = ["2024-03-01", "2024-03-02", "2024-03-03", "2024-03-04"];
    table(
        &glue,
        &db,
        "registered",
        &format!("s3://{bucket}/events/"),
        &["region", "dt"],
        &[],
    )
    .await;
    let mut n = 0;
    for region in regions {
        for dt in days {
            let prefix = format!("events/{region}/{}", dt.replace('-', "/"));
            moto::put(
                &s3,
                &bucket,
                &format!("{prefix}/part-0.parquet"),
                parquet(&[n, n + 1]),
            )
            .await;
            moto::put(&s3, &bucket, &format!("{prefix}/_SUCCESS"), Vec::new()).await;
            n += 2;
            moto::partition(
                &glue,
                &db,
                "registered",
                &[region, dt],
                &format!("s3://{bucket}/{prefix}/"),
            )
            .await;
        }
    }
    // Files the projection does not see: a region outside the enum, a day outside
    // the range, a day not in the format.
    for stray in [
        "events/sa/2024/03/01",
        "events/eu/2024/02/29",
        "events/eu/2024/3/05",
    ] {
        moto::put(
            &s3,
            &bucket,
            &format!("{stray}/part-0.parquet"),
            parquet(&[999]),
        )
        .await;
    }
    let template = format!("s3://{bucket}/events/${{region}}/${{dt}}/");
    // `projected` writes `2024-03-01` where the files are under `2024/03/01`: the
    // slash format of `slashed` reads them.
    for (name, format, range) in [
        ("projected", "yyyy-MM-dd", "2024-03-01,NOW"),
        ("slashed", "yyyy/MM/dd", "2024/03/01,NOW"),
    ] {
        table(
            &glue,
            &db,
            name,
            &format!("s3://{bucket}/events/"),
            &["region", "dt"],
            &[
                ("projection.enabled", "true"),
                ("projection.region.type", "enum"),
                ("projection.region.values", "eu,us,ap"),
                ("projection.dt.type", "date"),
                ("projection.dt.format", format),
                ("projection.dt.range", range),
                ("storage.location.template", &template),
            ],
        )
        .await;
    }

    let store = Listed::new(&conf);
    let catalog = GlueCatalog::new(glue.clone(), Storage::with_s3(store.clone()));
    let partitions = |listing: &glue_recon::table::TableListing| -> BTreeSet<(String, String)> {
        listing
            .files
            .iter()
            .map(|f| {
                let v = |k: &str| {
                    f.partition
                        .iter()
                        .find(|(key, _)| key == k)
                        .and_then(|(_, v)| v.clone())
                        .unwrap()
                };
                (v("region"), v("dt").replace('/', "-"))
            })
            .collect()
    };

    // The slash-format table sees every partition's file and no stray one, from one
    // listing of the template's root. The dash-format table sees nothing: its
    // template gives no folder that exists.
    let all = catalog.resolve(&db, "slashed", None, None).await.unwrap();
    assert_eq!(
        all.files.len(),
        regions.len() * days.len(),
        "{:?}",
        all.files
    );
    assert_eq!(all.partition_columns, vec!["region", "dt"]);
    assert_eq!(store.take(), vec![format!("s3://{bucket}/events/")]);
    let registered = catalog
        .resolve(&db, "registered", None, None)
        .await
        .unwrap();
    store.take();
    assert_eq!(partitions(&all), partitions(&registered));
    let dashed = catalog.resolve(&db, "projected", None, None).await.unwrap();
    assert!(dashed.files.is_empty(), "{:?}", dashed.files);
    store.take();

    // Two regions from 3 March on: the days up to NOW are too many folders, so the
    // two regions' folders are listed.
    let open = "region IN ('eu', 'us') AND dt >= '2024/03/03'";
    let some = catalog
        .resolve(&db, "slashed", Some(open), None)
        .await
        .unwrap();
    assert_eq!(
        store.take(),
        vec![
            format!("s3://{bucket}/events/eu/"),
            format!("s3://{bucket}/events/us/")
        ]
    );
    assert_eq!(some.files.len(), 4);
    // Two regions, two days: four folders listed, four files.
    let filter = "region IN ('eu', 'us') AND dt BETWEEN '2024/03/03' AND '2024/03/04'";
    let some = catalog
        .resolve(&db, "slashed", Some(filter), None)
        .await
        .unwrap();
    let listed = store.take();
    let mut expected = Vec::new();
    for r in ["eu", "us"] {
        for d in ["03", "04"] {
            expected.push(format!("s3://{bucket}/events/{r}/2024/03/{d}/"));
        }
    }
    assert_eq!(listed, expected);
    let want: BTreeSet<(String, String)> = partitions(&all)
        .into_iter()
        .filter(|(r, d)| r != "ap" && d.as_str() >= "2024-03-03")
        .collect();
    assert_eq!(partitions(&some), want);
    assert_eq!(some.files.len(), 4);

    // Requested partitions (an on-demand run, a job run's arguments) list their own
    // folders; a label outside the projection lists nothing.
    let labels = vec![
        "region=ap/dt=2024/03/02".to_string(),
        "region=sa/dt=2024/03/01".to_string(),
    ];
    let one = catalog
        .resolve(&db, "slashed", None, Some(&labels))
        .await
        .unwrap();
    assert_eq!(
        store.take(),
        vec![format!("s3://{bucket}/events/ap/2024/03/02/")]
    );
    assert_eq!(one.files.len(), 1);

    // A filter on a column that is not a partition key is refused, naming the table.
    let err = catalog
        .resolve(&db, "slashed", Some("day = '1'"), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("glue://{db}/slashed")) && err.contains("`day`"),
        "{err}"
    );
}
