"""aio.py: aiobotocore (and aioboto3) clients get keep-alive, idle replacement and the pool size.

Each aiobotocore version lives in its own folder with the botocore and aiohttp it pins (``make
test`` installs them from tests/aio/*.txt into .venv/aio/<python>/<name>); the test function's
task folder links to it, as a function bundling aiobotocore would, so its botocore shadows any
other.  The handler runs an asyncio loop against the local DynamoDB-shaped server and reads the
options back with getsockopt from the sockets in the aiohttp connector's pool.
"""

import os
import sys

import pytest

from conftest import ON, assert_learned_after_first_gap, python_with_layer, stale_warnings
from ddb_server import DynamoDBShapedServer

AIO_DIRS = os.environ.get("AWS_KEEPALIVE_AIO_DIRS", "")
MINOR = "%d.%d" % sys.version_info[:2]

# aiohttp 3.9.5 has no wheels for CPython 3.13 or 3.14 (the Makefile installs it on 3.10 - 3.12 only).
MATRIX = ["aiobotocore-3.10.0", "aiobotocore-2.26.0", "aioboto3-15.5.0"] + (
    ["aiobotocore-2.26.0-aiohttp-3.9.5"] if sys.version_info < (3, 13) else []
)

HANDLER = """
    import os
    if os.environ.get("TEST_BREAK"):
        # Make one step of the layer's aiobotocore patch fail, as an unexpected version could.
        import aws_keepalive.aio as aio

        def broken(*args, **kwargs):
            raise RuntimeError("injected failure")

        setattr(aio, os.environ["TEST_BREAK"], broken)

    import asyncio
    import time

    import aiobotocore
    import botocore
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session

    import keepalive_probe


    class NotAiohttp:
        def __init__(self, **kwargs):
            pass

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            pass

        async def close(self):
            pass


    def pooled_sockets(connector):
        protocols = [entry[0] for conns in connector._conns.values() for entry in conns]
        return [p.transport.get_extra_info("socket") for p in protocols if p.transport is not None]


    async def run(event):
        # One session for all of them: a session per client re-read the service model and
        # endpoints.json 50 times (no prepared data for the task's own botocore), ~45-60 s at load
        # 12 (issue 31), and the claim is about the connector_args, not the sessions.
        clients_session = get_session()
        for _ in range(event.get("resolver_clients", 0)):
            # A new resolver object per client (its repr holds its address), as a function that
            # builds its AioConfig per client or per request does.
            import aiohttp

            per_client = AioConfig(connector_args={"resolver": aiohttp.ThreadedResolver()})
            async with clients_session.create_client("dynamodb", region_name="us-east-1",
                                                     endpoint_url=event["url"], config=per_client):
                pass
        config = event.get("config")
        if config is not None:
            if config.pop("not_aiohttp", False):
                config["http_session_cls"] = NotAiohttp
            config = AioConfig(**config)
        report = {"aiobotocore": aiobotocore.__version__, "botocore": botocore.__file__}
        session = get_session()
        if event.get("by_position"):
            # service, region, api_version, use_ssl, verify, endpoint_url, 3 credentials, config
            creating = session.create_client("dynamodb", "us-east-1", None, True, None, event["url"],
                                             None, None, None, config)
        else:
            creating = session.create_client("dynamodb", region_name="us-east-1",
                                             endpoint_url=event["url"], config=config,
                                             verify=event.get("ca"))
        async with creating as client:
            report["pool"] = client.meta.config.max_pool_connections
            report["read_timeout"] = client.meta.config.read_timeout
            if event.get("no_requests"):
                return report
            report["retries"] = []
            for gap in event.get("gaps", [0]):
                if event.get("block_loop"):
                    # The loop does not run: a FIN arriving now stays unread, as during a freeze.
                    time.sleep(gap)
                else:
                    await asyncio.sleep(gap)
                responses = await asyncio.gather(*[
                    client.put_item(TableName="table", Item={"pk": {"S": "1"}})
                    for _ in range(event.get("concurrent", 1))])
                report["retries"] += [r["ResponseMetadata"]["RetryAttempts"] for r in responses]
            connector = client._endpoint.http_session._sessions[None].connector
            report["limit"] = connector.limit
            report["options"] = [keepalive_probe.socket_options(sock)
                                 for sock in pooled_sockets(connector)]
        return report


    def handler(event, context):
        return asyncio.run(run(event))
"""


def _task(tmp_path, name):
    folder = os.path.join(AIO_DIRS, MINOR, name)
    assert os.path.isfile(os.path.join(folder, ".done")), (
        "%s for Python %s missing under %r: run `make test`" % (name, MINOR, AIO_DIRS))
    task = tmp_path / "task"
    task.mkdir(parents=True)
    for entry in os.listdir(folder):
        if entry != ".done":
            os.symlink(os.path.join(folder, entry), task / entry)
    return str(task)


def _run(run_function, tmp_path, name, event, env=None):
    task = _task(tmp_path, name)
    run = run_function(HANDLER, env=env, task=task, event=event)
    assert run.returncode == 0, run
    assert run.result["botocore"].startswith(task), run.result
    return run


def _timers(run):
    return [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"], o["TCP_KEEPINTVL"], o["TCP_KEEPCNT"])
            for o in run.result["options"]]


def _new_connections(run):
    return [line for line in run.layer_lines if "new connection to" in line]


@pytest.mark.parametrize("name", MATRIX)
def test_timers_on_real_tls_socket(name, run_function, tls_server, tmp_path):
    """Switch on: the connection aiohttp opened carries SO_KEEPALIVE and the layer's three timers."""
    run = _run(run_function, tmp_path, name, {"url": tls_server.url, "ca": tls_server.ca_bundle},
               env=dict(ON, AWS_PYTHON_KEEPALIVE_IDLE="45"))
    assert _timers(run) == [(1, 45, 10, 3)]
    assert [line for line in run.layer_lines if "WARN" in line] == []


@pytest.mark.parametrize("name", MATRIX)
def test_switch_off_leaves_aiobotocore_stock(name, run_function, server, tmp_path):
    """Switch off: no keep-alive on the socket (kernel's 7200 s), aiobotocore's pool of 10, no output."""
    run = _run(run_function, tmp_path, name, {"url": server.url})
    assert _timers(run) == [(0, 7200, 75, 9)]
    assert run.result["limit"] == 10
    assert run.stderr == ""


@pytest.mark.parametrize("name", MATRIX)
def test_aioconfig_tcp_keepalive_false_wins(name, run_function, server, tmp_path):
    """AioConfig(tcp_keepalive=False) set by the function: no keep-alive on its connections."""
    run = _run(run_function, tmp_path, name,
               {"url": server.url, "config": {"tcp_keepalive": False}}, env=ON)
    assert [o["SO_KEEPALIVE"] for o in run.result["options"]] == [0]


@pytest.mark.parametrize("name", MATRIX)
def test_pool_size_from_variable_and_users_wins(name, run_function, server, tmp_path):
    """POOL_SIZE becomes the connector limit without AioConfig(max_pool_connections); the user's wins."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_POOL_SIZE="32")
    run = _run(run_function, tmp_path, name, {"url": server.url}, env=env)
    assert (run.result["pool"], run.result["limit"]) == (32, 32)
    run = _run(run_function, tmp_path / "user", name,
               {"url": server.url, "config": {"max_pool_connections": 5, "read_timeout": 7}}, env=env)
    assert (run.result["pool"], run.result["limit"]) == (5, 5)


@pytest.mark.parametrize("name", MATRIX)
def test_pool_size_with_config_by_position(name, run_function, server, tmp_path):
    """AioConfig passed by position: POOL_SIZE is merged into it, its own read_timeout kept."""
    run = _run(run_function, tmp_path, name,
               {"url": server.url, "by_position": True, "config": {"read_timeout": 7}},
               env=dict(ON, AWS_PYTHON_KEEPALIVE_POOL_SIZE="24"))
    assert (run.result["pool"], run.result["limit"], run.result["read_timeout"]) == (24, 24, 7)


@pytest.mark.parametrize("name", MATRIX)
def test_pool_size_out_of_range_warns_and_keeps_default(name, run_function, server, tmp_path):
    """POOL_SIZE=5000 (beyond the range): a warning naming it and its value; aiobotocore's 10 stays."""
    run = _run(run_function, tmp_path, name, {"url": server.url},
               env=dict(ON, AWS_PYTHON_KEEPALIVE_POOL_SIZE="5000"))
    assert run.result["limit"] == 10
    warnings = [line for line in run.layer_lines if "AWS_PYTHON_KEEPALIVE_POOL_SIZE" in line]
    assert len(warnings) == 1 and "'5000'" in warnings[0], run.stderr


@pytest.mark.parametrize("name", MATRIX)
def test_max_idle_replaces_pooled_connection(name, run_function, server, tmp_path):
    """A pooled connection idle longer than MAX_IDLE is closed before reuse; the new one says why."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = _run(run_function, tmp_path, name, {"url": server.url, "gaps": [0, 1.6]}, env=env)
    assert server.connections == 2 and server.requests == 2
    assert _reasons(run) == ["first use", "max idle"], run.stderr
    assert _timers(run) == [(1, 60, 10, 3)]


@pytest.mark.parametrize("name", MATRIX)
def test_fresh_pooled_connection_is_reused(name, run_function, server, tmp_path):
    """A pooled connection idle for less than MAX_IDLE is reused: one connection for two requests."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="5", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = _run(run_function, tmp_path, name, {"url": server.url, "gaps": [0, 0.5]}, env=env)
    assert server.connections == 1 and server.requests == 2
    assert len(_new_connections(run)) == 1


@pytest.mark.parametrize("name", MATRIX)
def test_connection_kept_when_keepalive_answered_recently(name, run_function, server, tmp_path):
    """Idle past MAX_IDLE but keep-alive probes answered (TCP_INFO last ACK recent): reused."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="2", AWS_PYTHON_KEEPALIVE_IDLE="1",
               AWS_PYTHON_KEEPALIVE_INTERVAL="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = _run(run_function, tmp_path, name,
               {"url": server.url, "gaps": [0, 3.5], "config": {"connector_args": {"keepalive_timeout": 30}}},
               env=env)
    assert server.connections == 1 and server.requests == 2
    assert any("keep-alive answered" in line for line in run.layer_lines), run.stderr


@pytest.mark.parametrize("name", MATRIX)
def test_connector_args_warn_and_keepalive_timeout_reason(name, run_function, server, tmp_path):
    """User's connector_args: one warning with their values, kept with POOL_SIZE; aiohttp's close named."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1", AWS_PYTHON_KEEPALIVE_POOL_SIZE="32")
    run = _run(run_function, tmp_path, name,
               {"url": server.url, "gaps": [0, 1.2], "config": {"connector_args": {"keepalive_timeout": 0.5}}},
               env=env)
    warnings = [line for line in run.layer_lines if "AioConfig(connector_args=" in line]
    assert len(warnings) == 1 and "'keepalive_timeout': 0.5" in warnings[0], run.stderr
    assert _reasons(run) == ["first use", "keepalive_timeout"], run.stderr
    assert _timers(run) == [(1, 60, 10, 3)] and run.result["limit"] == 32


@pytest.mark.parametrize("name", MATRIX)
def test_connector_args_warning_once_per_kind_not_per_object(name, run_function, server, tmp_path):
    """50 clients, each with its own resolver object in connector_args: one warning line (the
    warning is keyed by which connector_args win, not by their values' addresses)."""
    run = _run(run_function, tmp_path, name,
               {"url": server.url, "no_requests": True, "resolver_clients": 50}, env=ON)
    warnings = [line for line in run.layer_lines if "AioConfig(connector_args=" in line]
    assert len(warnings) == 1 and "'resolver'" in warnings[0], run.stderr


@pytest.mark.parametrize("name", MATRIX)
def test_non_aiohttp_session_class_warns(name, run_function, server, tmp_path):
    """AioConfig(http_session_cls=<not aiohttp>), e.g. httpx: one warning that it is not covered."""
    run = _run(run_function, tmp_path, name,
               {"url": server.url, "no_requests": True, "config": {"not_aiohttp": True}}, env=ON)
    warnings = [line for line in run.layer_lines if "http_session_cls=NotAiohttp" in line]
    assert len(warnings) == 1 and "not covered" in warnings[0], run.stderr


@pytest.mark.parametrize("name", MATRIX)
@pytest.mark.parametrize("step", ["_patch_connector", "_patch_create_client"])
def test_failure_inside_patch_is_reported_once_and_client_works(name, step, run_function, server,
                                                                 tmp_path):
    """A patch step that raises: one warning, the requests still succeed (that part stays stock)."""
    env = dict(ON, TEST_BREAK=step, AWS_PYTHON_KEEPALIVE_POOL_SIZE="20")
    run = _run(run_function, tmp_path, name, {"url": server.url, "gaps": [0, 0]}, env=env)
    assert server.requests == 2
    failures = [line for line in run.layer_lines if "injected failure" in line]
    assert len(failures) == 1, run.stderr
    if step == "_patch_connector":
        assert _timers(run) == [(0, 7200, 75, 9)] and run.result["limit"] == 20
    else:
        assert _timers(run) == [(1, 60, 10, 3)] and run.result["limit"] == 10


def _reasons(run):
    return [line.split("(")[1].split(")")[0] for line in _new_connections(run)]


@pytest.mark.parametrize("name", MATRIX)
def test_concurrent_tasks_open_connections_labelled_pool_full(name, run_function, tmp_path):
    """Three concurrent puts on a slow server: three connections, the later two labelled "pool full"."""
    with DynamoDBShapedServer(delay_s=0.3) as slow:
        run = _run(run_function, tmp_path, name, {"url": slow.url, "concurrent": 3},
                   env=dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
        assert slow.connections == 3
    assert sorted(_reasons(run)) == ["first use", "pool full", "pool full"], run.stderr
    assert _timers(run) == [(1, 60, 10, 3)] * 3


@pytest.mark.parametrize("name", MATRIX)
def test_connection_closed_by_peer_is_labelled(name, run_function, tmp_path):
    """The server closes each connection after answering: the next one is labelled "peer closed"."""
    with DynamoDBShapedServer(close_after_response=True) as closing:
        run = _run(run_function, tmp_path, name, {"url": closing.url, "gaps": [0, 0.3]},
                   env=dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
        assert closing.connections == 2 and closing.requests == 2
    assert _reasons(run) == ["first use", "peer closed"], run.stderr


@pytest.mark.parametrize("name", MATRIX)
def test_peer_close_unseen_by_the_loop_opens_new_connection_without_retry(name, run_function,
                                                                          tmp_path):
    """Peer closed the pooled connection while the loop was blocked: a new one, no botocore retry."""
    with DynamoDBShapedServer(close_idle_after_s=0.5) as closing:
        run = _run(run_function, tmp_path, name,
                   {"url": closing.url, "gaps": [0, 1.5], "block_loop": True},
                   env=dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
        assert (closing.connections, closing.requests) == (2, 2), run.stderr
    assert run.result["retries"] == [0, 0], run.stderr
    assert _reasons(run) == ["first use", "peer closed"], run.stderr


# Every aiobotocore/aiohttp version on 3.12 (aiohttp 3.9's synchronous _get included); the newest
# only on the other interpreters (see test_matrix.STALE_MATRIX for why).
@pytest.mark.parametrize("name", MATRIX if MINOR == "3.12" else MATRIX[:1])
def test_stale_reuse_reported_once_then_learned_idle_replaces(name, run_function, tmp_path):
    """A middlebox forgets flows idle > 0.4 s (reset on the next request): the first gap (0.6 s)
    meets one reset and one botocore retry, reported once; later long gaps (1.0 s) get a clean new
    connection ("learned idle", no retry); a 0.1 s gap keeps reusing."""
    with DynamoDBShapedServer(stale_after_s=0.4) as stale_server:
        run = _run(run_function, tmp_path, name,
                   {"url": stale_server.url, "gaps": [0, 0.6, 1.0, 0.1, 1.0]},
                   env=dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
        assert stale_server.stale_hits == 1, run.stderr
    assert run.result["retries"] == [0, 1, 0, 0, 0], run.stderr
    warnings = stale_warnings(run)
    assert len(warnings) == 1 and "WARN" in warnings[0], run.stderr
    assert "aiobotocore retries" in warnings[0], warnings
    assert_learned_after_first_gap(warnings[0])
    assert _reasons(run).count("learned idle") == 2, run.stderr


def test_learning_off_keeps_meeting_the_reset(run_function, tmp_path):
    """AWS_PYTHON_KEEPALIVE_LEARN=0: every long gap meets the reset and a retry again (the switch is
    idle.py's, shared by every aiobotocore version: the newest stands for all)."""
    name = MATRIX[0]
    with DynamoDBShapedServer(stale_after_s=0.4) as stale_server:
        run = _run(run_function, tmp_path, name, {"url": stale_server.url, "gaps": [0, 0.6, 0.6]},
                   env=dict(ON, AWS_PYTHON_KEEPALIVE_LEARN="0"))
        assert stale_server.stale_hits == 2, run.stderr
    assert run.result["retries"] == [0, 1, 1], run.stderr


# aiohttp alone (from an aiobotocore folder): 300 hosts (one port each, on one loop), a connector
# patched as aio.py patches aiobotocore's, whose keepalive_timeout (0.05 s) makes aiohttp drop
# each pooled connection by itself soon after its request.  Prints the largest size the layer's
# per-connector maps reached.
MANY_HOSTS = """
import asyncio
import sys

sys.path.insert(0, %(folder)r)
import aiohttp

from aws_keepalive import aio


async def answer(reader, writer):
    while await reader.readuntil(b"\\r\\n\\r\\n"):
        writer.write(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\n{}")
        await writer.drain()


async def main():
    servers = [await asyncio.start_server(answer, "127.0.0.1", 0) for _ in range(300)]
    ports = [server.sockets[0].getsockname()[1] for server in servers]
    connector = aiohttp.TCPConnector(keepalive_timeout=0.05)
    aio._patch_connector(connector, [], 300)
    state = connector._aws_keepalive
    largest_resting = largest_keys = 0
    async with aiohttp.ClientSession(connector=connector) as session:
        for n, port in enumerate(ports):
            async with session.get("http://127.0.0.1:%%d/" %% port) as response:
                await response.read()
            if n %% 10 == 9:
                await asyncio.sleep(0.12)  # aiohttp's cleanup closes what rests
            largest_resting = max(largest_resting, len(state.resting))
            largest_keys = max(largest_keys, len(state.reasons), len(state.opened))
        print(largest_resting, largest_keys)
    for server in servers:
        server.close()


asyncio.run(main())
"""


def test_connector_maps_follow_aiohttp_dropping_connections():
    """300 hosts on one connector, each connection dropped by aiohttp's own keepalive_timeout
    cleanup: the layer's map of resting connections stays within twice the pool plus its slack
    (it held all 300 before), and its per-key maps stay within MAX_KEYS."""
    folder = os.path.join(AIO_DIRS, MINOR, "aiobotocore-3.10.0")
    script = MANY_HOSTS.replace("aio._patch_connector(", "aio._ConnectorState.MAX_KEYS = 100\n"
                                "    aio._patch_connector(")
    completed = python_with_layer(script % {"folder": folder})
    assert completed.returncode == 0, completed.stderr
    largest_resting, largest_keys = map(int, completed.stdout.split())
    # At most 10 connections rest at once (the cleanup runs every 10 requests).
    assert largest_resting <= 2 * 10 + 64 + 1 and largest_keys == 100, completed.stdout
