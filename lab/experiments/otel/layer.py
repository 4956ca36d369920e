"""The OpenTelemetry Lambda layer as the lab's stand-in /opt gets it (for "behind OTel/ADOT" runs).

The OpenTelemetry Lambda layer and ADOT ship their packages in the layer's ``python/`` folder and
an ``otel-instrument`` script at the layer root that functions name in AWS_LAMBDA_EXEC_WRAPPER.
Lambda extracts every layer into the one /opt, so ours and theirs share ``/opt/python``.

``add_to(opt, minor)`` does the same to a stand-in /opt folder: the hash-pinned packages of
lab/otel-requirements.txt (the real opentelemetry-distro, -instrumentation, -sdk and the botocore
instrumentation), installed once per CPython minor with ``--target`` (as such layers are built)
into ``.venv/otel-X.Y/python``, copied into ``<opt>/python``; and lab/experiments/otel/otel-instrument (our
equivalent of their script) as ``<opt>/otel-instrument``.
"""

import shutil
from pathlib import Path

from lab import REPO
from lab.standin import runtime_prefix

LOCK_FILE = REPO / "lab" / "otel-requirements.txt"
WRAPPER = Path(__file__).resolve().parent / "otel-instrument"
EXEC_WRAPPER = "/opt/otel-instrument"  # the value functions set in AWS_LAMBDA_EXEC_WRAPPER


def packages(minor: str) -> Path:
    """``.venv/otel-X.Y`` (holding ``python/``), installed on first use for that minor."""
    root = runtime_prefix.VENV_ROOT / ("otel-" + minor)
    runtime_prefix.install_lock_once(LOCK_FILE, root / "python", runtime_prefix.ensure(minor))
    return root


def add_to(opt, minor: str = "3.12") -> Path:
    """Extract "the OTel layer" into the stand-in /opt folder ``opt`` (beside ours); returns opt."""
    opt = Path(opt)
    shutil.copytree(packages(minor) / "python", opt / "python", dirs_exist_ok=True, symlinks=True)
    shutil.copy2(WRAPPER, opt / "otel-instrument")
    return opt


if __name__ == "__main__":
    import sys

    for name in sys.argv[1:]:
        print(packages(name))
