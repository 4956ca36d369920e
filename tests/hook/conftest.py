"""Fixtures for the hook tests: a DynamoDB-shaped server and a way to run a function the way the
managed runtime does (lab/standin/runtime/invoke_once.py), each in a fresh interpreter."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from ddb_server import DynamoDBShapedServer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYER = os.path.join(REPO, "layer")
# In-process tests (settings, diagnostics) import the package from the plain layer folder.
sys.path.insert(0, LAYER)
STANDIN = os.path.join(REPO, "lab", "standin", "runtime", "invoke_once.py")
TASK_HELPERS = os.path.join(REPO, "tests", "hook", "task", "keepalive_probe.py")

# The machine exports AWS_CA_BUNDLE and friends: children get only what a Lambda function would
# have, plus what a test adds.
BASE_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": os.environ.get("HOME", "/root"),
    "LANG": "C.UTF-8",
    "AWS_ACCESS_KEY_ID": "AKIDTESTKEEPALIVE",
    "AWS_SECRET_ACCESS_KEY": "test-secret-never-printed",
    "AWS_SESSION_TOKEN": "test-token-never-printed",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}


def python_with_layer(script, env=None):
    """Run ``script`` in a fresh interpreter that has the layer package importable.

    The package is put on sys.path by hand (not PYTHONPATH) so that sitecustomize stays out and
    the script alone decides when and how the layer is activated.
    """
    child_env = dict(BASE_ENV, **(env or {}))
    script = "import sys; sys.path.insert(0, %r)\n" % LAYER + script
    return subprocess.run([sys.executable, "-c", script], env=child_env,
                          capture_output=True, text=True, timeout=60)


class FunctionRun:
    """What one run of a test function printed: the handler's result and the stderr lines."""

    def __init__(self, completed):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        lines = [line for line in completed.stdout.splitlines() if line.strip()]
        self.result = json.loads(lines[-1]) if completed.returncode == 0 and lines else None

    @property
    def layer_lines(self):
        return [line for line in self.stderr.splitlines() if line.startswith("aws-keepalive:")]

    def __repr__(self):
        return "FunctionRun(rc=%s, stdout=%r, stderr=%r)" % (self.returncode, self.stdout, self.stderr)


@pytest.fixture
def server():
    with DynamoDBShapedServer() as running:
        yield running


@pytest.fixture
def tls_server(tmp_path):
    """The same server behind TLS, with a certificate for localhost from a CA made for the test."""
    import ssl

    import trustme

    authority = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("localhost").configure_cert(context)
    ca_bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_bundle))
    with DynamoDBShapedServer(tls_context=context) as running:
        running.ca_bundle = str(ca_bundle)
        yield running


@pytest.fixture
def run_function(tmp_path):
    """run_function(handler_source, env={...}) -> FunctionRun.

    Writes ``handler_source`` as handler.py into a fresh task folder (the stand-in /var/task),
    then starts a new interpreter on lab/standin/runtime/invoke_once.py with ``layer/`` as the layer's
    ``python`` folder, so the layer is activated through its real entry points.
    """

    def run(handler_source, env=None, python=sys.executable, opt=None, task=None,
            pythonpath=None, event=None, timeout=60, standin_args=()):
        task = task or str(tmp_path / "task")
        os.makedirs(task, exist_ok=True)
        with open(os.path.join(task, "handler.py"), "w") as handler_file:
            handler_file.write(textwrap.dedent(handler_source))
        shutil.copy(TASK_HELPERS, task)
        if opt is None:
            opt = str(tmp_path / "opt")
            if not os.path.exists(opt):
                os.makedirs(opt)
                os.symlink(LAYER, os.path.join(opt, "python"))
        child_env = dict(BASE_ENV)
        child_env.update(env or {})
        if pythonpath is not None:
            child_env["PYTHONPATH"] = pythonpath
        command = [python, STANDIN, "--opt", opt, "--task", task, "--handler", "handler.handler"]
        if event is not None:
            command += ["--event", json.dumps(event)]
        command += list(standin_args)
        completed = subprocess.run(
            command, env=child_env, capture_output=True, text=True, timeout=timeout, cwd=task
        )
        return FunctionRun(completed)

    return run


ON = {"AWS_PYTHON_KEEPALIVE": "1"}

def run_chained(python, tmp_path, module, switch, form="py"):
    """Run ``python`` with the layer first on PYTHONPATH and another ``module`` (which sets
    OTHER=ran) later on it, hidden by the layer's file of that name; ``switch``: the layer's switch
    (None: unset); ``form``: that module as ``py`` (a file), ``package`` (a folder with an
    ``__init__.py``) or ``pyc`` (a sourceless ``.pyc``, compiled by ``python``).  Its stdout:
    whether the other module ran, and whether the layer was imported."""
    other = tmp_path / "other"
    other.mkdir()
    source = "import os\nos.environ['OTHER'] = 'ran'\n"
    if form == "package":
        (other / module).mkdir()
        (other / module / "__init__.py").write_text(source)
    else:
        (other / (module + ".py")).write_text(source)
    if form == "pyc":
        compile_to = "import py_compile, sys; py_compile.compile(sys.argv[1], sys.argv[2], doraise=True)"
        subprocess.run([python, "-c", compile_to,
                        str(other / (module + ".py")), str(other / (module + ".pyc"))], check=True, timeout=30)
        os.unlink(other / (module + ".py"))
    env = dict(BASE_ENV, PYTHONPATH=os.pathsep.join([LAYER, str(other)]))
    if switch:
        env["AWS_PYTHON_KEEPALIVE"] = switch
    report = "import os, sys; print(os.environ.get('OTHER'), 'aws_keepalive' in sys.modules)"
    return subprocess.run([python, "-c", report], env=env, capture_output=True, text=True, timeout=30)


@contextlib.contextmanager
def loopback_pair():
    """A connected TCP pair on loopback, (client, server); both and the listener closed after."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    try:
        yield client, server
    finally:
        for sock in (client, server, listener):
            sock.close()


def stale_warnings(run):
    """The stale-reuse warning lines (and debug repeats) a function run wrote."""
    return [line for line in run.layer_lines if "stale pooled connection" in line]


def assert_learned_after_first_gap(warning):
    """The warning of a stale reuse after the tests' 0.6 s first gap, behind a path that forgets
    flows idle > 0.4 s: the idle time is measured (a loaded machine sleeps longer than asked), and
    the learned limit is 0.8 x that idle, above the 0.4 s the path allows, below the 1.0 s gaps."""
    import re

    idle = re.search(r"reused after (\d+(?:\.\d+)?) s idle", warning)
    learned = re.search(r"replaced once idle (\d+(?:\.\d+)?) s \(learned idle\)", warning)
    assert idle and learned, warning
    idle_s, learned_s = float(idle.group(1)), float(learned.group(1))
    assert 0.6 <= idle_s < 1.2 and 0.8 * 0.6 - 0.05 <= learned_s <= 0.8 * idle_s + 0.05, warning
