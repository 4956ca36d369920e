"""Prepare what botocore would list and parse at client creation, from an installed SDK.

    python tools/packaging/prepare_data.py <site folder> [<output folder>]

Writes, into the output folder (default ``<site>/aws_keepalive/prepared-data``; layer/aws_keepalive/
prepared.py reads it and explains why):

* ``botocore-<version>.pickle``, the index of one SDK: of its data folders (``botocore/data``,
  ``boto3/data``), the top-level files with their sizes and, per service folder, per version
  folder, the files in it; the owning package's version; for each top-level ``botocore/data/*.json``
  file, its size, the sha256 of its bytes (prepared.py answers from the parse only for a file
  with exactly these bytes) and the name of the file holding its parse;
* ``<sha256 of the pickle, 20 hex digits>.pickle``: each top-level file parsed as botocore parses
  it, pickled on its own.  Named by content, so a file that two SDKs ship alike (the hook flavor
  prepares several: ``sdk-default-configuration.json``, often ``_retry.json``) is written once;
* the same for the service model and endpoint rule set (``MODEL_TYPES``) of the latest API version
  of each of ``SERVICES``, the services functions create clients for most (issue 36: loading the
  pickle instead of gunzip + ``json.loads`` saves ~4 ms of CPU at a full vCPU for DynamoDB's, ~10
  for S3's; about 0.1 s at 128 MB); the other services' models load as stock loads them (pickles
  of all of them would add ~15 MB per SDK).

The full flavor (tools/packaging/build_layer.py) prepares its own staged tree after it is final (pruned,
trimmed to SERVICES), so the index describes exactly the files the zip holds; the hook flavor
prepares each runtime-bundled SDK it knows (lab/runtime-sdk/*.txt, installed from its hash-pinned
lock).  Reproducible: every listing is sorted, nothing depends on the clock, and pickle output
depends only on the data and the interpreter (the build runs it with its first ``--python``).

Only the standard library is used.
"""

import argparse
import gzip
import hashlib
import json
import os
import pickle
import re
import sys
from collections import OrderedDict

# The data folders an SDK has, relative to its site folder, and the package whose __version__ says
# which release they came from.
TREES = (("botocore/data", "botocore"), ("boto3/data", "boto3"))
# Services whose latest model files are pre-parsed too (their folders' names in botocore/data), and
# which model files: what client creation loads (the paginators and waiters load later, if ever).
SERVICES = ("dynamodb", "s3", "lambda")
MODEL_TYPES = ("service-2", "endpoint-rule-set-1")
# The index's format: layer/aws_keepalive/prepared.py ignores any other.
FORMAT = 3
# Readable by every CPython the layer supports (3.8+).
PROTOCOL = 5
# Where the prepared data goes, relative to a layer's python/ folder (prepared.py's DATA).
OUTPUT = os.path.join("aws_keepalive", "prepared-data")
_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


def package_version(site, package):
    """The ``__version__`` a package's ``__init__.py`` assigns (read, not imported)."""
    with open(os.path.join(site, package, "__init__.py"), encoding="utf-8") as source:
        match = _VERSION.search(source.read())
    if match is None:
        raise SystemExit("prepare_data: no __version__ in %s/__init__.py" % package)
    return match.group(1)


def index_name(version):
    """The index file of a botocore version (patch.py's _prepared_index names the same)."""
    return "botocore-%s.pickle" % version


def _files(folder):
    """The names of the regular files in ``folder`` (what os.path.isfile accepts), sorted; interned,
    so that pickle writes each distinct name once (``service-2.json.gz`` ~450 times)."""
    return tuple(sorted(sys.intern(name) for name in os.listdir(folder)
                        if os.path.isfile(os.path.join(folder, name))))


def index_tree(root):
    """(top-level files, {service: {version: files}}) of a data folder, as Loader would see it."""
    services = {}
    for service in sorted(os.listdir(root)):
        folder = os.path.join(root, service)
        if not os.path.isdir(folder):
            continue
        services[service] = {
            sys.intern(version): _files(os.path.join(folder, version))
            for version in sorted(os.listdir(folder))
            if os.path.isdir(os.path.join(folder, version))
        }
    return _files(root), services


def parse_like_botocore(path):
    """What botocore.loaders.JSONFileLoader returns for a .json (or .json.gz) file."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as source:
        return json.loads(source.read().decode("utf-8"), object_pairs_hook=OrderedDict)


def _write_parsed(path, out_dir):
    """Pickle botocore's parse of ``path`` into ``out_dir`` under a name made of its content; returns
    the name (the same for the same bytes, written once)."""
    data = pickle.dumps(parse_like_botocore(path), protocol=PROTOCOL)
    name = hashlib.sha256(data).hexdigest()[:20] + ".pickle"
    with open(os.path.join(out_dir, name), "wb") as handle:
        handle.write(data)
    return name


def parsed_files(tree):
    """The files of botocore's data folder (``tree``: its index entry) to pre-parse, relative to it:
    every top-level ``.json``, and the ``MODEL_TYPES`` files of each of ``SERVICES``' latest API
    version (the one botocore's determine_latest_version picks: the greatest folder name holding
    its service-2 file), whichever of ``.json`` / ``.json.gz`` it ships."""
    found = [name for name in tree["files"] if name.endswith(".json")]
    for service in SERVICES:
        versions = [version for version, files in tree["services"].get(service, {}).items()
                    if any(name in files for name in ("service-2.json", "service-2.json.gz"))]
        if not versions:
            continue
        version = max(versions)
        for type_name in MODEL_TYPES:
            for extension in (".json", ".json.gz"):  # botocore's order (loaders._JSON_OPEN_METHODS)
                if type_name + extension in tree["services"][service][version]:
                    found.append("%s/%s/%s%s" % (service, version, type_name, extension))
                    break
    return found


def prepare(site, out_dir=None):
    """Write the prepared data of the SDK installed in ``site`` into ``out_dir`` (default: the
    site's own aws_keepalive/prepared-data); returns the index's path and byte size."""
    out_dir = out_dir or os.path.join(site, OUTPUT)
    os.makedirs(out_dir, exist_ok=True)
    index = {"format": FORMAT, "trees": {}, "parsed": {}}
    for relative, package in TREES:
        root = os.path.join(site, *relative.split("/"))
        if not os.path.isdir(root):
            continue
        files, services = index_tree(root)
        index["trees"][relative] = {
            "package": package, "version": package_version(site, package), "files": files,
            "sizes": tuple(os.path.getsize(os.path.join(root, name)) for name in files), "services": services}
    if "botocore/data" not in index["trees"]:
        raise SystemExit("prepare_data: no botocore/data under %s" % site)
    for relative in parsed_files(index["trees"]["botocore/data"]):
        path = os.path.join(site, "botocore", "data", *relative.split("/"))
        with open(path, "rb") as source:
            digest = hashlib.sha256(source.read()).digest()
        index["parsed"]["botocore/data/" + relative] = (os.path.getsize(path), digest, _write_parsed(path, out_dir))
    out = os.path.join(out_dir, index_name(index["trees"]["botocore/data"]["version"]))
    data = pickle.dumps(index, protocol=PROTOCOL)
    with open(out, "wb") as handle:
        handle.write(data)
    return out, len(data)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", help="a folder holding botocore/ (and boto3/)")
    parser.add_argument("out_dir", nargs="?", help="where to write (default: <site>/%s)" % OUTPUT)
    args = parser.parse_args(argv)
    out, size = prepare(args.site, args.out_dir)
    print("prepared: %s (%d bytes)" % (out, size))


if __name__ == "__main__":
    main()
