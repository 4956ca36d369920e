"""botocore's own unit tests (from its PyPI sdist, the layer's pinned version) with the layer on.

The layer is activated as on Lambda: its folder is added as a site directory, so aws_keepalive.pth
runs before pytest imports anything, with AWS_PYTHON_KEEPALIVE=1.  Every test must pass except
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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYER = os.path.join(REPO, "layer")
SDIST_DIR = os.environ.get("AWS_KEEPALIVE_BOTOCORE_SDIST", "")

# Runs pytest in an interpreter whose site directories include the layer (its .pth activates it).
RUN_WITH_LAYER = (
    "import site, sys; site.addsitedir(sys.argv[1]); import pytest; sys.exit(pytest.main(sys.argv[2:]))"
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


def _run_suite(tmp_path, switch, *paths):
    """Run botocore's tests at ``paths`` (in its source tree); return {test name: outcome, ...}
    and the failure messages by name."""
    report = tmp_path / ("junit-%s-%d.xml" % (switch, len(list(tmp_path.iterdir()))))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "BOTOCORE_"))}
    env["AWS_PYTHON_KEEPALIVE"] = switch
    completed = subprocess.run(
        [sys.executable, "-c", RUN_WITH_LAYER, LAYER, "-q", "-p", "no:cacheprovider",
         "--junitxml", str(report)] + list(paths),
        cwd=_source_tree(), env=env, capture_output=True, text=True, timeout=600,
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
    return outcomes, failures


def _socket_options(text, label):
    match = re.search(label + r": create_endpoint\(.*?socket_options=(\[[^\]]*\])", text)
    assert match, text[:2000]
    return ast.literal_eval(match.group(1))


@pytest.mark.skipif(not hasattr(socket, "TCP_KEEPIDLE"), reason="Linux socket options")
def test_unit_suite_with_layer_on(tmp_path):
    """botocore's unit suite passes with the layer on, but for the exact-option-list tests, whose
    only difference is the layer's SO_KEEPALIVE and timers (no test fails for the order it runs in
    since trust.py stopped sharing contexts between clients); the config store's False wins."""
    outcomes, failures = _run_suite(tmp_path, "1", "tests/unit")
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
    outcomes, failures = _run_suite(tmp_path, "0", "tests/unit/test_args.py")
    assert failures == {}
    assert list(outcomes.values()).count("passed") > 90
