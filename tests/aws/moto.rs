//! Shared set-up against moto: SDK config, unique names, buckets, uploads, Glue
//! tables and partitions, and sample data.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use aws_config::{BehaviorVersion, SdkConfig};
use aws_sdk_glue::types::{Column, DatabaseInput, PartitionInput, StorageDescriptor, TableInput};
use aws_sdk_s3::config::Credentials;
use aws_sdk_s3::primitives::ByteStream;
use glue_recon::sample::{Planted, SampleSpec, generate};

/// The environment variable naming moto's endpoint.
pub const MOTO_ENV: &str = "GLUE_RECON_MOTO_ENDPOINT";

/// moto's endpoint; panics with instructions when the variable is missing.
pub fn endpoint() -> String {
    match std::env::var(MOTO_ENV) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!(
            "{MOTO_ENV} is not set: these tests need a moto server. Run them with \
             `scripts/test.sh` (it starts one), or `scripts/moto.sh start` and \
             `eval \"$(scripts/moto.sh env)\"` first."
        ),
    }
}

/// Environment for a child process (the CLI) talking to moto.
pub fn child_env() -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL", endpoint()),
        ("AWS_ACCESS_KEY_ID", "testing".into()),
        ("AWS_SECRET_ACCESS_KEY", "testing".into()),
        ("AWS_SESSION_TOKEN", "testing".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_EC2_METADATA_DISABLED", "true".into()),
    ]
}

/// SDK config pointing at moto with dummy credentials.
pub async fn sdk_config() -> SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(endpoint())
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(Credentials::new("testing", "testing", None, None, "moto"))
        .load()
        .await
}

/// An S3 client with path-style addressing, as moto wants.
pub fn s3(conf: &SdkConfig) -> aws_sdk_s3::Client {
    aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(conf)
            .force_path_style(true)
            .build(),
    )
}

/// The value of the masking-key secrets the tests create.
pub const MASK_SECRET: &str = "moto deployment masking key, generated like the template's secret";

/// A new Secrets Manager secret holding [`MASK_SECRET`]; its ARN.
pub async fn mask_secret(conf: &SdkConfig) -> String {
    aws_sdk_secretsmanager::Client::new(conf)
        .create_secret()
        .name(unique("mask-key"))
        .secret_string(MASK_SECRET)
        .send()
        .await
        .expect("create the masking-key secret on moto")
        .arn()
        .expect("a secret ARN")
        .to_string()
}

/// A name unique within this test process and across runs against one moto.
pub fn unique(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}-{}-{}-{nanos:x}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Create a bucket.
pub async fn bucket(s3: &aws_sdk_s3::Client, name: &str) {
    s3.create_bucket()
        .bucket(name)
        .send()
        .await
        .unwrap_or_else(|e| panic!("create bucket {name}: {e:?}"));
}

/// Put one object.
pub async fn put(s3: &aws_sdk_s3::Client, bucket: &str, key: &str, body: Vec<u8>) {
    s3.put_object()
        .bucket(bucket)
        .key(key)
        .body(ByteStream::from(body))
        .send()
        .await
        .unwrap_or_else(|e| panic!("put s3://{bucket}/{key}: {e:?}"));
}

/// Read one object.
pub async fn get(s3: &aws_sdk_s3::Client, bucket: &str, key: &str) -> Vec<u8> {
    let out = s3
        .get_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .unwrap_or_else(|e| panic!("get s3://{bucket}/{key}: {e:?}"));
    out.body.collect().await.unwrap().into_bytes().to_vec()
}

/// Keys below a prefix.
pub async fn keys(s3: &aws_sdk_s3::Client, bucket: &str, prefix: &str) -> Vec<String> {
    let out = s3
        .list_objects_v2()
        .bucket(bucket)
        .prefix(prefix)
        .send()
        .await
        .unwrap_or_else(|e| panic!("list s3://{bucket}/{prefix}: {e:?}"));
    out.contents()
        .iter()
        .filter_map(|o| o.key().map(str::to_string))
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Upload every file below `dir` to `s3://bucket/prefix/<relative path>`.
pub async fn upload_dir(s3: &aws_sdk_s3::Client, dir: &Path, bucket: &str, prefix: &str) {
    let mut files = Vec::new();
    walk(dir, &mut files);
    for f in files {
        let rel = f.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
        let key = format!("{}/{rel}", prefix.trim_end_matches('/'));
        put(s3, bucket, &key, std::fs::read(&f).unwrap()).await;
    }
}

/// Sample tables with planted differences of every kind in `dir`.
pub fn sample(dir: &Path) -> Planted {
    generate(&SampleSpec {
        out: dir.to_path_buf(),
        rows: 3000,
        partitions: 3,
        seed: 11,
        changes: 0.01,
        edge_cases: true,
    })
    .expect("sample data")
}

/// The `dt=...` partition folders of a local table, sorted.
pub fn partition_dirs(table: &Path) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(table)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.starts_with("dt=").then_some(name)
        })
        .collect();
    dirs.sort();
    dirs
}

/// Create a Glue database.
pub async fn database(glue: &aws_sdk_glue::Client, name: &str) {
    glue.create_database()
        .database_input(DatabaseInput::builder().name(name).build().unwrap())
        .send()
        .await
        .unwrap_or_else(|e| panic!("create database {name}: {e:?}"));
}

/// Create a Glue table; `location` None leaves the storage location unset.
pub async fn table(
    glue: &aws_sdk_glue::Client,
    db: &str,
    name: &str,
    location: Option<&str>,
    partition_keys: &[&str],
) {
    table_with_parameters(glue, db, name, location, partition_keys, &[]).await
}

/// [`table`] with these table parameters (`projection.enabled`, ...).
pub async fn table_with_parameters(
    glue: &aws_sdk_glue::Client,
    db: &str,
    name: &str,
    location: Option<&str>,
    partition_keys: &[&str],
    parameters: &[(&str, &str)],
) {
    let mut sd = StorageDescriptor::builder().columns(
        Column::builder()
            .name("id")
            .r#type("bigint")
            .build()
            .unwrap(),
    );
    if let Some(l) = location {
        sd = sd.location(l);
    }
    let mut input = TableInput::builder()
        .name(name)
        .table_type("EXTERNAL_TABLE")
        .storage_descriptor(sd.build());
    for k in partition_keys {
        input = input.partition_keys(Column::builder().name(*k).r#type("string").build().unwrap());
    }
    for (k, v) in parameters {
        input = input.parameters(*k, *v);
    }
    glue.create_table()
        .database_name(db)
        .table_input(input.build().unwrap())
        .send()
        .await
        .unwrap_or_else(|e| panic!("create table {db}.{name}: {e:?}"));
}

/// Register a partition with its own location.
pub async fn partition(
    glue: &aws_sdk_glue::Client,
    db: &str,
    table: &str,
    values: &[&str],
    location: &str,
) {
    let mut input = PartitionInput::builder()
        .storage_descriptor(StorageDescriptor::builder().location(location).build());
    for v in values {
        input = input.values(*v);
    }
    glue.create_partition()
        .database_name(db)
        .table_name(table)
        .partition_input(input.build())
        .send()
        .await
        .unwrap_or_else(|e| panic!("create partition {values:?} of {db}.{table}: {e:?}"));
}

/// The sample's tables on moto: the source under `s3://bucket/source/` (read by
/// prefix, named `s3a://` in the config as Spark's S3A names it) and the target as Glue table `db.target` at `s3://bucket/warehouse/target/`,
/// its first partition registered at a location outside the table's, written the
/// way Spark's S3A file system writes it (`s3a://`). Returns the config text with the
/// two locations swapped in.
pub async fn sample_on_aws(conf: &SdkConfig, dir: &Path, bucket_name: &str, db: &str) -> String {
    let s3 = s3(conf);
    let glue = aws_sdk_glue::Client::new(conf);
    bucket(&s3, bucket_name).await;
    upload_dir(&s3, &dir.join("source"), bucket_name, "source").await;
    database(&glue, db).await;
    let table_loc = format!("s3://{bucket_name}/warehouse/target/");
    table(&glue, db, "target", Some(&table_loc), &["dt"]).await;
    for (i, dt) in partition_dirs(&dir.join("target")).iter().enumerate() {
        let prefix = if i == 0 {
            format!("elsewhere/{dt}")
        } else {
            format!("warehouse/target/{dt}")
        };
        upload_dir(&s3, &dir.join("target").join(dt), bucket_name, &prefix).await;
        let value = dt.trim_start_matches("dt=");
        let scheme = if i == 0 { "s3a" } else { "s3" };
        partition(
            &glue,
            db,
            "target",
            &[value],
            &format!("{scheme}://{bucket_name}/{prefix}/"),
        )
        .await;
    }
    let config = std::fs::read_to_string(dir.join("recon.toml")).unwrap();
    config
        .replace(
            "source = \"source\"",
            &format!("source = \"s3a://{bucket_name}/source/\""),
        )
        .replace(
            "target = \"target\"",
            &format!("target = \"glue://{db}/target\""),
        )
}

/// Create a Glue job (moto runs nothing; its runs succeed at once).
pub async fn glue_job(glue: &aws_sdk_glue::Client, name: &str) {
    glue.create_job()
        .name(name)
        .role("arn:aws:iam::123456789012:role/glue-job")
        .command(
            aws_sdk_glue::types::JobCommand::builder()
                .name("glueetl")
                .script_location("s3://scripts/job.py")
                .build(),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("create Glue job {name}: {e:?}"));
}

/// Start a run of a Glue job with `arguments`; its run id.
pub async fn start_job_run(
    glue: &aws_sdk_glue::Client,
    job: &str,
    arguments: &[(&str, &str)],
) -> String {
    let mut call = glue.start_job_run().job_name(job);
    for (k, v) in arguments {
        call = call.arguments(*k, *v);
    }
    call.send()
        .await
        .unwrap_or_else(|e| panic!("start a run of Glue job {job}: {e:?}"))
        .job_run_id()
        .expect("a run id")
        .to_string()
}
