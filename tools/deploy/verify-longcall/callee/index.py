"""The long call's callee: logs one line per execution (so the logs count them), works ``seconds``."""

import json
import time


def handler(event, context):
    print(json.dumps({"execution": context.aws_request_id}))
    time.sleep(int(event["seconds"]))
    return {"slept_s": int(event["seconds"])}
