"""Stand-in for the managed Python runtime's ``/var/runtime/bootstrap.py`` (python3.10 - 3.14).

This folder (lab/standin/runtime/) plays ``/var/runtime``: the interpreter runs this script, so this folder
is ``sys.path[0]`` and LAMBDA_RUNTIME_DIR, and it holds nothing a function could import by accident
except this script and ``lab_observe``. The runtime's own site-packages (awslambdaric and the bundled
boto3) is the lab venv's site-packages, as ``/var/lang/lib/pythonX.Y/site-packages`` is on 3.11+.

Steps, in the order ``../shared/FACTS.md`` documents them:

0. awslambdaric is imported first, at module level, *before* any layer folder is on sys.path (the
   real bootstrap does ``from awslambdaric import __main__`` at the top too);
1-4. ``startup.run``: the layer folders and LAMBDA_TASK_ROOT on sys.path, ``site.addsitedir`` (which
   runs the layer's ``.pth``), PYTHONPATH set to LAMBDA_RUNTIME_DIR -- see startup.py;
5. awslambdaric's main loop imports ``_HANDLER`` and serves invocations from AWS_LAMBDA_RUNTIME_API.

Lab-only additions, which the real runtime does not have and which do not touch the function:
``--opt`` (the folder standing in for /opt; /opt itself when the lab bind-mounts the layer there) and
``--observe FILE`` (per-invocation counters of attempts, retries and connections; see lab_observe).

Multi-concurrent mode (AWS_LAMBDA_MAX_CONCURRENCY set, Lambda Managed Instances): awslambdaric's own
``MultiConcurrentRunner`` starts the workers.  Forked workers inherit the counters; a worker started
by forkserver or spawn (awslambdaric 4.0.x on CPython 3.14) imports this file as ``__mp_main__``
(module level only, as it would the real bootstrap), which installs them from LAB_OBSERVE_FILE.
"""

import os
import sys

from awslambdaric import __main__ as awslambdaricmain

import lab_observe
import startup

OBSERVE_VARIABLE = "LAB_OBSERVE_FILE"  # lab-only: where a forkserver/spawn worker writes its counters

if __name__ == "__mp_main__" and os.environ.get(OBSERVE_VARIABLE):
    lab_observe.install(os.environ[OBSERVE_VARIABLE])


def _parse_args(argv):
    opt, observe = "/opt", None
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag == "--opt":
            opt = args.pop(0)
        elif flag == "--observe":
            observe = args.pop(0)
        else:
            raise SystemExit("bootstrap.py: unknown argument %r" % flag)
    return opt, observe


def main(argv):
    opt, observe = _parse_args(argv)
    if observe:
        lab_observe.install(observe)
        if "AWS_LAMBDA_MAX_CONCURRENCY" in os.environ:
            os.environ[OBSERVE_VARIABLE] = observe
    task_root = os.environ["LAMBDA_TASK_ROOT"]
    startup.run(opt, task_root, os.environ["LAMBDA_RUNTIME_DIR"])
    awslambdaricmain.main([task_root, os.environ["_HANDLER"]])


if __name__ == "__main__":
    main(sys.argv[1:])
