"""The SDK's own test suites on the full layer's patched tree (make test-upstream; issue 36).

The full layer ships boto3, botocore, urllib3 and s3transfer with the declared patches of
layer/patches/ applied (tools/packaging/patches.py).  Here the upstream projects' own unit and
functional suites run against exactly what ships: build/layer.zip's ``python/`` folder, extracted,
bytecode included, first on PYTHONPATH (user site off: the zip's usercustomize.py stays out; the
hook is not switched on, so what is tested is the SDK's code, not the hook: tests/compat runs
botocore's suite with the hook on).  Each suite runs in its source tree from the PyPI sdist of the
pinned version (tests/upstream/sdists.txt, hash-checked by pip), with the sdist's own package
folder left out of the tree so that the import can only find the patched copy; a guard checks that
before pytest starts.

boto3's sdist has no tests/ folder (checked on 1.44.8), and this machine cannot reach GitHub: boto3's
suite runs when AWS_KEEPALIVE_BOTO3_SOURCE names a checkout of boto/boto3 at the pinned release's
tag (the release workflow checks it out), and is skipped, saying so, otherwise, unless
AWS_KEEPALIVE_REQUIRE_BOTO3_SUITE=1 (the release workflow sets it), which turns the skip into a
failure.

Every test must pass.  A test deselected below is named with its reason; none is deselected today.
Tests that skip themselves are upstream's own skips (the CRT tests without awscrt, which the layer
does not ship; boto3's changelog-entry check, which has no entries at a release tag).  Measured on
the 2-core machine under load 19-26: botocore unit 4661 passed in 2 min 43 s, s3transfer unit +
functional 682 passed (55 skipped) in 11 min 26 s.  boto3's suite, from the newest tag at hand
offline, 1.43.78 (its package differs from 1.44.8's in three files: the version, and a fallback for
botocore < 1.43.34 in docs/utils.py and dynamodb/transform.py), with run_suite called past the
version check, load 1-8: 1498 passed, 23 skipped in 15 min (877 s of it
tests/functional/docs/test_smoke.py), each of its 1521 test ids with the same outcome as on the
stock 1.44.8 wheels.
"""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)
from lab.standin.lambda_env import extract_layer  # noqa: E402  (the layer zip extracted as Lambda does)

SDISTS = os.environ.get("AWS_KEEPALIVE_UPSTREAM_SDISTS", "")
LAYER_ZIP = os.environ.get("AWS_KEEPALIVE_LAYER_ZIP", os.path.join(REPO, "build", "layer.zip"))
BOTO3_SOURCE = os.environ.get("AWS_KEEPALIVE_BOTO3_SOURCE", "")
REQUIRE_BOTO3 = os.environ.get("AWS_KEEPALIVE_REQUIRE_BOTO3_SUITE") == "1"

# {node id: why it is deselected}: none today.  A test added here must say why it cannot pass on
# the patched tree while the behaviour it pins still holds.
DESELECTED = {}

# Checked in the suite's interpreter before pytest runs: every SDK module comes from the layer's
# tree, and the patches are in effect there (a stale or unpatched tree fails here, not silently).
GUARD = """
import sys
tree = sys.argv[1]
import boto3, boto3.compat, botocore, botocore.docs.docstring, s3transfer, urllib3, urllib3.http2
for module in (boto3, botocore, s3transfer, urllib3):
    assert module.__file__.startswith(tree), (module.__name__, module.__file__, tree)
assert "TransferConfig" not in vars(boto3.compat), "boto3 is not patched (compat imports s3transfer)"
assert "version" not in vars(urllib3.http2), "urllib3 is not patched (http2 imports importlib.metadata)"
import pytest
sys.exit(pytest.main(sys.argv[2:]))
"""


def sdist_version(name):
    """The pinned version of ``name`` in tests/upstream/sdists.txt."""
    with open(os.path.join(REPO, "tests", "upstream", "sdists.txt")) as handle:
        match = re.search(r"^%s==(\S+)" % re.escape(name), handle.read(), re.MULTILINE)
    assert match, name
    return match.group(1)


@pytest.fixture(scope="module")
def layer_tree(tmp_path_factory):
    """build/layer.zip extracted; returns its python/ folder."""
    assert os.path.isfile(LAYER_ZIP), "no %s: run make test-upstream (it builds the layer)" % LAYER_ZIP
    return str(extract_layer(LAYER_ZIP, tmp_path_factory.mktemp("layer")) / "python")


def suite_tree(tmp_path, source, package):
    """The source tree's entries, linked into a fresh folder, without its ``package`` folder and its
    egg-info: the suite's working folder, where ``import <package>`` cannot find the unpatched copy."""
    tree = tmp_path / ("tree-" + package)
    tree.mkdir()
    for entry in sorted(os.listdir(source)):
        if entry == package or entry.endswith(".egg-info") or entry.startswith("."):
            continue
        os.symlink(os.path.join(source, entry), tree / entry)
    return tree


def sdist_source(name):
    source = os.path.join(SDISTS, "%s-%s" % (name, sdist_version(name)))
    assert SDISTS and os.path.isdir(source), "%s's sdist missing under %r: run make test-upstream" % (name, SDISTS)
    return source


def run_suite(tmp_path, layer_python, source, package, paths):
    """Run ``paths`` of the suite at ``source`` against the layer's tree; returns (outcomes by node id,
    failure texts by node id)."""
    tree = suite_tree(tmp_path, source, package)
    report = tmp_path / ("junit-%s.xml" % package)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("AWS_", "BOTO", "PYTHON"))}
    env.update(PYTHONPATH=layer_python, PYTHONNOUSERSITE="1", PYTHONHASHSEED="0")
    deselect = [argument for node in sorted(DESELECTED) for argument in ("--deselect", node)]
    completed = subprocess.run(
        [sys.executable, "-c", GUARD, layer_python, "-q", "-p", "no:cacheprovider", "--junitxml", str(report),
         "-W", "ignore::DeprecationWarning"] + deselect + list(paths),
        cwd=tree, env=env, capture_output=True, text=True, timeout=3600,
    )
    assert report.exists(), completed.stdout[-4000:] + completed.stderr[-4000:]
    outcomes, failures = {}, {}
    for case in ElementTree.parse(str(report)).getroot().iter("testcase"):
        name = "%s::%s" % (case.get("classname"), case.get("name"))
        failed = case.find("failure")
        failed = case.find("error") if failed is None else failed
        if failed is not None:
            outcomes[name] = "failed"
            failures[name] = (failed.get("message") or "") + "\n" + (failed.text or "")[-1500:]
        elif case.find("skipped") is not None:
            outcomes[name] = "skipped"
        else:
            outcomes[name] = "passed"
    counts = {outcome: list(outcomes.values()).count(outcome) for outcome in ("passed", "failed", "skipped")}
    print("%s %s on the patched tree: %s" % (package, " ".join(paths), counts))
    return outcomes, failures, completed


def assert_passed(outcomes, failures, completed, at_least):
    assert failures == {}, "\n\n".join("%s\n%s" % item for item in sorted(failures.items())[:10])
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert list(outcomes.values()).count("passed") >= at_least


def test_botocore_unit_suite(tmp_path, layer_tree):
    """botocore's unit suite (its sdist's tests/unit) passes on the layer's patched botocore."""
    outcomes, failures, completed = run_suite(tmp_path, layer_tree, sdist_source("botocore"), "botocore",
                                              ["tests/unit"])
    assert_passed(outcomes, failures, completed, 4000)


def test_botocore_functional_suite(tmp_path, layer_tree):
    """botocore's functional suite (~59 000 tests: every service's models, endpoints, waiters,
    paginators, docs generation) passes on the layer's patched botocore."""
    outcomes, failures, completed = run_suite(tmp_path, layer_tree, sdist_source("botocore"), "botocore",
                                              ["tests/functional"])
    assert_passed(outcomes, failures, completed, 50000)


def test_s3transfer_unit_and_functional_suites(tmp_path, layer_tree):
    """s3transfer's unit and functional suites pass with the layer's patched boto3/botocore/urllib3
    (s3transfer itself is unpatched: its tests pin that the lazy import in boto3.compat changed
    nothing it relies on)."""
    outcomes, failures, completed = run_suite(tmp_path, layer_tree, sdist_source("s3transfer"), "s3transfer",
                                              ["tests/unit", "tests/functional"])
    assert_passed(outcomes, failures, completed, 600)


def test_boto3_unit_and_functional_suites(tmp_path, layer_tree):
    """boto3's unit and functional suites (from a checkout of boto/boto3 at the pinned tag: its sdist
    ships no tests) pass on the layer's patched boto3."""
    if not BOTO3_SOURCE:
        message = ("boto3's sdist has no tests: set AWS_KEEPALIVE_BOTO3_SOURCE to a checkout of boto/boto3 at "
                   "tag %s (the release workflow does)" % sdist_version("boto3"))
        if REQUIRE_BOTO3:
            pytest.fail(message)
        pytest.skip(message)
    with open(os.path.join(BOTO3_SOURCE, "boto3", "__init__.py")) as handle:
        version = re.search(r"^__version__ = '([^']+)'", handle.read(), re.MULTILINE).group(1)
    assert version == sdist_version("boto3"), "the boto3 checkout is %s, the layer pins %s" % (
        version, sdist_version("boto3"))
    outcomes, failures, completed = run_suite(tmp_path, layer_tree, BOTO3_SOURCE, "boto3",
                                              ["tests/unit", "tests/functional"])
    assert_passed(outcomes, failures, completed, 1000)
