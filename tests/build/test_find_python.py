"""tools/interpreters/find_python.py (and its glue tools/interpreters/find-python): which interpreter each
place yields, in what order, and the one-line message when a minor is missing.

The places are faked with real folders: a PYENV_ROOT with versions/<x.y.z>/bin/python3, PATH folders
with python3.X, a uv install folder with cpython-<x.y.z>-.../bin/python3; every entry is a symlink to
a real interpreter (this test's own), so what the lookup returns can be run."""

import os
import subprocess
import sys

from tools.interpreters import find_python
import pytest
from conftest import REPO

REAL = os.path.realpath(sys.executable)
MINOR = "3.12"


def link(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(REAL, path)
    return str(path)


@pytest.fixture
def places(tmp_path):
    """Empty places: a PYENV_ROOT, a PATH folder, a uv install folder, and the environment naming them."""
    environ = {
        "PYENV_ROOT": str(tmp_path / "pyenv"),
        "PATH": str(tmp_path / "bin"),
        "UV_PYTHON_INSTALL_DIR": str(tmp_path / "uv"),
        "HOME": str(tmp_path / "home"),
    }
    return tmp_path, environ


def test_pyenv_newest_patch_release_wins(places):
    """pyenv: the highest patch release by number (3.12.10 over 3.12.9), free-threaded builds skipped."""
    root, environ = places
    link(root / "pyenv/versions/3.12.9/bin/python3")
    newest = link(root / "pyenv/versions/3.12.10/bin/python3")
    link(root / "pyenv/versions/3.12.11t/bin/python3")
    link(root / "pyenv/versions/3.13.0/bin/python3")
    assert find_python.find(MINOR, environ) == newest


def test_pyenv_before_path_before_uv(places):
    """Order: pyenv, then python3.X on PATH, then uv-managed; each only when the earlier has nothing."""
    root, environ = places
    in_uv = link(root / "uv/cpython-3.12.3-linux-x86_64-gnu/bin/python3")
    assert find_python.find(MINOR, environ) == in_uv
    on_path = link(root / "bin/python3.12")
    assert find_python.find(MINOR, environ) == on_path
    in_pyenv = link(root / "pyenv/versions/3.12.1/bin/python3")
    assert find_python.find(MINOR, environ) == in_pyenv
    assert subprocess.run([in_pyenv, "-c", "pass"]).returncode == 0


def test_path_skips_pyenv_shims(places):
    """A pyenv shims folder on PATH is no evidence of an interpreter: passed over for the next folder."""
    root, environ = places
    link(root / "pyenv-home/shims/python3.12")
    real = link(root / "bin/python3.12")
    environ["PATH"] = os.pathsep.join([str(root / "pyenv-home/shims"), str(root / "bin")])
    assert find_python.find(MINOR, environ) == real


def test_uv_default_install_folder(places):
    """Without UV_PYTHON_INSTALL_DIR: ~/.local/share/uv/python/cpython-3.12.*, newest patch."""
    root, environ = places
    del environ["UV_PYTHON_INSTALL_DIR"]
    environ["HOME"] = str(root / "home")
    link(root / "home/.local/share/uv/python/cpython-3.12.2-linux-x86_64-gnu/bin/python3")
    newest = link(root / "home/.local/share/uv/python/cpython-3.12.12-linux-x86_64-gnu/bin/python3")
    assert find_python.find(MINOR, environ) == newest


def test_nothing_found(places):
    """No place has the minor: None (and another minor present does not count)."""
    root, environ = places
    link(root / "bin/python3.11")
    link(root / "pyenv/versions/3.13.1/bin/python3")
    assert find_python.find(MINOR, environ, root=str(root / "installed")) is None


def run_glue(args, environ):
    return subprocess.run([os.path.join(REPO, "tools", "interpreters", "find-python"), *args], env=environ,
                          capture_output=True, text=True, timeout=30)


def glue_environ(root):
    """What the glue sees on a machine without pyenv: a folder with python3 and python3.11 only."""
    link(root / "bin/python3")
    link(root / "bin/python3.11")
    return {"PATH": str(root / "bin"), "PYENV_ROOT": str(root / "nonexistent"), "HOME": str(root / "home")}


def test_glue_prints_path_or_one_line_message(tmp_path):
    """tools/interpreters/find-python 3.11 prints the path; a missing minor: exit 1, one line naming the three ways."""
    environ = glue_environ(tmp_path)
    found = run_glue(["3.11"], environ)
    assert (found.returncode, found.stdout.strip()) == (0, str(tmp_path / "bin/python3.11"))
    missing = run_glue(["3.8"], environ)  # a minor make never installs into .venv/python
    assert missing.returncode == 1 and missing.stdout == ""
    assert len(missing.stderr.splitlines()) == 1
    for way in ("pyenv install 3.8", "apt install python3.8", "uv python install 3.8"):
        assert way in missing.stderr


def test_glue_make_words_and_missing_goal(tmp_path):
    """--make prints minor=path words for the minors found only; --missing names the make goal."""
    environ = glue_environ(tmp_path)
    words = run_glue(["--make", "3.7", "3.11", "3.8"], environ).stdout.split()
    assert words == ["3.11=%s" % (tmp_path / "bin/python3.11")]
    message = run_glue(["--missing", "3.13", "--goal", "test"], environ).stdout
    assert message.startswith("make test needs CPython 3.13") and len(message.splitlines()) == 1


def test_makefile_stops_when_a_missing_minor_cannot_be_installed(tmp_path):
    """make, asked for a venv of a minor this machine lacks and no source has (3.8: no uv, no Maven
    build), stops naming the goal, the minor, the ways to get it and why installing failed."""
    environ = glue_environ(tmp_path)
    environ["PATH"] += os.pathsep + "/usr/bin" + os.pathsep + "/bin"
    run = subprocess.run(["make", "--no-print-directory", "-n", "-C", REPO, ".venv/test-3.8/bin/python",
                          "UV=/nonexistent/uv"], env=environ, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    assert "make .venv/test-3.8/bin/python needs CPython 3.8" in run.stderr
    assert "uv python install 3.8" in run.stderr
    assert "Maven Central has no CPython 3.8 build" in run.stderr
    assert run.stderr.strip().splitlines()[-1].endswith("make could not get CPython 3.8: see the line above.  Stop.")
    assert not os.path.exists(os.path.join(REPO, ".venv", "python", "3.8"))


def test_uv_is_asked_when_given(places):
    """With the repo's uv: uv's own answer for a managed install (bin/python3.12), not the folder glob's."""
    root, environ = places
    uv = os.path.join(REPO, ".venv", "uv", "bin", "uv")
    assert os.access(uv, os.X_OK), "make bootstraps .venv/uv before any test venv"
    folder = root / "uv/cpython-3.12.1-linux-x86_64-gnu/bin"
    link(folder / "python3")
    os.symlink("python3", folder / "python3.12")
    assert find_python.find(MINOR, environ) == str(folder / "python3")
    assert find_python.find(MINOR, environ, uv=uv) == str(folder / "python3.12")


def test_install_glue_runs_the_installer(tmp_path):
    """tools/interpreters/install-python (a link to the glue) runs install_python.py: --report on a minor the PATH
    has prints its one line; the lookup glue has no --report (installing is not find_python's)."""
    environ = glue_environ(tmp_path)
    install = os.path.join(REPO, "tools", "interpreters", "install-python")
    run = subprocess.run([install, "--report", "3.11"], env=environ, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "CPython 3.11  %s  (python3.11 on PATH)" % (tmp_path / "bin/python3.11")
    assert run_glue(["--report", "3.11"], environ).returncode == 2  # argparse: unrecognized argument
