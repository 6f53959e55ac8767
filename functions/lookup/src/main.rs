//! recon-lookup: the execution input (an on-demand request or a Glue Job State
//! Change event) -> the pairs' plans and the work manifest in S3 -> a pointer
//! (`LookupOutput`). The config is read from `RECON_CONFIG_URI` on every
//! invocation, so it can change without a redeploy.

use recon_functions::{FunctionError, RECON_CONFIG_URI, required_env};
use recon_pipeline::{LookupOutput, LookupRequest, Pipeline, load_config};

async fn handle(
    pipeline: &Pipeline,
    config_uri: &str,
    event: serde_json::Value,
) -> Result<LookupOutput, FunctionError> {
    let request = LookupRequest::parse(event)?;
    let config = load_config(&pipeline.storage, config_uri).await?;
    Ok(pipeline.lookup(&config, &request).await?)
}

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let config_uri: &'static str = required_env(RECON_CONFIG_URI)?.leak();
    recon_functions::run_with_pipeline(
        env!("CARGO_BIN_NAME"),
        recon_functions::Masking::NoKey,
        move |pipeline, event| handle(pipeline, config_uri, event),
    )
    .await
}
