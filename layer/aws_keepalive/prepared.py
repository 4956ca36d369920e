"""Client creation answered from data the layer build prepared from the same files (full flavor).

Why: creating a botocore client does file-system and parsing work whose answer is fixed the
moment the layer is built, because the layer ships its own botocore and /opt is read-only:

* ``Loader.load_service_model`` checks the service name against ``list_available_services``,
  which lists every service folder of ``botocore/data`` (443 in 1.44.5) and stats each version's
  model file -- once per type (``service-2``, ``endpoint-rule-set-1``) per session.  At 128 MB's
  CPU share that is 0.3-0.4 s of a ~2 s client creation with a warm page cache, ~1 s with a cold
  one (every folder read is a disk read then).
* ``create_default_resolver`` parses ``endpoints.json`` (1.26 MB) with
  ``object_pairs_hook=OrderedDict``: ~40 ms at a full vCPU, ~0.5 s at 128 MB.

tools/prepare_data.py (a step of tools/build_layer.py, full flavor only) writes
``aws_keepalive/prepared.pickle`` next to this module from the staged tree the zip is made of:

* an index of each data folder the layer ships (``botocore/data``, ``boto3/data``): its top-level
  files, and per service folder, per version folder, the names of the files in it; with the
  version of the package that owns the folder;
* the top-level data files of ``botocore/data`` (``endpoints``, ``partitions``,
  ``sdk-default-configuration``, ``_retry``) parsed exactly as botocore parses them
  (``json.loads(..., object_pairs_hook=OrderedDict)``), each pickled on its own, with the size of
  the file it came from.

What changes, and why the results are the same:

* The three Loader methods that walk the search path are replaced by versions that walk it the
  same way, in the same order, with the same ``isdir`` check of each search path; only for a
  search path that *is* one of the indexed folders is the folder listing taken from the index.
  Every other search path -- ``AWS_DATA_PATH`` entries, ``~/.aws/models``, anything a caller
  appends -- is listed and stat'ed exactly as stock does, every time.  So a service added there
  appears, a newer API version there wins ``determine_latest_version``, and a model file there
  that differs from the build's wins ``load_data`` (earlier search paths win, as in stock).
* ``load_data`` of one of the pickled files returns ``pickle.loads`` of its bytes: a fresh tree of
  the same types (``OrderedDict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``), in
  the same order, equal to what ``json.loads`` gives -- new objects at each call, like a parse, so
  callers that mutate what they loaded (``ExtrasProcessor`` merges into a model) still own it.
  Pickle rather than marshal or JSON (``make bench-client`` measures each form; docs/coldstart.md):
  pickle of the ``OrderedDict`` tree loads endpoints.json in about half the time of ``json.loads``
  with the ``OrderedDict`` hook; marshal loads plain dicts faster still, but converting them back to
  ``OrderedDict`` costs more than the parse (and without it the types would differ from stock).
  Pickle can run code: only ``collections.OrderedDict`` may be named in these files
  (``_Unpickler``), and the file sits in the same read-only layer as the code that reads it.
  Service models (``.json.gz``) keep stock's path: pickles of all of them would add ~15 MB to the
  zip.
* The results of the replaced methods are cached per Loader exactly as before (botocore's own
  ``instance_cache``, same keys).

When it does nothing (stock loading, whole or per search path):

* the botocore imported is not the one beside this package (a function's own copy in /var/task,
  the hook flavor, the wheel), or no index was built (the source tree);
* the index's format or a package version differs from what is imported (a stale index);
* a Loader with another file loader class, or a subclass with its own ``_potential_locations``;
* a pickled file whose size on disk differs from the build's (loaded from the file instead);
* ``AWS_PYTHON_KEEPALIVE_PREPARED=0`` (settings.py), or the layer switched off: this is part of
  the layer's activation, so "off" stays "no layer code on any path".

A file the index cannot read (damaged) is reported once and loading stays stock.
"""

import os
import pickle
import sys

from . import diagnostics
from .wrap import wrap as _wrap

# Written by tools/prepare_data.py at layer build time.
INDEX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prepared.pickle")
# The site folder the layer's packages sit in (/opt/python on Lambda).
SITE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = 1

# None: not read yet; False: unusable (stock loading); else the _Prepared read from INDEX.
_state = None


def patch(settings, version, path):
    """Replace the Loader's search-path walks when the imported botocore is the layer's own and an
    index was built for it (patch.apply reports a failure once)."""
    if os.path.dirname(path) != SITE or not os.path.isfile(INDEX):
        diagnostics.debug("prepared data: none for botocore at %s; stock loading" % path)
        return
    from botocore import loaders

    _wrap(loaders.Loader, "list_available_services", _make_list_available_services)
    _wrap(loaders.Loader, "list_api_versions", _make_list_api_versions)
    _wrap(loaders.Loader, "load_data_with_path", _make_load_data_with_path)


class _Unpickler(pickle.Unpickler):
    """Builds only what JSON parsing builds: the one class these files may name is OrderedDict."""

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            from collections import OrderedDict

            return OrderedDict
        raise pickle.UnpicklingError("prepared data names %s.%s" % (module, name))


def _unpickle(data):
    import io

    return _Unpickler(io.BytesIO(data)).load()


class _Prepared:
    """The index read from INDEX: trees by absolute folder, parsed files by relative path."""

    def __init__(self, index):
        self.trees = {}
        for relative, tree in index["trees"].items():
            root = os.path.join(SITE, *relative.split("/"))
            self.trees[root] = (tree["package"], tree["version"], tree["files"], tree["services"])
        self.parsed = {
            os.path.join(SITE, *relative.split("/")): entry for relative, entry in index["parsed"].items()
        }

    def tree(self, path):
        """(top-level files, {service: {version: files}}) if ``path`` is an indexed folder whose
        package is imported at the version indexed; None otherwise."""
        entry = self.trees.get(path)
        if entry is None:
            entry = self.trees.get(os.path.normpath(path))
            if entry is None:
                return None
        package, version, files, services = entry
        if getattr(sys.modules.get(package), "__version__", None) != version:
            return None
        return files, services


def _prepared():
    """The index, read at first use; None when there is none usable."""
    global _state
    if _state is None:
        _state = _read_index()
    return _state or None


def _read_index():
    import botocore

    try:
        with open(INDEX, "rb") as source:
            index = _unpickle(source.read())
        if index.get("format") != FORMAT:
            diagnostics.debug("prepared data: format %r, not %r; stock loading" % (index.get("format"), FORMAT))
            return False
        prepared = _Prepared(index)
    except Exception as error:
        diagnostics.report_once(
            "prepared data", "could not read %s: %r; botocore loads its data as stock does" % (INDEX, error)
        )
        return False
    built_for = index["trees"].get("botocore/data", {}).get("version")
    if built_for != botocore.__version__:
        diagnostics.debug(
            "prepared data: built for botocore %s, botocore %s imported; stock loading"
            % (built_for, botocore.__version__)
        )
        return False
    diagnostics.debug("prepared data: %s, built for botocore %s" % (INDEX, built_for))
    return prepared


def _usable(loader):
    """The index, if this Loader walks the search path and reads files as stock botocore does."""
    from botocore.loaders import JSONFileLoader, Loader

    if type(loader.file_loader) is not JSONFileLoader:
        return None
    if type(loader)._potential_locations is not Loader.__dict__["_potential_locations"]:
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
        if prepared is None or "/" in type_name:
            return original(self, type_name)
        services = set()
        names = _file_names(type_name)
        # _potential_locations() with no name: each search path that is a folder.
        for possible_path in self._potential_locations():
            tree = prepared.tree(possible_path)
            if tree is not None:
                for service_name, versions in tree[1].items():
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

    return list_available_services


def _make_list_api_versions(original):
    from botocore.exceptions import DataNotFoundError
    from botocore.loaders import instance_cache

    @instance_cache
    def list_api_versions(self, service_name, type_name):
        prepared = _usable(self)
        if prepared is None or "/" in service_name or "/" in type_name or service_name in ("", ".", ".."):
            return original(self, service_name, type_name)
        known_api_versions = set()
        # _potential_locations(service_name, must_exist=True, is_dir=True), unrolled so that an
        # indexed folder costs no stat of its service folder.
        for path in self.search_paths:
            if not os.path.isdir(path):
                continue
            tree = prepared.tree(path)
            if tree is not None:
                versions = tree[1].get(service_name, {})
                names = _file_names(type_name)
                known_api_versions.update(v for v, files in versions.items() if _exists(files, names))
                continue
            possible_path = os.path.join(path, service_name)
            if not os.path.isdir(possible_path):
                continue
            for dirname in os.listdir(possible_path):
                if self.file_loader.exists(os.path.join(possible_path, dirname, type_name)):
                    known_api_versions.add(dirname)
        if not known_api_versions:
            raise DataNotFoundError(data_path=service_name)
        return sorted(known_api_versions)

    return list_api_versions


def _make_load_data_with_path(original):
    from botocore.exceptions import DataNotFoundError
    from botocore.loaders import _JSON_OPEN_METHODS, instance_cache, logger

    @instance_cache
    def load_data_with_path(self, name):
        prepared = _usable(self)
        parts = name.split("/")
        if prepared is None or len(parts) not in (1, 3) or not all(p and p not in (".", "..") for p in parts):
            return original(self, name)
        for path in self.search_paths:
            if not os.path.isdir(path):
                continue
            possible_path = os.path.join(path, name)
            tree = prepared.tree(path)
            if tree is None:
                found = self.file_loader.load_file(possible_path)
                if found is not None:
                    return found, possible_path
                continue
            files, services = tree
            if len(parts) == 3:
                files = services.get(parts[0], {}).get(parts[1], ())
            for extension in _JSON_OPEN_METHODS:
                if parts[-1] + extension not in files:
                    continue
                source = possible_path + extension
                entry = prepared.parsed.get(source)
                if entry is not None:
                    size, data = entry
                    try:
                        same = os.stat(source).st_size == size
                    except OSError:
                        same = False
                    if same:
                        try:
                            found = _unpickle(data)
                        except Exception as error:
                            diagnostics.report_once(
                                "prepared file",
                                "could not use the prepared %s: %r; parsing the file" % (source, error),
                            )
                        else:
                            logger.debug("Loading JSON file: %s", source)
                            return found, possible_path
                # Stock's JSONFileLoader.load_file from here: it tries every extension itself.
                found = self.file_loader.load_file(possible_path)
                if found is not None:
                    return found, possible_path
                break
        raise DataNotFoundError(data_path=name)

    return load_data_with_path
