"""The cyclic garbage collector during init: fewer collections until the first client, then the init's
objects frozen out of later collections (AWS_PYTHON_KEEPALIVE_GC_INIT, settings.py).

Why: a function's init allocates a few hundred thousand objects that live as long as the process
(modules, classes, functions, botocore's service model and endpoint rules), and almost no cyclic
garbage.  CPython's collector does not know that: with its default thresholds (700 allocations for
a young collection on 3.12 and 3.13, 2 000 on 3.14) it runs some hundreds of young collections and
a few full ones over the growing heap while ``import boto3`` and the first client run: 12-19 ms of
CPU at a full vCPU (issue 36's profile), about 0.2 s at 128 MB's CPU share.  After init, every full
collection walks all of those objects again for nothing.

What it does:

* ``begin`` (at activation, from the ``.pth``, before the handler is imported): the young
  generation's threshold raised to ``INIT_THRESHOLD``, the other thresholds left as they are.
  CPython counts tracked objects allocated minus those freed, so a collection still runs once the
  net growth reaches it: cyclic garbage made during init is bounded by ``INIT_THRESHOLD`` objects
  (a few MB at most) until the first client.
* ``end`` (when the first botocore client is created, patch.py): the thresholds put back as they
  were, then ``gc.freeze()``: every object alive at that moment moves to the permanent generation,
  which no later collection walks (what CPython's documentation advises before forking workers).
  Cyclic garbage made during init that no collection reclaimed stays in memory for the process's
  life: made once, and small for a boto3 init (measured, CPython 3.12, import boto3 + a DynamoDB
  client, ~90 000 tracked objects: a full collection there finds ~400 unreachable objects, and
  the process's RSS is the same, 46.9 MB, frozen or not).  No collection runs before the freeze:
  one over the init's objects costs about what the raised threshold saved (26 ms measured).

User settings win: a function that set its own thresholds (or called ``gc.disable()``) before its
first client keeps them: ``end`` restores nothing and freezes nothing when the thresholds are not
the ones ``begin`` set, freezes nothing when the collector is off (its own threshold goes back),
and ``begin`` does nothing when the collector is off at activation or its young threshold is
already at least ``INIT_THRESHOLD``.  A function that never creates a client keeps the raised young
threshold (its collections run less often, as above; nothing is frozen).

Runs at interpreter startup: imports only ``gc`` (built in).
"""

import gc

# The young generation's threshold during init: above the net tracked objects of `import boto3` and
# a first client (~90 000 on 3.12), so that init runs no collection; 50 000 saved about half as
# much (one or two collections of the whole young heap).  docs/coldstart.md has the numbers.
INIT_THRESHOLD = 100000

# [(thresholds before, thresholds set)] while begun and not ended: list.pop() is atomic, so two
# threads creating their first clients at once end it once.
_pending = []


def begin():
    """Raise the young generation's threshold for the init (nothing when the collector is off or
    begun already)."""
    if _pending or not gc.isenabled():
        return
    before = gc.get_threshold()
    if before[0] <= 0 or before[0] >= INIT_THRESHOLD:
        return  # 0 disables collection; a higher threshold is someone's setting: keep it
    ours = (INIT_THRESHOLD,) + tuple(before[1:])
    gc.set_threshold(*ours)
    _pending.append((before, ours))


def pending():
    """Whether ``begin`` raised the threshold and ``end`` has not run yet."""
    return bool(_pending)


def end():
    """At the first client: the thresholds as they were and the init's objects frozen -- unless the
    function changed the thresholds (then nothing) or switched the collector off (then no freeze).
    Returns whether it froze."""
    try:
        before, ours = _pending.pop()
    except IndexError:
        return False
    if gc.get_threshold() != ours:
        return False
    gc.set_threshold(*before)
    if not gc.isenabled():
        return False
    gc.freeze()
    return True
