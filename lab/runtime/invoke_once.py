"""The managed runtime's startup, then one direct call of the handler: for tests without a Runtime API.

Like ``bootstrap.py`` beside it, this script is run by the interpreter from this folder (which plays
``/var/runtime``, so it is ``sys.path[0]``) and takes the layer folders through ``startup.run`` --
the interpreter started without ``-S``/``-I``/``-E`` and, by default, with PYTHONPATH unset, so
``site`` has already run before any layer folder is on sys.path, and the layer's ``.pth`` runs
during ``site.addsitedir``.  Then, instead of awslambdaric's loop, the handler module is imported
and called once with the given event, and its return value is printed to stdout as one JSON line.

Usage: python invoke_once.py --opt DIR --task DIR --handler module.function [--event JSON]
"""

import argparse
import importlib
import json
import os
import sys

import startup


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt", required=True, help="folder standing in for /opt")
    parser.add_argument("--task", required=True, help="folder standing in for /var/task")
    parser.add_argument("--handler", required=True, help="module.function")
    parser.add_argument("--event", default="{}")
    args = parser.parse_args()

    startup.run(args.opt, args.task, os.path.dirname(os.path.abspath(__file__)))

    module_name, function_name = args.handler.rsplit(".", 1)
    handler = getattr(importlib.import_module(module_name), function_name)
    result = handler(json.loads(args.event), None)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
