"""The managed runtime's startup, then one direct call of the handler: for tests without a Runtime API.

Like ``bootstrap.py`` beside it, this script is run by the interpreter from this folder (which plays
``/var/runtime``, so it is ``sys.path[0]``) and takes the layer folders through ``startup.run`` --
the interpreter started without ``-S``/``-I``/``-E`` and, by default, with PYTHONPATH unset, so
``site`` has already run before any layer folder is on sys.path, and the layer's ``.pth`` runs
during ``site.addsitedir``.  Then, instead of awslambdaric's loop, the handler module is imported
and called once with the given event, and its return value is printed to stdout as one JSON line.

With ``--snapstart`` the SnapStart hooks run between the handler import (init) and the call, as
awslambdaric's ``on_init_complete`` runs them when AWS_LAMBDA_INITIALIZATION_TYPE=snap-start:
before-snapshot hooks in reverse order of registration, then (the snapshot, the restore) the
after-restore hooks in order.  ``--pause-s`` sleeps between import and call (provisioned
concurrency: init long before the first invocation).

Usage: python invoke_once.py --opt DIR --task DIR --handler module.function [--event JSON]
       [--snapstart] [--pause-s SECONDS]
"""

import argparse
import importlib
import json
import os
import sys
import time

import startup


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt", required=True, help="folder standing in for /opt")
    parser.add_argument("--task", required=True, help="folder standing in for /var/task")
    parser.add_argument("--handler", required=True, help="module.function")
    parser.add_argument("--event", default="{}")
    parser.add_argument("--snapstart", action="store_true", help="run the SnapStart hooks")
    parser.add_argument("--pause-s", type=float, default=0.0, help="sleep between init and call")
    args = parser.parse_args()

    startup.run(args.opt, args.task, os.path.dirname(os.path.abspath(__file__)))

    module_name, function_name = args.handler.rsplit(".", 1)
    handler = getattr(importlib.import_module(module_name), function_name)
    if args.snapstart:
        run_snapstart_hooks()
    if args.pause_s:
        time.sleep(args.pause_s)
    result = handler(json.loads(args.event), None)
    sys.stdout.write(json.dumps(result) + "\n")


def run_snapstart_hooks():
    """awslambdaric.lambda_runtime_hooks_runner's order (awslambdaric 4.x)."""
    from snapshot_restore_py import get_after_restore, get_before_snapshot

    before_snapshot = get_before_snapshot()
    while before_snapshot:
        func, func_args, func_kwargs = before_snapshot.pop()
        func(*func_args, **func_kwargs)
    for func, func_args, func_kwargs in get_after_restore():
        func(*func_args, **func_kwargs)


if __name__ == "__main__":
    main()
