"""Move the full layer's SDK pin to the newest (or a given) boto3/botocore/s3transfer release
(make bump-sdk [VERSION=x.y.z]).

The full layer exists to ship a botocore newer than the runtime's, so every botocore release should
reach it within a day, with no hand edit. One command does what a bump needs, in this order:

1. **resolve**: ``uv pip compile`` of ``layer/requirements.in`` exactly as ``make lock`` writes
   ``layer/requirements.txt`` (same flags, same header, hashes), with only the SDK set allowed to move
   (``-P boto3 -P botocore -P s3transfer``; ``-P botocore==VERSION`` for a given release, boto3 and
   s3transfer follow). The other pins (urllib3, jmespath, ...) stay where ``make lock`` put them:
   a bump is an SDK change and is judged as one. The compile runs in a scratch folder holding copies
   at the same relative paths, so that an unchanged pin leaves the real file untouched (not even its
   time: make would rebuild every venv that lists it).
2. **unchanged**: the same versions as the committed lock -> say so, exit 0, change nothing (the
   hashes alone may differ: an index serving fewer files of the same release, a wheel added later;
   that is no new release).
3. **re-lock what follows the pin**: the locks that take ``layer/requirements.txt`` as a constraint
   (``make lock-compat lock-demo lock-durable``) and template.yaml's description (layer_info).
4. **rebuild**: both layer zips (their CA directories and prepared data are made from the pin),
   the SDK defaults table (``make sdk-defaults``), ``make docs`` (README's sizes); then the **size
   budget**: a zip over tools/packaging/build_layer.py's SIZE_BUDGET refuses the bump at once, with
   the message that says what to do (the suites would fail test_size_budget anyway, an hour later);
5. **judge**: the suites that judge an SDK change (``make test-build test-hook-3.12 test-compat
   test-upstream``: test-compat runs botocore's own unit tests from the pinned sdist with the layer
   on; test-upstream runs botocore's, s3transfer's and boto3's own suites on the full layer's tree,
   where the declared patches of layer/patches/ are applied: a patch that no longer fits the new pin
   already stops the rebuild, one that fits but breaks it fails here); ``--suites "test
   test-upstream"``, what the scheduled workflow's tag mode passes: the release's own suite, since it
   tags a release, and the SDK's suites on the patched tree. A failing suite
   restores every file the bump wrote and names the failing tests; exit 1.
6. **say what changed**: the two botocore data folders compared (services added and removed,
   service models changed, defaults-mode values, Lambda's regions) and the botocore modules the hook
   patches (args.py's ``_compute_socket_options``, httpsession.py, endpoint.py, configprovider.py),
   printed and written as JSON (``--report``) for the scheduled workflow's pull request.

Standard library only (it runs on the tool interpreter); uv and make are passed in.
"""

import argparse
import difflib
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from tools.packaging import build_layer, layer_info  # noqa: E402

LOCK_IN = "layer/requirements.in"
HOOK_INIT = "layer/aws_keepalive/__init__.py"
LOCK = "layer/requirements.txt"
# The release set that moves together: boto3 pins botocore to one minor, s3transfer follows boto3.
SDK = ("boto3", "botocore", "s3transfer")
# The compile flags of `make lock`'s line for layer/requirements.txt (mk/lock.mk), which uv writes
# into the file's header: the same flags give the same header, so a bump's diff is the pins alone.
COMPILE = ("pip", "compile", "-q", "--universal", "--python-version", "3.10", "--generate-hashes")
# Locks that take layer/requirements.txt as a constraint (mk/lock.mk): re-locked after the pin moves.
FOLLOWING_LOCK_TARGETS = ("lock-compat", "lock-demo", "lock-durable")
FOLLOWING_FILES = ("tests/compat/requirements.txt", "tests/compat/botocore-sdist.txt", "tests/upstream/sdists.txt",
                   "lab/demo-requirements.txt", "lab/experiments/durable/function-requirements.txt",
                   "lab/experiments/durable/runner-requirements.txt", "template.yaml")
# The suites that judge an SDK change (mk/test.mk).
SUITES = ("test-build", "test-hook-3.12", "test-compat", "test-upstream")
# botocore modules whose code the hook patches or reads (layer/aws_keepalive/patch.py): a change
# in one of them is what a reviewer of a bump must read first.
HOOK_MODULES = ("args.py", "httpsession.py", "endpoint.py", "configprovider.py")
PIN_LINE = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", re.MULTILINE)


# --- the pin ---------------------------------------------------------------------------------------

def pins(lock_text):
    """{name: version} of every ``name==version`` line of a hash-pinned requirements file."""
    return {name.lower(): version for name, version in PIN_LINE.findall(lock_text)}


def upgrade_arguments(version=None):
    """uv's ``-P`` arguments: the SDK set free to move, botocore held to ``version`` when one is given."""
    arguments = []
    for name in SDK:
        arguments += ["-P", "%s==%s" % (name, version) if name == "botocore" and version else name]
    return arguments


def resolve(uv, repo=REPO, version=None, index_url=None):
    """The text ``layer/requirements.txt`` would have with the SDK set moved (nothing written in ``repo``)."""
    with tempfile.TemporaryDirectory(prefix="bump-sdk-") as scratch:
        os.makedirs(os.path.join(scratch, "layer"))
        for name in (LOCK_IN, LOCK):
            shutil.copyfile(os.path.join(repo, name), os.path.join(scratch, name))
        argv = [uv, *COMPILE, *upgrade_arguments(version), LOCK_IN, "-o", LOCK]
        if index_url:
            argv[3:3] = ["--index-url", index_url]
        completed = subprocess.run(argv, cwd=scratch, capture_output=True, text=True)
        if completed.returncode != 0:
            raise SystemExit("bump-sdk: uv could not resolve %s: %s" % (
                "botocore==%s" % version if version else "the newest SDK set", completed.stderr.strip()))
        with open(os.path.join(scratch, LOCK)) as handle:
            return handle.read()


def describe_pins(before, after):
    """'boto3 1.44.5 -> 1.44.8, ...' for the packages whose pin moved (or 'unchanged: ...')."""
    moved = ["%s %s -> %s" % (name, before.get(name, "-"), after.get(name, "-"))
             for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]
    if moved:
        return ", ".join(moved)
    return "unchanged: " + ", ".join("%s %s" % (name, after[name]) for name in SDK if name in after)


# --- what changed between two botocore releases ------------------------------------------------------

def install_botocore(uv, lock_text, target):
    """botocore alone, from the hash-pinned line of ``lock_text``, into ``target`` (uv's cache makes a
    second call free); returns the package folder."""
    match = re.search(r"^botocore==.*?(?=^\S|\Z)", lock_text, re.MULTILINE | re.S)
    if not match:
        raise SystemExit("bump-sdk: the lock pins no botocore")
    os.makedirs(target, exist_ok=True)
    requirement = os.path.join(target, "botocore.txt")
    with open(requirement, "w") as handle:
        handle.write(match.group(0))
    subprocess.run([uv, "pip", "install", "-q", "--target", os.path.join(target, "site"), "--no-deps",
                    "--require-hashes", "--python-version", "3.12", "-r", requirement], check=True)
    return os.path.join(target, "site", "botocore")


def _services(data_dir):
    """{service: {relative path: bytes}} of the service folders (a folder with a dated model inside)."""
    services = {}
    for service in sorted(os.listdir(data_dir)):
        folder = os.path.join(data_dir, service)
        if not os.path.isdir(folder):
            continue
        files = {}
        for root, _dirs, names in os.walk(folder):
            for name in names:
                path = os.path.join(root, name)
                with open(path, "rb") as handle:
                    content = handle.read()
                # Compared decompressed: a gzip header carries its writing time, so every
                # release's .json.gz differs from the last even when the model does not.
                files[os.path.relpath(path, folder)] = gzip.decompress(content) if name.endswith(".gz") else content
        if any(path.endswith("service-2.json") or path.endswith("service-2.json.gz") for path in files):
            services[service] = files
    return services


def _json(path):
    if not os.path.exists(path):
        return {}
    with open(path) as handle:
        return json.load(handle)


def _defaults(data_dir):
    """{'<mode>.<setting>': value} of sdk-default-configuration.json (the defaults modes' values),
    and the base settings as 'base.<setting>'."""
    document = _json(os.path.join(data_dir, "sdk-default-configuration.json"))
    flat = {"base." + key: value for key, value in document.get("base", {}).items()}
    for mode, overrides in document.get("modes", {}).items():
        for key, change in overrides.items():
            flat["%s.%s" % (mode, key)] = change
    return flat


def _lambda_regions(data_dir):
    regions = set()
    for partition in _json(os.path.join(data_dir, "endpoints.json")).get("partitions", []):
        regions |= set(partition.get("services", {}).get("lambda", {}).get("endpoints", {}))
    return regions


def data_changes(old_package, new_package):
    """What a reader of the bump needs, from two botocore package folders: services added/removed,
    services whose model files changed, defaults-mode values changed, Lambda regions added, and for
    each module the hook touches, how many lines changed."""
    old_data, new_data = os.path.join(old_package, "data"), os.path.join(new_package, "data")
    old_services, new_services = _services(old_data), _services(new_data)
    old_defaults, new_defaults = _defaults(old_data), _defaults(new_data)
    modules = {}
    for module in HOOK_MODULES:
        with open(os.path.join(old_package, module)) as old, open(os.path.join(new_package, module)) as new:
            diff = list(difflib.unified_diff(old.read().splitlines(), new.read().splitlines(), lineterm="", n=0))
        modules[module] = sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))
    sources = {}
    for package in (old_package, new_package):
        for name in sorted(os.listdir(package)):
            if name.endswith(".py"):
                with open(os.path.join(package, name), "rb") as handle:
                    sources.setdefault(name, []).append(handle.read())
    return {
        "modules_changed": sorted(name for name, texts in sources.items() if len(texts) != 2 or texts[0] != texts[1]),
        "services_added": sorted(set(new_services) - set(old_services)),
        "services_removed": sorted(set(old_services) - set(new_services)),
        "services_changed": sorted(name for name in set(old_services) & set(new_services)
                                   if old_services[name] != new_services[name]),
        "service_count": [len(old_services), len(new_services)],
        "defaults_changed": {key: [old_defaults.get(key), new_defaults.get(key)]
                             for key in sorted(set(old_defaults) | set(new_defaults))
                             if old_defaults.get(key) != new_defaults.get(key)},
        "lambda_regions_added": sorted(_lambda_regions(new_data) - _lambda_regions(old_data)),
        "hook_modules_lines_changed": modules,
    }


def format_changes(changes):
    """The lines the bump prints (and the pull request's body carries)."""
    lines = ["services: %d -> %d; added: %s; removed: %s; models changed: %d (%s)" % (
        changes["service_count"][0], changes["service_count"][1],
        ", ".join(changes["services_added"]) or "none", ", ".join(changes["services_removed"]) or "none",
        len(changes["services_changed"]), ", ".join(changes["services_changed"]) or "none")]
    defaults = changes["defaults_changed"]
    lines.append("defaults modes (sdk-default-configuration.json): %s" % (
        "; ".join("%s %s -> %s" % (key, json.dumps(old), json.dumps(new)) for key, (old, new) in defaults.items())
        or "unchanged"))
    lines.append("Lambda regions added (endpoints.json): %s" % (", ".join(changes["lambda_regions_added"]) or "none"))
    touched = ["%s (%d lines)" % (module, count) for module, count in changes["hook_modules_lines_changed"].items()
               if count]
    lines.append("botocore modules the hook patches, changed: %s" % (", ".join(touched) or "none (%s)" % ", ".join(
        HOOK_MODULES)))
    lines.append("botocore modules changed (top level): %s" % (", ".join(changes["modules_changed"]) or "none"))
    return lines


# --- rebuild and judge ------------------------------------------------------------------------------

def failed_tests(output):
    """The FAILED/ERROR lines of pytest's short summary in a suite's output."""
    return [line.strip() for line in output.splitlines() if re.match(r"(FAILED|ERROR) \S", line.strip())]


def run_make(make, targets, repo, log_path=None):
    """make ``targets`` in the repository, its output streamed and kept; returns (exit code, output)."""
    process = subprocess.Popen([*make, *targets], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    output = []
    for line in process.stdout:
        sys.stdout.write(line)
        output.append(line)
    process.wait()
    text = "".join(output)
    if log_path:
        with open(log_path, "w") as handle:
            handle.write(text)
    return process.returncode, text


def snapshot(repo, paths):
    """{path: bytes or None} of the files a bump may write, to put back when it fails."""
    saved = {}
    for path in paths:
        full = os.path.join(repo, path)
        saved[path] = open(full, "rb").read() if os.path.exists(full) else None
    return saved


def restore(saved, repo):
    for path, content in saved.items():
        full = os.path.join(repo, path)
        if content is None:
            if os.path.exists(full):
                os.remove(full)
            continue
        with open(full, "rb") as handle:
            if handle.read() == content:
                continue
        with open(full, "wb") as handle:
            handle.write(content)


# What is made from the pin: the two zips (CA directories, prepared data), the table of defaults the
# full layer's SDK changes against the runtimes' (docs/build.md, tools/packaging/sdk_defaults.py), and
# README's numbers.
REBUILD = (("layer", "FLAVOR=full"), ("layer", "FLAVOR=hook"), ("sdk-defaults",), ("docs",))


# The sizes `make layer` writes (build_layer.report) for each flavor, read by the size budget step.
SIZE_ROWS = (("full", "build/layer.json"), ("hook", "build/layer-hook.json"))


def size_problems(repo):
    """The rebuilt zips' size budget (build_layer.over_budget) from the sizes `make layer` wrote: a
    message per flavor over it, or per file missing."""
    problems = []
    for flavor, relative in SIZE_ROWS:
        path = os.path.join(repo, relative)
        try:
            with open(path) as handle:
                (row,) = json.load(handle)["rows"]
            message = build_layer.over_budget(flavor, row["zipped"], row["unzipped"])
        except (OSError, ValueError, KeyError) as error:
            message = "no %s layer sizes in %s (%s): the rebuild wrote none" % (flavor, relative, error)
        if message:
            problems.append(message)
    return problems


def write_report(path, report):
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as handle:
        json.dump(report, handle, indent=1, sort_keys=True)
        handle.write("\n")


def bump(uv, make, version=None, index_url=None, work="build/bump-sdk", report_path=None, suites=SUITES,
         repo=REPO):
    """The whole bump; returns the process exit code (0: unchanged or bumped and green)."""
    started = time.monotonic()
    with open(os.path.join(repo, LOCK)) as handle:
        old_text = handle.read()
    new_text = resolve(uv, repo, version=version, index_url=index_url)
    old_pins, new_pins = pins(old_text), pins(new_text)
    report = {"old": {name: old_pins.get(name) for name in SDK}, "new": {name: new_pins.get(name) for name in SDK},
              "changed": new_pins != old_pins, "suites": {}, "changes": None}
    if not report["changed"]:
        print("bump-sdk: the pin is %s; nothing to do" % describe_pins(old_pins, new_pins))
        report["seconds"] = round(time.monotonic() - started, 1)
        write_report(report_path, report)
        return 0
    print("bump-sdk: %s" % describe_pins(old_pins, new_pins))
    work = os.path.join(repo, work)
    shutil.rmtree(work, ignore_errors=True)
    changes = data_changes(install_botocore(uv, old_text, os.path.join(work, "old")),
                           install_botocore(uv, new_text, os.path.join(work, "new")))
    report["changes"] = changes
    for line in format_changes(changes):
        print("bump-sdk: " + line)
    saved = snapshot(repo, (LOCK, *FOLLOWING_FILES) + tuple(
        os.path.relpath(os.path.join(root, name), repo) for root, _dirs, names in os.walk(os.path.join(repo, "docs"))
        for name in names) + ("README.md",))
    with open(os.path.join(repo, LOCK), "w") as handle:
        handle.write(new_text)
    # template.yaml's description names the versions (what `make lock` does after its compile).
    layer_info.main(["--requirements", os.path.join(repo, LOCK), "--init", os.path.join(repo, HOOK_INIT),
                     "--write-template", os.path.join(repo, "template.yaml")])
    steps = [("re-lock", [*FOLLOWING_LOCK_TARGETS])]
    steps += [("rebuild " + " ".join(targets), list(targets)) for targets in REBUILD]
    steps += [("size budget", None)]
    steps += [(suite, [suite]) for suite in suites]
    failed = []
    for name, targets in steps:
        if targets is None:
            problems = size_problems(repo)
            report["size_budget"] = problems
            for problem in problems:
                print("bump-sdk: %s" % problem, file=sys.stderr)
            if problems:
                failed.append(name)
                break
            continue
        log_path = os.path.join(work, re.sub(r"[^\w.-]+", "_", name) + ".log")
        code, output = run_make(make, targets, repo, log_path)
        if name in suites:
            report["suites"][name] = {"exit": code, "failed": failed_tests(output)}
        if code != 0:
            failed.append(name)
            if name not in suites:
                break
    report["seconds"] = round(time.monotonic() - started, 1)
    if failed:
        restore(saved, repo)
        report["refused"] = failed
        write_report(report_path, report)
        print("bump-sdk: REFUSED %s: %s failed; the old pin is restored (%s)" % (
            describe_pins(old_pins, new_pins), ", ".join(failed), LOCK), file=sys.stderr)
        for name in failed:
            for line in report["suites"].get(name, {}).get("failed", []):
                print("bump-sdk:   %s: %s" % (name, line), file=sys.stderr)
        print("bump-sdk: logs in %s" % os.path.relpath(work, repo), file=sys.stderr)
        return 1
    write_report(report_path, report)
    print("bump-sdk: pinned %s; %s green in %.0f s" % (
        describe_pins(old_pins, new_pins), ", ".join(suites), report["seconds"]))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uv", required=True)
    parser.add_argument("--make", default="make --no-print-directory", help="the make command (split on spaces)")
    parser.add_argument("--version", default="", help="the botocore release to pin (default: the newest)")
    parser.add_argument("--index-url", default="", help="the package index (default: uv's, PyPI)")
    parser.add_argument("--report", default="", help="write what happened as JSON here")
    parser.add_argument("--work", default="build/bump-sdk", help="logs and the two botocore trees")
    parser.add_argument("--repo", default=REPO, help="the checkout to bump (default: this one)")
    parser.add_argument("--suites", default=" ".join(SUITES),
                        help="the make targets that judge the bump (space-separated; `test`: the release's suite)")
    args = parser.parse_args(argv)
    return bump(os.path.abspath(args.uv), args.make.split(), version=args.version or None,
                index_url=args.index_url or None, work=args.work, report_path=args.report or None,
                suites=tuple(args.suites.split()) or SUITES, repo=os.path.abspath(args.repo))


if __name__ == "__main__":
    sys.exit(main())
