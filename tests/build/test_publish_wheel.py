"""`make publish-wheel` (tools/release/publish_wheel.py, twine) against a real package index on loopback.

The index is pypiserver (tools/release/pypiserver.txt) with an htpasswd file, so that a wrong token is
refused as a real index refuses it; uploads need a password, downloads do not.  Each test gets its
own server (started by pid, stopped by pid) and its own package folder.
"""

import base64
import hashlib
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from conftest import REPO, env, free_port, local_server, tool

sys.path.insert(0, REPO)
from tools.packaging import build_wheel  # noqa: E402

VERSION = build_wheel.source_version(os.path.join(REPO, "layer"))
TOKEN = "pypi-test-token-keepalive"
USER, PASSWORD = "publisher", "publisher-password"


def htpasswd_line(user, password):
    """An htpasswd row in the {SHA} scheme (what `htpasswd -s` writes; passlib reads it)."""
    return "%s:{SHA}%s\n" % (user, base64.b64encode(hashlib.sha1(password.encode()).digest()).decode())


@pytest.fixture
def index(tmp_path):
    """A pypiserver on 127.0.0.1 accepting uploads from __token__/TOKEN and USER/PASSWORD: its base URL."""
    packages = tmp_path / "packages"
    packages.mkdir()
    passwords = tmp_path / "htpasswd"
    passwords.write_text(htpasswd_line("__token__", TOKEN) + htpasswd_line(USER, PASSWORD))
    argv = [tool("AWS_KEEPALIVE_PYPISERVER"), "run", "-i", "127.0.0.1", "-p", str(free_port()),
            "-P", str(passwords), "-a", "update", "--disable-fallback", str(packages)]
    with local_server(argv, tmp_path / "pypiserver.log", "pypiserver") as url:
        yield url


def make_publish_wheel(build_dir, **variables):
    """Run `make publish-wheel` with ``variables`` in the environment; returns the completed process."""
    return subprocess.run(
        ["make", "--no-print-directory", "-C", REPO, "publish-wheel", "BUILD_DIR=%s" % build_dir],
        capture_output=True, text=True, env=env(NO_PROXY="127.0.0.1", no_proxy="127.0.0.1", **variables),
    )


def served_files(index_url):
    """File names the index lists for the project ([] when it has none)."""
    try:
        with urllib.request.urlopen(index_url + "/simple/aws-python-keepalive/", timeout=10) as response:
            page = response.read().decode()
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return []
        raise
    return [name for name in [build_wheel.wheel_filename(VERSION)] if name in page]


def install_back(index_url, target):
    """pip install the project from the index into ``target`` (nothing else reachable)."""
    python = os.path.join(os.path.dirname(tool("AWS_KEEPALIVE_PYPISERVER")), "python")
    completed = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-cache-dir", "--index-url", index_url + "/simple/",
         "--target", str(target), "aws-python-keepalive==%s" % VERSION],
        capture_output=True, text=True, env=env(PIP_CONFIG_FILE=os.devnull, NO_PROXY="127.0.0.1"),
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_token_upload_then_install_back(index, tmp_path):
    """TOKEN: the wheel is uploaded, listed, served byte for byte, pip installs it and it imports."""
    build_dir = tmp_path / "build"
    completed = make_publish_wheel(build_dir, INDEX_URL=index + "/", TOKEN=TOKEN)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "published: %s" % build_wheel.wheel_filename(VERSION) in completed.stdout
    assert TOKEN not in completed.stdout + completed.stderr
    assert served_files(index) == [build_wheel.wheel_filename(VERSION)]
    with urllib.request.urlopen("%s/packages/%s" % (index, build_wheel.wheel_filename(VERSION))) as response:
        assert response.read() == (build_dir / build_wheel.wheel_filename(VERSION)).read_bytes()
    target = tmp_path / "installed"
    install_back(index, target)
    imported = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import aws_keepalive as k; print(k.__version__)"
         % str(target)],
        capture_output=True, text=True, check=True, env=env(),
    )
    assert imported.stdout.strip() == VERSION
    assert (target / "aws_keepalive.pth").is_file()


def test_user_and_password_upload(index, tmp_path):
    """INDEX_USER + INDEX_PASSWORD (no TOKEN): the upload is accepted and listed."""
    completed = make_publish_wheel(tmp_path / "build", INDEX_URL=index + "/", INDEX_USER=USER, INDEX_PASSWORD=PASSWORD)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert served_files(index) == [build_wheel.wheel_filename(VERSION)]


def test_wrong_token_is_refused_and_nothing_is_published(index, tmp_path):
    """A token the index does not accept: make fails, the index still has no file."""
    completed = make_publish_wheel(tmp_path / "build", INDEX_URL=index + "/", TOKEN="not-the-token")
    assert completed.returncode != 0
    assert "403 Forbidden" in completed.stdout + completed.stderr, completed.stdout + completed.stderr
    assert served_files(index) == []


@pytest.mark.parametrize("variables, message", [
    ({"TOKEN": TOKEN}, "set INDEX_URL"),
    ({"INDEX_URL": "http://127.0.0.1:9/"}, "set TOKEN"),
], ids=["no-url", "no-credentials"])
def test_missing_settings_are_named(variables, message, tmp_path):
    """Without INDEX_URL, or without any credentials, make fails naming the variable to set."""
    completed = make_publish_wheel(tmp_path / "build", **variables)
    assert completed.returncode != 0
    assert message in completed.stderr
