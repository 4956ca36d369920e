"""aws_keepalive.activate: idempotent, and never raises into the function."""

from conftest import python_with_layer


def test_activate_twice_is_one_activation():
    """A second activate() adds no second finder per watched module and no second startup line."""
    completed = python_with_layer(
        "import sys, aws_keepalive\n"
        "aws_keepalive.activate('a'); aws_keepalive.activate('b')\n"
        "print(sorted(f.target for f in sys.meta_path if type(f).__name__ == '_PostImportFinder'))\n",
        {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"},
    )
    assert completed.stdout.strip() == "['aiobotocore.session', 'botocore.session', 'multiprocessing.spawn']"
    assert completed.stderr.count(" on (via ") == 1


def test_activation_failure_is_reported_not_raised():
    """An error during activation is reported once on stderr and does not reach the caller."""
    completed = python_with_layer(
        "import aws_keepalive, aws_keepalive.hook as hook\n"
        "def broken(callback): raise OSError('injected')\n"
        "hook.install = broken\n"
        "aws_keepalive.activate('test')\n"
        "print('function continues')\n",
        {"AWS_PYTHON_KEEPALIVE": "1"},
    )
    assert completed.returncode == 0
    assert completed.stdout.strip() == "function continues"
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and "injected" in lines[0] and "stock botocore" in lines[0]


def test_off_activate_does_nothing():
    """activate() with the switch off changes nothing and imports no submodule."""
    completed = python_with_layer(
        "import os, sys, aws_keepalive\n"
        "aws_keepalive.activate('test')\n"
        "print(sorted(n for n in sys.modules if n.startswith('aws_keepalive.')), "
        "os.environ.get('BOTOCORE_TCP_KEEPALIVE'))\n",
        {},
    )
    assert completed.stdout.strip() == "['aws_keepalive.settings'] None"


def test_opentelemetry_entry_point_activates_with_its_route():
    """opentelemetry_pre_instrument() (called by OTel's initialize()) activates, route "opentelemetry"."""
    completed = python_with_layer(
        "import sys, aws_keepalive\n"
        "count = lambda: sum(type(f).__name__ == '_PostImportFinder' for f in sys.meta_path)\n"
        "aws_keepalive.opentelemetry_pre_instrument(); after_entry_point = count()\n"
        "aws_keepalive.activate('pth')\n"
        "print(after_entry_point > 0 and count() == after_entry_point)\n",
        {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"},
    )
    assert completed.stdout.strip() == "True", completed.stderr
    assert completed.stderr.count(" on (via ") == 1 and "(via opentelemetry)" in completed.stderr


def test_opentelemetry_entry_point_off_imports_nothing():
    """Switch off: the entry point imports no submodule and prints nothing."""
    completed = python_with_layer(
        "import sys, aws_keepalive\n"
        "aws_keepalive.opentelemetry_pre_instrument()\n"
        "print(sorted(n for n in sys.modules if n.startswith('aws_keepalive.')))\n",
        {},
    )
    assert completed.stdout.strip() == "[]" and completed.stderr == ""


def test_late_activation_warns_and_still_patches():
    """botocore imported before activation: one warning naming the route; later clients patched."""
    completed = python_with_layer(
        "import botocore.session, aws_keepalive\n"
        "aws_keepalive.activate('usercustomize')\n"
        "from botocore.args import ClientArgsCreator\n"
        "print(hasattr(ClientArgsCreator._compute_socket_options, '__aws_keepalive_wrapped__'))\n",
        {"AWS_PYTHON_KEEPALIVE": "1"},
    )
    assert completed.stdout.strip() == "True", completed.stderr
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and "imported before" in lines[0] and "usercustomize" in lines[0]
