"""make verify-aws's handlers: the lab's example function (app.py, copied in unchanged from
examples/put_item/ by tools/deploy/verify_aws.py) plus what the experiment reads back: botocore's retries
of each invocation's puts (the RetryAttempts of every PutItem, from botocore's own after-call
event on the function's module-level client), which SDK and Python the function runs
(runtime_sdk: what the runtime bundles, which AWS updates silently and publishes nowhere), and what
the TLS sessions of its pooled connections say (tls_probe.py), for DynamoDB and STS
(GetCallerIdentity: needs no permission), after the puts."""

import os
import sys

import boto3

import app
import tls_probe

_sts = []  # the STS client, made at the first handler call (not at import: tests import this module)

_retries = []


def _count_retries(parsed=None, **_):
    _retries.append((parsed or {}).get("ResponseMetadata", {}).get("RetryAttempts", 0))


app.dynamodb.meta.events.register("after-call.dynamodb.PutItem", _count_retries)


_sdk = {}


def runtime_sdk():
    """{boto3, botocore, urllib3, awslambdaric: version or None, python: the build, runtime: the
    execution environment, botocore_file}: read once (on the warm-up invocation, which is not timed)."""
    if not _sdk:
        from importlib import metadata  # here: not on the function's init path

        for name in ("boto3", "botocore", "urllib3", "awslambdaric"):
            try:
                _sdk[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                _sdk[name] = None
        import botocore

        _sdk["botocore_file"] = botocore.__file__
        _sdk["python"] = sys.version.split()[0] + " (" + " ".join(sys.version.split()[1:]) + ")"
        _sdk["runtime"] = os.environ.get("AWS_EXECUTION_ENV")
    return dict(_sdk)


def _with_retries(result):
    result["retries"] = sum(_retries)
    result["sdk"] = runtime_sdk()
    del _retries[:]
    return result


def _with_tls(result):
    """After the puts (their timing is app.handler's own): one STS call, then what the TLS sessions
    of both clients' pooled connections say (tls_probe.py)."""
    try:
        if not _sts:
            _sts.append(boto3.client("sts"))
        _sts[0].get_caller_identity()
        result["tls"] = {"dynamodb": tls_probe.pooled_tls(app.dynamodb), "sts": tls_probe.pooled_tls(_sts[0])}
    except Exception as error:  # the experiment's puts matter more than this probe
        result["tls"] = {"error": repr(error)}
    return result


def handler(event, context):
    del _retries[:]
    return _with_tls(_with_retries(app.handler(event, context)))


def handler_ten(event, context):
    del _retries[:]
    return _with_tls(_with_retries(app.handler_ten(event, context)))
