"""The stock twin's harness: one scenario, two fresh interpreters, the layer off and on, compared.

A ``Case`` names a scenario of the function's code (tests/twin/function.py) and its checks.  Each
check gets its own endpoint (wire.py: a TLS server behind a recording front, or a middlebox) per
run, so the twins' records never mix and checks in one interpreter stay independent.  ``run_pair``
starts both interpreters at once, ``AWS_PYTHON_KEEPALIVE=0`` and ``=1``, each through the stand-in
runtime's startup (sites.py, bootstrap.py: the layer's site folder processed by
``site.addsitedir`` as the managed runtime's bootstrap.py does), and returns both runs.

``compare`` is the twin's verdict, per check:

* the outcome: every key the function returned for the check (each call's result or exception
  type, counts of calls into other code), except keys starting with ``_`` (details for a failure
  message);
* the wire: the requests the server received and the client certificate of each; PSK offers by
  the check's ``psk`` rule -- stock never offers one, so a PSK is the one wire difference
  resumption is allowed, and only where the rule allows it:
  ``never`` (the layer must offer none: a context it must leave alone, a proxy, verify=False, a
  fresh child), ``resumes`` (the layer must resume at least once: the optimization was exercised,
  so the case proves something), ``any``, or an int (at most that many offers: middleboxes);
* memory: the layer's peak RSS at most stock's + ``rss_slack_mb`` (default 16 MB: stock's own
  peak varies that much between identical runs -- seen 48.8 and 57.1 MB for client_certs, 66.5
  and 80.1 MB for loader, with the layer at 58 and 79 MB; the gc axis bounds what matters, the
  growth per dropped client, tightly).

Adding an axis (docs/twin.md says the same for readers of the docs):

1. the function's side: a scenario in tests/twin/function.py (``@scenario def name(params)``)
   returning ``{check: {...}}`` -- each call's outcome via ``calls``/``attempt``, plus counts of
   anything the scenario's own code sees called (a wrapper, an override);
2. the test side: tests/twin/test_<axis>.py with ``CASES = {name: Case(scenario, {check:
   Check(...)}, ...)}`` and one test parametrized over ``case`` that calls
   ``assert_same_as_stock(CASES[case], twin)`` (the ``twin`` fixture is the case's two runs:
   conftest.py starts every selected case's pair at collection, a few pairs at a time);
3. the switch's line in tests/twin/axes.py (``AXES``): test_switches.py fails for a variable
   settings.py reads that has no axis there.

Keep interpreters few: several independent checks (each with its own endpoint and its own
client) in one scenario, one interpreter pair per global state a scenario must set (a context
class swapped, gc disabled, an environment variable read at import).
"""

import collections
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from pki import EXPIRY_S
from wire import ConnectProxy, Wire

def _hook_conftest():
    """tests/hook/conftest.py, for its BASE_ENV: what a Lambda function's environment holds (the
    machine's AWS_CA_BUNDLE and friends left out)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hook", "conftest.py")
    spec = importlib.util.spec_from_file_location("hook_conftest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BASE_ENV = dict(_hook_conftest().BASE_ENV, AWS_LAMBDA_FUNCTION_NAME="twin")
SWITCH = {"stock": "0", "layer": "1"}
# The debug line patch.py prints once it has patched botocore (every twin run has debug on).
ACTIVATED = "patched botocore "


class Check:
    """One check of a scenario: its endpoint and what the layer may do differently there.

    ``mode``, ``refuse_tickets``, ``tls``, ``context``: the endpoint (wire.Wire, pki.PKI);
    ``proxy``: ``http`` or ``https`` for a CONNECT proxy of its own (``params["proxies"]``);
    ``psk``: the PSK rule (module docstring); ``no_psk_at``: connection numbers (0-based, in the
    order the server accepted them) where the layer must offer none (a forked child's or a
    restored clone's first); ``max_extra_s``: how much longer than stock's the check may take
    (``_elapsed_s``); ``rss_growth_slack_mb``: how much more than stock's the check's own RSS
    growth may be (``_rss_growth_kb``)."""

    def __init__(self, psk="any", mode="pass", refuse_tickets=False, tls=True, context="leaf", proxy=None,
                 no_psk_at=(), max_extra_s=None, rss_growth_slack_mb=None):
        self.psk, self.mode, self.refuse_tickets, self.tls, self.context = psk, mode, refuse_tickets, tls, context
        self.proxy, self.no_psk_at, self.max_extra_s = proxy, no_psk_at, max_extra_s
        self.rss_growth_slack_mb = rss_growth_slack_mb


class Case:
    """A scenario run twice.  ``params(run)``: extra parameters (paths in ``run.dir``, the PKI's
    files in ``run.pki``, each check's ``run.urls``), merged into what the function gets."""

    def __init__(self, scenario, checks, flavor="full", task="plain", env=None, params=None, rss_slack_mb=16,
                 timeout_s=120, layer_says=()):
        self.scenario, self.checks, self.flavor, self.task = scenario, checks, flavor, task
        # Debug lines the layer's run must print: the optimization under test ran (a case whose
        # optimization stepped aside proves nothing).
        self.layer_says = layer_says
        self.env, self.params, self.rss_slack_mb, self.timeout_s = env or {}, params, rss_slack_mb, timeout_s


class Run:
    """One interpreter's run: its folder, endpoints, and what came back."""

    def __init__(self, case, sites, pki, side):
        self.case, self.side, self.pki = case, side, pki
        self.dir = tempfile.mkdtemp(prefix="twin-%s-%s-" % (case.scenario, side))
        self.wires = {label: Wire(pki.server_context(check.context) if check.tls else None, mode=check.mode,
                                  refuse_tickets=check.refuse_tickets)
                      for label, check in case.checks.items()}
        self.urls = {label: wire.url for label, wire in self.wires.items()}
        self.proxies = {label: ConnectProxy(pki.server_context("leaf")() if check.proxy == "https" else None)
                        for label, check in case.checks.items() if check.proxy}
        params = {"urls": self.urls, "proxies": {label: proxy.url for label, proxy in self.proxies.items()},
                  "bundle": pki.bundle, "dir": self.dir, "expiry_s": EXPIRY_S}
        params.update(case.params(self) if case.params else {})
        # TLS_RESUME=1: resumption is opt-in (settings.TLS_RESUME_BY_DEFAULT); the twin holds its
        # differences from stock to the rules of each case, so a user who asks for it is served as stock.
        env = dict(BASE_ENV, AWS_PYTHON_KEEPALIVE=SWITCH[side], AWS_PYTHON_KEEPALIVE_DEBUG="1",
                   AWS_PYTHON_KEEPALIVE_TLS_RESUME="1")
        env.update({key: value.format(**params) if isinstance(value, str) else value
                    for key, value in case.env.items()})
        command = [sites.python, os.path.join(sites.runtime, "twin_bootstrap.py"), sites.opt[case.flavor, side],
                   sites.task[case.task], case.scenario, json.dumps(params)]
        self.started = time.monotonic()
        # A process group of its own: a scenario's children (fork, spawn, a pool's workers) are
        # stopped with it on a timeout -- one left alive would hold the pipes open, and
        # communicate() would wait for it.
        self.process = subprocess.Popen(command, env=env, cwd=self.dir, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True)

    def finish(self):
        try:
            stdout, stderr = self.process.communicate(timeout=self.case.timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)  # the group's id is the interpreter's pid
            stdout, stderr = self.process.communicate()
        self.wall_s = time.monotonic() - self.started
        self.stderr = stderr
        lines = [line for line in stdout.splitlines() if line.startswith("{")]
        self.result = json.loads(lines[-1]) if self.process.returncode == 0 and lines else None
        self.wire = {label: wire.observed() for label, wire in self.wires.items()}
        for label, proxy in self.proxies.items():
            self.wire[label]["proxy_connects"] = len(proxy.connects)
            proxy.close()
        for wire in self.wires.values():
            wire.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self

    def describe(self):
        return "%s (exit %s, %.1f s): %s\n--- stderr tail ---\n%s" % (
            self.side, self.process.returncode, self.wall_s,
            json.dumps(self.result, indent=1, sort_keys=True)[:4000], self.stderr[-3000:])


def run_pair(case, sites, pki):
    """Both twins of ``case``, started together; {"stock": Run, "layer": Run}."""
    runs = {side: Run(case, sites, pki, side) for side in ("stock", "layer")}
    return {side: run.finish() for side, run in runs.items()}


def differences(case, runs):
    """Every way the layer's run differs from stock's beyond what the case allows (empty: none)."""
    stock, layer = runs["stock"], runs["layer"]
    if stock.result is None or layer.result is None:
        return ["a run failed:\n" + stock.describe() + "\n" + layer.describe()]
    found = []
    for label, check in case.checks.items():
        ours, theirs = layer.result["checks"].get(label), stock.result["checks"].get(label)
        if ours is None or theirs is None:
            found.append("%s: no result (stock %r, layer %r)" % (label, theirs, ours))
            continue
        compared = sorted(key for key in set(ours) | set(theirs) if not key.startswith("_"))
        for key in compared:
            if ours.get(key) != theirs.get(key):
                found.append("%s: %s: stock %r, layer %r (details: stock %r, layer %r)"
                             % (label, key, theirs.get(key), ours.get(key),
                                theirs.get("_details", theirs.get("_%s_detail" % key)),
                                ours.get("_details", ours.get("_%s_detail" % key))))
        wire_stock, wire_layer = stock.wire[label], layer.wire[label]
        for key in ("requests", "client_certs", "proxy_connects"):
            if wire_stock.get(key) != wire_layer.get(key):
                found.append("%s: wire %s: stock %r, layer %r" % (label, key, wire_stock.get(key), wire_layer.get(key)))
        if wire_stock["psk_offers"]:
            found.append("%s: stock offered a PSK (%r): the twin's wire reading is wrong" % (label, wire_stock))
        offers = wire_layer["psk_offers"]
        if check.psk == "never" and offers:
            found.append("%s: the layer offered a PSK %d times where it must offer none" % (label, offers))
        elif check.psk == "resumes" and not wire_layer["resumed"]:
            found.append("%s: the layer never resumed (%r): this check exercises nothing" % (label, wire_layer))
        elif isinstance(check.psk, int) and offers > check.psk:
            found.append("%s: the layer offered a PSK %d times, at most %d allowed" % (label, offers, check.psk))
        for at in check.no_psk_at:
            if wire_layer["offers"][at:at + 1] != [None]:
                found.append("%s: connection %d of %r: the layer offered a PSK (or made no such connection)"
                             % (label, at, wire_layer["offers"]))
        if check.max_extra_s is not None and ours["_elapsed_s"] > theirs["_elapsed_s"] + check.max_extra_s:
            found.append("%s: took %.1f s, stock %.1f s (at most %.1f s more allowed)"
                         % (label, ours["_elapsed_s"], theirs["_elapsed_s"], check.max_extra_s))
        if (check.rss_growth_slack_mb is not None
                and ours["_rss_growth_kb"] > theirs["_rss_growth_kb"] + check.rss_growth_slack_mb * 1024):
            found.append("%s: RSS grew %d kB, stock's %d kB (at most %d MB more allowed)"
                         % (label, ours["_rss_growth_kb"], theirs["_rss_growth_kb"], check.rss_growth_slack_mb))
    # A case where stock's every call failed (the endpoints never came up, an import the scenario
    # needs is missing) compares one failure with the same failure: it proves nothing.  Checks made of
    # ``calls`` only (a scenario returning other values, test_sdk_patches', is compared on them).
    with_calls = [check for check in stock.result["checks"].values() if isinstance(check, dict) and "calls" in check]
    if with_calls and not _any_ok(with_calls):
        found.append("no call succeeded in stock's run: the case compares a failure with itself (harness "
                     "error?): %s" % stock.describe())
    # Activation asserted, not assumed: a layer twin whose layer never patched botocore (the .pth
    # not processed, the switch not read, the hook never fired) is a second stock run, and every
    # check whose rule needs no resumption (a PSK bound, ``never``, ``any``) would pass against it.
    # (A case may switch the layer off on both sides on purpose: test_sdk_patches compares the SDK trees
    # alone.)
    if case.env.get("AWS_PYTHON_KEEPALIVE", SWITCH["layer"]) == SWITCH["layer"] and ACTIVATED not in layer.stderr:
        found.append("the layer's run never said %r: the layer was not active, the twin compared stock "
                     "with stock" % ACTIVATED)
    if "aws-keepalive:" in stock.stderr:
        found.append("the stock run printed the layer's lines: the layer was on in stock's run")
    for line in case.layer_says:
        if line not in layer.stderr:
            found.append("the layer's run never said %r: the optimization under test did not run" % line)
    slack_kb = case.rss_slack_mb * 1024
    if layer.result["peak_rss_kb"] > stock.result["peak_rss_kb"] + slack_kb:
        found.append("peak RSS: stock %d kB, layer %d kB (more than %d MB above)"
                     % (stock.result["peak_rss_kb"], layer.result["peak_rss_kb"], case.rss_slack_mb))
    return found


def _any_ok(value):
    """Whether ``value`` (a run's checks) holds an ``ok`` outcome anywhere outside ``_`` keys (or
    counts them: ``{"ok": 60}``)."""
    if isinstance(value, dict):
        if isinstance(value.get("ok"), int) and value["ok"] > 0:
            return True
        return any(_any_ok(item) for key, item in value.items() if not str(key).startswith("_"))
    if isinstance(value, (list, tuple)):
        return any(_any_ok(item) for item in value)
    return value == "ok"


class Scheduler:
    """Runs every selected case's pair in a pool of ``pairs`` at a time, from collection on, so
    that twins of all modules run concurrently; ``result(case_id)`` waits for one."""

    def __init__(self, sites, pki, pairs):
        from concurrent.futures import ThreadPoolExecutor

        self.sites, self.pki = sites, pki
        self.pool = ThreadPoolExecutor(max_workers=pairs)
        self.futures = collections.OrderedDict()
        self.lock = threading.Lock()

    def submit(self, case_id, case):
        with self.lock:
            if case_id not in self.futures:
                self.futures[case_id] = (case, self.pool.submit(run_pair, case, self.sites, self.pki))

    def result(self, case_id, case):
        self.submit(case_id, case)
        case, future = self.futures[case_id]
        return future.result()

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


def assert_same_as_stock(case, runs):
    found = differences(case, runs)
    assert not found, "the layer differs from stock:\n" + "\n".join(found)
