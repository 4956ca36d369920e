"""The built zip, extracted as /opt under the runtime stand-in, on every CPython here.

Each interpreter is a test venv that has its own boto3/botocore installed, like the managed runtime
has: the layer's copies must win.  The handler talks to a local DynamoDB-shaped HTTP server and
reports the socket options of the connection its client pooled, read from the live socket.
"""

import json
import os
import shutil
import subprocess

import pytest
from conftest import REPO, STANDIN, env, interpreters

KEEPALIVE_PROBE = os.path.join(REPO, "tests", "hook", "task", "keepalive_probe.py")

PROBE = r'''
import gc, socket
import boto3, botocore
from keepalive_probe import list_tables_server


def handler(event, context):
    with list_tables_server() as port:
        client = boto3.client("dynamodb", endpoint_url="http://127.0.0.1:%d" % port, region_name="us-east-1")
        client.list_tables()
        # The pooled connection's socket, found without relying on botocore/urllib3 internals.
        sockets = [
            candidate for candidate in gc.get_objects()
            if isinstance(candidate, socket.socket) and candidate.fileno() != -1
            and candidate.type == socket.SOCK_STREAM and _peer(candidate) == ("127.0.0.1", port)
        ]
        live = sockets[0]
        result = {
            "boto3": boto3.__file__,
            "botocore": botocore.__file__,
            "sockets": len(sockets),
            "so_keepalive": live.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
            "keepidle": live.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
            "cached": botocore.__cached__,
        }
        return result


def _peer(candidate):
    try:
        return candidate.getpeername()
    except OSError:
        return None
'''


def run(python, opt, task, **extra):
    completed = subprocess.run(
        [python, STANDIN, "--opt", opt, "--task", task, "--handler", "probe_runtime.handler"],
        capture_output=True, text=True, env=env(**extra),
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.splitlines()[-1]), completed.stderr


def tree(root):
    return sorted(os.path.join(folder, name) for folder, _, files in os.walk(root) for name in files)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    folder = tmp_path_factory.mktemp("task")
    (folder / "probe_runtime.py").write_text(PROBE)
    shutil.copy(KEEPALIVE_PROBE, folder)
    return str(folder)


@pytest.mark.parametrize("minor", ["3.10", "3.11", "3.12", "3.13", "3.14"])
def test_layer_turns_keepalive_on_with_its_own_boto3(minor, opt, task):
    """With AWS_PYTHON_KEEPALIVE=1 the pooled socket has SO_KEEPALIVE and a short idle, via the layer's botocore."""
    python = interpreters().get(minor)
    assert python, "no test interpreter for CPython %s" % minor
    before = tree(opt)
    result, stderr = run(python, opt, task, AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    assert result["boto3"].startswith(os.path.join(opt, "python") + os.sep)
    assert result["botocore"].startswith(os.path.join(opt, "python") + os.sep)
    assert result["so_keepalive"] == 1
    assert result["keepidle"] < 7200  # the Linux default, which botocore alone leaves in place
    assert any(line.startswith("aws-keepalive:") for line in stderr.splitlines()), stderr
    # The shipped bytecode was used as is: the interpreter wrote nothing into the layer.
    assert result["cached"].endswith(".cpython-%s.pyc" % minor.replace(".", ""))
    assert tree(opt) == before


@pytest.mark.parametrize("minor", ["3.10", "3.14"])
def test_layer_does_nothing_without_the_variable(minor, opt, task):
    """Without AWS_PYTHON_KEEPALIVE the same run leaves the socket without SO_KEEPALIVE (the control)."""
    python = interpreters()[minor]
    result, stderr = run(python, opt, task)
    assert result["botocore"].startswith(os.path.join(opt, "python") + os.sep)
    assert result["so_keepalive"] == 0
    assert not any(line.startswith("aws-keepalive:") for line in stderr.splitlines())
