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
   patched), and hands back that spec with its loader wrapped.
3. The wrapped loader executes the module as usual, then calls the callback.  This all happens
   while the import system holds the module's lock, so a second thread importing botocore at the
   same moment waits until the patch is in place: no client can be created unpatched.
4. The wrapper puts the real loader back on the module before executing it, so introspection
   (``module.__loader__``, ``importlib.resources``) sees botocore's own loader, and the finder
   removes itself once the callback ran: after that the hook costs nothing.
"""

import sys

TARGET = "botocore.session"


class _PostImportFinder:
    """sys.meta_path finder that wraps the loader of its target; every other import passes by."""

    def __init__(self, callback, target):
        self._callback = callback
        self.target = target

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.target:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PostImportLoader(spec.loader, self)
        return spec

    def imported(self, module):
        """Called once the target has executed: stop watching, then run the callback."""
        uninstall(self)
        self._callback(module)


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
