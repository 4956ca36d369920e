"""Lambda Managed Instances in the stand-in: awslambdaric's own multi-concurrent runner
(AWS_LAMBDA_MAX_CONCURRENCY=4, AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances, the runtime's
bootstrap structure, never frozen) with the built layer, the untouched example handler writing to
DynamoDB Local over TLS. Every worker's pooled connection is read back from outside with ``ss -tno``.

awslambdaric 4.2.x forks its workers; 4.0.x uses multiprocessing's default start method, which is
forkserver on CPython 3.14: the case where, before children.py, every worker's client was stock.
"""

import pytest

from e2e import EXAMPLE, built_layer_fixture, direct_env, dynamodb_fixture  # noqa: F401
from lab.standin.lambda_env import LambdaFunction, hook_lines, settled_keepalive_timers, timer_seconds
from standin import require_root_namespaces

ON_DEBUG = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"}
WORKERS = 4
# (CPython, runtime variant: "" = awslambdaric 4.2.x, "ric40" = 4.0.x) -> the workers' start method.
CASES = {("3.13", ""): "fork", ("3.13", "ric40"): "fork",
         ("3.14", ""): "fork", ("3.14", "ric40"): "forkserver"}


def _require_python(minor):
    """Skip (reason printed) when this machine has no CPython ``minor`` yet (`make interpreters`
    provides 3.14); in CI (CI=true) fail instead: CI must run it."""
    from lab.standin import runtime_prefix

    try:
        runtime_prefix.base_python(minor)
    except FileNotFoundError as missing:
        require_root_namespaces(str(missing))


def _serve_burst(python, variant, opt, env, dynamodb):
    """Start 4 workers, send 4 invocations at once (one per worker); per worker its ss timers."""
    _require_python(python)
    with LambdaFunction(EXAMPLE, "app.handler", python=python, variant=variant, opt=opt, env=env,
                        max_concurrency=WORKERS) as fn:
        records = fn.invoke_burst([{}] * WORKERS)
        port = dynamodb.tls_address[1]
        timers = settled_keepalive_timers([r.worker_pid for r in records], port)
        lines = hook_lines(fn.init_lines + records[0].stderr)
    return records, timers, lines


@pytest.mark.parametrize("python,variant", list(CASES), ids=["%s-%s" % (p, v or "ric42") for p, v in CASES])
def test_every_worker_carries_the_timers(python, variant, built_layer, dynamodb):
    """Each of the 4 workers served one invocation; its pooled connection shows a keep-alive timer
    of at most 60 s (ss -tno) and its debug line names the start method that made it, once."""
    env = {**direct_env(dynamodb), **ON_DEBUG}
    records, timers, lines = _serve_burst(python, variant, built_layer, env, dynamodb)
    print("\n".join(lines))
    assert all(r.ok for r in records), [r.outcome for r in records]
    assert len(timers) == WORKERS and None not in timers, timers
    for pid, found in timers.items():
        assert len(found) == 1 and found[0] is not None and timer_seconds(found[0]) <= 60, (pid, found)
        route = [line for line in lines if " on (via " in line and "in pid %d;" % pid in line]
        assert len(route) == 1 and "(via %s)" % CASES[(python, variant)] in route[0], (pid, lines)
    assert len([line for line in lines if " on (via pth)" in line]) == 1, lines
    assert not [line for line in lines if "WARN" in line], lines


def test_switch_off_every_worker_stock(built_layer, dynamodb):
    """Layer attached, switch off, 3.14 + awslambdaric 4.0.x (forkserver): no timer, no layer line."""
    records, timers, lines = _serve_burst("3.14", "ric40", built_layer, direct_env(dynamodb), dynamodb)
    assert all(r.ok for r in records) and len(timers) == WORKERS
    assert all(found == [None] for found in timers.values()), timers
    assert lines == []
