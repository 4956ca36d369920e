"""Prepare what botocore would list and parse at client creation, from the staged layer tree.

    python tools/prepare_data.py <staged python/ folder>

Writes ``aws_keepalive/prepared.pickle`` into the staged tree (layer/aws_keepalive/prepared.py
reads it and explains why): an index of ``botocore/data`` and ``boto3/data`` (per service folder,
per version folder, the files in it; the top-level files; the owning package's version) and the
top-level ``botocore/data/*.json`` files parsed as botocore parses them, each pickled on its own.

Run by tools/build_layer.py after the tree is final (pruned, trimmed to SERVICES), so the index
describes exactly the files the zip holds.  Reproducible: every listing is sorted, nothing
depends on the clock, and pickle output depends only on the data and the interpreter (the build
runs it with its first ``--python``, the one that installs the wheels).

Only the standard library is used.
"""

import argparse
import json
import os
import pickle
import re
from collections import OrderedDict

# The data folders a layer ships, relative to the staged python/ folder, and the package whose
# __version__ says which release they came from.
TREES = (("botocore/data", "botocore"), ("boto3/data", "boto3"))
# The index's format: layer/aws_keepalive/prepared.py ignores any other.
FORMAT = 1
# Readable by every CPython the layer supports (3.8+).
PROTOCOL = 5
OUTPUT = os.path.join("aws_keepalive", "prepared.pickle")
_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


def package_version(target, package):
    """The ``__version__`` a package's ``__init__.py`` assigns (read, not imported)."""
    with open(os.path.join(target, package, "__init__.py"), encoding="utf-8") as source:
        match = _VERSION.search(source.read())
    if match is None:
        raise SystemExit("prepare_data: no __version__ in %s/__init__.py" % package)
    return match.group(1)


def _files(folder):
    """The names of the regular files in ``folder`` (what os.path.isfile accepts), sorted."""
    return tuple(sorted(name for name in os.listdir(folder) if os.path.isfile(os.path.join(folder, name))))


def index_tree(root):
    """(top-level files, {service: {version: files}}) of a data folder, as Loader would see it."""
    services = {}
    for service in sorted(os.listdir(root)):
        folder = os.path.join(root, service)
        if not os.path.isdir(folder):
            continue
        services[service] = {
            version: _files(os.path.join(folder, version))
            for version in sorted(os.listdir(folder))
            if os.path.isdir(os.path.join(folder, version))
        }
    return _files(root), services


def parse_like_botocore(path):
    """What botocore.loaders.JSONFileLoader returns for a .json file."""
    with open(path, "rb") as source:
        return json.loads(source.read().decode("utf-8"), object_pairs_hook=OrderedDict)


def prepare(target):
    """Write the prepared data for the staged tree ``target``; returns its path and byte size."""
    index = {"format": FORMAT, "trees": {}, "parsed": {}}
    for relative, package in TREES:
        root = os.path.join(target, *relative.split("/"))
        if not os.path.isdir(root):
            continue
        files, services = index_tree(root)
        index["trees"][relative] = {"package": package, "version": package_version(target, package),
                                    "files": files, "services": services}
    if "botocore/data" not in index["trees"]:
        raise SystemExit("prepare_data: no botocore/data under %s" % target)
    for name in index["trees"]["botocore/data"]["files"]:
        if name.endswith(".json"):
            path = os.path.join(target, "botocore", "data", name)
            index["parsed"]["botocore/data/" + name] = (
                os.path.getsize(path), pickle.dumps(parse_like_botocore(path), protocol=PROTOCOL))
    out = os.path.join(target, OUTPUT)
    data = pickle.dumps(index, protocol=PROTOCOL)
    with open(out, "wb") as handle:
        handle.write(data)
    return out, len(data)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", help="the staged python/ folder (botocore/, aws_keepalive/ inside)")
    args = parser.parse_args(argv)
    out, size = prepare(args.target)
    print("prepared: %s (%d bytes)" % (out, size))


if __name__ == "__main__":
    main()
