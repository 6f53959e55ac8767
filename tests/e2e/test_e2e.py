"""End to end: the real statemachine/reconcile.asl.json executed by a moto server, its
Lambda invokes answered by the real function binaries under `cargo lambda watch`,
the tables in moto's Glue catalog and S3 (Parquet written by `glue-recon sample-data`).

    moto (S3, Glue, SNS, SQS, Step Functions; executes the state machine)
      -> router (tests/infra/sfn_harness.py): Lambda invokes -> cargo lambda watch,
         its HTTP 500 function errors turned into what Lambda answers (200 +
         X-Amz-Function-Error), one-shot throttles injected on request;
         everything else -> moto
      -> recon-lookup, recon-hash, recon-merge (and recon-trigger, invoked as
         EventBridge would) talking to moto through AWS_ENDPOINT_URL

Scenarios: an on-demand run (report objects, ledger, alert, the same totals as a
local `glue-recon run` of the same files); a Glue Job State Change delivered twice to
recon-trigger (one execution); the catch-up sweep's Scheduled Event finding a run whose
event was lost (one execution, only the partitions the run's `--partitions` argument
names; a second sweep starts nothing); a job no pair lists (clean no-op); a throttled Lambda
(retried); partitions throttled past recon-hash's reserved concurrency (retried, the
report complete); a corrupt partition (not retried, reported as not reconciled, alert says
so); an unknown pair (failure alert, FAILED).

Needs the binaries built (`cargo build --workspace --bins`; `make e2e` does it) and
.venv (scripts/setup.sh). Run: `make e2e`, or `.venv/bin/python -m pytest tests/e2e -k NAME`
for some scenarios. The stack is tests/e2e/stack.py, made once by the `e` fixture
(tests/e2e/conftest.py).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from iam_policy import Policies, Request
from sfn_harness import GLUE_EVENT, PAYLOAD_LIMIT, attributes, payload_limit_error
from stack import DATA_BUCKET, DB, E2E, JOB, LEDGER_DATABASE, PAIR


def glue_event(job: str, run_id: str) -> dict:
    event = json.loads(json.dumps(GLUE_EVENT))
    event["detail"]["jobName"] = job
    event["detail"]["jobRunId"] = run_id
    return event


# ------------------------------------------------------------------- scenarios


def test_on_demand_run_reports_what_a_local_run_reports_and_alerts(e: E2E):
    started = time.monotonic()
    done = e.h.run(e.machine, {"pairs": [PAIR]}, timeout=300)
    elapsed = time.monotonic() - started
    assert done["status"] == "SUCCEEDED", done
    out = json.loads(done["output"])
    assert out["status"] == "FAIL" and out["complete"] is True, out
    report = e.s3_json(out["report_uri"])
    assert report["totals"] == e.local["totals"], (report["totals"], e.local["totals"])
    assert report["totals"]["missing_in_target"] == e.planted["missing_in_target"], report["totals"]
    assert report["status"] == e.local["status"] == "FAIL"
    assert report["columns"] == e.local["columns"], (report["columns"], e.local["columns"])
    assert [p["partition"] for p in report["partitions"]] == e.partitions, report["partitions"]
    run_prefix = out["report_uri"].removeprefix(f"s3://{e.h.bucket}/").rsplit("/", 1)[0]
    written = sorted(e.keys(e.h.bucket, run_prefix))
    expected = ("athena/diffs.txt", "diffs.parquet", "report.html", "report.json")
    assert written == [f"{run_prefix}/{name}" for name in expected], written
    assert out["html_uri"] == f"s3://{e.h.bucket}/{run_prefix}/report.html", out
    assert any(k.endswith(f"{report['run_id']}.parquet") for k in e.keys(e.h.bucket, "ledger/")), "ledger row"
    hashed = sorted(p["partition"] for p in e.watch.calls_of("recon-hash"))
    assert hashed == e.partitions, f"one hash invocation per partition: {hashed}"
    alerts = e.h.alerts()
    assert len(alerts) == 1, alerts
    alert = alerts[0]
    assert alert["Subject"].startswith("glue-recon FAIL") and PAIR in alert["Subject"], alert["Subject"]
    assert attributes(alert) == {"status": "FAIL", "pair": json.dumps([PAIR], separators=(",", ":"))}, attributes(alert)
    assert out["report_uri"] in alert["Message"] and out["html_uri"] in alert["Message"], alert["Message"]
    assert "MISSING_IN_TARGET" in alert["Message"], alert["Message"]
    assert "@example.com" not in alert["Message"], "the masked email column never reaches the alert"
    # The Athena statements name the ledger database the stack was deployed with.
    assert f"CREATE EXTERNAL TABLE IF NOT EXISTS {LEDGER_DATABASE}.diffs_" in alert["Message"], alert["Message"]
    logs = Path(e.watch.log.name).read_text(errors="replace")
    assert "recon-merge" in logs and "@example.com" not in logs, "nor the functions' logs"
    emf = [json.loads(line[line.index('{"') :]) for line in logs.splitlines() if '"_aws"' in line and '{"' in line]
    assert any(m.get("pair") == PAIR and m.get("status") == "FAIL" for m in emf), "the merge's EMF line of the pair"
    assert any("PairsFailed" in m for m in emf), "the merge's EMF line of the run"
    assert "@example.com" not in json.dumps(report), "nor the report"
    print(f"     on-demand execution of {len(e.partitions)} partitions: {elapsed:.1f} s")


def test_a_glue_event_delivered_twice_reconciles_once(e: E2E):
    event = glue_event(JOB, f"jr_{time.monotonic_ns():x}")
    status, first = e.watch.invoke_raw("recon-trigger", json.dumps(event).encode())
    assert status == 200, first
    first = json.loads(first)
    assert first["started"] is True and first["execution_name"] == f"glue-{event['detail']['jobRunId']}", first
    # Step Functions answers a second start with the same name (and input) with the
    # running execution, or ExecutionAlreadyExists once it ended: no second run.
    status, second = e.watch.invoke_raw("recon-trigger", json.dumps(event).encode())
    assert status == 200, second
    second = json.loads(second)
    assert second["started"] is False or second["execution_arn"] == first["execution_arn"], second
    done = e.h.wait(first["execution_arn"], timeout=300)
    assert done["status"] == "SUCCEEDED", done
    out = json.loads(done["output"])
    assert out["status"] == "FAIL", out
    assert e.s3_json(out["report_uri"])["totals"] == e.local["totals"]
    assert e.watch.calls_of("recon-lookup") == [event], "lookup got the Glue event as the execution input"
    executions = e.h.client("stepfunctions").list_executions(stateMachineArn=e.machine)["executions"]
    assert [x["name"] for x in executions].count(first["execution_name"]) == 1, executions
    assert [attributes(a)["status"] for a in e.h.alerts()] == ["FAIL"]


def scheduled_event() -> dict:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"version": "0", "id": f"sweep-{time.monotonic_ns():x}", "detail-type": "Scheduled Event",
            "source": "aws.events", "account": "123456789012", "time": now, "region": "us-east-1",
            "resources": ["arn:aws:events:us-east-1:123456789012:rule/glue-recon-SweepScheduleRule"], "detail": {}}


def test_the_sweep_reconciles_a_run_whose_event_was_lost_once_and_only_its_partitions(e: E2E):
    s3, glue = e.h.client("s3"), e.h.client("glue")
    config_key = "config/recon.toml"
    original = s3.get_object(Bucket=e.h.bucket, Key=config_key)["Body"].read()
    marker = f'glue_jobs = ["{JOB}"]'
    assert marker.encode() in original, "the sample config lists the job"
    changed = original.replace(marker.encode(), f'{marker}\npartitions_from_argument = "--partitions"'.encode())
    s3.put_object(Bucket=e.h.bucket, Key=config_key, Body=changed)
    try:
        glue.create_job(Name=JOB, Role="arn:aws:iam::123456789012:role/glue", Command={"Name": "glueetl", "ScriptLocation": "s3://scripts/etl.py"})
        # The run succeeds (moto completes it at once); its event never reaches recon-trigger.
        run_id = glue.start_job_run(JobName=JOB, Arguments={"--partitions": e.partitions[1]})["JobRunId"]
        status, out = e.watch.invoke_raw("recon-trigger", json.dumps(scheduled_event()).encode())
        assert status == 200, out
        swept = json.loads(out)
        assert (swept["started"], swept["already_reconciled"], swept["no_recent_successful_run"]) == (1, 0, 0), swept
        (job,) = swept["jobs"]
        assert job["job"] == JOB and job["outcome"] == "started" and job["job_run_id"] == run_id, job
        assert job["execution_name"] == f"glue-{run_id}", job
        done = e.h.wait(job["execution_arn"], timeout=300)
        assert done["status"] == "SUCCEEDED", done
        report = e.s3_json(json.loads(done["output"])["report_uri"])
        assert [p["partition"] for p in report["partitions"]] == [e.partitions[1]], report["partitions"]
        assert report["trigger"] == f"glue:{JOB}:{run_id}", report["trigger"]
        (lookup_input,) = e.watch.calls_of("recon-lookup")
        assert lookup_input["source"] == "aws.glue" and lookup_input["detail"]["jobRunId"] == run_id, lookup_input
        assert [p["partition"] for p in e.watch.calls_of("recon-hash")] == [e.partitions[1]]
        # The next sweep finds the run reconciled: nothing new starts.
        status, out = e.watch.invoke_raw("recon-trigger", json.dumps(scheduled_event()).encode())
        assert status == 200, out
        again = json.loads(out)
        assert (again["started"], again["already_reconciled"]) == (0, 1), again
        executions = e.h.client("stepfunctions").list_executions(stateMachineArn=e.machine)["executions"]
        assert [x["name"] for x in executions].count(f"glue-{run_id}") == 1, executions
    finally:
        s3.put_object(Bucket=e.h.bucket, Key=config_key, Body=original)


def test_a_glue_event_for_a_job_no_pair_lists_is_a_clean_no_op(e: E2E):
    done = e.h.run(e.machine, glue_event("some-other-job", "jr_other"), timeout=120)
    assert done["status"] == "SUCCEEDED", done
    out = json.loads(done["output"])
    assert out["item_count"] == 0 and out["pairs"] == [], out
    assert [f for f, _ in e.watch.calls] == ["recon-lookup"], e.watch.calls
    assert e.h.alerts() == []


def failed_tasks(e: E2E, execution_arn: str) -> list[dict]:
    events = e.h.client("stepfunctions").get_execution_history(executionArn=execution_arn)["events"]
    return [ev["taskFailedEventDetails"] for ev in events if ev["type"] == "TaskFailed"]


def test_s3_unavailable_in_lookup_is_transient_and_retried_by_the_state_machine(e: E2E):
    # More 503s than the SDK's own attempts (aws::MAX_ATTEMPTS = 5): lookup gives up
    # with Transient, the state machine retries it, the second lookup reads the config.
    fault = e.h.inject("GET", "^/" + re.escape(f"{e.h.bucket}/config/recon.toml") + "$", times=5)
    done = e.h.run(e.machine, {"pairs": [PAIR]}, timeout=300)
    assert fault.hits == 5, fault
    assert done["status"] == "SUCCEEDED", done
    assert len(e.watch.calls_of("recon-lookup")) == 2, "the state machine retried lookup"
    failures = failed_tasks(e, done["executionArn"])
    assert [f["error"] for f in failures] == ["Transient"], failures
    assert "config/recon.toml" in failures[0]["cause"], failures[0]
    assert json.loads(done["output"])["status"] == "FAIL"


def test_a_throttled_lambda_is_retried_by_the_state_machine(e: E2E):
    # The interpreter does not retry on its own: each throttle is a failed task that
    # the Merge state's Retry (Lambda.TooManyRequestsException) tries again.
    e.watch.throttle_next = {"recon-merge": 2}
    done = e.h.run(e.machine, {"pairs": [PAIR]}, timeout=300)
    assert done["status"] == "SUCCEEDED", (done, failed_tasks(e, done["executionArn"]))
    assert len(e.watch.calls_of("recon-merge")) == 3, e.watch.calls_of("recon-merge")
    failures = failed_tasks(e, done["executionArn"])
    assert [f["error"] for f in failures] == ["Lambda.TooManyRequestsException"] * 2, failures
    assert json.loads(done["output"])["status"] == "FAIL"
    assert [attributes(a)["status"] for a in e.h.alerts()] == ["FAIL"]


def test_partitions_throttled_past_the_reserved_concurrency_are_retried_not_failed(e: E2E):
    # Three partitions started at once against a reserved concurrency of one: Lambda
    # refuses the invokes past it, and the Hash retry outlasts the throttle. No
    # failure is tolerated, so a partition lost to throttling would fail the Map.
    machine = e.h.machine(max_concurrency=3, tolerated_failure_percentage=0)
    e.h.reserved_concurrency = {"recon-hash": 1}
    done = e.h.run(machine, {"pairs": [PAIR]}, timeout=600)
    assert done["status"] == "SUCCEEDED", (done, failed_tasks(e, done["executionArn"]))
    assert e.h.throttled.get("recon-hash", 0) > 0, "the Map started more hash steps than the reserved concurrency"
    assert e.h.max_in_flight["recon-hash"] == 1, e.h.max_in_flight
    hashed = sorted(p["partition"] for p in e.watch.calls_of("recon-hash"))
    assert hashed == e.partitions, f"each partition hashed once, after its throttles: {hashed}"
    out = json.loads(done["output"])
    report = e.s3_json(out["report_uri"])
    assert report["complete"] is True, report["partitions"]
    assert report["totals"] == e.local["totals"], (report["totals"], e.local["totals"])
    assert out["status"] == "FAIL", "the planted problems, not a throttle"


def test_a_lambda_failing_beyond_its_retries_fails_the_execution_with_the_failure_alert(e: E2E):
    e.watch.throttle_next = {"recon-merge": 100}
    done = e.h.run(e.machine, {"pairs": [PAIR]}, timeout=300)
    assert done["status"] == "FAILED", done
    assert done.get("error") == "Lambda.TooManyRequestsException", done
    assert len(e.watch.calls_of("recon-merge")) == 5, "the first attempt and the 4 retries (MaxAttempts)"
    alerts = e.h.alerts()
    assert [a["Subject"] for a in alerts] == ["glue-recon: reconciliation could not run"], alerts
    assert "Lambda.TooManyRequestsException" in alerts[0]["Message"], alerts[0]["Message"]
    assert attributes(alerts[0])["status"] == "ERROR"


def test_a_corrupt_partition_is_reported_not_reconciled_and_alerted(e: E2E):
    s3 = e.h.client("s3")
    bad_part = e.partitions[1]
    key = f"warehouse/orders_target/{bad_part}/part-00000.snappy.parquet"
    original = s3.get_object(Bucket=DATA_BUCKET, Key=key)["Body"].read()
    s3.put_object(Bucket=DATA_BUCKET, Key=key, Body=b"PAR1 this is not parquet PAR1")
    try:
        done = e.h.run(e.machine, {"pairs": [PAIR]}, timeout=300)
    finally:
        s3.put_object(Bucket=DATA_BUCKET, Key=key, Body=original)
    assert done["status"] == "SUCCEEDED", done
    out = json.loads(done["output"])
    assert out["status"] == "FAIL" and out["complete"] is False, out
    hashed = [p["partition"] for p in e.watch.calls_of("recon-hash")]
    assert sorted(hashed) == e.partitions, f"CorruptParquet is not retried: {hashed}"
    report = e.s3_json(out["report_uri"])
    failed = [p for p in report["partitions"] if p["status"] == "failed"]
    assert [p["partition"] for p in failed] == [bad_part], report["partitions"]
    assert "CorruptParquet" in json.dumps(failed[0]["error"]) and key in json.dumps(failed[0]["error"]), failed
    alerts = e.h.alerts()
    assert len(alerts) == 1 and attributes(alerts[0])["status"] == "FAIL", alerts
    assert bad_part in alerts[0]["Message"], alerts[0]["Message"]


def test_access_denied_on_a_data_file_is_named_and_not_retried(e: E2E):
    """The functions invoked one by one, as the Map would: S3 refuses one object."""
    status, out = e.watch.invoke_raw("recon-lookup", json.dumps({"pairs": [PAIR]}).encode())
    assert status == 200, out
    pointer = json.loads(out)
    manifest = e.s3_json(f"s3://{pointer['bucket']}/{pointer['manifest_key']}")
    item = next(i for i in manifest if i["partition"] == e.partitions[0])
    assert set(item) == {"run_id", "item_id", "pair", "partition", "presence"}, item
    work = e.s3_json(f"s3://{pointer['bucket']}/runs/{pointer['run_id']}/items/{item['item_id']}.json")
    denied = work["source"][0]["uri"].removeprefix("s3://")
    fault = e.h.inject("GET", "^/" + re.escape(denied) + "$", times=100, status=403, code="AccessDenied")
    status, out = e.watch.invoke_raw("recon-hash", json.dumps(item).encode())
    assert status == 500, out
    err = json.loads(out)
    assert err["errorType"] == "AccessDenied", err
    assert f"s3://{denied}" in err["errorMessage"], err
    assert fault.hits == 1, f"AccessDenied is not retried by the SDK: {fault.hits} GETs"
    partial = e.s3_json(f"s3://{pointer['bucket']}/runs/{pointer['run_id']}/partials/{item['item_id']}.json")
    assert partial["error"]["error_type"] == "AccessDenied", partial["error"]


def test_a_merge_of_two_thousand_partitions_not_reconciled_returns_a_bounded_output(e: E2E):
    """recon-merge invoked as the state machine would, after a Map whose every hash
    step failed: its output, with the alert, stays far under the 256 KiB limit."""
    status, out = e.watch.invoke_raw("recon-lookup", json.dumps({"pairs": [PAIR]}).encode())
    assert status == 200, out
    pointer = json.loads(out)
    s3 = e.h.client("s3")
    manifest = e.s3_json(f"s3://{pointer['bucket']}/{pointer['manifest_key']}")
    extra = [
        dict(manifest[0], item_id=f"lost-{i:04d}", partition=f"dt=lost-{i:04d}") for i in range(2000)
    ]
    manifest += extra
    s3.put_object(Bucket=pointer["bucket"], Key=pointer["manifest_key"], Body=json.dumps(manifest).encode())
    pointer["item_count"] = len(manifest)
    status, out = e.watch.invoke_raw("recon-merge", json.dumps(pointer).encode(), timeout=300)
    assert status == 200, out[:2000]
    assert payload_limit_error("recon-merge", "result", out) is None
    assert len(out) < PAYLOAD_LIMIT // 4, len(out)
    merged = json.loads(out)
    assert merged["complete"] is False and merged["status"] == "FAIL", merged["status"]
    message = merged["alert"]["message"]
    assert len(message.encode()) <= 32 * 1024, len(message.encode())
    # No hash step ran: the sample's partitions are not reconciled either.
    total = len(manifest)
    assert f"... and {total - 10} more partitions not reconciled (all {total} are in the report)" in message, message[-3000:]
    report = e.s3_json(merged["report_uri"])
    failed = [p for p in report["partitions"] if p["status"] == "failed"]
    assert len(failed) == total, len(failed)
    assert {p["error"]["error_type"] for p in failed} == {"MissingPartial"}


def test_an_unknown_pair_fails_the_execution_with_the_failure_alert(e: E2E):
    done = e.h.run(e.machine, {"pairs": ["no-such-pair"]}, timeout=120)
    assert done["status"] == "FAILED", done
    assert done.get("error") == "InvalidInput", done
    assert "no-such-pair" in done.get("cause", ""), done
    assert len(e.watch.calls_of("recon-lookup")) == 1, "a data error is not retried"
    alerts = e.h.alerts()
    assert [a["Subject"] for a in alerts] == ["glue-recon: reconciliation could not run"], alerts
    assert "InvalidInput" in alerts[0]["Message"] and "no-such-pair" in alerts[0]["Message"], alerts[0]["Message"]
    assert attributes(alerts[0])["status"] == "ERROR"


def test_every_aws_call_of_the_functions_is_allowed_by_their_roles_in_the_template(e: E2E):
    """Runs last: judges the calls of every scenario above."""
    calls = [c for c in e.h.aws_calls if c.app.startswith("recon-")]
    assert {c.app for c in calls} == {"recon-lookup", "recon-hash", "recon-merge", "recon-trigger"}, {
        c.app for c in calls
    }
    policies = Policies(
        {
            "WorkBucket.Arn": [f"arn:aws:s3:::{e.h.bucket}"],
            "DataBucketNames": [DATA_BUCKET],
            "GlueDatabaseNames": [DB],
            "GlueJobNames": [JOB],
            "ReconcileStateMachine": [e.machine],
            "MaskKeySecret": [e.mask_secret],
        },
        {"HasGlueJobs": True, "HasDataKmsKeys": False},
    )
    denied = policies.denied_calls(calls)
    assert denied == [], "\n".join(sorted(set(denied)))
    # The evaluator can say no: what a role was not given is refused.
    work = f"arn:aws:s3:::{e.h.bucket}"
    assert not policies.allows("recon-hash", Request("s3:PutObject", [f"{work}/reports/x/report.json"], {}))
    assert not policies.allows("recon-lookup", Request("s3:GetObject", [f"{work}/reports/x/report.json"], {}))
    assert not policies.allows("recon-merge", Request("s3:ListBucket", [work], {"s3:prefix": "config/"}))
    assert not policies.allows("recon-hash", Request("s3:GetObject", ["arn:aws:s3:::other-bucket/x.parquet"], {}))
    other_job = "arn:aws:glue:us-east-1:123456789012:job/other-job"
    assert not policies.allows("recon-trigger", Request("glue:GetJobRuns", [other_job], {}))
    assert not policies.allows("recon-lookup", Request("glue:GetJobRun", [other_job], {}))
    glue_calls = {(c.app, c.target) for c in calls if c.target and "JobRun" in c.target}
    assert glue_calls == {("recon-trigger", "AWSGlue.GetJobRuns"), ("recon-lookup", "AWSGlue.GetJobRun")}, glue_calls
