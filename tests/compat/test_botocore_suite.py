"""botocore's own unit tests (from its PyPI sdist, the layer's pinned version) with the layer on.

The layer is activated as on Lambda: its folder is added as a site directory, so aws_keepalive.pth
runs before pytest imports anything, with AWS_PYTHON_KEEPALIVE=1.  The folder is laid out as the
full layer's /opt/python: the hook's files beside the botocore under test (the sdist's, which the
tests import from their working folder) and the prepared data the build writes for it
(tools/packaging/prepare_data.py), so the suite also runs on prepared.py's index.  Every test must pass except
those that assert botocore's exact socket option list (adding options is the layer's purpose); a
``tcp_keepalive=False`` in the config store must win (``test_tcp_keepalive_explicitly_disabled``).
The whole unit suite takes ~30 s on this machine, which is why it runs in ``make test``; the
functional suite (~59 000 tests) does not.
"""

import ast
import os
import re
import socket
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest
from test_prepared import OPT_OUT, assert_same, probe  # tests/hook (compat's conftest)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYER = os.path.join(REPO, "layer")
SDIST_DIR = os.environ.get("AWS_KEEPALIVE_BOTOCORE_SDIST", "")
sys.path.insert(0, REPO)
from tools.packaging import build_layer  # noqa: E402  (tools/: the hook's files as the build copies them)
from tools.packaging import prepare_data  # noqa: E402

# Runs pytest in an interpreter whose site directories include the layer (its .pth activates it).
# At the end it says whether prepared.py's index was read (and usable) in that process.
RUN_WITH_LAYER = (
    "import site, sys; site.addsitedir(sys.argv[1]); import pytest; code = pytest.main(sys.argv[2:]); "
    "prepared = sys.modules.get('aws_keepalive.prepared'); "
    "print('prepared data used: %s' % bool(prepared and prepared._state)); sys.exit(code)"
)

# The tests that compare the exact socket option list botocore computes (TestCreateClientArgs).
EXACT_OPTION_LIST = {
    "test_max_pool_from_client_config_forwarded_to_endpoint_creator",
    "test_proxies_from_client_config_forwarded_to_endpoint_creator",
    "test_tcp_keepalive_enabled_case_insensitive",
    "test_tcp_keepalive_enabled_environment_variable",
    "test_tcp_keepalive_enabled_if_set_anywhere",
    "test_tcp_keepalive_not_specified",
}
KEEPALIVE = (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
TIMERS = {(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 60), (socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 10),
          (socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)}


def _source_tree():
    import botocore

    trees = [os.path.join(SDIST_DIR, entry) for entry in os.listdir(SDIST_DIR or ".")
             if entry == "botocore-%s" % botocore.__version__] if SDIST_DIR else []
    assert trees, "botocore %s's sdist missing under %r: run `make test-compat`" % (
        botocore.__version__, SDIST_DIR)
    return trees[0]


def _layer_tree(tmp_path):
    """The sdist's entries (symlinked) with the hook's files and the prepared data beside its
    botocore/: the working folder and site directory of the suite's run."""
    tree = tmp_path / "tree"
    if not tree.exists():
        tree.mkdir()
        source = _source_tree()
        for entry in os.listdir(source):
            os.symlink(os.path.join(source, entry), tree / entry)
        build_layer.copy_hook(LAYER, str(tree))
        prepare_data.prepare(str(tree))
    return str(tree)


def _run_suite(tmp_path, switch, *paths):
    """Run botocore's tests at ``paths`` (in its source tree, laid out as the layer); return
    {test name: outcome, ...}, the failure messages by name, and whether the index was used."""
    tree = _layer_tree(tmp_path)
    report = tmp_path / ("junit-%s-%d.xml" % (switch, len(list(tmp_path.glob("junit-*")))))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "BOTOCORE_"))}
    env["AWS_PYTHON_KEEPALIVE"] = switch
    completed = subprocess.run(
        [sys.executable, "-c", RUN_WITH_LAYER, tree, "-q", "-p", "no:cacheprovider",
         "--junitxml", str(report)] + list(paths),
        cwd=tree, env=env, capture_output=True, text=True, timeout=1200,
    )
    assert report.exists(), completed.stdout[-3000:] + completed.stderr[-3000:]
    outcomes, failures = {}, {}
    for case in ElementTree.parse(str(report)).getroot().iter("testcase"):
        name = case.get("classname") + "::" + case.get("name")
        failed = case.find("failure")
        if failed is None:
            failed = case.find("error")
        if failed is not None:
            outcomes[name] = "failed"
            failures[case.get("name")] = failed.get("message", "") + (failed.text or "")
        elif case.find("skipped") is not None:
            outcomes[name] = "skipped"
        else:
            outcomes[name] = "passed"
    return outcomes, failures, "prepared data used: True" in completed.stdout


def _socket_options(text, label):
    match = re.search(label + r": create_endpoint\(.*?socket_options=(\[[^\]]*\])", text)
    assert match, text[:2000]
    return ast.literal_eval(match.group(1))


@pytest.mark.skipif(not hasattr(socket, "TCP_KEEPIDLE"), reason="Linux socket options")
def test_unit_suite_with_layer_on(tmp_path):
    """botocore's unit suite passes with the layer on, but for the exact-option-list tests, whose
    only difference is the layer's SO_KEEPALIVE and timers (no test fails for the order it runs in
    since trust.py stopped sharing contexts between clients); the config store's False wins."""
    outcomes, failures, prepared_used = _run_suite(tmp_path, "1", "tests/unit")
    assert prepared_used
    counts = {outcome: list(outcomes.values()).count(outcome) for outcome in ("passed", "failed", "skipped")}
    print("botocore unit tests with the layer on:", counts)
    assert set(failures) == EXACT_OPTION_LIST, sorted(failures)
    assert counts["passed"] > 4000
    assert outcomes["tests.unit.test_args.TestCreateClientArgs::test_tcp_keepalive_explicitly_disabled"] == "passed"
    for name, text in failures.items():
        expected, actual = _socket_options(text, "Expected"), _socket_options(text, "Actual")
        assert [option for option in actual if option != KEEPALIVE and option not in TIMERS] == [
            option for option in expected if option != KEEPALIVE], name
        assert KEEPALIVE in actual and TIMERS <= set(actual), name


def test_args_tests_pass_with_layer_off(tmp_path):
    """With the switch off, every test of botocore's test_args.py passes (the failures above are
    the layer's doing, not this machine's)."""
    outcomes, failures, prepared_used = _run_suite(tmp_path, "0", "tests/unit/test_args.py")
    assert failures == {} and not prepared_used
    assert list(outcomes.values()).count("passed") > 90


# The functional tests that load models, endpoints, paginators, waiters, rule sets and service lists
# (22 600 tests, ~2 min here). The whole functional suite (~59 000) did not finish in 8 minutes on
# this shared machine, so it is not part of make test.
FUNCTIONAL = ("test_loaders", "test_endpoints", "test_regions", "test_service_names", "test_service_alias",
              "test_alias", "test_client_class_names", "test_session", "test_model_backcompat",
              "test_client_metadata", "test_public_apis", "test_model_completeness", "test_dynamodb", "test_s3",
              "test_sts", "test_client", "test_paginator_config", "test_waiter_config", "test_endpoint_rulesets")


def test_functional_tests_that_load_data_pass_with_layer_on(tmp_path):
    """botocore's functional tests of models, endpoints, regions and service names all pass with the
    layer on and its index used."""
    outcomes, failures, prepared_used = _run_suite(
        tmp_path, "1", *["tests/functional/%s.py" % name for name in FUNCTIONAL])
    counts = {outcome: list(outcomes.values()).count(outcome) for outcome in ("passed", "failed", "skipped")}
    print("botocore functional tests (data loading) with the layer on:", counts)
    assert failures == {} and prepared_used
    assert counts["passed"] > 22000


def test_every_service_alike_with_the_index(tmp_path):
    """In the suite's tree, every service's models (service, rule set, paginators, waiters) and
    endpoints load as without the index, and creating clients lists no other service folder than theirs."""
    tree = _layer_tree(tmp_path)
    data = os.path.join(tree, "botocore", "data")
    services = sorted(name for name in os.listdir(data) if os.path.isdir(os.path.join(data, name)))
    assert len(services) > 400
    prepared, _ = probe(tree, {"AWS_PYTHON_KEEPALIVE": "1"}, services)
    stock, _ = probe(tree, OPT_OUT, services)
    assert prepared["used"] is True and stock["used"] is False
    assert prepared["listed_beyond_created"] == 0 and prepared["listed_at_creation"] <= 8
    assert stock["listed_at_creation"] > 400
    assert_same(prepared, stock)
