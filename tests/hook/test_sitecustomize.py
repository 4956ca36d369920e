"""sitecustomize.py: the fallback route when the interpreter starts with PYTHONPATH already set."""

import shutil
import subprocess
import sys

from conftest import BASE_ENV, LAYER, ON, run_chained

PUT_AND_REPORT = """
    import boto3
    import keepalive_probe

    def handler(event, context):
        client = boto3.client("dynamodb", endpoint_url=event["url"])
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        return keepalive_probe.client_socket_options(client)
"""


def test_pythonpath_route_activates(run_function, server):
    """PYTHONPATH holding the layer folder (exec wrappers): sitecustomize activates the layer."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = run_function(PUT_AND_REPORT, env=env, pythonpath=LAYER, event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result[0]["TCP_KEEPIDLE"] == 60
    assert "(via sitecustomize)" in run.layer_lines[0]


def test_package_that_fails_to_import_is_reported_not_raised(tmp_path):
    """A broken aws_keepalive beside sitecustomize: one warning naming it, the program still runs."""
    layer = tmp_path / "layer"
    shutil.copytree(LAYER, layer, ignore=shutil.ignore_patterns("__pycache__"))
    (layer / "aws_keepalive" / "__init__.py").write_text("raise ImportError('injected')\n")
    env = dict(BASE_ENV, PYTHONPATH=str(layer), AWS_PYTHON_KEEPALIVE="1")
    completed = subprocess.run([sys.executable, "-c", "print('function continues')"], env=env,
                               capture_output=True, text=True, timeout=30)
    assert completed.returncode == 0 and completed.stdout == "function continues\n"
    warnings = [line for line in completed.stderr.splitlines() if line.startswith("aws-keepalive: WARN")]
    assert len(warnings) == 1 and "injected" in warnings[0], completed.stderr


def test_both_routes_activate_once(tmp_path):
    """sitecustomize and the .pth in one process: one activation, one startup line."""
    env = dict(BASE_ENV, PYTHONPATH=LAYER, AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    script = "import site, sys; site.addsitedir(sys.argv[1]); import botocore.session"
    completed = subprocess.run([sys.executable, "-c", script, LAYER], env=env,
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    startup = [line for line in completed.stderr.splitlines() if " on (via " in line]
    assert len(startup) == 1, completed.stderr
    patched = [line for line in completed.stderr.splitlines() if "patched botocore" in line]
    assert len(patched) == 1, completed.stderr


def test_chains_to_hidden_sitecustomize(tmp_path):
    """Another sitecustomize later on sys.path still runs (layer on)."""
    completed = run_chained(sys.executable, tmp_path, "sitecustomize", "1")
    assert completed.stdout.split() == ["ran", "True"], completed.stderr


def test_chains_when_off_and_imports_nothing(tmp_path):
    """Layer off: the hidden sitecustomize still runs and the package is not imported."""
    completed = run_chained(sys.executable, tmp_path, "sitecustomize", None)
    assert completed.stdout.split() == ["ran", "False"], completed.stderr
    assert completed.stderr == ""
