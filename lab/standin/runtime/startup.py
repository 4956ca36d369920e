"""The managed Python runtime's startup steps, as ``../shared/FACTS.md`` documents them.

Both drivers in this folder (which plays ``/var/runtime``) run them in this order before the
handler is imported: ``bootstrap.py`` (awslambdaric serving a Runtime API) and ``invoke_once.py``
(one direct call, for tests that need no Runtime API).  One copy, so the two cannot drift apart.

1. only when PYTHONPATH was unset at start: ``<opt>/python/lib/pythonX.Y/site-packages`` and
   ``<opt>/python`` go to the front of sys.path (resulting order: site-packages, then python);
2. the task root goes first of all;
3. only when PYTHONPATH was unset: ``site.addsitedir()`` on the task root and both layer folders,
   which executes the ``import`` lines of ``.pth`` files there (the layer's hook entry point);
4. only when PYTHONPATH was unset: PYTHONPATH is set to the runtime folder (child processes only).

Nothing here may import anything beyond the standard library: it runs before the layer is loaded.
"""

import os
import site
import sys
import time

# (perf_counter, process_time) when ``run`` began: where the runtime starts adding the layers, read
# by bench/coldstart.py's function to time a cold start from there (the real bootstrap has no such
# mark; reading two clocks changes nothing for the function).
STARTED = None


def layer_folders(opt):
    version_dir = "python%d.%d" % sys.version_info[:2]
    return os.path.join(opt, "python", "lib", version_dir, "site-packages"), os.path.join(opt, "python")


def set_default_sys_path(opt, task_root):
    if "PYTHONPATH" not in os.environ:
        layer_site_packages, layer_python = layer_folders(opt)
        sys.path.insert(0, layer_python)
        sys.path.insert(0, layer_site_packages)
    sys.path.insert(0, task_root)


def add_default_site_directories(opt, task_root):
    if "PYTHONPATH" not in os.environ:
        layer_site_packages, layer_python = layer_folders(opt)
        for folder in (task_root, layer_site_packages, layer_python):
            site.addsitedir(folder)


def set_default_pythonpath(runtime_dir):
    if "PYTHONPATH" not in os.environ:
        os.environ["PYTHONPATH"] = runtime_dir


def run(opt, task_root, runtime_dir):
    """Steps 1-4, in order."""
    global STARTED
    STARTED = time.perf_counter(), time.process_time()
    set_default_sys_path(opt, task_root)
    add_default_site_directories(opt, task_root)
    set_default_pythonpath(runtime_dir)
