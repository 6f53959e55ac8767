#!/usr/bin/env bash
# Checks of the infrastructure: the SAM template and the state machine definition.
#
#   cfn-lint        infra/template.yaml (the SAM transform, resource schemas)
#   sam validate    --lint (the template as `sam deploy` reads it; works offline)
#   asl-validator   statemachine/reconcile.asl.json (schema, paths, transitions)
#   checkov         infra/template.yaml; every skip is justified in the template's
#                   Metadata (test_definition.py checks that it is)
#   definition      tests/infra/test_definition.py: template <-> definition agreement,
#                   transitions, retries, the contract fields the states read
#   event pattern   tests/infra/test_event_pattern.py: the EventBridge rule against a
#                   Glue Job State Change event (moto, in process)
#   flow (stubs)    tests/infra/test_flow_stub.py: the real definition executed by a
#                   moto server, with Python stand-ins for the functions
#   documented SQL  tests/infra/test_documented_sql.py: every Athena query of the docs,
#                   via sqlglot in DuckDB, over tables declared as the template declares
#                   them and a ledger written by the CLI (needs target/debug/glue-recon)
#
# `check.sh --static` runs the first four only (`make validate`).
#
# Tools come from .venv and node_modules (scripts/setup.sh installs them); a missing tool
# is a failure, not a skip. Runs every check, then prints "N passed, M failed" and exits
# non-zero if any failed. Offline: nothing here needs AWS credentials or the network.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

export PATH=$PWD/.venv/bin:$PWD/node_modules/.bin:$PATH
export AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true
export SAM_CLI_TELEMETRY=0 PYTHONDONTWRITEBYTECODE=1
PY=$PWD/.venv/bin/python
[[ -x $PY ]] || PY=python3

TEMPLATE=infra/template.yaml
DEFINITION=statemachine/reconcile.asl.json
passed=0
failed=()

# check NAME TOOL COMMAND...: run COMMAND, which needs TOOL on PATH.
check() {
    local name=$1 tool=$2; shift 2
    local out s=$SECONDS
    printf '\n--- %s\n' "$name"
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$tool: not found (run scripts/setup.sh)"
        failed+=("$name")
        return
    fi
    if out=$("$@" 2>&1); then
        [[ -n $out ]] && printf '%s\n' "$out"
        echo "ok ($((SECONDS - s)) s)"
        passed=$((passed + 1))
    else
        printf '%s\n' "$out"
        echo "FAILED ($((SECONDS - s)) s)"
        failed+=("$name")
    fi
}

# asl-validator exits 0 when it cannot parse what it was given as --json-definition
# (that flag takes JSON text, not a file); --json-path reads the file. Demand its
# "is valid" line as well as its exit code.
asl_validate() {
    local out rc
    out=$(asl-validator --json-path "$DEFINITION" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [[ $rc == 0 && $out == *"is valid"* ]]
}

# checkov: --skip-download keeps it offline (it otherwise fetches guidelines). Print the
# summary and any failed check; exit non-zero on a failed check or a parse error.
checkov_scan() {
    local out rc
    out=$(checkov -f "$TEMPLATE" --framework cloudformation --skip-download --compact 2>&1)
    rc=$?
    printf '%s\n' "$out" | grep -E 'Passed checks' || printf '%s\n' "$out" | tail -n 40
    printf '%s\n' "$out" | grep -E -B2 -A3 'FAILED for resource' | head -n 80
    [[ $rc == 0 && $out == *"Failed checks: 0,"* ]]
}

check cfn-lint cfn-lint cfn-lint "$TEMPLATE"
check sam-validate sam sam validate --lint -t "$TEMPLATE"
check asl-validator asl-validator asl_validate
check checkov checkov checkov_scan
if [[ ${1:-} != --static ]]; then
    check definition "$PY" "$PY" -m pytest -q -p no:cacheprovider tests/infra/test_definition.py
    check event-pattern "$PY" "$PY" -m pytest -q -p no:cacheprovider tests/infra/test_event_pattern.py
    check flow-stubs "$PY" "$PY" -m pytest -q -p no:cacheprovider tests/infra/test_flow_stub.py
    check documented-sql "$PY" "$PY" -m pytest -q -p no:cacheprovider tests/infra/test_documented_sql.py
fi

echo
if ((${#failed[@]})); then
    echo "infra checks failed: ${failed[*]}"
fi
echo "${passed} passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
