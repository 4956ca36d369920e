"""The long call's caller, with AWS's advice: read_timeout above the callee's timeout, tcp_keepalive=True.

The same code runs without and with the keep-alive layer; botocore's retries are its own. One JSON
line per invocation: answered or not, the error, the seconds, the layer switch and botocore's version.
"""

import json
import os
import time

import boto3
import botocore
from botocore.config import Config

client = boto3.client("lambda", config=Config(read_timeout=int(os.environ["READ_TIMEOUT_S"]), tcp_keepalive=True))


def handler(event, context):
    started = time.monotonic()
    result = {"layer": os.environ.get("AWS_PYTHON_KEEPALIVE", "off"), "botocore": botocore.__version__}
    try:
        response = client.invoke(FunctionName=os.environ["CALLEE"],
                                 Payload=json.dumps({"seconds": int(os.environ["CALLEE_SECONDS"])}))
        result.update(answered=True, answer=json.loads(response["Payload"].read()))
    except Exception as error:
        result.update(answered=False, error="%s: %s" % (type(error).__name__, error))
    result["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result))
    return result
