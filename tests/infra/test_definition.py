#!/usr/bin/env python3
"""Static checks of statemachine/reconcile.asl.json against infra/template.yaml.

What asl-validator and cfn-lint cannot see: that the definition and the template agree
(every ${...} placeholder has a DefinitionSubstitutions entry and vice versa), that
every transition target exists in its own scope, that every Lambda task retries the
transient errors (and only those) with backoff and jitter, that the data-flow fields
the states read are the ones docs/contracts.md promises, and that the definition
stays within what the local emulator (moto) can execute.

Runs with plain `python3 tests/infra/test_definition.py` (needs PyYAML, which
cfn-lint brings) and under pytest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEFINITION = ROOT / "statemachine" / "reconcile.asl.json"
TEMPLATE = ROOT / "infra" / "template.yaml"
SAMCONFIG = ROOT / "infra" / "samconfig.toml"
MAKEFILE = ROOT / "Makefile"
STATE_MACHINE_NAME = "${AWS::StackName}-reconcile"

LAMBDA_INVOKE = "arn:aws:states:::lambda:invoke"
SNS_PUBLISH = "arn:aws:states:::sns:publish"
TRANSIENT_ERRORS = {
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
    "Lambda.ClientExecutionTimeoutException",
    "Transient",
}
# Our own error types (docs/contracts.md) other than Transient: retrying them repeats
# the same failure, so no Retry may name them (nor a catch-all that would include them).
DATA_ERRORS = {
    "InvalidConfig",
    "InvalidInput",
    "TableNotFound",
    "CorruptParquet",
    "SchemaMismatch",
    "AccessDenied",
    "AwsSetup",
    "LocalStorage",
    "Io",
    "WriteFailed",
}
CATCH_ALL_RETRY = {"States.ALL", "States.TaskFailed"}
# Field names of docs/contracts.md the definition relies on.
LOOKUP_OUTPUT_FIELDS = {"run_id", "bucket", "manifest_key", "item_count", "pairs", "pair_count", "trigger"}
MERGE_OUTPUT_FIELDS = {"run_id", "status", "complete", "report_uri", "html_uri", "alert"}
ALERT_FIELDS = {"subject", "message", "attributes"}
ALERT_ATTRIBUTES = {"status", "pair"}


class _CfnLoader(yaml.SafeLoader):
    """A YAML loader that keeps CloudFormation short-form tags as {'Fn::X': value}."""


def _cfn_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    return {name: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def load_definition_text() -> str:
    return DEFINITION.read_text(encoding="utf-8")


def load_definition() -> dict:
    return json.loads(load_definition_text())


def load_template() -> dict:
    return yaml.load(TEMPLATE.read_text(encoding="utf-8"), Loader=_CfnLoader)


def state_machine_resource(template: dict) -> dict:
    machines = [
        r for r in template["Resources"].values() if r["Type"] == "AWS::Serverless::StateMachine"
    ]
    assert len(machines) == 1, f"expected one AWS::Serverless::StateMachine, found {len(machines)}"
    return machines[0]


def scopes(machine: dict, path: str = "top level"):
    """Yield (description, states-language object) for the machine and every nested one."""
    yield path, machine
    for name, state in machine["States"].items():
        for key in ("ItemProcessor", "Iterator"):
            if key in state:
                yield from scopes(state[key], f"{name}.{key}")
        for i, branch in enumerate(state.get("Branches", [])):
            yield from scopes(branch, f"{name}.Branches[{i}]")


def all_states(machine: dict):
    for _, scope in scopes(machine):
        yield from scope["States"].items()


def transitions(state: dict):
    """Every state name this state can go to."""
    if "Next" in state:
        yield "Next", state["Next"]
    if "Default" in state:
        yield "Default", state["Default"]
    for i, choice in enumerate(state.get("Choices", [])):
        yield f"Choices[{i}].Next", choice["Next"]
    for i, catcher in enumerate(state.get("Catch", [])):
        yield f"Catch[{i}].Next", catcher["Next"]


def walk(value, path=""):
    """Yield (path, key, value) for every key of every object in a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path, k, v
            yield from walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, f"{path}[{i}]")


# ------------------------------------------------------------------- substitutions


def test_every_placeholder_has_a_substitution_and_vice_versa():
    placeholders = set(re.findall(r"\$\{([^}]+)\}", load_definition_text()))
    substitutions = set(state_machine_resource(load_template())["Properties"]["DefinitionSubstitutions"])
    assert placeholders, "the definition has no ${...} placeholders at all"
    missing = placeholders - substitutions
    unused = substitutions - placeholders
    assert not missing, f"placeholders without a DefinitionSubstitutions entry: {sorted(missing)}"
    assert not unused, f"DefinitionSubstitutions entries the definition never uses: {sorted(unused)}"


def test_template_points_at_this_definition():
    props = state_machine_resource(load_template())["Properties"]
    uri = props["DefinitionUri"]
    assert (TEMPLATE.parent / uri).resolve() == DEFINITION, f"DefinitionUri {uri} is not {DEFINITION}"
    assert "Definition" not in props, "both Definition and DefinitionUri are set"


def test_substituted_definition_is_valid_json_with_numeric_map_settings():
    """CloudFormation substitutes text; the result must still be JSON, and the Map
    settings (strings after substitution) must become numbers via States.StringToJson."""
    text = load_definition_text()
    values = {
        "LookupFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:lookup",
        "HashFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:hash",
        "MergeFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:merge",
        "AlertTopicArn": "arn:aws:sns:us-east-1:123456789012:alerts",
        "MaxConcurrency": "20",
        "ToleratedFailurePercentage": "100",
        "WorkBucketName": "recon-work",
    }
    for name in re.findall(r"\$\{([^}]+)\}", text):
        assert name in values, f"no sample value for ${{{name}}}: add one to this test"
    substituted = re.sub(r"\$\{([^}]+)\}", lambda m: values[m.group(1)], text)
    definition = json.loads(substituted)
    settings = definition["States"]["Lookup"]["ResultSelector"]["settings"]
    for key, expr in settings.items():
        m = re.fullmatch(r"States\.StringToJson\('([^']*)'\)", expr)
        assert m, f"settings.{key} is {expr!r}, expected States.StringToJson('<number>')"
        assert isinstance(json.loads(m.group(1)), int), f"settings.{key}: {m.group(1)!r} is not an integer"


def test_numeric_substitutions_come_from_bounded_number_parameters():
    template = load_template()
    subs = state_machine_resource(template)["Properties"]["DefinitionSubstitutions"]
    for name, (low, high) in {"MaxConcurrency": (1, 10000), "ToleratedFailurePercentage": (0, 100)}.items():
        ref = subs[name]
        assert ref == {"Ref": name}, f"{name} substitution is {ref!r}, expected !Ref {name}"
        param = template["Parameters"][name]
        assert param["Type"] == "Number", f"parameter {name} must be a Number"
        assert param.get("MinValue") == low and param.get("MaxValue") == high, (
            f"parameter {name} must be bounded to [{low}, {high}] (Step Functions rejects other values)"
        )


# ------------------------------------------------------------------- structure


def test_start_at_exists_in_every_scope():
    for where, scope in scopes(load_definition()):
        assert scope["StartAt"] in scope["States"], f"{where}: StartAt {scope['StartAt']!r} is not a state"


def test_every_transition_target_exists_in_its_scope():
    for where, scope in scopes(load_definition()):
        for name, state in scope["States"].items():
            for field, target in transitions(state):
                assert target in scope["States"], f"{where}: {name}.{field} -> {target!r} is not a state"


def test_every_state_is_reachable():
    for where, scope in scopes(load_definition()):
        seen, todo = set(), [scope["StartAt"]]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(t for _, t in transitions(scope["States"][name]))
        unreachable = set(scope["States"]) - seen
        assert not unreachable, f"{where}: unreachable states {sorted(unreachable)}"


def test_every_state_ends_or_moves_on():
    for name, state in all_states(load_definition()):
        kind = state["Type"]
        if kind in ("Succeed", "Fail"):
            assert "Next" not in state and "End" not in state, f"{name}: {kind} takes neither Next nor End"
        elif kind == "Choice":
            assert "Default" in state, f"{name}: a Choice without Default fails on an unexpected value"
        else:
            assert ("Next" in state) != bool(state.get("End")), f"{name}: needs exactly one of Next or End: true"


def test_jsonpath_only_and_no_features_moto_lacks():
    definition = load_definition()
    for path, key, value in walk(definition):
        assert not (key == "QueryLanguage" and value != "JSONPath"), f"{path}: QueryLanguage {value!r}"
        assert key not in ("Arguments", "Output", "Assign"), f"{path}: {key} is JSONata/variables syntax"
        assert key != "ItemBatcher", f"{path}: {key} is not executed by moto"
        if isinstance(value, str):
            assert "{%" not in value, f"{path}.{key}: JSONata expression {value!r}"


# ------------------------------------------------------------------- retries and catches


def lambda_tasks(definition: dict):
    for name, state in all_states(definition):
        if state["Type"] == "Task" and state["Resource"].startswith("arn:aws:states:::lambda:"):
            yield name, state


def test_there_are_three_lambda_tasks_using_the_invoke_integration():
    tasks = dict(lambda_tasks(load_definition()))
    assert set(tasks) == {"Lookup", "Hash", "Merge"}, f"Lambda tasks: {sorted(tasks)}"
    for name, state in tasks.items():
        assert state["Resource"] == LAMBDA_INVOKE, f"{name}: use {LAMBDA_INVOKE}"
        params = state["Parameters"]
        assert re.fullmatch(r"\$\{\w+FunctionArn\}", params["FunctionName"]), f"{name}: FunctionName {params['FunctionName']!r}"
        assert "Payload.$" in params, f"{name}: no Payload.$"


def test_every_lambda_task_retries_the_transient_errors_with_backoff_and_jitter():
    for name, state in lambda_tasks(load_definition()):
        retriers = state.get("Retry", [])
        covering = [r for r in retriers if TRANSIENT_ERRORS <= set(r["ErrorEquals"])]
        assert covering, f"{name}: no Retry names all of {sorted(TRANSIENT_ERRORS)}"
        r = covering[0]
        assert r.get("IntervalSeconds") == 2, f"{name}: IntervalSeconds {r.get('IntervalSeconds')}"
        assert r.get("BackoffRate") == 2, f"{name}: BackoffRate {r.get('BackoffRate')}"
        assert 3 <= r.get("MaxAttempts", 3) <= 6, f"{name}: MaxAttempts {r.get('MaxAttempts')}"
        assert r.get("JitterStrategy") == "FULL", f"{name}: JitterStrategy {r.get('JitterStrategy')}"


def test_no_lambda_retry_repeats_a_data_error():
    for name, state in lambda_tasks(load_definition()):
        for r in state.get("Retry", []):
            named = set(r["ErrorEquals"])
            assert not named & DATA_ERRORS, f"{name}: retries data errors {sorted(named & DATA_ERRORS)}"
            assert not named & CATCH_ALL_RETRY, f"{name}: {sorted(named & CATCH_ALL_RETRY)} would retry data errors too"


def test_every_documented_error_type_is_either_retried_or_a_data_error():
    text = (ROOT / "docs" / "contracts.md").read_text()
    sentence = re.search(r"Error types \(`errorType` of a failed invocation\):(.*?)\.\n", text, re.S)
    assert sentence, "docs/contracts.md lost its list of error types"
    documented = set(re.findall(r"`(\w+)`", sentence.group(1)))
    assert documented == DATA_ERRORS | {"Transient"}, (
        f"documented {sorted(documented)} vs tested {sorted(DATA_ERRORS | {'Transient'})}"
    )


def test_lookup_map_and_merge_catch_everything_into_the_failure_alert():
    definition = load_definition()
    states = definition["States"]
    for name in ("Lookup", "HashPartitions", "Merge"):
        catchers = states[name].get("Catch", [])
        assert any(
            c["ErrorEquals"] == ["States.ALL"] and c.get("ResultPath") == "$.error" and c["Next"] == "NotifyFailure"
            for c in catchers
        ), f"{name}: needs Catch States.ALL, ResultPath $.error -> NotifyFailure"
    notify = states["NotifyFailure"]
    assert notify["Resource"] == SNS_PUBLISH
    assert notify["Parameters"]["TopicArn"] == "${AlertTopicArn}"
    assert notify["Parameters"]["Subject"] == "glue-recon: reconciliation could not run"
    message = notify["Parameters"]["Message.$"]
    assert message.startswith("States.Format(") and "$.error.Error" in message and "$.error.Cause" in message
    assert notify.get("ResultPath") is None and "ResultPath" in notify, "NotifyFailure must keep $.error (ResultPath null)"
    assert states[notify["Next"]]["Type"] == "Fail", "the failure alert must end in a Fail state"


def test_sns_subjects_fit_the_limit():
    for name, state in all_states(load_definition()):
        subject = state.get("Parameters", {}).get("Subject")
        if subject is not None:
            assert len(subject) <= 100, f"{name}: SNS Subject longer than 100 characters"


# ------------------------------------------------------------------- data flow


def test_the_map_reads_the_manifest_and_drops_the_results():
    states = load_definition()["States"]
    m = states["HashPartitions"]
    assert m["Type"] == "Map"
    assert m["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    reader = m["ItemReader"]
    assert reader["Resource"] == "arn:aws:states:::s3:getObject"
    assert reader["ReaderConfig"] == {"InputType": "JSON"}
    assert reader["Parameters"] == {"Bucket.$": "$.lookup.bucket", "Key.$": "$.lookup.manifest_key"}
    assert "ResultPath" in m and m["ResultPath"] is None, "the Map's result array must not be carried (ResultPath null)"
    assert m["MaxConcurrencyPath"] == "$.settings.max_concurrency"
    assert m["ToleratedFailurePercentagePath"] == "$.settings.tolerated_failure_percentage"
    hash_task = m["ItemProcessor"]["States"]["Hash"]
    assert hash_task["Parameters"]["Payload.$"] == "$", "recon-hash takes one manifest item as it is"
    assert "OutputPath" in hash_task and hash_task["OutputPath"] is None, "child outputs must stay {}"


def test_fields_read_from_the_lambda_outputs_are_the_contract_ones():
    states = load_definition()["States"]
    assert states["Lookup"]["ResultSelector"]["lookup.$"] == "$.Payload"
    used_lookup = set()
    for _, _, value in walk(states):
        if isinstance(value, str):
            used_lookup |= set(re.findall(r"\$\.lookup\.(\w+)", value))
    assert used_lookup <= LOOKUP_OUTPUT_FIELDS, f"lookup fields not in the contract: {used_lookup - LOOKUP_OUTPUT_FIELDS}"

    merge = states["Merge"]
    assert merge["Parameters"]["Payload.$"] == "$.lookup", "recon-merge takes the lookup output"
    assert merge["ResultPath"] == "$.merge"
    selected = {k.removesuffix(".$") for k in merge["ResultSelector"]}
    assert selected == MERGE_OUTPUT_FIELDS, f"Merge ResultSelector {sorted(selected)} != contract {sorted(MERGE_OUTPUT_FIELDS)}"
    for k, v in merge["ResultSelector"].items():
        assert v == f"$.Payload.{k.removesuffix('.$')}", f"Merge ResultSelector {k}: {v}"

    publish = states["PublishAlert"]["Parameters"]
    assert publish["Subject.$"] == "$.merge.alert.subject" and publish["Message.$"] == "$.merge.alert.message"
    attrs = publish["MessageAttributes"]
    assert set(attrs) == ALERT_ATTRIBUTES
    assert attrs["status"] == {"DataType": "String", "StringValue.$": "$.merge.alert.attributes.status"}, attrs
    assert attrs["pair"] == {"DataType": "String.Array", "StringValue.$": "$.merge.alert.attributes.pair"}, attrs
    assert {"subject", "message"} <= ALERT_FIELDS


def test_choices_route_nothing_to_do_and_pass_quietly():
    states = load_definition()["States"]
    first = states["AnythingToReconcile"]
    assert first["Choices"] == [{"Variable": "$.lookup.item_count", "NumericEquals": 0, "Next": "NothingToReconcile"}]
    assert first["Default"] == "HashPartitions"
    assert states["NothingToReconcile"]["Type"] == "Succeed"
    alert = states["NeedsAlert"]
    assert alert["Choices"] == [{"Variable": "$.merge.status", "StringEquals": "PASS", "Next": "Done"}]
    assert alert["Default"] == "PublishAlert", "anything but PASS (WARN, FAIL, unexpected) must alert"
    assert states["PublishAlert"]["Next"] == "Done" and states["Done"]["Type"] == "Succeed"


# ------------------------------------------------------------------- template hygiene


def test_every_checkov_skip_is_justified():
    skips = 0
    for name, resource in load_template()["Resources"].items():
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", []):
            skips += 1
            assert re.fullmatch(r"CKV2?_AWS_\d+", skip.get("id", "")), f"{name}: skip without a check id: {skip}"
            comment = skip.get("comment", "")
            assert len(comment.split()) >= 8, f"{name}: skip {skip['id']} needs a real justification, got {comment!r}"
    assert skips, "no checkov skips found: the Metadata layout changed?"


def test_every_function_is_a_cargo_lambda_binary_with_its_own_role_and_log_group():
    resources = load_template()["Resources"]
    functions = {n: r for n, r in resources.items() if r["Type"] == "AWS::Serverless::Function"}
    binaries = {r["Metadata"]["BuildProperties"]["Binary"] for r in functions.values()}
    assert binaries == {"recon-trigger", "recon-lookup", "recon-hash", "recon-merge"}, binaries
    roles = set()
    for name, r in functions.items():
        assert r["Metadata"]["BuildMethod"] == "rust-cargolambda", name
        props = r["Properties"]
        role = props["Role"]["Fn::GetAtt"].split(".")[0]
        assert role not in roles, f"{name} shares role {role}"
        roles.add(role)
        assert resources[props["LoggingConfig"]["LogGroup"]["Ref"]]["Type"] == "AWS::Logs::LogGroup", name
    globals_ = load_template()["Globals"]["Function"]
    assert globals_["Runtime"] == "provided.al2023" and globals_["Handler"] == "bootstrap"
    assert globals_["Architectures"] == [{"Ref": "Architecture"}]


def test_function_environment_follows_the_contract():
    resources = load_template()["Resources"]
    env = {
        r["Metadata"]["BuildProperties"]["Binary"]: set(r["Properties"].get("Environment", {}).get("Variables", {}))
        for r in resources.values()
        if r["Type"] == "AWS::Serverless::Function"
    }
    assert env["recon-trigger"] == {"STATE_MACHINE_ARN", "SWEEP_GLUE_JOBS", "SWEEP_LOOKBACK_HOURS"}, env["recon-trigger"]
    for fn in ("recon-lookup", "recon-hash", "recon-merge"):
        assert {"RECON_BUCKET", "RECON_CONFIG_URI"} <= env[fn], (fn, env[fn])
    assert "RUST_LOG" in load_template()["Globals"]["Function"]["Environment"]["Variables"]


# ------------------------------------------------------------------- issue 35


def resources_of_type(template: dict, kind: str) -> dict:
    return {n: r for n, r in template["Resources"].items() if r["Type"] == kind}


def role_statements(template: dict, role: str) -> dict:
    """The statements of a role's inline policies by Sid (a conditional statement's
    true branch counts)."""
    out = {}
    for policy in template["Resources"][role]["Properties"]["Policies"]:
        for s in policy["PolicyDocument"]["Statement"]:
            if "Fn::If" in s:
                s = s["Fn::If"][1]
            out[s["Sid"]] = s
    return out


def as_list(value):
    return value if isinstance(value, list) else [value]


def test_sam_build_opts_into_beta_features_for_cargo_lambda():
    """rust-cargolambda is a beta build method: without the opt-in a non-interactive
    `sam build` stops at a prompt (issue 35, item 1)."""
    import tomllib

    config = tomllib.loads(SAMCONFIG.read_text(encoding="utf-8"))
    build = config["default"]["build"]["parameters"]
    assert build.get("beta_features") is True, f"[default.build.parameters] needs beta_features = true, has {build}"
    builds = [line for line in MAKEFILE.read_text(encoding="utf-8").splitlines() if "sam build" in line and line.startswith("\t")]
    assert builds, "the Makefile runs no `sam build`"
    for line in builds:
        assert "--config-file" in line and "$(SAM_CONFIG)" in line, f"`sam build` must read {SAMCONFIG.name}: {line.strip()}"


def test_hash_throttling_has_a_first_retrier_that_outlasts_a_throttle():
    hash_task = load_definition()["States"]["HashPartitions"]["ItemProcessor"]["States"]["Hash"]
    first = hash_task["Retry"][0]
    assert first == {
        "ErrorEquals": ["Lambda.TooManyRequestsException"],
        "IntervalSeconds": 5,
        "BackoffRate": 2,
        "MaxAttempts": 12,
        "MaxDelaySeconds": 120,
        "JitterStrategy": "FULL",
    }, first
    # The budget: the sum of the (uncapped-by-jitter) waits is about 20 minutes.
    budget = sum(min(5 * 2**i, 120) for i in range(12))
    assert 15 * 60 <= budget <= 25 * 60, budget
    assert any(TRANSIENT_ERRORS <= set(r["ErrorEquals"]) for r in hash_task["Retry"][1:]), "the general retrier must follow"


def test_hash_reserved_concurrency_is_a_parameter_zero_meaning_unreserved():
    template = load_template()
    param = template["Parameters"]["HashReservedConcurrency"]
    assert param["Type"] == "Number" and param["Default"] == 0 and param["MinValue"] == 0, param
    assert template["Conditions"]["HasHashReservedConcurrency"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "HashReservedConcurrency"}, 0]}]
    }
    hash_fn = template["Resources"]["HashFunction"]["Properties"]
    assert hash_fn["ReservedConcurrentExecutions"] == {
        "Fn::If": ["HasHashReservedConcurrency", {"Ref": "HashReservedConcurrency"}, {"Ref": "AWS::NoValue"}]
    }, hash_fn.get("ReservedConcurrentExecutions")
    deploy = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert "HashReservedConcurrency" in deploy and "MaxConcurrency" in deploy


def test_state_machine_role_covers_distributed_map_child_executions():
    template = load_template()
    assert state_machine_resource(template)["Properties"]["Name"] == {"Fn::Sub": STATE_MACHINE_NAME}
    label = load_definition()["States"]["HashPartitions"]["Label"]
    prefix = "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:"
    wanted = {f"{prefix}{STATE_MACHINE_NAME}:*", f"{prefix}{STATE_MACHINE_NAME}/{label}:*"}
    statements = role_statements(template, "StateMachineRole").values()
    for action in ("states:DescribeExecution", "states:StopExecution", "states:RedriveExecution"):
        granted = set()
        for s in statements:
            if action in as_list(s["Action"]):
                granted |= {r["Fn::Sub"] for r in as_list(s["Resource"]) if isinstance(r, dict) and "Fn::Sub" in r}
        assert wanted <= granted, f"{action}: {sorted(wanted - granted)} not granted"


def test_alert_publishing_failures_end_in_fail_states():
    states = load_definition()["States"]
    catch = states["PublishAlert"]["Catch"]
    assert [c["ErrorEquals"] for c in catch] == [["States.ALL"]] and catch[0]["Next"] == "AlertNotSent", catch
    fail = states["AlertNotSent"]
    assert fail["Type"] == "Fail" and fail["Error"] == "AlertNotSent"
    assert "could not be published" in fail["Cause"] and "S3" in fail["Cause"], fail["Cause"]
    catch = states["NotifyFailure"]["Catch"]
    assert [c["ErrorEquals"] for c in catch] == [["States.ALL"]] and catch[0]["Next"] == "ReconciliationFailed", catch
    assert catch[0]["ResultPath"] not in ("$", "$.error"), "the publish error must not replace the run's $.error"


def test_pair_attribute_is_a_string_array_in_both_alerts():
    states = load_definition()["States"]
    assert states["PublishAlert"]["Parameters"]["MessageAttributes"]["pair"]["DataType"] == "String.Array"
    pair = states["NotifyFailure"]["Parameters"]["MessageAttributes"]["pair"]
    assert pair["DataType"] == "String.Array", pair
    value = json.loads(pair["StringValue"])
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), pair


def test_executions_failed_alarm_notifies_the_alert_topic():
    template = load_template()
    alarms = resources_of_type(template, "AWS::CloudWatch::Alarm")
    assert sorted(alarms) == ["ExecutionsFailedAlarm", "PairsFailedAlarm"], alarms
    a = alarms["ExecutionsFailedAlarm"]["Properties"]
    assert (a["Namespace"], a["MetricName"], a["Statistic"]) == ("AWS/States", "ExecutionsFailed", "Sum")
    assert a["Dimensions"] == [{"Name": "StateMachineArn", "Value": {"Ref": "ReconcileStateMachine"}}]
    assert a["Period"] == 300 and a["Threshold"] == 1 and a["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert a["TreatMissingData"] == "notBreaching"
    assert a["AlarmActions"] == [{"Ref": "AlertTopic"}]
    # The topic is encrypted with ReconKey: CloudWatch needs the key and the topic policy.
    key = template["Resources"]["ReconKey"]["Properties"]["KeyPolicy"]["Statement"]
    cw = [s for s in key if s["Principal"].get("Service") == "cloudwatch.amazonaws.com"]
    assert cw and {"kms:Decrypt", "kms:GenerateDataKey*"} <= set(cw[0]["Action"]), cw
    policies = resources_of_type(template, "AWS::SNS::TopicPolicy")
    assert len(policies) == 1
    policy = next(iter(policies.values()))["Properties"]
    assert policy["Topics"] == [{"Ref": "AlertTopic"}]
    pub = [s for s in policy["PolicyDocument"]["Statement"] if s["Principal"].get("Service") == "cloudwatch.amazonaws.com"]
    assert pub and pub[0]["Action"] == "sns:Publish", pub
    cond = pub[0]["Condition"]
    assert "aws:SourceArn" in cond["ArnLike"] and "aws:SourceAccount" in cond["StringEquals"], cond


def test_the_map_writes_its_results_to_s3_under_the_run():
    definition = load_definition()
    m = definition["States"]["HashPartitions"]
    # Not paths into the state: moto evaluates ResultWriter's Parameters against the
    # Map's result array, AWS against its input; the substitution and the context
    # object mean the same in both.
    assert m["ResultWriter"] == {
        "Resource": "arn:aws:states:::s3:putObject",
        "Parameters": {"Bucket": "${WorkBucketName}", "Prefix.$": "States.Format('runs/{}/map-results', $$.Execution.Name)"},
    }, m.get("ResultWriter")
    subs = state_machine_resource(load_template())["Properties"]["DefinitionSubstitutions"]
    assert subs["WorkBucketName"] == {"Ref": "WorkBucket"}, subs
    assert "lacks ResultWriter" not in m["Comment"]
    template = load_template()
    statements = role_statements(template, "StateMachineRole")
    s = statements["ResultWriterWritesMapResults"]
    assert "s3:PutObject" in s["Action"] and s["Resource"] == {"Fn::Sub": "${WorkBucket.Arn}/runs/*/map-results/*"}, s
    key = [s for s in statements.values() if s["Resource"] == {"Fn::GetAtt": "ReconKey.Arn"}]
    assert key and {"kms:GenerateDataKey", "kms:Decrypt"} <= set(key[0]["Action"]), key


def test_the_masking_key_is_a_generated_encrypted_secret_only_the_hash_function_reads():
    template = load_template()
    secret = template["Resources"]["MaskKeySecret"]
    assert secret["Type"] == "AWS::SecretsManager::Secret", secret
    props = secret["Properties"]
    assert props["KmsKeyId"] == {"Fn::GetAtt": "ReconKey.Arn"}, props
    assert props["GenerateSecretString"]["PasswordLength"] >= 32, props
    env = template["Resources"]["HashFunction"]["Properties"]["Environment"]["Variables"]
    assert env["RECON_MASK_KEY_SECRET"] == {"Ref": "MaskKeySecret"}, env
    readers = []
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::IAM::Role" or "Policies" not in resource["Properties"]:
            continue
        for sid, statement in role_statements(template, name).items():
            if any(a.startswith("secretsmanager:") for a in as_list(statement["Action"])):
                readers.append((name, sid, statement["Action"], statement["Resource"]))
    assert readers == [("HashRole", "ReadMaskKey", "secretsmanager:GetSecretValue", {"Ref": "MaskKeySecret"})], readers
    common = (ROOT / "functions" / "common" / "src" / "lib.rs").read_text(encoding="utf-8")
    assert '"RECON_MASK_KEY_SECRET"' in common, "recon-functions no longer reads RECON_MASK_KEY_SECRET"


def test_the_pairs_failed_alarm_watches_the_namespace_the_merge_function_writes():
    template = load_template()
    env = template["Resources"]["MergeFunction"]["Properties"]["Environment"]["Variables"]
    namespace = {"Fn::Sub": "glue-recon/${AWS::StackName}"}
    assert env["RECON_METRICS_NAMESPACE"] == namespace, env
    alarm = template["Resources"]["PairsFailedAlarm"]["Properties"]
    assert alarm["Namespace"] == namespace and alarm["MetricName"] == "PairsFailed", alarm
    assert "Dimensions" not in alarm, "PairsFailed is published without dimensions"
    assert alarm["AlarmActions"] == [{"Ref": "AlertTopic"}], alarm
    assert alarm["Threshold"] == 1 and alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold", alarm
    metrics = (ROOT / "crates" / "history" / "src" / "metrics.rs").read_text(encoding="utf-8")
    assert '("PairsFailed", "Count"' in metrics, "the merge no longer writes PairsFailed"


def test_hash_role_lists_the_same_data_buckets_it_reads():
    statements = role_statements(load_template(), "HashRole")
    assert statements["ListDataBuckets"]["Action"] == "s3:ListBucket"
    listed = [r["Fn::Sub"] for r in statements["ListDataBuckets"]["Resource"]]
    read = [r["Fn::Sub"] for r in statements["ReadDataObjects"]["Resource"]]
    assert [[arn.removesuffix("/*"), sel] for arn, sel in read] == [list(x) for x in listed], (listed, read)


def test_merge_role_may_only_update_tables_of_the_read_databases_and_names_the_ledger_database():
    template = load_template()
    statements = role_statements(template, "MergeRole")
    for sid, s in statements.items():
        actions = as_list(s["Action"])
        glue = [a for a in actions if a.startswith("glue:")]
        if sid == "WriteTargetTableStatus":
            assert glue == ["glue:GetTable", "glue:UpdateTable"], actions
        else:
            assert not glue, f"MergeRole {sid}: unused Glue grant {actions}"
    # catalog_status writes only to tables of the databases lookup may read.
    lookup = role_statements(template, "LookupRole")["ReadGlueCatalog"]["Resource"]
    assert statements["WriteTargetTableStatus"]["Resource"] == lookup
    env = template["Resources"]["MergeFunction"]["Properties"]["Environment"]["Variables"]
    # The alert's Athena statements name the database the stack was deployed with.
    assert env["RECON_LEDGER_DATABASE"] == {"Ref": "LedgerDatabaseName"}, env
    assert "RECON_LEDGER_TABLE" not in env, env
    common = (ROOT / "functions" / "common" / "src" / "lib.rs").read_text(encoding="utf-8")
    assert '"RECON_LEDGER_DATABASE"' in common, "recon-functions no longer reads RECON_LEDGER_DATABASE"


def test_merge_puts_its_completion_events_on_the_default_bus_only():
    template = load_template()
    st = role_statements(template, "MergeRole")["PutCompletionEvents"]
    assert st["Action"] == "events:PutEvents", st
    assert st["Resource"] == {
        "Fn::Sub": "arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/default"
    }, st
    assert st["Condition"] == {"StringEquals": {"events:source": "glue-recon"}}, st
    env = template["Resources"]["MergeFunction"]["Properties"]["Environment"]["Variables"]
    assert env["RECON_EVENT_BUS"] == "default", env
    for role in ("TriggerRole", "LookupRole", "HashRole", "StateMachineRole"):
        for sid, s in role_statements(template, role).items():
            assert not [a for a in as_list(s["Action"]) if a.startswith("events:Put")], f"{role} {sid}"
    common = (ROOT / "functions" / "common" / "src" / "lib.rs").read_text(encoding="utf-8")
    assert '"RECON_EVENT_BUS"' in common, "recon-functions no longer reads RECON_EVENT_BUS"
    completion = (ROOT / "crates" / "history" / "src" / "completion.rs").read_text(encoding="utf-8")
    assert 'SOURCE: &str = "glue-recon"' in completion, "the events' source changed; change the condition too"


def test_work_bucket_removes_expired_delete_markers():
    rules = load_template()["Resources"]["WorkBucket"]["Properties"]["LifecycleConfiguration"]["Rules"]
    markers = [r for r in rules if r.get("ExpiredObjectDeleteMarker") is True]
    assert markers, "no lifecycle rule has ExpiredObjectDeleteMarker: true"
    assert "NoncurrentVersionExpiration" in markers[0], "versioned bucket: the rule must also expire noncurrent versions"
    versioning = load_template()["Resources"]["WorkBucket"]["Properties"]["VersioningConfiguration"]
    assert versioning["Status"] == "Enabled"


def test_deploy_doc_says_data_buckets_are_in_the_stacks_region():
    deploy = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert re.search(r"data buckets? must be in the stack's region", deploy, re.I), "docs/deploy.md: say where the data buckets must be"
    assert "beta_features" in deploy


def glue_job_slots() -> list[dict]:
    """The five slots of GlueJobNames as job ARNs (as the database and bucket lists)."""
    spread = {"Fn::Sub": ["${L},${L},${L},${L},${L}", {"L": {"Fn::Join": [",", {"Ref": "GlueJobNames"}]}}]}
    return [
        {
            "Fn::Sub": [
                "arn:${AWS::Partition}:glue:${AWS::Region}:${AWS::AccountId}:job/${J}",
                {"J": {"Fn::Select": [i, {"Fn::Split": [",", spread]}]}},
            ]
        }
        for i in range(5)
    ]


def test_the_sweep_schedule_targets_the_trigger_with_the_dead_letter_queue_and_can_be_disabled():
    """Issue 35, item 10: Glue's job events are best-effort; a schedule sweeps."""
    template = load_template()
    param = template["Parameters"]["SweepSchedule"]
    assert param["Type"] == "String" and param["Default"] == "rate(1 hour)", param
    pattern = re.compile(param["AllowedPattern"])
    for ok in ("", "rate(1 hour)", "rate(15 minutes)", "cron(0 * * * ? *)"):
        assert pattern.fullmatch(ok), ok
    for bad in ("1 hour", "rate 1 hour", "every(1 hour)"):
        assert not pattern.fullmatch(bad), bad
    conditions = template["Conditions"]
    assert conditions["HasSweepSchedule"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "SweepSchedule"}, ""]}]}
    assert conditions["Sweeps"] == {"Fn::And": [{"Fn::Condition": "HasGlueJobs"}, {"Fn::Condition": "HasSweepSchedule"}]}
    resources = template["Resources"]
    rules = {n: r for n, r in resources_of_type(template, "AWS::Events::Rule").items() if "ScheduleExpression" in r["Properties"]}
    assert list(rules) == ["SweepScheduleRule"], rules
    rule = rules["SweepScheduleRule"]
    assert rule["Condition"] == "Sweeps", "no schedule without jobs, or with SweepSchedule empty"
    assert rule["Properties"]["ScheduleExpression"] == {"Ref": "SweepSchedule"}
    (target,) = rule["Properties"]["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": "TriggerFunction.Arn"}, target
    assert target["DeadLetterConfig"]["Arn"] == {"Fn::GetAtt": "TriggerDeadLetterQueue.Arn"}, target
    assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 1, target
    permissions = [
        r for r in resources_of_type(template, "AWS::Lambda::Permission").values()
        if r["Properties"]["SourceArn"] == {"Fn::GetAtt": "SweepScheduleRule.Arn"}
    ]
    assert len(permissions) == 1, "a permission scoped to the schedule rule's ARN"
    perm = permissions[0]
    assert perm.get("Condition") == "Sweeps" and perm["Properties"]["Principal"] == "events.amazonaws.com", perm
    assert perm["Properties"]["FunctionName"] == {"Ref": "TriggerFunction"}, perm
    dlq = resources["TriggerDeadLetterQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    sources = as_list(dlq["Condition"]["ArnEquals"]["aws:SourceArn"])
    assert {"Fn::If": ["Sweeps", {"Fn::GetAtt": "SweepScheduleRule.Arn"}, {"Ref": "AWS::NoValue"}]} in sources, sources
    assert {"Fn::GetAtt": "GlueJobSucceededRule.Arn"} in sources, sources


def test_the_trigger_sweeps_the_jobs_of_the_event_rule_over_a_bounded_window():
    template = load_template()
    env = template["Resources"]["TriggerFunction"]["Properties"]["Environment"]["Variables"]
    assert env["SWEEP_GLUE_JOBS"] == {"Fn::Join": [",", {"Ref": "GlueJobNames"}]}, env
    assert env["SWEEP_LOOKBACK_HOURS"] == {"Ref": "SweepLookbackHours"}, env
    param = template["Parameters"]["SweepLookbackHours"]
    assert (param["Type"], param["Default"], param["MinValue"], param["MaxValue"]) == ("Number", 24, 1, 2160), param
    rust = (ROOT / "crates" / "events" / "src" / "trigger.rs").read_text(encoding="utf-8")
    assert "pub const MAX_LOOKBACK_HOURS: u32 = 90 * 24;" in rust and "DEFAULT_LOOKBACK_HOURS: u32 = 24;" in rust
    for name in ("SWEEP_GLUE_JOBS", "SWEEP_LOOKBACK_HOURS"):
        assert f'pub const {name}: &str = "{name}";' in rust, name
    assert template["Resources"]["GlueJobSucceededRule"]["Properties"]["EventPattern"]["detail"]["jobName"] == {"Ref": "GlueJobNames"}


def test_glue_job_run_reads_are_scoped_to_the_jobs_of_glue_job_names():
    template = load_template()
    grants = {
        ("TriggerRole", "ListGlueJobRuns"): "glue:GetJobRuns",
        ("LookupRole", "ReadGlueJobRun"): "glue:GetJobRun",
    }
    for (role, sid), action in grants.items():
        s = role_statements(template, role)[sid]
        assert s["Effect"] == "Allow" and s["Action"] == action, (role, s)
        assert s["Resource"] == glue_job_slots(), (role, s["Resource"])
        statement = next(
            st for p in template["Resources"][role]["Properties"]["Policies"] for st in p["PolicyDocument"]["Statement"]
            if "Fn::If" in st and st["Fn::If"][1].get("Sid") == sid
        )
        assert statement["Fn::If"][0] == "HasGlueJobs" and statement["Fn::If"][2] == {"Ref": "AWS::NoValue"}
    for role in ("TriggerRole", "LookupRole", "HashRole", "MergeRole", "StateMachineRole"):
        for sid, s in role_statements(template, role).items():
            job_actions = {a for a in as_list(s["Action"]) if a.startswith("glue:") and "Job" in a}
            assert job_actions <= ({grants[(role, sid)]} if (role, sid) in grants else set()), (role, sid, job_actions)
