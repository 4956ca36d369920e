"""The twin's runtime driver (copied into the stand-in ``/var/runtime`` as twin_bootstrap.py).

Run by the stand-in interpreter from that folder (so it is ``sys.path[0]``, as /var/runtime is):
the managed runtime's startup steps first (startup.py: the layer folders on sys.path, then
``site.addsitedir`` on the task root and both layer folders, which runs the layer's ``.pth``:
activation exactly as on Lambda, with whatever AWS_PYTHON_KEEPALIVE says), then the function's
code (``twin_function``, in the task root) runs the named scenario with its parameters.  Prints
one JSON line: the scenario's checks, and the process's peak RSS.

Usage: python twin_bootstrap.py OPT TASK SCENARIO PARAMS_JSON
"""

import json
import os
import sys

import startup


def main():
    opt, task, scenario, params = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    startup.run(opt, task, os.path.dirname(os.path.abspath(__file__)))
    import twin_function

    checks = twin_function.run(scenario, params)
    sys.stdout.write(json.dumps({"checks": checks, "peak_rss_kb": twin_function.status_kb("VmHWM")}) + "\n")


if __name__ == "__main__":
    main()
