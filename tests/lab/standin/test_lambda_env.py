"""lab/standin/lambda_env.py: real awslambdaric processes on every CPython, errors, freezing, /opt, the layer."""

import json
import os
import signal
import subprocess
import time

import pytest

from standin import PYTHONS, layer_has_botocore, layer_root_fixture, require_root_namespaces, write_task  # noqa: F401
from lab.standin.lambda_env import LambdaFunction, can_mount_opt, runtime_python
from lab.standin import runtime_prefix
from lab.standin.runtime_prefix import runtime_boto3

TRIVIAL = """
    import os, sys
    print("init of fn", file=sys.stderr)

    def handler(event, context):
        import awslambdaric, boto3
        print("handling", event)
        state = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[0]
        return {"event": event, "python": "%d.%d" % sys.version_info[:2], "rid": context.aws_request_id,
                "awslambdaric": awslambdaric.__version__, "boto3": boto3.__version__,
                "state": state, "env": dict(os.environ), "pid": os.getpid(), "path": sys.path}

    def fail(event, context):
        raise ValueError("handler failed on purpose")
"""


@pytest.fixture
def task(tmp_path):
    return write_task(tmp_path / "task", fn=TRIVIAL)


@pytest.mark.parametrize("python", PYTHONS)
def test_trivial_handler_on_every_cpython(task, python):
    """awslambdaric on CPython 3.10-3.14 serves invocations; no layer means the bundled-kind boto3 (RUNTIME_BOTO3)."""
    with LambdaFunction(task, "fn.handler", python=python) as fn:
        assert fn.init_ms is not None and fn.init_ms > 0
        assert [line.text for line in fn.init_lines] == ["init of fn"]
        for i in range(2):
            record = fn.invoke({"i": i})
            assert record.ok, record.outcome
            assert record.result["event"] == {"i": i} and record.result["rid"] == record.request_id
            assert record.result["python"] == python
            assert record.result["awslambdaric"] == "4.2.2" and record.result["boto3"] == runtime_boto3()
            assert record.stdout == ["handling {'i': %d}" % i]


def test_handler_exception_posts_an_error_and_the_runtime_goes_on(task):
    """A raising handler yields an error outcome with its type; the next invocation still works."""
    with LambdaFunction(task, "fn.fail") as fn:
        record = fn.invoke({})
        assert record.outcome.kind == "error" and record.outcome.error_type == "ValueError"
        assert record.result["errorMessage"] == "handler failed on purpose"
        assert any("handler failed on purpose" in line for line in record.stdout + record.stderr)
        assert fn.invoke({}).outcome.kind == "error" and fn.alive()


def test_import_failure_posts_init_error_and_the_process_exits(tmp_path):
    """A handler module that fails to import reaches /init/error, and the runtime exits."""
    task = write_task(tmp_path / "task", broken="import lab_module_that_does_not_exist\n")
    with LambdaFunction(task, "broken.handler") as fn:
        assert fn.api.init_error is not None
        assert fn.api.init_error.error_type == "Runtime.ImportModuleError"
        assert "lab_module_that_does_not_exist" in fn.api.init_error.body["errorMessage"]
        assert not fn.alive() and fn.proc.returncode != 0


def test_frozen_between_invocations_running_during_them(task):
    """Between invocations the process is stopped (state T); during one it runs and was thawed."""
    with LambdaFunction(task, "fn.handler") as fn:
        assert fn.state() == "T"
        for _ in range(3):
            time.sleep(0.05)
            assert fn.state() == "T"
            record = fn.invoke({})
            assert record.thawed and record.result["state"] == "R"
            assert fn.state() == "T"


def test_no_freeze_option_leaves_the_process_running(task):
    """freeze=False keeps the runtime sleeping in `next` (state S), never stopped."""
    with LambdaFunction(task, "fn.handler", freeze=False) as fn:
        record = fn.invoke({})
        states = []
        for _ in range(100):  # right after `next` was called the main thread may still be running
            states.append(fn.state())
            if states[-1] == "S":
                break
            time.sleep(0.01)
        assert not record.thawed and states[-1] == "S" and "T" not in states, states


def test_stop_ends_a_frozen_process(task):
    """stop() on a frozen (SIGSTOPped) runtime ends it within seconds and leaves no process."""
    fn = LambdaFunction(task, "fn.handler").start()
    pid = fn.proc.pid
    assert fn.state() == "T"
    started = time.monotonic()
    fn.stop()
    assert time.monotonic() - started < 3, "SIGTERM was not delivered: frozen process not continued?"
    assert fn.proc.returncode == -signal.SIGTERM
    assert not os.path.exists("/proc/%d" % pid)


def test_child_environment_is_explicit(task, monkeypatch):
    """The machine's AWS_CA_BUNDLE, PYTHON* variables do not leak; Lambda's and the function's do."""
    monkeypatch.setenv("AWS_CA_BUNDLE", "/machine/ca.pem")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    with LambdaFunction(task, "fn.handler", python="3.11", env={"TABLE_NAME": "lab-table"}) as fn:
        env = fn.invoke({}).result["env"]
    assert "AWS_CA_BUNDLE" not in env and "PYTHONDONTWRITEBYTECODE" not in env
    assert env["TABLE_NAME"] == "lab-table" and env["AWS_EXECUTION_ENV"] == "AWS_Lambda_python3.11"
    assert env["AWS_REGION"] == "us-east-1" and env["_HANDLER"] == "fn.handler"
    assert env["PYTHONPATH"] == env["LAMBDA_RUNTIME_DIR"]  # set by the bootstrap, as on Lambda


def test_command_prefix_runs_the_function_under_it(task):
    """A command prefix (here nice(1), which execs like `ip netns exec`) wraps the runtime, whose pid
    is still the one the lab signals."""
    with LambdaFunction(task, "fn.handler", prefix=["nice", "-n", "5"]) as fn:
        record = fn.invoke({})
        assert record.result["pid"] == fn.proc.pid
        assert os.getpriority(os.PRIO_PROCESS, fn.proc.pid) >= 5
        assert fn.state() == "T"


def test_function_inside_a_network_namespace(task):
    """With the `ip netns exec NS` prefix and the Runtime API on a socket made in the namespace, the
    function runs inside it, is served over the namespace's own loopback, and is frozen by pid."""
    import socket

    from lab.net import nat

    require_root_namespaces(nat.unavailable_reason())
    with nat.NatNamespace(mode="off") as namespace:
        with LambdaFunction(task, "fn.handler", prefix=namespace.command([]),
                            api_sock_factory=namespace.socket) as fn:
            record = fn.invoke({})
            assert os.readlink("/proc/%d/ns/net" % fn.proc.pid) != os.readlink("/proc/self/ns/net")
            assert record.ok and record.result["pid"] == fn.proc.pid
            assert record.result["env"]["AWS_LAMBDA_RUNTIME_API"] == fn.api.address
            port = int(fn.api.address.rsplit(":", 1)[1])
            with pytest.raises(ConnectionRefusedError):  # not on the host's loopback
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
            assert fn.state() == "T"


def test_real_read_only_opt_in_a_private_mount_namespace(tmp_path):
    """real_opt: the layer folder is /opt inside the function only, and read-only there."""
    require_root_namespaces(can_mount_opt())
    task = write_task(tmp_path / "task", probe="""
        import errno, os, sys

        def handler(event, context):
            try:
                open("/opt/python/written", "w")
                write = "ok"
            except OSError as error:
                write = errno.errorcode[error.errno]
            import labmarker
            return {"marker": labmarker.__file__, "write": write}
    """)
    opt = tmp_path / "layer"
    write_task(opt / "python", labmarker="")
    host_opt = sorted(os.listdir("/opt"))
    with LambdaFunction(task, "probe.handler", opt=opt, real_opt=True) as fn:
        result = fn.invoke({}).result
    assert result == {"marker": "/opt/python/labmarker.py", "write": "EROFS"}
    assert sorted(os.listdir("/opt")) == host_opt and not (opt / "python" / "written").exists()


@pytest.mark.parametrize("python", PYTHONS)
def test_layer_pth_route_loads_the_hook(task, layer_root, python):
    """With the layer and AWS_PYTHON_KEEPALIVE=1, the .pth activates the hook (its debug lines appear)
    before the handler is imported; the layer's boto3 replaces the bundled one when it has one."""
    env = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"}
    with LambdaFunction(task, "fn.handler", python=python, opt=layer_root, env=env) as fn:
        init = [line.text for line in fn.init_lines]
        record = fn.invoke({})
    hook = [line for line in init if line.startswith("aws-keepalive:")]
    assert hook, init
    assert init.index(hook[0]) < init.index("init of fn")
    assert record.ok and str(layer_root) in " ".join(record.result["path"][:3])
    if layer_has_botocore(layer_root):
        assert record.result["boto3"] != runtime_boto3()


def test_layer_with_switch_off_prints_nothing(task, layer_root):
    """Layer present but AWS_PYTHON_KEEPALIVE unset: no hook line, the function works."""
    with LambdaFunction(task, "fn.handler", opt=layer_root, env={"AWS_PYTHON_KEEPALIVE_DEBUG": "1"}) as fn:
        record = fn.invoke({})
        lines = [line.text for line in fn.init_lines] + record.stderr + record.stdout
    assert record.ok and not [line for line in lines if "aws-keepalive" in line]


def test_runtime_venv_holds_exactly_the_lock(tmp_path):
    """The runtime prefix holds lab/runtime-requirements.txt and the runtime-kind boto3 lock, compiled."""
    python = runtime_python("3.12")
    frozen = subprocess.run([str(python), "-c", "import importlib.metadata as m; import json; "
                             "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))"],
                            capture_output=True, text=True, check=True, env={})
    installed = json.loads(frozen.stdout)
    assert installed["awslambdaric"] == "4.2.2" and installed["botocore"] == runtime_boto3()
    pinned = dict(line.split(" ")[0].split("==") for line in runtime_prefix.sdk_lock().read_text().splitlines()
                  if "==" in line and not line.startswith(" "))
    assert installed["urllib3"] == pinned["urllib3"]
    # Compiled when installed (the runtime ships bytecode): also a module nothing here imports.
    compiled = runtime_prefix.site_packages(python.parents[1], "3.12") / "s3transfer" / "__pycache__"
    assert any(name.startswith("processpool.") for name in os.listdir(compiled))


def test_exec_wrapper_runs_as_the_runtime_bootstrap_runs_it(tmp_path, task):
    """AWS_LAMBDA_EXEC_WRAPPER=/opt/wrap: exec'd from the stand-in /opt with the interpreter and
    bootstrap.py as its first arguments; what it exports reaches the function."""
    opt = tmp_path / "opt"
    opt.mkdir()
    wrapper = opt / "wrap"
    wrapper.write_text('#!/bin/bash\nexport WRAPPED_ARGS="$1 $(basename "$2")"\nexec "$@"\n')
    wrapper.chmod(0o755)
    with LambdaFunction(task, "fn.handler", opt=opt, env={"AWS_LAMBDA_EXEC_WRAPPER": "/opt/wrap"}) as fn:
        record = fn.invoke({})
    assert record.ok, record.outcome
    interpreter, script = record.result["env"]["WRAPPED_ARGS"].split()
    assert interpreter == str(runtime_python("3.12")) and script == "bootstrap.py"


def test_missing_exec_wrapper_is_an_error(tmp_path, task):
    """A wrapper that does not exist fails before the interpreter starts, as the runtime's bootstrap does."""
    with pytest.raises(RuntimeError, match="EXEC_WRAPPER"):
        LambdaFunction(task, "fn.handler", opt=tmp_path, env={"AWS_LAMBDA_EXEC_WRAPPER": "/opt/nope"}).start()


QUOTA = """
    import os

    def handler(event, context):
        line = [l for l in open("/proc/self/cgroup") if ":cpu," in l or ":cpu:" in l or ",cpu," in l][0]
        folder = "/sys/fs/cgroup/cpu" + line.strip().split(":", 2)[2]
        return {"memory": os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"], "folder": folder,
                "quota": open(folder + "/cpu.cfs_quota_us").read().strip(),
                "period": open(folder + "/cpu.cfs_period_us").read().strip()}
"""


def test_memory_size_sets_the_cpu_share_and_the_variable(tmp_path):
    """memory_mb=512: the runtime process sits in a cgroup with 512/1769 of a 100 ms period and
    sees AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512; the cgroup is gone once the function stops."""
    with LambdaFunction(write_task(tmp_path / "task", fn=QUOTA), "fn.handler", memory_mb=512) as fn:
        record = fn.invoke({})
        assert record.ok, record.outcome
    assert record.result["memory"] == "512"
    assert (record.result["quota"], record.result["period"]) == ("28942", "100000")
    assert not os.path.exists(record.result["folder"])
