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
2. copy the hook (``aws_keepalive/``, ``aws_keepalive.pth``, ``usercustomize.py``) next to them, with
   the package's ``*.dist-info`` (the wheel's METADATA and entry points, written by
   tools/packaging/build_wheel.py) so that importlib.metadata, and OpenTelemetry's
   ``opentelemetry_pre_instrument`` entry point lookup, find the hook on /opt/python;
3. prune what a function never needs (installer caches, console scripts, test folders) and, for a
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
   the imported botocore by release and by one listing of its data folder.  Then compile
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
# Installer leftovers at the root of an install --target folder (console scripts).
PRUNED_ROOT_DIRS = {"bin"}
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


def write_sdk_data(uv, ca_locks, prepared_locks, target, work, python):
    """Steps 4 and 5 for SDKs the layer does not ship but knows (installed from their hash-pinned
    locks, each once): one hashed CA directory per distinct default bundle of ``ca_locks``, and the
    prepared data (tools/packaging/prepare_data.py) of each SDK of ``prepared_locks``.  Returns the bundles'
    sha256 names, sorted."""
    ca_root = os.path.join(target, "aws_keepalive", "ca")
    names = set()
    for index, lock in enumerate(dict.fromkeys(list(ca_locks) + list(prepared_locks))):
        site = os.path.join(work, "sdk", str(index))
        # Only a few files are read from it: link from uv's cache rather than copy.
        install_dependencies(uv, lock, site, python, link_mode="hardlink")
        if lock in ca_locks:
            names.add(os.path.basename(ca_dir.build(default_bundle(site), ca_root)))
        if lock in prepared_locks:
            prepare_data.prepare(site, os.path.join(target, prepare_data.OUTPUT))
    shutil.rmtree(os.path.join(work, "sdk"), ignore_errors=True)
    return sorted(names)


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
    (the one its functions run with; ~0.2 MB each, and its zip is near the size budget) and prepares
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
    build_wheel.write_dist_info(hook_dir, target)
    prune(target)
    if services:
        trim_services(target, services)
    prune_records(target)
    ca_bundles = write_sdk_data(uv, ca_sdks, prepared_sdks, target, work, python) if ca_sdks or prepared_sdks else []
    if flavor == "full":
        # From the final tree (pruned, trimmed): what the layer's botocore would list and parse at
        # client creation (tools/packaging/prepare_data.py; read by aws_keepalive/prepared.py).
        prepare_data.prepare(target)
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
        "ca_bundles": ca_bundles,
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
