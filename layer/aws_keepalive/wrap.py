"""Replace a function of someone else's class by a wrapper, once: the one way every patch is made.

A module of its own so that every module that patches (patch.py, trust.py, aio.py, metrics.py)
imports it and none of them imports another for it: patch.py imports metrics.py and trust.py,
so their borrowing ``patch._wrap`` made import cycles (issue 23).
"""

import functools

# The attribute by which a patched function points at the function it wraps.  Its presence makes
# every patch idempotent: the .pth file and usercustomize.py may both activate the layer.
WRAPPED = "__aws_keepalive_wrapped__"


def wrap(owner, name, make_wrapper):
    """Replace ``owner.name`` by ``make_wrapper(original)`` unless it is already ours."""
    original = getattr(owner, name)
    if getattr(original, WRAPPED, None) is not None:
        return
    wrapper = functools.wraps(original)(make_wrapper(original))
    setattr(wrapper, WRAPPED, original)
    setattr(owner, name, wrapper)
