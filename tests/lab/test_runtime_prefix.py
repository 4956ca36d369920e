"""lab/runtime_prefix.py: the stand-in interpreter is a plain CPython prefix with the user site on."""

import json
import subprocess

from lab import runtime_prefix

REPORT = ("import json, site, sys; print(json.dumps({'prefix': sys.prefix, 'exec_prefix': sys.exec_prefix, "
          "'base_prefix': sys.base_prefix, 'user_site': site.ENABLE_USER_SITE, 'path': sys.path}))")


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
