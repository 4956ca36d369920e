"""The stand-in checked against AWS's Runtime Interface Emulator (aws-lambda-rie, the emulator `sam local`
and the Lambda base images run; built by make from its Go source at a pinned version): what a runtime
sees on the Runtime API, and a durable function that AWS's local runner invokes through RIE's Invoke
endpoint, its documented setup, as the lab's experiment invokes it through lab.services.durable's."""

import json
import os
import socket
import subprocess
import time

import pytest

from lab.net import process
from standin import REPO, write_task

RIE = os.environ.get("AWS_KEEPALIVE_RIE", os.path.join(REPO, ".venv", "rie", "bin", "aws-lambda-rie"))
DURABLE_PY = os.path.join(REPO, ".venv", "durable", "bin", "python")

# A bare runtime (no awslambdaric): one invocation, answered with the status and header names its
# ``next`` got, the event, and the variables it was started with; the status of its response POST
# goes to PROBE_OUT. Then it waits in ``next`` until stopped.
PROBE = """
    import http.client, json, os
    connection = http.client.HTTPConnection(os.environ["AWS_LAMBDA_RUNTIME_API"])
    connection.request("GET", "/2018-06-01/runtime/invocation/next")
    answer = connection.getresponse()
    event = json.loads(answer.read())
    request_id = answer.getheader("Lambda-Runtime-Aws-Request-Id")
    seen = {"status": answer.status, "headers": sorted(name for name, _ in answer.getheaders()),
            "event": event, "request_id": request_id}
    connection.request("POST", "/2018-06-01/runtime/invocation/%s/response" % request_id,
                       body=json.dumps(seen).encode())
    posted = connection.getresponse()
    posted.read()
    with open(os.environ["PROBE_OUT"], "w") as out:
        out.write(str(posted.status))
    connection.request("GET", "/2018-06-01/runtime/invocation/next")
    connection.getresponse()
"""
HEADERS = {"Lambda-Runtime-Aws-Request-Id", "Lambda-Runtime-Deadline-Ms", "Lambda-Runtime-Invoked-Function-Arn"}


@pytest.fixture(name="rie")
def rie_fixture():
    """``rie(command, cwd, env, port=None)``: RIE serving Invoke on ``port`` (default: a free one) and
    running ``command`` as its runtime; returns the Invoke URL. Stopped by pid after the test."""
    if not os.access(RIE, os.X_OK):
        pytest.fail("%s missing: make test-lab builds it (go install, mk/lab.mk)" % RIE)
    started = []

    def start(command, cwd, env, port=None):
        from lab.services.dynamodb import free_port

        port = port or free_port()
        proc = subprocess.Popen([RIE, "--runtime-interface-emulator-address", "127.0.0.1:%d" % port] + command,
                                cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        started.append(proc)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return "http://127.0.0.1:%d" % port
            except OSError:
                time.sleep(0.05)
        pytest.fail("RIE did not listen on %d" % port)

    yield start
    for proc in started:
        process.stop(proc)
        proc.stdout.close()


def _probe(tmp_path, name):
    task = write_task(tmp_path / name, probe=PROBE)
    return task, {"PATH": "/usr/bin:/bin", "PROBE_OUT": str(tmp_path / (name + ".status"))}


def test_runtime_api_sends_what_rie_sends(tmp_path, rie):
    """A bare runtime's ``next`` gets every header RIE sends (request id, deadline, function ARN) from
    the stand-in's Runtime API too, the same statuses (200 for ``next``, 202 for the response), the
    event unchanged, and the response goes back to the caller as it does through RIE."""
    import urllib.request

    from lab.standin.runtime_api import RuntimeApi
    from lab.standin.runtime_prefix import ensure

    python = str(ensure("3.13"))
    event = {"k": [1, "two"]}
    task, env = _probe(tmp_path, "rie")
    url = rie([python, "probe.py"], task, env) + "/2015-03-31/functions/function/invocations"
    with urllib.request.urlopen(urllib.request.Request(url, data=json.dumps(event).encode()), timeout=30) as answer:
        through_rie = json.loads(answer.read())
    rie_status = (tmp_path / "rie.status").read_text()

    task, env = _probe(tmp_path, "standin")
    with RuntimeApi() as api:
        proc = subprocess.Popen([python, "probe.py"], cwd=str(task), env=dict(env, AWS_LAMBDA_RUNTIME_API=api.address))
        try:
            outcome, _ = api.invoke(event, 30)
            deadline = time.monotonic() + 10  # the probe writes its POST's status once it has the reply
            while not (tmp_path / "standin.status").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            proc.kill()
            proc.wait(5)
    through_standin = outcome.body
    print("RIE:", through_rie, rie_status, "\nstand-in:", through_standin)
    assert HEADERS <= set(through_rie["headers"]), through_rie
    assert set(through_rie["headers"]) - {"Date", "Content-Type", "Content-Length"} <= set(through_standin["headers"])
    assert through_rie["status"] == through_standin["status"] == 200
    assert through_rie["event"] == through_standin["event"] == event
    assert rie_status == (tmp_path / "standin.status").read_text() == "202"


def test_durable_function_through_rie(tmp_path, rie):
    """The experiment's durable function, run by RIE, with AWS's local runner invoking it at RIE's
    Invoke endpoint: one wait, replay, SUCCEEDED, checkpoints carrying the SDK's user agent, as through
    the lab's own Invoke endpoint (tests/lab/experiments/test_demo_durable.py)."""
    from lab.experiments.durable.experiment import default_deps, task_folder
    from lab.services.durable import DurableService
    from lab.services.dynamodb import free_port
    from lab.standin.runtime_prefix import ensure
    from lab.standin.trust_store import sdk_bundle_with

    if not os.path.exists(DURABLE_PY):
        pytest.fail("%s missing: make test-lab makes it" % DURABLE_PY)
    task = task_folder(default_deps(), tmp_path / "task")
    port = free_port()
    endpoint = "http://127.0.0.1:%d" % port
    with DurableService(python=DURABLE_PY, lambda_endpoint=endpoint, invocation_timeout=60) as service:
        env = {"PATH": "/usr/bin:/bin", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
               "AWS_ACCESS_KEY_ID": "AKIDLABLABLABLABLAB0", "AWS_SECRET_ACCESS_KEY": "lab-secret-access-key",
               "AWS_LAMBDA_FUNCTION_NAME": "function",
               "AWS_ENDPOINT_URL_LAMBDA": "https://127.0.0.1:%d" % service.tls.port,
               "AWS_CA_BUNDLE": sdk_bundle_with(service.ca_bundle_path)}
        rie([str(ensure("3.13")), "-m", "awslambdaric", "app.handler"], task, env, port)
        arn = service.start_execution("function", {"rounds": 1, "wait_s": 1})
        state = service.wait_done(arn, 60)
        agents = service.front.user_agents()
    print(state, agents)
    assert state["Status"] == "SUCCEEDED", state
    settings = json.loads(state["Result"])
    assert (settings["connect_timeout"], settings["read_timeout"]) == (5, 50)
    assert agents and all(agent.endswith("aws-durable-execution-sdk-python/3.0.0") for agent in agents), agents
