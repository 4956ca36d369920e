"""A CycloneDX 1.5 SBOM (JSON) for one release zip: what is inside it, and what made its bytecode.

One document per zip (``tools/release/release.py`` writes ``<zip>.cdx.json`` beside it), for a consumer
(a scanner matching components to advisories, a reviewer checking provenance):

- ``metadata.component``: the zip itself (the layer, its version, its sha256, its license, its supplier);
- ``components``: every distribution inside, each checked against the zip's own ``*.dist-info``:
  the hook (``aws-python-keepalive``, hashed by the wheel built from the same sources) and, in the
  full flavor, every package of ``layer/requirements.txt``.  Each has exactly one hash: the sha256
  of the artifact whose files are inside, i.e. the wheel uv installed.  The lock pins every file of a
  version (the wheel and the sdist) and cannot say which is which, so the package index's JSON
  listing (PEP 691, the index uv installs from) names the file of each locked hash, and the wheel
  whose tag is the one in the zip's ``WHEEL`` is taken; exactly one must match.  Licenses and the
  supplier come from each distribution's METADATA in the zip (License-Expression, else License,
  else the license classifiers; Author, else Maintainer);
- ``pedigree`` of a component the layer patched (the full flavor's boto3, botocore, urllib3: the
  declared lazy-import patches of layer/patches/, tools/packaging/patches.py): the unmodified wheel is
  its ancestor (with the wheel's sha256, which no longer describes the files inside, so the patched
  component itself carries none), and each patch is listed as CycloneDX ``unofficial`` with its whole
  diff as text and, as the enhancement it resolves, its subject and why;
- ``dependencies``: the graph: the layer depends on every component, and each component on those
  its METADATA requires (Requires-Dist without an extra), each one of the zip's components;
- the data the build generated inside the hook package, as ``data`` components (so that a reader
  knows which third-party releases it came from, under which license): one per CA directory
  (``python/aws_keepalive/ca/<sha256 of the bundle>/``: Mozilla's CA certificates as the named
  botocore releases ship them in cacert.pem, MPL-2.0, their pedigree those releases) and one per
  botocore release whose data the layer prepared (``prepared-data/botocore-<version>.pickle``, a
  derivative of that release's data files, Apache-2.0, its pedigree the release).  Each names its
  path in the zip (property ``aws-python-keepalive:path``); tools/release/contents.py checks that
  every file of the zip is in a RECORD of a listed distribution, or is bytecode of one such file;
- ``formulation``: the CPython builds that compiled the ``.pyc`` inside (version, Maven Central
  coordinates as a purl, and the sha256 of the build's jar, verified against
  tools/interpreters/cpython-maven.sha256).  They are not in the zip, so they are not components of
  it; CycloneDX's formulation is where the ingredients of a build go.

Byte-for-byte reproducible, like the zip: the timestamp is SOURCE_DATE_EPOCH's (release.py sets it
from the source's last commit when the caller does not), the serial number is derived from the
zip's sha256 (uuid5), keys sorted.
"""

import email.parser
import json
import os
import re
import time
import urllib.request
import uuid
import zipfile

from tools.packaging import layer_info
from tools.packaging import patches as sdk_patches

SPEC_VERSION = "1.5"
# The namespace of the uuid5 serial numbers (any fixed uuid: the serial is uuid5(namespace, sha256)).
SERIAL_NAMESPACE = uuid.UUID("6f2b3c86-0f51-4e0c-9a55-1d6f2b7c3e10")
WHEEL_DISTRIBUTION = "aws-python-keepalive"
# Who supplies the layer and the hook (the hook's METADATA names no author).
SUPPLIER = {"name": "aws-python-keepalive project"}
# The index the lock's wheels come from (uv's default), asked for its PEP 691 JSON listing.
INDEX_URL = os.environ.get("UV_DEFAULT_INDEX") or os.environ.get("UV_INDEX_URL") or "https://pypi.org/simple"
# License ids CycloneDX's schema accepts as SPDX ids that METADATA's License field uses verbatim;
# anything else is given as a name, as written.
SPDX_IDS = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "MPL-2.0", "PSF-2.0"}


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
    return {name: metadata["Version"] for name, metadata in metadata_in_zip(path).items()}


def metadata_in_zip(path):
    """{normalized name: METADATA as an email.message.Message, with '_tags': WHEEL's tags} of every
    ``python/<name>-<version>.dist-info`` in a layer zip."""
    found = {}
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        for name in names:
            match = re.fullmatch(r"python/([^/]+)-([^/-]+)\.dist-info/METADATA", name)
            if match:
                metadata = email.parser.BytesParser().parsebytes(archive.read(name), headersonly=True)
                wheel = name[:-len("METADATA")] + "WHEEL"
                tags = []
                if wheel in names:
                    tags = email.parser.BytesParser().parsebytes(archive.read(wheel)).get_all("Tag") or []
                metadata["_tags"] = " ".join(tags)
                found[normalize(match.group(1))] = metadata
    return found


def index_files(name, index_url=INDEX_URL):
    """{file name: sha256} of every file the index lists for project ``name`` (PEP 691 JSON)."""
    request = urllib.request.Request("%s/%s/" % (index_url.rstrip("/"), normalize(name)),
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            listing = json.load(response)
    except OSError as error:
        raise SystemExit("sbom: cannot list %s on %s (%s): the SBOM names the wheel inside the zip by its "
                         "sha256, which only the index can tell from the sdist's" % (name, index_url, error)) from error
    return {entry["filename"]: entry.get("hashes", {}).get("sha256") for entry in listing.get("files", [])}


def installed_wheel(name, version, digests, tags, files):
    """The sha256 of the wheel uv installed: the one of the lock's ``digests`` whose file (``files``,
    from ``index_files``) is a wheel of ``version`` with one of the zip's WHEEL ``tags``."""
    matches = set()
    for filename, digest in files.items():
        if digest not in digests or not filename.endswith(".whl"):
            continue
        parts = filename[:-len(".whl")].split("-")
        if normalize(parts[0]) != normalize(name) or parts[1] != version:
            continue
        file_tags = {"%s-%s-%s" % (python, abi, platform) for python in parts[-3].split(".")
                     for abi in parts[-2].split(".") for platform in parts[-1].split(".")}
        if file_tags & set(tags.split()):
            matches.add(digest)
    if len(matches) != 1:
        raise ValueError("sbom: %s==%s: %d locked wheels match the zip's tags %s (need exactly one)"
                         % (name, version, len(matches), tags or "none"))
    return matches.pop()


def wheel_digests(zip_path, locked, index_url=INDEX_URL):
    """{normalized name: sha256 of the installed wheel} for every locked package in the zip."""
    inside = metadata_in_zip(zip_path)
    return {normalize(name): installed_wheel(name, version, digests, inside[normalize(name)]["_tags"],
                                             index_files(name, index_url))
            for name, version, digests in locked if normalize(name) in inside}


def licenses(metadata):
    """CycloneDX licenses from a METADATA: License-Expression; else License (an SPDX id, or as
    written when it says more than a generic word); else the license classifiers' names."""
    expression = metadata.get("License-Expression")
    if expression:
        return [{"expression": expression.strip()}]
    value = (metadata.get("License") or "").strip()
    if value in SPDX_IDS:
        return [{"license": {"id": value}}]
    classifiers = [c.split("::")[-1].strip() for c in metadata.get_all("Classifier") or []
                   if c.startswith("License ::")]
    if value and value.upper() != "UNKNOWN" and "\n" not in value and not (classifiers and "dual" in value.lower()):
        return [{"license": {"name": value}}]
    return [{"license": {"name": name}} for name in classifiers]


def supplier(metadata):
    """CycloneDX supplier from a METADATA: Author, else Maintainer, else the first name of their
    -email fields; the Home-page as its url."""
    name = metadata.get("Author") or metadata.get("Maintainer")
    if not name:
        for field in ("Author-email", "Maintainer-email"):
            value = metadata.get(field)
            if value:
                name = value.split(",")[0].split("<")[0].strip().strip('"')
                break
    entity = {"name": (name or "unknown").strip()}
    if metadata.get("Home-page"):
        entity["url"] = [metadata["Home-page"].strip()]
    return entity


def requirements(metadata, present):
    """The normalized names a METADATA requires (Requires-Dist not behind an extra) among ``present``."""
    names = set()
    for line in metadata.get_all("Requires-Dist") or []:
        requirement, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        name = normalize(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1))
        if name in present:
            names.add(name)
    return sorted(names)


def _hashes(digests):
    return [{"alg": "SHA-256", "content": digest} for digest in digests]


def pypi_component(name, version, digest, metadata=None):
    purl = "pkg:pypi/%s@%s" % (normalize(name), version)
    component = {"type": "library", "bom-ref": purl, "name": name, "version": version, "purl": purl,
                 "hashes": _hashes([digest])}
    if metadata is not None:
        component["licenses"] = licenses(metadata)
        component["supplier"] = supplier(metadata)
    return component


def patched(component, patches):
    """``component`` (a pypi_component) as the layer ships it with ``patches`` (from
    tools/packaging/patches.load) applied: the wheel becomes its ancestor, each patch a pedigree patch."""
    ancestor = {key: component[key] for key in ("type", "name", "version", "purl", "hashes")}
    ancestor["description"] = "the unmodified wheel from the package index"
    patched_component = {key: value for key, value in component.items() if key != "hashes"}
    patched_component["description"] = (
        "%s %s from its wheel, with %d patch%s of this layer applied (pedigree.patches; layer/patches/%s/)"
        % (component["name"], component["version"], len(patches), "" if len(patches) == 1 else "es",
           component["name"]))
    patched_component["pedigree"] = {
        "ancestors": [ancestor],
        "patches": [{
            "type": "unofficial",
            "diff": {"text": {"contentType": "text/x-diff", "content": patch["text"]}},
            "resolves": [{"type": "enhancement", "id": "%s/%s" % (patch["distribution"], patch["name"]),
                          "name": patch["subject"], "description": patch["why"]}],
        } for patch in patches],
    }
    return patched_component


# The folders of the data the build generates inside the hook package (tools/packaging/build_layer.py).
CA_PREFIX = "python/aws_keepalive/ca/"
PREPARED_PREFIX = "python/aws_keepalive/prepared-data/"
PATH_PROPERTY = "aws-python-keepalive:path"


def generated_data(zip_path):
    """({CA bundle sha256: its folder}, {botocore version: its prepared index}) in a layer zip."""
    cas, prepared = {}, {}
    with zipfile.ZipFile(zip_path) as archive:
        for name in archive.namelist():
            match = re.fullmatch(re.escape(CA_PREFIX) + r"([0-9a-f]{64})/[^/]+", name)
            if match:
                cas[match.group(1)] = CA_PREFIX + match.group(1) + "/"
            match = re.fullmatch(re.escape(PREPARED_PREFIX) + r"botocore-([^/]+)\.pickle", name)
            if match:
                prepared[match.group(1)] = (name, _sha256(archive.read(name)))
    return cas, prepared


def _sha256(data):
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _botocore_ancestor(version):
    purl = "pkg:pypi/botocore@%s" % version
    return {"type": "library", "name": "botocore", "version": version, "purl": purl}


def data_components(zip_path, ca_sources):
    """The ``data`` components of a zip's generated data.  ``ca_sources``: {bundle sha256: [botocore
    versions whose default bundle it is]} (what the build returned); it must name exactly the zip's
    CA directories (ValueError otherwise)."""
    cas, prepared = generated_data(zip_path)
    if set(ca_sources) != set(cas):
        raise ValueError("sbom: %s holds the CA directories %s, the build made %s"
                         % (zip_path, sorted(cas), sorted(ca_sources)))
    components = []
    for digest, folder in sorted(cas.items()):
        versions = ca_sources[digest]
        components.append({
            "type": "data",
            "bom-ref": "data:ca/%s" % digest,
            "name": "mozilla-ca-certificates",
            "description": "Mozilla's CA certificates as botocore %s ships them (cacert.pem, this sha256), "
                           "one file per certificate, named by subject hash" % (", ".join(versions) or "(unnamed)"),
            "hashes": _hashes([digest]),
            "licenses": [{"license": {"id": "MPL-2.0"}}],
            "properties": [{"name": PATH_PROPERTY, "value": folder}],
        })
        if versions:
            components[-1]["pedigree"] = {"ancestors": [_botocore_ancestor(version) for version in versions]}
    for version, (path, digest) in sorted(prepared.items(), key=lambda item: _version_key(item[0])):
        components.append({
            "type": "data",
            "bom-ref": "data:prepared/botocore@%s" % version,
            "name": "botocore-prepared-data",
            "version": version,
            "description": "botocore %s's data folders listed and its top-level data files pre-parsed "
                           "(this index and the parses it names, stored by content)" % version,
            "hashes": _hashes([digest]),
            "licenses": [{"license": {"id": "Apache-2.0"}}],
            "pedigree": {"ancestors": [_botocore_ancestor(version)]},
            "properties": [{"name": PATH_PROPERTY, "value": path}],
        })
    return components


def _version_key(version):
    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"[.+-]", version))


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


def document(zip_path, zip_sha256, flavor, hook_version, wheel_sha256, locked, interpreters, description,
             wheels=None, epoch=None, ca_sources=None, patches=None):
    """The SBOM of one zip as a dict.

    ``locked``: locked_packages() of the layer's lock (ignored for the hook flavor, which has none of
    them); every one must be inside the zip at its locked version, and nothing else may be: a
    mismatch raises ValueError (an SBOM that disagrees with its zip is worse than none).
    ``wheels``: {normalized name: sha256 of the wheel inside} (``wheel_digests``; asked of the
    index when not given).  ``epoch``: the timestamp (default SOURCE_DATE_EPOCH; none when unset).
    ``ca_sources``: {CA bundle sha256: [botocore versions]} from the build (``data_components``);
    without it, the CA directories' components name no source release.
    ``patches``: the declared patches the full flavor's build applied (default: all of layer/patches/,
    tools/packaging/patches.load; each names its distribution, one of the locked packages)."""
    inside = metadata_in_zip(zip_path)
    expected = {normalize(WHEEL_DISTRIBUTION): hook_version}
    if flavor == "full":
        expected.update((normalize(name), version) for name, version, _ in locked)
    found = {name: metadata["Version"] for name, metadata in inside.items()}
    if found != expected:
        raise ValueError("sbom: %s holds %s, the sources say %s" % (zip_path, sorted(found.items()),
                                                                   sorted(expected.items())))
    layer_name = layer_info.NAME if flavor == "full" else layer_info.HOOK_NAME
    hook = pypi_component(WHEEL_DISTRIBUTION, hook_version, wheel_sha256)
    hook.update(licenses=[{"license": {"id": layer_info.LICENSE}}], supplier=SUPPLIER)
    components = [hook]
    if flavor == "full":
        if wheels is None:
            wheels = wheel_digests(zip_path, locked)
        patches = sdk_patches.load() if patches is None else patches
        by_distribution = {}
        for patch in patches:
            by_distribution.setdefault(normalize(patch["distribution"]), []).append(patch)
        unknown = sorted(set(by_distribution) - {normalize(name) for name, _, _ in locked})
        if unknown:
            raise ValueError("sbom: patches for %s, which the lock does not pin" % ", ".join(unknown))
        for name, version, _ in locked:
            component = pypi_component(name, version, wheels[normalize(name)], inside[normalize(name)])
            if normalize(name) in by_distribution:
                component = patched(component, by_distribution[normalize(name)])
            components.append(component)
    layer_ref = "layer:%s@%s" % (layer_name, hook_version)
    refs = {normalize(component["name"]): component["bom-ref"] for component in components}
    if ca_sources is None:
        ca_sources = {digest: [] for digest in generated_data(zip_path)[0]}
    components += data_components(zip_path, ca_sources)
    metadata = {
        "component": {
            "type": "library",
            "bom-ref": layer_ref,
            "name": layer_name,
            "version": hook_version,
            "description": description,
            "hashes": _hashes([zip_sha256]),
            "licenses": [{"license": {"id": layer_info.LICENSE}}],
            "supplier": SUPPLIER,
            "properties": [
                {"name": "aws-python-keepalive:flavor", "value": flavor},
                {"name": "aws-python-keepalive:compatible-runtimes", "value": ",".join(layer_info.RUNTIMES)},
                {"name": "aws-python-keepalive:compatible-architectures",
                 "value": ",".join(layer_info.ARCHITECTURES)},
            ],
        },
        "supplier": SUPPLIER,
        "tools": {"components": [{"type": "application", "name": "tools/release/release.py"}]},
    }
    epoch = _source_date_epoch() if epoch is None else epoch
    if epoch is not None:
        metadata["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    dependencies = [{"ref": layer_ref, "dependsOn": sorted(refs.values())}]
    dependencies += [{"ref": refs[name], "dependsOn": [refs[required] for required in requirements(inside[name], refs)]}
                     for name in sorted(refs)]
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": "urn:uuid:%s" % uuid.uuid5(SERIAL_NAMESPACE, zip_sha256),
        "version": 1,
        "metadata": metadata,
        "components": components,
        "dependencies": dependencies,
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
