"""Install a CPython minor that tools/interpreters/find_python.py does not find, into the folder the Makefile owns.

    tools/interpreters/install-python 3.14                   found (find_python), else installed: prints its path
    tools/interpreters/install-python --report 3.9 3.10 ...  the same for each, one line each: where it came from

``.venv/python/<minor>/`` (``INSTALL_ROOT``) is the fourth place find_python looks, after pyenv,
``python3.X`` on PATH and uv's own folder, so an interpreter installed here is found by every
later make run, the lab's stand-in (lab/standin/runtime_prefix.py) and the tests.  Two sources, in order:

1. ``uv python install`` (python-build-standalone builds, downloaded from GitHub): a user's
   machine with internet.  uv is the repo's ``.venv/uv/bin/uv`` or one on PATH.  The build lands
   in ``.venv/python/uv/`` and ``.venv/python/<minor>`` becomes a symlink to it.
2. The self-contained builds the JavaCPP Presets publish on Maven Central as
   ``org.bytedeco:cpython:<py>-<presets>:jar:linux-x86_64`` (``MAVEN_BUILDS``), fetched with mvn
   into the local Maven repository (``maven_repository``: $MAVEN_REPOSITORY, else $HOME/.m2/repository)
   and unpacked: the machines this repo runs on reach PyPI and Maven Central but not GitHub.  The
   jar is the build's prefix under ``org/bytedeco/cpython/linux-x86_64/`` with a few quirks a jar
   brings (``unpack_maven``): no symlinks and no file modes, libpython and libffi beside ``bin/``
   (the binaries' RUNPATH is ``$ORIGIN/../lib/``, among others), scripts whose shebang names the builder's folder.

The Maven builds link OpenSSL statically, configured with the builder's folder as OPENSSLDIR, so
their ``ssl`` finds no CA certificates on any other machine (``ssl.get_default_verify_paths()``
names /home/runner/...; pip, urllib and aiohttp then fail every HTTPS handshake).  The fix is
made where a distribution makes it, in the build: ``point_openssl_at_system`` rewrites that
compiled-in folder, in the ``.so`` files that carry it, to the system's own (Debian's
/usr/lib/ssl, whose cert.pem is the system bundle).  Not SSL_CERT_FILE in the environment or a
sitecustomize in the prefix: either would reach every process started from it -- the lab's Lambda
stand-in, the hook tests -- and change what they see (an extra variable in os.environ, a module
imported at startup) where the managed runtime has neither.

Idempotent: a stamp (``.installed``) names where the prefix came from; a file lock per minor
keeps parallel makes from installing it twice, and the stamp is written last, so a half-made
prefix (an interrupted run) is made again.  Stdlib only, like find_python (it runs on the
machine's own python3).

The pinned builds (``ensure_pinned``: the interpreters that compile every layer zip's bytecode)
are checked file by file, not trusted by their stamp: at install, a manifest (``.manifest-sha256``:
the sha256 of every file, the target of every link) is written after the prefix is complete and
checked; every later ``ensure_pinned`` hashes the prefix again and compares.  A file edited,
added or removed since (a ``py_compile.py`` changed by hand would compile every release from then
on) makes it install the prefix again from its verified jar, saying which files differed.  Hashing
a prefix (~100 MB, ~4 300 files) costs about a second; ``make layer`` and ``make release`` pay it
once per minor, in parallel.
"""

import argparse
import fcntl
import glob
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import zipfile

# Run as a script: the repository root on sys.path, so that tools.<room> and bench resolve.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
from tools.interpreters import find_python  # noqa: E402

INSTALL_ROOT = find_python.INSTALL_ROOT
STAMP = ".installed"
# In a Maven prefix: the sha256 its jar was verified against (ensure_pinned compares it with the pin).
VERIFIED = ".verified-sha256"
# In a Maven prefix: "<sha256>  <path>" of every file ("link:<target>" for a symlink), written at
# install (ensure_pinned checks the prefix against it on every call).
MANIFEST = ".manifest-sha256"
# Bookkeeping at the top of a prefix, outside the manifest.
NOT_IN_MANIFEST = (STAMP, VERIFIED, MANIFEST)
LAYOUT = "1"  # bump when the unpacked layout changes: prefixes of an older layout are made again

# CPython minor -> the Maven Central version of org.bytedeco:cpython (its <python>-<presets>).
MAVEN_BUILDS = {
    "3.9": "3.9.6-1.5.6",
    "3.10": "3.10.8-1.5.8",
    "3.11": "3.11.3-1.5.9",
    "3.12": "3.12.1-1.5.10",
    "3.13": "3.13.5-1.5.12",
    "3.14": "3.14.3-1.5.13",
}
MAVEN_GROUP_ARTIFACT = "org.bytedeco:cpython"
MAVEN_CLASSIFIER = "linux-x86_64"
JAR_PREFIX = "org/bytedeco/cpython/linux-x86_64/"
# Where distributions keep OpenSSL's folder (cert.pem, certs/): Debian/Ubuntu, Fedora/RHEL/Amazon
# Linux, Alpine/Arch/SUSE-style.  Tried after the running interpreter's own answer.
SYSTEM_OPENSSL_DIRS = ("/usr/lib/ssl", "/etc/pki/tls", "/etc/ssl")
# The sha256 of every jar in MAVEN_BUILDS (committed; checked before a jar is unpacked).
MAVEN_PINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpython-maven.sha256")


def log(message):
    print("install_python: " + message, file=sys.stderr, flush=True)


def prefix_for(minor, root=INSTALL_ROOT):
    return os.path.join(root, minor)


def stamp_path(minor, root=INSTALL_ROOT):
    return os.path.join(prefix_for(minor, root), STAMP)


def installed_origin(minor, root=INSTALL_ROOT):
    """Where the installed prefix came from (the stamp's text), or None when not (fully) installed."""
    try:
        with open(stamp_path(minor, root)) as stamp:
            layout, _, origin = stamp.read().strip().partition(" ")
    except OSError:
        return None
    return origin if layout == LAYOUT and find_python.from_install_root(minor, root) else None


def ensure(minor, root=INSTALL_ROOT, uv=None, mvn="mvn"):
    """The interpreter of ``minor`` installed under ``root`` (made on first use) and where it came
    from; raises RuntimeError naming every source that failed."""
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "." + minor + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        origin = installed_origin(minor, root)
        if origin is None:
            origin = _install(minor, root, uv, mvn)
        return find_python.from_install_root(minor, root), origin


def ensure_pinned(minor, root, mvn="mvn", pins_path=None):
    """The pinned Maven Central build of ``minor`` under ``root``, never uv's nor the machine's: what
    compiles every layer zip's bytecode (``make layer`` and ``make release``, tools/release/release.py).
    Returns (interpreter, origin, the jar's verified sha256).

    Checked on every call, not only at install: the prefix records the digest its jar was verified
    against (``VERIFIED``); when the pins file (``pins_path``, default MAVEN_PINS) names another
    digest, the jar is verified again (and the prefix made again from it), so an edited pin is
    refused here exactly as on a fresh clone instead of being trusted because an older jar was.
    Comparing two short strings costs nothing; hashing the ~40 MB jar happens only when they differ."""
    pinned = maven_pins(pins_path).get(maven_coordinates(minor))
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "." + minor + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        origin = installed_origin(minor, root)
        fresh = origin != "Maven Central %s" % maven_coordinates(minor) or verified_digest(minor, root) != pinned
        if not fresh:
            differences = manifest_differences(prefix_for(minor, root))
            if differences:
                log("%s differs from the manifest written when it was installed (%s%s): installing it again from "
                    "its verified jar" % (prefix_for(minor, root), "; ".join(differences[:5]),
                                          "; ..." if len(differences) > 5 else ""))
                fresh = True
        if fresh:
            origin = _install(minor, root, None, mvn, sources=(
                lambda minor, root, mvn, **_: install_from_maven(minor, root, mvn, pins_path=pins_path),))
            differences = manifest_differences(prefix_for(minor, root))
            if differences:
                raise RuntimeError("%s differs from its own manifest right after installing it (%s): refusing it"
                                   % (prefix_for(minor, root), "; ".join(differences[:5])))
        return find_python.from_install_root(minor, root), origin, verified_digest(minor, root)


def prefix_files(prefix):
    """{path relative to ``prefix``: sha256 of the file, or 'link:<target>' for a symlink}, without the
    bookkeeping files at the top (NOT_IN_MANIFEST)."""
    import hashlib

    found = {}
    for folder, dirs, names in os.walk(prefix):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, prefix)
            if relative in NOT_IN_MANIFEST:
                continue
            if os.path.islink(path):
                found[relative] = "link:" + os.readlink(path)
                continue
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            found[relative] = digest.hexdigest()
    return found


def write_manifest(prefix):
    """Record every file of the complete prefix (MANIFEST), to compare with at every later use."""
    lines = ["%s  %s\n" % (digest, path) for path, digest in sorted(prefix_files(prefix).items())]
    with open(os.path.join(prefix, MANIFEST), "w") as handle:
        handle.writelines(lines)


def manifest_differences(prefix):
    """What differs between ``prefix`` and its MANIFEST: ['changed: lib/...', 'added: ...',
    'missing: ...'], or ['no manifest'] (a prefix installed before manifests, or half made)."""
    try:
        with open(os.path.join(prefix, MANIFEST)) as handle:
            recorded = dict(reversed(line.rstrip("\n").split("  ", 1)) for line in handle if line.strip())
    except OSError:
        return ["no manifest"]
    now = prefix_files(prefix)
    return (["changed: " + path for path in sorted(set(now) & set(recorded)) if now[path] != recorded[path]]
            + ["added: " + path for path in sorted(set(now) - set(recorded))]
            + ["missing: " + path for path in sorted(set(recorded) - set(now))])


def verified_digest(minor, root):
    """The sha256 the installed Maven prefix's jar was verified against, or None."""
    try:
        with open(os.path.join(prefix_for(minor, root), VERIFIED)) as stamp:
            return stamp.read().strip() or None
    except OSError:
        return None


def _install(minor, root, uv, mvn, sources=None):
    prefix = prefix_for(minor, root)
    failures = []
    for source in sources or (install_with_uv, install_from_maven):
        _remove(prefix)
        try:
            origin = source(minor, root, uv=uv, mvn=mvn)
            check(minor, root)
        except (OSError, RuntimeError, subprocess.SubprocessError, zipfile.BadZipFile) as error:
            failures.append(str(error))
            log(str(error))
            continue
        with open(stamp_path(minor, root), "w") as stamp:
            stamp.write("%s %s\n" % (LAYOUT, origin))
        return origin
    _remove(prefix)
    raise RuntimeError("could not install CPython %s: %s" % (minor, "; ".join(failures)))


def _remove(path):
    if os.path.islink(path):
        os.unlink(path)
    else:
        shutil.rmtree(path, ignore_errors=True)


def uv_executable(uv=None):
    """The uv to ask: the one given (the repo's .venv/uv) if it exists, else one on PATH."""
    if uv and os.access(uv, os.X_OK):
        return os.path.abspath(uv)
    return shutil.which("uv")


def install_with_uv(minor, root, uv=None, **_):
    """``uv python install <minor>`` into ``root/uv``; ``root/<minor>`` links to what it made."""
    executable = uv_executable(uv)
    if executable is None:
        raise RuntimeError("uv python install %s: no uv yet (neither .venv/uv nor uv on PATH)" % minor)
    install_dir = os.path.join(root, "uv")
    # From / and without VIRTUAL_ENV, as find_python asks uv (the repo's .venv is not a venv).
    environ = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    environ.update(UV_PYTHON_INSTALL_DIR=install_dir, UV_NO_PROGRESS="1")
    result = subprocess.run([executable, "python", "install", minor], cwd="/", env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                            timeout=600)
    if result.returncode != 0:
        last = (result.stdout.strip().splitlines() or ["exit %d" % result.returncode])[-1]
        raise RuntimeError("uv python install %s failed: %s" % (minor, last.strip()))
    found = find_python._newest(glob.glob(os.path.join(install_dir, "cpython-%s.*" % minor, "bin", "python3")), minor)
    if found is None:
        raise RuntimeError("uv python install %s: no cpython-%s.* in %s afterwards" % (minor, minor, install_dir))
    os.symlink(os.path.relpath(os.path.dirname(os.path.dirname(found)), root), prefix_for(minor, root))
    return "uv python install %s (%s)" % (minor, os.path.basename(os.path.dirname(os.path.dirname(found))))


def maven_coordinates(minor):
    return "%s:%s:jar:%s" % (MAVEN_GROUP_ARTIFACT, MAVEN_BUILDS[minor], MAVEN_CLASSIFIER)


def maven_pins(path=None):
    """{coordinates: sha256} from the committed pins file ("<sha256>  <coordinates>" lines)."""
    pins = {}
    with open(path or MAVEN_PINS) as handle:
        for line in handle:
            if line.strip() and not line.startswith("#"):
                digest, coordinates = line.split()
                pins[coordinates] = digest
    return pins


def verify_jar(jar, minor, pins_path=None):
    """Refuse a jar whose sha256 is not the pinned one; returns the sha256."""
    import hashlib

    coordinates = maven_coordinates(minor)
    pins_path = pins_path or MAVEN_PINS
    expected = maven_pins(pins_path).get(coordinates)
    if expected is None:
        raise RuntimeError("%s has no pinned sha256 in %s: add its line (sha256sum of the jar) before using it"
                           % (coordinates, pins_path))
    digest = hashlib.sha256()
    with open(jar, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise RuntimeError("%s: sha256 %s is not the pinned %s (%s): refusing to unpack it; this file is not the "
                           "build the repo pinned (a corrupt download or a changed artifact): delete it to fetch "
                           "again, or review and update the pin" % (jar, digest.hexdigest(), expected, pins_path))
    return expected


def maven_repository(environ=None):
    """The local Maven repository the jar is fetched into and looked up in: $MAVEN_REPOSITORY, else
    $HOME/.m2/repository.

    Named explicitly on both sides (mvn gets it as ``-Dmaven.repo.local``): mvn's own default is
    ``${user.home}/.m2/repository``, and Java's user.home is the passwd entry's home, not $HOME.
    Where the two differ (a container, ``sudo -E``, a CI runner that sets HOME) mvn wrote the jar to
    one folder and this looked in the other, so every install "failed" after a good download.  $HOME's
    .m2 rather than a folder in the clone: one download serves every clone and worktree of the repo
    and the user's own Maven, and it is the folder CI runners already cache."""
    environ = os.environ if environ is None else environ
    home = environ.get("HOME") or os.path.expanduser("~")
    return environ.get("MAVEN_REPOSITORY") or os.path.join(home, ".m2", "repository")


def maven_jar(minor, mvn="mvn", repository=None):
    """The jar in the local Maven repository (``maven_repository()`` unless given), fetched into it
    with ``mvn dependency:get`` when not there."""
    if minor not in MAVEN_BUILDS:
        raise RuntimeError("Maven Central has no CPython %s build (org.bytedeco:cpython)" % minor)
    version = MAVEN_BUILDS[minor]
    repository = repository or maven_repository()
    jar = os.path.join(repository, "org", "bytedeco", "cpython", version,
                       "cpython-%s-%s.jar" % (version, MAVEN_CLASSIFIER))
    if not os.path.isfile(jar):
        if shutil.which(mvn) is None:
            raise RuntimeError("Maven Central: no %s on PATH to fetch %s (apt install maven)"
                               % (mvn, maven_coordinates(minor)))
        log("fetching %s with mvn into %s" % (maven_coordinates(minor), repository))
        result = subprocess.run([mvn, "-B", "-q", "-Dstyle.color=never", "-Dmaven.repo.local=" + repository,
                                 "dependency:get", "-Dtransitive=false", "-Dartifact=" + maven_coordinates(minor)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                timeout=900)
        if result.returncode != 0 or not os.path.isfile(jar):
            tail = " ".join(result.stdout.strip().splitlines()[-2:])
            raise RuntimeError("mvn dependency:get %s failed: %s" % (maven_coordinates(minor),
                                                                      tail or "no %s afterwards" % jar))
    return jar


def install_from_maven(minor, root, mvn="mvn", pins_path=None, **_):
    jar = maven_jar(minor, mvn)
    digest = verify_jar(jar, minor, pins_path)
    log("unpacking %s into %s" % (os.path.basename(jar), prefix_for(minor, root)))
    unpack_maven(jar, minor, prefix_for(minor, root))
    with open(os.path.join(prefix_for(minor, root), VERIFIED), "w") as stamp:
        stamp.write(digest + "\n")
    write_manifest(prefix_for(minor, root))
    return "Maven Central %s" % maven_coordinates(minor)


def unpack_maven(jar, minor, prefix):
    """Make ``prefix`` a working CPython from a JavaCPP Presets jar (see the module's docstring)."""
    with tempfile.TemporaryDirectory(dir=os.path.dirname(prefix)) as scratch:
        with zipfile.ZipFile(jar) as archive:
            members = [name for name in archive.namelist() if name.startswith(JAR_PREFIX)]
            if not members:
                raise RuntimeError("%s holds no %s" % (jar, JAR_PREFIX))
            archive.extractall(scratch, members)
        unpacked = os.path.join(scratch, JAR_PREFIX)
        os.makedirs(prefix)
        for folder in ("bin", "include", "lib", "share"):
            if os.path.isdir(os.path.join(unpacked, folder)):
                shutil.move(os.path.join(unpacked, folder), os.path.join(prefix, folder))
        # libpython and libffi sit beside bin/ in the jar.  The interpreter looks in lib/
        # ($ORIGIN/../lib/); _ctypes in its own folder, lib-dynload ($ORIGIN/, $ORIGIN/../ and
        # $ORIGIN/../lib/ from there), where a link to libffi goes.
        for name in os.listdir(unpacked):
            if re.match(r"lib(python3\.\d+|ffi)\.so", name):
                shutil.move(os.path.join(unpacked, name), os.path.join(prefix, "lib", name))
                if name.startswith("libffi"):
                    os.symlink(os.path.join("..", "..", name),
                               os.path.join(prefix, "lib", "python" + minor, "lib-dynload", name))
    bin_dir = os.path.join(prefix, "bin")
    for name in os.listdir(bin_dir):
        os.chmod(os.path.join(bin_dir, name), 0o755)
    for name in ("python3", "python"):
        link = os.path.join(bin_dir, name)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink("python" + minor, link)  # a copy in the jar: make it the link it was
    _fix_shebangs(bin_dir, os.path.join(bin_dir, "python" + minor))
    point_openssl_at_system(prefix)
    python = os.path.join(bin_dir, "python" + minor)
    # Compile the standard library once (a read-only or shared prefix never writes __pycache__ later).
    subprocess.run([python, "-m", "compileall", "-q", "-j0", "-x", r"/(test|tests|idlelib)/",
                    os.path.join(prefix, "lib", "python" + minor)], check=True, stdout=subprocess.DEVNULL)


def _fix_shebangs(bin_dir, python):
    for name in os.listdir(bin_dir):
        path = os.path.join(bin_dir, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as script:
            content = script.read()
        if content.startswith(b"#!") and b"python" in content.split(b"\n", 1)[0]:
            rest = content.split(b"\n", 1)[1] if b"\n" in content else b""
            with open(path, "wb") as script:
                script.write(b"#!" + python.encode() + b"\n" + rest)


def system_openssl_dir():
    """The machine's OpenSSL folder (cert.pem or certs/ inside): what the running python3's ssl
    uses, else the first of SYSTEM_OPENSSL_DIRS that has certificates; None when none has."""
    candidates = [os.path.dirname(ssl.get_default_verify_paths().openssl_cafile or "")]
    for folder in candidates + list(SYSTEM_OPENSSL_DIRS):
        if folder and (os.path.isfile(os.path.join(folder, "cert.pem")) or
                       glob.glob(os.path.join(folder, "certs", "*"))):
            return folder
    return None


def _builder_openssl_dir(data):
    """The OPENSSLDIR compiled into a binary: the folder of its default ``.../cert.pem`` string."""
    match = re.search(rb"(/[^\0\"]+)/cert\.pem\0", data)
    return match.group(1) if match else None


def point_openssl_at_system(prefix, openssl_dir=None):
    """Rewrite the builder's OPENSSLDIR compiled into the prefix's shared objects to the system's,
    in place: each NUL-terminated string that starts with it keeps its tail and is padded with NULs
    to its old length (a shorter path in the same bytes; offsets and sizes unchanged).  What
    ``./configure --openssldir`` of a distribution's build gives, after the fact.  Returns the
    folder written, or None when the build has no OPENSSLDIR of its own or the system has none."""
    openssl_dir = openssl_dir or system_openssl_dir()
    libraries = [path for path in glob.glob(os.path.join(prefix, "lib", "**", "*.so*"), recursive=True)
                 if os.path.isfile(path) and not os.path.islink(path)]
    ssl_module = [path for path in libraries if re.search(r"/lib-dynload/_ssl\.", path)]
    if not openssl_dir or not ssl_module:
        return None
    with open(ssl_module[0], "rb") as handle:
        builder_dir = _builder_openssl_dir(handle.read())
    new = openssl_dir.encode()
    if builder_dir is None or builder_dir == new or len(new) > len(builder_dir):
        return None
    pattern = re.compile(re.escape(builder_dir) + rb"([^\0]*)\0")
    for path in libraries:
        with open(path, "rb") as handle:
            data = handle.read()
        if builder_dir not in data:
            continue

        def shorter(match):
            text = new + match.group(1)
            return text + b"\0" * (len(match.group(0)) - len(text))

        patched = pattern.sub(shorter, data)
        assert len(patched) == len(data)
        mode = os.stat(path).st_mode
        with open(path, "wb") as handle:
            handle.write(patched)
        os.chmod(path, mode)
    return openssl_dir


CHECK = """
import ctypes, hashlib, json, os, ssl, sys, venv, zlib
paths = ssl.get_default_verify_paths()
ssl.create_default_context()
print(json.dumps({"version": "%d.%d" % sys.version_info[:2], "looks_in": paths.openssl_cafile,
                  "found": paths.cafile or paths.capath}))
"""


def check(minor, root=INSTALL_ROOT):
    """Run the installed interpreter once: the right minor, the modules the tests need importable,
    and (where the machine has certificates) a default CA file or folder that exists."""
    import json

    python = find_python.from_install_root(minor, root)
    if python is None:
        raise RuntimeError("no bin/python%s under %s" % (minor, prefix_for(minor, root)))
    result = subprocess.run([python, "-I", "-c", CHECK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    if result.returncode != 0:
        raise RuntimeError("%s does not start: %s" % (python, result.stderr.strip().splitlines()[-1:]))
    seen = json.loads(result.stdout)
    if seen["version"] != minor:
        raise RuntimeError("%s is CPython %s, not %s" % (python, seen["version"], minor))
    if system_openssl_dir() and not seen["found"]:
        raise RuntimeError("%s: ssl finds no CA certificates by default (it looks for %s)"
                           % (python, seen["looks_in"]))


def find_or_install(minor, uv=None, root=INSTALL_ROOT):
    """(path, where it came from): found in one of find_python's four places, else installed into
    ``root`` (uv python install, else Maven Central); RuntimeError if neither works."""
    path, place = find_python.where(minor, uv=uv, root=root)
    if place == "installed":
        return path, "installed earlier: " + (installed_origin(minor, root) or "?")
    if path:
        return path, {"pyenv": "pyenv", "PATH": "python%s on PATH" % minor, "uv": "uv-managed"}[place]
    path, origin = ensure(minor, root=root, uv=uv)
    return path, "installed now: " + origin


def install_main(minors, report, uv, goal, root):
    failed = False
    for minor in minors:
        try:
            path, origin = find_or_install(minor, uv=uv, root=root)
        except RuntimeError as error:
            print("%s (%s)" % (find_python.missing_message(minor, goal), error), file=sys.stderr)
            failed = True
            continue
        if report:
            repo = find_python.REPO
            print("CPython %-5s %s  (%s)" % (minor, os.path.relpath(path) if path.startswith(repo) else path, origin),
                  flush=True)
        else:
            print(path)
    return 1 if failed else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("minors", nargs="+", help="CPython minors such as 3.14")
    parser.add_argument("--report", action="store_true", help="one line per minor: its path and where it came from")
    parser.add_argument("--goal", default="", help="the make goal that needs it (for the message when it fails)")
    parser.add_argument("--uv", default=None, help="a uv executable to install with (and to ask, like find_python)")
    args = parser.parse_args(argv)
    return install_main(args.minors, args.report, args.uv, args.goal.strip() or None, INSTALL_ROOT)


if __name__ == "__main__":
    sys.exit(main())
