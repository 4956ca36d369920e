"""children.py: the layer in every child process, whatever multiprocessing's start method.

The function runs the way the managed runtime starts it (lab/standin/runtime/invoke_once.py: the layer's
``.pth`` through ``site.addsitedir``, then ``PYTHONPATH`` set to the runtime folder, which is what a
forkserver or spawn child starts with).  Its handler starts children with each start method
through ``concurrent.futures.ProcessPoolExecutor`` or ``multiprocessing.Pool``; each child creates
its own client, calls the DynamoDB-shaped server on loopback and reads its pooled socket's options
back with getsockopt.
"""

import os
import sys

from conftest import ON

METHODS = ("fork", "forkserver", "spawn")

# Imported by the children (a module of the task folder, which the children reach through the
# parent's sys.path): a client per child, one call, its socket's options.
CHILD_WORK = """\
import os
import sys

import boto3
from keepalive_probe import client_socket_options


def call(url):
    client = boto3.client("dynamodb", endpoint_url=url)
    client.list_tables()
    keepalive = sys.modules.get("aws_keepalive")
    return {"pid": os.getpid(), "options": client_socket_options(client),
            "activated": bool(getattr(keepalive, "_activated", False))}
"""

POOL_HANDLER = """
    import multiprocessing
    import os
    import sys
    from concurrent.futures import ProcessPoolExecutor

    import child_work

    URL = open("url.txt").read()


    def handler(event, context):
        results = {"parent": os.getpid()}
        for method in event["methods"]:
            context = multiprocessing.get_context(method)
            if event["api"] == "executor":
                with ProcessPoolExecutor(1, mp_context=context) as pool:
                    results[method] = pool.submit(child_work.call, URL).result()
            else:
                with context.Pool(1) as pool:
                    results[method] = pool.apply(child_work.call, (URL,))
        spawn = sys.modules["multiprocessing.spawn"]
        results["prepare_patched"] = hasattr(spawn.get_preparation_data, "_aws_keepalive")
        return results
"""

KEEPALIVE_ON = {"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 3}


def _run(run_function, server, tmp_path, env, methods=METHODS, api="executor", handler=POOL_HANDLER):
    task = tmp_path / "task"
    task.mkdir(exist_ok=True)
    (task / "url.txt").write_text(server.url)
    (task / "child_work.py").write_text(CHILD_WORK)
    return run_function(handler, env=env, task=str(task),
                        event={"methods": list(methods), "api": api}, timeout=120)


def _keepalive(options):
    return {name: options[name] for name in KEEPALIVE_ON}


def test_every_start_method_child_has_the_timers(run_function, server, tmp_path):
    """ProcessPoolExecutor children started by fork, forkserver and spawn: timers on their sockets."""
    run = _run(run_function, server, tmp_path, dict(ON))
    assert run.returncode == 0, run
    for method in METHODS:
        child = run.result[method]
        assert child["pid"] != run.result["parent"], method
        assert child["activated"], (method, run.stderr)
        assert [_keepalive(o) for o in child["options"]] == [KEEPALIVE_ON], (method, run.stderr)
    assert run.stderr == ""


def test_multiprocessing_pool_children_have_the_timers(run_function, server, tmp_path):
    """multiprocessing.Pool workers (forkserver, spawn: the fresh interpreters) carry the timers too."""
    run = _run(run_function, server, tmp_path, dict(ON), methods=("forkserver", "spawn"), api="pool")
    assert run.returncode == 0, run
    for method in ("forkserver", "spawn"):
        assert [_keepalive(o) for o in run.result[method]["options"]] == [KEEPALIVE_ON], run.stderr


def test_switch_off_children_stock_multiprocessing_untouched(run_function, server, tmp_path):
    """Switch off: no child activated, stock sockets, multiprocessing's functions not wrapped."""
    run = _run(run_function, server, tmp_path, {})
    assert run.returncode == 0, run
    assert run.result["prepare_patched"] is False
    for method in METHODS:
        assert not run.result[method]["activated"], method
        assert [o["SO_KEEPALIVE"] for o in run.result[method]["options"]] == [0], method
    assert run.stderr == ""


def test_debug_line_names_each_child_route_once(run_function, server, tmp_path):
    """Debug on: one startup line per process, naming pth, fork, forkserver, spawn with its pid."""
    run = _run(run_function, server, tmp_path, dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
    assert run.returncode == 0, run
    startup = [line for line in run.layer_lines if " on (via " in line]
    assert len([line for line in startup if "(via pth)" in line]) == 1, startup
    for method in METHODS:
        mine = [line for line in startup if "(via %s)" % method in line]
        assert mine == [line for line in startup if "in pid %d;" % run.result[method]["pid"] in line], startup
        assert len(mine) == 1, (method, startup)
    assert len(startup) == 4, startup
    # The spawn child names the botocore it will import: the parent's (sys.path restored first).
    assert "botocore not found" not in "\n".join(startup)


def test_child_that_cannot_import_the_layer_runs_stock_with_one_warning(run_function, server, tmp_path):
    """Layer folder gone before a spawn child starts: one warning in the child, which still works."""
    handler = POOL_HANDLER.replace(
        "    def handler(event, context):\n",
        "    def handler(event, context):\n"
        "        os.unlink(os.path.join(%r, 'python'))  # the layer folder (a symlink here)\n"
        % str(tmp_path / "opt"),
    )
    (tmp_path / "opt").mkdir()
    os.symlink(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "layer"),
               str(tmp_path / "opt" / "python"))
    run = _run(run_function, server, tmp_path, dict(ON), methods=("spawn",), handler=handler)
    assert run.returncode == 0, run
    child = run.result["spawn"]
    assert not child["activated"] and [o["SO_KEEPALIVE"] for o in child["options"]] == [0]
    warnings = [line for line in run.layer_lines if "WARN" in line]
    assert len(warnings) == 1 and "child process" in warnings[0], run.stderr


def test_python_subprocess_with_opt_python_on_pythonpath_activates(run_function, server, tmp_path):
    """The documented way for a program the function runs itself: PYTHONPATH=/opt/python first
    (usercustomize activates it: the plain CPython, user site on, as the managed runtime's)."""
    handler = """
    import os
    import subprocess
    import sys

    def handler(event, context):
        env = dict(os.environ)
        layer = [p for p in sys.path if p.endswith(os.sep + "python") and "opt" in p][0]
        env["PYTHONPATH"] = layer + os.pathsep + env["PYTHONPATH"]
        probe = "import sys, aws_keepalive; print(aws_keepalive._activated)"
        plain = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        with_layer = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                                    text=True)
        return {"plain": plain.returncode, "with_layer": with_layer.stdout.strip()}
    """
    plain_python = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
    run = run_function(handler, env=dict(ON), python=plain_python)
    assert run.returncode == 0, run
    # Without it the layer is not even importable (PYTHONPATH=/var/runtime); with it, activated.
    assert run.result == {"plain": 1, "with_layer": "True"}


# A thread holds one of the layer's locks while the handler starts a child; the child makes a new
# client and two calls (the second reuses the pooled connection: the checked-out count, the
# host's idle evidence and the metrics counter each take their lock).
# A child that does not finish within HANG_S is counted as hung and killed.
LOCK_HANDLER = """
    import importlib
    import multiprocessing
    import os
    import threading
    import time

    import boto3

    URL = open("url.txt").read()
    HANG_S = 10.0


    def work_then_exit():
        try:
            client = boto3.client("dynamodb", endpoint_url=URL)
            client.list_tables()
            time.sleep(0.2)
            client.list_tables()
        except BaseException:
            os._exit(3)
        os._exit(0)


    def raw_fork():
        pid = os.fork()
        if pid == 0:
            work_then_exit()
        deadline = time.monotonic() + HANG_S
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return "ok" if os.waitstatus_to_exitcode(status) == 0 else "failed"
            time.sleep(0.05)
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return "hung"


    def outcome(process):
        process.join(HANG_S)
        if process.is_alive():
            process.kill()
            process.join()
            return "hung"
        return "ok" if process.exitcode == 0 else "failed"


    def handler(event, context):
        boto3.client("dynamodb", endpoint_url=URL).list_tables()  # botocore patched, modules loaded
        import aws_keepalive.children as children

        results = {}
        for module_name, attribute in children.LOCKS:
            lock = getattr(importlib.import_module(module_name), attribute, None)
            if lock is None:
                continue  # a lock named there that its module no longer has
            for method in event["methods"]:
                taken, release = threading.Event(), threading.Event()

                def hold():
                    with lock:
                        taken.set()
                        release.wait()

                holder = threading.Thread(target=hold)
                holder.start()
                taken.wait()
                if method == "os.fork":
                    threading.Timer(0.5, release.set).start()
                    result = raw_fork()
                else:
                    process = multiprocessing.get_context(method).Process(target=work_then_exit)
                    process.start()
                    release.set()
                    result = outcome(process)
                release.set()
                holder.join()
                results["%s.%s %s" % (module_name, attribute, method)] = result
        return results
"""


def test_child_forked_while_a_layer_lock_is_held_does_not_hang(run_function, server, tmp_path):
    """Each lock of the layer held by another thread while a child starts (multiprocessing fork,
    forkserver, spawn; a raw os.fork): the child's new client completes its calls (a child that
    inherited a held lock would hang on its first call: stock urllib3 locks per pool only)."""
    methods = ["os.fork"] + list(METHODS)
    env = dict(ON, AWS_PYTHON_KEEPALIVE_METRICS="1")
    run = _run(run_function, server, tmp_path, env, methods=methods, handler=LOCK_HANDLER)
    assert run.returncode == 0, run
    hung = sorted(name for name, result in run.result.items() if result != "ok")
    assert len(run.result) == 3 * len(methods) and not hung, (hung, sorted(run.result))


def test_every_lock_of_the_layer_is_renewed_after_fork():
    """children.LOCKS names every lock object at module level in the layer (a new lock added
    without it would cross fork held)."""
    import importlib
    import pkgutil
    import threading

    import aws_keepalive
    import aws_keepalive.children as children

    lock_types = (type(threading.Lock()), type(threading.RLock()))
    found = set()
    for module_info in pkgutil.iter_modules(aws_keepalive.__path__, "aws_keepalive."):
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if isinstance(value, lock_types):
                found.add((module_info.name, name))
    assert found and found <= set(children.LOCKS), found
