"""The end-to-end stack the scenarios of test_e2e.py share: a moto server and the
router of tests/infra/sfn_harness.py, the real function binaries under `cargo lambda
watch`, and the sample tables in moto's Glue catalog and S3. tests/e2e/conftest.py
makes one for the whole session (the `e` fixture)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from sfn_harness import (
    ROOT,
    Harness,
    LambdaReply,
    free_port,
    function_error,
    ok_raw,
    service_error,
)

TARGET_DIR = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
BIN = TARGET_DIR / "debug"
DATA_BUCKET = "recon-data"
DB = "sales"
JOB = "orders-etl"  # the job the sample config lists under glue_jobs
MASK_KEY = "e2e deployment masking key: sixty-four characters of generated secret"
LEDGER_DATABASE = "e2e_recon"  # the merge function's RECON_LEDGER_DATABASE, as the template sets it
PAIR = "orders"
WATCH_START_TIMEOUT = float(os.environ.get("E2E_WATCH_START_TIMEOUT", "900"))


class Watch:
    """`cargo lambda watch` serving the function binaries, and the Lambda backend of the
    router: forwards invokes, translates its function errors, injects throttles."""

    def __init__(self, env: dict, log: Path):
        self.port = free_port()
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            ["cargo", "lambda", "watch", "--ignore-changes", "-A", "127.0.0.1", "-P", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.calls: list[tuple[str, dict]] = []
        self.throttle_next: dict[str, int] = {}
        self.lock = threading.Lock()

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
        self.log.close()

    def invoke_raw(self, function: str, body: bytes, timeout: float = 120) -> tuple[int, bytes]:
        if self.proc.poll() is not None:
            raise RuntimeError(f"cargo lambda watch exited with {self.proc.returncode}; see {self.log.name}")
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/2015-03-31/functions/{function}/invocations",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def __call__(self, function: str, body: bytes) -> LambdaReply:
        """The router's Lambda backend."""
        with self.lock:
            self.calls.append((function, json.loads(body or b"null")))
            if self.throttle_next.get(function, 0) > 0:
                self.throttle_next[function] -= 1
                return service_error(429, "TooManyRequestsException", "Rate exceeded (injected by the e2e test)")
        status, out = self.invoke_raw(function, body)
        if status == 200:
            return ok_raw(out)
        try:
            err = json.loads(out)
            return function_error(err["errorType"], err["errorMessage"])
        except (ValueError, KeyError):
            return service_error(502, "ServiceException", f"cargo lambda watch answered {status}: {out[:500]!r}")

    def wait_ready(self):
        """Start every function once: the first invoke runs `cargo run --bin NAME`
        (a no-op build when `cargo build --workspace --bins` ran before). A payload each
        function refuses fast proves the binary runs and answers."""
        deadline = time.monotonic() + WATCH_START_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                self._check_alive(deadline)
                time.sleep(0.2)
        for fn in ("recon-lookup", "recon-hash", "recon-merge", "recon-trigger"):
            answer: list = []
            worker = threading.Thread(
                target=lambda fn=fn, answer=answer: answer.append(self.invoke_raw(fn, b'"warm-up"', WATCH_START_TIMEOUT)),
                daemon=True,
            )
            worker.start()
            while worker.is_alive():
                self._check_alive(deadline)
                worker.join(0.5)
            assert answer, f"{fn}: no answer from cargo lambda watch; see {self.log.name}"
            status, out = answer[0]
            assert status == 500 and b"InvalidInput" in out, (fn, status, out[:300])

    def _check_alive(self, deadline: float):
        log = Path(self.log.name).read_text(errors="replace")
        if self.proc.poll() is not None or "command exited" in log or time.monotonic() > deadline:
            tail = "\n".join(log.splitlines()[-15:])
            raise RuntimeError(f"cargo lambda watch could not start a function ({self.log.name}):\n{tail}")

    def calls_of(self, function: str) -> list[dict]:
        return [p for f, p in self.calls if f == function]


class E2E:
    """Everything the scenarios share: moto + router + watch + the sample tables."""

    def __init__(self):
        for name in ("glue-recon", "recon-lookup", "recon-hash", "recon-merge", "recon-trigger"):
            if not (BIN / name).exists():
                raise RuntimeError(f"{BIN / name} is missing: run `cargo build --workspace --bins` (make e2e does)")
        self.tmp = Path(tempfile.mkdtemp(prefix="glue-recon-e2e-"))
        self.watch: Watch | None = None
        self.h = Harness(lambda function, body: self.watch(function, body))
        try:
            self._data()
            self.machine = self.h.machine(max_concurrency=2, tolerated_failure_percentage=100)
            # The masking key, as the template's MaskKeySecret holds it for recon-hash.
            self.mask_secret = self.h.client("secretsmanager").create_secret(
                Name="glue-recon-mask-key", SecretString=MASK_KEY
            )["ARN"]
            env = dict(
                os.environ,
                # Through the router, so a test can make AWS fail a call (Harness.inject).
                AWS_ENDPOINT_URL=self.h.router_endpoint,
                AWS_ACCESS_KEY_ID="testing",
                AWS_SECRET_ACCESS_KEY="testing",
                AWS_REGION="us-east-1",
                AWS_DEFAULT_REGION="us-east-1",
                AWS_EC2_METADATA_DISABLED="true",
                RECON_BUCKET=self.h.bucket,
                RECON_CONFIG_URI=f"s3://{self.h.bucket}/config/recon.toml",
                STATE_MACHINE_ARN=self.machine,
                RECON_LEDGER_DATABASE=LEDGER_DATABASE,
                RECON_MASK_KEY_SECRET=self.mask_secret,
                RECON_EVENT_BUS="default",
                SWEEP_GLUE_JOBS=JOB,
                RUST_LOG="info",
            )
            self.watch = Watch(env, self.tmp / "watch.log")
            self.watch.wait_ready()
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.watch is not None:
            self.watch.close()
        self.h.close()
        if os.environ.get("E2E_KEEP"):
            print(f"kept {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _data(self):
        data = self.tmp / "data"
        subprocess.run(
            [BIN / "glue-recon", "sample-data", "--out", data, "--rows", "3000", "--partitions", "3", "--seed", "7"],
            check=True,
            capture_output=True,
        )
        self.planted = json.loads((data / "expected.json").read_text())
        s3, glue = self.h.client("s3"), self.h.client("glue")
        s3.create_bucket(Bucket=DATA_BUCKET)
        glue.create_database(DatabaseInput={"Name": DB})
        self.partitions = sorted(p.name for p in (data / "source").iterdir() if p.name.startswith("dt="))
        for side in ("source", "target"):
            table = f"orders_{side}"
            location = f"s3://{DATA_BUCKET}/warehouse/{table}/"
            glue.create_table(
                DatabaseName=DB,
                TableInput={
                    "Name": table,
                    "TableType": "EXTERNAL_TABLE",
                    "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": location},
                    "PartitionKeys": [{"Name": "dt", "Type": "string"}],
                },
            )
            for part in sorted((data / side).iterdir()):
                if not part.name.startswith("dt="):
                    continue
                for f in sorted(part.iterdir()):
                    s3.upload_file(str(f), DATA_BUCKET, f"warehouse/{table}/{part.name}/{f.name}")
                glue.create_partition(
                    DatabaseName=DB,
                    TableName=table,
                    PartitionInput={
                        "Values": [part.name.removeprefix("dt=")],
                        "StorageDescriptor": {"Location": f"{location}{part.name}/"},
                    },
                )
        config = (data / "recon.toml").read_text()
        config = config.replace('source = "source"', f'source = "glue://{DB}/orders_source"')
        config = config.replace('target = "target"', f'target = "glue://{DB}/orders_target"')
        assert "glue://" in config, "the sample config names its tables as expected"
        s3.put_object(Bucket=self.h.bucket, Key="config/recon.toml", Body=config.encode())
        # The same files, reconciled locally by the CLI: the reference totals.
        local = subprocess.run(
            [BIN / "glue-recon", "run", "--config", data / "recon.toml", "--out", self.tmp / "local", "--json"],
            capture_output=True,
        )
        assert local.returncode == 1, f"the planted problems FAIL locally: {local.returncode} {local.stderr[-500:]!r}"
        self.local = json.loads(local.stdout)
        self.data = data

    def s3_json(self, uri: str) -> dict:
        bucket, key = uri.removeprefix("s3://").split("/", 1)
        return json.loads(self.h.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read())

    def keys(self, bucket: str, prefix: str) -> list[str]:
        pages = self.h.client("s3").get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    def reset(self):
        self.watch.calls.clear()
        self.watch.throttle_next.clear()
        self.h.faults.clear()
        self.h.reserved_concurrency.clear()
        self.h.throttled.clear()
        self.h.max_in_flight.clear()
        self.h.alerts()
