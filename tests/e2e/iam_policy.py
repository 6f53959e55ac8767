"""The functions' IAM policies in infra/template.yaml, evaluated against the AWS calls
the real function binaries made in the end-to-end run.

moto does not enforce IAM, so a policy that lacks a permission the code needs would
only show in a real account, as AccessDenied. The router of the e2e run records every
AWS call with the `app/<function>` of its user agent; `denied_calls` says which of
them the function's role in the template would not allow.

The evaluator knows what the template uses: Allow statements with Action and
Resource lists (`*` wildcards), `!Sub`/`!GetAtt`/`!Ref` of the stack's own resources
and parameters, and `StringLike` conditions on `s3:prefix`. Anything else it cannot
resolve stays unresolved and matches nothing, so a call it does not understand is
reported as denied rather than waved through.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from sfn_harness import ACCOUNT, REGION, AwsCall
from test_definition import load_template


@dataclass
class Request:
    """One IAM authorisation question: action on resource, with condition keys."""

    action: str
    resources: list[str]
    context: dict[str, str]


def request_of(call: AwsCall) -> Request:
    """The IAM action a call needs (S3 path-style REST, Glue and Step Functions JSON;
    a Glue job run call is on the job's ARN)."""
    if call.target:
        service, op = call.target.split(".", 1)
        body = json.loads(call.body or b"{}")
        if service == "AWSGlue" and op in ("GetJobRun", "GetJobRuns"):
            return Request(f"glue:{op}", [f"arn:aws:glue:{REGION}:{ACCOUNT}:job/{body.get('JobName', '')}"], {})
        if service == "AWSGlue":
            db = body.get("DatabaseName", "")
            table = body.get("TableName") or body.get("Name", "")
            glue = f"arn:aws:glue:{REGION}:{ACCOUNT}"
            resources = [f"{glue}:catalog", f"{glue}:database/{db}"]
            if op != "GetDatabase":
                resources.append(f"{glue}:table/{db}/{table}")
            return Request(f"glue:{op}", resources, {})
        if service == "secretsmanager":
            return Request(f"secretsmanager:{op}", [body.get("SecretId", "")], {})
        if service == "AWSEvents" and op == "PutEvents":
            entries = body.get("Entries", [])
            buses = sorted({e.get("EventBusName") or "default" for e in entries})
            sources = sorted({e.get("Source", "") for e in entries})
            return Request(
                "events:PutEvents",
                [f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{b}" for b in buses],
                {"events:source": sources[0] if len(sources) == 1 else ",".join(sources)},
            )
        if service == "AWSStepFunctions":
            return Request(f"states:{op}", [body.get("stateMachineArn", "")], {})
        return Request(f"unknown:{call.target}", [], {})
    bucket, _, key = call.path.lstrip("/").partition("/")
    if not key:
        if call.method == "GET" and "list-type" in call.query:
            return Request("s3:ListBucket", [f"arn:aws:s3:::{bucket}"], {"s3:prefix": call.query.get("prefix", "")})
        return Request(f"s3:{call.method}-bucket", [f"arn:aws:s3:::{bucket}"], {})
    action = {"GET": "s3:GetObject", "HEAD": "s3:GetObject", "PUT": "s3:PutObject", "DELETE": "s3:DeleteObject"}
    return Request(action.get(call.method, f"s3:{call.method}"), [f"arn:aws:s3:::{bucket}/{key}"], {})


class Policies:
    """The inline policies of each function's role, resolved for one stack."""

    def __init__(self, values: dict[str, list[str]], conditions: dict[str, bool] | None = None):
        """`values`: what each `${Name}` / `!Ref Name` / `!GetAtt Name.Arn` stands for
        (a list: a comma-separated parameter has several values). `conditions`: the
        template conditions that hold for this stack; a conditional (`!If`) statement
        counts as its branch for the condition, and one whose condition is not given
        counts as absent."""
        conditions = conditions or {}
        self.values = {"AWS::Partition": ["aws"], "AWS::Region": [REGION], "AWS::AccountId": [ACCOUNT], **values}
        template = load_template()
        self.resources = template["Resources"]
        self.by_function: dict[str, list[dict]] = {}
        for res in self.resources.values():
            if res.get("Type") != "AWS::Serverless::Function":
                continue
            binary = res["Metadata"]["BuildProperties"]["Binary"]
            role = res["Properties"]["Role"]["Fn::GetAtt"]
            role_name = role.split(".")[0] if isinstance(role, str) else role[0]
            statements = []
            for policy in self.resources[role_name]["Properties"].get("Policies", []):
                for st in policy["PolicyDocument"]["Statement"]:
                    if "Fn::If" in st:
                        name, when_true, when_false = st["Fn::If"]
                        if name not in conditions:
                            continue
                        st = when_true if conditions[name] else when_false
                    if "Effect" in st:
                        statements.append(st)
            self.by_function[binary] = statements

    def _resolve(self, expr) -> list[str]:
        """Every string an intrinsic can stand for ("" parts unresolved stay as ${X})."""
        if isinstance(expr, str):
            return [expr]
        if isinstance(expr, list):
            return [v for e in expr for v in self._resolve(e)]
        if "Ref" in expr:
            return self.values.get(expr["Ref"], ["${%s}" % expr["Ref"]])
        if "Fn::GetAtt" in expr:
            att = expr["Fn::GetAtt"]
            name = att if isinstance(att, str) else ".".join(att)
            return self.values.get(name, ["${%s}" % name])
        if "Fn::Sub" in expr:
            sub = expr["Fn::Sub"]
            text, local = (sub, {}) if isinstance(sub, str) else (sub[0], sub[1])
            out = [text]
            for var in re.findall(r"\$\{([\w:.]+)\}", text):
                if var in local:
                    # The template spreads a comma-separated parameter over five slots;
                    # the slot can be any of the parameter's values.
                    names = re.findall(r'"Ref": "(\w+)"', json.dumps(local[var]))
                    options = [v for n in names for v in self.values.get(n, [])] or ["${%s}" % var]
                else:
                    options = self.values.get(var, ["${%s}" % var])
                out = [o.replace("${%s}" % var, v) for o in out for v in options]
            return out
        return [json.dumps(expr)]

    def allows(self, function: str, request: Request) -> bool:
        for st in self.by_function.get(function, []):
            if st.get("Effect") != "Allow":
                continue
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            if not any(fnmatchcase(request.action, a) for a in actions):
                continue
            patterns = self._resolve(st["Resource"])
            if not all(any(fnmatchcase(r, p) for p in patterns) for r in request.resources):
                continue
            if self._conditions_hold(st.get("Condition", {}), request.context):
                return True
        return False

    @staticmethod
    def _conditions_hold(condition: dict, context: dict[str, str]) -> bool:
        for operator, tests in condition.items():
            for key, wanted in tests.items():
                wanted = wanted if isinstance(wanted, list) else [wanted]
                if operator not in ("StringLike", "StringEquals") or key not in context:
                    return False
                match = fnmatchcase if operator == "StringLike" else str.__eq__
                if not any(match(context[key], w) for w in wanted):
                    return False
        return True

    def denied_calls(self, calls: list[AwsCall]) -> list[str]:
        """The calls of a function that its role would refuse, described."""
        out = []
        for call in calls:
            req = request_of(call)
            if not self.allows(call.app, req):
                out.append(f"{call.app}: {req.action} on {req.resources} {req.context or ''}".rstrip())
        return out
