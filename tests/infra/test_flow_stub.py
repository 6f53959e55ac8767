#!/usr/bin/env python3
"""The real statemachine/reconcile.asl.json, executed by moto, with stub functions.

This pins the definition's behaviour independently of the Rust functions (the
end-to-end test runs the real binaries): the data flow between states, the retry of
Transient and only Transient, the no-op for item_count 0, the alert when the status is
not PASS, the failure alert (with error and cause) when a step fails, and
ToleratedFailurePercentage.

How: moto server executes state machines (`execute_state_machine`) and sends every
service call of the interpreter to localhost:$MOTO_PORT. We start moto on one port with
MOTO_PORT pointing at a small router on another: the router answers Lambda Invoke
calls from Python stubs (as real Lambda does: HTTP 200, X-Amz-Function-Error on a
function error) and forwards everything else to moto.

Needs moto[server] (see requirements-dev.txt; 5.2.1 cannot start a second execution of
a state machine that ran a Distributed Map, 5.2.5 can). Runs with plain
`python3 tests/infra/test_flow_stub.py` and under pytest.
"""

from __future__ import annotations
from runner import run_tests

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parents[2]
DEFINITION = ROOT / "statemachine" / "reconcile.asl.json"
ACCOUNT = "123456789012"
REGION = "us-east-1"
BUCKET = "recon-work"
GLUE_EVENT = {
    "version": "0",
    "id": "abcdef00-1234-5678-9abc-def012345678",
    "detail-type": "Glue Job State Change",
    "source": "aws.glue",
    "account": ACCOUNT,
    "time": "2024-01-02T03:04:05Z",
    "region": REGION,
    "resources": [],
    "detail": {
        "jobName": "load-orders",
        "severity": "INFO",
        "state": "SUCCEEDED",
        "jobRunId": "jr_0123456789abcdef",
        "message": "Job run succeeded",
    },
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stubs:
    """The three functions, as Python. `calls` records (function, payload)."""

    def __init__(self, harness: "Harness"):
        self.h = harness
        self.calls: list[tuple[str, dict]] = []
        self.items = 3
        self.merge_status = "FAIL"
        self.lookup_errors: list[tuple[str, str]] = []  # raised one per call, then succeed
        self.hash_error: tuple[str, str] | None = None  # raised by every hash call

    def __call__(self, fn: str, payload: dict) -> tuple[dict, bool]:
        self.calls.append((fn, payload))
        return getattr(self, fn)(payload)

    @staticmethod
    def error(kind: str, message: str) -> tuple[dict, bool]:
        return {"errorType": kind, "errorMessage": message}, True

    def lookup(self, payload):
        if self.lookup_errors:
            return self.error(*self.lookup_errors.pop(0))
        run_id = f"run-{len(self.calls)}"
        items = [
            {
                "run_id": run_id,
                "item_id": f"orders-{i:04d}",
                "pair": "orders",
                "partition": f"dt=2024-01-{i + 1:02d}",
                "source": {"files": [{"uri": f"s3://data/src/dt=2024-01-{i + 1:02d}/0.parquet", "size": 10}]},
                "target": {"files": [{"uri": f"s3://data/tgt/dt=2024-01-{i + 1:02d}/0.parquet", "size": 10}]},
            }
            for i in range(self.items)
        ]
        key = f"runs/{run_id}/manifest.json"
        self.h.client("s3").put_object(Bucket=BUCKET, Key=key, Body=json.dumps(items).encode())
        detail = payload.get("detail", {})
        trigger = f"glue:{detail['jobName']}:{detail['jobRunId']}" if detail else "on-demand"
        return {
            "run_id": run_id,
            "bucket": BUCKET,
            "manifest_key": key,
            "item_count": len(items),
            "pairs": ["orders"] if items else [],
            "trigger": trigger,
        }, False

    def hash(self, payload):
        if self.hash_error:
            return self.error(*self.hash_error)
        return {
            "run_id": payload["run_id"],
            "item_id": payload["item_id"],
            "partial_key": f"runs/{payload['run_id']}/partials/{payload['item_id']}.json",
            "counts": {"source_rows": 10, "target_rows": 10},
        }, False

    def merge(self, payload):
        status = self.merge_status
        return {
            "run_id": payload["run_id"],
            "status": status,
            "complete": True,
            "report_uri": f"s3://{BUCKET}/reports/orders/{payload['run_id']}/report.json",
            "html_uri": f"s3://{BUCKET}/reports/orders/{payload['run_id']}/report.html",
            "alert": {
                "subject": f"glue-recon {status}: orders",
                "message": f"{status} orders: 3 keys missing in target",
                "attributes": {"status": status, "pair": "orders"},
            },
        }, False


class Harness:
    """moto server + router + alert queue + one state machine per scenario."""

    def __init__(self):
        self.moto_port, self.router_port = _free_port(), _free_port()
        self.stubs = Stubs(self)
        self.log = tempfile.NamedTemporaryFile("w+", prefix="moto-", suffix=".log", delete=False)
        env = dict(os.environ, MOTO_PORT=str(self.router_port), AWS_DEFAULT_REGION=REGION)
        self.moto = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.moto_port)],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.router = ThreadingHTTPServer(("127.0.0.1", self.router_port), self._handler())
        threading.Thread(target=self.router.serve_forever, daemon=True).start()
        self._wait_for_moto()
        self._post("/moto-api/config", {"stepfunctions": {"execute_state_machine": True}})
        self.client("s3").create_bucket(Bucket=BUCKET)
        sns, sqs = self.client("sns"), self.client("sqs")
        self.topic = sns.create_topic(Name="alerts")["TopicArn"]
        self.queue = sqs.create_queue(QueueName="alerts")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=self.topic, Protocol="sqs", Endpoint=queue_arn)
        self.machines = 0

    def close(self):
        self.router.shutdown()
        self.moto.terminate()
        try:
            self.moto.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.moto.kill()
        self.log.close()
        os.unlink(self.log.name)

    def client(self, service: str):
        return boto3.client(
            service,
            region_name=REGION,
            endpoint_url=f"http://127.0.0.1:{self.moto_port}",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def _post(self, path: str, body: dict):
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.moto_port}{path}", data=json.dumps(body).encode(), method="POST"
        )
        urllib.request.urlopen(req, timeout=10).read()

    def _wait_for_moto(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.moto.poll() is not None:
                raise RuntimeError(f"moto server exited with {self.moto.returncode}; see {self.log.name}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.moto_port}/moto-api/", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("moto server did not start within 30 s")

    def _handler(self):
        harness = self

        class Router(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes):
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _route(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                m = re.match(r"^/2015-03-31/functions/([^/]+)/invocations", self.path)
                if m:
                    name = urllib.parse.unquote(m.group(1)).rsplit(":", 1)[-1]
                    fn = name.removeprefix("recon-")
                    out, failed = harness.stubs(fn, json.loads(body or b"{}"))
                    headers = [("Content-Type", "application/json"), ("X-Amz-Executed-Version", "$LATEST")]
                    if failed:
                        headers.append(("X-Amz-Function-Error", "Unhandled"))
                    self._reply(200, headers, json.dumps(out).encode())
                    return
                req = urllib.request.Request(
                    f"http://127.0.0.1:{harness.moto_port}{self.path}",
                    data=body if body else None,
                    method=self.command,
                    headers={k: v for k, v in self.headers.items() if k.lower() != "host"},
                )
                try:
                    resp = urllib.request.urlopen(req, timeout=60)
                except urllib.error.HTTPError as err:
                    resp = err
                data = resp.read()
                skip = {"content-length", "transfer-encoding", "connection", "server", "date"}
                self._reply(resp.status, [(k, v) for k, v in resp.headers.items() if k.lower() not in skip], data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _route

        return Router

    def machine(self, max_concurrency: int = 2, tolerated_failure_percentage: int = 100) -> str:
        values = {
            "LookupFunctionArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:recon-lookup",
            "HashFunctionArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:recon-hash",
            "MergeFunctionArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:recon-merge",
            "AlertTopicArn": self.topic,
            "MaxConcurrency": str(max_concurrency),
            "ToleratedFailurePercentage": str(tolerated_failure_percentage),
        }
        text = re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], DEFINITION.read_text(encoding="utf-8"))
        self.machines += 1
        return self.client("stepfunctions").create_state_machine(
            name=f"reconcile-{self.machines}",
            definition=text,
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/reconcile",
        )["stateMachineArn"]

    def run(self, machine: str, execution_input: dict, timeout: float = 60) -> dict:
        sfn = self.client("stepfunctions")
        arn = sfn.start_execution(
            stateMachineArn=machine, name=f"x{time.monotonic_ns()}", input=json.dumps(execution_input)
        )["executionArn"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            desc = sfn.describe_execution(executionArn=arn)
            if desc["status"] != "RUNNING":
                return desc
            time.sleep(0.1)
        raise AssertionError(f"execution still RUNNING after {timeout} s")

    def alerts(self) -> list[dict]:
        sqs, out = self.client("sqs"), []
        while True:
            got = sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10, WaitTimeSeconds=0)
            if not got.get("Messages"):
                return out
            for msg in got["Messages"]:
                out.append(json.loads(msg["Body"]))
                sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=msg["ReceiptHandle"])

    def reset(self):
        self.stubs = Stubs(self)
        self.alerts()


_HARNESS: Harness | None = None


def harness() -> Harness:
    global _HARNESS
    if _HARNESS is None:
        _HARNESS = Harness()
    _HARNESS.reset()
    return _HARNESS


def called(h: Harness) -> list[str]:
    return [fn for fn, _ in h.stubs.calls]


def attributes(alert: dict) -> dict:
    return {k: v["Value"] for k, v in alert.get("MessageAttributes", {}).items()}


# ------------------------------------------------------------------- scenarios


def test_on_demand_fail_runs_every_item_and_alerts():
    h = harness()
    done = h.run(h.machine(), {"pairs": ["orders"]})
    assert done["status"] == "SUCCEEDED", done
    assert called(h) == ["lookup", "hash", "hash", "hash", "merge"], called(h)
    lookup_out = h.stubs.calls[0]
    assert lookup_out[1] == {"pairs": ["orders"]}, "recon-lookup gets the execution input as it is"
    items = sorted(p["item_id"] for fn, p in h.stubs.calls if fn == "hash")
    assert items == ["orders-0000", "orders-0001", "orders-0002"], items
    merge_in = h.stubs.calls[-1][1]
    assert set(merge_in) == {"run_id", "bucket", "manifest_key", "item_count", "pairs", "trigger"}, merge_in
    output = json.loads(done["output"])
    assert output["status"] == "FAIL" and output["report_uri"].endswith("report.json"), output
    alerts = h.alerts()
    assert len(alerts) == 1, alerts
    assert alerts[0]["Subject"] == "glue-recon FAIL: orders"
    assert alerts[0]["Message"].startswith("FAIL orders")
    assert attributes(alerts[0]) == {"status": "FAIL", "pair": "orders"}


def test_pass_sends_no_alert():
    h = harness()
    h.stubs.merge_status = "PASS"
    done = h.run(h.machine(), {"pairs": ["orders"]})
    assert done["status"] == "SUCCEEDED", done
    assert json.loads(done["output"])["status"] == "PASS"
    assert h.alerts() == []


def test_warn_alerts():
    h = harness()
    h.stubs.merge_status = "WARN"
    assert h.run(h.machine(), {})["status"] == "SUCCEEDED"
    assert [attributes(a)["status"] for a in h.alerts()] == ["WARN"]


def test_glue_event_for_an_unlisted_job_is_a_clean_no_op():
    h = harness()
    h.stubs.items = 0
    done = h.run(h.machine(), GLUE_EVENT)
    assert done["status"] == "SUCCEEDED", done
    assert called(h) == ["lookup"], called(h)
    assert h.stubs.calls[0][1] == GLUE_EVENT, "recon-lookup gets the Glue event as it is"
    output = json.loads(done["output"])
    assert output["item_count"] == 0 and output["trigger"] == "glue:load-orders:jr_0123456789abcdef", output
    assert h.alerts() == []


def test_a_data_error_in_lookup_is_not_retried_and_sends_the_failure_alert():
    h = harness()
    h.stubs.lookup_errors = [("InvalidConfig", "unknown pair `nope`")]
    done = h.run(h.machine(), {"pairs": ["nope"]})
    assert done["status"] == "FAILED", done
    assert done.get("error") == "InvalidConfig", done
    assert "unknown pair `nope`" in done.get("cause", ""), done
    assert called(h) == ["lookup"], called(h)
    alerts = h.alerts()
    assert len(alerts) == 1, alerts
    assert alerts[0]["Subject"] == "glue-recon: reconciliation could not run"
    assert "Error: InvalidConfig" in alerts[0]["Message"] and "unknown pair `nope`" in alerts[0]["Message"]
    assert attributes(alerts[0]) == {"status": "ERROR", "pair": "*"}


def test_transient_is_retried():
    h = harness()
    h.stubs.lookup_errors = [("Transient", "throttled by Glue")]
    h.stubs.merge_status = "PASS"
    done = h.run(h.machine(), {})
    assert done["status"] == "SUCCEEDED", done
    assert called(h)[:2] == ["lookup", "lookup"], called(h)
    assert h.alerts() == []


def test_failed_partitions_within_tolerance_still_reach_merge():
    h = harness()
    h.stubs.hash_error = ("CorruptParquet", "bad footer")
    done = h.run(h.machine(tolerated_failure_percentage=100), {})
    assert done["status"] == "SUCCEEDED", done
    assert called(h) == ["lookup", "hash", "hash", "hash", "merge"], "a data error is not retried; merge still runs"


def test_map_settings_reach_the_map_run_as_numbers():
    """MaxConcurrency and ToleratedFailurePercentage arrive as substituted strings and
    must reach the Map run as numbers. (moto counts failed items but does not enforce
    the threshold, so "beyond tolerance -> failure alert" is pinned by the static
    Catch test and by the missing-manifest test below, not here.)"""
    h = harness()
    h.stubs.hash_error = ("CorruptParquet", "bad footer")
    done = h.run(h.machine(max_concurrency=2, tolerated_failure_percentage=0), {})
    sfn = h.client("stepfunctions")
    runs = sfn.list_map_runs(executionArn=done["executionArn"])["mapRuns"]
    assert len(runs) == 1, runs
    run = sfn.describe_map_run(mapRunArn=runs[0]["mapRunArn"])
    assert run["maxConcurrency"] == 2, run
    assert run["toleratedFailurePercentage"] == 0, run
    assert run["itemCounts"]["total"] == 3 and run["itemCounts"]["failed"] == 3, run["itemCounts"]


def test_a_failing_map_sends_the_failure_alert():
    h = harness()
    original = h.stubs.lookup

    def lookup_pointing_nowhere(payload):
        out, failed = original(payload)
        out["manifest_key"] = "runs/missing/manifest.json"
        return out, failed

    h.stubs.lookup = lookup_pointing_nowhere
    done = h.run(h.machine(), {})
    assert done["status"] == "FAILED", done
    assert "hash" not in called(h) and "merge" not in called(h), called(h)
    alerts = h.alerts()
    assert [a["Subject"] for a in alerts] == ["glue-recon: reconciliation could not run"], alerts
    assert f"Error: {done.get('error')}" in alerts[0]["Message"], (done.get("error"), alerts[0]["Message"])


# ------------------------------------------------------------------- runner


def teardown_module(module=None):
    global _HARNESS
    if _HARNESS is not None:
        _HARNESS.close()
        _HARNESS = None


if __name__ == "__main__":
    sys.exit(run_tests(globals(), teardown=teardown_module))
