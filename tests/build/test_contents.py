"""tools/release/contents.py and what it guards: every file of each release zip accounted for by its
RECORDs and its SBOM (no uv ``python/.lock``), the license texts each zip carries, and the hook SBOM's
data components (the botocore releases its prepared data and CA certificates came from)."""

import glob
import json
import os
import re
import subprocess
import zipfile

import pytest
from conftest import REPO, env, tool

from tools.packaging import build_layer, build_wheel
from tools.release import contents, sbom

VERSION = build_wheel.source_version(os.path.join(REPO, "layer"))
ZIPS = {"full": "aws-python-keepalive-%s.zip" % VERSION, "hook": "aws-python-keepalive-hook-%s.zip" % VERSION}
DIST_INFO = "python/%s/" % build_wheel.dist_info_dir(VERSION)


def read_sbom(release, flavor):
    with open(os.path.join(release, ZIPS[flavor] + ".cdx.json")) as handle:
        return json.load(handle)


@pytest.mark.parametrize("flavor", ["full", "hook"])
def test_every_file_of_each_release_zip_is_accounted_for(release, flavor):
    """Each release zip's files are all in a RECORD of a distribution its SBOM lists (hashes checked),
    or bytecode of such a file for a CPython the SBOM names; no uv lock file (python/.lock) anywhere."""
    path = os.path.join(release, ZIPS[flavor])
    assert contents.unaccounted(path, read_sbom(release, flavor)) == []
    with zipfile.ZipFile(path) as archive:
        assert not [name for name in archive.namelist() if os.path.basename(name.rstrip("/")) == ".lock"]


def test_an_unaccounted_file_is_reported(release, tmp_path):
    """A file no RECORD lists (uv's python/.lock), a file whose bytes differ from its RECORD line, a
    .pyc of a CPython the SBOM does not name, and a distribution the SBOM does not list are each
    reported; contents.unaccounted of the unchanged zip reports nothing (the test above)."""
    source = os.path.join(release, ZIPS["hook"])
    changed = str(tmp_path / ZIPS["hook"])
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(changed, "w") as out:
        for info in archive.infolist():
            data = archive.read(info)
            if info.filename == "python/aws_keepalive/patch.py":
                data += b"# edited\n"
            out.writestr(info, data)
        out.writestr("python/.lock", b"")
        out.writestr("python/aws_keepalive/__pycache__/patch.cpython-39.pyc", b"")
    problems = contents.unaccounted(changed, read_sbom(release, "hook"))
    assert [problem.split(":")[0] for problem in problems] == [DIST_INFO + "RECORD", "python/.lock"] + [
        "python/aws_keepalive/__pycache__/patch.cpython-3%d.pyc" % minor for minor in (10, 11, 12, 13, 14, 9)] + [
        "python/aws_keepalive/patch.py"]
    bom = read_sbom(release, "hook")
    bom["components"] = [c for c in bom["components"] if c["name"] != sbom.WHEEL_DISTRIBUTION]
    assert "%sRECORD: the SBOM lists no" % DIST_INFO in contents.unaccounted(source, bom)[0]


def zip_texts(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}


def repo_bytes(*parts):
    with open(os.path.join(REPO, *parts), "rb") as handle:
        return handle.read()


@pytest.mark.parametrize("flavor", ["full", "hook"])
def test_each_zip_carries_its_license_texts(release, flavor):
    """Both zips: the repository's LICENSE and NOTICE and the MPL-2.0 text (the Mozilla CA
    certificates) in the hook's dist-info, named by its METADATA; the full zip: every distribution's
    License-File texts in its own dist-info; the hook zip: botocore's LICENSE.txt and NOTICE (its
    prepared data), the same bytes as the pinned botocore wheel's."""
    files = zip_texts(os.path.join(release, ZIPS[flavor]))
    expected = {"LICENSE": repo_bytes("LICENSE"), "NOTICE": repo_bytes("NOTICE"),
                build_layer.MOZILLA_CA_LICENSE: repo_bytes("licenses", "MPL-2.0.txt")}
    full = zip_texts(os.path.join(release, ZIPS["full"]))
    (botocore_info,) = {name.split("/")[1] for name in full if re.match(r"python/botocore-[^/]+\.dist-info/", name)}
    if flavor == "hook":
        for name in ("LICENSE.txt", "NOTICE"):
            expected["%s/%s" % (build_layer.BOTOCORE_LICENSES, name)] = full["python/%s/%s" % (botocore_info, name)]
    for name, data in expected.items():
        assert files[DIST_INFO + name] == data, name
    metadata = files[DIST_INFO + "METADATA"].decode().split("\n\n", 1)[0]
    assert sorted(re.findall(r"^License-File: (.+)$", metadata, re.MULTILINE)) == sorted(expected)
    for record in [name for name in files if name.endswith(".dist-info/METADATA")]:
        listed = re.findall(r"^License-File: (.+)$", files[record].decode().split("\n\n", 1)[0], re.MULTILINE)
        folder = record[:-len("METADATA")]
        assert listed, record
        for name in listed:
            assert folder + name in files or folder + "licenses/" + name in files, (record, name)
    if flavor == "full":
        names = {name.split("/")[1].split("-")[0].lower() for name in files if name.endswith(".dist-info/METADATA")}
        assert names == {"aws_python_keepalive", "boto3", "botocore", "s3transfer", "urllib3", "jmespath",
                         "python_dateutil", "six"}


def test_the_mpl_text_is_the_pinned_fqdn_wheels():
    """licenses/MPL-2.0.txt is byte for byte the MPL-2.0 text the hash-pinned fqdn wheel ships
    (tools/release/sbom.txt), not a copy from the internet."""
    probe = ("import importlib.metadata as m; d = m.distribution('fqdn'); "
             "print([str(d.locate_file(f)) for f in d.files if f.name == 'LICENSE'][0])")
    path = subprocess.run([tool("AWS_KEEPALIVE_SBOM_PYTHON"), "-c", probe], capture_output=True, text=True,
                          check=True, env=env()).stdout.strip()
    with open(path, "rb") as handle:
        assert handle.read() == repo_bytes("licenses", "MPL-2.0.txt")
    assert repo_bytes("licenses", "MPL-2.0.txt").startswith(b"Mozilla Public License Version 2.0\n")


def runtime_releases():
    versions = []
    for lock in sorted(glob.glob(os.path.join(REPO, "lab", "runtime-sdk", "*.txt"))):
        with open(lock) as handle:
            versions.append(re.search(r"^botocore==(\S+)", handle.read(), re.MULTILINE).group(1))
    return sorted(versions, key=build_layer.version_key)


def test_hook_sbom_names_the_botocore_releases_its_data_came_from(release):
    """The hook SBOM has a data component per prepared botocore release (each runtime lock's, its
    pedigree that release, Apache-2.0) and per CA directory (MPL-2.0, its pedigree the releases whose
    default bundle it is: together the runtimes' and the layer's pin), each naming its path in the zip."""
    document = read_sbom(release, "hook")
    data = [c for c in document["components"] if c["type"] == "data"]
    prepared = [c for c in data if c["name"] == "botocore-prepared-data"]
    assert [c["version"] for c in prepared] == runtime_releases()
    for component in prepared:
        assert component["licenses"] == [{"license": {"id": "Apache-2.0"}}]
        assert component["pedigree"]["ancestors"] == [{"type": "library", "name": "botocore",
                                                        "version": component["version"],
                                                        "purl": "pkg:pypi/botocore@%s" % component["version"]}]
    cas = [c for c in data if c["name"] == "mozilla-ca-certificates"]
    assert cas and all(c["licenses"] == [{"license": {"id": "MPL-2.0"}}] for c in cas)
    sources = sorted({a["version"] for c in cas for a in c["pedigree"]["ancestors"]}, key=build_layer.version_key)
    with open(os.path.join(REPO, "layer", "requirements.txt")) as handle:
        pinned = re.search(r"^botocore==(\S+)", handle.read(), re.MULTILINE).group(1)
    assert sources == sorted(set(runtime_releases()) | {pinned}, key=build_layer.version_key)
    full = [c for c in read_sbom(release, "full")["components"] if c["type"] == "data"]
    assert sorted(c["name"] for c in full) == ["botocore-prepared-data", "mozilla-ca-certificates"]
    assert {a["version"] for c in full for a in c["pedigree"]["ancestors"]} == {pinned}


def test_repository_license_is_apache_and_the_zips_notice_names_what_they_carry():
    """LICENSE is the Apache License 2.0 text as botocore's wheel ships it; NOTICE names the
    third-party parts, where their texts are, and that the patched SDK files are modified."""
    assert b"Apache License\n                           Version 2.0, January 2004" in repo_bytes("LICENSE")
    notice = repo_bytes("NOTICE").decode()
    for needle in ("Apache License, Version 2.0", "MPL-2.0", "third_party/mozilla-ca/MPL-2.0.txt",
                   "third_party/botocore/", "python-dateutil", "prepared-data", "layer/patches/"):
        assert needle in notice, needle
    # The full zip's boto3, botocore and urllib3 are patched (layer/patches/): not "unmodified".
    assert "unmodified" not in notice
