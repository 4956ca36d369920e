"""gcinit.py: the cyclic GC's young threshold raised from activation to the first client, then put
back and the init's objects frozen; the function's own GC settings win. Each case in a fresh
interpreter (the collector's state is the process's)."""

import gc
import json

from conftest import python_with_layer

# The frozen count is reported above the interpreter's own (CPython 3.12 starts with some frozen).
REPORT = "print(json.dumps([list(gc.get_threshold()), gc.get_freeze_count() - FROZEN, gc.isenabled()]))\n"


def run(script, env=None):
    completed = python_with_layer("import gc, json\nFROZEN = gc.get_freeze_count()\n" + script, env)
    assert completed.returncode == 0, completed.stderr
    return [json.loads(line) for line in completed.stdout.splitlines()], completed.stderr


def test_begin_raises_the_young_threshold_and_end_restores_it_and_freezes():
    """begin sets INIT_THRESHOLD as the young threshold only; end puts the thresholds back, freezes."""
    (before, during, after), _ = run(
        "from aws_keepalive import gcinit\n" + REPORT + "gcinit.begin()\n" + REPORT + "assert gcinit.end()\n" + REPORT)
    assert during[0] == [100000] + before[0][1:]
    assert during[1] == 0
    assert after[0] == before[0] and after[1] > 0


def test_thresholds_the_function_set_are_kept_and_nothing_frozen():
    """A function that sets its own thresholds between begin and end keeps them; no freeze."""
    (after,), _ = run("from aws_keepalive import gcinit\ngcinit.begin()\ngc.set_threshold(500, 5, 5)\n"
                      "assert not gcinit.end()\n" + REPORT)
    # What this interpreter reports for those thresholds (CPython 3.14's incremental collector
    # keeps no third generation threshold: (500, 5, 0)).
    saved = gc.get_threshold()
    gc.set_threshold(500, 5, 5)
    theirs = list(gc.get_threshold())
    gc.set_threshold(*saved)
    assert after[0] == theirs and after[1] == 0


def test_a_disabled_collector_is_not_frozen_and_stays_disabled():
    """gc.disable() after begin: end puts the threshold back but freezes nothing, the collector stays off;
    disabled before begin: begin changes nothing."""
    (first,), _ = run("from aws_keepalive import gcinit\nbase = gc.get_threshold()\ngcinit.begin()\n"
                      "gc.disable()\nassert not gcinit.end()\nassert gc.get_threshold() == base\n" + REPORT)
    assert first[1] == 0 and first[2] is False
    (second,), _ = run("from aws_keepalive import gcinit\ngc.disable()\nbase = gc.get_threshold()\ngcinit.begin()\n"
                       "assert gc.get_threshold() == base and not gcinit.pending()\n" + REPORT)
    assert second[1] == 0


def test_the_switch_raises_the_threshold_until_the_first_client_only_when_asked():
    """AWS_PYTHON_KEEPALIVE_GC_INIT=1: raised after activation, back and frozen after the first
    boto3 client; unset: the thresholds never change and nothing is frozen."""
    script = ("base = list(gc.get_threshold())\nimport aws_keepalive\naws_keepalive.activate('pth')\n"
              "activated = list(gc.get_threshold())\nimport boto3\nimported = list(gc.get_threshold())\n"
              "boto3.client('dynamodb', endpoint_url='http://127.0.0.1:9')\n"
              "frozen = gc.get_freeze_count() - FROZEN\n"
              "print(json.dumps([base, activated, imported, list(gc.get_threshold()), frozen]))\n")
    on = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_GC_INIT": "1"}
    ((base, activated, imported, after, frozen),), _ = run(script, on)
    assert activated[0] == imported[0] == 100000 and activated[1:] == base[1:]
    assert after == base and frozen > 0
    ((base, activated, imported, after, frozen),), _ = run(script, {"AWS_PYTHON_KEEPALIVE": "1"})
    assert base == activated == imported == after and frozen == 0


def test_a_first_client_that_raises_still_ends_the_init_setting():
    """The first client creation raising (an unknown service) puts the thresholds back all the same."""
    script = ("base = list(gc.get_threshold())\nimport aws_keepalive\naws_keepalive.activate('pth')\n"
              "import boto3, botocore.exceptions\nraised = list(gc.get_threshold())\n"
              "try:\n    boto3.client('no-such-service', endpoint_url='http://127.0.0.1:9')\n"
              "except botocore.exceptions.UnknownServiceError:\n    pass\n"
              "print(json.dumps([base, raised, list(gc.get_threshold())]))\n")
    ((base, raised, after),), _ = run(script, {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_GC_INIT": "1"})
    assert raised[0] == 100000 and after == base


def test_a_bad_value_warns_once_and_keeps_the_default():
    """AWS_PYTHON_KEEPALIVE_GC_INIT=maybe: one warning naming the variable; the default (off) applies."""
    ((base, after),), stderr = run(
        "base = list(gc.get_threshold())\nimport aws_keepalive\naws_keepalive.activate('pth')\n"
        "print(json.dumps([base, list(gc.get_threshold())]))\n",
        {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_GC_INIT": "maybe"})
    assert base == after
    assert stderr.count("AWS_PYTHON_KEEPALIVE_GC_INIT='maybe'") == 1
