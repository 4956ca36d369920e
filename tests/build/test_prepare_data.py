"""tools/packaging/prepare_data.py as `make layer` runs it: the full layer carries an index of exactly its own
data folders and botocore's top-level files pre-parsed; the hook flavor the same for each runtime
SDK it knows (lab/runtime-sdk/*.txt), answered for that SDK with exactly stock's results."""

import glob
import gzip
import hashlib
import json
import os
import pickle
import re
import subprocess
import sys
import zipfile
from collections import OrderedDict

import pytest
from conftest import BASE_ENV, REPO, STANDIN, env, extract

sys.path.insert(0, os.path.join(REPO, "tests", "hook"))
from prepared_probe import OPT_OUT, ON, assert_same, run_probe  # noqa: E402  (tests/hook/prepared_probe.py)

sys.path.insert(0, REPO)
from lab.standin import runtime_prefix  # noqa: E402  (its uv, which installs the runtime SDKs)

DATA = "python/aws_keepalive/prepared-data/"
# The runtimes' bundled SDKs the hook flavor prepares (mk/layer.mk's RUNTIME_SDKS).
RUNTIME_LOCKS = sorted(glob.glob(os.path.join(REPO, "lab", "runtime-sdk", "*.txt")))


def lock_release(lock):
    """The botocore version a hash-pinned lock pins."""
    with open(lock) as handle:
        return re.search(r"^botocore==(\S+)", handle.read(), re.M).group(1)


def read_index(zip_path, release=None):
    """(the index of ``release`` (default: the only one), the zip's names, the zip's path)."""
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
        indexes = [n for n in names if n.startswith(DATA + "botocore-")]
        if release is None:
            (name,) = indexes
        else:
            name = DATA + "botocore-%s.pickle" % release
        return pickle.loads(archive.read(name)), names, zip_path


def folder_view(names, data):
    """{service: {version: files}} and the top-level files of ``data`` (e.g. python/botocore/data)
    as the zip's names show them."""
    services, files = {}, []
    for name in names:
        if not name.startswith(data + "/") or name.endswith("/"):
            continue
        parts = name[len(data) + 1:].split("/")
        if len(parts) == 1:
            files.append(parts[0])
        elif len(parts) == 3:
            services.setdefault(parts[0], {}).setdefault(parts[1], []).append(parts[2])
    return sorted(files), {s: {v: sorted(f) for v, f in vs.items()} for s, vs in services.items()}


def test_full_layer_indexes_exactly_its_data_folders(layer):
    """The index lists every service, version and file of the zip's botocore/data and boto3/data,
    with the versions of the botocore and boto3 it ships."""
    index, names, _ = read_index(layer[0])
    assert index["format"] == 3  # (size, sha256, name) per pre-parsed file: issue 31
    with zipfile.ZipFile(layer[0]) as archive:
        sizes = {info.filename: info.file_size for info in archive.infolist()}
    for relative, package in (("botocore/data", "botocore"), ("boto3/data", "boto3")):
        tree = index["trees"][relative]
        files, services = folder_view(names, "python/" + relative)
        assert list(tree["files"]) == files
        assert list(tree["sizes"]) == [sizes["python/%s/%s" % (relative, name)] for name in files]
        assert {s: {v: list(f) for v, f in vs.items()} for s, vs in tree["services"].items()} == services
        version = [n for n in names if n.startswith("python/%s-" % package) and n.endswith(".dist-info/")]
        assert version == ["python/%s-%s.dist-info/" % (package, tree["version"])]
    assert len(index["trees"]["botocore/data"]["services"]) > 400


def test_pre_parsed_files_equal_botocores_parse(layer):
    """Each pre-parsed file (the top-level ones, the common services' latest model and rule set) is
    botocore's own parse of the zip's file (OrderedDict, same order), with that file's size and sha256."""
    index, _, _ = read_index(layer[0])
    with zipfile.ZipFile(layer[0]) as archive:
        for relative, (size, digest, name) in index["parsed"].items():
            raw = archive.read("python/" + relative)
            assert size == len(raw) and digest == hashlib.sha256(raw).digest(), relative
            parsed = pickle.loads(archive.read(DATA + name))
            text = gzip.decompress(raw) if relative.endswith(".gz") else raw
            stock = json.loads(text.decode("utf-8"), object_pairs_hook=OrderedDict)
            assert type(parsed) is OrderedDict and parsed == stock and list(parsed) == list(stock), relative
    top_level = ["botocore/data/_retry.json", "botocore/data/endpoints.json", "botocore/data/partitions.json",
                 "botocore/data/sdk-default-configuration.json"]
    assert sorted(name for name in index["parsed"] if name.count("/") == 2) == top_level
    services = index["trees"]["botocore/data"]["services"]
    assert sorted(name for name in index["parsed"] if name.count("/") == 4) == sorted(
        "botocore/data/%s/%s/%s.json.gz" % (service, max(services[service]), type_name)
        for service in ("dynamodb", "lambda", "s3") for type_name in ("endpoint-rule-set-1", "service-2"))


def test_trimmed_layer_indexes_only_the_kept_services(trimmed):
    """SERVICES=dynamodb,s3: the index holds those two, and the cut endpoints.json pre-parsed."""
    index, _, _ = read_index(trimmed[0])
    assert sorted(index["trees"]["botocore/data"]["services"]) == ["dynamodb", "s3"]
    with zipfile.ZipFile(trimmed[0]) as archive:
        endpoints = json.loads(archive.read("python/botocore/data/endpoints.json"))
    with zipfile.ZipFile(trimmed[0]) as archive:
        parsed = pickle.loads(archive.read(DATA + index["parsed"]["botocore/data/endpoints.json"][2]))
    assert parsed == endpoints and set(parsed["partitions"][0]["services"]) == {"dynamodb", "s3"}


def test_hook_flavor_prepares_each_runtime_sdk_sharing_equal_files(hook_layer):
    """The hook flavor ships one index per runtime SDK of lab/runtime-sdk (botocore/data and
    boto3/data, that release's versions) and the pre-parsed files they name, a file that two
    releases ship alike written once (sdk-default-configuration.json); nothing else."""
    releases = [lock_release(lock) for lock in RUNTIME_LOCKS]
    # The public data points on what the runtimes bundled in 2024-2026 (issue 29).
    assert {"1.34.162", "1.38.36", "1.39.17", "1.40.4", "1.42.97"} <= set(releases)
    named = {}
    for release in releases:
        index, names, _ = read_index(hook_layer[0], release)
        assert index["trees"]["botocore/data"]["version"] == release
        assert index["trees"]["boto3/data"]["package"] == "boto3"
        assert len(index["trees"]["botocore/data"]["services"]) > 300
        for _, (_, _, name) in index["parsed"].items():
            named.setdefault(name, set()).add(release)
    held = {n[len(DATA):] for n in names if n.startswith(DATA) and n != DATA}
    assert held == set(named) | {"botocore-%s.pickle" % release for release in releases}
    shared = [name for name, used_by in named.items() if len(used_by) == len(releases)]
    assert shared, "sdk-default-configuration.json is the same in every release: one file"


@pytest.fixture(scope="module")
def runtime_sdks(hook_layer, tmp_path_factory):
    """{release: site folder holding the hook zip's python/ folder and that runtime SDK's lock
    installed (uv, hash-pinned, as the build installs it), os.pathsep-joined}."""
    root = tmp_path_factory.mktemp("runtime-sdks")
    opt = extract(hook_layer[0], str(root / "opt"))
    sites = {}
    for lock in RUNTIME_LOCKS:
        release = lock_release(lock)
        target = str(root / release)
        subprocess.run([str(runtime_prefix.UV), "pip", "install", "--quiet", "--no-config", "--target", target,
                        "--python", sys.executable, "--require-hashes", "--no-deps", "--only-binary", ":all:",
                        "--link-mode", "hardlink", "-r", lock], check=True, env=env())
        sites[release] = os.pathsep.join([os.path.join(opt, "python"), target])
    return sites


@pytest.mark.parametrize("release", [lock_release(lock) for lock in RUNTIME_LOCKS])
def test_hook_flavor_answers_every_service_of_each_runtime_sdk_as_stock(runtime_sdks, release):
    """The hook zip on each runtime SDK (its botocore and boto3 imported from their own folder):
    every service's listings, models (service, rule set, paginators, waiters) and endpoints, the
    partitions and the other top-level files are the same with the prepared data as without, and
    creating two clients lists no other service folder than theirs."""
    site = runtime_sdks[release]
    sdk = site.split(os.pathsep)[1]
    services = sorted(os.listdir(os.path.join(sdk, "botocore", "data")))
    services = [s for s in services if os.path.isdir(os.path.join(sdk, "botocore", "data", s))]
    prepared, stderr = run_probe(site, ON, BASE_ENV, services)
    stock, _ = run_probe(site, OPT_OUT, BASE_ENV, services)
    assert prepared["answered"] == [os.path.join(sdk, "boto3", "data"), os.path.join(sdk, "botocore", "data")], (
        stderr[-2000:])
    assert prepared["listed_beyond_created"] == 0 and prepared["listed_at_creation"] <= 8
    assert stock["listed_at_creation"] > 300
    assert_same(prepared, stock)
    assert "botocore-%s.pickle, built for botocore %s" % (release, release) in stderr
    assert len([key for key in stock["results"] if key.startswith("load_service_model")]) > 4 * 300


FUNCTION = """
import boto3

def handler(event, context):
    boto3.client("dynamodb", region_name="us-east-1")
    return {"ok": True}
"""


def test_the_built_layer_uses_its_index_in_the_standin_runtime(opt, tmp_path):
    """A function in the stand-in runtime, with the built layer in /opt and the switch on, creates
    its client from the index (the debug line names it)."""
    task = tmp_path / "task"
    task.mkdir()
    (task / "handler.py").write_text(FUNCTION)
    completed = subprocess.run(
        [sys.executable, STANDIN, "--opt", opt, "--task", str(task), "--handler", "handler.handler"],
        capture_output=True, text=True, env=env(AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1"),
        timeout=120)
    assert completed.returncode == 0, completed.stderr
    data = os.path.join(opt, "python", "aws_keepalive", "prepared-data")
    assert "prepared data: %s/botocore-" % data in completed.stderr, completed.stderr[-2000:]
    assert "prepared data: %s is botocore " % os.path.join(opt, "python", "botocore", "data") in completed.stderr
