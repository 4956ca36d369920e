"""usercustomize.py (and _aws_keepalive_site): the route behind a wrapper's own sitecustomize.

These tests run a plain CPython (not the test venv: a venv turns the user site off, and with it
usercustomize, while the managed runtime's /var/lang/bin/python has it on), with PYTHONPATH as an
exec wrapper sets it: a non-chaining sitecustomize first (as OpenTelemetry's
``opentelemetry-instrument`` puts its own), then the layer folder, then the test venv's
site-packages for boto3.
"""

import os
import subprocess
import sys
import sysconfig

from conftest import BASE_ENV, LAYER, ON, run_chained
from test_sitecustomize import PUT_AND_REPORT

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


def test_chains_to_hidden_usercustomize(tmp_path):
    """Another usercustomize later on sys.path still runs (layer on)."""
    completed = run_chained(PLAIN_PYTHON, tmp_path, "usercustomize", "1")
    assert completed.stdout.split() == ["ran", "True"], completed.stderr


def test_chains_when_off_and_imports_nothing(tmp_path):
    """Layer off: the hidden usercustomize still runs, the package is not imported, no output."""
    completed = run_chained(PLAIN_PYTHON, tmp_path, "usercustomize", None)
    assert completed.stdout.split() == ["ran", "False"], completed.stderr
    assert completed.stderr == ""


def test_sitecustomize_and_usercustomize_activate_once(tmp_path):
    """Both of the layer's files run in one process: one activation, one startup line."""
    env = dict(BASE_ENV, PYTHONPATH=LAYER, AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    script = "import sys; print('usercustomize' in sys.modules, 'sitecustomize' in sys.modules)"
    completed = subprocess.run([PLAIN_PYTHON, "-c", script], env=env,
                               capture_output=True, text=True, timeout=30)
    assert completed.stdout.split() == ["True", "True"], completed.stderr
    startup = [line for line in completed.stderr.splitlines() if " on (via " in line]
    assert len(startup) == 1 and "(via sitecustomize)" in startup[0], completed.stderr


def test_site_route_off_values_match_settings():
    """_aws_keepalive_site's inline off-values (sitecustomize/usercustomize) are settings.OFF_VALUES."""
    import _aws_keepalive_site
    from aws_keepalive import settings

    assert _aws_keepalive_site._OFF_VALUES == settings.OFF_VALUES
