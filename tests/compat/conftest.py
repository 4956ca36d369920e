"""Fixtures for the compatibility suite: the repo and the hook tests' helpers on sys.path, a
DynamoDB-shaped server on loopback, and a way to run a function in the stand-in runtime (real
awslambdaric, lab/standin/lambda_env.py) with the libraries of tests/compat/requirements.txt bundled in its
task folder and the layer in /opt/python, activated by its .pth before the function's code runs
(the Lambda order: the layer first, then the library)."""

import importlib.util
import os
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "hook"))

# The hook tests' DynamoDB-shaped server fixture (loaded under another name: this file is conftest).
_hook_conftest = importlib.util.spec_from_file_location("hook_conftest", REPO / "tests" / "hook" / "conftest.py")
hook_conftest = importlib.util.module_from_spec(_hook_conftest)
_hook_conftest.loader.exec_module(hook_conftest)
server = hook_conftest.server
# What tests/hook/test_prepared.py (imported by test_botocore_suite.py) takes from "conftest".
BASE_ENV = hook_conftest.BASE_ENV
LAYER = hook_conftest.LAYER

COMPAT_TASK = os.environ.get("AWS_KEEPALIVE_COMPAT_TASK", "")
PROBE = REPO / "tests" / "hook" / "task" / "keepalive_probe.py"
ON = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"}


def compat_task():
    """The folder holding the libraries (``make test-compat`` installs it)."""
    assert os.path.isfile(os.path.join(COMPAT_TASK, ".done")), (
        "the compat libraries are missing under %r: run `make test-compat`" % COMPAT_TASK)
    return COMPAT_TASK


@pytest.fixture
def invoke(tmp_path):
    """invoke(handler_source, env={...}, exec_wrapper=None) -> lab Invocation of one event.

    The task folder links every entry of the libraries' folder, plus handler.py and the socket
    probe; /opt is the repo's layer/ as python/ (lab.standin.lambda_env.layer_from_source).
    """
    from lab.standin.lambda_env import LambdaFunction, layer_from_source

    def run(handler_source, env=None, exec_wrapper=None, event=None):
        task = tmp_path / "task"
        task.mkdir()
        libraries = compat_task()
        for entry in os.listdir(libraries):
            if entry != ".done":
                os.symlink(os.path.join(libraries, entry), task / entry)
        (task / "handler.py").write_text(textwrap.dedent(handler_source))
        (task / "keepalive_probe.py").write_text(PROBE.read_text())
        opt = layer_from_source(tmp_path / "opt")
        env = dict(env or {})
        if exec_wrapper is not None:
            wrapper = opt / "wrapper"
            wrapper.write_text(textwrap.dedent(exec_wrapper))
            wrapper.chmod(0o755)
            env["AWS_LAMBDA_EXEC_WRAPPER"] = str(wrapper)
        (tmp_path / "work").mkdir()
        with LambdaFunction(task, "handler.handler", python="3.12", opt=opt, env=env,
                            freeze=False, workdir=tmp_path / "work") as function:
            invocation = function.invoke(event or {})
            invocation.init_output = [getattr(line, "text", line) for line in function.init_lines]
        return invocation

    return run
