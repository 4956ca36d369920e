"""tools/packaging/build_layer.py through `make layer`: contents, bytecode, reproducibility, size, trimming,
the hook flavor."""

import csv
import hashlib
import io
import importlib.metadata
import importlib.util
import json
import marshal
import os
import shutil
import subprocess
import sys
import zipfile

import pytest
from conftest import REPO, STANDIN, env, extract, interpreters, make_layer

from tools.packaging import build_layer
from tools.packaging import build_wheel
from tools.packaging import layer_info
from tools.packaging import patches
from tools.release import release as release_module

sys.path.insert(0, REPO)
from lab.standin import runtime_prefix  # noqa: E402  (the stand-in runtime, for the hook flavor)
from lab.standin.lambda_env import PYTHON_MINORS  # noqa: E402

HOOK_FILES = ("aws_keepalive.pth", "aws_keepalive.start", "usercustomize.py",
              "_aws_keepalive_site.py", "aws_keepalive/__init__.py", "aws_keepalive/snapstart.py")


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


def released(release, flavor):
    """The ``release`` fixture's zip of ``flavor``."""
    version = build_wheel.source_version(os.path.join(REPO, "layer"))
    return os.path.join(release, release_module.zip_name(flavor, version))


def test_two_builds_give_the_same_bytes(layer, release):
    """A second build (the release's: other folder, umask, mtimes and caller's hash seed) gives the
    same sha256."""
    path, fields = layer
    assert fields["sha256"] == sha256(path) == sha256(released(release, "full"))


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
    """The .pth, its .start twin, usercustomize.py and the hook package are in python/, byte for byte
    (and no sitecustomize.py: docs/activation.md says why)."""
    with zipfile.ZipFile(layer[0]) as archive:
        for relative in HOOK_FILES:
            with open(os.path.join(REPO, "layer", relative), "rb") as handle:
                assert archive.read("python/" + relative) == handle.read(), relative
        assert "python/sitecustomize.py" not in archive.namelist()


def test_layer_carries_the_hooks_dist_info_with_the_otel_entry_point(opt):
    """importlib.metadata finds aws-python-keepalive (the hook's version) and its OTel entry point in python/."""
    (distribution,) = [d for d in importlib.metadata.distributions(path=[os.path.join(opt, "python")])
                       if d.metadata["Name"] == "aws-python-keepalive"]
    assert distribution.version == build_wheel.source_version(os.path.join(REPO, "layer"))
    assert "Requires-Dist" not in distribution.read_text("METADATA")
    (entry_point,) = distribution.entry_points.select(group="opentelemetry_pre_instrument")
    assert (entry_point.name, entry_point.value) == ("aws_keepalive", "aws_keepalive:opentelemetry_pre_instrument")


def test_every_module_has_unchecked_hash_bytecode_for_each_cpython(layer):
    """Each .py has a .pyc per CPython the layer lists as compatible runtime (3.10 - 3.14; make
    installs a missing minor), hash-based and never checked against the source."""
    minors = [runtime[len("python"):] for runtime in layer_info.RUNTIMES]
    assert "3.14" in minors
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


@pytest.mark.parametrize("flavor", ["full", "hook"])
def test_no_build_path_leaks_into_the_zip(layer, hook_layer, flavor):
    """No file in the zip mentions the folder it was built in nor the clone it was built from."""
    path = (layer if flavor == "full" else hook_layer)[0]
    build_dir = os.path.dirname(os.path.abspath(path)).encode()
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            data = archive.read(name)
            assert build_dir not in data and REPO.encode() not in data, name


def test_every_record_line_names_a_file_in_the_zip(layer):
    """Each *.dist-info/RECORD lists only files the zip holds: the lines of pruned files (jmespath's
    bin/jp.py, whose shebang named the clone's interpreter) are gone, so RECORD names no build path."""
    with zipfile.ZipFile(layer[0]) as archive:
        inside = set(archive.namelist())
        records = [name for name in inside if name.endswith(".dist-info/RECORD")]
        assert any("jmespath" in name for name in records)
        for record in records:
            for line in archive.read(record).decode().splitlines():
                listed = os.path.normpath(os.path.join("python", line.split(",")[0])).replace(os.sep, "/")
                assert listed in inside, (record, line)


def test_every_record_hash_and_size_is_the_shipped_files(layer):
    """Each RECORD line with a hash gives the sha256 and size of the zip's own bytes for that file,
    the files the declared patches changed included (their lines were rewritten at build time)."""
    checked = 0
    with zipfile.ZipFile(layer[0]) as archive:
        inside = set(archive.namelist())
        for record in sorted(name for name in inside if name.endswith(".dist-info/RECORD")):
            for row in csv.reader(io.StringIO(archive.read(record).decode())):
                listed = os.path.normpath(os.path.join("python", row[0])).replace(os.sep, "/")
                if not row[1] or listed not in inside:
                    continue  # RECORD itself; a trimmed build's removed models (not this zip)
                data = archive.read(listed)
                assert row[1:] == [patches.record_hash(data), str(len(data))], (record, row)
                checked += 1
    assert checked > 2000


def test_full_layer_ships_the_declared_patches(layer):
    """`make layer` lists every patch of layer/patches/ as applied, and each patched file in the zip
    is exactly the pinned wheel's file (this test venv installs the same pins) with the patches that
    name it applied in order, then the change notice (the zip's sources are upstream's plus the
    patches, nothing else: the RECORD test above pins the rest of the bytes against the wheels' own
    RECORD lines).  Patches may change the same lines one after another: each applies to the file
    as the previous ones left it, as the build applies them."""
    declared = patches.load()
    assert len(declared) >= 4
    assert layer[1]["patches"] == ", ".join("%s/%s" % (p["distribution"], p["name"]) for p in declared)
    by_file = {}
    for patch in declared:
        for relative, hunks in patches.file_diffs(patch["text"]):
            by_file.setdefault(relative, []).append((patch, hunks))
    with zipfile.ZipFile(layer[0]) as archive:
        for relative, applied in sorted(by_file.items()):
            package = importlib.util.find_spec(relative.split("/")[0]).submodule_search_locations[0]
            with open(os.path.join(os.path.dirname(package), relative), encoding="utf-8", newline="") as handle:
                lines = handle.read().splitlines(keepends=True)
            for patch, hunks in applied:
                lines = patches.apply_to_lines(lines, hunks, patch["name"])
            expected = patches.with_change_notice("".join(lines), [patch for patch, _ in applied])
            assert archive.read("python/" + relative).decode() == expected, relative


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
    """The zip stays within build_layer.SIZE_BUDGET's full-flavor budget (35 MB zipped, 60 MB
    unzipped: a year of botocore's growth and more, docs/build.md 'Size budget'); both printed, and a
    zip over it fails with the message that says what to do."""
    path = layer[0]
    with zipfile.ZipFile(path) as archive:
        unzipped = sum(info.file_size for info in archive.infolist())
    zipped = os.path.getsize(path)
    max_zipped, max_unzipped = build_layer.SIZE_BUDGET["full"]
    with capsys.disabled():
        print("\nlayer size: %.1f MB zipped (budget %.0f), %.1f MB unzipped (budget %.0f)"
              % (zipped / 1e6, max_zipped / 1e6, unzipped / 1e6, max_unzipped / 1e6))
    message = build_layer.over_budget("full", zipped, unzipped)
    assert message is None, message
    over = build_layer.over_budget("full", max_zipped + 1, unzipped)
    assert "over its size budget" in over and "What to do" in over and "SIZE_BUDGET" in over



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
    """Trimming drops most of the size (the code and its bytecode for five CPython minors stay: with
    3.14 added the trimmed zip is 8.1 MB of 24.0 MB)."""
    assert os.path.getsize(trimmed[0]) < os.path.getsize(layer[0]) * 0.4


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


# --- the hook-only flavor (make layer FLAVOR=hook) ---------------------------------------------------
# What the hook flavor may hold at python/'s top: the hook's entries (tools/packaging/build_layer.HOOK_ENTRIES),
# its dist-info and the top-level modules' bytecode; nothing of the SDK stack it patches.
SDK_TOPS = ("boto3", "botocore", "urllib3", "s3transfer", "jmespath", "dateutil", "python_dateutil", "six")
# The hook flavor's size budget and its reasons: build_layer.SIZE_BUDGET.


def test_hook_flavor_holds_the_hook_its_dist_info_and_bytecode_and_no_sdk(hook_layer, tmp_path):
    """build/layer-hook.zip: the hook's files byte for byte, its dist-info with the OTel entry point,
    unchecked-hash .pyc per CPython here for every .py, and nothing of boto3/botocore/urllib3 & co."""
    path, fields = hook_layer
    assert os.path.basename(path) == "layer-hook.zip" and fields["flavor"].startswith("hook only")
    all_names = set(names(path))
    modules = {entry[:-3] for entry in build_layer.HOOK_ENTRIES if entry.endswith(".py")}
    for name in all_names - {"python/"}:
        top = name.split("/")[1]
        if top == "__pycache__":
            assert name == "python/__pycache__/" or name.split("/")[2].split(".")[0] in modules, name
        else:
            assert top in build_layer.HOOK_ENTRIES or top.startswith("aws_python_keepalive-"), name
        assert top.split("-")[0].split(".")[0] not in SDK_TOPS, name
    with zipfile.ZipFile(path) as archive:
        for relative in HOOK_FILES:
            with open(os.path.join(REPO, "layer", relative), "rb") as handle:
                assert archive.read("python/" + relative) == handle.read(), relative
        assert "python/sitecustomize.py" not in archive.namelist()
        sources = [name for name in all_names if name.endswith(".py")]
        for source in sources:
            folder, filename = source.rsplit("/", 1)
            for minor in interpreters():
                cached = "%s/__pycache__/%s.cpython-%s.pyc" % (folder, filename[:-3], minor.replace(".", ""))
                assert int.from_bytes(archive.read(cached)[4:8], "little") == 0b01, cached
    opt = extract(path, str(tmp_path / "opt"))
    (distribution,) = [d for d in importlib.metadata.distributions(path=[os.path.join(opt, "python")])]
    assert distribution.metadata["Name"] == "aws-python-keepalive"
    (entry_point,) = distribution.entry_points.select(group="opentelemetry_pre_instrument")
    assert entry_point.value == "aws_keepalive:opentelemetry_pre_instrument"


def test_hook_flavor_is_reproducible(hook_layer, release):
    """A second hook build (the release's: other folder, umask, hash seed) gives the same sha256."""
    assert hook_layer[1]["sha256"] == sha256(hook_layer[0]) == sha256(released(release, "hook"))


def test_hook_flavor_size(hook_layer, capsys):
    """The hook flavor stays within build_layer.SIZE_BUDGET (3 MB zipped, 12 MB unzipped; printed)."""
    path = hook_layer[0]
    with zipfile.ZipFile(path) as archive:
        unzipped = sum(info.file_size for info in archive.infolist())
    with capsys.disabled():
        print("\nhook layer size: %d bytes zipped, %d unzipped" % (os.path.getsize(path), unzipped))
    message = build_layer.over_budget("hook", os.path.getsize(path), unzipped)
    assert message is None, message


def test_hook_flavor_refuses_services(tmp_path):
    """SERVICES trims an SDK the hook flavor does not have: the build says so instead of ignoring it."""
    with pytest.raises(AssertionError, match="the hook flavor has no SDK"):
        make_layer(str(tmp_path / "b"), services="dynamodb", flavor="hook")


RUNTIME_PROBE = r'''
import socket
import boto3, botocore
from keepalive_probe import list_tables_server


def handler(event, context):
    with list_tables_server() as port:
        client = boto3.client("dynamodb", endpoint_url="http://127.0.0.1:%d" % port, region_name="us-east-1")
        client.list_tables()
        pools = client._endpoint.http_session._manager.pools
        (sock,) = [conn.sock for key in pools.keys() for conn in list(pools[key].pool.queue)
                   if conn is not None and conn.sock is not None]
        return {"botocore": botocore.__file__, "version": botocore.__version__,
                "options": [sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)]
                           + [sock.getsockopt(socket.IPPROTO_TCP, o)
                              for o in (socket.TCP_KEEPIDLE, socket.TCP_KEEPINTVL, socket.TCP_KEEPCNT)]}
'''


@pytest.mark.parametrize("minor", PYTHON_MINORS)
def test_hook_flavor_patches_the_runtime_kind_botocore(hook_layer, tmp_path, minor):
    """The hook zip as /opt under the stand-in runtime (its own site-packages holding the runtime-kind
    boto3, RUNTIME_BOTO3): the runtime's botocore is the one used and patched (the debug line names
    it, no shadowing warning), its client created from the prepared data of its release, its
    pooled socket has the layer's 60/10/3; switch off: stock."""
    if minor not in interpreters():
        pytest.skip("CPython %s not on this machine" % minor)
    python = str(runtime_prefix.ensure(minor))
    site_packages = str(runtime_prefix.site_packages(runtime_prefix.ensure(minor).parents[1], minor))
    opt = extract(hook_layer[0], str(tmp_path / "opt"))
    task = tmp_path / "task"
    task.mkdir()
    (task / "probe_runtime.py").write_text(RUNTIME_PROBE)
    shutil.copy(os.path.join(REPO, "tests", "hook", "task", "keepalive_probe.py"), str(task))
    results = {}
    for switch in ("1", ""):
        completed = subprocess.run(
            [python, STANDIN, "--opt", opt, "--task", str(task), "--handler", "probe_runtime.handler"],
            capture_output=True, text=True,
            env=env(AWS_PYTHON_KEEPALIVE=switch, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
        assert completed.returncode == 0, completed.stderr
        results[switch] = (json.loads(completed.stdout.splitlines()[-1]), completed.stderr)
    (on, on_stderr), (off, off_stderr) = results["1"], results[""]
    assert on["botocore"].startswith(site_packages) and on["version"] == runtime_prefix.runtime_botocore(minor)
    assert on["options"] == [1, 60, 10, 3], on
    assert "patched botocore %s at %s" % (on["version"], os.path.join(site_packages, "botocore")) in on_stderr
    assert "shadows" not in on_stderr
    # Its client was created from the hook zip's prepared data for the runtime's release.
    assert "prepared data: %s is botocore %s's as built" % (
        os.path.join(site_packages, "botocore", "data"), on["version"]) in on_stderr
    assert off["options"][0] == 0 and "aws-keepalive" not in off_stderr


KNOWN_BUNDLE_PROBE = r'''
import os

from keepalive_probe import record_ca_loads

loaded = record_ca_loads()
import boto3, botocore
from botocore.config import Config
from botocore.httpsession import get_cert_path


def handler(event, context):
    client = boto3.client("dynamodb", endpoint_url=os.environ["URL"], region_name="us-east-1",
                          config=Config(retries={"max_attempts": 1}))
    try:
        client.list_tables()
        outcome = "accepted"
    except botocore.exceptions.SSLError as error:
        outcome = "refused" if "CERTIFICATE_VERIFY_FAILED" in str(error) else repr(error)
    return {"outcome": outcome, "loaded": loaded, "bundle": get_cert_path(True), "version": botocore.__version__}
'''


@pytest.mark.parametrize("flavor", ["full", "hook"])
def test_default_bundle_served_from_its_hashed_directory(layer, hook_layer, tmp_path, flavor):
    """Each flavor ships a hashed directory for the default CA bundle of the SDK it runs with (the
    full layer's own botocore; the hook flavor on the runtime-kind botocore), holding every
    certificate of it: with verify on and no bundle named, a new connection loads that directory,
    never the file, and a server whose CA is not in the bundle is still refused; with
    AWS_PYTHON_KEEPALIVE_TRUST_ONCE=0 the file is loaded, as stock."""
    import ssl

    import trustme

    from tools.packaging import ca_dir

    sys.path.insert(0, os.path.join(REPO, "tests", "hook"))
    from ddb_server import DynamoDBShapedServer

    opt = extract((layer if flavor == "full" else hook_layer)[0], str(tmp_path / "opt"))
    minor = "3.12"
    python = str(runtime_prefix.ensure(minor)) if flavor == "hook" else sys.executable
    task = tmp_path / "task"
    task.mkdir()
    (task / "probe_bundle.py").write_text(KNOWN_BUNDLE_PROBE)
    shutil.copy(os.path.join(REPO, "tests", "hook", "task", "keepalive_probe.py"), str(task))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    trustme.CA().issue_cert("localhost").configure_cert(context)
    results = {}
    with DynamoDBShapedServer(tls_context=context) as server:
        for trust_once in ("1", "0"):
            completed = subprocess.run(
                [python, STANDIN, "--opt", opt, "--task", str(task), "--handler", "probe_bundle.handler"],
                capture_output=True, text=True,
                env=env(AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_TRUST_ONCE=trust_once, URL=server.url))
            assert completed.returncode == 0, completed.stderr
            results[trust_once] = json.loads(completed.stdout.splitlines()[-1])
    on, off = results["1"], results["0"]
    with open(on["bundle"], "rb") as handle:
        directory = os.path.join(opt, "python", "aws_keepalive", "ca", ca_dir.bundle_digest(handle.read()))
    assert os.path.isdir(directory), (on["version"], on["bundle"])
    assert ca_dir.unreachable(on["bundle"], directory) == []
    assert on["outcome"] == off["outcome"] == "refused", results
    assert on["loaded"] and on["loaded"] == [[None, directory]] * len(on["loaded"]), on
    assert off["loaded"] and off["loaded"] == [[off["bundle"], None]] * len(off["loaded"]), off
