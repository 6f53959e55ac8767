//! recon-merge: the lookup output -> every partial of the run -> report.json,
//! report.html and diffs.parquet under `reports/<pair>/<run_id>/` -> the verdict,
//! the report URIs and the alert (`MergeOutput`) for the state machine to publish.

use recon_functions::FunctionError;
use recon_pipeline::{MergeOutput, Pipeline, parse_lookup_output};

async fn handle(
    pipeline: &Pipeline,
    event: serde_json::Value,
) -> Result<MergeOutput, FunctionError> {
    let input = parse_lookup_output(event)?;
    Ok(pipeline.merge(&input).await?)
}

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    recon_functions::run_with_pipeline(env!("CARGO_BIN_NAME"), handle).await
}
