"""A moto server that executes the real statemachine/reconcile.asl.json, with the
state machine's Lambda invokes answered by a backend of the test's choosing.

moto executes state machines (`execute_state_machine`) and sends every service call
of its interpreter to http://localhost:$MOTO_PORT. We start moto on one port with
MOTO_PORT pointing at a small router on another: the router hands Lambda Invoke calls
(`/2015-03-31/functions/<name or ARN>/invocations`) to the backend and forwards
everything else to moto.

A backend is `backend(function, body) -> LambdaReply`, with `function` the function
name (`recon-lookup`, ...). It must answer as the Lambda service does: HTTP 200 with
`X-Amz-Function-Error: Unhandled` for a function error (see `function_error`), or a
Lambda service error status (`service_error`).

The router enforces Step Functions' payload limit on every Lambda invoke
(`payload_limit_error`): an input (a state's Payload, a Map child's input) or a
result over 256 KiB is refused with `States.DataLimitExceeded` and recorded in
`Harness.data_limit_exceeded`. AWS fails such a state where not even a `States.ALL`
Catch takes it; moto, which refuses an error name starting with `States.` from a
function, fails the execution with `States.Runtime`, which no Catch takes either.

The router also enforces a reserved concurrency per function when the test sets one
(`Harness.reserved_concurrency`): an invoke while that many of the function's invokes
are in flight is refused as Lambda does, HTTP 429 `TooManyRequestsException`
(`Lambda.TooManyRequestsException` to the state machine), and counted in
`Harness.throttled`.

The router also takes the AWS calls of the functions under test when their
`AWS_ENDPOINT_URL` is `Harness.router_endpoint`, and can fail chosen calls the way AWS
does when it is overloaded (`Harness.inject`), to prove retries end to end.

Used by test_flow_stub.py (Python stand-ins) and tests/e2e (the real binaries under
`cargo lambda watch`).
"""

from __future__ import annotations

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
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parents[2]
DEFINITION = ROOT / "statemachine" / "reconcile.asl.json"
ACCOUNT = "123456789012"
REGION = "us-east-1"
FUNCTIONS = ("recon-lookup", "recon-hash", "recon-merge")
GLUE_EVENT = json.loads((ROOT / "tests" / "infra" / "events" / "glue-job-succeeded.json").read_text())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LambdaReply:
    """What the Lambda Invoke API answers."""

    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)


def request_id() -> tuple[str, str]:
    """The request id header every AWS answer carries (clients read it)."""
    return ("x-amzn-RequestId", f"test-{time.monotonic_ns()}")


def ok_raw(body: bytes) -> LambdaReply:
    """A function that returned `body` (JSON text)."""
    return LambdaReply(200, body, [("X-Amz-Executed-Version", "$LATEST"), request_id()])


def ok(payload) -> LambdaReply:
    return ok_raw(json.dumps(payload).encode())


def function_error(error_type: str, message: str) -> LambdaReply:
    """A function that failed: Lambda answers 200 and says so in a header."""
    body = json.dumps({"errorType": error_type, "errorMessage": message}).encode()
    headers = [("X-Amz-Function-Error", "Unhandled"), ("X-Amz-Executed-Version", "$LATEST"), request_id()]
    return LambdaReply(200, body, headers)


def service_error(status: int, error_type: str, message: str) -> LambdaReply:
    """The Lambda service itself refused the call (throttling, 5xx)."""
    body = json.dumps({"Type": "Service", "message": message}).encode()
    return LambdaReply(status, body, [("x-amzn-ErrorType", error_type), request_id()])


Backend = Callable[[str, bytes], LambdaReply]

# Step Functions' limit on a state's input or output, a task's result and a
# Distributed Map child's input (UTF-8 bytes).
PAYLOAD_LIMIT = 256 * 1024


def payload_limit_error(function: str, what: str, payload: bytes) -> LambdaReply | None:
    """`States.DataLimitExceeded` when `payload` (the `what` of an invoke of `function`)
    is over PAYLOAD_LIMIT, else None."""
    if len(payload) <= PAYLOAD_LIMIT:
        return None
    message = f"the {what} of {function} is {len(payload)} bytes, over the {PAYLOAD_LIMIT}-byte limit"
    body = json.dumps({"errorType": "States.DataLimitExceeded", "errorMessage": message}).encode()
    return LambdaReply(200, body, [("X-Amz-Function-Error", "Unhandled"), request_id()])


@dataclass
class AwsCall:
    """An AWS API call that went through the router (not a Lambda invoke)."""

    app: str  # the `app/<name>` of the caller's user agent ("" if none)
    method: str
    path: str  # URL-decoded, without the query
    query: dict[str, str]
    target: str  # X-Amz-Target of JSON protocols (Glue, Step Functions), else ""
    body: bytes


@dataclass
class Fault:
    """Fail the next `times` calls whose method and path (URL-decoded, without the
    query) match `path`, with an S3-style error."""

    method: str
    path: re.Pattern
    times: int
    status: int = 503
    code: str = "SlowDown"
    hits: int = 0

    def reply(self) -> LambdaReply:
        body = f"<Error><Code>{self.code}</Code><Message>injected by the test</Message></Error>".encode()
        return LambdaReply(self.status, body, [("Content-Type", "application/xml"), request_id()])


class Harness:
    """moto server + router + work bucket + alert topic with an SQS subscription."""

    def __init__(self, backend: Backend, bucket: str = "recon-work"):
        self.backend = backend
        self.bucket = bucket
        self.moto_port, self.router_port = free_port(), free_port()
        self.log = tempfile.NamedTemporaryFile("w+", prefix="moto-", suffix=".log", delete=False)
        env = dict(os.environ, MOTO_PORT=str(self.router_port), AWS_DEFAULT_REGION=REGION)
        self.moto = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.moto_port)],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.router = ThreadingHTTPServer(("127.0.0.1", self.router_port), self._router())
        threading.Thread(target=self.router.serve_forever, daemon=True).start()
        self._wait_for_moto()
        self._post("/moto-api/config", {"stepfunctions": {"execute_state_machine": True}})
        self.client("s3").create_bucket(Bucket=bucket)
        sns, sqs = self.client("sns"), self.client("sqs")
        self.topic = sns.create_topic(Name="alerts")["TopicArn"]
        self.queue = sqs.create_queue(QueueName="alerts")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=self.topic, Protocol="sqs", Endpoint=queue_arn)
        self.machines = 0
        self.faults: list[Fault] = []
        self._faults_lock = threading.Lock()
        self.aws_calls: list[AwsCall] = []
        self.data_limit_exceeded: list[str] = []  # the refused payloads, as messages
        self.reserved_concurrency: dict[str, int] = {}  # function -> invokes at once
        self.in_flight: dict[str, int] = {}
        self.max_in_flight: dict[str, int] = {}
        self.throttled: dict[str, int] = {}  # function -> invokes refused

    @property
    def endpoint(self) -> str:
        """moto itself."""
        return f"http://127.0.0.1:{self.moto_port}"

    @property
    def router_endpoint(self) -> str:
        """The router: moto, with the faults of `inject`."""
        return f"http://127.0.0.1:{self.router_port}"

    def inject(self, method: str, path_regex: str, times: int, status: int = 503, code: str = "SlowDown") -> Fault:
        """Answer the next `times` matching calls through the router with an error."""
        fault = Fault(method, re.compile(path_regex), times, status, code)
        with self._faults_lock:
            self.faults.append(fault)
        return fault

    def _record(self, method: str, raw_path: str, headers, body: bytes):
        parts = urllib.parse.urlsplit(raw_path)
        agent = f"{headers.get('x-amz-user-agent', '')} {headers.get('user-agent', '')}"
        app = re.search(r"\bapp/([\w.-]+)", agent)
        call = AwsCall(
            app=app.group(1) if app else "",
            method=method,
            path=urllib.parse.unquote(parts.path),
            query=dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True)),
            target=headers.get("X-Amz-Target", ""),
            body=body,
        )
        with self._faults_lock:
            self.aws_calls.append(call)

    def _limited(self, function: str, what: str, payload: bytes) -> LambdaReply | None:
        reply = payload_limit_error(function, what, payload)
        if reply is not None:
            with self._faults_lock:
                self.data_limit_exceeded.append(json.loads(reply.body)["errorMessage"])
        return reply

    def _enter(self, function: str) -> bool:
        """Count an invoke in; False (and counted as throttled) past the reserved
        concurrency."""
        with self._faults_lock:
            running = self.in_flight.get(function, 0)
            if running >= self.reserved_concurrency.get(function, 1 << 30):
                self.throttled[function] = self.throttled.get(function, 0) + 1
                return False
            self.in_flight[function] = running + 1
            self.max_in_flight[function] = max(self.max_in_flight.get(function, 0), running + 1)
            return True

    def _leave(self, function: str):
        with self._faults_lock:
            self.in_flight[function] -= 1

    def _fault_for(self, method: str, raw_path: str) -> Fault | None:
        path = urllib.parse.unquote(urllib.parse.urlsplit(raw_path).path)
        with self._faults_lock:
            for fault in self.faults:
                if fault.times > 0 and fault.method == method and fault.path.search(path):
                    fault.times -= 1
                    fault.hits += 1
                    return fault
        return None

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
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def _post(self, path: str, body: dict):
        req = urllib.request.Request(f"{self.endpoint}{path}", data=json.dumps(body).encode(), method="POST")
        urllib.request.urlopen(req, timeout=10).read()

    def _wait_for_moto(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.moto.poll() is not None:
                raise RuntimeError(f"moto server exited with {self.moto.returncode}; see {self.log.name}")
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("moto server did not start within 30 s")

    def _router(self):
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
                    reply = harness._limited(name, "input", body)
                    if reply is None and not harness._enter(name):
                        reply = service_error(429, "TooManyRequestsException", f"Rate exceeded: {name} is at its reserved concurrency")
                    elif reply is None:
                        try:
                            reply = harness.backend(name, body)
                        except Exception as exc:  # noqa: BLE001 - the interpreter must get an answer
                            reply = service_error(500, "ServiceException", f"test backend failed: {exc!r}")
                        finally:
                            harness._leave(name)
                        if reply.status == 200:
                            reply = harness._limited(name, "result", reply.body) or reply
                    self._reply(reply.status, [("Content-Type", "application/json"), *reply.headers], reply.body)
                    return
                harness._record(self.command, self.path, self.headers, body)
                fault = harness._fault_for(self.command, self.path)
                if fault is not None:
                    reply = fault.reply()
                    self._reply(reply.status, reply.headers, reply.body)
                    return
                req = urllib.request.Request(
                    f"{harness.endpoint}{self.path}",
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
        """A state machine from the real definition, substituted as the template does."""
        values = {
            "LookupFunctionArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:recon-lookup",
            "HashFunctionArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:recon-hash",
            "MergeFunctionArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:recon-merge",
            "AlertTopicArn": self.topic,
            "MaxConcurrency": str(max_concurrency),
            "ToleratedFailurePercentage": str(tolerated_failure_percentage),
            "WorkBucketName": self.bucket,
        }
        text = re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], DEFINITION.read_text(encoding="utf-8"))
        self.machines += 1
        return self.client("stepfunctions").create_state_machine(
            name=f"reconcile-{self.machines}",
            definition=text,
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/reconcile",
        )["stateMachineArn"]

    def wait(self, execution_arn: str, timeout: float = 60) -> dict:
        sfn = self.client("stepfunctions")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            desc = sfn.describe_execution(executionArn=execution_arn)
            if desc["status"] != "RUNNING":
                return desc
            time.sleep(0.1)
        raise AssertionError(f"execution {execution_arn} still RUNNING after {timeout} s")

    def run(self, machine: str, execution_input: dict, timeout: float = 60) -> dict:
        arn = self.client("stepfunctions").start_execution(
            stateMachineArn=machine, name=f"x{time.monotonic_ns()}", input=json.dumps(execution_input)
        )["executionArn"]
        return self.wait(arn, timeout)

    def alerts(self) -> list[dict]:
        """The SNS messages received since the last call (SQS envelope bodies)."""
        sqs, out = self.client("sqs"), []
        while True:
            got = sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10, WaitTimeSeconds=0)
            if not got.get("Messages"):
                return out
            for msg in got["Messages"]:
                out.append(json.loads(msg["Body"]))
                sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=msg["ReceiptHandle"])


def attributes(alert: dict) -> dict:
    """The message attributes of an SNS message as {name: value}."""
    return {k: v["Value"] for k, v in alert.get("MessageAttributes", {}).items()}
