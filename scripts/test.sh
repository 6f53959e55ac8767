#!/usr/bin/env bash
# The test suite: start a local moto server, run `cargo test` against it (dev profile;
# dependencies are optimised, see Cargo.toml), and stop moto again however the tests end.
# Used by `make test` (which also runs the infra checks and lints).
#
# The Rust tests find moto through GLUE_RECON_MOTO_ENDPOINT (http://127.0.0.1:PORT).
# Dummy credentials and a region are exported so the AWS SDK never looks for real ones
# (no instance metadata lookups on a closed network). Extra arguments go to cargo test,
# e.g. scripts/test.sh moto_ -- --nocapture
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH=$PWD/.venv/bin:$PWD/node_modules/.bin:$PATH

# Own state dir, so a moto started by hand (target/moto) is left alone.
export MOTO_STATE_DIR=$PWD/target/moto-test
trap 'scripts/moto.sh stop' EXIT
GLUE_RECON_MOTO_ENDPOINT=$(scripts/moto.sh start)
export GLUE_RECON_MOTO_ENDPOINT
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_SESSION_TOKEN=testing
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
export RUST_BACKTRACE=${RUST_BACKTRACE:-1}

echo "test: GLUE_RECON_MOTO_ENDPOINT=$GLUE_RECON_MOTO_ENDPOINT"
mkdir -p target
set +e
cargo test --workspace "$@" 2>&1 | tee target/cargo-test.log
status=${PIPESTATUS[0]}
set -e
# One closing line with the totals of every test binary (CI reads it).
count() { grep -oE "test result: [A-Za-z]+\. [0-9]+ passed; [0-9]+ failed" target/cargo-test.log \
  | grep -oE "[0-9]+ $1" | awk '{s += $1} END {print s + 0}'; }
echo "tests: $(count passed) passed, $(count failed) failed" | tee target/test-summary.txt
exit "$status"
