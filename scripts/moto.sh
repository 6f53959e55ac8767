#!/usr/bin/env bash
# Run a local moto server (mock AWS) on a free loopback port, for tests and by hand.
#
#   scripts/moto.sh start    start it (or reuse a running one), print its endpoint URL
#   scripts/moto.sh stop     stop it
#   scripts/moto.sh url      print the endpoint URL of the running server (fails if none)
#   scripts/moto.sh env      print 'export GLUE_RECON_MOTO_ENDPOINT=...' etc. for eval
#   scripts/moto.sh status   say whether it runs
#
# State lives in $MOTO_STATE_DIR (default target/moto): port, pid, moto.log.
# MOTO_PORT_WANTED=N picks the port instead of a free one.
# MOTO_CALLBACK_PORT=N: the port moto's Step Functions interpreter sends its service calls
#   to (moto always uses http://localhost:$MOTO_PORT); default: moto's own port. Point it
#   at a router that forwards Lambda invokes elsewhere and the rest to moto.
# Step Functions execution is switched on (POST /moto-api/config).
# Needs .venv (scripts/setup.sh).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
STATE=${MOTO_STATE_DIR:-$ROOT/target/moto}
PY=$ROOT/.venv/bin/python
MOTO=$ROOT/.venv/bin/moto_server

die() { printf 'moto.sh: ERROR: %s\n' "$*" >&2; exit 1; }
note() { printf 'moto.sh: %s\n' "$*" >&2; }

# The pid recorded in $STATE, if that process is alive and is a moto_server.
running_pid() {
    local pid
    pid=$(cat "$STATE/pid" 2>/dev/null) || return 1
    [[ -n "$pid" && -r /proc/$pid/cmdline ]] || return 1
    tr '\0' ' ' </proc/"$pid"/cmdline | grep -q moto_server || return 1
    echo "$pid"
}

# http METHOD URL [BODY]: exit 0 if the server answers 2xx.
http() {
    "$PY" - "$@" <<'PY'
import sys, urllib.request
method, url = sys.argv[1], sys.argv[2]
data = sys.argv[3].encode() if len(sys.argv) > 3 else None
req = urllib.request.Request(url, data=data, method=method,
                             headers={"Content-Type": "application/json"} if data else {})
try:
    with urllib.request.urlopen(req, timeout=2) as r:
        sys.exit(0 if 200 <= r.status < 300 else 1)
except Exception:
    sys.exit(1)
PY
}

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

url() { echo "http://127.0.0.1:$(cat "$STATE/port")"; }

start() {
    [[ -x "$MOTO" ]] || die "$MOTO not found: run scripts/setup.sh first"
    mkdir -p "$STATE"
    if pid=$(running_pid) && http GET "$(url)/moto-api/config"; then
        note "already running (pid $pid)"
        url
        return 0
    fi
    local attempt port pid
    for attempt in 1 2 3; do
        port=${MOTO_PORT_WANTED:-$(free_port)}
        MOTO_PORT=${MOTO_CALLBACK_PORT:-$port} nohup "$MOTO" -H 127.0.0.1 -p "$port" \
            >"$STATE/moto.log" 2>&1 </dev/null &
        pid=$!
        echo "$pid" >"$STATE/pid"
        echo "$port" >"$STATE/port"
        # Wait up to 30 s for it to answer.
        for _ in $(seq 1 150); do
            if ! kill -0 "$pid" 2>/dev/null; then
                break
            fi
            if http GET "http://127.0.0.1:$port/moto-api/config"; then
                http POST "http://127.0.0.1:$port/moto-api/config" \
                    '{"stepfunctions": {"execute_state_machine": true}}' \
                    || { stop; die "could not enable Step Functions execution"; }
                note "started moto_server on port $port (pid $pid, log $STATE/moto.log)"
                echo "http://127.0.0.1:$port"
                return 0
            fi
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            note "moto_server did not answer in 30 s (attempt $attempt)"
        else
            note "moto_server exited (attempt $attempt)"
        fi
        tail -n 20 "$STATE/moto.log" >&2 || true
        [[ -z "${MOTO_PORT_WANTED:-}" ]] || break
    done
    rm -f "$STATE/pid"
    die "could not start moto_server (log: $STATE/moto.log)"
}

stop() {
    local pid
    if ! pid=$(running_pid); then
        rm -f "$STATE/pid"
        note "not running"
        return 0
    fi
    kill "$pid"
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    rm -f "$STATE/pid"
    note "stopped (pid $pid)"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url)
        running_pid >/dev/null || die "not running (scripts/moto.sh start)"
        url
        ;;
    env)
        running_pid >/dev/null || die "not running (scripts/moto.sh start)"
        u=$(url)
        echo "export GLUE_RECON_MOTO_ENDPOINT=$u"
        echo "export AWS_ENDPOINT_URL=$u AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION=us-east-1"
        ;;
    status)
        if pid=$(running_pid); then echo "running: pid $pid, $(url)"; else echo "not running"; exit 1; fi
        ;;
    *)
        echo "usage: $0 start|stop|url|env|status" >&2
        exit 2
        ;;
esac
