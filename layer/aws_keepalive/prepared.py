"""Client creation answered from data the layer build prepared from the same files (both flavors).

Why: creating a botocore client does file-system and parsing work whose answer is fixed for a given
botocore release, and the SDK a function runs with is a read-only copy the layer build can know:
the full flavor's own (/opt/python/botocore), or, for the hook flavor, the one the managed runtime
bundles (/var/runtime; the releases in lab/runtime-sdk/*.txt):

* ``Loader.load_service_model`` checks the service name against ``list_available_services``,
  which lists every service folder of ``botocore/data`` (443 in 1.44.5) and stats each version's
  model file -- once per type (``service-2``, ``endpoint-rule-set-1``) per session.  At 128 MB's
  CPU share that is 0.3-0.4 s of a ~2 s client creation with a warm page cache, ~1 s with a cold
  one (every folder read is a disk read then).
* ``create_default_resolver`` parses ``endpoints.json`` (1.26 MB) with
  ``object_pairs_hook=OrderedDict``: ~40 ms at a full vCPU, ~0.5 s at 128 MB.

tools/packaging/prepare_data.py (a step of tools/packaging/build_layer.py) writes ``aws_keepalive/prepared-data/``:
the full flavor from its own staged tree, the hook flavor from each runtime SDK it knows (installed
from its hash-pinned lock).  Per botocore release, ``botocore-<version>.pickle``:

* an index of that SDK's data folders (``botocore/data``, ``boto3/data``): its top-level files and
  their sizes, and per service folder, per version folder, the names of the files in it; with the
  version of the package that owns the folder;
* for each top-level file of ``botocore/data`` (``endpoints``, ``partitions``,
  ``sdk-default-configuration``, ``_retry``), and the latest ``service-2`` and
  ``endpoint-rule-set-1`` of a few common services: its size, the sha256 of its bytes, and the name
  of the file beside the index holding it parsed exactly as botocore parses it
  (``json.loads(..., object_pairs_hook=OrderedDict)``, after gunzip for ``.json.gz``), pickled --
  named by content, so SDKs that ship the same file share one.

Which data folder is answered from an index (``_Prepared.tree``), checked once per folder per
process, on its first use by a Loader:

* the folder is ``<package>/data`` of the botocore (or boto3) that is imported, and that package's
  ``__version__`` is the one indexed (the index file is found by botocore's version: one stat at
  patch time, in patch.py, so that without one neither this module nor pickle is imported);
* and one listing of the folder matches the build's: the same service folders, the same top-level
  files with the same sizes.  A runtime copy that was changed there, or another build of the same
  version, is loaded as stock loads it.
* and, per service, at its first use in the process (a model of it loaded, its API versions listed:
  ``Loader.load_service_model`` checks before stock's code runs), one listing of the service folder
  and of each version folder in it matches the build's.  A copy of the same release changed inside
  a service folder (a private preview build's added API version, a model type added or removed)
  turns the whole data folder to stock loading from then on, and a Loader that cached answers from
  the index drops them, so the changed service is loaded as stock loads it.  The check costs about
  what stock's ``list_api_versions`` of that service costs (1-3 listings), not the 400+ listings
  saved.  Not checked: a service never loaded in the process whose folder changed inside only
  appears in (or is missing from) a ``list_available_services`` answer as the build listed it
  (models themselves are always read from the files, never from the index).

So the full flavor's own copy, the hook flavor's runtime copy, and a function's own copy of a
known release alike get the index; a function's copy of any other release (or a modified one)
does not.

What changes, and why the results are the same:

* The three Loader methods that walk the search path are replaced by versions that walk it the
  same way, in the same order, with the same ``isdir`` check of each search path; only for a
  search path that *is* a recognised data folder is the folder listing taken from the index.
  Every other search path -- ``AWS_DATA_PATH`` entries, ``~/.aws/models``, anything a caller
  appends -- is listed and stat'ed exactly as stock does, every time.  So a service added there
  appears, a newer API version there wins ``determine_latest_version``, and a model file there
  that differs from the build's wins ``load_data`` (earlier search paths win, as in stock).
* ``load_data`` of one of the pickled files reads the file, as stock does, and when its bytes are
  the build's (same length, same sha256) returns ``pickle.loads`` of the prepared parse: a fresh tree of
  the same types (``OrderedDict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``), in
  the same order, equal to what ``json.loads`` gives -- new objects at each call, like a parse, so
  callers that mutate what they loaded (``ExtrasProcessor`` merges into a model) still own it.
  Pickle rather than marshal or JSON (``make bench-client`` measures each form; docs/coldstart.md):
  pickle of the ``OrderedDict`` tree loads endpoints.json in about half the time of ``json.loads``
  with the ``OrderedDict`` hook; marshal loads plain dicts faster still, but converting them back to
  ``OrderedDict`` costs more than the parse (and without it the types would differ from stock).
  Pickle can run code: only ``collections.OrderedDict`` may be named in these files
  (``_unpickle``), and they sit in the same read-only layer as the code that reads them.
  Service models (``.json.gz``) keep stock's path, except the latest service model and endpoint
  rule set of a few common services (tools/packaging/prepare_data.SERVICES: DynamoDB, S3, Lambda),
  which are answered the same way, checked by the same hash of the bytes on disk: pickles of all
  of them would add ~15 MB to the zip.
* The results of the replaced methods are cached per Loader exactly as before (botocore's own
  ``instance_cache``, same keys).

When it does nothing (stock loading, whole or per search path):

* no index for the imported botocore's version (a release the build did not prepare, the source
  tree), or an index of another format or for another version (stale);
* a data folder that is not the imported package's, of another version, or whose listing differs;
* a Loader with another file loader class, or a subclass with its own ``_potential_locations``;
* a pickled file whose bytes on disk differ from the build's in any way: its content is hashed at
  each load (sha256, ~2.4 ms for endpoints.json at a full vCPU, ~35 ms at 128 MB's share, against
  ~0.5 s for stock's parse there), and a file of other bytes is parsed from those bytes, as stock
  parses it.  Why a hash and not (size, mtime, inode): the build cannot know the deployed copy's
  inode or ctime (Lambda unpacks the zip; /var/runtime is AWS's), an mtime is whatever the writer
  set (``touch -r`` restores it, and the layer's own files carry 1980-01-01), so no stat identity
  can say "these bytes are the build's"; only the bytes can.  Hashing the very bytes that are then
  answered for leaves no window between a check and a read;
* botocore's loader methods not botocore's own (``_usable``): ``JSONFileLoader.load_file``,
  ``_load_file`` or ``exists``, or ``Loader.load_data`` / ``_potential_locations`` replaced on the
  class (after or before the patch) or on the instance, as code that logs or redirects data files
  does: every path then goes through them, as in stock;
* one of the three replaced methods (``list_available_services``, ``list_api_versions``,
  ``load_data_with_path``) already not botocore's own on the Loader class when botocore is patched
  (``_is_botocores_own``: code that wraps it for logging, tracing or redirection before boto3 is
  imported): that method is left as it is, so it runs exactly as often as in stock, and the debug
  line says so; the other two still use the index.  A wrapper put on the class after the patch
  wraps ours, and a subclass's override reaches ours through ``super()``: both are called as often
  as in stock already;
* ``AWS_PYTHON_KEEPALIVE_PREPARED=0`` (settings.py), or the layer switched off: this is part of
  the layer's activation, so "off" stays "no layer code on any path".

A file of the prepared data that cannot be read (damaged) is reported once and loading stays stock.
"""

import os
import sys

from . import diagnostics
from .wrap import wrap as _wrap

# Written by tools/packaging/prepare_data.py at layer build time (patch.py's _prepared_index finds the index).
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prepared-data")
FORMAT = 3

# None: not read yet; False: unusable (stock loading); else the _Prepared read from the index.
_state = None
# The index file of the imported botocore, given to patch().
_index = None


def patch(index):
    """Replace the Loader's search-path walks; ``index`` is the imported botocore release's index
    file (patch.apply found it, and reports a failure once)."""
    global _index
    _index = index
    from botocore import loaders

    _OWN.update(_own_methods(loaders))

    for name, make_replacement in (("list_available_services", _make_list_available_services),
                                   ("list_api_versions", _make_list_api_versions),
                                   ("load_data_with_path", _make_load_data_with_path)):
        if _is_botocores_own(loaders, name):
            _wrap(loaders.Loader, name, make_replacement)
        elif not _is_ours(loaders.Loader.__dict__.get(name)):
            # Someone replaced it on the class before botocore was patched (a logging, tracing or
            # redirecting wrapper): a replacement of ours would call it only on its fallback path
            # (issue 34 item 4: stock called them 12/4/4 times, the layer 0/0/0).  Left as it is,
            # it runs exactly as often as in stock; the other methods still use the index.
            diagnostics.debug("prepared data: Loader.%s is not botocore's own (replaced before the layer "
                              "patched botocore); it is called as stock calls it, not answered from "
                              "the index" % name)
    _wrap(loaders.Loader, "load_service_model", _make_load_service_model)


def _is_ours(function):
    from .wrap import WRAPPED

    return getattr(function, WRAPPED, None) is not None


def _is_botocores_own(loaders, name):
    """Whether ``Loader.<name>`` is still the function botocore defined: its ``instance_cache``
    wrapper (the same code object ``instance_cache`` makes) around a function of botocore.loaders'
    own source file named ``Loader.<name>`` that wraps nothing.  A replacement made with
    functools.wraps copies the name and module but not the code (and adds ``__wrapped__``); one
    made with ``instance_cache`` around a function of its own fails the source-file check.  Only
    the class's own attribute counts (a subclass override runs as in stock: callers reach it
    first, and it reaches ours through super())."""
    function = loaders.Loader.__dict__.get(name)
    cache_code = loaders.instance_cache(lambda self: None).__code__
    code = getattr(function, "__code__", None)
    if code is not cache_code or hasattr(function, "__wrapped__") or "func" not in code.co_freevars:
        return False
    try:
        inner = function.__closure__[code.co_freevars.index("func")].cell_contents
    except (TypeError, IndexError, ValueError):
        return False
    inner_code = getattr(inner, "__code__", None)
    return (inner_code is not None and inner_code.co_filename == cache_code.co_filename
            and getattr(inner, "__qualname__", None) == "Loader." + name
            and getattr(inner, "__module__", None) == "botocore.loaders"
            and not hasattr(inner, "__wrapped__"))


# (class, method name) -> botocore's own function, as botocore defined it (recorded at patch time;
# None for one that was already not botocore's then).  _usable answers from the index only while
# a Loader and its file loader resolve every one of them to these.
_OWN = {}
_CHECKED_METHODS = (("JSONFileLoader", ("load_file", "_load_file", "exists")),
                    ("Loader", ("load_data", "_potential_locations")))


def _own_methods(loaders):
    """botocore's own functions of _CHECKED_METHODS: defined in botocore.loaders under that very
    name and not a wrapper (no ``__wrapped__``), else None (never botocore's own)."""
    own = {}
    for class_name, names in _CHECKED_METHODS:
        owner = getattr(loaders, class_name)
        for name in names:
            function = owner.__dict__.get(name)
            ours = (getattr(function, "__module__", None) == "botocore.loaders"
                    and getattr(function, "__qualname__", None) == "%s.%s" % (class_name, name)
                    and not hasattr(function, "__wrapped__"))
            own[(class_name, name)] = function if ours else None
    return own


def _methods_are_botocores(loader, file_loader):
    """Whether ``loader`` and ``file_loader`` call botocore's own functions for _CHECKED_METHODS
    (whatever replaced one on the class, a subclass or the instance makes this False)."""
    for (class_name, name), function in _OWN.items():
        target = file_loader if class_name == "JSONFileLoader" else loader
        if (function is None or name in getattr(target, "__dict__", ())
                or getattr(type(target), name, None) is not function):
            return False
    return True


# The pickle.Unpickler subclass _unpickle uses, made at its first call: pickle is imported when the
# index is first read (client creation), not when botocore is patched (make bench: the patch step).
_unpickler_class = None


def _make_unpickler_class():
    import pickle

    class _Unpickler(pickle.Unpickler):
        """Builds only what JSON parsing builds: the one class these files may name is OrderedDict."""

        def find_class(self, module, name):
            if (module, name) == ("collections", "OrderedDict"):
                from collections import OrderedDict

                return OrderedDict
            raise pickle.UnpicklingError("prepared data names %s.%s" % (module, name))

    return _Unpickler


def _unpickle(data):
    import io

    global _unpickler_class
    if _unpickler_class is None:
        _unpickler_class = _make_unpickler_class()
    return _unpickler_class(io.BytesIO(data)).load()


class _Prepared:
    """The index read from the imported botocore's index file: trees and parsed files by their path
    relative to a site folder (``botocore/data``, ``botocore/data/endpoints.json``)."""

    def __init__(self, index):
        self.trees = index["trees"]
        self.parsed = index["parsed"]
        # Search path -> (relative folder, top-level files, {service: {version: files}}) when it is a
        # recognised data folder, None when it is one of the imported packages' data folders but
        # not as built.  Only those paths are kept (at most one per tree): memory stays bounded
        # whatever search paths a process invents.
        self.checked = {}
        # (search path, service) -> whether that service folder is listed as built (service_tree);
        # only services of the index are checked: bounded by its size.
        self.services_checked = {}
        # How many recognised data folders turned out not as built at a service's check: a Loader
        # that cached answers from the index before then drops them (_make_load_service_model).
        self.spoiled = 0

    def tree(self, path):
        """(relative folder, top-level files, {service: {version: files}}) if ``path`` is the data
        folder of an imported package at the version indexed, listed as the build listed it; else
        None.  The listing is checked once per process, at the folder's first use."""
        try:
            return self.checked[path]
        except KeyError:
            pass
        for relative, tree in self.trees.items():
            module = sys.modules.get(tree["package"])
            module_file = getattr(module, "__file__", None)
            if getattr(module, "__version__", None) != tree["version"] or not isinstance(module_file, str):
                continue
            root = os.path.join(os.path.dirname(os.path.abspath(module_file)), "data")
            if os.path.normpath(os.path.abspath(path)) != root:
                continue
            found = None
            if _listed_as_built(path, tree):
                found = (relative, tree["files"], tree["services"])
                diagnostics.debug("prepared data: %s is %s %s's as built; listing it from the index"
                                  % (path, tree["package"], tree["version"]))
            else:
                diagnostics.debug("prepared data: %s is not listed as %s %s's was at build time; stock loading"
                                  % (path, tree["package"], tree["version"]))
            self.checked[path] = found
            return found
        return None


    def service_tree(self, path, service):
        """``tree(path)``, once ``service``'s own folder is checked as listed as built (its version
        folders, the files in each): the first listing of that service by any Loader in this process.
        A service folder that differs (a version folder or model file added or removed inside a copy
        of the same release: a private preview build, a trimmed copy) makes the whole folder
        stock-loaded from then on, as a differing top-level listing does."""
        tree = self.tree(path)
        if tree is None or service not in tree[2]:
            # A service folder that is not indexed is not on disk either: tree() compared the
            # service folders.
            return tree
        key = (path, service)
        same = self.services_checked.get(key)
        if same is None:
            same = self.services_checked[key] = _service_listed_as_built(os.path.join(path, service),
                                                                          tree[2][service])
            if not same:
                diagnostics.debug("prepared data: %s is not listed as it was at build time; stock loading of %s"
                                  % (os.path.join(path, service), path))
                self.checked[path] = None
                self.spoiled += 1
        return tree if same else None


def _service_listed_as_built(folder, versions):
    """One listing of a service folder and of each version folder in it: the same version folders
    holding the same files as the build indexed (isdir / isfile semantics, as _listed_as_built)."""
    try:
        with os.scandir(folder) as entries:
            found = sorted(entry.name for entry in entries if entry.is_dir())
        if found != list(versions):
            return False
        for version, files in versions.items():
            with os.scandir(os.path.join(folder, version)) as entries:
                if sorted(entry.name for entry in entries if entry.is_file()) != list(files):
                    return False
    except OSError:
        return False
    return True


def _listed_as_built(path, tree):
    """One listing of a data folder: the same service folders, and the same top-level files with the
    same sizes, as the build indexed (os.path.isdir / isfile semantics: symlinks followed)."""
    folders, files = [], []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir():
                    folders.append(entry.name)
                elif entry.is_file():
                    files.append((entry.name, entry.stat().st_size))
    except OSError:
        return False
    return sorted(folders) == list(tree["services"]) and sorted(files) == list(zip(tree["files"], tree["sizes"]))


def _prepared():
    """The index, read at first use; None when there is none usable."""
    global _state
    if _state is None:
        _state = _read_index()
    return _state or None


def _read_index():
    import botocore

    try:
        with open(_index, "rb") as source:
            index = _unpickle(source.read())
        if index.get("format") != FORMAT:
            diagnostics.debug("prepared data: format %r, not %r; stock loading" % (index.get("format"), FORMAT))
            return False
        prepared = _Prepared(index)
    except Exception as error:
        diagnostics.report_once(
            "prepared data", "could not read %s: %r; botocore loads its data as stock does" % (_index, error)
        )
        return False
    built_for = index["trees"].get("botocore/data", {}).get("version")
    if built_for != botocore.__version__:
        diagnostics.debug(
            "prepared data: built for botocore %s, botocore %s imported; stock loading"
            % (built_for, botocore.__version__)
        )
        return False
    diagnostics.debug("prepared data: %s, built for botocore %s" % (_index, built_for))
    return prepared


def _read_if_file(path):
    """The bytes of ``path`` if it is a regular file (JSONFileLoader._load_file's isfile), else None."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as source:
            return source.read()
    except OSError:
        return None


def _sha256(data):
    import hashlib

    return hashlib.sha256(data).digest()


def _read_parsed(name):
    """The pickled bytes of a prepared file, by the name the index gives."""
    with open(os.path.join(DATA, name), "rb") as source:
        return source.read()


def _usable(loader):
    """The index, if this Loader walks the search path and reads files as stock botocore does."""
    from botocore.loaders import JSONFileLoader

    # getattr: a subclass that replaced every other method may have no file_loader (stock's
    # load_service_model, which this module wraps too, would never have touched it).
    file_loader = getattr(loader, "file_loader", None)
    if type(file_loader) is not JSONFileLoader or not _methods_are_botocores(loader, file_loader):
        return None
    return _prepared()


def _file_names(type_name):
    """The names JSONFileLoader.exists looks for, in its order (``service-2.json``, ``.json.gz``)."""
    from botocore.loaders import _JSON_OPEN_METHODS

    return [type_name + extension for extension in _JSON_OPEN_METHODS]


def _exists(files, names):
    """JSONFileLoader.exists, answered from a folder's file names."""
    return any(name in files for name in names)


def _make_list_available_services(original):
    from botocore.loaders import instance_cache

    @instance_cache
    def list_available_services(self, type_name):
        prepared = _usable(self)
        if prepared is None or not isinstance(type_name, str) or "/" in type_name:
            return original(self, type_name)
        services = set()
        names = _file_names(type_name)
        # _potential_locations() with no name: each search path that is a folder.
        for possible_path in self._potential_locations():
            tree = prepared.tree(possible_path)
            if tree is not None:
                for service_name, versions in tree[2].items():
                    if any(_exists(files, names) for files in versions.values()):
                        services.add(service_name)
                continue
            # Stock's loop, for a folder the build did not index.
            possible_services = [
                d for d in os.listdir(possible_path) if os.path.isdir(os.path.join(possible_path, d))
            ]
            for service_name in possible_services:
                full_dirname = os.path.join(possible_path, service_name)
                for api_version in os.listdir(full_dirname):
                    if self.file_loader.exists(os.path.join(full_dirname, api_version, type_name)):
                        services.add(service_name)
                        break
        return sorted(services)

    return _dropping_stale(list_available_services)


def _make_list_api_versions(original):
    from botocore.exceptions import DataNotFoundError
    from botocore.loaders import instance_cache

    @instance_cache
    def list_api_versions(self, service_name, type_name):
        prepared = _usable(self)
        # Anything but two plain names (None, a path, a non-str) goes to stock's code, which raises
        # what stock raises for it (DataNotFoundError for None).
        if (prepared is None or not isinstance(service_name, str) or not isinstance(type_name, str)
                or "/" in service_name or "/" in type_name or service_name in ("", ".", "..")):
            return original(self, service_name, type_name)
        known_api_versions = set()
        # _potential_locations(service_name, must_exist=True, is_dir=True), unrolled so that an
        # indexed folder costs no stat of its service folder.
        for path in self.search_paths:
            if not os.path.isdir(path):
                continue
            tree = prepared.service_tree(path, service_name)
            if tree is not None and service_name in tree[2]:
                names = _file_names(type_name)
                known_api_versions.update(v for v, files in tree[2][service_name].items() if _exists(files, names))
                continue
            # Stock's check (also for a name the index has no folder for: the same two stats stock
            # makes there): a folder, or anything else that exists -- a file, which stock's
            # _potential_locations yields too (its is_dir falls back to os.path.exists), so that
            # os.listdir raises NotADirectoryError as in stock, not DataNotFoundError.
            possible_path = os.path.join(path, service_name)
            if not os.path.isdir(possible_path) and not os.path.exists(possible_path):
                continue
            for dirname in os.listdir(possible_path):
                if self.file_loader.exists(os.path.join(possible_path, dirname, type_name)):
                    known_api_versions.add(dirname)
        if not known_api_versions:
            raise DataNotFoundError(data_path=service_name)
        return sorted(known_api_versions)

    return _dropping_stale(list_api_versions)


def _make_load_data_with_path(original):
    from botocore.exceptions import DataNotFoundError
    from botocore.loaders import _JSON_OPEN_METHODS, instance_cache, logger

    @instance_cache
    def load_data_with_path(self, name):
        prepared = _usable(self)
        parts = name.split("/") if isinstance(name, str) else ()
        if prepared is None or len(parts) not in (1, 3) or not all(p and p not in (".", "..") for p in parts):
            return original(self, name)
        for path in self.search_paths:
            if not os.path.isdir(path):
                continue
            possible_path = os.path.join(path, name)
            tree = prepared.tree(path) if len(parts) == 1 else prepared.service_tree(path, parts[0])
            if tree is None:
                found = self.file_loader.load_file(possible_path)
                if found is not None:
                    return found, possible_path
                continue
            relative, files, services = tree
            if len(parts) == 3:
                files = services.get(parts[0], {}).get(parts[1], ())
            for extension in _JSON_OPEN_METHODS:
                if parts[-1] + extension not in files:
                    continue
                source = possible_path + extension
                entry = prepared.parsed.get(relative + "/" + name + extension)
                if entry is not None:
                    size, digest, parsed_name = entry
                    content = _read_if_file(source)
                    if content is not None and len(content) == size and _sha256(content) == digest:
                        try:
                            found = _unpickle(_read_parsed(parsed_name))
                        except Exception as error:
                            # Not tried again in this process: a damaged file would cost a read and
                            # a failed load on top of stock's parse at every Loader.
                            prepared.parsed.pop(relative + "/" + name + extension, None)
                            diagnostics.report_once(
                                "prepared file",
                                "could not use the prepared %s: %r; parsing the file" % (source, error),
                            )
                        else:
                            logger.debug("Loading JSON file: %s", source)
                            return found, possible_path
                # Stock's JSONFileLoader.load_file from here (a file of other bytes: read again and
                # parsed by stock's code): it tries every extension itself.
                found = self.file_loader.load_file(possible_path)
                if found is not None:
                    return found, possible_path
                break
        raise DataNotFoundError(data_path=name)

    return _dropping_stale(load_data_with_path)


# The Loader methods whose answers may come from the index (their instance_cache keys start with
# the name).
_ANSWERED = ("list_available_services", "list_api_versions", "load_data_with_path")


def _drop_stale(loader):
    """Drop the answers ``loader`` cached while a data folder was answered from the index, once
    a service check (_Prepared.service_tree) found that folder not as built: stock's code answers
    them again.  Runs before the cache is consulted, at each call of a replaced method."""
    prepared = _state
    if prepared and prepared.spoiled and loader.__dict__.get("_aws_keepalive_spoiled", 0) != prepared.spoiled:
        # list() copies the keys in one step (another thread may add to the cache meanwhile).
        cache = loader.__dict__.get("_cache")
        for key in list(cache or ()):
            if isinstance(key, tuple) and key and key[0] in _ANSWERED:
                cache.pop(key, None)
        loader._aws_keepalive_spoiled = prepared.spoiled


def _dropping_stale(cached_method):
    """``cached_method`` (an instance_cache'd replacement) after _drop_stale."""
    def method(self, *args, **kwargs):
        _drop_stale(self)
        return cached_method(self, *args, **kwargs)

    return method


def _make_load_service_model(original):
    def load_service_model(self, *args, **kwargs):
        """Stock's, after the service's folder is checked in each recognised data folder: its model
        types listed and loaded from the index are then those on disk.  When a check found a folder
        not as built, answers this Loader cached from the index are dropped first, so that stock's
        listing answers them again (a type added to that service, a version folder added)."""
        service_name = args[0] if args else kwargs.get("service_name")
        # Once per service per Loader (a set bounded by the services it loads): a call answered
        # from botocore's cache stays as cheap as stock's.
        checked = self.__dict__.get("_aws_keepalive_services")
        if checked is None or service_name not in checked:
            prepared = _usable(self) if isinstance(service_name, str) else None
            if prepared is not None:
                for path in self.search_paths:
                    prepared.service_tree(path, service_name)
                if checked is None:
                    checked = self._aws_keepalive_services = set()
                checked.add(service_name)
        _drop_stale(self)
        return original(self, *args, **kwargs)

    return load_service_model
