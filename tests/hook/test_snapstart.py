"""snapstart.py: no pooled connection from before a SnapStart snapshot is reused after restore.

The stand-in runs the hooks the function registered exactly as awslambdaric does for
AWS_LAMBDA_INITIALIZATION_TYPE=snap-start (lab/standin/runtime/invoke_once.py --snapstart): the handler
module opens a connection during init, then before-snapshot hooks, then after-restore hooks, then
the first invocation.  The server counts the TCP connections it accepted.
"""

from conftest import ON

SNAP_START = {"AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start"}

# A connection opened during init (a module-level call), reused by the first invocation.
INIT_CALL_THEN_INVOKE = """
    import sys
    import boto3

    URL = open("url.txt").read()
    client = boto3.client("dynamodb", endpoint_url=URL)
    client.put_item(TableName="table", Item={"pk": {"S": "init"}})

    def handler(event, context):
        response = client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        import snapshot_restore_py
        return {"retries": response["ResponseMetadata"]["RetryAttempts"],
                "after_restore_hooks": len(snapshot_restore_py.get_after_restore()),
                "snapstart_imported": "aws_keepalive.snapstart" in sys.modules}
"""


def _run(run_function, server, tmp_path, env, standin_args=("--snapstart",)):
    task = tmp_path / "task"
    task.mkdir(exist_ok=True)
    (task / "url.txt").write_text(server.url)
    return run_function(INIT_CALL_THEN_INVOKE, env=env, task=str(task), standin_args=standin_args)


def test_restore_opens_one_clean_connection(run_function, server, tmp_path):
    """After restore the init connection is replaced (reason "restored"): no retry, 2 connections."""
    env = dict(ON, **SNAP_START, AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = _run(run_function, server, tmp_path, env)
    assert run.returncode == 0, run
    assert run.result["retries"] == 0 and run.result["after_restore_hooks"] == 1
    assert (server.connections, server.requests) == (2, 2)
    reasons = [line for line in run.layer_lines if "new connection" in line]
    assert len(reasons) == 2 and "(first use)" in reasons[0] and "(restored)" in reasons[1], run.stderr
    assert not [line for line in run.layer_lines if "WARN" in line], run.stderr


def test_restore_replaces_even_with_max_idle_off(run_function, server, tmp_path):
    """MAX_IDLE=0 and no debug: the pool is still watched for restores (2 connections)."""
    env = dict(ON, **SNAP_START, AWS_PYTHON_KEEPALIVE_MAX_IDLE="0")
    run = _run(run_function, server, tmp_path, env)
    assert run.returncode == 0, run
    assert (server.connections, server.requests) == (2, 2)
    assert run.stderr == ""


def test_not_snapstart_registers_nothing(run_function, server, tmp_path):
    """On-demand init: no hook registered, snapstart module not even imported, connection reused."""
    env = dict(ON, AWS_LAMBDA_INITIALIZATION_TYPE="on-demand")
    run = _run(run_function, server, tmp_path, env)
    assert run.returncode == 0, run
    assert run.result["after_restore_hooks"] == 0
    assert (server.connections, server.requests) == (1, 2)


def test_switch_off_registers_nothing(run_function, server, tmp_path):
    """Layer off under SnapStart: nothing registered, the init connection is reused as stock."""
    run = _run(run_function, server, tmp_path, dict(SNAP_START))
    assert run.returncode == 0, run
    assert run.result == {"retries": 0, "after_restore_hooks": 0, "snapstart_imported": False}
    assert (server.connections, server.requests) == (1, 2)


def test_provisioned_concurrency_covered_by_max_idle(run_function, server, tmp_path):
    """Provisioned concurrency (init long before the first call): MAX_IDLE replaces the init connection."""
    env = dict(ON, AWS_LAMBDA_INITIALIZATION_TYPE="provisioned-concurrency",
               AWS_PYTHON_KEEPALIVE_MAX_IDLE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    run = _run(run_function, server, tmp_path, env, standin_args=("--pause-s", "1.3"))
    assert run.returncode == 0, run
    assert run.result["retries"] == 0 and run.result["after_restore_hooks"] == 0
    assert (server.connections, server.requests) == (2, 2)
    assert [line for line in run.layer_lines if "(max idle)" in line], run.stderr


def test_managed_instances_registers_nothing(run_function, server, tmp_path):
    """Lambda Managed Instances (never snapshotted): no restore hook, the init connection reused."""
    env = dict(ON, AWS_LAMBDA_INITIALIZATION_TYPE="lambda-managed-instances")
    run = _run(run_function, server, tmp_path, env, standin_args=())
    assert run.returncode == 0, run
    assert run.result["after_restore_hooks"] == 0
    assert (server.connections, server.requests) == (1, 2)
    assert run.stderr == ""
