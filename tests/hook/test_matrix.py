"""The hook on every botocore generation a function may bundle in /var/task, shadowing the layer's.

Each version lives in its own folder (``make test`` installs them from tests/botocore/*.txt); the
test function's task folder links to it, as a function that ships its own botocore would, while the
stand-in /opt holds the layer with the pinned botocore.  botocore 1.12.x only runs on Python 3.9,
which is also what the oldest method signature needs: those run on the 3.9 interpreter.
"""

import glob
import os
import sys

import pytest

from conftest import LAYER, ON, stale_warnings

BOTOCORE_DIRS = os.environ.get("AWS_KEEPALIVE_BOTOCORE_DIRS", "")
OLD_PYTHON = os.environ.get("AWS_KEEPALIVE_OLD_PYTHON", "")
MINOR = "%d.%d" % sys.version_info[:2]


def _tuple(version):
    return tuple(int(part) for part in version.split("."))


# botocore < 1.28 imports the cgi module, which Python 3.13 removed.
MATRIX = [v for v in ("1.27.83", "1.29.165", "1.34.162", "1.42.28", "1.42.29")
          if not (v == "1.27.83" and sys.version_info >= (3, 13))]

HANDLER = """
    import botocore
    import botocore.session
    import keepalive_probe

    def handler(event, context):
        session = botocore.session.get_session()
        report = {"version": botocore.__version__, "file": botocore.__file__}
        client = session.create_client("dynamodb", region_name="us-east-1",
                                       endpoint_url=event["url"])
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        report["default"] = keepalive_probe.client_socket_options(client)
        if event["config_off"]:
            from botocore.config import Config
            client = session.create_client("dynamodb", region_name="us-east-1",
                                           endpoint_url=event["url"],
                                           config=Config(tcp_keepalive=False))
            client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            report["config_off"] = keepalive_probe.client_socket_options(client)
        for how in event["store_off"]:
            # tcp_keepalive=False reaching botocore through the session's config store.
            session = botocore.session.Session()
            if how == "provider":
                from botocore.configprovider import ConstantProvider
                session.get_component("config_store").set_config_provider(
                    "tcp_keepalive", ConstantProvider(False))
            else:
                session.set_config_variable("tcp_keepalive", False)
            client = session.create_client("dynamodb", region_name="us-east-1",
                                           endpoint_url=event["url"])
            client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            report["store_off_" + how] = keepalive_probe.client_socket_options(client)
        return report
"""


def _store_off(version):
    """How a config-store False can reach this botocore: a provider registered on the session's
    store (every version with a store), and set_config_variable, which only reaches the store
    where botocore maps tcp_keepalive in it (1.42.29+; before, botocore ignores it as well)."""
    return ["provider", "variable"] if _tuple(version) >= (1, 42, 29) else ["provider"]


def _folder(minor, version):
    folder = os.path.join(BOTOCORE_DIRS, minor, version)
    assert os.path.isfile(os.path.join(folder, ".done")), (
        "botocore %s for Python %s missing under %r: run `make test`" % (version, minor, BOTOCORE_DIRS))
    return folder


def _task_and_opt(tmp_path, folder):
    """A task folder linking the bundled botocore, and an /opt whose layer has its own botocore."""
    task = tmp_path / "task"
    task.mkdir()
    for entry in os.listdir(folder):
        if entry != ".done":
            os.symlink(os.path.join(folder, entry), task / entry)
    import botocore

    layer_python = tmp_path / "opt" / "python"
    layer_python.mkdir(parents=True)
    for entry in os.listdir(LAYER):
        if entry != "__pycache__":
            os.symlink(os.path.join(LAYER, entry), layer_python / entry)
    site_packages = os.path.dirname(os.path.dirname(botocore.__file__))
    os.symlink(os.path.dirname(botocore.__file__), layer_python / "botocore")
    dist_info = glob.glob(os.path.join(site_packages, "botocore-*.dist-info"))[0]
    os.symlink(dist_info, layer_python / os.path.basename(dist_info))
    return str(task), str(tmp_path / "opt")


def _check(run, version, task, config_off, store_off=()):
    import botocore

    assert run.returncode == 0, run
    assert run.result["version"] == version
    assert run.result["file"].startswith(task)
    assert [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"], o["TCP_KEEPINTVL"], o["TCP_KEEPCNT"])
            for o in run.result["default"]] == [(1, 60, 10, 3)]
    if config_off:
        assert run.result["config_off"][0]["SO_KEEPALIVE"] == 0
    for how in store_off:
        assert [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"]) for o in run.result["store_off_" + how]] == [
            (0, 7200)], how
    shadow = [line for line in run.layer_lines if "shadows the layer's botocore" in line]
    assert len(shadow) == 1, run.stderr
    assert "botocore %s at %s" % (version, os.path.dirname(run.result["file"])) in shadow[0]
    assert "layer's botocore %s" % botocore.__version__ in shadow[0]


@pytest.mark.parametrize("version", MATRIX)
def test_bundled_botocore_gets_keepalive(version, run_function, server, tmp_path):
    """A function's own botocore gets the timers; Config(tcp_keepalive=False) wins where it exists,
    and so does a False in the session's config store."""
    task, opt = _task_and_opt(tmp_path, _folder(MINOR, version))
    config_off = _tuple(version) >= (1, 27, 84)
    run = run_function(HANDLER, env=ON, task=task, opt=opt,
                       event={"url": server.url, "config_off": config_off,
                              "store_off": _store_off(version)})
    _check(run, version, task, config_off, _store_off(version))


@pytest.mark.parametrize("version", MATRIX)
def test_bundled_botocore_stock_when_off(version, run_function, server, tmp_path):
    """Switch off: the bundled botocore's sockets are stock (no keep-alive, 7200 s), no warning."""
    task, opt = _task_and_opt(tmp_path, _folder(MINOR, version))
    run = run_function(HANDLER, task=task, opt=opt,
                       event={"url": server.url, "config_off": False, "store_off": []})
    assert run.returncode == 0, run
    assert [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"]) for o in run.result["default"]] == [(0, 7200)]
    assert run.stderr == ""


def test_oldest_signature_on_python39(run_function, server, tmp_path):
    """botocore 1.12.17 (first with _compute_socket_options, one argument) gets the timers."""
    assert os.path.isfile(OLD_PYTHON), "set AWS_KEEPALIVE_OLD_PYTHON to a CPython 3.9 (make test does)"
    task, opt = _task_and_opt(tmp_path, _folder("3.9", "1.12.17"))
    run = run_function(HANDLER, env=ON, task=task, opt=opt, python=OLD_PYTHON,
                       event={"url": server.url, "config_off": False, "store_off": []})
    _check(run, "1.12.17", task, False)


def test_too_old_botocore_warns_and_works(run_function, server, tmp_path):
    """botocore 1.12.16 (no socket options method): one clear warning, the client still works."""
    assert os.path.isfile(OLD_PYTHON), "set AWS_KEEPALIVE_OLD_PYTHON to a CPython 3.9 (make test does)"
    task, opt = _task_and_opt(tmp_path, _folder("3.9", "1.12.16"))
    run = run_function(HANDLER, env=ON, task=task, opt=opt, python=OLD_PYTHON,
                       event={"url": server.url, "config_off": False, "store_off": []})
    assert run.returncode == 0, run
    assert run.result["version"] == "1.12.16"
    assert [o["TCP_KEEPIDLE"] for o in run.result["default"]] == [7200]
    too_old = [line for line in run.layer_lines if "older than 1.12.17" in line]
    assert len(too_old) == 1 and "botocore 1.12.16" in too_old[0], run.stderr


STALE_HANDLER = """
    import time
    import botocore
    import botocore.session

    def handler(event, context):
        client = botocore.session.get_session().create_client(
            "dynamodb", region_name="us-east-1", endpoint_url=event["url"])
        client.put_item(TableName="table", Item={"pk": {"S": "0"}})
        retries = []
        for gap in event["gaps"]:
            time.sleep(gap)
            response = client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            retries.append(response["ResponseMetadata"]["RetryAttempts"])
        return {"version": botocore.__version__, "retries": retries}
"""


def _check_stale(run, version):
    assert run.returncode == 0, run
    assert run.result == {"version": version, "retries": [1, 0, 0]}, run
    stale = stale_warnings(run)
    assert len(stale) == 1 and "learned idle" in stale[0], run.stderr


# urllib3 1.26 (1.27.83), the runtimes' kind (1.34.162) and the newest of the matrix (urllib3 2.x;
# 1.12.17 below brings urllib3 1.23): the pool code the detection wraps is urllib3's.
# The versions are crossed with one interpreter (3.12, the tools' one, always present); every other
# interpreter's session runs the newest only: the interpreter-dependent part (exception classes)
# is the same for every version, and the cross product would cost ~10 s per interpreter.
STALE_MATRIX = [v for v in MATRIX if v in (("1.27.83", "1.34.162", "1.42.29") if MINOR == "3.12"
                                           else ("1.42.29",))]


@pytest.mark.parametrize("version", STALE_MATRIX)
def test_bundled_botocore_stale_reuse_detected_and_learned(version, run_function, tmp_path):
    """Bundled botocore on urllib3 1.26 and 2.x: a reset on a reused connection is reported once,
    and the next long gap gets a new connection instead of a retry."""
    from ddb_server import DynamoDBShapedServer

    task, opt = _task_and_opt(tmp_path, _folder(MINOR, version))
    with DynamoDBShapedServer(stale_after_s=0.4) as stale_server:
        run = run_function(STALE_HANDLER, env=ON, task=task, opt=opt,
                           event={"url": stale_server.url, "gaps": [0.6, 1.0, 0.1]})
    _check_stale(run, version)


@pytest.mark.skipif(MINOR != "3.12", reason="runs on CPython 3.9 whatever the session: the 3.12 session runs it")
def test_oldest_botocore_stale_reuse_detected_and_learned(run_function, tmp_path):
    """botocore 1.12.17 on Python 3.9 (the oldest urllib3 line): the same detection and learning."""
    from ddb_server import DynamoDBShapedServer

    assert os.path.isfile(OLD_PYTHON), "set AWS_KEEPALIVE_OLD_PYTHON to a CPython 3.9 (make test does)"
    task, opt = _task_and_opt(tmp_path, _folder("3.9", "1.12.17"))
    with DynamoDBShapedServer(stale_after_s=0.4) as stale_server:
        run = run_function(STALE_HANDLER, env=ON, task=task, opt=opt, python=OLD_PYTHON,
                           event={"url": stale_server.url, "gaps": [0.6, 1.0, 0.1]})
    _check_stale(run, "1.12.17")
