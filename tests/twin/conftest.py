"""Fixtures of the stock twin (harness.py): the session's folders (sites.py) and certificates
(pki.py), and the scheduler that starts every selected case's pair of interpreters as soon as the
tests are collected, a few pairs at a time, so that all modules' twins run concurrently."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Scheduler  # noqa: E402
from pki import PKI  # noqa: E402
from sites import Sites  # noqa: E402

# Pairs of interpreters at once (two interpreters each): the twin mostly waits (handshakes,
# timeouts, sleeps until a certificate expires), so more pairs than cores.
PAIRS = int(os.environ.get("AWS_KEEPALIVE_TWIN_PAIRS", "4"))
_scheduler = None


def _case_of(item):
    callspec = getattr(item, "callspec", None)
    cases = getattr(item.module, "CASES", None)
    if callspec is None or cases is None or "case" not in callspec.params:
        return None
    name = callspec.params["case"]
    return "%s::%s" % (item.module.__name__, name), cases[name]


def pytest_collection_finish(session):
    global _scheduler
    selected = [found for found in map(_case_of, session.items) if found]
    if not selected:
        return
    root = session.config._tmp_path_factory.mktemp("twin")
    pki = PKI(str(root))
    _scheduler = Scheduler(Sites(str(root), pki.ca.cert_pem.bytes()), pki, PAIRS)
    for case_id, case in selected:
        _scheduler.submit(case_id, case)


def pytest_sessionfinish(session):
    if _scheduler is not None:
        _scheduler.close()


@pytest.fixture
def twin(request):
    """The stock and layer runs of this test's case: {"stock": Run, "layer": Run}."""
    case_id, case = _case_of(request.node)
    return _scheduler.result(case_id, case)


def pytest_terminal_summary(terminalreporter):
    """Each case's wall time and peak RSS, stock and layer (started together): the twin's budget."""
    if _scheduler is None:
        return
    rows = []
    for case_id, (_case, future) in _scheduler.futures.items():
        if future.done() and not future.exception():
            runs = future.result()
            rss = [(run.result or {}).get("peak_rss_kb") or 0 for run in (runs["stock"], runs["layer"])]
            rows.append("  %-48s stock %5.1f s %6.1f MB  layer %5.1f s %6.1f MB" % (
                case_id, runs["stock"].wall_s, rss[0] / 1024.0, runs["layer"].wall_s, rss[1] / 1024.0))
    terminalreporter.write_line("stock twin, wall per case (%d pairs at a time):" % PAIRS)
    for row in rows:
        terminalreporter.write_line(row)
