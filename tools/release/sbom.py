"""A CycloneDX 1.5 SBOM (JSON) for one release zip: what is inside it, and what made its bytecode.

One document per zip (``tools/release/release.py`` writes ``<zip>.cdx.json`` beside it):

- ``metadata.component``: the zip itself (the layer, its version, its sha256, its license);
- ``components``: every distribution inside, each checked against the zip's own ``*.dist-info``:
  the hook (``aws-python-keepalive``, hashed by the wheel built from the same sources) and, in the
  full flavor, every package of ``layer/requirements.txt`` with its version and the sha256 hashes
  the lock pins (the lock lists every file uv may pick for a version: all are given);
- ``formulation``: the CPython builds that compiled the ``.pyc`` inside (version, Maven Central
  coordinates as a purl, and the sha256 of the build's jar from tools/interpreters/cpython-maven.sha256).  They
  are not in the zip, so they are not components of it; CycloneDX's formulation is where the
  ingredients of a build go.

Byte-for-byte reproducible, like the zip: no timestamp (CycloneDX makes it optional) unless
SOURCE_DATE_EPOCH is set, a serial number derived from the zip's sha256 (uuid5), keys sorted.
"""

import json
import os
import re
import time
import uuid
import zipfile

from tools.build import layer_info

SPEC_VERSION = "1.5"
# The namespace of the uuid5 serial numbers (any fixed uuid: the serial is uuid5(namespace, sha256)).
SERIAL_NAMESPACE = uuid.UUID("6f2b3c86-0f51-4e0c-9a55-1d6f2b7c3e10")
WHEEL_DISTRIBUTION = "aws-python-keepalive"


def normalize(name):
    """PEP 503 name normalization (purls and dist-info folders disagree on case and separators)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_packages(requirements_text):
    """[(name, version, [sha256, ...])] of a hash-pinned requirements file, in file order."""
    packages = []
    for block in re.split(r"\n(?=\S)", requirements_text):
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", block)
        if match:
            hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", block)
            if not hashes:
                raise ValueError("%s==%s has no --hash in the lock" % match.groups())
            packages.append((match.group(1), match.group(2), sorted(hashes)))
    return packages


def distributions_in_zip(path):
    """{normalized name: version} of every ``python/<name>-<version>.dist-info`` in a layer zip."""
    found = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            match = re.fullmatch(r"python/([^/]+)-([^/-]+)\.dist-info/METADATA", name)
            if match:
                found[normalize(match.group(1))] = match.group(2)
    return found


def _hashes(digests):
    return [{"alg": "SHA-256", "content": digest} for digest in digests]


def pypi_component(name, version, digests):
    purl = "pkg:pypi/%s@%s" % (normalize(name), version)
    return {"type": "library", "bom-ref": purl, "name": name, "version": version, "purl": purl,
            "hashes": _hashes(digests)}


def interpreter_component(interpreter):
    """A formulation component for one CPython build: {'minor', 'version', 'coordinates', 'sha256'}."""
    group_artifact, version, packaging, classifier = interpreter["coordinates"].rsplit(":", 3)
    group, artifact = group_artifact.split(":")
    purl = "pkg:maven/%s/%s@%s?classifier=%s&type=%s" % (group, artifact, version, classifier, packaging)
    return {
        "type": "application",
        "bom-ref": purl,
        "name": "cpython",
        "version": interpreter["version"],
        "purl": purl,
        "hashes": _hashes([interpreter["sha256"]]),
        "description": "compiled the zip's CPython %s bytecode (python/**/__pycache__/*.cpython-%s.pyc)"
                       % (interpreter["minor"], interpreter["minor"].replace(".", "")),
    }


def document(zip_path, zip_sha256, flavor, hook_version, wheel_sha256, locked, interpreters, description):
    """The SBOM of one zip as a dict.

    ``locked``: locked_packages() of the layer's lock (ignored for the hook flavor, which has none of
    them); every one must be inside the zip at its locked version, and nothing else may be: a
    mismatch raises ValueError (an SBOM that disagrees with its zip is worse than none)."""
    inside = distributions_in_zip(zip_path)
    expected = {normalize(WHEEL_DISTRIBUTION): hook_version}
    if flavor == "full":
        expected.update((normalize(name), version) for name, version, _ in locked)
    if inside != expected:
        raise ValueError("sbom: %s holds %s, the sources say %s" % (zip_path, sorted(inside.items()),
                                                                   sorted(expected.items())))
    layer_name = layer_info.NAME if flavor == "full" else layer_info.HOOK_NAME
    components = [pypi_component(WHEEL_DISTRIBUTION, hook_version, [wheel_sha256])]
    if flavor == "full":
        components += [pypi_component(name, version, digests) for name, version, digests in locked]
    layer_ref = "layer:%s@%s" % (layer_name, hook_version)
    metadata = {
        "component": {
            "type": "library",
            "bom-ref": layer_ref,
            "name": layer_name,
            "version": hook_version,
            "description": description,
            "hashes": _hashes([zip_sha256]),
            "licenses": [{"license": {"id": layer_info.LICENSE}}],
            "properties": [
                {"name": "aws-python-keepalive:flavor", "value": flavor},
                {"name": "aws-python-keepalive:compatible-runtimes", "value": ",".join(layer_info.RUNTIMES)},
                {"name": "aws-python-keepalive:compatible-architectures",
                 "value": ",".join(layer_info.ARCHITECTURES)},
            ],
        },
        "tools": {"components": [{"type": "application", "name": "tools/release/release.py"}]},
    }
    epoch = _source_date_epoch()
    if epoch is not None:
        metadata["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": "urn:uuid:%s" % uuid.uuid5(SERIAL_NAMESPACE, zip_sha256),
        "version": 1,
        "metadata": metadata,
        "components": components,
        "dependencies": [{"ref": layer_ref, "dependsOn": [component["bom-ref"] for component in components]}],
        "formulation": [{
            "bom-ref": "formulation:bytecode",
            "components": [interpreter_component(interpreter) for interpreter in interpreters],
        }],
    }


def _source_date_epoch():
    value = os.environ.get("SOURCE_DATE_EPOCH")
    return int(value) if value else None


def write(sbom, path):
    """Write ``sbom`` as stable JSON (sorted keys, two-space indent, final newline)."""
    with open(path, "w", encoding="utf-8") as out:
        json.dump(sbom, out, indent=2, sort_keys=True)
        out.write("\n")
