"""aws_keepalive.pth: the entry point the managed runtime runs (site.addsitedir on /opt/python)."""

import json
import os
import subprocess
import sys

from conftest import BASE_ENV, LAYER, ON

# The handler module records, at its own import, what the layer did before it: exactly what a
# function sees on Lambda when its module is imported after the runtime's startup.
STARTUP_STATE = """
    import os
    import sys

    STATE = {
        "layer_imported": sorted(name for name in sys.modules if name.startswith("aws_keepalive")),
        "botocore_imported": "botocore" in sys.modules,
        "finder_waiting": any(type(f).__name__ == "_PostImportFinder" for f in sys.meta_path),
        "BOTOCORE_TCP_KEEPALIVE": os.environ.get("BOTOCORE_TCP_KEEPALIVE"),
    }

    def handler(event, context):
        return STATE
"""


def test_off_imports_nothing_changes_nothing(run_function):
    """Switch unset: the .pth line imports nothing, changes no variable, prints nothing."""
    run = run_function(STARTUP_STATE)
    assert run.returncode == 0, run
    assert run.result == {"layer_imported": [], "botocore_imported": False,
                          "finder_waiting": False, "BOTOCORE_TCP_KEEPALIVE": None}
    assert run.stderr == ""


def test_off_value_imports_nothing(run_function):
    """Switch set to an off value (0): same as unset."""
    run = run_function(STARTUP_STATE, env={"AWS_PYTHON_KEEPALIVE": "0"})
    assert run.result["layer_imported"] == [] and run.stderr == ""


def test_on_waits_for_botocore_without_importing_it(run_function):
    """Switch on: before the handler import the hook waits for botocore, which is not imported."""
    run = run_function(STARTUP_STATE, env=ON)
    assert run.returncode == 0, run
    assert run.result["botocore_imported"] is False
    assert run.result["finder_waiting"] is True
    assert "aws_keepalive.patch" not in run.result["layer_imported"]
    # Nothing exported: an exec wrapper's children must not inherit a half-on botocore switch.
    assert run.result["BOTOCORE_TCP_KEEPALIVE"] is None
    assert run.stderr == ""


def test_on_imports_only_its_own_modules_at_startup():
    """Switch on: the .pth imports the hook's own modules and nothing else -- no socket, threading,
    selectors or enum (botocore imports those when the function imports it; a process that never
    does must not pay for them at interpreter start). Modules site imports to read any .pth
    (encodings.*) are site's own."""
    script = ("import json, site, sys; before = set(sys.modules); site.addsitedir(sys.argv[1]); "
              "print(json.dumps(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", script, LAYER], env=dict(BASE_ENV, **ON), capture_output=True,
                         text=True, timeout=30, check=True).stdout
    added = [name for name in json.loads(out) if not name.startswith("encodings.")]
    assert "aws_keepalive" in added
    assert [name for name in added if name.split(".")[0] != "aws_keepalive"] == []


def test_no_prepared_index_no_prepared_module():
    """Switch on, no prepared data beside the package (the hook flavor, this source tree): importing
    botocore does not import aws_keepalive.prepared (nor the pickle it would bring)."""
    assert not os.path.exists(os.path.join(LAYER, "aws_keepalive", "prepared-data"))
    script = ("import json, site, sys; site.addsitedir(sys.argv[1]); import botocore.session; "
              "print(json.dumps(['aws_keepalive.patch' in sys.modules, 'aws_keepalive.prepared' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", script, LAYER], env=dict(BASE_ENV, **ON), capture_output=True,
                         text=True, timeout=60, check=True).stdout
    assert json.loads(out) == [True, False]


def test_debug_startup_line_does_not_import_botocore(run_function):
    """Debug on: the startup line names botocore's version and path without importing it."""
    run = run_function(STARTUP_STATE, env=dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1"))
    assert run.returncode == 0, run
    assert run.result["botocore_imported"] is False
    assert run.result["finder_waiting"] is True
    assert "botocore 1." in run.layer_lines[0]


def test_users_botocore_variable_is_kept(run_function):
    """A BOTOCORE_TCP_KEEPALIVE the user set is left as it is."""
    run = run_function(STARTUP_STATE, env=dict(ON, BOTOCORE_TCP_KEEPALIVE="false"))
    assert run.result["BOTOCORE_TCP_KEEPALIVE"] == "false"


def test_unknown_switch_value_warns_once_and_stays_off(run_function):
    """AWS_PYTHON_KEEPALIVE=maybe: one warning line on stderr, layer off, function works."""
    run = run_function(STARTUP_STATE, env={"AWS_PYTHON_KEEPALIVE": "maybe"})
    assert run.returncode == 0, run
    assert run.result["finder_waiting"] is False
    assert run.result["BOTOCORE_TCP_KEEPALIVE"] is None
    assert len(run.stderr.splitlines()) == 1 and "AWS_PYTHON_KEEPALIVE='maybe'" in run.stderr


def test_pth_is_a_single_import_line():
    """The .pth file is one line starting with 'import' (site executes only such lines)."""
    with open(os.path.join(LAYER, "aws_keepalive.pth")) as pth:
        lines = [line for line in pth.read().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("import ")


def test_pth_fast_path_matches_settings_off_values():
    """The .pth's inline off-check and settings.OFF_VALUES agree, value for value."""
    from aws_keepalive import settings

    script = (
        "import os, site, sys; site.addsitedir(sys.argv[1]); "
        "print(any(n.startswith('aws_keepalive') for n in sys.modules))"
    )
    for value in settings.OFF_VALUES + ("OFF", " no ") + settings.ON_VALUES:
        env = dict(BASE_ENV, AWS_PYTHON_KEEPALIVE=value)
        out = subprocess.run([sys.executable, "-c", script, LAYER], env=env, capture_output=True,
                             text=True, timeout=30, check=True).stdout.strip()
        assert json.loads(out.lower()) is (value.strip().lower() in settings.ON_VALUES), value


def test_package_entry_point_off_values_match_settings():
    """The package's inline off-values (its opentelemetry entry point) are settings.OFF_VALUES."""
    import aws_keepalive
    from aws_keepalive import settings

    assert aws_keepalive._OFF_VALUES == settings.OFF_VALUES


def test_pth_unset_switch_costs_one_membership_test():
    """Switch unset: the .pth only asks whether the variable exists (the value check is not even compiled)."""
    script = (
        "import json, os, site, sys\n"
        "class Recorder(dict):\n"
        "    seen = []\n"
        "    def __contains__(self, key):\n"
        "        self.seen.append(['in', key]); return dict.__contains__(self, key)\n"
        "    def get(self, key, default=None):\n"
        "        self.seen.append(['get', key]); return dict.get(self, key, default)\n"
        "    def __getitem__(self, key):\n"
        "        self.seen.append(['getitem', key]); return dict.__getitem__(self, key)\n"
        "os.environ = Recorder(os.environ)\n"
        "site.addsitedir(sys.argv[1])\n"
        "print(json.dumps([s for s in Recorder.seen if s[1].startswith('AWS_PYTHON_KEEPALIVE')]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, LAYER], env=BASE_ENV, capture_output=True,
                         text=True, timeout=30, check=True).stdout
    assert json.loads(out) == [["in", "AWS_PYTHON_KEEPALIVE"]]
