"""`make release`: both layer zips, the wheel, SHA256SUMS and one CycloneDX SBOM per zip, reproducibly.

    build/release/
      aws-python-keepalive-<version>.zip             the full layer (pinned boto3/botocore + the hook)
      aws-python-keepalive-<version>.zip.cdx.json    its SBOM (tools/release/sbom.py)
      aws-python-keepalive-hook-<version>.zip        the hook alone
      aws-python-keepalive-hook-<version>.zip.cdx.json
      aws_python_keepalive-<version>-py3-none-any.whl
      SHA256SUMS                                     `sha256sum -c SHA256SUMS` checks every file above

One build.  ``make layer`` (one flavor, ``--flavor``) and ``make release`` (both) run this module and
build each zip with the same call (``build_zip``): the same interpreters, the same CA directories
and prepared data (build_layer.flavor_sdks), so build/layer.zip and build/layer-hook.zip are byte
for byte the release's zips, and every test and benchmark that uses them measures what ships.  Only
``make layer SERVICES=...`` differs: a trimmed zip is by definition not the release's (it says so).

Which interpreters compile the bytecode.  A ``.pyc`` is what its compiler made of the source, and
two builds of one minor may not agree byte for byte (3.13.0 and 3.13.5 differ in code generation),
so a zip compiled by whatever CPython a machine happens to have (pyenv, a distribution's python3,
uv's) is reproducible only on that machine.  So no zip is ever compiled with them: always with the
pinned Maven Central builds (tools/interpreters/cpython-maven.sha256; install_python.ensure_pinned
installs them into their own folder, ``.venv/python-pinned/``, and checks each jar against its pin
on every build), and the SBOM names each one with that sha256.  The pinned builds are linux-x86_64
only, so ``make layer`` and ``make release`` run on an x86_64 Linux (any distribution; GitHub's
ubuntu runners are) and refuse elsewhere, saying so: a zip compiled by another machine's
interpreters would be a zip no test has seen.  Elsewhere, use a release's zip (docs/build.md).

A failed release leaves the previous ``build/release/`` as it was: everything is built into a
fresh folder beside it, which replaces it only when complete.

Everything else that shapes the zips is pinned already: the wheels by their hashes in
layer/requirements.txt, uv by tools/interpreters/uv.txt, the zip metadata by tools/packaging/repro_zip.py.
"""

import argparse
import concurrent.futures
import os
import platform
import shutil
import subprocess
import sys
import tempfile

# Run as a script: the repository root on sys.path, so that tools.<room> and bench resolve.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
from tools.packaging import build_layer, build_wheel, layer_info, repro_zip  # noqa: E402
from tools.interpreters import install_python  # noqa: E402
from tools.release import contents, sbom  # noqa: E402

SUMS = "SHA256SUMS"
LAYERS_JSON = "layers.json"  # written by tools/release/publish.py; not part of the release's files
PINNED_ROOT = os.path.join(".venv", "python-pinned")
HOOK_DIR = os.path.join(REPO, "layer")


def zip_name(flavor, version):
    return "%s-%s.zip" % (layer_info.NAME if flavor == "full" else layer_info.HOOK_NAME, version)


def layer_minors():
    """The CPython minors a layer serves, from its compatible runtimes (python3.10 -> 3.10)."""
    return [runtime[len("python"):] for runtime in layer_info.RUNTIMES]


def pinned_interpreters(root, mvn="mvn", pins_path=None):
    """[{'minor', 'python', 'version', 'coordinates', 'sha256'}] of the pinned builds, installed
    under ``root`` on first use and checked against the pins (``pins_path``, default the committed
    tools/interpreters/cpython-maven.sha256) on every call (in parallel: each minor has its own lock)."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise SystemExit("release: the pinned CPython builds (tools/interpreters/cpython-maven.sha256) that compile "
                         "every layer zip's bytecode are linux-x86_64 only; this is %s %s. Build on an x86_64 "
                         "Linux (CI's ubuntu runner is one), or publish a built zip with nothing rebuilt: "
                         "make publish ZIP=\"$HOME/Downloads/aws-python-keepalive-<version>.zip\" (README "
                         "'Get an ARN')" % (platform.system(), platform.machine()))

    def one(minor):
        try:
            python, origin, digest = install_python.ensure_pinned(minor, root, mvn=mvn, pins_path=pins_path)
        except RuntimeError as error:
            raise SystemExit("release: no pinned CPython %s: %s" % (minor, error)) from error
        return {"minor": minor, "python": python, "version": install_python.MAVEN_BUILDS[minor].split("-")[0],
                "coordinates": install_python.maven_coordinates(minor), "sha256": digest, "origin": origin}

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, layer_minors()))


def build_zip(uv, flavor, out, work, interpreters, services=None):
    """One layer zip: what ``make layer`` and ``make release`` both call (build_layer.build with the
    flavor's SDK inputs and the pinned interpreters)."""
    ca_sdks, prepared_sdks = build_layer.flavor_sdks(flavor)
    return build_layer.build(uv, build_layer.LAYER_LOCK, HOOK_DIR, work, out,
                             [interpreter["python"] for interpreter in interpreters], services=services,
                             flavor=flavor, ca_sdks=ca_sdks, prepared_sdks=prepared_sdks)


def write_sums(out_dir, names):
    """SHA256SUMS in `sha256sum` format (two spaces, file name), sorted by name."""
    lines = ["%s  %s\n" % (repro_zip.sha256_of(os.path.join(out_dir, name)), name) for name in sorted(names)]
    with open(os.path.join(out_dir, SUMS), "w") as out:
        out.writelines(lines)


def release(uv, out_dir, interpreters):
    """Build everything into a fresh folder beside ``out_dir`` and put it in ``out_dir``'s place
    only when complete (the ARNs publish.py recorded in layers.json carried over); returns {file
    name: sha256}.  Any failure leaves ``out_dir`` as it was."""
    out_dir = os.path.abspath(out_dir)
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    fresh = tempfile.mkdtemp(prefix=".release-new-", dir=parent)
    try:
        names = build_release(uv, fresh, interpreters)
        arns = os.path.join(out_dir, LAYERS_JSON)
        if os.path.isfile(arns):
            shutil.copyfile(arns, os.path.join(fresh, LAYERS_JSON))
        os.chmod(fresh, 0o755)  # mkdtemp's 0700 would be the folder's mode, umask or not
        swap(fresh, out_dir)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    return {name: repro_zip.sha256_of(os.path.join(out_dir, name)) for name in sorted(names + [SUMS])}


def swap(fresh, out_dir):
    """Put ``fresh`` where ``out_dir`` is: the old folder is renamed aside first and deleted last."""
    old = None
    if os.path.exists(out_dir):
        old = tempfile.mkdtemp(prefix=".release-old-", dir=os.path.dirname(out_dir))
        os.rename(out_dir, os.path.join(old, "release"))
    os.rename(fresh, out_dir)
    if old:
        shutil.rmtree(old)


def source_date_epoch():
    """SOURCE_DATE_EPOCH when set, else the time of the source's last commit (reproducible-builds.org's
    convention): the SBOMs' timestamp, the same from every clone of one commit.  Only the SBOMs: the
    zips keep their fixed 1980 dates unless SOURCE_DATE_EPOCH is set, so that `make layer` (which
    writes no SBOM) gives the release's bytes."""
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value:
        return int(value)
    completed = subprocess.run(["git", "-C", REPO, "log", "-1", "--format=%ct"], capture_output=True, text=True)
    if completed.returncode != 0 or not completed.stdout.strip():
        raise SystemExit("release: set SOURCE_DATE_EPOCH (not a git checkout, so the source's date is unknown): "
                         "the SBOMs' timestamp")
    return int(completed.stdout.strip())


def build_release(uv, out_dir, interpreters):
    """The release's files into the empty ``out_dir``; returns their names (SHA256SUMS last written)."""
    version = build_wheel.source_version(HOOK_DIR)
    wheel = build_wheel.build(HOOK_DIR, out_dir)
    wheel_sha256 = repro_zip.sha256_of(wheel)
    with open(build_layer.LAYER_LOCK) as handle:
        locked = sbom.locked_packages(handle.read())
    names = [os.path.basename(wheel)]
    work = os.path.join(out_dir, ".work")
    for flavor in build_layer.FLAVORS:
        out = os.path.join(out_dir, zip_name(flavor, version))
        result = build_zip(uv, flavor, out, os.path.join(work, flavor), interpreters)
        bom = sbom.document(out, result["sha256"], flavor, version, wheel_sha256, locked, interpreters,
                            layer_info.description_from_zip(out), epoch=source_date_epoch(),
                            ca_sources=result["ca_sources"],
                            patches=build_layer.applied_patches(result))
        problems = contents.unaccounted(out, bom)
        if problems:
            raise SystemExit("release: %s carries %d file(s) that neither its RECORDs nor its SBOM account for "
                             "(tools/release/contents.py):\n  %s" % (os.path.basename(out), len(problems),
                                                                     "\n  ".join(problems[:20])))
        sbom.write(bom, out + ".cdx.json")
        names += [os.path.basename(out), os.path.basename(out) + ".cdx.json"]
    shutil.rmtree(work)
    write_sums(out_dir, names)
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uv", required=True, help="uv executable (installs the locked wheels)")
    parser.add_argument("--out", default=os.path.join("build", "release"), help="the release folder")
    parser.add_argument("--flavor", choices=build_layer.FLAVORS,
                        help="make layer: build this flavor's zip only, into --zip")
    parser.add_argument("--zip", help="with --flavor: the zip to write (its sizes go beside it as .json)")
    parser.add_argument("--services", default="",
                        help="with --flavor full: comma-separated botocore services to keep (a trimmed zip)")
    parser.add_argument("--pinned-root", default=PINNED_ROOT, help="where the pinned CPython builds are installed")
    parser.add_argument("--mvn", default="mvn")
    args = parser.parse_args(argv)
    if args.flavor and not args.zip:
        parser.error("--flavor needs --zip")
    interpreters = pinned_interpreters(args.pinned_root, args.mvn)
    for interpreter in interpreters:
        print("pinned:   CPython %-7s %s (sha256 %s)" % (interpreter["version"], interpreter["coordinates"],
                                                       interpreter["sha256"][:16]))
    if args.flavor:
        services = [name.strip() for name in args.services.split(",") if name.strip()]
        work = os.path.splitext(args.zip)[0]
        result = build_zip(args.uv, args.flavor, args.zip, work, interpreters, services)
        build_layer.report(result, work + ".json")
        return
    files = release(args.uv, args.out, interpreters)
    for name, digest in files.items():
        print("%s  %s" % (digest, os.path.join(args.out, name)))


if __name__ == "__main__":
    main()
