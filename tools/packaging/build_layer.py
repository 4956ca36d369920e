"""Build the layer zip: pinned wheels + the hook, pruned, precompiled, byte-for-byte reproducible.

Two flavors (``--flavor``): ``full`` (build/layer.zip: the pinned SDK and the hook) and ``hook``
(build/layer-hook.zip: the hook alone, which patches whatever botocore the function imports: the
runtime's bundled copy or one the function bundles; step 1 is skipped).

Steps, each a function below:

1. (full flavor) install ``layer/requirements.txt`` into ``<work>/python`` with uv:
   ``--require-hashes``, wheels only, no dependency resolution (the lock already lists every
   dependency); then apply the declared patches of layer/patches/ (tools/packaging/patches.py:
   lazy imports in the SDK's own modules, each a unified diff with its reason) and rewrite the
   RECORD lines of the files they change;
2. copy the hook (``aws_keepalive/``, ``aws_keepalive.pth``, ``usercustomize.py``) next to them;
3. prune what a function never needs (installer caches and uv's ``.lock``, console scripts, test
   folders) and, for a
   trimmed build, the botocore/boto3 service models not asked for and their endpoints.json entries;
4. write a hashed CA directory (tools/packaging/ca_dir.py) for each CA bundle the layer knows, into
   ``aws_keepalive/ca/<sha256 of the bundle>/``: the default bundle of every SDK named by
   ``flavor_sdks`` (a hash-pinned lock: the layer's own SDK, the runtimes' bundled SDKs), i.e. the
   cacert.pem botocore verifies with when the function names none (certifi's when the lock has
   certifi), taken from the installed wheels; trust.py recognises the bundle by content and lets
   OpenSSL read only the certificates a handshake needs (docs/trust.md);
5. prepare what the SDK would list and parse at client creation (tools/packaging/prepare_data.py: the data
   folders' index, the top-level data files pre-parsed, into ``aws_keepalive/prepared-data/``):
   the full flavor for its own staged SDK, the hook flavor for each SDK ``flavor_sdks`` names
   (the runtimes' bundled SDKs, installed from their locks as in step 4); prepared.py recognises
   the imported botocore by release and by one listing of its data folder.  Then the package's
   ``*.dist-info`` (the wheel's METADATA and entry points, written by tools/packaging/build_wheel.py)
   so that importlib.metadata, and OpenTelemetry's ``opentelemetry_pre_instrument`` entry point
   lookup, find the hook on /opt/python; it carries the repository's LICENSE and NOTICE and the
   third-party texts of what steps 4 and 5 added (``third_party_licenses``), and its RECORD lists
   the files those steps generated, so that every file but the bytecode is in some RECORD
   (tools/release/contents.py checks each zip against its RECORDs and SBOM).  Then compile
   bytecode with each interpreter the caller gives: tools/release/release.py, the one entry point
   (``make layer``, ``make release``), gives the pinned Maven Central builds, never the machine's own;
6. cut each ``*.dist-info/RECORD`` to the files left (``prune_records``), refuse a staged file that
   names the clone or the staging folder, and write the zip with fixed timestamps, permissions,
   order and compression; ``report`` prints its sha256 and sizes.

Why the bytecode matters: ``/opt`` is read-only on Lambda, so without shipped ``.pyc`` every cold
start recompiles boto3/botocore (~340 ms here).  The ``.pyc`` use ``unchecked-hash`` invalidation:
they are valid whatever mtimes the extraction gives the sources (timestamp-based ones would be
silently ignored when the zip's 1980 timestamps differ from what was recorded).

Why compile this way: a ``.pyc`` records the path it was compiled from (``co_filename``, shown in
tracebacks), and marshal writes frozenset constants in hash order, which depends on the string hash
seed.  So each interpreter compiles with ``PYTHONHASHSEED=0``, in one process, files in sorted order
(compileall sorts), with ``-d /opt/python`` so that the recorded path is the one the file will
have on Lambda, never the build folder.  Interpreters run in parallel (each is deterministic alone).

Only the standard library is used, so the build runs on any of the supported interpreters (a
library: tools/release/release.py is the script).
"""

import concurrent.futures
import csv
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

from bench.rows import write_rows  # (the sizes are rows docs/ render)
from tools.packaging import build_wheel, ca_dir, patches, prepare_data, repro_zip

# A library (tools/release/release.py is the entry point, with the repository root on sys.path);
# the checkout it builds from.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The hook's files, relative to the hook source folder (layer/).
HOOK_ENTRIES = ("aws_keepalive", "aws_keepalive.pth", "aws_keepalive.start", "usercustomize.py",
                "_aws_keepalive_site.py")
# Where the layer's python/ folder is mounted on Lambda: recorded in every .pyc.
RUNTIME_PREFIX = "/opt/python"
# Folder names removed anywhere outside service-model data: never imported by a function.
PRUNED_DIRS = {"__pycache__", "tests", "test"}
# Installer leftovers at the root of an install --target folder: console scripts, and uv's lock
# file (``.lock``, which ``uv pip install --target`` leaves there: no RECORD names it, and no
# function reads it).
PRUNED_ROOT_DIRS = {"bin"}
PRUNED_ROOT_FILES = {".lock"}
# The license texts the build adds to the hook's dist-info (``third_party/`` inside it), for what
# the layer carries beyond the distributions' own dist-info folders: the Mozilla CA certificates
# of every CA directory (MPL-2.0; the text from the repository, licenses/MPL-2.0.txt, a copy of the
# pinned fqdn wheel's) and, in the hook flavor, botocore's LICENSE and NOTICE for the data prepared
# from its releases (taken from the wheels the build installed them from).
MPL_TEXT = os.path.join(REPO, "licenses", "MPL-2.0.txt")
MOZILLA_CA_LICENSE = "third_party/mozilla-ca/MPL-2.0.txt"
BOTOCORE_LICENSES = "third_party/botocore"
# What the layer's hook has beyond the wheel's files (listed in the hook's RECORD with them): the
# folders the build writes inside the package (steps 4 and 5) and usercustomize.py (the layer's
# route behind an exec wrapper; the wheel ships none: tools/packaging/build_wheel.py says why).
LAYER_ONLY = ("usercustomize.py", "aws_keepalive/ca", "aws_keepalive/prepared-data")
# Folder entries' mode (files: repro_zip.FILE_MODE); the wheel has no folder entries.
DIR_MODE = 0o040755


def install_dependencies(uv, requirements, target, python, link_mode="copy"):
    """Install the locked wheels into ``target`` (no resolution, no sdists, no bytecode)."""
    subprocess.run(
        [
            uv, "pip", "install", "--quiet", "--no-config",
            "--target", target,
            "--python", python,
            "--require-hashes", "--no-deps", "--only-binary", ":all:",
            "--link-mode", link_mode,
            "-r", requirements,
        ],
        check=True,
    )


def default_bundle(site):
    """The CA bundle botocore installed in ``site`` verifies with when the function names none
    (botocore.httpsession.get_cert_path(True)): certifi's when certifi is there, else its own."""
    for candidate in (os.path.join(site, "certifi", "cacert.pem"), os.path.join(site, "botocore", "cacert.pem")):
        if os.path.isfile(candidate):
            return candidate
    raise SystemExit("build_layer: no botocore (or certifi) CA bundle under %s" % site)


def botocore_license_texts(site):
    """{file name: bytes} of the license files (METADATA's License-File lines) of the botocore
    installed in ``site``: what its wheel ships in its dist-info (LICENSE.txt and NOTICE)."""
    infos = [name for name in os.listdir(site) if name.startswith("botocore-") and name.endswith(".dist-info")]
    if len(infos) != 1:
        raise SystemExit("build_layer: expected one botocore dist-info in %s, found %s" % (site, infos or "none"))
    folder = os.path.join(site, infos[0])
    with open(os.path.join(folder, "METADATA"), encoding="utf-8") as handle:
        names = [line.split(":", 1)[1].strip() for line in handle.read().split("\n\n", 1)[0].splitlines()
                 if line.startswith("License-File:")]
    texts = {}
    for name in names:
        for candidate in (os.path.join(folder, name), os.path.join(folder, "licenses", name)):
            if os.path.isfile(candidate):
                with open(candidate, "rb") as handle:
                    texts[os.path.basename(name)] = handle.read()
                break
        else:
            raise SystemExit("build_layer: %s names License-File %s, which it does not hold" % (infos[0], name))
    return texts


def write_sdk_data(uv, ca_locks, prepared_locks, target, work, python):
    """Steps 4 and 5 for SDKs the layer does not ship but knows (installed from their hash-pinned
    locks, each once): one hashed CA directory per distinct default bundle of ``ca_locks``, and the
    prepared data (tools/packaging/prepare_data.py) of each SDK of ``prepared_locks``.  Returns
    {bundle sha256 name: [botocore versions whose default bundle it is]} (the SBOM names them) and
    {botocore version: its license texts} of every SDK installed."""
    ca_root = os.path.join(target, "aws_keepalive", "ca")
    sources = {}
    licenses = {}
    for index, lock in enumerate(dict.fromkeys(list(ca_locks) + list(prepared_locks))):
        site = os.path.join(work, "sdk", str(index))
        # Only a few files are read from it: link from uv's cache rather than copy.
        install_dependencies(uv, lock, site, python, link_mode="hardlink")
        version = botocore_version(site)
        licenses[version] = botocore_license_texts(site)
        if lock in ca_locks:
            name = os.path.basename(ca_dir.build(default_bundle(site), ca_root))
            sources.setdefault(name, []).append(version)
        if lock in prepared_locks:
            prepare_data.prepare(site, os.path.join(target, prepare_data.OUTPUT))
    shutil.rmtree(os.path.join(work, "sdk"), ignore_errors=True)
    return {name: sorted(versions, key=version_key) for name, versions in sorted(sources.items())}, licenses


def version_key(version):
    """Sort key of a release number such as 1.42.97 (numeric parts compared as numbers)."""
    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"[.+-]", version))


def botocore_version(site):
    """The version of the botocore installed in ``site`` (its dist-info folder's name)."""
    for name in os.listdir(site):
        if name.startswith("botocore-") and name.endswith(".dist-info"):
            return name[len("botocore-"):-len(".dist-info")]
    raise SystemExit("build_layer: no botocore dist-info in %s" % site)


def third_party_licenses(flavor, botocore_licenses):
    """[(name inside the hook's dist-info, bytes)]: the MPL-2.0 text (every layer has CA directories)
    and, in the hook flavor, botocore's license texts, once: every release the build took data from
    ships the same ones (checked; a release whose texts differ would need its own copy, so the build
    stops and says so rather than carry one release's notice for another's data)."""
    with open(MPL_TEXT, "rb") as handle:
        texts = [(MOZILLA_CA_LICENSE, handle.read())]
    if flavor == "hook":
        distinct = {tuple(sorted(files.items())) for files in botocore_licenses.values()}
        if len(distinct) != 1:
            raise SystemExit("build_layer: the botocore releases %s ship different license texts: carry each "
                             "release's (build_layer.third_party_licenses)" % ", ".join(sorted(botocore_licenses)))
        texts += [("%s/%s" % (BOTOCORE_LICENSES, name), data) for name, data in distinct.pop()]
    return texts


def layer_only_files(target):
    """[(path relative to ``target``, bytes)] of every LAYER_ONLY file (for the hook's RECORD)."""
    paths = []
    for relative in LAYER_ONLY:
        full = os.path.join(target, relative)
        if os.path.isfile(full):
            paths.append(full)
        for folder, _, names in os.walk(full):
            paths += [os.path.join(folder, name) for name in names]
    files = []
    for path in paths:
        with open(path, "rb") as handle:
            files.append((os.path.relpath(path, target).replace(os.sep, "/"), handle.read()))
    return sorted(files)


def apply_patches(target):
    """Apply layer/patches/ to the installed SDK (tools/packaging/patches.py); returns
    ["<distribution>/<patch file>", ...].  A patch that does not fit the pinned files stops the build."""
    try:
        return ["%s/%s" % (patch["distribution"], patch["name"]) for patch in patches.apply_all(target)]
    except patches.PatchError as error:
        raise SystemExit("build_layer: a declared patch does not apply (layer/patches/): %s" % error) from error


def applied_patches(result):
    """The patches (tools/packaging/patches.load entries) a ``build`` result says it applied, in order
    (the SBOM declares them)."""
    by_id = {"%s/%s" % (patch["distribution"], patch["name"]): patch for patch in patches.load()}
    return [by_id[patch_id] for patch_id in result["patches"]]


def copy_hook(hook_dir, target):
    """Copy the hook's package, .pth and usercustomize.py (without any bytecode caches)."""
    for entry in HOOK_ENTRIES:
        source = os.path.join(hook_dir, entry)
        destination = os.path.join(target, entry)
        if not os.path.exists(source):
            raise SystemExit("build_layer: hook file missing: %s" % source)
        if os.path.isdir(source):
            shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copyfile(source, destination)


def prune(target):
    """Remove caches, console scripts and test folders; keep every *.dist-info (importlib.metadata)."""
    for name in PRUNED_ROOT_DIRS:
        shutil.rmtree(os.path.join(target, name), ignore_errors=True)
    for name in PRUNED_ROOT_FILES:
        if os.path.isfile(os.path.join(target, name)):
            os.remove(os.path.join(target, name))
    for root, dirs, files in os.walk(target):
        # botocore/data and boto3/data hold service models, named after services: never prune there.
        parts = os.path.relpath(root, target).split(os.sep)
        data_folder = len(parts) >= 2 and parts[0] in ("botocore", "boto3") and parts[1] == "data"
        for name in list(dirs):
            if name in PRUNED_DIRS and not (data_folder and name != "__pycache__"):
                shutil.rmtree(os.path.join(root, name))
                dirs.remove(name)
        for name in files:
            if name.endswith((".pyc", ".pyo")):
                os.remove(os.path.join(root, name))


def trim_services(target, services):
    """Keep only the named services' models in botocore/data and boto3/data.

    The top-level files of botocore/data (endpoints, partitions, retry and default-configuration
    data) serve every service and stay.  A client for a removed service then fails at creation
    with botocore's UnknownServiceError, which lists the services the layer still has.
    """
    botocore_data = os.path.join(target, "botocore", "data")
    available = sorted(
        name for name in os.listdir(botocore_data) if os.path.isdir(os.path.join(botocore_data, name))
    )
    unknown = sorted(set(services) - set(available))
    if unknown:
        raise SystemExit(
            "build_layer: unknown service(s) in SERVICES: %s (botocore has e.g. %s)"
            % (", ".join(unknown), ", ".join(available[:8]) + ", ...")
        )
    for data in (botocore_data, os.path.join(target, "boto3", "data")):
        for name in os.listdir(data):
            path = os.path.join(data, name)
            if os.path.isdir(path) and name not in services:
                shutil.rmtree(path)
    trim_endpoints(botocore_data)


def trim_endpoints(botocore_data):
    """Cut endpoints.json to the entries of the services still in botocore_data.

    Every first client parses endpoints.json (1.25 MB in botocore 1.44, ~0.9 MB in 1.34): its
    per-service entries are most of it, and the rest (partitions, regions, defaults) is what every
    service needs.  Entries are keyed by a service's ``endpointPrefix`` (``streams.dynamodb``,
    ``monitoring``), which is read from each kept model; the service name is kept too.  Measured:
    the JSON parse drops from ~7-11 ms to ~0.1 ms (make coldstart-parts; docs/coldstart.md).
    """
    keep = set()
    for service in os.listdir(botocore_data):
        folder = os.path.join(botocore_data, service)
        if not os.path.isdir(folder):
            continue
        keep.add(service)
        for version in os.listdir(folder):
            for name, opener in (("service-2.json.gz", gzip.open), ("service-2.json", open)):
                model = os.path.join(folder, version, name)
                if os.path.exists(model):
                    with opener(model, "rt", encoding="utf-8") as source:
                        keep.add(json.load(source)["metadata"].get("endpointPrefix", service))
    cut_endpoints(os.path.join(botocore_data, "endpoints.json"), keep)


def cut_endpoints(path, keep):
    """Rewrite the endpoints.json at ``path`` with only the service entries named in ``keep``
    (bench/coldstart_parts.py measures the same cut on a full layer)."""
    with open(path, encoding="utf-8") as source:
        endpoints = json.load(source)
    for partition in endpoints["partitions"]:
        partition["services"] = {k: v for k, v in partition["services"].items() if k in keep}
    with open(path, "w", encoding="utf-8") as out:
        json.dump(endpoints, out, indent=1)


def _compile_with(python, target):
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"}
    result = subprocess.run(
        [
            python, "-m", "compileall", "-q",
            "--invalidation-mode", "unchecked-hash",
            "-d", RUNTIME_PREFIX,
            target,
        ],
        env=environment,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit("build_layer: compileall failed with %s:\n%s%s" % (python, result.stdout, result.stderr))
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        env=environment, capture_output=True, text=True, check=True,
    ).stdout.strip()
    return version


def compile_bytecode(pythons, target):
    """Compile every .py with each interpreter; returns the CPython minors compiled for."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(pythons) or 1) as pool:
        versions = list(pool.map(lambda python: _compile_with(python, target), pythons))
    if len(set(versions)) != len(versions):
        raise SystemExit("build_layer: two interpreters of the same minor: %s" % ", ".join(pythons))
    return sorted(versions, key=lambda v: tuple(int(part) for part in v.split(".")))


def prune_records(target):
    """Drop from every ``*.dist-info/RECORD`` the lines of files the build removed (prune, trim).

    A RECORD names what its installer wrote, wherever: jmespath's lists ``../../bin/jp.py``, the
    console script whose shebang uv rewrote to the builder's interpreter; the script is pruned, its
    line stayed, and its hash named the clone's path, so two clones at different paths gave different
    zips.  A line is kept only when its file is in the staged tree (so RECORD still lists every file
    the distribution has in the layer, as installers and ``pip show -f`` expect) -- except botocore's
    service models a trimmed build (``SERVICES=``) removed: their lines stay (the wheel's own hashes,
    the same on every machine), so that the zip says what it lacks and ``layer_info`` recognises it
    as trimmed by comparing RECORD with the models still there."""
    for record, lines in patches.records(target):
        kept = []
        for line in lines:
            path = next(csv.reader([line]), [""])[0]
            full = os.path.normpath(os.path.join(target, path))
            inside = full.startswith(target + os.sep)
            if path and inside and (os.path.isfile(full) or path.startswith("botocore/data/")):
                kept.append(line)
        with open(record, "w", encoding="utf-8", newline="") as handle:
            handle.writelines(kept)


def refuse_build_paths(root, paths):
    """Stop the build when a staged file holds one of ``paths`` (the clone, the staging folder): a zip
    that names its build machine is one nobody else can rebuild byte for byte."""
    needles = [path.encode() for path in paths if len(path) > 1]
    for folder, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(folder, name), "rb") as handle:
                data = handle.read()
            for needle in needles:
                if needle in data:
                    raise SystemExit("build_layer: %s names the build machine's %s: the zip would not be "
                                     "reproducible elsewhere" % (os.path.relpath(os.path.join(folder, name), root),
                                                                needle.decode()))


def tree_entries(root):
    """Every folder and file under ``root`` as (relative posix path, is_dir), in sorted order."""
    entries = []
    for folder, dirs, files in os.walk(root):
        relative = os.path.relpath(folder, root)
        for name in dirs:
            entries.append((os.path.join(relative, name), True))
        for name in files:
            entries.append((os.path.join(relative, name), False))
    return sorted((os.path.normpath(path).replace(os.sep, "/"), is_dir) for path, is_dir in entries)


def write_zip(stage, out, date_time):
    """Write ``stage``'s tree to ``out`` deterministically; returns (file count, unzipped bytes)."""
    files = 0
    unzipped = 0
    temporary = out + ".tmp"
    with zipfile.ZipFile(temporary, "w") as archive:
        for path, is_dir in tree_entries(stage):
            if is_dir:
                info = repro_zip.info(path + "/", date_time, DIR_MODE)
                info.external_attr |= 0x10  # MS-DOS directory flag
                archive.writestr(info, b"", compress_type=zipfile.ZIP_STORED)
                continue
            with open(os.path.join(stage, path), "rb") as handle:
                data = handle.read()
            repro_zip.write_file(archive, path, data, date_time)
            files += 1
            unzipped += len(data)
    os.replace(temporary, out)
    return files, unzipped


def megabytes(size):
    return "%.1f MB (%d bytes)" % (size / 1e6, size)


FLAVORS = ("full", "hook")

# The size budget per flavor, (zipped, unzipped) in decimal bytes: what tests/build/test_build_layer.py
# holds every build to and what `make bump-sdk` checks right after rebuilding (``over_budget``).
#
# Full flavor (issue 35's decision, 2026-11-28).  Lambda's limits: a layer zip uploaded directly is at
# most 50 MB (publish.py uploads inline), and a function with all its layers at most 250 MB unzipped:
# what this layer takes there, the function cannot use.  botocore grows: its wheel on PyPI was
# 12 468 049 bytes (1.34.162, 2024-08-15), 14 337 008 (1.41.5, 2025-11-26), 16 884 815 (1.44.8,
# 2026-11-20): +2.55 MB in the last year, +1.9 MB in the last six months, +0.76 MB in the last 30 days
# (18 releases).  The full zip, built by this build from each of those pins: 19 955 410, 22 179 173,
# 24 875 012 bytes zipped (37.7 MB, 40.8 MB unzipped a year apart): +2.70 MB zipped and +3.09 MB
# unzipped a year.  The old budget, 25 MB, was ~0.1 MB away.  Trimming cannot buy a year: the zip is
# botocore's data (15.9 MB zipped, gzip-compressed models: not compressible further) and bytecode for
# five CPython minors (6.7 MB); what it carried that no RECORD names (uv's .lock) was empty.  So the
# budget moves: 35 MB zipped leaves 10.1 MB (3.7 years at last year's growth, 1.9 at twice it, a year
# even at the last 30 days' pace) and stays 15 MB under the 50 MB upload limit; 60 MB unzipped
# (unchanged) leaves 19 MB, six years at 3.1 MB a year, and is 24 % of the 250 MB at most: what a user
# gives up by taking the full layer rather than the hook-only one (under 12 MB, below).  A user who
# needs the room builds a trimmed layer (make layer SERVICES=...) or takes the hook-only layer.
#
# Hook flavor: the hook, a hashed CA directory per distinct bundle (~0.2 MB unzipped each) and the
# prepared data of each runtime SDK of lab/runtime-sdk. Measured 2026-11-27 (make layer FLAVOR=hook,
# adding one release at a time): 2 releases 939 666 bytes zipped / 2.28 MB unzipped; each further
# release +51 KB zipped / +0.51 MB unzipped (its index and pickles: endpoints.json pre-parsed is most
# of it; files equal across releases are written once, and 1.38-1.42 share one CA directory); 5
# releases 1 093 528 / 3.80 MB. Issue 36 adds, per release, the pre-parsed latest service model and
# endpoint rule set of DynamoDB, S3 and Lambda (prepare_data.SERVICES; ~0.3 MB zipped / ~1.5-2 MB
# unzipped per release, less where releases share a file): 5 releases 2 460 355 bytes zipped /
# 11.2 MB unzipped (2026-11-28). Budget: 3 MB zipped (what a cold start downloads and unpacks: room
# for ~1-2 more releases) and 12 MB unzipped (4.8 % of the 250 MB a function and its layers share);
# past it, a release goes, oldest first.
SIZE_BUDGET = {"full": (35_000_000, 60_000_000), "hook": (3_000_000, 12_000_000)}


def over_budget(flavor, zipped, unzipped):
    """None when a ``flavor`` zip of these sizes is within SIZE_BUDGET, else the message that says
    what to do (the size tests and `make bump-sdk` print it)."""
    max_zipped, max_unzipped = SIZE_BUDGET[flavor]
    over = ["%s zipped (budget %s)" % (megabytes(zipped), megabytes(max_zipped))] if zipped > max_zipped else []
    if unzipped > max_unzipped:
        over.append("%s unzipped (budget %s)" % (megabytes(unzipped), megabytes(max_unzipped)))
    if not over:
        return None
    if flavor == "hook":
        advice = ("drop the oldest runtime SDK from lab/runtime-sdk/ (its CA directory and prepared data go "
                  "with it), or decide a new budget from new numbers")
    else:
        advice = ("keep the old pin and measure again: botocore's wheel sizes on PyPI over the last year and this "
                  "zip built from a year-old pin; trim what the zip carries that no function needs, or move "
                  "SIZE_BUDGET with those numbers in its comment and the commit, keeping a year of headroom and "
                  "staying under Lambda's 50 MB direct-upload limit")
    return ("the %s layer is over its size budget: %s (tools/packaging/build_layer.py SIZE_BUDGET, docs/build.md "
            "'Size budget'). What to do: %s" % (flavor, ", ".join(over), advice))
# The layer's own lock, and the runtimes' bundled SDKs (lab/runtime-sdk/: what python3.X on Lambda
# imports when the function bundles none).
LAYER_LOCK = os.path.join(REPO, "layer", "requirements.txt")
RUNTIME_SDK_DIR = os.path.join(REPO, "lab", "runtime-sdk")


def runtime_sdk_locks():
    return sorted(os.path.join(RUNTIME_SDK_DIR, name) for name in os.listdir(RUNTIME_SDK_DIR) if name.endswith(".txt"))


def flavor_sdks(flavor):
    """(CA locks, prepared locks) of a flavor: the SDKs whose default CA bundle gets a hashed directory
    (step 4) and those whose data gets prepared from their own install (step 5).

    One place for it, so that every entry point (``make layer``, ``make release``: both through
    tools/release/release.py) builds the same zip.  The full layer serves its own pinned SDK's bundle
    (the one its functions run with; ~0.2 MB each, which botocore's growth needs more) and prepares
    its own staged SDK (in ``build``, after trimming); the hook flavor also serves and prepares the
    runtimes' bundled SDKs, which are what it patches."""
    if flavor == "hook":
        runtimes = runtime_sdk_locks()
        return [LAYER_LOCK] + runtimes, runtimes
    return [LAYER_LOCK], []


def prepared_releases(target):
    """The botocore releases the staged tree holds prepared data for, sorted."""
    folder = os.path.join(target, prepare_data.OUTPUT)
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return sorted(name[len("botocore-"):-len(".pickle")] for name in names if name.startswith("botocore-"))


def build(uv, requirements, hook_dir, work, out, pythons, services=None, flavor="full", ca_sdks=(),
          prepared_sdks=()):
    """Run every step; returns a dict describing the result (also printed by main)."""
    if flavor not in FLAVORS:
        raise SystemExit("build_layer: unknown flavor %r (one of: %s)" % (flavor, ", ".join(FLAVORS)))
    if flavor == "hook" and services:
        raise SystemExit("build_layer: SERVICES trims the SDK's models; the hook flavor has no SDK")
    shutil.rmtree(work, ignore_errors=True)
    target = os.path.join(work, "python")
    os.makedirs(target)
    python = pythons[0] if pythons else sys.executable
    applied = []
    if flavor == "full":
        install_dependencies(uv, requirements, target, python)
        applied = apply_patches(target)
    copy_hook(hook_dir, target)
    prune(target)
    if services:
        trim_services(target, services)
    prune_records(target)
    ca_sources, licenses = (write_sdk_data(uv, ca_sdks, prepared_sdks, target, work, python)
                            if ca_sdks or prepared_sdks else ({}, {}))
    if flavor == "full":
        # From the final tree (pruned, trimmed): what the layer's botocore would list and parse at
        # client creation (tools/packaging/prepare_data.py; read by aws_keepalive/prepared.py).
        prepare_data.prepare(target)
    # Last, so that its RECORD lists what the build generated inside the package too.
    build_wheel.write_dist_info(hook_dir, target, third_party_licenses(flavor, licenses), layer_only_files(target))
    versions = compile_bytecode(pythons, target)
    refuse_build_paths(target, [REPO, os.path.abspath(work)])
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    files, unzipped = write_zip(work, out, repro_zip.zip_date_time())
    return {
        "zip": out,
        "sha256": repro_zip.sha256_of(out),
        "zipped": os.path.getsize(out),
        "unzipped": unzipped,
        "files": files,
        "bytecode": versions,
        "services": sorted(services) if services else None,
        "flavor": flavor,
        "ca_bundles": sorted(ca_sources),
        "ca_sources": ca_sources,
        "prepared": prepared_releases(target),
        "patches": applied,
    }


def report(result, rows_path):
    """Print what ``build`` returned (the fields `make layer` shows; tests/build/conftest.py reads them)
    and write it as rows to ``rows_path`` (build/layer.json, build/layer-hook.json: the sizes docs/ and
    README quote, rendered by make docs)."""
    print("layer:    %s" % result["zip"])
    print("sha256:   %s" % result["sha256"])
    print("zipped:   %s" % megabytes(result["zipped"]))
    print("unzipped: %s in %d files" % (megabytes(result["unzipped"]), result["files"]))
    print("bytecode: CPython %s" % ", ".join(result["bytecode"]))
    print("ca_dirs:  %s" % (", ".join(name[:12] for name in result["ca_bundles"]) or "none"))
    print("prepared: botocore %s" % (", ".join(result["prepared"]) or "none"))
    print("patches:  %s" % (", ".join(result["patches"]) or "none"))
    if result["flavor"] == "hook":
        print("flavor:   hook only (no boto3/botocore: patches the one the function imports)")
    else:
        print("services: %s" % (",".join(result["services"]) if result["services"] else "all"))
    if result["services"]:
        print("note:     trimmed to SERVICES: not the release's bytes (make release never trims)")
    write_rows(rows_path, [dict(result, zip=os.path.basename(result["zip"]))])
