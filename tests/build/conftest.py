"""Fixtures for the build tests: the layer built once per session through `make layer`, the tools
the Makefile installed (paths passed in by `make test-build`), and a clean environment.

Nothing here touches real AWS: publishing goes to a local moto server, functions run under the
runtime stand-in (lab/standin/runtime/invoke_once.py)."""

import contextlib
import functools
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import zipfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools"))
STANDIN = os.path.join(REPO, "lab", "standin", "runtime", "invoke_once.py")

# The machine exports AWS_CA_BUNDLE and friends: children get only this, plus what a test adds.
BASE_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": os.environ.get("HOME", "/root"),
    "LANG": "C.UTF-8",
    "SAM_CLI_TELEMETRY": "0",
    "AWS_ACCESS_KEY_ID": "AKIDTESTKEEPALIVE",
    "AWS_SECRET_ACCESS_KEY": "test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}

# What reaching the package registries may need (the build installs wheels through uv).
for _name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "UV_CACHE_DIR", "XDG_CACHE_HOME", "PYENV_ROOT",
              "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
    if _name in os.environ:
        BASE_ENV[_name] = os.environ[_name]


def env(**extra):
    """A clean environment for a child process, with ``extra`` added."""
    result = dict(BASE_ENV)
    result.update(extra)
    return result


def tool(variable):
    """A tool path passed in by `make test-build`; fails (never skips) when it is missing."""
    value = os.environ.get(variable)
    if not value:
        pytest.fail("%s is not set: run these tests through `make test-build`" % variable)
    return value


@functools.lru_cache(maxsize=None)
def interpreters():
    """{'3.10': python, ...}: the per-minor test venvs `make test-build` passes in."""
    pythons = tool("AWS_KEEPALIVE_PYTHONS").split()
    result = {}
    for python in pythons:
        version = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=True, env=env(),
        ).stdout.strip()
        result[version] = python
    return result


def make_layer(build_dir, services="", umask=None, flavor="full", **extra_env):
    """Run `make layer` into ``build_dir``; returns (zip path, dict of the printed fields)."""
    command = "make --no-print-directory -C %s layer BUILD_DIR=%s SERVICES=%s FLAVOR=%s" % (
        REPO, build_dir, services, flavor)
    if umask is not None:
        command = "umask %03o; %s" % (umask, command)
    completed = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env(**extra_env))
    if completed.returncode != 0:
        raise AssertionError("make layer failed:\n%s%s" % (completed.stdout, completed.stderr))
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", completed.stdout, re.MULTILINE))
    return os.path.join(build_dir, "layer-hook.zip" if flavor == "hook" else "layer.zip"), fields


def extract(zip_path, destination):
    """Extract like Lambda does into /opt: contents only, mtimes are whatever extraction gives."""
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(destination)
    return destination


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# The zips every build test reads are each built once per session.  `make layer` builds them with
# another umask and hash seed than the ``release`` fixture's `make release` (umask 022, hash seed
# random), in another folder, at another time: the tests that compare the two (test_build_layer's
# reproducibility tests, test_release's one-build test) check reproducibility without a third build.
@pytest.fixture(scope="session")
def layer(tmp_path_factory):
    """The full layer, built once by `make layer` (umask 077, PYTHONHASHSEED=12345): (zip path, printed fields)."""
    return make_layer(str(tmp_path_factory.mktemp("build")), umask=0o077, PYTHONHASHSEED="12345")


@pytest.fixture(scope="session")
def trimmed(tmp_path_factory):
    """A layer trimmed to the dynamodb and s3 models: (zip path, printed fields)."""
    return make_layer(str(tmp_path_factory.mktemp("trimmed")), services="dynamodb,s3")


@pytest.fixture(scope="session")
def hook_layer(tmp_path_factory):
    """The hook-only flavor, built once by `make layer FLAVOR=hook` (umask 077, PYTHONHASHSEED=777):
    (zip path, printed fields)."""
    return make_layer(str(tmp_path_factory.mktemp("hook")), flavor="hook", umask=0o077, PYTHONHASHSEED="777")


def run_make_release(build_dir, repo=REPO, umask=None, make_vars=(), **extra_env):
    """Run `make release` of the clone ``repo`` into ``build_dir``/release; returns the CompletedProcess."""
    command = "make --no-print-directory -C %s release BUILD_DIR=%s %s" % (repo, build_dir, " ".join(make_vars))
    if umask is not None:
        command = "umask %03o; %s" % (umask, command)
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env(**extra_env))


def make_release(build_dir, **options):
    """Run `make release` into ``build_dir``/release (options: run_make_release's); returns that folder."""
    completed = run_make_release(build_dir, **options)
    if completed.returncode != 0:
        raise AssertionError("make release failed:\n%s%s" % (completed.stdout, completed.stderr))
    return os.path.join(build_dir, "release")


def clone(destination):
    """A fresh clone of this working tree at ``destination`` (what CI starts from); returns its path.
    The checked-out commit, plus what the tree holds beyond it: uncommitted changes to tracked files
    (applied as a binary diff) and untracked files git does not ignore (copied).  So a clone's
    release can be compared byte for byte with this checkout's (the ``release`` fixture) while
    someone works on the tree: in CI the tree is the commit and both steps add nothing."""
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", REPO, destination], check=True, env=env())
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    subprocess.run(["git", "-C", destination, "checkout", "--quiet", head.stdout.strip()], check=True, env=env())
    diff = subprocess.run(["git", "-C", REPO, "diff", "--no-ext-diff", "--no-color", "--binary", "HEAD"],
                          capture_output=True, check=True).stdout
    if diff:
        subprocess.run(["git", "-C", destination, "apply", "--whitespace=nowarn", "-"], input=diff, check=True,
                       env=env())
    untracked = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--others", "--exclude-standard"],
                               capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, untracked):
        os.makedirs(os.path.dirname(os.path.join(destination, name)), exist_ok=True)
        shutil.copy2(os.path.join(REPO, name), os.path.join(destination, name), follow_symlinks=False)
    return destination


@pytest.fixture(scope="session")
def release(tmp_path_factory):
    """build/release/ made once by `make release` (both zips, the wheel, SBOMs, SHA256SUMS), umask
    022, TZ UTC, LANG C.UTF-8."""
    return make_release(str(tmp_path_factory.mktemp("release")), umask=0o022, TZ="UTC")


@pytest.fixture(scope="session")
def opt(layer, tmp_path_factory):
    """The full layer extracted, standing in for /opt."""
    return extract(layer[0], str(tmp_path_factory.mktemp("opt")))


@contextlib.contextmanager
def local_server(argv, log_path, name, **extra_env):
    """Start ``argv`` (a server listening on 127.0.0.1:<port>, port in argv; ``extra_env`` added to its
    environment), wait until it accepts, yield; stop it by pid at the end."""
    port = int(argv[argv.index("-p") + 1])
    log = open(log_path, "w")
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env(**extra_env))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("%s did not start: %s" % (name, open(log_path).read()))
                time.sleep(0.1)
        yield "http://127.0.0.1:%d" % port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # ignored SIGTERM: it must not outlive the tests
            process.kill()
            process.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory):
    """A local moto server standing in for AWS (Lambda, DynamoDB); stopped by pid at the end."""
    argv = [tool("AWS_KEEPALIVE_MOTO"), "-H", "127.0.0.1", "-p", str(free_port())]
    with local_server(argv, tmp_path_factory.mktemp("moto") / "moto.log", "moto server") as url:
        yield url
