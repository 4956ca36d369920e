"""Every benchmark's JSON output: ``{"measured_on": {...}, ...fields, "rows": [...]}`` under build/.

One writer so that every benchmark's file has the same shape and is announced the same way; run as
scripts (``python bench/x.py``), the benchmarks find this module next to them on sys.path.

``measured_on`` says where and when the rows were measured, because a number without its machine is
not worth quoting: on a 2-core machine shared with other work the same benchmark moves by tens of
per cent with the load. It records the host, its core count and CPU model, the load average when
this module was imported (the benchmark's start: every benchmark imports it first thing) and when
the rows were written, the interpreter that wrote them, and the command line. A benchmark that
times other interpreters (one per CPython minor) says which in its rows, with
:func:`interpreter_version`. tools/docs/render_docs.py prints these fields under every table it renders
into README.md and docs/.
"""

import json
import os
import platform
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Taken at import, i.e. when the benchmark starts.
_STARTED = time.time()
_LOAD_AT_START = os.getloadavg()


def _utc(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def cpu_model():
    """The first ``model name`` in /proc/cpuinfo (x86), else the machine type (``aarch64``, ...)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _relative(argument):
    """An argument with this checkout's path cut off, so the JSON does not name a home folder."""
    return argument.replace(REPO + os.sep, "") if isinstance(argument, str) else argument


def measured_on():
    """Where, when and by what these rows were measured (see the module docstring)."""
    return {
        "started": _utc(_STARTED),
        "finished": _utc(time.time()),
        "host": platform.node(),
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model(),
        "load_avg_start": [round(load, 2) for load in _LOAD_AT_START],
        "load_avg_end": [round(load, 2) for load in os.getloadavg()],
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "command": [_relative(argument) for argument in [os.path.basename(sys.executable)] + sys.argv],
    }


def interpreter_version(python):
    """The full version (``3.12.1``) of another interpreter, for benchmarks that time several."""
    return subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def write_rows(path, rows, **fields):
    """Write ``{"measured_on": ..., **fields, "rows": rows}`` to ``path`` (folders made as needed)
    and say so."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as out:
        json.dump(dict({"measured_on": measured_on()}, **fields, rows=rows), out, indent=1)
        out.write("\n")
    print("wrote %s" % path)
