"""`make release` (tools/release/release.py, tools/release/sbom.py): the release files, reproducible, with SBOMs that
say what is inside each zip and which pinned CPython builds compiled its bytecode."""

import json
import os
import re
import subprocess
import zipfile

from tools.build import build_wheel
from tools.interpreters import install_python
import pytest
from tools.release import sbom
from conftest import REPO, env, make_release, tool

from tools.build import layer_info

VERSION = build_wheel.source_version(os.path.join(REPO, "layer"))
FULL = "aws-python-keepalive-%s.zip" % VERSION
HOOK = "aws-python-keepalive-hook-%s.zip" % VERSION
WHEEL = "aws_python_keepalive-%s-py3-none-any.whl" % VERSION
FILES = sorted([FULL, FULL + ".cdx.json", HOOK, HOOK + ".cdx.json", WHEEL, "SHA256SUMS"])


def read_json(path):
    with open(path) as handle:
        return json.load(handle)


def lock():
    with open(os.path.join(REPO, "layer", "requirements.txt")) as handle:
        return sbom.locked_packages(handle.read())


def test_release_holds_both_zips_the_wheel_sboms_and_sums(release):
    """build/release/ holds exactly the two versioned zips, their SBOMs, the wheel and SHA256SUMS, and
    `sha256sum -c SHA256SUMS` passes for every file."""
    assert sorted(os.listdir(release)) == FILES
    with open(os.path.join(release, "SHA256SUMS")) as sums:
        listed = [line.split("  ")[1].strip() for line in sums]
    assert listed == sorted(set(FILES) - {"SHA256SUMS"})
    checked = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=release, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert layer_info.zip_info(os.path.join(release, FULL))["flavor"] == "full"
    assert layer_info.zip_info(os.path.join(release, HOOK))["flavor"] == "hook"


def test_release_is_byte_for_byte_reproducible_and_keeps_the_recorded_arns(release, tmp_path):
    """A second `make release`, into a folder holding an older release, publish's layers.json and a
    stale file, writes the same bytes for every file as the first, keeps layers.json (publish's
    record of the ARNs) and removes the rest."""
    folder = str(tmp_path / "release")
    os.makedirs(folder)
    with open(os.path.join(folder, "layers.json"), "w") as out:
        out.write('{"aws-python-keepalive": {}}\n')
    with open(os.path.join(folder, "stale.zip"), "w") as out:
        out.write("old")
    again = make_release(str(tmp_path))
    assert again == folder
    assert sorted(os.listdir(folder)) == sorted(FILES + ["layers.json"])
    assert read_json(os.path.join(folder, "layers.json")) == {"aws-python-keepalive": {}}
    for name in FILES:
        with open(os.path.join(release, name), "rb") as first, open(os.path.join(again, name), "rb") as second:
            assert first.read() == second.read(), name


@pytest.mark.parametrize("flavor", ["full", "hook"])
def test_sbom_lists_every_package_with_its_locked_hashes(release, flavor):
    """Each SBOM's components are exactly the distributions inside its zip: the hook (hashed by the
    wheel) and, for the full flavor, every locked package with the lock's version and sha256 hashes;
    the zip itself is the metadata component, with its sha256."""
    name = FULL if flavor == "full" else HOOK
    document = read_json(os.path.join(release, name + ".cdx.json"))
    assert document["bomFormat"] == "CycloneDX" and document["specVersion"] == "1.5"
    sums = dict(reversed(line.split()) for line in open(os.path.join(release, "SHA256SUMS")))
    assert document["metadata"]["component"]["hashes"] == [{"alg": "SHA-256", "content": sums[name]}]
    components = {component["name"]: component for component in document["components"]}
    inside = sbom.distributions_in_zip(os.path.join(release, name))
    assert {sbom.normalize(n): c["version"] for n, c in components.items()} == inside
    assert components["aws-python-keepalive"]["hashes"] == [{"alg": "SHA-256", "content": sums[WHEEL]}]
    locked = lock() if flavor == "full" else []
    assert len(components) == 1 + len(locked)
    for package, version, digests in locked:
        assert components[package]["version"] == version
        assert components[package]["purl"] == "pkg:pypi/%s@%s" % (sbom.normalize(package), version)
        assert sorted(h["content"] for h in components[package]["hashes"]) == digests


@pytest.mark.parametrize("name", [FULL, HOOK])
def test_sbom_names_the_pinned_interpreters_that_compiled_the_bytecode(release, name):
    """The formulation lists one CPython per bytecode tag in the zip, each the pinned Maven Central
    build: its version, its coordinates as a purl, and its jar's sha256 from tools/interpreters/cpython-maven.sha256."""
    document = read_json(os.path.join(release, name + ".cdx.json"))
    (formula,) = document["formulation"]
    interpreters = formula["components"]
    with zipfile.ZipFile(os.path.join(release, name)) as archive:
        tags = sorted({match.group(1) for match in (re.search(r"\.cpython-(\d+)\.pyc$", n) for n in archive.namelist())
                       if match})
    assert sorted(i["version"].split(".")[0] + i["version"].split(".")[1] for i in interpreters) == tags
    pins = install_python.maven_pins()
    for interpreter in interpreters:
        minor = ".".join(interpreter["version"].split(".")[:2])
        coordinates = install_python.maven_coordinates(minor)
        assert interpreter["version"] == install_python.MAVEN_BUILDS[minor].split("-")[0]
        assert interpreter["hashes"] == [{"alg": "SHA-256", "content": pins[coordinates]}]
        assert interpreter["purl"] == "pkg:maven/org.bytedeco/cpython@%s?classifier=linux-x86_64&type=jar" % (
            install_python.MAVEN_BUILDS[minor])


def test_release_bytecode_is_what_the_pinned_build_compiles(release, tmp_path):
    """A .pyc in the release zip is byte for byte what the pinned CPython 3.13 build makes of its source
    (compiled as the release does): the bytecode comes from the interpreter the SBOM names."""
    python, origin = install_python.ensure_pinned("3.13", os.path.join(REPO, ".venv", "python-pinned"))
    assert origin == "Maven Central " + install_python.maven_coordinates("3.13")
    source = "python/botocore/endpoint.py"
    compiled = "python/botocore/__pycache__/endpoint.cpython-313.pyc"
    with zipfile.ZipFile(os.path.join(release, FULL)) as archive:
        archive.extract(source, tmp_path)
        shipped = archive.read(compiled)
    subprocess.run([python, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", "-d", "/opt/python",
                    str(tmp_path / "python")], check=True, env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
    assert (tmp_path / compiled).read_bytes() == shipped


def validate(paths):
    return subprocess.run([tool("AWS_KEEPALIVE_SBOM_PYTHON"), "-c", VALIDATE] + paths, capture_output=True,
                          text=True, env=env())


VALIDATE = """
import sys
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
errors = [(path, JsonStrictValidator(SchemaVersion.V1_5).validate_str(open(path).read())) for path in sys.argv[1:]]
bad = [(path, error) for path, error in errors if error is not None]
print(bad)
sys.exit(1 if bad else 0)
"""


def test_sboms_validate_against_the_cyclonedx_schema(release, tmp_path):
    """Both SBOMs pass cyclonedx-python-lib's strict CycloneDX 1.5 JSON schema check (and the check
    does reject a document with an unknown hash algorithm)."""
    paths = [os.path.join(release, name + ".cdx.json") for name in (FULL, HOOK)]
    checked = validate(paths)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = read_json(paths[1])
    broken["components"][0]["hashes"][0]["alg"] = "SHA256"
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    assert validate([str(tmp_path / "broken.json")]).returncode == 1


def test_sbom_refuses_a_zip_that_disagrees_with_the_lock(release):
    """An SBOM is never written for a zip whose packages are not the lock's (a version differs)."""
    locked = [(name, "0.0.0" if name == "urllib3" else version, digests) for name, version, digests in lock()]
    with pytest.raises(ValueError, match="urllib3"):
        sbom.document(os.path.join(release, FULL), "0" * 64, "full", VERSION, "0" * 64, locked, [], "")
