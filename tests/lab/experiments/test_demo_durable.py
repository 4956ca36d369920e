"""lab/experiments/durable, shortened (one wait, NAT reset mode, full CPU): a real durable function (the
SDK from PyPI) on CPython 3.13 and 3.14 in the stand-in, AWS's local runner as the durable service,
the checkpoint traffic through the kernel NAT. With the layer the resume after the wait reuses the
pooled connection with no reset, retry or hang, whichever client the SDK checkpoints with; without
it the resume meets the NAT's reset (which shows the wait really outlasted the NAT timeout). The
silent NAT (a 50 s hang per resume without the layer) runs in ``make demo-durable`` only."""

import os

import pytest

from standin import LAYER_ZIP, REPO, require_root_namespaces

DURABLE_PY = os.path.join(REPO, ".venv", "durable", "bin", "python")
PYTHONS = ("3.13", "3.14")
SDK_AGENT = "aws-durable-execution-sdk-python/3.0.0"


@pytest.fixture(scope="module", name="table")
def table_fixture():
    from lab.net import nat
    from lab.experiments.durable import experiment
    from lab.experiments.durable.run import parse_args, run
    from lab.services.durable import DurableService

    require_root_namespaces(nat.unavailable_reason())
    for needed in (DURABLE_PY, experiment.default_deps(), LAYER_ZIP):
        if not os.path.exists(needed):
            pytest.fail("%s missing: make test-lab makes it (make demo-durable too)" % needed)
    args = parse_args(["--zip", LAYER_ZIP, "--pythons", ",".join(PYTHONS), "--configs", "none,on,on-user",
                       "--modes", "reset", "--rounds", "1", "--nat-timeout", "3", "--memory-mb", "0"])
    with DurableService(python=DURABLE_PY, invocation_timeout=args.invocation_timeout) as service:
        table_rows, fields = run(args, service)
    from lab.experiments.durable.report import markdown

    print("\n" + markdown(table_rows))
    assert [r["error"] for r in table_rows] == [None] * len(table_rows)
    return {(r["python"], r["config"]): r for r in table_rows}, fields


def test_layer_on_resumes_on_the_pooled_connection(table):
    """Layer on, SDK's client and a user's client (boto3_client=), 3.13 and 3.14: the resume after a
    wait longer than the NAT timeout has 0 resets, 0 retries, 0 hangs and opens no connection."""
    rows, _ = table
    for python in PYTHONS:
        for config in ("on", "on-user"):
            row = rows[(python, config)]
            assert row["resumes"] == 1 and row["execution_status"] == "SUCCEEDED", row
            assert row["gap_s_min"] > 3, row  # the wait outlasted the NAT timeout
            assert (row["resets"], row["retries"], row["hangs"], row["failed"]) == (0, 0, 0, 0), row
            assert row["new_connections"] == 0, row


def test_without_the_layer_the_resume_meets_the_reset(table):
    """No layer: the resume's first checkpoint is reset by the NAT, retried by botocore on a new
    connection, and the execution still succeeds (the SDK's own retry path is untouched)."""
    rows, _ = table
    for python in PYTHONS:
        row = rows[(python, "none")]
        assert row["resets"] >= 1 and row["retries"] >= 1 and row["new_connections"] >= 1, row
        assert row["execution_status"] == "SUCCEEDED", row


def test_sdk_settings_survive_and_the_checkpoint_thread_is_covered(table):
    """The SDK's client keeps connect_timeout=5, read_timeout=50 and its user_agent_extra under the
    layer, a user's client its own 3/20 s; both clients' pooled sockets carry the layer's keep-alive
    timer (the scaled IDLE=1); every request comes from the SDK's background checkpoint thread (its
    pool's second thread, dex-handler_1: the first runs the handler); the service sees
    each client's User-Agent suffix. No layer: the socket has no keep-alive."""
    rows, fields = table
    for python in PYTHONS:
        sdk, user, none = (rows[(python, c)]["client"] for c in ("on", "on-user", "none"))
        assert (sdk["connect_timeout"], sdk["read_timeout"], sdk["user_agent_extra"]) == (5, 50, SDK_AGENT)
        assert (user["connect_timeout"], user["read_timeout"], user["user_agent_extra"]) == (3, 20, "lab-user-client/1")
        for client in (sdk, user):
            assert client["sockets"] and all(s["SO_KEEPALIVE"] == 1 and s["TCP_KEEPIDLE"] == 1
                                             for s in client["sockets"]), client
        assert none["sockets"] and all(s["SO_KEEPALIVE"] == 0 for s in none["sockets"]), none
        for config in ("on", "on-user", "none"):
            threads = rows[(python, config)]["checkpoint_threads"]
            assert threads == ["dex-handler_1"], threads  # the SDK pool's 2nd thread: checkpoint_batches_forever
    assert any(ua.endswith(SDK_AGENT) for ua in fields["user_agents"]), fields["user_agents"]
    assert any(ua.endswith("lab-user-client/1") for ua in fields["user_agents"]), fields["user_agents"]
    assert {r["sdk_version"] for r in rows.values()} == {"3.0.0"}
