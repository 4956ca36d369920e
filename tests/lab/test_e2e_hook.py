"""End-to-end, no NAT: the built layer zip under the Lambda stand-in, with the untouched example
handler writing to DynamoDB Local over TLS. The hook loads on every CPython; bad values never
break the function."""

import pytest

from e2e import EXAMPLE, built_layer_fixture, direct_env, dynamodb_fixture, layer_botocore_version  # noqa: F401
from e2e import lines_with
from lab.standin.lambda_env import LambdaFunction, hook_lines
from lab.standin.runtime_prefix import runtime_boto3
from standin import PYTHONS

ON_DEBUG = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"}


@pytest.mark.parametrize("python", PYTHONS)
def test_hook_loads_with_the_untouched_example_handler(python, built_layer, dynamodb):
    """The zip's .pth activates the hook before the handler imports boto3; the layer's botocore (not
    the runtime's bundled kind, RUNTIME_BOTO3) is the one patched and used; the first put opens one connection,
    the second reuses it."""
    version = layer_botocore_version(built_layer)
    assert version != runtime_boto3()
    with LambdaFunction(EXAMPLE, "app.handler", python=python, opt=built_layer,
                        env={**direct_env(dynamodb), **ON_DEBUG}) as fn:
        init = hook_lines(fn.init_lines)
        first = fn.invoke({})
        second = fn.invoke({})
    print("\n".join(init + first.hook_lines()))
    assert lines_with(init, "on (via pth)"), init
    patched = lines_with(init, "patched botocore %s at %s/python/botocore" % (version, built_layer))
    assert patched, init
    assert first.ok and second.ok, (first.outcome, second.outcome)
    assert "put_ms" in first.result
    port = dynamodb.tls_address[1]
    assert lines_with(first.hook_lines(), "new connection to 127.0.0.1:%d (first use)" % port)
    assert first.counters["new_connections"] == 1
    assert second.counters["new_connections"] == 0 and not lines_with(second.hook_lines(), "new connection")


def test_bad_timer_values_warn_and_fall_back_to_defaults(built_layer, dynamodb):
    """Unusable timer values each get one warning naming the variable, the defaults are used, and the
    function answers normally."""
    env = {**direct_env(dynamodb), **ON_DEBUG, "AWS_PYTHON_KEEPALIVE_IDLE": "abc",
           "AWS_PYTHON_KEEPALIVE_MAX_IDLE": "-5", "AWS_PYTHON_KEEPALIVE_COUNT": "1000"}
    with LambdaFunction(EXAMPLE, "app.handler", opt=built_layer, env=env) as fn:
        init = hook_lines(fn.init_lines)
        records = [fn.invoke({}) for _ in range(2)]
    print("\n".join(init))
    assert all(r.ok for r in records), [r.outcome for r in records]
    for name in ("IDLE='abc'", "MAX_IDLE='-5'", "COUNT='1000'"):
        assert len(lines_with(init, "WARN AWS_PYTHON_KEEPALIVE_" + name)) == 1, (name, init)
    assert lines_with(init, "keepidle_s=60 keepintvl_s=10 keepcnt=3 pool_size=botocore default max_idle_s=300")


@pytest.mark.parametrize("value", ["maybe", "2"])
def test_unknown_switch_value_warns_and_leaves_the_layer_off(value, built_layer, dynamodb):
    """AWS_PYTHON_KEEPALIVE=<not on/off>: one warning, the layer stays off (botocore not patched),
    and the function answers normally."""
    env = {**direct_env(dynamodb), "AWS_PYTHON_KEEPALIVE": value, "AWS_PYTHON_KEEPALIVE_DEBUG": "1"}
    with LambdaFunction(EXAMPLE, "app.handler", opt=built_layer, env=env) as fn:
        init = hook_lines(fn.init_lines)
        records = [fn.invoke({}) for _ in range(2)]
    print("\n".join(init))
    assert all(r.ok for r in records), [r.outcome for r in records]
    assert len(lines_with(init, "WARN AWS_PYTHON_KEEPALIVE=%r is not one of" % value)) == 1, init
    assert not lines_with(init, "patched botocore")
    assert not [line for r in records for line in r.hook_lines()]
