#!/usr/bin/env bash
# Install the project's development tools. Idempotent: a second run only checks.
#
#   .venv/                  Python tools from requirements-dev.txt (moto, duckdb, pyarrow,
#                           cargo-lambda, ziglang, cfn-lint, aws-sam-cli, boto3), every
#                           version fixed by requirements-dev.lock (scripts/pip-lock.sh)
#   .venv/tools/checkov/    checkov in its own venv (its boto3 pin conflicts with sam's);
#                           .venv/bin/checkov links to it
#   node_modules/           asl-validator (npm ci from package-lock.json)
#   Debian packages         chromium (browser tests), time (/usr/bin/time -v for bench),
#                           tmux (the progress line's terminal test),
#                           qemu-user on x86-64 (the CPU check test runs the binary on an
#                           emulated older CPU), installed only when missing
#
# Environment: SETUP_SKIP_APT=1 skips the Debian packages (e.g. without root).
#              PYTHON=python3.x picks the interpreter for the venvs (default python3).
#
# Timing on the 2-core dev machine (2026-11-29, with a compile running beside it), from
# nothing, no pip cache: 139 s, nearly all of it the .venv pip install; checkov (~60 s)
# and apt-get update + chromium (~31 s) run in the background beside it, npm ci ~3 s.
# (An earlier version with apt after pip and no lock file took 197 s.) A re-run with
# everything in place takes under a second.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
LOGDIR=$ROOT/target/setup
mkdir -p "$LOGDIR"
start=$SECONDS

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }
# run LOG CMD...: run quietly into target/setup/LOG; show its tail and fail if it fails.
run() {
    local log=$LOGDIR/$1; shift
    if ! "$@" >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        die "failed: $* (full log: $log)"
    fi
}
# stamp FILE...: a hash of the given files, to know whether an install is up to date.
stamp() { cat "$@" | sha256sum | cut -d' ' -f1; }

"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || die "$PYTHON is older than 3.10"

# --- checkov venv (in the background: pip is mostly waiting on the network) ---------------
ck_venv=.venv/tools/checkov
ck_stamp=$(stamp requirements-checkov.txt requirements-checkov.lock)
ck_pid=
if [[ "$(cat "$ck_venv/.stamp" 2>/dev/null)" != "$ck_stamp" ]]; then
    say "installing checkov into $ck_venv (log: target/setup/pip-checkov.log)"
    mkdir -p .venv/tools
    (
        set -e
        rm -rf "$ck_venv"
        "$PYTHON" -m venv "$ck_venv"
        "$ck_venv/bin/pip" install -q -r requirements-checkov.txt -c requirements-checkov.lock
        echo "$ck_stamp" >"$ck_venv/.stamp"
    ) >"$LOGDIR/pip-checkov.log" 2>&1 &
    ck_pid=$!
else
    say "checkov venv up to date"
fi

# --- Debian packages (in the background too) ------------------------------------------------
apt_pid=
if [[ "${SETUP_SKIP_APT:-0}" != 1 ]]; then
    missing=()
    command -v chromium >/dev/null || missing+=(chromium)
    [[ -x /usr/bin/time ]] || missing+=(time)
    # The progress line is tested in a real terminal (tests/history/terminal.rs).
    command -v tmux >/dev/null || missing+=(tmux)
    # The CPU check test runs the binary on an emulated older CPU (tests/engine/cli.rs).
    qemu_wanted=
    [[ $(uname -m) != x86_64 ]] || qemu_wanted=1
    [[ -z $qemu_wanted ]] || command -v qemu-x86_64 >/dev/null || missing+=(qemu-user)
    if ((${#missing[@]})); then
        sudo=
        if [[ $(id -u) != 0 ]]; then
            command -v sudo >/dev/null || die "need root to apt-get install ${missing[*]} (or SETUP_SKIP_APT=1)"
            sudo=sudo
        fi
        say "apt-get install ${missing[*]} (log: target/setup/apt.log)"
        (
            set -e
            $sudo apt-get update -q
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
        ) >"$LOGDIR/apt.log" 2>&1 &
        apt_pid=$!
    else
        say "Debian packages present (chromium, time, tmux${qemu_wanted:+, qemu-user})"
    fi
fi

# --- main venv -------------------------------------------------------------------------------
py_stamp=$(stamp requirements-dev.txt requirements-dev.lock)
if [[ "$(cat .venv/.stamp 2>/dev/null)" != "$py_stamp" ]]; then
    if [[ ! -x .venv/bin/python ]]; then
        say "creating .venv"
        run venv.log "$PYTHON" -m venv .venv
    fi
    say "pip install -r requirements-dev.txt -c requirements-dev.lock (log: target/setup/pip.log)"
    run pip.log .venv/bin/pip install -q -r requirements-dev.txt -c requirements-dev.lock
    echo "$py_stamp" >.venv/.stamp
else
    say ".venv up to date"
fi

# --- npm ---------------------------------------------------------------------------------------
npm_stamp=$(stamp package.json package-lock.json)
if [[ "$(cat node_modules/.glue-recon-stamp 2>/dev/null)" != "$npm_stamp" ]]; then
    command -v npm >/dev/null || die "npm not found (Node.js is needed for asl-validator)"
    say "npm ci (asl-validator; log: target/setup/npm.log)"
    run npm.log npm ci --no-audit --no-fund
    echo "$npm_stamp" >node_modules/.glue-recon-stamp
else
    say "node_modules up to date"
fi

# --- Rust targets ------------------------------------------------------------------------------
# The functions are built for arm64 Lambdas (make build) and make test checks they compile.
if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    command -v rustup >/dev/null || die "rustup not found: the aarch64-unknown-linux-gnu target is needed (make arm64-check)"
    say "rustup target add aarch64-unknown-linux-gnu (log: target/setup/rustup.log)"
    run rustup.log rustup target add aarch64-unknown-linux-gnu
else
    say "aarch64-unknown-linux-gnu target present"
fi

# --- wait for the background jobs ------------------------------------------------------------------
if [[ -n "$apt_pid" ]] && ! wait "$apt_pid"; then
    tail -n 40 "$LOGDIR/apt.log" >&2
    die "apt-get failed (full log: target/setup/apt.log)"
fi
if [[ -n "$ck_pid" ]]; then
    if ! wait "$ck_pid"; then
        tail -n 40 "$LOGDIR/pip-checkov.log" >&2
        die "checkov install failed (full log: target/setup/pip-checkov.log)"
    fi
fi
ln -sfn ../tools/checkov/bin/checkov .venv/bin/checkov

# --- check ------------------------------------------------------------------------------------
for tool in moto_server cargo-lambda sam cfn-lint checkov; do
    [[ -x .venv/bin/$tool ]] || die ".venv/bin/$tool is missing"
done
[[ -x node_modules/.bin/asl-validator ]] || die "node_modules/.bin/asl-validator is missing"

say "done in $((SECONDS - start))s. Tools: .venv/bin (add it to PATH for 'cargo lambda', sam, checkov), node_modules/.bin/asl-validator"
