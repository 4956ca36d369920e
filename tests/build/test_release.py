"""`make release` (tools/release/release.py, tools/release/sbom.py): the release files, reproducible, with SBOMs that
say what is inside each zip and which pinned CPython builds compiled its bytecode."""

import json
import os
import re
import subprocess
import sys
import time
import zipfile

from tools.packaging import build_wheel
from tools.interpreters import install_python
import pytest
from tools.release import sbom
from conftest import REPO, clone, env, make_release, run_make_release, tool
from tools.release import release as release_module

from tools.packaging import layer_info
from tools.packaging import patches

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


def sums_of(folder):
    with open(os.path.join(folder, "SHA256SUMS")) as handle:
        return handle.read()


def test_a_clone_at_another_path_users_settings_gives_the_same_release(release, tmp_path):
    """`make release` in a fresh clone of this working tree (conftest.clone: the commit plus any
    uncommitted change), at a path much longer than this checkout's, with another umask, TZ, locale
    and hash seed, gives the same SHA256SUMS and bytes for every file as this checkout's release
    (the ``release`` fixture: umask 022, UTC, C.UTF-8): nothing in a release depends on where or by
    whom it was built.  The clone's build/release/ already holds an older release, publish's
    layers.json and a stale file: layers.json (publish's record of the ARNs) is kept, the rest
    replaced.  The clone shares this checkout's pinned interpreters (PINNED_ROOT: the same jars,
    checked against the clone's own pins) and bootstraps its own uv."""
    pinned = "PINNED_ROOT=%s" % os.path.join(REPO, ".venv", "python-pinned")
    long = clone(str(tmp_path / ("a-much-longer-folder-name-for-the-clone-" * 3) / "src"))
    assert len(long) != len(REPO)  # paths of other lengths: nothing may depend on where it was built
    folder = os.path.join(long, "build", "release")
    os.makedirs(folder)
    with open(os.path.join(folder, "layers.json"), "w") as out:
        out.write('{"aws-python-keepalive": {}}\n')
    with open(os.path.join(folder, "stale.zip"), "w") as out:
        out.write("old")
    second = make_release(os.path.join(long, "build"), repo=long, umask=0o077, make_vars=[pinned],
                          TZ="Pacific/Kiritimati", LANG="de_DE.UTF-8", LC_ALL="de_DE.UTF-8", PYTHONHASHSEED="4242")
    assert second == folder
    assert sums_of(release) == sums_of(second)
    assert sorted(os.listdir(folder)) == sorted(FILES + ["layers.json"])
    assert read_json(os.path.join(folder, "layers.json")) == {"aws-python-keepalive": {}}
    for name in FILES:
        with open(os.path.join(release, name), "rb") as one, open(os.path.join(second, name), "rb") as other:
            assert one.read() == other.read(), name


@pytest.mark.parametrize("flavor", ["full", "hook"])
def test_release_zip_is_make_layers_zip_with_ca_and_prepared_data(release, layer, hook_layer, flavor):
    """One build: the release's zip of each flavor is byte for byte `make layer [FLAVOR=hook]`'s, and
    holds what docs/build.md and docs/trust.md describe: a hashed CA directory per distinct default
    bundle (full: its own SDK's; hook: also each runtime SDK's) and prepared data per botocore
    release (full: its own; hook: each runtime SDK's)."""
    path, fields = layer if flavor == "full" else hook_layer
    released = os.path.join(release, FULL if flavor == "full" else HOOK)
    with open(released, "rb") as one, open(path, "rb") as other:
        assert one.read() == other.read()
    with zipfile.ZipFile(released) as archive:
        names = archive.namelist()
    ca = {n.split("/")[3] for n in names if n.startswith("python/aws_keepalive/ca/") and n.count("/") >= 4}
    prepared = {n.split("/")[3] for n in names if n.startswith("python/aws_keepalive/prepared-data/botocore-")}
    runtime_sdks = sorted(name[:-len(".txt")] for name in os.listdir(os.path.join(REPO, "lab", "runtime-sdk"))
                          if name.endswith(".txt"))
    botocore = [version for name, version, _ in lock() if name == "botocore"]
    expected = botocore if flavor == "full" else runtime_sdks
    assert prepared == {"botocore-%s.pickle" % version for version in expected}
    assert len(ca) == len(fields["ca_dirs"].split(", ")) >= (1 if flavor == "full" else 2)
    for name in ca:
        assert sum(n.startswith("python/aws_keepalive/ca/%s/" % name) and n.endswith(".0") for n in names) > 100


def test_a_failed_release_leaves_the_previous_one_in_place(tmp_path):
    """`release.py` failing part way (uv cannot install the locked wheels) leaves the folder it was to
    replace as it was, file for file."""
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "SHA256SUMS").write_text("previous\n")
    (folder / "layers.json").write_text("{}\n")
    completed = subprocess.run([sys.executable, "tools/release/release.py", "--uv", "/bin/false", "--out", str(folder)],
                               cwd=REPO, capture_output=True, text=True, env=env())
    assert completed.returncode != 0
    assert sorted(os.listdir(folder)) == ["SHA256SUMS", "layers.json"]
    assert (folder / "SHA256SUMS").read_text() == "previous\n"
    assert sorted(os.listdir(tmp_path)) == ["release"]


def test_a_changed_pin_is_refused_where_the_interpreter_is_installed(tmp_path):
    """On a machine where the pinned interpreters are installed, `make release` with one digest changed in
    tools/interpreters/cpython-maven.sha256 refuses (the installed jar was verified against another
    digest), as a fresh clone would, and names the jar; it does not record the new digest anywhere."""
    repo = clone(str(tmp_path / "clone"))
    root = tmp_path / "pinned"
    root.mkdir()
    for minor in release_module.layer_minors():  # hard links: the clone's run cannot touch the shared files
        subprocess.run(["cp", "-al", os.path.join(REPO, ".venv", "python-pinned", minor), str(root / minor)],
                       check=True)
    pins = os.path.join(repo, "tools", "interpreters", "cpython-maven.sha256")
    coordinates = install_python.maven_coordinates("3.13")
    digest = install_python.maven_pins()[coordinates]
    with open(pins) as handle:
        text = handle.read()
    with open(pins, "w") as handle:
        handle.write(text.replace(digest, "0" * 64))
    completed = run_make_release(str(tmp_path / "build"), repo=repo, make_vars=["PINNED_ROOT=%s" % root])
    assert completed.returncode != 0, completed.stdout
    assert "is not the pinned %s" % ("0" * 64) in completed.stderr, completed.stderr
    assert not os.path.exists(tmp_path / "build" / "release")


@pytest.mark.parametrize("flavor", ["full", "hook"])
def test_sbom_lists_every_package_with_the_hash_of_the_wheel_inside(release, flavor):
    """Each SBOM's components are exactly the distributions inside its zip, each with one hash: the
    hook's is the wheel's; each locked package's is the one of the lock's hashes that the package
    index names as the wheel with the zip's WHEEL tag (not the sdist's, which is not inside), on the
    component or, for a package the layer patched, on its pedigree's ancestor; the zip itself is the
    metadata component, with its sha256."""
    name = FULL if flavor == "full" else HOOK
    document = read_json(os.path.join(release, name + ".cdx.json"))
    assert document["bomFormat"] == "CycloneDX" and document["specVersion"] == "1.5"
    sums = dict(reversed(line.split()) for line in open(os.path.join(release, "SHA256SUMS")))
    assert document["metadata"]["component"]["hashes"] == [{"alg": "SHA-256", "content": sums[name]}]
    components = {component["name"]: component for component in document["components"]
                  if component["type"] == "library"}
    inside = sbom.distributions_in_zip(os.path.join(release, name))
    assert {sbom.normalize(n): c["version"] for n, c in components.items()} == inside
    assert components["aws-python-keepalive"]["hashes"] == [{"alg": "SHA-256", "content": sums[WHEEL]}]
    locked = lock() if flavor == "full" else []
    assert len(components) == 1 + len(locked)
    with zipfile.ZipFile(os.path.join(release, name)) as archive:
        wheel_files = {n: archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/WHEEL")}
    for package, version, digests in locked:
        assert components[package]["version"] == version
        assert components[package]["purl"] == "pkg:pypi/%s@%s" % (sbom.normalize(package), version)
        # A package the layer patched carries the wheel's hash on its ancestor (the wheel as published).
        (wheel_component,) = components[package].get("pedigree", {}).get("ancestors", [components[package]])
        (digest,) = [h["content"] for h in wheel_component["hashes"]]
        assert digest in digests
        (wheel,) = [text for n, text in wheel_files.items() if sbom.normalize(n[len("python/"):].split("-")[0])
                    == sbom.normalize(package)]
        tags = re.findall(r"^Tag: (\S+)$", wheel, re.MULTILINE)
        filename = {d: f for f, d in sbom.index_files(package).items()}[digest]
        assert filename.endswith(".whl") and filename.startswith("%s-%s-" % (package.replace("-", "_"), version))
        pythons, abi, platform = filename[:-len(".whl")].split("-")[-3:]
        assert any("%s-%s-%s" % (python, abi, platform) in tags for python in pythons.split(".")), (filename, tags)


def test_sbom_gives_licenses_suppliers_a_timestamp_and_the_dependency_graph(release):
    """The full zip's SBOM gives every component a license and a supplier (from its METADATA), the
    timestamp of the source's last commit (SOURCE_DATE_EPOCH unset), and the graph: the layer on
    every component, and each package on what it requires (boto3 on botocore, jmespath, s3transfer;
    botocore on jmespath, python-dateutil, urllib3; python-dateutil on six)."""
    document = read_json(os.path.join(release, FULL + ".cdx.json"))
    libraries = [component for component in document["components"] if component["type"] == "library"]
    for component in libraries + [document["metadata"]["component"]]:
        assert component["licenses"] and component["supplier"]["name"], component["name"]
    components = {component["name"]: component for component in libraries}
    assert components["boto3"]["licenses"] == [{"license": {"id": "Apache-2.0"}}]
    assert components["boto3"]["supplier"]["name"] == "Amazon Web Services"
    assert components["urllib3"]["licenses"] == [{"expression": "MIT"}]
    commit_time = subprocess.run(["git", "-C", REPO, "log", "-1", "--format=%ct"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    assert document["metadata"]["timestamp"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(commit_time)))
    refs = {component["bom-ref"]: name for name, component in components.items()}
    graph = {refs.get(entry["ref"], "layer"): sorted(refs[ref] for ref in entry["dependsOn"])
             for entry in document["dependencies"]}
    assert graph["layer"] == sorted(components)
    assert graph["boto3"] == ["botocore", "jmespath", "s3transfer"]
    assert graph["botocore"] == ["jmespath", "python-dateutil", "urllib3"]
    assert graph["python-dateutil"] == ["six"]
    assert graph["s3transfer"] == ["botocore"]
    assert graph["aws-python-keepalive"] == graph["six"] == graph["urllib3"] == graph["jmespath"] == []


def test_sbom_declares_every_patch_of_the_full_layers_sdk(release):
    """The full zip's SBOM gives each package the layer patched (layer/patches/) a pedigree: the
    wheel as its ancestor, each patch as CycloneDX ``unofficial`` with its whole diff and, as the
    enhancement it resolves, its subject and why; the patched component itself has no hash (the
    wheel's would not describe its files), the unpatched libraries and the hook flavor's have no pedigree."""
    declared = patches.load()
    document = read_json(os.path.join(release, FULL + ".cdx.json"))
    components = {component["name"]: component for component in document["components"]}
    by_distribution = {}
    for patch in declared:
        by_distribution.setdefault(patch["distribution"], []).append(patch)
    libraries = {name: c for name, c in components.items() if c["type"] == "library"}
    assert sorted(name for name, c in libraries.items() if "pedigree" in c) == sorted(by_distribution)
    for name, expected in by_distribution.items():
        component = components[name]
        assert "hashes" not in component
        (ancestor,) = component["pedigree"]["ancestors"]
        assert (ancestor["name"], ancestor["version"], ancestor["purl"]) == (name, component["version"],
                                                                              component["purl"])
        assert [(p["type"], p["diff"]["text"]["content"], p["resolves"]) for p in component["pedigree"]["patches"]] == [
            ("unofficial", patch["text"], [{"type": "enhancement", "id": "%s/%s" % (name, patch["name"]),
                                            "name": patch["subject"], "description": patch["why"]}])
            for patch in expected]
    hook = read_json(os.path.join(release, HOOK + ".cdx.json"))
    assert not any("pedigree" in component for component in hook["components"] if component["type"] == "library")


def test_sbom_timestamp_is_source_date_epoch(release, monkeypatch):
    """With SOURCE_DATE_EPOCH set, the SBOM's timestamp is that instant."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    document = sbom.document(os.path.join(release, HOOK), "0" * 64, "hook", VERSION, "0" * 64, [], [], "")
    assert document["metadata"]["timestamp"] == "2023-11-14T22:13:20Z"


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
    python, origin, _ = install_python.ensure_pinned("3.13", os.path.join(REPO, ".venv", "python-pinned"))
    assert origin == "Maven Central " + install_python.maven_coordinates("3.13")
    source = "python/botocore/endpoint.py"
    compiled = "python/botocore/__pycache__/endpoint.cpython-313.pyc"
    with zipfile.ZipFile(os.path.join(release, FULL)) as archive:
        archive.extract(source, tmp_path)
        shipped = archive.read(compiled)
    subprocess.run([python, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", "-d", "/opt/python",
                    str(tmp_path / "python")], check=True,
                   env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
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
    does reject a document with an unknown hash algorithm, and one with an unknown patch type)."""
    paths = [os.path.join(release, name + ".cdx.json") for name in (FULL, HOOK)]
    checked = validate(paths)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = read_json(paths[1])
    broken["components"][0]["hashes"][0]["alg"] = "SHA256"
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    assert validate([str(tmp_path / "broken.json")]).returncode == 1
    # ... and one whose patch pedigree is not CycloneDX's (the full SBOM's patches are checked too).
    full = read_json(paths[0])
    (patched,) = [c for c in full["components"] if c["name"] == "urllib3"]
    patched["pedigree"]["patches"][0]["type"] = "downstream"
    (tmp_path / "broken-patch.json").write_text(json.dumps(full))
    assert validate([str(tmp_path / "broken-patch.json")]).returncode == 1


def test_sbom_refuses_a_zip_that_disagrees_with_the_lock(release):
    """An SBOM is never written for a zip whose packages are not the lock's (a version differs)."""
    locked = [(name, "0.0.0" if name == "urllib3" else version, digests) for name, version, digests in lock()]
    with pytest.raises(ValueError, match="urllib3"):
        sbom.document(os.path.join(release, FULL), "0" * 64, "full", VERSION, "0" * 64, locked, [], "")


@pytest.mark.parametrize("system, machine", [("Darwin", "arm64"), ("Linux", "aarch64"), ("Windows", "AMD64")])
def test_a_build_off_linux_x86_64_refuses_naming_the_route_that_works_there(monkeypatch, tmp_path, system, machine):
    """On macOS, arm64 Linux or Windows (platform as Python reports it there: it cannot run here),
    make layer / make release / make publish refuse before installing anything, and the message names
    what works there instead: make publish ZIP="$HOME/...", with nothing rebuilt (issue 35 item 13)."""
    monkeypatch.setattr(release_module.platform, "system", lambda: system)
    monkeypatch.setattr(release_module.platform, "machine", lambda: machine)
    with pytest.raises(SystemExit) as refused:
        release_module.pinned_interpreters(str(tmp_path / "pinned"))
    assert "%s %s" % (system, machine) in str(refused.value)
    assert 'make publish ZIP="$HOME/Downloads/aws-python-keepalive-<version>.zip"' in str(refused.value)
    assert not (tmp_path / "pinned").exists()
