"""tools/prepare_data.py as `make layer` runs it: the full layer carries an index of exactly its own
data folders and botocore's top-level files pre-parsed; the hook flavor carries none."""

import json
import os
import pickle
import subprocess
import sys
import zipfile
from collections import OrderedDict

from conftest import STANDIN, env, extract

INDEX = "python/aws_keepalive/prepared.pickle"


def read_index(zip_path):
    with zipfile.ZipFile(zip_path) as archive:
        return pickle.loads(archive.read(INDEX)), archive.namelist(), archive


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
    assert index["format"] == 1
    for relative, package in (("botocore/data", "botocore"), ("boto3/data", "boto3")):
        tree = index["trees"][relative]
        files, services = folder_view(names, "python/" + relative)
        assert list(tree["files"]) == files
        assert {s: {v: list(f) for v, f in vs.items()} for s, vs in tree["services"].items()} == services
        version = [n for n in names if n.startswith("python/%s-" % package) and n.endswith(".dist-info/")]
        assert version == ["python/%s-%s.dist-info/" % (package, tree["version"])]
    assert len(index["trees"]["botocore/data"]["services"]) > 400


def test_pre_parsed_files_equal_botocores_parse(layer):
    """Each pre-parsed top-level file is botocore's own parse of the zip's file (OrderedDict, same
    order), with that file's size."""
    index, _, _ = read_index(layer[0])
    with zipfile.ZipFile(layer[0]) as archive:
        for relative, (size, data) in index["parsed"].items():
            raw = archive.read("python/" + relative)
            assert size == len(raw), relative
            parsed = pickle.loads(data)
            stock = json.loads(raw.decode("utf-8"), object_pairs_hook=OrderedDict)
            assert type(parsed) is OrderedDict and parsed == stock and list(parsed) == list(stock), relative
    assert sorted(index["parsed"]) == ["botocore/data/_retry.json", "botocore/data/endpoints.json",
                                       "botocore/data/partitions.json",
                                       "botocore/data/sdk-default-configuration.json"]


def test_trimmed_layer_indexes_only_the_kept_services(trimmed):
    """SERVICES=dynamodb,s3: the index holds those two, and the cut endpoints.json pre-parsed."""
    index, _, _ = read_index(trimmed[0])
    assert sorted(index["trees"]["botocore/data"]["services"]) == ["dynamodb", "s3"]
    with zipfile.ZipFile(trimmed[0]) as archive:
        endpoints = json.loads(archive.read("python/botocore/data/endpoints.json"))
    parsed = pickle.loads(index["parsed"]["botocore/data/endpoints.json"][1])
    assert parsed == endpoints and set(parsed["partitions"][0]["services"]) == {"dynamodb", "s3"}


def test_hook_flavor_has_no_index(hook_layer):
    """The hook flavor ships no SDK, so no index (prepared.py then leaves any botocore alone)."""
    with zipfile.ZipFile(hook_layer[0]) as archive:
        assert INDEX not in archive.namelist()


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
    index = os.path.join(opt, "python", "aws_keepalive", "prepared.pickle")
    assert "prepared data: %s, built for botocore" % index in completed.stderr, completed.stderr[-2000:]
