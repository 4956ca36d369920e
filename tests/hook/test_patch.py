"""patch.py: what botocore clients get once the layer is on, read back from real sockets."""

import pytest

from conftest import ON, assert_learned_after_first_gap, loopback_pair, stale_warnings
from ddb_server import DynamoDBShapedServer

PUT_AND_REPORT = """
    import os
    import boto3
    import keepalive_probe

    def handler(event, context):
        client = boto3.client("dynamodb", endpoint_url=event["url"], **event.get("kwargs", {}))
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        return {"options": keepalive_probe.client_socket_options(client),
                "max_pool_connections": keepalive_probe.max_pool_connections(client),
                "BOTOCORE_TCP_KEEPALIVE": os.environ.get("BOTOCORE_TCP_KEEPALIVE")}
"""

CONFIG_AND_REPORT = """
    import boto3
    import keepalive_probe
    from botocore.config import Config

    def handler(event, context):
        client = boto3.client("dynamodb", endpoint_url=event["url"], config=Config(**event["config"]))
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        return {"options": keepalive_probe.client_socket_options(client),
                "max_pool_connections": keepalive_probe.max_pool_connections(client)}
"""


def test_default_timers_on_real_socket(run_function, server):
    """With the switch on, a client's socket has SO_KEEPALIVE and the 60/10/3 timers."""
    run = run_function(PUT_AND_REPORT, env=ON, event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result["options"] == [
        {"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 3, "TCP_NODELAY": 1}
    ]
    assert run.result["BOTOCORE_TCP_KEEPALIVE"] is None
    assert run.stderr == ""


def test_switch_off_leaves_sockets_stock(run_function, server):
    """With the switch unset, sockets keep the kernel defaults and botocore's SO_KEEPALIVE off."""
    run = run_function(PUT_AND_REPORT, event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result["options"][0]["SO_KEEPALIVE"] == 0
    assert run.result["options"][0]["TCP_KEEPIDLE"] == 7200
    assert run.result["BOTOCORE_TCP_KEEPALIVE"] is None


def test_timer_overrides(run_function, server):
    """AWS_PYTHON_KEEPALIVE_IDLE / _INTERVAL / _COUNT set the three timers on the socket."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_IDLE="30", AWS_PYTHON_KEEPALIVE_INTERVAL="7",
               AWS_PYTHON_KEEPALIVE_COUNT="5")
    run = run_function(PUT_AND_REPORT, env=env, event={"url": server.url})
    assert run.returncode == 0, run
    options = run.result["options"][0]
    assert (options["SO_KEEPALIVE"], options["TCP_KEEPIDLE"], options["TCP_KEEPINTVL"],
            options["TCP_KEEPCNT"]) == (1, 30, 7, 5)


def test_other_services_get_the_options(run_function, server):
    """Not only DynamoDB: an S3 client's socket carries the same options."""
    source = """
        import boto3
        import keepalive_probe

        def handler(event, context):
            client = boto3.client("s3", endpoint_url=event["url"])
            client.head_bucket(Bucket="bucket")
            return keepalive_probe.client_socket_options(client)
    """
    run = run_function(source, env=ON, event={"url": server.url})
    assert run.returncode == 0, run
    assert [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"]) for o in run.result] == [(1, 60)]


def test_config_tcp_keepalive_false_wins(run_function, server):
    """Config(tcp_keepalive=False) switches keep-alive off for that client, layer on or not."""
    run = run_function(CONFIG_AND_REPORT, env=ON,
                       event={"url": server.url, "config": {"tcp_keepalive": False}})
    assert run.returncode == 0, run
    assert run.result["options"][0]["SO_KEEPALIVE"] == 0
    assert run.result["options"][0]["TCP_KEEPIDLE"] == 7200


def test_config_tcp_keepalive_true_gets_timers(run_function, server):
    """Config(tcp_keepalive=True) gets the layer's timers, not just SO_KEEPALIVE."""
    run = run_function(CONFIG_AND_REPORT, env=ON,
                       event={"url": server.url, "config": {"tcp_keepalive": True}})
    assert run.returncode == 0, run
    assert (run.result["options"][0]["SO_KEEPALIVE"], run.result["options"][0]["TCP_KEEPIDLE"]) == (1, 60)


def test_users_botocore_env_false_wins(run_function, server):
    """A user's own BOTOCORE_TCP_KEEPALIVE=false is kept and switches keep-alive off."""
    env = dict(ON, BOTOCORE_TCP_KEEPALIVE="false")
    run = run_function(PUT_AND_REPORT, env=env, event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result["BOTOCORE_TCP_KEEPALIVE"] == "false"
    assert run.result["options"][0]["SO_KEEPALIVE"] == 0


def test_env_changed_by_function_wins(run_function, server):
    """BOTOCORE_TCP_KEEPALIVE set to false by the function's own code at import time wins."""
    source = "import os\nos.environ['BOTOCORE_TCP_KEEPALIVE'] = 'false'\n" + PUT_AND_REPORT.replace(
        "\n    ", "\n")
    run = run_function(source, env=ON, event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result["options"][0]["SO_KEEPALIVE"] == 0


def test_profile_tcp_keepalive_false_wins(run_function, server, tmp_path):
    """A profile's tcp_keepalive = false wins over the layer's default (botocore reads env first)."""
    config_file = tmp_path / "config"
    config_file.write_text("[default]\ntcp_keepalive = false\n")
    env = dict(ON, AWS_CONFIG_FILE=str(config_file))
    run = run_function(PUT_AND_REPORT, env=env, event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result["options"][0]["SO_KEEPALIVE"] == 0


def test_profile_tcp_keepalive_true_gets_timers(run_function, server, tmp_path):
    """A profile's tcp_keepalive = true gets the layer's timers."""
    config_file = tmp_path / "config"
    config_file.write_text("[default]\ntcp_keepalive = true\n")
    env = dict(ON, AWS_CONFIG_FILE=str(config_file))
    run = run_function(PUT_AND_REPORT, env=env, event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result["options"][0]["TCP_KEEPIDLE"] == 60


STORE_AND_REPORT = """
    import botocore.session
    import keepalive_probe
    from botocore.configprovider import ConstantProvider

    def handler(event, context):
        session = botocore.session.Session()
        if event["how"] == "variable":
            session.set_config_variable("tcp_keepalive", event["value"])
        else:
            session.get_component("config_store").set_config_provider(
                "tcp_keepalive", ConstantProvider(event["value"]))
        client = session.create_client("dynamodb", region_name="us-east-1", endpoint_url=event["url"])
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        return keepalive_probe.client_socket_options(client)
"""


@pytest.mark.parametrize("how", ["variable", "provider"])
def test_config_store_false_wins(run_function, server, how):
    """tcp_keepalive=False in the session's config store (set_config_variable, or a config
    provider) switches keep-alive off, as Config does."""
    run = run_function(STORE_AND_REPORT, env=ON, event={"url": server.url, "how": how, "value": False})
    assert run.returncode == 0, run
    assert [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"]) for o in run.result] == [(0, 7200)]


def test_session_config_variable_true_gets_timers(run_function, server):
    """set_config_variable("tcp_keepalive", True) gets the layer's timers, not just SO_KEEPALIVE."""
    run = run_function(STORE_AND_REPORT, env=ON,
                       event={"url": server.url, "how": "variable", "value": True})
    assert run.returncode == 0, run
    assert [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"]) for o in run.result] == [(1, 60)]


def test_pool_size_applies_to_clients_without_one(run_function, server):
    """AWS_PYTHON_KEEPALIVE_POOL_SIZE sets max_pool_connections, down to urllib3's pool."""
    source = """
        import boto3
        import keepalive_probe

        def handler(event, context):
            client = boto3.client("dynamodb", endpoint_url=event["url"])
            client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            pools = [pool.pool.maxsize for pool, _ in keepalive_probe.pooled_connections(client)]
            return {"config": client.meta.config.max_pool_connections, "pools": pools}
    """
    run = run_function(source, env=dict(ON, AWS_PYTHON_KEEPALIVE_POOL_SIZE="50"),
                       event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result == {"config": 50, "pools": [50]}


def test_pool_size_unset_keeps_botocore_default(run_function, server):
    """Without AWS_PYTHON_KEEPALIVE_POOL_SIZE, clients keep botocore's default of 10."""
    run = run_function(PUT_AND_REPORT, env=ON, event={"url": server.url})
    assert run.result["max_pool_connections"] == 10


def test_users_max_pool_connections_wins(run_function, server):
    """Config(max_pool_connections=N) wins over AWS_PYTHON_KEEPALIVE_POOL_SIZE."""
    run = run_function(CONFIG_AND_REPORT, env=dict(ON, AWS_PYTHON_KEEPALIVE_POOL_SIZE="50"),
                       event={"url": server.url, "config": {"max_pool_connections": 4}})
    assert run.returncode == 0, run
    assert run.result["max_pool_connections"] == 4
    assert run.result["options"][0]["TCP_KEEPIDLE"] == 60


def test_pool_size_keeps_users_other_config(run_function, server):
    """The layer's pool size is merged under the user's Config: their other options survive."""
    run = run_function(CONFIG_AND_REPORT, env=dict(ON, AWS_PYTHON_KEEPALIVE_POOL_SIZE="50"),
                       event={"url": server.url, "config": {"tcp_keepalive": False}})
    assert run.returncode == 0, run
    assert run.result["max_pool_connections"] == 50
    assert run.result["options"][0]["SO_KEEPALIVE"] == 0


def test_session_default_config_pool_size_wins(run_function, server):
    """A pool size in the botocore session's default client config wins over the layer's."""
    source = """
        import botocore.session
        from botocore.config import Config

        def handler(event, context):
            session = botocore.session.get_session()
            session.set_default_client_config(Config(max_pool_connections=3))
            client = session.create_client("dynamodb", endpoint_url=event["url"])
            return client.meta.config.max_pool_connections
    """
    run = run_function(source, env=dict(ON, AWS_PYTHON_KEEPALIVE_POOL_SIZE="50"),
                       event={"url": server.url})
    assert run.result == 3, run


def test_pool_size_with_config_by_position(run_function, server):
    """create_client(..., config) passed by position still gets the layer's pool size."""
    source = """
        import botocore.session
        from botocore.config import Config

        def handler(event, context):
            session = botocore.session.get_session()
            client = session.create_client("dynamodb", "us-east-1", None, True, None,
                                           event["url"], None, None, None,
                                           Config(read_timeout=7))
            return [client.meta.config.max_pool_connections, client.meta.config.read_timeout]
    """
    run = run_function(source, env=dict(ON, AWS_PYTHON_KEEPALIVE_POOL_SIZE="50"),
                       event={"url": server.url})
    assert run.result == [50, 7], run


TWO_CALLS = """
    import time
    import boto3

    def handler(event, context):
        client = boto3.client("dynamodb", endpoint_url=event["url"])
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        time.sleep(event["gap_s"])
        response = client.put_item(TableName="table", Item={"pk": {"S": "2"}})
        return response["ResponseMetadata"]["RetryAttempts"]
"""


def test_max_idle_replaces_stale_connection(run_function, server):
    """A pooled connection idle longer than MAX_IDLE is replaced before reuse: no retry."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = run_function(TWO_CALLS, env=env, event={"url": server.url, "gap_s": 1.3})
    assert run.returncode == 0, run
    assert run.result == 0
    assert (server.connections, server.requests) == (2, 2)
    assert [line for line in run.layer_lines if "(max idle)" in line], run.stderr


def test_max_idle_keeps_fresh_connection(run_function, server):
    """A pooled connection idle for less than MAX_IDLE is reused."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="5")
    run = run_function(TWO_CALLS, env=env, event={"url": server.url, "gap_s": 0.2})
    assert run.returncode == 0, run
    assert (server.connections, server.requests) == (1, 2)


def test_max_idle_zero_never_replaces(run_function, server):
    """AWS_PYTHON_KEEPALIVE_MAX_IDLE=0 switches replacement off: the idle connection is reused."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="0")
    run = run_function(TWO_CALLS, env=env, event={"url": server.url, "gap_s": 1.2})
    assert run.returncode == 0, run
    assert (server.connections, server.requests) == (1, 2)


def test_default_max_idle_is_300_s(run_function, server):
    """The default max idle is 300 s: a connection idle 1.2 s is reused, not replaced."""
    run = run_function(TWO_CALLS, env=ON, event={"url": server.url, "gap_s": 1.2})
    assert run.returncode == 0, run
    assert (server.connections, server.requests) == (1, 2)


def test_thirty_two_threads_at_startup(run_function, server):
    """32 threads importing boto3 and creating clients at once all get the options."""
    source = """
        import threading
        import keepalive_probe

        def handler(event, context):
            barrier = threading.Barrier(32)
            results = [None] * 32

            def work(index):
                barrier.wait()
                import boto3
                client = boto3.client("dynamodb", endpoint_url=event["url"])
                client.put_item(TableName="table", Item={"pk": {"S": str(index)}})
                results[index] = keepalive_probe.client_socket_options(client)

            threads = [threading.Thread(target=work, args=(i,)) for i in range(32)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
            return results
    """
    run = run_function(source, env=ON, event={"url": server.url})
    assert run.returncode == 0, run
    assert len(run.result) == 32
    for options in run.result:
        assert [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"], o["TCP_KEEPINTVL"], o["TCP_KEEPCNT"])
                for o in options] == [(1, 60, 10, 3)]


def test_failure_inside_patch_is_reported_once_and_clients_work(run_function, server):
    """A failure while patching is reported once on stderr and clients behave as stock botocore."""
    # The patch module is imported lazily: import it first and break its entry point.
    source = """
        import aws_keepalive.patch
        import keepalive_probe

        def broken(settings):
            raise RuntimeError("injected")

        aws_keepalive.patch.apply = broken
        import boto3

        def handler(event, context):
            client = boto3.client("dynamodb", endpoint_url=event["url"])
            client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            client2 = boto3.client("dynamodb", endpoint_url=event["url"])
            client2.put_item(TableName="table", Item={"pk": {"S": "1"}})
            return keepalive_probe.client_socket_options(client)
    """
    run = run_function(source, env=ON, event={"url": server.url})
    assert run.returncode == 0, run
    assert len(run.layer_lines) == 1, run.stderr
    assert "injected" in run.layer_lines[0] and "stock botocore" in run.layer_lines[0]
    # Nothing exported BOTOCORE_TCP_KEEPALIVE: stock sockets, kernel timers.
    assert run.result[0]["TCP_KEEPIDLE"] == 7200


def test_failure_inside_wrapper_falls_back(run_function, server):
    """A failure inside the socket-option wrapper at client creation returns botocore's options."""
    source = """
        import os
        import keepalive_probe
        import boto3
        import aws_keepalive.patch as patch

        def broken(*args):
            raise RuntimeError("injected")

        patch.keepalive_wanted = broken

        def handler(event, context):
            clients = [boto3.client("dynamodb", endpoint_url=event["url"]) for _ in range(3)]
            for client in clients:
                client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            return keepalive_probe.client_socket_options(clients[0])
    """
    run = run_function(source, env=ON, event={"url": server.url})
    assert run.returncode == 0, run
    assert len(run.layer_lines) == 1, run.stderr
    assert run.result[0]["TCP_KEEPIDLE"] == 7200


def test_tls_connection_gets_options_and_is_replaced_after_max_idle(run_function, tls_server):
    """Over HTTPS, as to real AWS endpoints: options set, stale connection replaced, no retry."""
    source = """
        import time
        import boto3
        import keepalive_probe

        def handler(event, context):
            client = boto3.client("dynamodb", endpoint_url=event["url"])
            client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            options = keepalive_probe.client_socket_options(client)
            time.sleep(1.3)
            response = client.put_item(TableName="table", Item={"pk": {"S": "2"}})
            return {"options": options, "retries": response["ResponseMetadata"]["RetryAttempts"]}
    """
    # TLS_RESUME=1: resumption is opt-in (settings.TLS_RESUME_BY_DEFAULT).
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1",
               AWS_PYTHON_KEEPALIVE_TLS_RESUME="1", AWS_CA_BUNDLE=tls_server.ca_bundle)
    run = run_function(source, env=env, event={"url": tls_server.url})
    assert run.returncode == 0, run
    assert [(o["SO_KEEPALIVE"], o["TCP_KEEPIDLE"]) for o in run.result["options"]] == [(1, 60)]
    assert run.result["retries"] == 0
    assert (tls_server.connections, tls_server.requests) == (2, 2)
    reasons = [line for line in run.layer_lines if "new connection" in line]
    assert len(reasons) == 2 and "(first use)" in reasons[0] and "(max idle)" in reasons[1]
    # The replacement resumes the first connection's TLS session (resume.py, switched on above).
    assert reasons[0].endswith("ms (TCP + TLS, full TLS handshake)"), run.stderr
    assert reasons[1].endswith("ms (TCP + TLS, TLS session resumed)"), run.stderr


def test_connection_kept_when_keepalive_answered_recently(run_function, server):
    """Idle past MAX_IDLE but probes answered (TCP_INFO last ACK recent): reused, no handshake,
    a debug line and a ReusedAfterProbe metric say so."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="2", AWS_PYTHON_KEEPALIVE_IDLE="1",
               AWS_PYTHON_KEEPALIVE_INTERVAL="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    env["AWS_PYTHON_KEEPALIVE_METRICS"] = "1"
    run = run_function(TWO_CALLS, env=env, event={"url": server.url, "gap_s": 3.5})
    assert run.returncode == 0, run
    assert (server.connections, server.requests) == (1, 2)
    kept = [line for line in run.layer_lines if "keep-alive answered" in line]
    assert len(kept) == 1, run.stderr
    # ... and counted: one ReusedAfterProbe EMF record beside the first use (metrics.py).
    from emf import emf_records, totals

    assert totals(emf_records(run.stdout)) == {"Reason:first use": 1, "ReusedAfterProbe": 1}, run.stdout


def test_connection_replaced_when_probes_not_yet_sent(run_function, server):
    """Idle past MAX_IDLE with no probe since (IDLE longer than the gap): replaced."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="2", AWS_PYTHON_KEEPALIVE_IDLE="30")
    run = run_function(TWO_CALLS, env=env, event={"url": server.url, "gap_s": 2.5})
    assert run.returncode == 0, run
    assert (server.connections, server.requests) == (2, 2)


def test_kernel_clock_that_missed_the_gap_is_not_trusted():
    """keepalive_answered_s gives the last-ACK age, but None when the kernel saw less idle time."""
    from aws_keepalive.idle import keepalive_answered_s

    with loopback_pair() as (client, peer):
        client.sendall(b"ping")
        peer.recv(4)
        peer.sendall(b"pong")
        client.recv(4)
        answered = keepalive_answered_s(client, 0.0)
        assert answered is not None and 0.0 <= answered < 1.0
        # We measured 100 s idle but the kernel saw the last data arrive a moment ago: its clock
        # did not run through the gap (a frozen VM), so its last-ACK time is no evidence.
        assert keepalive_answered_s(client, 100.0) is None


def test_max_idle_checked_while_other_threads_open_connections(run_function, server):
    """A stale pooled connection is replaced even when another thread opens a connection meanwhile.

    Found by the fault soak: the layer took "the pool's connection count grew during _get_conn"
    to mean "this thread got a new connection", so a thread that took a stale pooled connection
    while another thread opened one skipped the max-idle check and reused a dead flow.
    """
    source = """
        import threading
        import time
        import boto3

        def handler(event, context):
            client = boto3.client("dynamodb", endpoint_url=event["url"])
            client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            time.sleep(1.3)
            manager = client._endpoint.http_session._manager
            (pool,) = [manager.pools[key] for key in list(manager.pools.keys())]
            queue_get = pool.pool.get
            interleaved = []

            def other_thread_opens_a_connection():
                conn = pool._get_conn()
                pool._put_conn(conn)

            def get_then_let_another_thread_open(*args, **kwargs):
                conn = queue_get(*args, **kwargs)
                if not interleaved:
                    # This thread holds the stale connection; before it returns from _get_conn,
                    # another thread opens a new one (the pool's count grows by one).
                    interleaved.append(conn)
                    other = threading.Thread(target=other_thread_opens_a_connection)
                    other.start()
                    other.join(10)
                return conn

            pool.pool.get = get_then_let_another_thread_open
            response = client.put_item(TableName="table", Item={"pk": {"S": "2"}})
            return {"interleaved": interleaved[0] is not None,
                    "retries": response["ResponseMetadata"]["RetryAttempts"]}
    """
    env = dict(ON, AWS_PYTHON_KEEPALIVE_MAX_IDLE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = run_function(source, env=env, event={"url": server.url})
    assert run.returncode == 0, run
    assert run.result == {"interleaved": True, "retries": 0}
    assert [line for line in run.layer_lines if "(max idle)" in line], run.stderr
    assert (server.connections, server.requests) == (2, 2)


def test_a_signal_handler_may_call_while_the_thread_holds_a_layer_lock(server):
    """A signal handler runs in the main thread between two bytecodes, possibly while that thread
    is inside one of the layer's critical sections (a few per request, process-wide); a handler
    that calls AWS (a SIGTERM handler flushing to S3, with its own client) then takes the same lock
    in the same thread.  Each lock of children.LOCKS is held here the way the interrupted thread
    holds it, then a client makes a new connection, reuses it and counts both: every call returns
    (before: a plain Lock, and the process hung for good; with real SIGALRMs every 0.2 ms and a
    second client in the handler it hung within seconds, stock ran 20 s)."""
    import subprocess
    import sys

    from conftest import BASE_ENV, LAYER

    script = """
import importlib, sys, time
sys.path.insert(0, %r)
import aws_keepalive
aws_keepalive.activate("test")
import boto3
from aws_keepalive import children
client = boto3.client("dynamodb", endpoint_url=%r)
client.list_tables()
fresh = boto3.client("dynamodb", endpoint_url=%r)
held = []
for module_name, attribute in children.LOCKS:
    lock = getattr(importlib.import_module(module_name), attribute, None)
    if lock is not None:
        lock.acquire()
        held.append(attribute)
fresh.list_tables()  # a new connection (metrics count it)
time.sleep(0.2)
fresh.list_tables()  # a reuse after the longest idle yet (idle.reused_ok writes the table)
print(sorted(held))
""" % (LAYER, server.url, server.url)
    env = dict(BASE_ENV, AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_METRICS="1")
    try:
        completed = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                   text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("a call made while the same thread held a layer lock hung")
    assert completed.returncode == 0, completed.stderr
    assert "_checked_out_lock" in completed.stdout and "_hosts_lock" in completed.stdout, completed


# --- stale reuses and the learned idle limit ------------------------------------------------------

GAPS = """
    import time
    import boto3
    from botocore.config import Config

    def handler(event, context):
        client = boto3.client("dynamodb", endpoint_url=event["url"],
                              config=Config(read_timeout=event.get("read_timeout", 60)))
        client.put_item(TableName="table", Item={"pk": {"S": "0"}})
        calls = []
        for gap in event["gaps"]:
            time.sleep(gap)
            started = time.monotonic()
            response = client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            calls.append([response["ResponseMetadata"]["RetryAttempts"],
                          round(time.monotonic() - started, 3)])
        return calls
"""


def test_stale_reuse_reported_once_then_learned_idle_replaces(run_function):
    """A middlebox forgets flows idle > 0.4 s (reset): the first gap (0.6 s) meets one reset and one
    retry, reported once (host, idle, settings); later long gaps (1.0 s: above the learned limit
    even when a loaded machine overshoots the first gap) get a clean new connection ("learned
    idle", no retry) and a 0.1 s gap keeps reusing."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1")
    with DynamoDBShapedServer(stale_after_s=0.4) as stale_server:
        run = run_function(GAPS, env=env, event={"url": stale_server.url, "gaps": [0.6, 1.0, 0.1, 1.0]})
        assert run.returncode == 0, run
        assert [retries for retries, _ in run.result] == [1, 0, 0, 0], run
        assert stale_server.stale_hits == 1
        # first, the retry after the reset, learned idle twice; the 0.1 s gap reused.
        assert stale_server.connections == 4
    (warning,) = stale_warnings(run)
    assert "WARN" in warning and "127.0.0.1" in warning and "reset" in warning, warning
    assert "max_idle_s=300 learn=on" in warning, warning
    assert_learned_after_first_gap(warning)
    learned = [line for line in run.layer_lines if "new connection to" in line and "(learned idle)" in line]
    assert len(learned) == 2, run.stderr


def test_learning_off_keeps_meeting_the_reset(run_function):
    """AWS_PYTHON_KEEPALIVE_LEARN=0: every long gap meets the reset again; one warning only."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_LEARN="0")
    with DynamoDBShapedServer(stale_after_s=0.4) as stale_server:
        run = run_function(GAPS, env=env, event={"url": stale_server.url, "gaps": [0.6, 0.6]})
        assert run.returncode == 0, run
        assert [retries for retries, _ in run.result] == [1, 1], run
        assert stale_server.stale_hits == 2
    (warning,) = stale_warnings(run)
    assert "learning is off" in warning, warning


def test_read_timeout_with_request_acknowledged_teaches_nothing(run_function):
    """A server that read the request and never answers (its kernel acknowledged it): each long gap
    waits out read_timeout (1 s) and retries, as stock does; no stale reuse is reported or learned
    (a silent middlebox drops the request unacknowledged: tests/lab/test_e2e_learn.py)."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1")
    with DynamoDBShapedServer(stale_after_s=0.4, stale_mode="hang", hang_s=1.5) as stale_server:
        run = run_function(GAPS, env=env, event={"url": stale_server.url, "gaps": [0.6, 1.0],
                                                  "read_timeout": 1})
        assert run.returncode == 0, run
    (first, later) = run.result
    assert first[0] == 1 and first[1] >= 1.0, run.result
    assert later[0] == 1 and later[1] >= 1.0, run.result
    assert stale_warnings(run) == [], run.stderr
    assert [line for line in run.layer_lines if "the request acknowledged by the peer" in line], run.stderr
    assert not [line for line in run.layer_lines if "(learned idle)" in line], run.stderr


@pytest.mark.parametrize("switch", ["1", "0"])
def test_slow_server_leaves_reuse_as_stock(run_function, switch):
    """One read timeout on a reused connection from a slow server (the request acknowledged), then
    10 calls 0.5 s apart: 2 connections in all (the first, and botocore's retry's), the layer's
    count equal to stock's: the slow answer taught no idle limit (before: a limit of 0.8 x 0.3 s
    and a new connection for every call)."""
    env = {"AWS_PYTHON_KEEPALIVE": switch}
    with DynamoDBShapedServer(slow_once_s=1.5) as slow_server:
        run = run_function(GAPS, env=env, event={"url": slow_server.url, "gaps": [0.3] + [0.5] * 10,
                                                  "read_timeout": 1})
        assert run.returncode == 0, run
        connections = slow_server.connections
    assert run.result[0][0] == 1 and [retries for retries, _ in run.result[1:]] == [0] * 10, run.result
    assert connections == 2, (connections, run.stderr)
    assert stale_warnings(run) == [], run.stderr


def test_one_off_reset_costs_a_bounded_number_of_handshakes(run_function):
    """One reset on a reused connection after 0.3 s idle that says nothing about the path's idle
    timeout (the server resets once), then 10 calls 0.5 s apart: the lesson (limit 0.8 x 0.3 s)
    replaces at most idle.PROBE_AFTER connections, then one is reused as a probe, succeeds at an
    idle past the failing one, and the lesson is gone: the last calls reuse as stock does (stock:
    2 connections; before: a new connection for every call, for the lesson's hour)."""
    from aws_keepalive import idle

    env = dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1")
    with DynamoDBShapedServer(reset_once=True) as reset_server:
        run = run_function(GAPS, env=env, event={"url": reset_server.url, "gaps": [0.3] + [0.5] * 10})
        assert run.returncode == 0, run
        connections = reset_server.connections
    assert [retries for retries, _ in run.result] == [1] + [0] * 10, run.result
    assert len(stale_warnings(run)) == 1, run.stderr
    learned = [line for line in run.layer_lines if "new connection to" in line and "(learned idle)" in line]
    assert len(learned) == idle.PROBE_AFTER, run.stderr
    assert connections == 2 + idle.PROBE_AFTER, (connections, run.stderr)


def test_fresh_connection_failure_is_not_a_stale_reuse(run_function):
    """A request that fails on a connection that was not reused (the server resets the first
    request of every connection too) is not counted or reported as a stale reuse."""
    source = """
        import boto3
        from botocore.config import Config

        def handler(event, context):
            client = boto3.client("dynamodb", endpoint_url=event["url"],
                                  config=Config(retries={"max_attempts": 2, "mode": "standard"}))
            try:
                client.put_item(TableName="table", Item={"pk": {"S": "1"}})
            except Exception as error:
                return type(error).__name__
    """
    import socket
    import struct
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def reset_each():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    thread = threading.Thread(target=reset_each, daemon=True)
    thread.start()
    try:
        run = run_function(source, env=ON, event={"url": "http://127.0.0.1:%d" % listener.getsockname()[1]})
    finally:
        listener.close()
    assert run.result == "ConnectionClosedError", run
    assert not stale_warnings(run), run.stderr


@pytest.mark.parametrize("make_error,kind", [
    (lambda: ConnectionResetError(104, "Connection reset by peer"), "reset"),
    (lambda: BrokenPipeError(32, "Broken pipe"), "broken pipe"),
    (lambda: __import__("http.client").client.RemoteDisconnected("closed"), "remote disconnect"),
    (lambda: __import__("socket").timeout("timed out"), "read timeout"),
    (lambda: _botocore_wrapped("ConnectionClosedError", ConnectionResetError(104, "reset")), "reset"),
    (lambda: _botocore_wrapped("ReadTimeoutError", None), "read timeout"),
    (lambda: _botocore_wrapped("ConnectTimeoutError", None), None),
    (lambda: ConnectionRefusedError(111, "refused"), None),
    (lambda: ValueError("not a network error"), None),
])
def test_stale_kind_names_dead_flow_errors_only(make_error, kind):
    """Which real exceptions (raw, and wrapped by botocore as it raises them) mean a dead flow."""
    from aws_keepalive import patch

    assert patch.stale_kind(make_error()) == kind


def _botocore_wrapped(name, inner):
    import botocore.exceptions

    cls = getattr(botocore.exceptions, name)
    if name == "ConnectionClosedError":
        return cls(endpoint_url="http://x", error=inner)
    return cls(endpoint_url="http://x", error=inner or "timed out")
