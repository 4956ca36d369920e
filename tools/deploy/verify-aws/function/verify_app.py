"""make verify-aws's handlers: the lab's example function (app.py, copied in unchanged from
examples/put_item/ by tools/deploy/verify_aws.py) plus what the experiment reads back: botocore's retries
of each invocation's puts (the RetryAttempts of every PutItem, from botocore's own after-call
event on the function's module-level client), and what the TLS sessions of its pooled connections
say (tls_probe.py), for DynamoDB and STS (GetCallerIdentity: needs no permission), after the puts."""

import boto3

import app
import tls_probe

_sts = boto3.client("sts")

_retries = []


def _count_retries(parsed=None, **_):
    _retries.append((parsed or {}).get("ResponseMetadata", {}).get("RetryAttempts", 0))


app.dynamodb.meta.events.register("after-call.dynamodb.PutItem", _count_retries)


def _with_retries(result):
    result["retries"] = sum(_retries)
    del _retries[:]
    try:
        _sts.get_caller_identity()  # after the puts: their timing is app.handler's own
        result["tls"] = {"dynamodb": tls_probe.pooled_tls(app.dynamodb), "sts": tls_probe.pooled_tls(_sts)}
    except Exception as error:  # the experiment's puts matter more than this probe
        result["tls"] = {"error": repr(error)}
    return result


def handler(event, context):
    del _retries[:]
    return _with_retries(app.handler(event, context))


def handler_ten(event, context):
    del _retries[:]
    return _with_retries(app.handler_ten(event, context))
