#!/usr/bin/env bash
# The CLI built without the aws feature (make demo's build), given as $1: a local diff
# reconciles sample tables as the full build does, and a diff of an s3:// table stops
# with exit 2 and an error saying how to get the full build.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" sample-data --out "$tmp/data" >/dev/null
rc=0
"$bin" run --config "$tmp/data/recon.toml" --out "$tmp/out" >"$tmp/run.txt" 2>&1 || rc=$?
if ((rc > 1)); then
    cat "$tmp/run.txt"
    echo "lean-check: the local run could not run (exit $rc)" >&2
    exit 1
fi
grep -q '^run: ' "$tmp/run.txt" || { cat "$tmp/run.txt"; echo "lean-check: no run summary" >&2; exit 1; }

rc=0
"$bin" diff s3://some-bucket/orders "$tmp/data/target" --key id >"$tmp/s3.txt" 2>&1 || rc=$?
if ((rc != 2)) || ! grep -q 'built without AWS support' "$tmp/s3.txt"; then
    cat "$tmp/s3.txt"
    echo "lean-check: an s3:// table should stop with exit 2 naming the missing AWS support (exit $rc)" >&2
    exit 1
fi
echo "lean-check: ok: a local run reconciles, an s3:// table is refused with exit 2"
