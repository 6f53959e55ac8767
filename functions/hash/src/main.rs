//! recon-hash: one manifest item -> its partition hashed and diffed -> the partial
//! diff at `runs/<run_id>/partials/<item_id>.json` -> counts and the key
//! (`HashOutput`). A partition that cannot be read still gets its partial (saying
//! why) and the invocation then fails with that error's type, so Step Functions
//! retries `Transient` and counts the rest against the tolerated failures.

use recon_functions::FunctionError;
use recon_pipeline::{HashOutput, Pipeline, parse_item};

async fn handle(
    pipeline: &Pipeline,
    event: serde_json::Value,
) -> Result<HashOutput, FunctionError> {
    let item = parse_item(event)?;
    let out = pipeline.hash(&item).await?;
    match out.error {
        Some(e) => Err(e.into()),
        None => Ok(out),
    }
}

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    recon_functions::run_with_pipeline(
        env!("CARGO_BIN_NAME"),
        recon_functions::Masking::ReadsKey,
        handle,
    )
    .await
}
