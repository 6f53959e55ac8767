#!/usr/bin/env python3
"""The EventBridge rule of infra/template.yaml against a real-shaped Glue event.

The pattern is taken from the template (with GlueJobNames resolved to sample job
names) and evaluated by moto's event matcher, in process: a rule with the pattern
targets an SQS queue, the event is sent with PutEvents, and it matched if it arrived.
(moto 5.2.5 answers TestEventPattern with an empty response: not implemented, so it
cannot be used.) The sample event, tests/infra/events/glue-job-succeeded.json, has the
shape EventBridge delivers for a "Glue Job State Change".

Runs with plain `python3 tests/infra/test_event_pattern.py` (needs moto and boto3 from
.venv) and under pytest.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import boto3
from moto import mock_aws
from test_definition import load_template

EVENT = json.loads((Path(__file__).resolve().parent / "events" / "glue-job-succeeded.json").read_text())
JOBS = ["load-orders", "load-customers"]


def resolved_pattern(job_names: list[str]) -> dict:
    rule = load_template()["Resources"]["GlueJobSucceededRule"]
    pattern = copy.deepcopy(rule["Properties"]["EventPattern"])
    assert pattern["detail"]["jobName"] == {"Ref": "GlueJobNames"}, pattern
    pattern["detail"]["jobName"] = job_names
    return pattern


def matches(event: dict, job_names: list[str] = JOBS) -> bool:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        events = boto3.client("events", region_name=event["region"])
        sqs = boto3.client("sqs", region_name=event["region"])
        queue = sqs.create_queue(QueueName="matched")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        events.put_rule(Name="glue-job-succeeded", EventPattern=json.dumps(resolved_pattern(job_names)))
        events.put_targets(Rule="glue-job-succeeded", Targets=[{"Id": "q", "Arn": queue_arn}])
        sent = events.put_events(
            Entries=[
                {
                    "Source": event["source"],
                    "DetailType": event["detail-type"],
                    "Detail": json.dumps(event["detail"]),
                    "Resources": event["resources"],
                }
            ]
        )
        assert sent["FailedEntryCount"] == 0, sent
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        assert len(got) <= 1, got
        if got:
            delivered = json.loads(got[0]["Body"])
            assert delivered["detail"] == event["detail"], delivered
        return bool(got)


def with_detail(**changes) -> dict:
    event = copy.deepcopy(EVENT)
    event["detail"].update(changes)
    return event


def test_a_configured_job_that_succeeded_matches():
    assert matches(EVENT)


def test_another_configured_job_matches():
    assert matches(with_detail(jobName="load-customers"))


def test_failed_timeout_and_stopped_runs_do_not_match():
    for state in ("FAILED", "TIMEOUT", "STOPPED", "RUNNING"):
        assert not matches(with_detail(state=state)), state


def test_a_job_not_configured_does_not_match():
    assert not matches(with_detail(jobName="load-orders-v2"))


def test_other_sources_and_detail_types_do_not_match():
    other = copy.deepcopy(EVENT)
    other["detail-type"] = "Glue Crawler State Change"
    assert not matches(other)
    other = copy.deepcopy(EVENT)
    other["source"] = "custom.glue"
    assert not matches(other)


def test_the_rule_targets_the_trigger_function_with_retries_and_a_dead_letter_queue():
    resources = load_template()["Resources"]
    rule = resources["GlueJobSucceededRule"]
    assert rule.get("Condition") == "HasGlueJobs", "no rule when no Glue job is configured"
    (target,) = rule["Properties"]["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": "TriggerFunction.Arn"}, target
    assert target["DeadLetterConfig"]["Arn"] == {"Fn::GetAtt": "TriggerDeadLetterQueue.Arn"}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 1
    permission = resources["GlueJobSucceededPermission"]["Properties"]
    assert permission["Principal"] == "events.amazonaws.com"
    assert permission["SourceArn"] == {"Fn::GetAtt": "GlueJobSucceededRule.Arn"}, "scope the permission to the rule"
