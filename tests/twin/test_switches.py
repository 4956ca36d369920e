"""Every switch of the layer has its twin axis (axes.py): the variables are read from settings.py
itself (what ``from_environ`` looks up), not from a list kept by hand, so a new switch fails here
until it gets an axis (or a reason it needs none)."""

import importlib
import os
import sys

from axes import AXES, NOT_AXES, SDK_PATCHES

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "layer"))


class _Recording(dict):
    """An environment that records every variable looked up in it."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


def switches():
    """The variables settings.from_environ reads when the layer is on."""
    from aws_keepalive import settings

    environ = _Recording({settings.SWITCH: "1"})
    assert settings.from_environ(environ) is not None
    return environ.read


def test_every_switch_has_an_axis():
    """Each variable settings.py reads is in axes.AXES (with twin modules that have cases) or in
    axes.NOT_AXES (with its reason); neither list names a variable settings.py no longer reads."""
    read = switches()
    assert "AWS_PYTHON_KEEPALIVE_TLS_RESUME" in read and "AWS_PYTHON_KEEPALIVE_PREPARED" in read
    missing = sorted(read - set(AXES) - set(NOT_AXES))
    assert not missing, "switches without a twin axis (add them to tests/twin/axes.py): %s" % missing
    assert not set(AXES) & set(NOT_AXES)
    assert sorted(set(AXES) | set(NOT_AXES)) == sorted(read), "axes.py names variables settings.py does not read"
    for switch, axes in AXES.items():
        assert axes, switch
        for axis in axes:
            module = importlib.import_module("test_" + axis)
            assert module.CASES, "tests/twin/test_%s.py has no cases" % axis


def test_every_sdk_patch_is_compared_with_stock():
    """Every patch of layer/patches/ is applied to the layer twin's SDK and to none of the stock
    twin's files, and each patched distribution names its axes (axes.SDK_PATCHES)."""
    import sites
    from tools.packaging import patches

    declared = patches.load()
    assert declared, "layer/patches/ holds no patch: this test would prove nothing"
    with open(os.path.join(sites.LAYER_SDK_PATCHED, ".applied")) as applied:
        assert applied.read().split() == ["%s/%s" % (p["distribution"], p["name"]) for p in declared]
    for patch in declared:
        assert SDK_PATCHES.get(patch["distribution"]), "no twin axis for %s's patches" % patch["distribution"]
        for relative in patch["files"]:
            with open(os.path.join(sites.LAYER_SDK, relative), "rb") as stock, \
                    open(os.path.join(sites.LAYER_SDK_PATCHED, relative), "rb") as patched:
                assert stock.read() != patched.read(), "%s: the stock twin's copy is patched" % relative
