"""aws_keepalive.start: the .pth's PEP 829 twin, which site runs from Python 3.15 on.

No CPython 3.15 exists here.  PEP 829 (accepted for 3.15) says what its site does with a site
directory: it appends the .pth files' path lines; for each ``<name>.start`` beside a
``<name>.pth`` it skips that .pth's ``import`` lines; it reads each .start (utf-8-sig, one
``pkg.mod:callable`` entry point per line; blank lines and ``#`` comments skipped), resolves each
entry with ``pkgutil.resolve_name`` and calls it with no arguments.  ``SITE_315`` below does
exactly that in a fresh interpreter started with -S (so that no real site runs first), on the
layer folder.  The real site of the interpreter running the tests (3.10 - 3.14) is checked too:
it ignores the .start and runs the .pth.
"""

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import BASE_ENV, LAYER, ON

START = os.path.join(LAYER, "aws_keepalive.start")
# PEP 829 allows only the colon form pkg.mod:callable (callable required).
ENTRY_POINT = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

REPORT = """
import json, sys
print(json.dumps({
    "modules": sorted(n for n in sys.modules if "keepalive" in n),
    "finder_waiting": any(type(f).__name__ == "_PostImportFinder" for f in sys.meta_path),
    "botocore_imported": "botocore" in sys.modules,
}))
"""

# What site of Python 3.15 does with one site directory (PEP 829), nothing more.
SITE_315 = """
import os, pkgutil, sys
sitedir = sys.argv[1]
sys.path.append(sitedir)
names = sorted(n for n in os.listdir(sitedir) if not n.startswith("."))
starts = {n[:-len(".start")] for n in names if n.endswith(".start")}
for name in names:
    if name.endswith(".pth") and name[:-len(".pth")] not in starts:
        with open(os.path.join(sitedir, name), encoding="utf-8-sig") as pth:
            for line in pth:
                if line.startswith(("import ", "import\\t")):
                    exec(line)
for name in names:
    if name.endswith(".start"):
        with open(os.path.join(sitedir, name), encoding="utf-8-sig") as start:
            for line in start:
                line = line.strip()
                if line and not line.startswith("#"):
                    pkgutil.resolve_name(line)()
""" + REPORT


def run(script, env, *args):
    completed = subprocess.run([sys.executable, "-S", "-c", script, LAYER, *args], env=dict(BASE_ENV, **env),
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.splitlines()[-1]), completed.stderr


def layer_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("aws-keepalive:")]


def test_start_is_the_pth_twin_with_one_colon_form_entry_point():
    """aws_keepalive.start sits beside aws_keepalive.pth (same name: 3.15 then skips the .pth's import
    line) and holds one entry point in PEP 829's pkg.mod:callable form, utf-8-sig decodable."""
    assert os.path.isfile(os.path.join(LAYER, "aws_keepalive.pth"))
    with open(START, encoding="utf-8-sig") as start:
        entries = [line.strip() for line in start if line.strip() and not line.startswith("#")]
    assert len(entries) == 1 and ENTRY_POINT.fullmatch(entries[0]), entries


@pytest.mark.parametrize("switch", [None, "0", "off"])
def test_site_315_off_imports_only_the_entry_points_module(switch):
    """Switch unset or off, 3.15's site: the entry point's small module is imported (resolve_name
    must), the package is not, nothing is printed, no import hook is installed."""
    result, stderr = run(SITE_315, {} if switch is None else {"AWS_PYTHON_KEEPALIVE": switch})
    assert result == {"modules": ["_aws_keepalive_site"], "finder_waiting": False, "botocore_imported": False}
    assert stderr == ""


def test_site_315_on_activates_through_start_not_pth():
    """Switch on, 3.15's site: activation through the .start (route "start"), once; the .pth's import
    line is skipped; botocore is waited for, not imported."""
    result, stderr = run(SITE_315, dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
    assert result["finder_waiting"] is True and result["botocore_imported"] is False
    lines = layer_lines(stderr)
    assert len(lines) == 1 and "(via start)" in lines[0], stderr


def test_both_routes_in_one_process_activate_once():
    """Were both to fire (the .pth line, then the entry point): one activation, by the first."""
    script = ("import site, sys, pkgutil\nsite.addsitedir(sys.argv[1])\n"
              "pkgutil.resolve_name(open(sys.argv[1] + '/aws_keepalive.start').read().strip())()\n" + REPORT)
    result, stderr = run(script, dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
    assert result["finder_waiting"] is True
    lines = layer_lines(stderr)
    assert len(lines) == 1 and "(via pth)" in lines[0], stderr


def test_this_interpreters_site_runs_the_route_its_version_reads():
    """The real site.addsitedir of the interpreter running the tests: before 3.15 it ignores the
    .start and runs the .pth (route "pth"); from 3.15 the .start (route "start")."""
    script = "import site, sys\nsite.addsitedir(sys.argv[1])\n" + REPORT
    result, stderr = run(script, dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
    route = "start" if sys.version_info >= (3, 15) else "pth"
    lines = layer_lines(stderr)
    assert result["finder_waiting"] is True
    assert len(lines) == 1 and "(via %s)" % route in lines[0], stderr
