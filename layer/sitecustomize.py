"""Fallback entry point of the aws-keepalive layer, then hand-over to any other sitecustomize.

On the managed Python runtimes ``aws_keepalive.pth`` is what activates the layer.  But when the
interpreter starts with PYTHONPATH already set (exec wrappers such as OpenTelemetry's do this),
the runtime skips adding /opt/python as a site directory and no ``.pth`` there runs; ``site``
imports the first ``sitecustomize`` on sys.path instead, which is this file when /opt/python is on
PYTHONPATH.  Activation is idempotent, so both routes may run in one process.

This file would hide any other ``sitecustomize`` later on sys.path (another layer's, the
interpreter's), so it loads that one next, as ``site`` would have: nothing is lost.
"""

import os
import sys


def _activate():
    value = os.environ.get("AWS_PYTHON_KEEPALIVE", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return
    import aws_keepalive

    aws_keepalive.activate("sitecustomize")


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    later = False
    for entry in list(sys.path):
        folder = os.path.abspath(entry or os.curdir)
        if folder == here:
            later = True
            continue
        if later and os.path.isfile(os.path.join(folder, "sitecustomize.py")):
            import importlib.util

            spec = importlib.util.spec_from_file_location(
                "sitecustomize", os.path.join(folder, "sitecustomize.py")
            )
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
            return


_activate()
_chain()
