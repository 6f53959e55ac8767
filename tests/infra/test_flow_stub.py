#!/usr/bin/env python3
"""The real statemachine/reconcile.asl.json, executed by moto, with stub functions.

This pins the definition's behaviour independently of the Rust functions (the
end-to-end test in tests/e2e runs the real binaries): the data flow between states,
the retry of Transient and only Transient, the no-op for item_count 0, the alert when
the status is not PASS, the failure alert (with error and cause) when a step fails,
and ToleratedFailurePercentage. How moto is made to call the stubs: sfn_harness.py.

Needs moto[server] (see requirements-dev.txt; 5.2.1 cannot start a second execution of
a state machine that ran a Distributed Map, 5.2.5 can). Runs with plain
`python3 tests/infra/test_flow_stub.py` and under pytest.
"""

from __future__ import annotations

import json

import pytest
from sfn_harness import GLUE_EVENT, Harness, LambdaReply, attributes, function_error, ok

BUCKET = "recon-work"


class Stubs:
    """The three functions, as Python. `calls` records (function, payload)."""

    def __init__(self, harness: Harness):
        self.h = harness
        self.calls: list[tuple[str, dict]] = []
        self.items = 3
        self.merge_status = "FAIL"
        self.lookup_errors: list[tuple[str, str]] = []  # raised one per call, then succeed
        self.hash_error: tuple[str, str] | None = None  # raised by every hash call
        self.item_padding = 0  # characters added to each manifest item
        self.alert_padding = 0  # characters added to the alert message

    def __call__(self, function: str, body: bytes) -> LambdaReply:
        fn = function.removeprefix("recon-")
        payload = json.loads(body or b"{}")
        self.calls.append((fn, payload))
        out, failed = getattr(self, fn)(payload)
        return function_error(out["errorType"], out["errorMessage"]) if failed else ok(out)

    @staticmethod
    def error(kind: str, message: str) -> tuple[dict, bool]:
        return {"errorType": kind, "errorMessage": message}, True

    def lookup(self, payload):
        if self.lookup_errors:
            return self.error(*self.lookup_errors.pop(0))
        run_id = f"run-{len(self.calls)}"
        # As recon-lookup: each partition's files in its item object, the manifest
        # holding only the ids (docs/contracts.md).
        items = []
        s3 = self.h.client("s3")
        for i in range(self.items):
            ids = {
                "item_id": f"orders-{i:04d}",
                "pair": "orders",
                "partition": f"dt=2024-01-{i + 1:02d}",
                "presence": "both",
            }
            work = ids | {
                "source": [{"uri": f"s3://data/src/dt=2024-01-{i + 1:02d}/0.parquet", "size": 10, "partition": []}],
                "target": [{"uri": f"s3://data/tgt/dt=2024-01-{i + 1:02d}/0.parquet", "size": 10, "partition": []}],
            }
            item_key = f"runs/{run_id}/items/{ids['item_id']}.json"
            s3.put_object(Bucket=BUCKET, Key=item_key, Body=json.dumps(work).encode())
            padding = {"padding": "x" * self.item_padding} if self.item_padding else {}
            items.append({"run_id": run_id} | ids | padding)
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
            "pair_count": 1 if items else 0,
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
                "message": f"{status} orders: 3 keys missing in target" + "x" * self.alert_padding,
                "attributes": {"status": status, "pair": json.dumps(["orders"])},
            },
        }, False




class StubHarness(Harness):
    """The harness with `stubs` as its Lambda backend; `reset` gives fresh stubs."""

    def __init__(self):
        super().__init__(lambda function, body: self.stubs(function, body), bucket=BUCKET)
        self.stubs = Stubs(self)

    def reset(self):
        self.stubs = Stubs(self)
        self.alerts()


@pytest.fixture(scope="module")
def stub_harness():
    """One moto server and router for the module, with stand-ins for the functions."""
    harness = StubHarness()
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def h(stub_harness: StubHarness) -> StubHarness:
    """The harness with fresh stubs and no alerts left from an earlier test."""
    stub_harness.reset()
    return stub_harness


def called(h: StubHarness) -> list[str]:
    return [fn for fn, _ in h.stubs.calls]



# ------------------------------------------------------------------- scenarios


def test_on_demand_fail_runs_every_item_and_alerts(h: StubHarness):
    done = h.run(h.machine(), {"pairs": ["orders"]})
    assert done["status"] == "SUCCEEDED", done
    assert called(h) == ["lookup", "hash", "hash", "hash", "merge"], called(h)
    lookup_out = h.stubs.calls[0]
    assert lookup_out[1] == {"pairs": ["orders"]}, "recon-lookup gets the execution input as it is"
    items = sorted(p["item_id"] for fn, p in h.stubs.calls if fn == "hash")
    assert items == ["orders-0000", "orders-0001", "orders-0002"], items
    hash_in = next(p for fn, p in h.stubs.calls if fn == "hash")
    assert set(hash_in) == {"run_id", "item_id", "pair", "partition", "presence"}, "recon-hash gets the manifest item as it is"
    merge_in = h.stubs.calls[-1][1]
    assert set(merge_in) == {"run_id", "bucket", "manifest_key", "item_count", "pairs", "pair_count", "trigger"}, merge_in
    output = json.loads(done["output"])
    assert output["status"] == "FAIL" and output["report_uri"].endswith("report.json"), output
    alerts = h.alerts()
    assert len(alerts) == 1, alerts
    assert alerts[0]["Subject"] == "glue-recon FAIL: orders"
    assert alerts[0]["Message"].startswith("FAIL orders")
    assert attributes(alerts[0]) == {"status": "FAIL", "pair": json.dumps(["orders"])}


def test_the_map_writes_its_results_under_the_run_not_into_the_state(h: StubHarness):
    h.stubs.merge_status = "PASS"
    done = h.run(h.machine(), {"pairs": ["orders"]})
    assert done["status"] == "SUCCEEDED", done
    name = done["executionArn"].rsplit(":", 1)[1]
    listed = h.client("s3").list_objects_v2(Bucket=BUCKET, Prefix=f"runs/{name}/map-results/")
    keys = [o["Key"] for o in listed.get("Contents", [])]
    assert any(k.endswith("/manifest.json") for k in keys), keys
    merge_in = h.stubs.calls[-1][1]
    assert "error" not in merge_in and set(merge_in) == {"run_id", "bucket", "manifest_key", "item_count", "pairs", "pair_count", "trigger"}


def test_an_alert_that_cannot_be_published_fails_the_execution_as_alert_not_sent(h: StubHarness):
    h.client("sns").delete_topic(TopicArn=h.topic)
    try:
        done = h.run(h.machine(), {"pairs": ["orders"]})
    finally:
        h.topic = h.client("sns").create_topic(Name="alerts")["TopicArn"]
        queue_arn = h.client("sqs").get_queue_attributes(QueueUrl=h.queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        h.client("sns").subscribe(TopicArn=h.topic, Protocol="sqs", Endpoint=queue_arn)
    assert done["status"] == "FAILED", done
    assert done.get("error") == "AlertNotSent", done
    assert "could not be published" in done.get("cause", ""), done
    assert called(h)[-1] == "merge", called(h)


def test_pass_sends_no_alert(h: StubHarness):
    h.stubs.merge_status = "PASS"
    done = h.run(h.machine(), {"pairs": ["orders"]})
    assert done["status"] == "SUCCEEDED", done
    assert json.loads(done["output"])["status"] == "PASS"
    assert h.alerts() == []


def test_warn_alerts(h: StubHarness):
    h.stubs.merge_status = "WARN"
    assert h.run(h.machine(), {})["status"] == "SUCCEEDED"
    assert [attributes(a)["status"] for a in h.alerts()] == ["WARN"]


def test_glue_event_for_an_unlisted_job_is_a_clean_no_op(h: StubHarness):
    h.stubs.items = 0
    done = h.run(h.machine(), GLUE_EVENT)
    assert done["status"] == "SUCCEEDED", done
    assert called(h) == ["lookup"], called(h)
    assert h.stubs.calls[0][1] == GLUE_EVENT, "recon-lookup gets the Glue event as it is"
    output = json.loads(done["output"])
    assert output["item_count"] == 0 and output["trigger"] == "glue:load-orders:" + GLUE_EVENT["detail"]["jobRunId"], output
    assert h.alerts() == []


def test_a_data_error_in_lookup_is_not_retried_and_sends_the_failure_alert(h: StubHarness):
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
    assert attributes(alerts[0]) == {"status": "ERROR", "pair": json.dumps(["*"])}


def test_transient_is_retried(h: StubHarness):
    h.stubs.lookup_errors = [("Transient", "throttled by Glue")]
    h.stubs.merge_status = "PASS"
    done = h.run(h.machine(), {})
    assert done["status"] == "SUCCEEDED", done
    assert called(h)[:2] == ["lookup", "lookup"], called(h)
    assert h.alerts() == []


def test_failed_partitions_within_tolerance_still_reach_merge(h: StubHarness):
    h.stubs.hash_error = ("CorruptParquet", "bad footer")
    done = h.run(h.machine(tolerated_failure_percentage=100), {})
    assert done["status"] == "SUCCEEDED", done
    assert called(h) == ["lookup", "hash", "hash", "hash", "merge"], "a data error is not retried; merge still runs"


def test_map_settings_reach_the_map_run_as_numbers(h: StubHarness):
    """MaxConcurrency and ToleratedFailurePercentage arrive as substituted strings and
    must reach the Map run as numbers. (moto counts failed items but does not enforce
    the threshold, so "beyond tolerance -> failure alert" is pinned by the static
    Catch test and by the missing-manifest test below, not here.)"""
    h.stubs.hash_error = ("CorruptParquet", "bad footer")
    done = h.run(h.machine(max_concurrency=2, tolerated_failure_percentage=0), {})
    sfn = h.client("stepfunctions")
    runs = sfn.list_map_runs(executionArn=done["executionArn"])["mapRuns"]
    assert len(runs) == 1, runs
    run = sfn.describe_map_run(mapRunArn=runs[0]["mapRunArn"])
    assert run["maxConcurrency"] == 2, run
    assert run["toleratedFailurePercentage"] == 0, run
    assert run["itemCounts"]["total"] == 3 and run["itemCounts"]["failed"] == 3, run["itemCounts"]


def test_a_failing_map_sends_the_failure_alert(h: StubHarness):
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


def test_a_result_over_256_kib_is_refused_as_step_functions_refuses_it(h: StubHarness):
    h.stubs.alert_padding = 300 * 1024
    done = h.run(h.machine(), {})
    assert done["status"] == "FAILED", done
    assert len(h.data_limit_exceeded) == 1 and "result of recon-merge" in h.data_limit_exceeded[0], h.data_limit_exceeded
    # As on AWS, no Catch takes it: the execution fails without any alert.
    assert h.alerts() == []
    h.data_limit_exceeded.clear()


def test_a_map_child_input_over_256_kib_is_refused_and_the_function_not_called(h: StubHarness):
    h.stubs.item_padding = 257 * 1024
    h.run(h.machine(), {})
    assert "hash" not in called(h), called(h)
    assert any("input of recon-hash" in m for m in h.data_limit_exceeded), h.data_limit_exceeded
    h.data_limit_exceeded.clear()
