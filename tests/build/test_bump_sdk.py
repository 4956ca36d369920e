"""make bump-sdk (tools/release/bump_sdk.py): resolution from a real package index on loopback
(pypiserver holding real boto3/botocore wheels from PyPI), idempotency, refusal, what changed.

The suites a real bump runs (test-build, test-hook-3.12, test-compat, test-upstream) cannot run inside test-build
itself; the refusal test hands the bump a make that records its targets and fails one suite with
pytest's own summary line, on a copy of the files a bump writes. Everything else is real: uv
resolving from the index, the hashes, the two botocore trees compared, template.yaml rewritten.
"""

import glob
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, env, free_port, local_server, tool

sys.path.insert(0, REPO)
from tools.docs import render_docs  # noqa: E402
from tools.release import bump_sdk  # noqa: E402

UV = os.path.join(REPO, ".venv", "uv", "bin", "uv")
PINNED = bump_sdk.pins(open(os.path.join(REPO, bump_sdk.LOCK)).read())


def previous_release(version):
    """A botocore release older than ``version`` on PyPI: the patch before, or 1.42.97 (a runtime's)."""
    major, minor, patch = (int(part) for part in version.split("."))
    return "%d.%d.%d" % (major, minor, patch - 1) if patch else "1.42.97"


OLDER = previous_release(PINNED["botocore"])


@pytest.fixture(scope="session")
def packages(tmp_path_factory):
    """The pinned set's wheels (hash-checked) and the previous boto3/botocore, downloaded from PyPI."""
    folder = tmp_path_factory.mktemp("packages")
    pip = [os.path.join(os.path.dirname(tool("AWS_KEEPALIVE_PYPISERVER")), "python"), "-m", "pip", "download",
           "-q", "--only-binary", ":all:", "--python-version", "3.12", "-d", str(folder)]
    for arguments in (["--no-deps", "--require-hashes", "-r", os.path.join(REPO, bump_sdk.LOCK)],
                      ["boto3==%s" % OLDER, "botocore==%s" % OLDER]):
        completed = subprocess.run(pip + arguments, capture_output=True, text=True, env=env())
        assert completed.returncode == 0, completed.stderr
    return folder


@pytest.fixture(scope="session")
def index(packages, tmp_path_factory):
    """pypiserver on 127.0.0.1 serving ``packages`` (no fallback to PyPI): its simple URL."""
    argv = [tool("AWS_KEEPALIVE_PYPISERVER"), "run", "-i", "127.0.0.1", "-p", str(free_port()),
            "--disable-fallback", str(packages)]
    with local_server(argv, tmp_path_factory.mktemp("pypiserver") / "pypiserver.log", "pypiserver") as url:
        yield url + "/simple/"


def tracked_files():
    """{path: (sha256, mtime_ns)} of every file git tracks in the checkout."""
    listed = subprocess.run(["git", "-C", REPO, "ls-files", "-z"], capture_output=True, check=True).stdout
    state = {}
    for path in filter(None, listed.decode().split("\0")):
        full = os.path.join(REPO, path)
        if os.path.isfile(full):
            with open(full, "rb") as handle:
                state[path] = (hashlib.sha256(handle.read()).hexdigest(), os.stat(full).st_mtime_ns)
    return state


def test_unchanged_pin_exits_0_and_writes_nothing(index, tmp_path):
    """`make bump-sdk` against an index whose newest set is the pinned one: exit 0, says so, and no
    tracked file changes, not even layer/requirements.txt's time (make would rebuild every venv)."""
    before = tracked_files()
    completed = subprocess.run(
        ["make", "--no-print-directory", "-C", REPO, "bump-sdk", "BUMP_INDEX_URL=" + index,
         "BUILD_DIR=%s" % tmp_path], capture_output=True, text=True, env=env(NO_PROXY="127.0.0.1"))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "nothing to do" in completed.stdout and "botocore %s" % PINNED["botocore"] in completed.stdout
    assert tracked_files() == before
    report = json.loads((tmp_path / "bump-sdk.json").read_text())
    assert report["changed"] is False and report["new"]["botocore"] == PINNED["botocore"]


def checkout_copy(root):
    """The files a bump reads and writes, copied to ``root`` (a stand-in checkout)."""
    for path in (bump_sdk.LOCK_IN, bump_sdk.LOCK, bump_sdk.HOOK_INIT, "README.md", *bump_sdk.FOLLOWING_FILES):
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        shutil.copyfile(os.path.join(REPO, path), os.path.join(root, path))
    shutil.copytree(os.path.join(REPO, "docs"), os.path.join(root, "docs"))


# A make that records its targets; FAIL_SUITE fails like pytest does.
RECORDING_MAKE = textwrap.dedent("""\
    import os, sys
    with open(os.environ["MAKE_RECORD"], "a") as record:
        record.write(" ".join(sys.argv[1:]) + "\\n")
    if os.environ.get("FAIL_SUITE") in sys.argv[1:]:
        print("FAILED tests/hook/test_sockets.py::test_keepalive_set - AssertionError: 0 != 1")
        print("== hook tests: exit 1")
        sys.exit(1)
    with open("README.md", "a") as readme:  # a rebuild that writes (make docs does)
        readme.write("rendered\\n")
    if sys.argv[1:2] == ["layer"]:  # the sizes make layer writes (FAKE_<FLAVOR>_ZIPPED: how big)
        flavor = sys.argv[2].split("=")[1]
        os.makedirs("build", exist_ok=True)
        zipped = int(os.environ.get("FAKE_%s_ZIPPED" % flavor.upper(), "1000"))
        with open("build/layer.json" if flavor == "full" else "build/layer-hook.json", "w") as rows:
            rows.write('{"rows": [{"zipped": %d, "unzipped": %d}]}' % (zipped, 2 * zipped))
""")


def run_bump(root, index, tmp_path, **extra):
    make = tmp_path / "make.py"
    make.write_text(RECORDING_MAKE)
    return subprocess.run(
        [sys.executable, os.path.join(REPO, "tools", "release", "bump_sdk.py"), "--uv", UV, "--repo", str(root),
         "--make", "%s %s" % (sys.executable, make), "--version", OLDER, "--index-url", index,
         "--report", str(tmp_path / "report.json"), "--work", str(tmp_path / "work")],
        capture_output=True, text=True, env=env(NO_PROXY="127.0.0.1", MAKE_RECORD=str(tmp_path / "record"), **extra))


def test_a_failing_suite_restores_the_old_pin_and_names_the_test(index, tmp_path):
    """VERSION=<older release>: re-locked, rebuilt and judged in order; test-hook-3.12 fails, so every
    written file is put back byte for byte, and the failed test and suite are named."""
    root = tmp_path / "checkout"
    checkout_copy(root)
    before = {path: (root / path).read_bytes() for path in (bump_sdk.LOCK, "template.yaml", "README.md")}
    completed = run_bump(root, index, tmp_path, FAIL_SUITE="test-hook-3.12")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "REFUSED" in completed.stderr and "test-hook-3.12" in completed.stderr
    assert "tests/hook/test_sockets.py::test_keepalive_set" in completed.stderr
    assert {path: (root / path).read_bytes() for path in before} == before
    record = (tmp_path / "record").read_text().splitlines()
    assert record[0] == " ".join(bump_sdk.FOLLOWING_LOCK_TARGETS)
    assert record[1:5] == ["layer FLAVOR=full", "layer FLAVOR=hook", "sdk-defaults", "docs"]
    assert record[-len(bump_sdk.SUITES):] == list(bump_sdk.SUITES)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["refused"] == ["test-hook-3.12"] and report["new"]["botocore"] == OLDER


def test_a_bump_over_the_size_budget_is_refused_before_the_suites_saying_what_to_do(index, tmp_path):
    """A rebuilt full zip over build_layer.SIZE_BUDGET (36 MB zipped here) refuses the bump right after
    the rebuild, before any suite runs: every written file put back, and the message names the budget,
    where it lives and what to do."""
    root = tmp_path / "checkout"
    checkout_copy(root)
    before = {path: (root / path).read_bytes() for path in (bump_sdk.LOCK, "template.yaml", "README.md")}
    completed = run_bump(root, index, tmp_path, FAKE_FULL_ZIPPED="36000000")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "the full layer is over its size budget: 36.0 MB (36000000 bytes) zipped" in completed.stderr
    assert "SIZE_BUDGET" in completed.stderr and "What to do: keep the old pin" in completed.stderr
    assert "REFUSED" in completed.stderr and "size budget failed" in completed.stderr
    assert {path: (root / path).read_bytes() for path in before} == before
    record = (tmp_path / "record").read_text().splitlines()
    assert not set(record) & set(bump_sdk.SUITES)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["refused"] == ["size budget"] and len(report["size_budget"]) == 1


def test_a_green_bump_pins_the_set_and_says_what_changed(index, tmp_path):
    """All suites green: layer/requirements.txt pins boto3 and botocore OLDER with hashes, uv's header
    unchanged, template.yaml names them, and the report compares the two real botocore trees."""
    root = tmp_path / "checkout"
    checkout_copy(root)
    completed = run_bump(root, index, tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lock = (root / bump_sdk.LOCK).read_text()
    assert bump_sdk.pins(lock)["botocore"] == OLDER and bump_sdk.pins(lock)["boto3"] == OLDER
    assert lock.splitlines()[:2] == open(os.path.join(REPO, bump_sdk.LOCK)).read().splitlines()[:2]
    assert "botocore==%s \\\n    --hash=sha256:" % OLDER in lock
    assert "boto3 %s, botocore %s" % (OLDER, OLDER) in (root / "template.yaml").read_text()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["changes"]["modules_changed"] and "__init__.py" in report["changes"]["modules_changed"]
    assert "botocore %s -> %s" % (PINNED["botocore"], OLDER) in completed.stdout


def botocore_tree(root, services, defaults, modules):
    """A botocore package folder: data/<service>/<date>/service-2.json.gz, the defaults file, modules."""
    data = root / "data"
    for service, model in services.items():
        (data / service / "2020-01-01").mkdir(parents=True)
        # mtime differs per tree: gzip's header then differs while the model does not.
        (data / service / "2020-01-01" / "service-2.json.gz").write_bytes(
            gzip.compress(model.encode(), mtime=len(str(root))))
    (data / "sdk-default-configuration.json").write_text(json.dumps(defaults))
    (data / "endpoints.json").write_text(json.dumps({"partitions": []}))
    for name in bump_sdk.HOOK_MODULES:
        (root / name).write_text(modules.get(name, "x = 1\n"))
    return str(root)


def test_data_changes_compare_models_not_gzip_headers(tmp_path):
    """Added and removed services, a changed model (and not an equal one in a new gzip header),
    a changed defaults-mode value, and the lines changed in a module the hook patches."""
    old = botocore_tree(tmp_path / "old", {"s3": "{}", "sqs": "{}", "gone": "{}"},
                        {"base": {"connectTimeoutInMillis": 1100}, "modes": {}}, {})
    new = botocore_tree(tmp_path / "new-tree", {"s3": '{"v": 2}', "sqs": "{}", "fresh": "{}"},
                        {"base": {"connectTimeoutInMillis": 2000}, "modes": {}},
                        {"args.py": "x = 1\ny = 2\n"})
    changes = bump_sdk.data_changes(old, new)
    assert changes["services_added"] == ["fresh"] and changes["services_removed"] == ["gone"]
    assert changes["services_changed"] == ["s3"]
    assert changes["defaults_changed"] == {"base.connectTimeoutInMillis": [1100, 2000]}
    assert changes["hook_modules_lines_changed"]["args.py"] == 1
    assert changes["modules_changed"] == ["args.py"]
    assert any("args.py (1 lines)" in line for line in bump_sdk.format_changes(changes))


# "pinned ... 1.44.5" or "1.44.5, pinned": a version typed beside the word, which a bump leaves stale.
STATED_PIN = re.compile(r"pinned[^.\n]{0,40}?\b1\.\d+\.\d+\b|\b1\.\d+\.\d+\b[^.\n]{0,3}pinned by")


def test_no_document_types_the_pinned_version():
    """README.md and docs/*.md name the pin by where it lives (layer/requirements.txt), never by a number
    typed beside "pinned" outside a block make docs renders: a bump must need no hand edit."""
    found = []
    for path in ["README.md"] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))):
        text = render_docs.MARKER.sub("", open(os.path.join(REPO, path)).read())
        found += ["%s: %s" % (os.path.relpath(path, REPO) if os.path.isabs(path) else path, match.group(0))
                  for match in STATED_PIN.finditer(text) if "hash-pinned" not in text[match.start() - 5:match.end()]]
    assert found == []
