"""The stand-in runtime's interpreter: a plain CPython prefix, like the managed runtime's /var/lang.

Why not a venv: a venv turns the user site off (``site`` sets ENABLE_USER_SITE = False when
pyvenv.cfg does not include the system site-packages), and with it ``usercustomize``, which the
layer relies on behind exec wrappers.  The managed runtime's /var/lang/bin/pythonX.Y is a plain
installation, whose user site is on.  And a venv with the system site-packages would bring in
whatever this machine's pyenv CPython has installed (3.11's holds boto3, moto, ...).

So ``.venv/lambda-X.Y`` is a prefix of its own, found by CPython's usual search (the landmarks
``lib/pythonX.Y/os.py`` and ``lib/pythonX.Y/lib-dynload`` next to the executable's folder):

    bin/pythonX.Y                a copy of the pyenv binary (a symlink would be resolved back to
                                 pyenv's prefix); it loads libpython through its absolute rpath
    lib/libpython*.so*, libffi*  symlinks to the base's, when it has them in its lib/: a build
                                 whose RUNPATH is relative ($ORIGIN/../lib, Maven Central's from
                                 tools/interpreters/install_python.py) finds them there, beside the copy
    bin/python                   -> pythonX.Y
    lib/pythonX.Y/<entry>        symlinks to every entry of pyenv's standard library ...
    lib/pythonX.Y/site-packages  ... except this real folder, holding exactly
                                 lab/runtime-requirements.txt (awslambdaric) and
                                 lab/runtime-sdk/<RUNTIME_BOTO3>.txt (the bundled-kind boto3),
                                 compiled to bytecode as the runtime images ship it

The base is whatever CPython tools/interpreters/find_python.py finds: pyenv's (an upstream build, like the
runtime's) or a distribution's, such as Debian's /usr/bin/python3.11.  Debian patches two things
into its standard library that a plain prefix must not inherit from it:

* its ``site.py`` never adds ``<prefix>/lib/pythonX.Y/site-packages`` outside a venv; it adds
  ``<prefix>/local/lib/pythonX.Y/dist-packages``, ``<prefix>/lib/python3/dist-packages`` and
  ``<prefix>/lib/pythonX.Y/dist-packages`` instead, so awslambdaric would not be importable.  The
  build asks the new interpreter which folders its site adds (``site.getsitepackages()``, all
  under the new prefix, so nothing of the machine's dist-packages comes in); when site-packages is
  not one of them it writes one ``.pth`` into the first of them whose line is
  ``site.addsitedir(<site-packages>)``: site-packages then reaches sys.path under its own name and
  with its own ``.pth`` files processed, as on the runtime.  (A symlink dist-packages ->
  site-packages would put the Debian name on sys.path; a sitecustomize.py of ours would take the
  name that exec wrappers' sitecustomize and the layer's fallback use.)  With an upstream base the
  check finds site-packages and writes nothing.
* ``sitecustomize.py`` (apport's crash hook, a link into /etc) and ``EXTERNALLY-MANAGED`` (PEP
  668's marker): the runtime's /var/lang has neither, and a stdlib sitecustomize would run at every
  start of the stand-in, so they are not linked.

Which boto3: ``AWS_KEEPALIVE_RUNTIME_BOTO3`` (the Makefile's ``RUNTIME_BOTO3``), default
DEFAULT_RUNTIME_BOTO3 below, the newest public data point of what a managed runtime bundles (see
runtime_boto3() and docs/lab.md).  Each version is a hash-pinned lock ``lab/runtime-sdk/<v>.txt``
(``make lock-runtime-sdk RUNTIME_BOTO3=<v>`` writes one).

A stamp with the locks' sha256 (and this layout's version) says whether it is current; a file lock
keeps parallel callers (tests, the Makefile) from building it twice.

Usage: python -m lab.standin.runtime_prefix 3.12 [3.13 ...] [3.13-ric40 ...]   (prints each interpreter's path)
"""

import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from lab import REPO

LOCK_FILE = REPO / "lab" / "runtime-requirements.txt"  # awslambdaric (the Runtime API client)
# Variants of the Runtime API client, by name (``ensure(minor, variant)``): awslambdaric 4.0.x instead
# of the pinned 4.2.x, for Lambda Managed Instances (a runtime may ship either; docs/shapes-lmi.md).
VARIANT_LOCKS = {"ric40": REPO / "lab" / "runtime-requirements-ric40.txt"}
SDK_LOCKS = REPO / "lab" / "runtime-sdk"  # <boto3 version>.txt: a bundled-kind boto3 stack each
# The newest public data point of the boto3 a managed Python runtime bundles (python3.12, Aug 2026;
# FACTS.md "Today's Lambda"). boto3 1.42.97 pins botocore 1.42.97 (default retry mode: legacy) and
# allows urllib3 2 on 3.10+: pip resolves urllib3 2, which every 3.10+ runtime can import (PEP 644:
# CPython 3.10+ needs OpenSSL 1.1.1+, so the Amazon Linux 2 runtimes have it too).
DEFAULT_RUNTIME_BOTO3 = "1.42.97"
VENV_ROOT = REPO / ".venv"
UV = VENV_ROOT / "uv" / "bin" / "uv"
# Entries of the base's stdlib folder not linked into the prefix: its site-packages (the prefix has
# its own) and what a distribution adds that the runtime's /var/lang does not have (see above).
NOT_LINKED = frozenset({"site-packages", "sitecustomize.py", "EXTERNALLY-MANAGED"})
SITE_PACKAGES_PTH = "lambda-runtime-site-packages.pth"
LAYOUT = "plain-prefix-3"  # bump when the layout changes: old stand-ins are rebuilt


def runtime_boto3() -> str:
    """The bundled-kind boto3 version the stand-in runtimes hold (AWS_KEEPALIVE_RUNTIME_BOTO3)."""
    return os.environ.get("AWS_KEEPALIVE_RUNTIME_BOTO3") or DEFAULT_RUNTIME_BOTO3


def sdk_lock(version: str = None) -> Path:
    """The hash-pinned lock of that bundled-kind boto3 stack, or a clear error naming how to make one."""
    version = version or runtime_boto3()
    lock = SDK_LOCKS / (version + ".txt")
    if not lock.is_file():  # a release the lab runs but the hook flavor does not prepare (make coldstart-unknown)
        lock = SDK_LOCKS / "unknown" / (version + ".txt")
    if not lock.is_file():
        raise FileNotFoundError("no lock for the runtime-kind boto3 %s: %s is missing (make lock-runtime-sdk "
                                "RUNTIME_BOTO3=%s writes it)" % (version, lock, version))
    return lock


def runtime_botocore(minor: str) -> str:
    """The botocore version installed in the stand-in for ``minor`` (made on first use)."""
    packages = site_packages(ensure(minor).parents[1], minor)
    names = [n for n in os.listdir(packages) if n.startswith("botocore-") and n.endswith(".dist-info")]
    return names[0][len("botocore-"):-len(".dist-info")]


def stamp_text(lock_file: Path = LOCK_FILE) -> str:
    digests = [hashlib.sha256(path.read_bytes()).hexdigest() for path in (lock_file, sdk_lock())]
    return "%s %s\n" % (" ".join(digests), LAYOUT)


def base_python(minor: str) -> Path:
    """The CPython of that minor, found as the Makefile finds it (tools/interpreters/find_python.py: pyenv, then
    python3.X on PATH, then uv-managed), so the lab runs on any machine ``make`` runs on."""
    spec = importlib.util.spec_from_file_location("find_python", REPO / "tools" / "interpreters" / "find_python.py")
    find_python = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(find_python)
    found = find_python.find(minor, uv=str(UV) if UV.exists() else None)
    if found is None:
        raise FileNotFoundError(find_python.missing_message(minor, who="the lab's Lambda stand-in"))
    return Path(found)


def ensure(minor: str, variant: str = "") -> Path:
    """The stand-in interpreter for a CPython minor (``.venv/lambda-X.Y/bin/python``), made on first use;
    with a ``variant`` of VARIANT_LOCKS, ``.venv/lambda-X.Y-<variant>`` holding that lock instead."""
    name = "lambda-" + minor + ("-" + variant if variant else "")
    lock_file = VARIANT_LOCKS[variant] if variant else LOCK_FILE
    prefix = VENV_ROOT / name
    python = prefix / "bin" / "python"
    stamp = prefix / ".lab-lock-sha256"
    text = stamp_text(lock_file)

    def make() -> None:
        build(base_python(minor), minor, prefix, lock_file)
        stamp.write_text(text)

    _once(VENV_ROOT / ("." + name + ".lock"),
          lambda: python.exists() and stamp.exists() and stamp.read_text() == text, make)
    return python


def install_lock_once(lock_file: Path, target: Path, python: Path) -> Path:
    """``target`` holding the hash-pinned ``lock_file`` installed with ``uv pip install --target``
    for ``python``; installed again only when the lock's content changes (a stamp of its sha256
    beside ``target``), under a file lock so that parallel callers (tests, make) do not race."""
    digest = hashlib.sha256(lock_file.read_bytes()).hexdigest() + "\n"
    stamp = target.parent / (target.name + ".lock-sha256")

    def make() -> None:
        shutil.rmtree(target, ignore_errors=True)
        _uv_install(python, target, lock_file, "--no-deps")
        stamp.write_text(digest)

    _once(Path(str(target) + ".lock"), lambda: stamp.exists() and stamp.read_text() == digest, make)
    return target


def _once(lock_path: Path, done, make) -> None:
    """``make()`` unless ``done()``; under an exclusive file lock, checked again once it is held, so
    that parallel callers (pytest workers, make) build a folder once and never see half of it."""
    if done():
        return
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done():
            make()


def _uv_install(python: Path, target: Path, lock_file: Path, *options: str) -> None:
    """``uv pip install --target`` of a hash-pinned lock, for ``python`` (wheels it can run);
    ``options`` may add more ``-r`` locks."""
    _ensure_uv()
    env = dict(os.environ, UV_NATIVE_TLS="1", UV_NO_PROGRESS="1")
    subprocess.run([str(UV), "pip", "install", "-q", "--python", str(python), "--target", str(target),
                    "--require-hashes", *options, "-r", str(lock_file)], check=True, env=env)


def _ensure_uv() -> None:
    if not UV.exists():
        subprocess.run(["make", "-C", str(REPO), str(UV.relative_to(REPO))], check=True)


def site_packages(prefix: Path, minor: str) -> Path:
    """The prefix's own site-packages, where build() installs the runtime's packages.  A fixed
    path, not sysconfig's answer: Debian's sysconfig names /usr/local-style dist-packages for any
    plain prefix (see the module's docstring)."""
    return Path(prefix) / "lib" / ("python" + minor) / "site-packages"


def build(base: Path, minor: str, prefix: Path, lock_file: Path = LOCK_FILE) -> Path:
    """Make ``prefix`` a plain CPython prefix from the interpreter ``base`` (of that minor) holding
    ``lock_file`` (lab/runtime-requirements.txt) and the runtime-kind boto3 (sdk_lock()) in its own site-packages,
    compiled to bytecode (the runtime images ship it compiled); returns its ``bin/python``."""
    base = base.resolve()  # .../versions/3.12.1/bin/python3.12 or /usr/bin/python3.11
    base_stdlib = base.parents[1] / "lib" / ("python" + minor)
    shutil.rmtree(prefix, ignore_errors=True)
    (prefix / "bin").mkdir(parents=True)
    shutil.copy2(base, prefix / "bin" / ("python" + minor))
    (prefix / "bin" / "python").symlink_to("python" + minor)
    (prefix / "bin" / "python3").symlink_to("python" + minor)
    stdlib = prefix / "lib" / ("python" + minor)
    stdlib.mkdir(parents=True)
    for library in sorted(base.parents[1].glob("lib/lib*.so*")):
        if library.name.startswith(("libpython", "libffi")):
            (prefix / "lib" / library.name).symlink_to(library)
    for entry in sorted(os.listdir(base_stdlib)):
        if entry not in NOT_LINKED:
            (stdlib / entry).symlink_to(base_stdlib / entry)
    packages = site_packages(prefix, minor)
    packages.mkdir()
    python = prefix / "bin" / "python"
    _reach_site_packages(python, packages)
    _uv_install(python, packages, lock_file, "--compile-bytecode", "-r", str(sdk_lock()))
    return python


def _reach_site_packages(python: Path, site_packages: Path) -> None:
    """Make the new interpreter's site add ``site_packages`` (a distribution's site.py may not: see
    the module's docstring)."""
    site_dirs = json.loads(subprocess.run(
        [str(python), "-c", "import json, site; print(json.dumps(site.getsitepackages()))"],
        capture_output=True, text=True, check=True, env={}, timeout=30).stdout)
    if os.path.realpath(site_packages) in {os.path.realpath(folder) for folder in site_dirs}:
        return
    pth_dir = Path(site_dirs[0])
    pth_dir.mkdir(parents=True, exist_ok=True)
    # One line, run by site at every start: it adds the folder and processes its own .pth files.
    (pth_dir / SITE_PACKAGES_PTH).write_text("import site; site.addsitedir(%r)\n" % str(site_packages))


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(ensure(*name.split("-", 1)))
