"""make verify-aws's handlers: the lab's example function (app.py, copied in unchanged from
examples/put_item/ by tools/deploy/verify_aws.py) plus what the experiment reads back: botocore's retries
of each invocation's puts (the RetryAttempts of every PutItem, from botocore's own after-call
event on the function's module-level client)."""

import app

_retries = []


def _count_retries(parsed=None, **_):
    _retries.append((parsed or {}).get("ResponseMetadata", {}).get("RetryAttempts", 0))


app.dynamodb.meta.events.register("after-call.dynamodb.PutItem", _count_retries)


def _with_retries(result):
    result["retries"] = sum(_retries)
    del _retries[:]
    return result


def handler(event, context):
    del _retries[:]
    return _with_retries(app.handler(event, context))


def handler_ten(event, context):
    del _retries[:]
    return _with_retries(app.handler_ten(event, context))
