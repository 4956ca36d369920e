"""What the layer's usercustomize.py does: activate, then hand over; and the entry point
``aws_keepalive.start`` names (PEP 829, Python 3.15+).

``site`` imports the first ``sitecustomize`` and then the first ``usercustomize`` it finds on
sys.path, the latter only when the user site is on (not with ``-s``, PYTHONNOUSERSITE or a venv
interpreter; the managed runtime's interpreter has it on).  So with /opt/python on PYTHONPATH
(exec wrappers), usercustomize runs whatever sitecustomize a wrapper put first (OpenTelemetry's
``opentelemetry-instrument`` puts its own, which chains to nothing).  Activation is idempotent,
so any number of routes may fire in one process.  The layer ships no sitecustomize.py: it adds
no coverage where the user site is on, and in /opt/python it would replace another layer's file
of that name, or be replaced by it (docs/activation.md).

Our usercustomize would hide another file of that name later on sys.path (the interpreter's, a
user's), so it loads that one next, as site would have: nothing is lost.  This module keeps the
logic out of the customize file; it has a private name so that nobody else imports it by
accident.
"""

import os
import sys

# aws_keepalive.OFF_VALUES, inlined: importing the package to read it would cost the off path an
# import (tests/hook/test_pth.py pins that the two agree).
_OFF_VALUES = ("", "0", "false", "no", "off")


def activate(route):
    """Activate the layer (route names the file in the debug line) when the switch is on."""
    if os.environ.get("AWS_PYTHON_KEEPALIVE", "").strip().lower() in _OFF_VALUES:
        return  # switched off: import nothing more
    try:
        import aws_keepalive
    except Exception as error:
        # activate() reports its own failures; a package that does not even import (a broken or
        # partial copy) must not stop site either, but it must not look switched on: one line.
        try:
            sys.stderr.write(
                "aws-keepalive: WARN the aws_keepalive package failed to import via %s: %r; "
                "boto3/botocore clients behave as stock botocore\n" % (route, error)
            )
        except Exception:
            pass
        return
    aws_keepalive.activate(route)


def start():
    """Entry point of ``aws_keepalive.start`` (PEP 829): site of Python 3.15+ resolves the line
    ``_aws_keepalive_site:start`` with ``pkgutil.resolve_name`` and calls it with no arguments,
    where older versions execute the import line of ``aws_keepalive.pth``.  The matching ``.start``
    makes 3.15+ skip that import line, so each version runs exactly one of the two; were both to
    run, activation is idempotent.  Switched off it costs this module's import and one lookup,
    as the .pth line costs one."""
    activate("start")


def chain(module_name, here_file):
    """Import the ``module_name`` that the folder of ``here_file`` hides: the first one on sys.path
    after it, found and executed as ``import`` would (site imports it so), whatever its form -- a
    ``.py``, a package, a sourceless ``.pyc``, an extension module, a zip entry.  Until issue 31
    this looked for ``<module_name>.py`` only, so a later package or ``.pyc`` never ran."""
    here = os.path.dirname(os.path.abspath(here_file))
    folders = [os.path.abspath(entry or os.curdir) for entry in sys.path]
    if here not in folders:
        return
    # What comes after our folder, without it (it may appear again: our file would find itself).
    later = [entry for entry, folder in zip(sys.path[folders.index(here) + 1:], folders[folders.index(here) + 1:])
             if folder != here]
    # importlib.machinery's PathFinder and importlib.util's module_from_spec, taken from the import
    # system's own frozen modules (always loaded; importing them is a dict lookup): importlib.util
    # and .machinery cost the switched-off startup ~2-7 ms of imports the function may never make.
    import _frozen_importlib
    import _frozen_importlib_external

    spec = _frozen_importlib_external.PathFinder.find_spec(module_name, later)
    if spec is None or spec.loader is None:
        return
    module = _frozen_importlib.module_from_spec(spec)
    sys.modules[module_name] = module
    # An error in the other module surfaces as it would without the layer (site prints it).
    spec.loader.exec_module(module)
