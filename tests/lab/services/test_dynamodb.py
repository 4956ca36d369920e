import json
import os
import socket
import subprocess
import sys

import boto3
import pytest
from botocore.exceptions import SSLError

from lab.services import dynamodb
from lab.services.dynamodb import DynamoDBLocal

TABLE = "lab-table"


@pytest.fixture(scope="module")
def ddb():
    with DynamoDBLocal() as d:
        client = boto3.client("dynamodb", **d.client_kwargs())
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield d


def test_jars_are_cached_outside_git():
    """ensure_jars() finds DynamoDB Local 2.6.x in the cache folder (under .cache/, gitignored)."""
    lib = dynamodb.ensure_jars()
    assert list(lib.glob("DynamoDBLocal-2.6.*.jar"))
    assert ".cache" in lib.parts or os.environ.get("AWS_KEEPALIVE_LAB_CACHE")


def test_put_and_get_over_https(ddb):
    """A boto3 client trusting the lab CA writes and reads an item through the TLS front."""
    client = boto3.client("dynamodb", **ddb.client_kwargs())
    assert ddb.https_url.startswith("https://")
    client.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    item = client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})["Item"]
    assert item["v"] == {"N": "1"}


def test_client_in_another_process_trusts_ca_through_env(ddb):
    """client_env() (AWS_CA_BUNDLE + dummy credentials) is all a child process needs."""
    code = (
        "import boto3,json,sys; c=boto3.client('dynamodb', endpoint_url=sys.argv[1]);"
        "c.put_item(TableName='lab-table', Item={'pk': {'S': 'child'}});"
        "print(json.dumps(c.list_tables()['TableNames']))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(ddb.client_env())
    out = subprocess.run([sys.executable, "-c", code, ddb.https_url], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert TABLE in json.loads(out.stdout)


def test_untrusted_client_is_refused(ddb):
    """Without the lab CA, botocore fails certificate verification: clients really speak TLS."""
    kw = ddb.client_kwargs()
    kw.pop("verify")
    client = boto3.client("dynamodb", **kw, config=boto3.session.Config(retries={"max_attempts": 1}))
    with pytest.raises(SSLError):
        client.list_tables()


def test_stop_ends_jvm_and_frees_port():
    """Leaving the context stops the JVM by pid and nothing listens on its port any more."""
    with DynamoDBLocal(tls=False) as d:
        proc, port = d.proc, d.port
        assert boto3.client("dynamodb", **d.client_kwargs()).list_tables()["TableNames"] == []
    assert proc.poll() is not None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
