"""Stand-in for the managed Python runtime's startup (``/var/runtime/bootstrap.py``).

It reproduces, step by step, what ``../shared/FACTS.md`` documents for python3.10 - 3.14, so that
tests exercise the layer's real entry points (the ``.pth`` file and ``sitecustomize.py``) the way
Lambda does, not by importing the package directly:

1. the interpreter was started *without* ``-S``/``-I``/``-E`` and, by default, with PYTHONPATH
   unset, so ``site`` has already run before any layer folder is on ``sys.path``;
2. only when PYTHONPATH was unset at start: the layer folders go to the front of ``sys.path``
   (resulting order: ``<opt>/python/lib/pythonX.Y/site-packages``, then ``<opt>/python``);
3. ``LAMBDA_TASK_ROOT`` goes first of all;
4. only when PYTHONPATH was unset: ``site.addsitedir()`` on the task root and both layer folders,
   which executes the ``import`` lines of ``.pth`` files found there;
5. PYTHONPATH is set to the runtime folder (affects child processes only);
6. the handler module is imported, and here also called once with the given event.

Usage: python bootstrap.py --opt DIR --task DIR --handler module.function [--event JSON]
The handler's return value is printed to stdout as one JSON line.
"""

import argparse
import importlib
import json
import os
import site
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt", required=True, help="folder standing in for /opt")
    parser.add_argument("--task", required=True, help="folder standing in for /var/task")
    parser.add_argument("--handler", required=True, help="module.function")
    parser.add_argument("--event", default="{}")
    args = parser.parse_args()

    pythonpath_at_start = "PYTHONPATH" in os.environ
    version_dir = "python%d.%d" % sys.version_info[:2]
    layer_site_packages = os.path.join(args.opt, "python", "lib", version_dir, "site-packages")
    layer_python = os.path.join(args.opt, "python")

    if not pythonpath_at_start:
        sys.path.insert(0, layer_python)
        sys.path.insert(0, layer_site_packages)
    sys.path.insert(0, args.task)
    if not pythonpath_at_start:
        for folder in (args.task, layer_site_packages, layer_python):
            site.addsitedir(folder)
    os.environ["PYTHONPATH"] = os.path.dirname(os.path.abspath(__file__))

    module_name, function_name = args.handler.rsplit(".", 1)
    handler = getattr(importlib.import_module(module_name), function_name)
    result = handler(json.loads(args.event), None)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
