#!/usr/bin/env bash
# `make screenshots`: docs/dashboard.png and docs/report.png, taken by headless
# Chromium from what `make demo` wrote (run it first), so the pictures in the README
# show the demo's own numbers.
set -euo pipefail

cd "$(dirname "$0")/.."
OUT=${DEMO_OUT:-demo-data}/reports
BROWSER=${CHROMIUM:-chromium}
command -v "$BROWSER" >/dev/null || { echo "screenshots: no $BROWSER; scripts/setup.sh installs it" >&2; exit 2; }
dashboard=$OUT/dashboard/index.html
[[ -f $dashboard ]] || { echo "screenshots: no $dashboard; run \`make demo\` first" >&2; exit 2; }
# Run ids start with their UTC time, so the last in glob order is the newest.
reports=("$OUT"/orders/*/report.html)
report=${reports[-1]}

# shot PAGE PNG HEIGHT
shot() {
    local profile
    profile=$(mktemp -d)
    "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --disable-background-networking --user-data-dir="$profile" \
        --window-size=1280,"$3" --screenshot="$PWD/$2" "file://$PWD/$1" >/dev/null 2>&1
    rm -rf "$profile"
    [[ -s $2 ]] || { echo "screenshots: $BROWSER wrote no $2" >&2; exit 1; }
    echo "screenshots: $2 from $1"
}
shot "$dashboard" docs/dashboard.png 900
shot "$report" docs/report.png 1400
