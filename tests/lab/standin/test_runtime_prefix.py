"""lab/standin/runtime_prefix.py: the stand-in interpreter is a plain CPython prefix with the user site on."""

import json
import os
from pathlib import Path
import subprocess

import pytest

from lab.standin import runtime_prefix

REPORT = ("import json, site, sys; print(json.dumps({'prefix': sys.prefix, 'exec_prefix': sys.exec_prefix, "
          "'base_prefix': sys.base_prefix, 'user_site': site.ENABLE_USER_SITE, 'path': sys.path}))")
DEBIAN_PYTHON = Path("/usr/bin/python3.11")


def test_prefix_is_its_own_with_the_user_site_on():
    """Not a venv (which would turn usercustomize off): prefix == base prefix == the folder, user site on,
    and sys.path holds only the prefix's own folders (no pyenv site-packages)."""
    python = runtime_prefix.ensure("3.12")
    folder = str(python.parents[1])
    report = json.loads(subprocess.run([str(python), "-c", REPORT], capture_output=True, text=True,
                                       check=True, env={}, timeout=30).stdout)
    assert report["prefix"] == report["exec_prefix"] == report["base_prefix"] == folder
    assert report["user_site"] is True
    assert all(entry.startswith(folder) for entry in report["path"][1:]), report["path"]  # [0]: -c's ""


@pytest.mark.skipif(not DEBIAN_PYTHON.exists() or not os.path.exists("/usr/lib/python3/dist-packages"),
                    reason="no Debian /usr/bin/python3.11 (with its dist-packages site.py) on this machine")
def test_prefix_from_debian_python_reaches_its_site_packages(tmp_path):
    """Built from Debian's python3.11 (whose site.py adds dist-packages, not site-packages): awslambdaric
    imports from the prefix's own site-packages, user site on, no stdlib sitecustomize, and nothing of
    the machine's dist-packages on sys.path."""
    prefix = tmp_path / "lambda-3.11"
    python = runtime_prefix.build(DEBIAN_PYTHON, "3.11", prefix)
    check = REPORT.replace("print(", "import awslambdaric; print(").replace(
        "'path': sys.path", "'path': sys.path, 'awslambdaric': awslambdaric.__file__, "
                            "'sitecustomize': 'sitecustomize' in sys.modules")
    report = json.loads(subprocess.run([str(python), "-c", check], capture_output=True, text=True,
                                       check=True, env={}, timeout=30).stdout)
    folder = str(prefix)
    site_packages = str(prefix / "lib" / "python3.11" / "site-packages")
    assert str(runtime_prefix.site_packages(prefix, "3.11")) == site_packages
    assert report["prefix"] == report["exec_prefix"] == report["base_prefix"] == folder
    assert report["user_site"] is True
    assert report["awslambdaric"].startswith(site_packages + os.sep)
    assert site_packages in report["path"]
    assert report["sitecustomize"] is False
    assert all(entry.startswith(folder) for entry in report["path"][1:]), report["path"]
