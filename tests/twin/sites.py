"""The folders a twin run starts from, shaped as on Lambda: ``/opt/python`` per flavor, the task root
(``/var/task``), the runtime folder (``/var/runtime``), and the interpreter (the lab's stand-in
``/var/lang``: a plain CPython prefix whose site-packages holds the runtime's bundled boto3).

* ``full``: the layer's package (this work tree's, copied: its prepared data and CA directory go
  inside it) beside the layer's pinned SDK (layer/requirements.txt, installed by make into
  ``.venv/twin/layer-sdk``), with the hashed CA directory of that SDK's default bundle and its
  prepared data: what tools/packaging/build_layer.py writes, by the same functions.  The twin's
  CA is added to that default bundle (botocore/cacert.pem, a copy), as if AWS's endpoints had
  it: the default-bundle check then verifies through the layer's directory.
  The stock twin's ``/opt/python`` holds the pinned wheels as published (``.venv/twin/layer-sdk``),
  the layer twin's the SDK the layer ships, layer/patches/ applied (``.venv/twin/layer-sdk-patched``,
  issue 36): the patches are compared with stock like every other optimization.
* ``hook``: the package alone, with the CA directory and prepared data of the runtime's bundled
  SDK (the stand-in prefix's boto3, from lab/runtime-sdk/<RUNTIME_BOTO3>.txt): the SDK the
  function imports is the runtime's.
* the task roots: the function's code (tests/twin/function.py as ``twin_function``) and the
  libraries it bundles (truststore, from tests/twin/requirements.txt); ``task-aio`` also holds
  aiobotocore 3.10.0 with the botocore it pins (the hook suites' stand-in task folder), as a
  function that bundles aiobotocore ships them.
* the runtime folder: the stand-in's startup steps (lab/standin/runtime/startup.py), the twin's
  driver (tests/twin/bootstrap.py) and the runtime's ``snapshot_restore_py``.

Built once per test session (~5 s: the prepared data of two SDKs).
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, REPO)
from tools.packaging import build_layer, ca_dir, prepare_data  # noqa: E402

MINOR = "%d.%d" % sys.version_info[:2]
VENV = os.path.join(REPO, ".venv")
# The stand-in runtime interpreter and what make installed for the twin (mk/test.mk sets these).
RUNTIME_PYTHON = os.environ.get("AWS_KEEPALIVE_TWIN_PYTHON", os.path.join(VENV, "lambda-" + MINOR, "bin", "python"))
LAYER_SDK = os.environ.get("AWS_KEEPALIVE_TWIN_LAYER_SDK", os.path.join(VENV, "twin", "layer-sdk"))
LAYER_SDK_PATCHED = os.environ.get("AWS_KEEPALIVE_TWIN_LAYER_SDK_PATCHED",
                                   os.path.join(VENV, "twin", "layer-sdk-patched"))
FUNCTION_LIBS = os.environ.get("AWS_KEEPALIVE_TWIN_LIBS", os.path.join(VENV, "twin", "function-libs"))
AIO_DIR = os.path.join(os.environ.get("AWS_KEEPALIVE_AIO_DIRS", os.path.join(VENV, "aio")), MINOR,
                       "aiobotocore-3.10.0")


class Sites:
    """Paths of one session's folders: ``opt[flavor, side]``, ``task[kind]``, ``runtime``, ``python``."""

    def __init__(self, root, default_ca):
        self.python = RUNTIME_PYTHON
        for needed in (RUNTIME_PYTHON, LAYER_SDK, LAYER_SDK_PATCHED, FUNCTION_LIBS, AIO_DIR):
            if not os.path.exists(needed):
                raise RuntimeError("%s is missing: run the twin through `make test-twin`" % needed)
        self.runtime_site = _site_packages(RUNTIME_PYTHON)
        # The full flavor's stock twin runs the pinned wheels as published, its layer twin the SDK the
        # full layer ships (layer/patches/ applied): the patches are part of what is compared.
        self.opt = {("full", "stock"): _opt(os.path.join(root, "opt-full-stock"), LAYER_SDK, default_ca=default_ca),
                    ("full", "layer"): _opt(os.path.join(root, "opt-full"), LAYER_SDK_PATCHED, default_ca=default_ca)}
        hook = _opt(os.path.join(root, "opt-hook"), None, self.runtime_site)
        self.opt.update({("hook", "stock"): hook, ("hook", "layer"): hook})
        self.task = {"plain": _task(os.path.join(root, "task"), []),
                     "aio": _task(os.path.join(root, "task-aio"), [AIO_DIR])}
        self.runtime = _runtime(os.path.join(root, "runtime"))


def _site_packages(python):
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    return os.path.join(prefix, "lib", "python" + MINOR, "site-packages")


def _link_entries(source, target, skip=()):
    for entry in os.listdir(source):
        if entry not in ("__pycache__", "bin") + skip and not entry.startswith(".") and not os.path.exists(
                os.path.join(target, entry)):
            os.symlink(os.path.join(source, entry), os.path.join(target, entry))


def _opt(opt, sdk, runtime_site=None, default_ca=None):
    """``opt/python`` of a flavor: the hook, the SDK (full), the CA directory and prepared data.
    ``default_ca`` (PEM bytes, full flavor): added to the SDK's default bundle before the layer's
    CA directory is built from it, so that a client verifying with the default bundle reaches the
    twin's servers -- through the hashed directory with the layer on, the bundle file without."""
    target = os.path.join(opt, "python")
    os.makedirs(target)
    build_layer.copy_hook(os.path.join(REPO, "layer"), target)
    ca_root = os.path.join(target, "aws_keepalive", "ca")
    if sdk is not None:
        os.makedirs(os.path.join(target, "botocore"))
        _link_entries(os.path.join(sdk, "botocore"), os.path.join(target, "botocore"), skip=("cacert.pem",))
        with open(os.path.join(sdk, "botocore", "cacert.pem"), "rb") as source:
            bundle = source.read()
        with open(os.path.join(target, "botocore", "cacert.pem"), "wb") as out:
            out.write(bundle + b"\n" + default_ca)
        _link_entries(sdk, target)
        ca_dir.build(build_layer.default_bundle(target), ca_root)
        prepare_data.prepare(target)
    else:
        ca_dir.build(build_layer.default_bundle(runtime_site), ca_root)
        prepare_data.prepare(runtime_site, os.path.join(target, prepare_data.OUTPUT))
    return opt


def _task(task, bundled):
    os.makedirs(task)
    shutil.copyfile(os.path.join(HERE, "function.py"), os.path.join(task, "twin_function.py"))
    for source in [FUNCTION_LIBS] + bundled:
        _link_entries(source, task)
    return task


def _runtime(runtime):
    import snapshot_restore_py

    os.makedirs(runtime)
    shutil.copyfile(os.path.join(REPO, "lab", "standin", "runtime", "startup.py"),
                    os.path.join(runtime, "startup.py"))
    shutil.copyfile(os.path.join(HERE, "bootstrap.py"), os.path.join(runtime, "twin_bootstrap.py"))
    shutil.copyfile(snapshot_restore_py.__file__, os.path.join(runtime, "snapshot_restore_py.py"))
    return runtime
