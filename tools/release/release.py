"""`make release`: both layer zips, the wheel, SHA256SUMS and one CycloneDX SBOM per zip, reproducibly.

    build/release/
      aws-python-keepalive-<version>.zip             the full layer (pinned boto3/botocore + the hook)
      aws-python-keepalive-<version>.zip.cdx.json    its SBOM (tools/release/sbom.py)
      aws-python-keepalive-hook-<version>.zip        the hook alone
      aws-python-keepalive-hook-<version>.zip.cdx.json
      aws_python_keepalive-<version>-py3-none-any.whl
      SHA256SUMS                                     `sha256sum -c SHA256SUMS` checks every file above

Which interpreters compile the bytecode.  A ``.pyc`` is what its compiler made of the source, and
two builds of one minor may not agree byte for byte (3.13.0 and 3.13.5 differ in code generation),
so a zip compiled by whatever CPython a machine happens to have (pyenv, a distribution's python3,
uv's) is reproducible only on that machine.  A release therefore never uses them: it always
compiles with the pinned Maven Central builds (tools/interpreters/cpython-maven.sha256; install_python.ensure_pinned
installs them into their own folder, ``.venv/python-pinned/``, checking each jar's sha256 first), and
the SBOM names each one with that sha256.  ``make layer`` keeps using the machine's interpreters:
it is the developer's build, not the one shipped.  The pinned builds are linux-x86_64 only, so
``make release`` runs on an x86_64 Linux (any distribution; GitHub's ubuntu runners are).

Everything else that shapes the zips is pinned already: the wheels by their hashes in
layer/requirements.txt, uv by tools/interpreters/uv.txt, the zip metadata by tools/build/repro_zip.py.
"""

import argparse
import concurrent.futures
import os
import platform
import shutil
import sys

# Run as a script: the repository root on sys.path, so that tools.<room> and bench resolve.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
from tools.build import build_layer, build_wheel, layer_info, repro_zip  # noqa: E402
from tools.interpreters import install_python  # noqa: E402
from tools.release import sbom  # noqa: E402

SUMS = "SHA256SUMS"
LAYERS_JSON = "layers.json"  # written by tools/release/publish.py; not part of the release's files
PINNED_ROOT = os.path.join(".venv", "python-pinned")


def zip_name(flavor, version):
    return "%s-%s.zip" % (layer_info.NAME if flavor == "full" else layer_info.HOOK_NAME, version)


def layer_minors():
    """The CPython minors a layer serves, from its compatible runtimes (python3.10 -> 3.10)."""
    return [runtime[len("python"):] for runtime in layer_info.RUNTIMES]


def pinned_interpreters(root, mvn="mvn"):
    """[{'minor', 'python', 'version', 'coordinates', 'sha256'}] of the pinned builds, installed
    under ``root`` on first use (in parallel: each minor has its own lock)."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise SystemExit("release: the pinned CPython builds (tools/interpreters/cpython-maven.sha256) are "
                         "linux-x86_64 only; this is %s %s. Run make release on an x86_64 Linux "
                         "(CI's ubuntu runner is one)"
                         % (platform.system(), platform.machine()))

    def one(minor):
        try:
            python, origin = install_python.ensure_pinned(minor, root, mvn=mvn)
        except RuntimeError as error:
            raise SystemExit("release: no pinned CPython %s: %s" % (minor, error)) from error
        coordinates = install_python.maven_coordinates(minor)
        return {"minor": minor, "python": python, "version": install_python.MAVEN_BUILDS[minor].split("-")[0],
                "coordinates": coordinates, "sha256": install_python.maven_pins()[coordinates], "origin": origin}

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, layer_minors()))


def write_sums(out_dir, names):
    """SHA256SUMS in `sha256sum` format (two spaces, file name), sorted by name."""
    lines = ["%s  %s\n" % (repro_zip.sha256_of(os.path.join(out_dir, name)), name) for name in sorted(names)]
    with open(os.path.join(out_dir, SUMS), "w") as out:
        out.writelines(lines)


def release(uv, requirements, hook_dir, out_dir, interpreters):
    """Build everything into ``out_dir`` (emptied first, but for the ARNs publish.py recorded in
    layers.json); returns {file name: sha256}."""
    arns = os.path.join(out_dir, LAYERS_JSON)
    kept = open(arns, "rb").read() if os.path.isfile(arns) else None
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    if kept is not None:
        with open(arns, "wb") as out:
            out.write(kept)
    version = build_wheel.source_version(hook_dir)
    wheel = build_wheel.build(hook_dir, out_dir)
    wheel_sha256 = repro_zip.sha256_of(wheel)
    with open(requirements) as handle:
        locked = sbom.locked_packages(handle.read())
    pythons = [interpreter["python"] for interpreter in interpreters]
    names = [os.path.basename(wheel)]
    work = os.path.join(os.path.dirname(os.path.abspath(out_dir)), "release-work")
    for flavor in build_layer.FLAVORS:
        out = os.path.join(out_dir, zip_name(flavor, version))
        result = build_layer.build(uv, requirements, hook_dir, os.path.join(work, flavor), out, pythons,
                                   flavor=flavor)
        bom = sbom.document(out, result["sha256"], flavor, version, wheel_sha256, locked, interpreters,
                            layer_info.description_from_zip(out))
        sbom.write(bom, out + ".cdx.json")
        names += [os.path.basename(out), os.path.basename(out) + ".cdx.json"]
    shutil.rmtree(work, ignore_errors=True)
    write_sums(out_dir, names)
    return {name: repro_zip.sha256_of(os.path.join(out_dir, name)) for name in sorted(names + [SUMS])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uv", required=True, help="uv executable (installs the locked wheels)")
    parser.add_argument("--requirements", default="layer/requirements.txt")
    parser.add_argument("--hook", default="layer")
    parser.add_argument("--out", default=os.path.join("build", "release"))
    parser.add_argument("--pinned-root", default=PINNED_ROOT, help="where the pinned CPython builds are installed")
    parser.add_argument("--mvn", default="mvn")
    args = parser.parse_args(argv)
    interpreters = pinned_interpreters(args.pinned_root, args.mvn)
    for interpreter in interpreters:
        print("bytecode: CPython %-7s %s (sha256 %s)" % (interpreter["version"], interpreter["coordinates"],
                                                       interpreter["sha256"][:16]))
    files = release(args.uv, args.requirements, args.hook, args.out, interpreters)
    for name, digest in files.items():
        print("%s  %s" % (digest, os.path.join(args.out, name)))


if __name__ == "__main__":
    main()
