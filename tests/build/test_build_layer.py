"""tools/build_layer.py through `make layer`: contents, bytecode, reproducibility, size, trimming."""

import hashlib
import importlib.metadata
import importlib.util
import json
import marshal
import os
import subprocess
import sys
import zipfile

import pytest
from conftest import REPO, STANDIN, env, extract, interpreters, make_layer

import build_wheel

# Size budget (decimal megabytes): Lambda allows 50 MB zipped and 250 MB unzipped for a function
# and all its layers together; this layer must leave most of that to the function.
MAX_ZIPPED = 25_000_000
MAX_UNZIPPED = 60_000_000
HOOK_FILES = ("aws_keepalive.pth", "sitecustomize.py", "usercustomize.py", "_aws_keepalive_site.py",
              "aws_keepalive/__init__.py", "aws_keepalive/snapstart.py")


def sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def names(zip_path):
    with zipfile.ZipFile(zip_path) as archive:
        return archive.namelist()


def test_make_layer_prints_the_zips_sha256_and_sizes(layer):
    """`make layer` prints the sha256 of the zip it wrote, and its zipped/unzipped sizes."""
    path, fields = layer
    assert fields["sha256"] == sha256(path)
    assert fields["zipped"].endswith("(%d bytes)" % os.path.getsize(path))
    with zipfile.ZipFile(path) as archive:
        unzipped = sum(info.file_size for info in archive.infolist())
    assert fields["unzipped"].startswith("%.1f MB (%d bytes)" % (unzipped / 1e6, unzipped))


def test_two_builds_give_the_same_bytes(layer, tmp_path):
    """A second build (other folder, umask, mtimes and caller's hash seed) gives the same sha256."""
    path, fields = layer
    again, again_fields = make_layer(str(tmp_path / "elsewhere" / "b"), umask=0o077, PYTHONHASHSEED="12345")
    assert again_fields["sha256"] == fields["sha256"] == sha256(again)


def test_zip_has_python_root_sorted_entries_and_fixed_metadata(layer):
    """Every entry is under python/, in sorted order, dated 1980-01-01, mode 0644 or 0755."""
    with zipfile.ZipFile(layer[0]) as archive:
        infos = archive.infolist()
    paths = [info.filename.rstrip("/") for info in infos]
    assert paths == sorted(paths)
    assert paths[0] == "python"
    for info in infos:
        assert info.filename.startswith("python/")
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        mode = info.external_attr >> 16
        assert mode == (0o040755 if info.is_dir() else 0o100644), info.filename


def test_hook_files_are_shipped_as_in_the_source(layer):
    """The .pth, sitecustomize.py and the hook package are in python/, byte for byte."""
    with zipfile.ZipFile(layer[0]) as archive:
        for relative in HOOK_FILES:
            with open(os.path.join(REPO, "layer", relative), "rb") as handle:
                assert archive.read("python/" + relative) == handle.read(), relative


def test_layer_carries_the_hooks_dist_info_with_the_otel_entry_point(opt):
    """importlib.metadata finds aws-python-keepalive (the hook's version) and its OTel entry point in python/."""
    (distribution,) = [d for d in importlib.metadata.distributions(path=[os.path.join(opt, "python")])
                       if d.metadata["Name"] == "aws-python-keepalive"]
    assert distribution.version == build_wheel.source_version(os.path.join(REPO, "layer"))
    assert "Requires-Dist" not in distribution.read_text("METADATA")
    (entry_point,) = distribution.entry_points.select(group="opentelemetry_pre_instrument")
    assert (entry_point.name, entry_point.value) == ("aws_keepalive", "aws_keepalive:opentelemetry_pre_instrument")


def test_every_module_has_unchecked_hash_bytecode_for_each_cpython(layer):
    """Each .py has a .pyc per CPython on this machine, hash-based and never checked against the source."""
    minors = sorted(interpreters())
    all_names = set(names(layer[0]))
    sources = [name for name in all_names if name.endswith(".py")]
    assert len(sources) > 100
    for source in sources:
        folder, filename = source.rsplit("/", 1)
        for minor in minors:
            cached = "%s/__pycache__/%s.cpython-%s.pyc" % (folder, filename[:-3], minor.replace(".", ""))
            assert cached in all_names, cached
    with zipfile.ZipFile(layer[0]) as archive:
        for name in all_names:
            if name.endswith(".pyc"):
                flags = int.from_bytes(archive.read(name)[4:8], "little")
                assert flags == 0b01, name  # bit 0: hash-based; bit 1 (check_source) off


def test_bytecode_matches_the_sources_and_records_opt_paths(layer):
    """The .pyc of this interpreter hash their shipped source and name /opt/python/... as their file."""
    tag = sys.implementation.cache_tag
    with zipfile.ZipFile(layer[0]) as archive:
        checked = 0
        for name in archive.namelist():
            if not name.endswith("." + tag + ".pyc"):
                continue
            folder, filename = name.rsplit("/__pycache__/", 1)
            source_name = "%s/%s.py" % (folder, filename[: -len("." + tag + ".pyc")])
            data = archive.read(name)
            assert data[:4] == importlib.util.MAGIC_NUMBER
            assert data[8:16] == importlib.util.source_hash(archive.read(source_name)), name
            assert marshal.loads(data[16:]).co_filename == "/opt/" + source_name
            checked += 1
    assert checked > 100


def test_no_build_path_leaks_into_the_zip(layer):
    """No file in the zip mentions the folder it was built in."""
    build_dir = os.path.dirname(os.path.abspath(layer[0])).encode()
    with zipfile.ZipFile(layer[0]) as archive:
        for name in archive.namelist():
            assert build_dir not in archive.read(name), name


def test_caches_scripts_and_tests_removed_but_metadata_kept(layer, opt):
    """No console scripts, test folders or stray caches; importlib.metadata still sees every distribution
    (the pinned ones and the hook's own)."""
    all_names = names(layer[0])
    assert not [name for name in all_names if name.startswith("python/bin/")]
    assert not [name for name in all_names if "/tests/" in name or "/test/" in name]
    assert not [name for name in all_names if name.endswith(".pyc") and "/__pycache__/" not in name]
    with open(os.path.join(REPO, "layer", "requirements.txt")) as handle:
        pins = dict(line.split(" ")[0].split("==") for line in handle if "==" in line and not line.startswith(" "))
    probe = (
        "import importlib.metadata as m, json, sys; sys.path.insert(0, %r); "
        "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions(path=[%r])}))"
        % (os.path.join(opt, "python"), os.path.join(opt, "python"))
    )
    found = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                      check=True, env=env()).stdout)
    pins["aws-python-keepalive"] = build_wheel.source_version(os.path.join(REPO, "layer"))
    assert found == pins


def test_size_budget(layer, capsys):
    """The zip stays within 25 MB zipped and 60 MB unzipped (both printed)."""
    path = layer[0]
    with zipfile.ZipFile(path) as archive:
        unzipped = sum(info.file_size for info in archive.infolist())
    zipped = os.path.getsize(path)
    with capsys.disabled():
        print("\nlayer size: %.1f MB zipped (budget 25), %.1f MB unzipped (budget 60)" % (zipped / 1e6, unzipped / 1e6))
    assert zipped <= MAX_ZIPPED
    assert unzipped <= MAX_UNZIPPED


PROBE_SERVICES = """
import json, botocore, botocore.exceptions, boto3

def handler(event, context):
    result = {"botocore": botocore.__file__}
    for service in event["services"]:
        try:
            boto3.client(service, region_name="us-east-1")
            result[service] = "ok"
        except botocore.exceptions.UnknownServiceError as error:
            result[service] = str(error)
    return result
"""


def test_trimmed_layer_serves_kept_services_and_names_them_for_others(trimmed, tmp_path, capsys):
    """SERVICES=dynamodb,s3 keeps those clients working; others fail with UnknownServiceError naming the kept ones."""
    path, fields = trimmed
    with capsys.disabled():
        print("\ntrimmed layer (dynamodb,s3): %s zipped, %s unzipped" % (fields["zipped"], fields["unzipped"]))
    assert fields["services"] == "dynamodb,s3"
    opt = extract(path, str(tmp_path / "opt"))
    task = tmp_path / "task"
    task.mkdir()
    (task / "probe_services.py").write_text(PROBE_SERVICES)
    completed = subprocess.run(
        [sys.executable, STANDIN, "--opt", opt, "--task", str(task), "--handler", "probe_services.handler",
         "--event", json.dumps({"services": ["dynamodb", "s3", "sqs"]})],
        capture_output=True, text=True, env=env(),
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout.splitlines()[-1])
    assert result["botocore"].startswith(opt)
    assert result["dynamodb"] == "ok" and result["s3"] == "ok"
    assert "Unknown service: 'sqs'" in result["sqs"]
    assert "Valid service names are: dynamodb, s3" in result["sqs"]


def test_trimmed_layer_is_smaller(layer, trimmed):
    """Trimming drops most of the size."""
    assert os.path.getsize(trimmed[0]) < os.path.getsize(layer[0]) / 3


def test_unknown_service_fails_the_build(tmp_path):
    """SERVICES with a name botocore does not have stops the build with that name."""
    with pytest.raises(AssertionError, match="unknown service.*dynamodbx"):
        make_layer(str(tmp_path / "b"), services="dynamodb,dynamodbx")


KEPT_SERVICE_VIEW = """
import json, sys
sys.path.insert(0, sys.argv[1])
import boto3
session = boto3.session.Session()
view = {"partitions": session.get_available_partitions()}
for service in ("dynamodb", "s3"):
    view[service] = {partition: session.get_available_regions(service, partition)
                     for partition in view["partitions"]}
    view[service + "_urls"] = {region: boto3.client(service, region_name=region).meta.endpoint_url
                               for region in ("us-east-1", "eu-west-1", "cn-north-1", "us-gov-west-1")}
print(json.dumps(view, sort_keys=True))
"""


def test_trimmed_layer_endpoints_hold_only_kept_services_and_serve_them_alike(layer, trimmed, tmp_path):
    """A trimmed build cuts endpoints.json to the kept services; their regions and URLs stay as in the full layer."""
    views = {}
    for name, (path, _) in (("full", layer), ("trimmed", trimmed)):
        opt = extract(path, str(tmp_path / name))
        views[name] = subprocess.run([sys.executable, "-c", KEPT_SERVICE_VIEW, os.path.join(opt, "python")],
                                     capture_output=True, text=True, env=env(), check=True).stdout
        with open(os.path.join(opt, "python", "botocore", "data", "endpoints.json")) as source:
            views[name + "_services"] = {key for p in json.load(source)["partitions"] for key in p["services"]}
    assert views["trimmed_services"] == {"dynamodb", "s3"}
    assert len(views["full_services"]) > 100
    assert views["trimmed"] == views["full"]
