#!/usr/bin/env bash
# `make demo`: five days of three pairs (orders, customers, payments) on sample data,
# recorded with `run --as-of` at 06:00 UTC on each of the last five days, so the
# dashboard's heat map, trend and drift have a history to show:
#
#   days 1-3   every pair clean
#   day 4      payments loses and changes a few rows (FAIL); resolved afterwards
#   day 5      orders has every kind of problem planted (FAIL); the others clean
#
# The last day's run prints its full summary; the others print one line each.
# Everything is written under demo-data/ (reports in demo-data/reports/).
#
# Environment: BIN (default target/release/glue-recon), DEMO_OUT (default demo-data).
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/glue-recon}
OUT=${DEMO_OUT:-demo-data}
[[ -x $BIN ]] || { echo "demo: $BIN is not built; run \`make demo\` (it builds it)" >&2; exit 2; }

# The day N days ago, at 06:00 UTC (GNU date, else BSD date).
day() {
    date -u -d "-$1 days" +%Y-%m-%dT06:00:00Z 2>/dev/null || date -u -v-"$1"d +%Y-%m-%dT06:00:00Z
}

# sample PAIR ROWS SEED [sample-data flags]: that pair's tables for one day.
sample() {
    local pair=$1 rows=$2 seed=$3
    shift 3
    "$BIN" sample-data --out "$OUT/$pair" --rows "$rows" --seed "$seed" "$@" >/dev/null
}

# run DAY [run flags]: reconcile every pair as of DAY; exit 0 and 1 are verdicts.
run() {
    local at=$1 rc=0
    shift
    "$BIN" run --config "$OUT/recon.toml" --out "$OUT/reports" --as-of "$at" "$@" || rc=$?
    if ((rc > 1)); then
        echo "demo: glue-recon could not run the day of $at (exit $rc)" >&2
        exit "$rc"
    fi
    return "$rc"
}

rm -rf "$OUT/reports"
mkdir -p "$OUT"
cat >"$OUT/recon.toml" <<'EOF'
# The demo's three pairs (scripts/demo.sh). Paths are relative to this file.
[defaults]
sample_limit = 20
drift_baseline_runs = 3

[[pair]]
name = "orders"
source = "orders/source"
target = "orders/target"
key = ["id"]
masked = ["email"]
glue_jobs = ["orders-etl"]
[pair.columns.price]
abs_tolerance = 0.005
[pair.thresholds.warn]
mismatch = 0
[pair.thresholds.fail]
missing_in_target = 0
extra_in_target = 0
mismatch = "1%"
duplicate_key = 0
null_key = 0

[[pair]]
name = "customers"
source = "customers/source"
target = "customers/target"
key = ["id"]
masked = ["email"]

[[pair]]
name = "payments"
source = "payments/source"
target = "payments/target"
key = ["id"]
masked = ["email"]
[pair.thresholds.fail]
missing_in_target = 0
mismatch = "0.5%"
EOF

for ago in 5 4 3 2 1; do
    at=$(day "$ago")
    seed=$((100 + ago))
    sample orders 200000 "$seed" --clean
    sample customers 60000 "$seed" --clean
    sample payments 100000 "$seed" --clean
    case $ago in
        2) sample payments 100000 "$seed" --changes 0.0004 --no-edge-cases ;;
        1) sample orders 200000 42 ;;
    esac
    if ((ago > 1)); then
        rc=0
        run "$at" --quiet || rc=$?
        echo "demo: recorded the run of $at (exit $rc)"
        if ((ago == 2)); then
            "$BIN" resolve --out "$OUT/reports" --pair payments --by demo \
                --note "payments reloaded from the source" >/dev/null
            echo "demo: resolved that run's payments findings"
        fi
    else
        rc=0
        run "$at" || rc=$?
        echo "demo: exit code $rc ($( ((rc == 0)) && echo PASS/WARN || echo 'FAIL, as planted'))"
        # Run ids start with their UTC time, so the last in glob order is the newest.
        reports=("$OUT"/reports/orders/*/report.html)
        echo "demo: orders' report: ${reports[-1]}"
        echo "demo: dashboard: file://$PWD/$OUT/reports/dashboard/index.html"
    fi
done
