"""A post-import hook: run a callback right after a watched module is imported, and not before.

Two modules are watched: ``botocore.session`` (patch.py) and ``aiobotocore.session`` (aio.py,
for aiobotocore and aioboto3 on top of it).  Each has its own finder, which goes away once its
module was imported; the explanation below uses botocore, the same holds for aiobotocore (whose
session module imports its endpoint and HTTP session modules, so aiohttp is only imported when
the function imports aiobotocore itself).

Why a hook and not ``import botocore`` at startup: importing botocore costs 100-400 ms of cold
start, and a function that never creates a client (or imports it late) must not pay it.  The layer
only has to be in place before the first client is created, and every client is created through
``botocore.session.Session.create_client``.  By the time ``botocore.session`` has executed,
``botocore.args``, ``botocore.awsrequest`` and ``botocore.httpsession`` are imported too (the
session imports the client module, which imports them), so one hook on one module is enough.

How (the technique of wrapt's ``importer.py``, without the dependency):

1. A finder goes to the front of ``sys.meta_path``.  Python asks it first for every import; it
   answers None (costs one string comparison) except for ``botocore.session``.
2. For ``botocore.session`` it asks the finders behind it for the real spec (so whatever copy of
   botocore wins on ``sys.path`` -- the function's own in /var/task, or the layer's -- is the one
   patched), and hands back that spec with its loader watched: the import system's own loaders
   (``SourceFileLoader`` and its kin, ``zipimporter``) get an ``exec_module`` on the instance,
   which shadows the class's (or another hook's set there the same way: datadog-lambda's
   cold-start tracing does) and puts it back when called, so the spec keeps botocore's own
   loader object; any other loader (another hook's wrapper) is wrapped in ``_PostImportLoader``,
   which puts the loader it wraps back on the module before executing it.
3. The watched loader executes the module as usual, then calls the callback.  This all happens
   while the import system holds the module's lock, so a second thread importing botocore at the
   same moment waits until the patch is in place: no client can be created unpatched.
4. Introspection (``module.__loader__``, ``importlib.resources``) sees botocore's own loader, and
   the finder removes itself once the callback ran: after that the hook costs nothing.

Beside another import hook that works the same way (ddtrace's ModuleWatchdog, wrapt's
ImportHookFinder: ``ddtrace.patch(botocore=True)`` installs both): each asks every finder on
``sys.meta_path`` but itself, so while we ask it for the spec, it asks us again.  Answering that
second question too wrapped the loader twice (ours around theirs around ours) and ran the callback
twice.  So a finder asked again while it is already asking, in the same thread, answers None (the
other hook then finds the real spec behind us, as it would without us).  And when the other hook
came later (it is in front of ours: the Lambda order, where the layer activates first), it wraps
what we hand it and, after executing the module, puts back "its" real loader: a wrapper of ours
would stay on the module for good, botocore's own loader object does not -- hence step 2.
"""

import sys

# A builtin module (no import cost): whose question a finder is answering.
from _thread import get_ident

TARGET = "botocore.session"


class _PostImportFinder:
    """sys.meta_path finder that wraps the loader of its target; every other import passes by."""

    def __init__(self, callback, target):
        self._callback = callback
        self.target = target
        # Threads inside find_spec (a thread asked again by a hook it asked answers None).
        self._finding = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.target:
            return None
        thread = get_ident()
        if thread in self._finding:
            return None
        self._finding.add(thread)
        try:
            spec = self._find_behind(fullname, path, target)
        finally:
            self._finding.discard(thread)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        if type(loader).__module__ in _IMPORT_SYSTEM_MODULES:
            if getattr(vars(loader).get("exec_module"), "finder", None) is not self:
                loader.exec_module = _exec_then_callback(loader, self)
        elif not isinstance(loader, _PostImportLoader):
            spec.loader = _PostImportLoader(loader, self)
        return spec

    def _find_behind(self, fullname, path, target):
        """The spec the finders on sys.meta_path other than this one give (None: none does)."""
        for finder in sys.meta_path:
            if finder is self:
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def imported(self, module):
        """Called once the target has executed: stop watching, then run the callback (once)."""
        uninstall(self)
        callback, self._callback = self._callback, None
        if callback is not None:
            callback(module)


# Where the import system's own loader classes live (per-module instances with a __dict__;
# ``zipimporter`` serves a whole archive, hence the name check below).
_IMPORT_SYSTEM_MODULES = ("_frozen_importlib_external", "importlib._bootstrap_external", "zipimport")


def _exec_then_callback(loader, finder):
    """An ``exec_module`` for ``loader``'s instance: the one it shadows, then the finder's callback.

    What it shadows is the class's method, or another hook's ``exec_module`` already set on the
    instance the same way (datadog-lambda's cold-start tracing wraps the loader of every spec any
    finder returns, so by the time we see botocore's loader it may carry theirs).
    """
    shadowed = vars(loader).get("exec_module")

    def exec_module(module):
        if module.__name__ != finder.target:
            if shadowed is not None:
                return shadowed(module)
            return type(loader).exec_module(loader, module)
        # Gone before anything runs: whatever happens next, the loader is as we found it.
        if shadowed is None:
            vars(loader).pop("exec_module", None)
        else:
            loader.exec_module = shadowed
        loader.exec_module(module)
        finder.imported(module)

    exec_module.finder = finder
    return exec_module


class _PostImportLoader:
    """Delegates to the real loader; runs the finder's callback after exec_module."""

    def __init__(self, loader, finder):
        self._loader = loader
        self._finder = finder

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._finder.imported(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def install(callback, target=TARGET):
    """Run ``callback(module)`` now if ``target`` is imported, else right after it is."""
    module = sys.modules.get(target)
    if module is not None:
        callback(module)
        return None
    finder = _PostImportFinder(callback, target)
    sys.meta_path.insert(0, finder)
    return finder


def uninstall(finder):
    """Take ``finder`` off sys.meta_path (no error if it is already gone)."""
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def installed(target=TARGET):
    """True while a post-import finder is waiting for ``target``."""
    return any(
        isinstance(finder, _PostImportFinder) and finder.target == target for finder in sys.meta_path
    )
