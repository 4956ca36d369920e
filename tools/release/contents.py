"""Nothing in a layer zip that its RECORDs and its SBOM do not account for.

A file is accounted for when

- a ``*.dist-info/RECORD`` in the zip lists it with its sha256 (checked), and the SBOM lists that
  distribution at that version (``components``: the hook, and in the full flavor every locked
  package); the hook's RECORD also lists what the build generated inside the package (CA
  directories, prepared data: tools/packaging/build_layer.py), whose provenance the SBOM's ``data``
  components give: each of those must have exactly one, and each such component must name a path
  the zip has;
- or it is bytecode (``<folder>/__pycache__/<module>.cpython-3NN.pyc``) of an accounted
  ``<folder>/<module>.py``, for a CPython minor the SBOM's formulation names as its compiler.

Anything else -- an installer's lock file (``python/.lock``, issue 35), a stray cache, a file a
build step forgot to record -- is reported, and tools/release/release.py refuses to write a release
with one.  RECORD lines of files the zip lacks are allowed only for botocore's service models (a
trimmed build keeps them on purpose; layer_info reads them).  Standard library only.
"""

import base64
import csv
import hashlib
import io
import posixpath
import re
import zipfile

PYC = re.compile(r"(.*/)__pycache__/([^/]+)\.cpython-(\d)(\d+)\.pyc")
DIST_INFO = re.compile(r"python/([^/]+)-([^/-]+)\.dist-info/RECORD")
# What the build generates inside the hook package, each with its SBOM data component: a CA
# directory (its folder) and a botocore release's prepared index.
GENERATED = re.compile(r"python/aws_keepalive/ca/[0-9a-f]{64}/"
                       r"|python/aws_keepalive/prepared-data/botocore-[^/]+\.pickle$")
PATH_PROPERTY = "aws-python-keepalive:path"


def _normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _record_digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def unaccounted(zip_path, bom):
    """[problem] for the zip at ``zip_path`` and its SBOM ``bom`` (a dict); empty when every file is
    accounted for."""
    problems = []
    with zipfile.ZipFile(zip_path) as archive:
        files = {info.filename: info for info in archive.infolist() if not info.is_dir()}
        listed = {(_normalize(c["name"]), c.get("version")) for c in bom.get("components", [])
                  if c.get("type") == "library"}
        accounted = set()
        for record in sorted(name for name in files if DIST_INFO.fullmatch(name)):
            name, version = DIST_INFO.fullmatch(record).groups()
            if (_normalize(name), version) not in listed:
                problems.append("%s: the SBOM lists no %s %s" % (record, name, version))
                continue
            accounted.add(record)
            for row in csv.reader(io.StringIO(archive.read(record).decode("utf-8"))):
                if not row or not row[0]:
                    continue
                path = posixpath.normpath(posixpath.join("python", row[0]))
                if path not in files:
                    if not path.startswith("python/botocore/data/"):
                        problems.append("%s lists %s, which the zip lacks" % (record, path))
                    continue
                if path != record and (len(row) < 2 or row[1] != _record_digest(archive.read(path))):
                    problems.append("%s: %s does not have the sha256 %s lists" % (record, path, record))
                    continue
                accounted.add(path)
    minors = set()
    for formula in bom.get("formulation", []):
        for component in formula.get("components", []):
            minors.add("".join(component["version"].split(".")[:2]))
    for path in sorted(files):
        if path in accounted:
            continue
        match = PYC.fullmatch(path)
        if match and match.group(1) + match.group(2) + ".py" in accounted and match.group(3) + match.group(4) in minors:
            continue
        problems.append("%s: in no RECORD of a distribution the SBOM lists, nor bytecode of one's file" % path)
    data_paths = []
    for component in bom.get("components", []):
        if component.get("type") != "data":
            continue
        paths = [p["value"] for p in component.get("properties", []) if p["name"] == PATH_PROPERTY]
        if len(paths) != 1 or not any(name == paths[0] or name.startswith(paths[0]) for name in files):
            problems.append("SBOM component %s names no path of the zip (%s)" % (component["bom-ref"], paths))
        data_paths += paths
    generated = {match.group(0) for match in (GENERATED.match(name) for name in files) if match}
    for path in sorted(generated):
        if data_paths.count(path) != 1:
            problems.append("%s: %d SBOM data components name it (one must: its source and license)"
                            % (path, data_paths.count(path)))
    return problems
