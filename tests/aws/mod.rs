//! Tests of the S3, Glue and SNS adapters, the CLI on AWS and the Lambda pipeline
//! steps, against a real moto server (`GLUE_RECON_MOTO_ENDPOINT`, started by
//! scripts/test.sh). Without the variable these tests fail; they never skip.

mod bad_input;
mod catalog_status;
mod cli;
mod events;
mod hints;
mod lookup_scale;
mod masking;
mod moto;
mod pipeline;
mod projection;
mod range_reads;
mod scale;
mod sweep;
