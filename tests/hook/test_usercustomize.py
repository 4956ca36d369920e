"""usercustomize.py (and _aws_keepalive_site): the route when the interpreter starts with
PYTHONPATH already set (exec wrappers), alone or behind a wrapper's own sitecustomize.

These tests run a plain CPython (not the test venv: a venv turns the user site off, and with it
usercustomize, while the managed runtime's /var/lang/bin/python has it on), with PYTHONPATH as an
exec wrapper sets it: the layer folder (after a non-chaining sitecustomize, as OpenTelemetry's
``opentelemetry-instrument`` puts its own first), then the test venv's site-packages for boto3.
The layer ships no sitecustomize.py (docs/activation.md: another layer's file of that name would
replace ours in /opt/python, or ours theirs).
"""

import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from conftest import BASE_ENV, LAYER, ON, run_chained

PUT_AND_REPORT = """
    import boto3
    import keepalive_probe

    def handler(event, context):
        client = boto3.client("dynamodb", endpoint_url=event["url"])
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        return keepalive_probe.client_socket_options(client)
"""

PLAIN_PYTHON = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
VENV_SITE_PACKAGES = sysconfig.get_paths()["purelib"]


def _put_behind_wrapper(run_function, server, tmp_path, env):
    """PUT_AND_REPORT in the plain CPython, PYTHONPATH as a wrapper sets it: first a sitecustomize
    that does its own thing and chains to nothing (OTel's is two lines), then the layer, then boto3."""
    foreign = tmp_path / "wrapper"
    foreign.mkdir()
    (foreign / "sitecustomize.py").write_text("import os\nos.environ['WRAPPER_SITECUSTOMIZE'] = 'ran'\n")
    pythonpath = os.pathsep.join([str(foreign), LAYER, VENV_SITE_PACKAGES])
    return run_function(PUT_AND_REPORT, env=env, python=PLAIN_PYTHON, pythonpath=pythonpath,
                        event={"url": server.url})


def test_pythonpath_route_activates(run_function, server):
    """PYTHONPATH holding the layer folder (exec wrappers): usercustomize activates the layer."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = run_function(PUT_AND_REPORT, env=env, python=PLAIN_PYTHON,
                       pythonpath=os.pathsep.join([LAYER, VENV_SITE_PACKAGES]), event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result[0]["TCP_KEEPIDLE"] == 60
    assert "(via usercustomize)" in run.layer_lines[0], run.stderr


def test_package_that_fails_to_import_is_reported_not_raised(tmp_path):
    """A broken aws_keepalive beside usercustomize: one warning naming it, the program still runs."""
    layer = tmp_path / "layer"
    shutil.copytree(LAYER, layer, ignore=shutil.ignore_patterns("__pycache__"))
    (layer / "aws_keepalive" / "__init__.py").write_text("raise ImportError('injected')\n")
    env = dict(BASE_ENV, PYTHONPATH=str(layer), AWS_PYTHON_KEEPALIVE="1")
    completed = subprocess.run([PLAIN_PYTHON, "-c", "print('function continues')"], env=env,
                               capture_output=True, text=True, timeout=30)
    assert completed.returncode == 0 and completed.stdout == "function continues\n"
    warnings = [line for line in completed.stderr.splitlines() if line.startswith("aws-keepalive: WARN")]
    assert len(warnings) == 1 and "injected" in warnings[0], completed.stderr


def test_both_routes_activate_once():
    """usercustomize and the .pth in one process: one activation, one startup line, one patch."""
    env = dict(BASE_ENV, PYTHONPATH=os.pathsep.join([LAYER, VENV_SITE_PACKAGES]),
               AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    script = "import site, sys; site.addsitedir(sys.argv[1]); import botocore.session"
    completed = subprocess.run([PLAIN_PYTHON, "-c", script, LAYER], env=env,
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    startup = [line for line in completed.stderr.splitlines() if " on (via " in line]
    assert len(startup) == 1, completed.stderr
    patched = [line for line in completed.stderr.splitlines() if "patched botocore" in line]
    assert len(patched) == 1, completed.stderr


def test_activates_behind_non_chaining_sitecustomize(run_function, server, tmp_path):
    """Wrapper's sitecustomize first on PYTHONPATH: usercustomize activates, real socket timers."""
    run = _put_behind_wrapper(run_function, server, tmp_path, dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
    assert run.returncode == 0, run
    assert run.result[0]["SO_KEEPALIVE"] == 1 and run.result[0]["TCP_KEEPIDLE"] == 60
    assert "(via usercustomize)" in run.layer_lines[0], run.stderr


def test_user_site_disabled_is_the_limit(run_function, server, tmp_path):
    """PYTHONNOUSERSITE (like -s or a venv): usercustomize is not imported, the layer stays off."""
    run = _put_behind_wrapper(run_function, server, tmp_path, dict(ON, PYTHONNOUSERSITE="1"))
    assert run.returncode == 0, run
    assert run.result[0]["TCP_KEEPIDLE"] == 7200


@pytest.mark.parametrize("form", ["py", "package", "pyc"])
def test_chains_to_hidden_usercustomize(tmp_path, form):
    """Another usercustomize later on sys.path still runs (layer on), whatever its form: a .py, a
    package, a sourceless .pyc (as site would import it)."""
    completed = run_chained(PLAIN_PYTHON, tmp_path, "usercustomize", "1", form)
    assert completed.stdout.split() == ["ran", "True"], completed.stderr


@pytest.mark.parametrize("form", ["py", "package", "pyc"])
def test_chains_when_off_and_imports_nothing(tmp_path, form):
    """Layer off: the hidden usercustomize still runs (a .py, a package, a sourceless .pyc), the
    package is not imported, no output."""
    completed = run_chained(PLAIN_PYTHON, tmp_path, "usercustomize", None, form)
    assert completed.stdout.split() == ["ran", "False"], completed.stderr
    assert completed.stderr == ""


def test_chains_past_the_layers_folder_listed_twice(tmp_path):
    """The layer's folder on sys.path twice (before and after the other usercustomize): the other
    one runs once, ours does not run itself again."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "usercustomize.py").write_text("import os\nos.environ['OTHER'] = os.environ.get('OTHER', '') + 'ran'\n")
    env = dict(BASE_ENV, PYTHONPATH=os.pathsep.join([LAYER, LAYER, str(other), LAYER]))
    completed = subprocess.run([PLAIN_PYTHON, "-c", "import os; print(os.environ.get('OTHER'))"], env=env,
                               capture_output=True, text=True, timeout=30)
    assert completed.stdout.split() == ["ran"], completed.stderr


def test_layer_ships_no_sitecustomize(tmp_path):
    """No sitecustomize.py in the layer: another one on PYTHONPATH after the layer's folder (a
    second layer's, extracted into the same /opt/python it would be the only copy) runs as
    site imports it, whatever the switch, and the layer still activates (usercustomize)."""
    assert not os.path.exists(os.path.join(LAYER, "sitecustomize.py"))
    completed = run_chained(PLAIN_PYTHON, tmp_path, "sitecustomize", "1")
    assert completed.stdout.split() == ["ran", "True"], completed.stderr


def test_site_route_off_values_match_settings():
    """_aws_keepalive_site's inline off-values (usercustomize, .start) are settings.OFF_VALUES."""
    import _aws_keepalive_site
    from aws_keepalive import settings

    assert _aws_keepalive_site._OFF_VALUES == settings.OFF_VALUES
