//! recon-merge: the lookup output -> every partial of the run -> report.json,
//! report.html and diffs.parquet under `reports/<pair>/<run_id>/` -> the verdict,
//! the report URIs and the alert (`MergeOutput`) for the state machine to publish,
//! and the run's CloudWatch metrics as Embedded Metric Format lines on stdout.

use recon_functions::FunctionError;
use recon_pipeline::{MergeOutput, Pipeline, parse_lookup_output};

async fn handle(
    pipeline: &Pipeline,
    event: serde_json::Value,
) -> Result<MergeOutput, FunctionError> {
    let input = parse_lookup_output(event)?;
    let output = pipeline.merge(&input).await?;
    // Embedded Metric Format: CloudWatch Logs makes metrics of these lines.
    for line in &output.metrics {
        println!("{line}");
    }
    Ok(output)
}

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    recon_functions::run_with_pipeline(
        env!("CARGO_BIN_NAME"),
        recon_functions::Masking::NoKey,
        handle,
    )
    .await
}
