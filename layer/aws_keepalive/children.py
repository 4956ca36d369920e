"""Child processes: the layer active in every process the function's process starts to run Python.

The shape this serves: Lambda Managed Instances, where awslambdaric (4.0+, multi-concurrent mode,
``AWS_LAMBDA_MAX_CONCURRENCY`` set) starts N ``multiprocessing`` worker processes that each import
the handler and keep their own botocore pool; and any function's own ``ProcessPoolExecutor``,
``multiprocessing.Pool`` or ``Process``.  What the layer needs in a child depends on how
multiprocessing started it:

* ``fork`` (awslambdaric 4.2+ asks for it; the Linux default up to CPython 3.13): the child is a
  copy of the parent, post-import hook and patched botocore included.  Nothing to do; when the
  debug switch is on, an ``os.register_at_fork`` handler writes the child's own startup line
  (route ``fork``).
* ``forkserver`` (the Linux default from CPython 3.14, and so what awslambdaric 4.0.x gets there)
  and ``spawn``: the child is a new interpreter, started with the parent's environment -- on
  Lambda ``PYTHONPATH=/var/runtime``, so ``site`` processes no layer folder, no ``.pth`` runs, and
  the layer's folder only reaches ``sys.path`` later, when multiprocessing copies the parent's
  path.  Measured before this module: every such child's clients were stock, with no warning.

How a forkserver or spawn child gets the layer.  Both start methods send the child two pickles over
a pipe: first the "preparation data" (``multiprocessing.spawn.get_preparation_data``: a dict of
the parent's sys.path, cwd, main module, ...), which the child unpickles and applies with
``spawn.prepare`` -- restoring sys.path, then importing the parent's main module -- and only then
the process object, whose target (the function's code) is unpickled last.  So:

1. When the switch is on, activation puts a post-import hook on ``multiprocessing.spawn`` (the
   module both start methods call; it is imported only when the function uses multiprocessing:
   nothing is imported for this at startup, and nothing at all when the switch is off).  The hook
   wraps ``get_preparation_data`` to add one entry to the dict.
2. That entry unpickles, in the child, by executing a few lines that import this module from the
   parent's layer folder (passed as a string: sys.path is not restored yet) and call
   ``child_started``: the earliest moment the child runs anything of ours.  Unknown keys are
   ignored by ``prepare`` (checked in CPython 3.9 - 3.14), and a failure is caught there and
   reported on one line: the child then runs as stock, it is never broken.  A builtin (``exec``)
   is what gets unpickled because nothing else is importable yet; the lines travel in the parent's
   own pickle over multiprocessing's pipe, which the child trusts for the process object anyway.
3. ``child_started`` wraps ``spawn.prepare`` once, so that activation (route ``spawn`` or
   ``forkserver``) runs right after the parent's sys.path is restored and before the parent's main
   module and the process object are imported: before the child can import botocore, with the
   same botocore on the path as the parent, which the debug line names.

Locks across fork.  ``os.fork()`` copies the memory of the calling thread's process, locks
included, but not the other threads: a lock another thread held at that moment stays held in the
child for good, and the child's first call that takes it hangs.  The layer's module-level locks
(``LOCKS``) are taken on every request (patch.py's checked-out count) or when a host's idle
evidence changes, by any thread -- e.g. the durable execution SDK's checkpoint thread -- so an
``after_in_child`` handler, registered at activation, gives the child a new lock for each (and
clears the import hook's per-thread bookkeeping, whose thread ids mean nothing in the child).
Safe because each lock guards a few dict or counter updates that are atomic under the GIL: the
state behind a lock held at the fork is whole, only the lock is stale.  Each is an RLock (and
renewed as one): a signal handler that calls AWS runs in the main thread, possibly while that
thread is inside one of these sections, and must not wait for itself.  (urllib3's own pool locks
are per pool: a child that makes its own client never touches them, as with stock botocore.)

Not covered, by design: a Python program the function starts itself with ``subprocess`` or
``os.exec*`` is a new program, with ``PYTHONPATH=/var/runtime`` and without the layer's folder on
its path (it does not see the layer's boto3 either); start it with ``PYTHONPATH=/opt/python`` in
its environment and the layer's ``usercustomize`` activates it (route ``usercustomize``; the
user site must be on, as it is for the managed runtime's interpreter).
SnapStart hooks are registered only by the process the runtime restores, never by a child.

TLS sessions (resume.py): a forked child inherits its parent's clients and their contexts, but not
the sessions they cached -- resume.py's own ``after_in_child`` handler starts a new cache
generation, so the child's first connection per host is a full handshake (stock's) and parent and
child never offer the same ticket; a forkserver or spawn child has new contexts and starts empty.
"""

import os
import sys

from aws_keepalive import diagnostics, hook

TARGET = "multiprocessing.spawn"
# The preparation data's key for our entry (prepare() ignores keys it does not know).
DATA_KEY = "aws_keepalive"
# Routes whose activation happens in a child of an already activated process.
CHILD_ROUTES = ("fork", "forkserver", "spawn")

# Every lock of the layer, as (module, attribute): a forked child gets a new one of each.
LOCKS = (
    ("aws_keepalive.patch", "_checked_out_lock"),
    ("aws_keepalive.idle", "_hosts_lock"),
    ("aws_keepalive.metrics", "_lock"),
)

# Executed in a forkserver or spawn child while it unpickles the preparation data, before sys.path
# is restored: the layer's folder is put on the path just long enough to import this module.
_CHILD_LINES = """\
import sys
try:
    sys.path.insert(0, %(folder)r)
    try:
        import aws_keepalive.children
    finally:
        sys.path.remove(%(folder)r)
    aws_keepalive.children.child_started(aws_keepalive.activate)
except Exception as error:
    try:
        sys.stderr.write("aws-keepalive: WARN could not activate in a child process: %%r; "
                         "boto3/botocore clients behave as stock botocore\\n" %% (error,))
    except Exception:
        pass
"""


def install(startup_line=None):
    """Cover the children this process starts: called once by activation, switch on.

    ``startup_line`` (the package's, passed when the debug switch is on) writes a forked child's
    own startup line.  Passed rather than imported: the package imports this module, and this
    module does not import the package back (tests/lab/test_layout.py: no import cycle).
    """
    hook.install(_patch_spawn, TARGET)
    os.register_at_fork(after_in_child=renew_locks)
    if startup_line is not None:
        os.register_at_fork(after_in_child=lambda: _forked(startup_line))


def renew_locks():
    """In a forked child: a new lock for each of ``LOCKS`` whose module is loaded (see above)."""
    try:
        import threading

        for module_name, attribute in LOCKS:
            module = sys.modules.get(module_name)
            if module is not None and hasattr(module, attribute):
                setattr(module, attribute, threading.RLock())
        for finder in sys.meta_path:
            if isinstance(finder, hook._PostImportFinder):
                finder._finding.clear()
    except Exception:
        pass  # never break a child; with nothing renewed it is where stock leaves it


class _ChildStart:
    """The preparation data's entry: unpickles into running ``_CHILD_LINES`` in the child."""

    def __init__(self, folder):
        self.folder = folder

    def __reduce__(self):
        return exec, (_CHILD_LINES % {"folder": self.folder}, {})


def _layer_folder():
    """The folder holding this package (the layer's /opt/python, a task root, site-packages)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _patch_spawn(spawn):
    try:
        original = spawn.get_preparation_data
        if getattr(original, "_aws_keepalive", False):
            return
        start = _ChildStart(_layer_folder())

        def get_preparation_data(name):
            data = original(name)
            data[DATA_KEY] = start
            return data

        get_preparation_data._aws_keepalive = True
        get_preparation_data.__wrapped__ = original
        spawn.get_preparation_data = get_preparation_data
    except Exception as error:
        diagnostics.report_once("children", "child process patch failed: %r; children started "
                                "with forkserver or spawn behave as stock botocore" % (error,))


def child_started(activate):
    """In a forkserver or spawn child, from the preparation data: activate once sys.path is back.

    ``activate`` is the package's, passed by ``_CHILD_LINES`` (which imported the package anyway)."""
    import multiprocessing.spawn as spawn

    # A forkserver child is forked from the fork server, whose main loop lives in that module.
    route = "forkserver" if "multiprocessing.forkserver" in sys.modules else "spawn"
    original = spawn.prepare

    def prepare(data):
        spawn.prepare = original
        if "sys_path" in data:
            sys.path = data["sys_path"]  # what original() does first; the parent's botocore is found
        activate(route)
        original(data)

    spawn.prepare = prepare


def _forked(startup_line):
    """After os.fork() in the child (debug on): the child's own startup line."""
    try:
        startup_line("fork")
    except Exception:
        pass
