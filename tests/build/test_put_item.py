"""examples/put_item/app.py with the built layer, under the runtime stand-in, against moto's DynamoDB."""

import json
import os
import subprocess
import sys

import boto3
from conftest import REPO, STANDIN, env

TASK = os.path.join(REPO, "examples", "put_item")


def test_handlers_put_one_and_ten_items(opt, moto_endpoint):
    """handler puts one item and handler_ten ten, through the endpoint given by AWS_ENDPOINT_URL_DYNAMODB."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_endpoint,
                            aws_access_key_id="test", aws_secret_access_key="test")
    dynamodb.create_table(
        TableName="keepalive-example", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    )
    results = {}
    for handler in ("app.handler", "app.handler_ten"):
        completed = subprocess.run(
            [sys.executable, STANDIN, "--opt", opt, "--task", TASK, "--handler", handler],
            capture_output=True, text=True,
            env=env(AWS_PYTHON_KEEPALIVE="1", TABLE_NAME="keepalive-example", AWS_ENDPOINT_URL_DYNAMODB=moto_endpoint),
        )
        assert completed.returncode == 0, completed.stderr
        results[handler] = json.loads(completed.stdout.splitlines()[-1])
    assert results["app.handler"]["put_ms"] > 0
    assert len(results["app.handler_ten"]["put_ms"]) == 10
    assert results["app.handler_ten"]["total_ms"] >= sum(results["app.handler_ten"]["put_ms"])
    assert dynamodb.scan(TableName="keepalive-example", Select="COUNT")["Count"] == 11
