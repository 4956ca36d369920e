"""Metrics: what the layer did, as CloudWatch Embedded Metric Format (EMF) records on stdout.

Off by default; ``AWS_PYTHON_KEEPALIVE_METRICS=1`` switches it on.  Lambda sends a function's
stdout to CloudWatch Logs line by line, and CloudWatch extracts metrics from every line that is an
EMF document: no API call, no extension, no dependency.  The records (docs/metrics.md):

* ``NewConnections`` (Count) with dimension ``Reason`` -- why a connection was opened: first use,
  max idle, learned idle, restored, peer closed, pool full (aiobotocore adds keepalive_timeout,
  aiohttp's own idle close) -- and ``ConnectMs`` (Milliseconds), the TCP (+ TLS) handshake of each;
* ``StaleReuses`` (Count): a request on a reused pooled connection failed before any response
  byte (reset, broken pipe, remote disconnect, a read timeout with the request unacknowledged)
  and was retried by botocore;
* ``ReusedAfterProbe`` (Count): a connection idle past its limit reused because keep-alive probes
  were answered recently;
* ``TlsResumed`` / ``TlsNotResumed`` (Count): a new verified TLS connection offered the session
  of an earlier one and the server resumed it, or refused it (a full handshake, as stock's);
  a connection with nothing to offer counts in neither (resume.py;
  ``AWS_PYTHON_KEEPALIVE_TLS_RESUME``).

Every metric also carries ``FunctionName`` (``AWS_LAMBDA_FUNCTION_NAME``) where Lambda sets it.

When the counts are written.  A frozen execution environment may never run again, so a count
must reach stdout within the invocation in which it happened -- but the layer wraps no handler
and cannot tell from inside a request when the invocation ends.  The runtime can: its loop calls
``wait_next_invocation`` on its Runtime API client after the response was posted and before
Lambda freezes the environment (Lambda freezes it while the runtime waits in ``next``).  So the
counts of an invocation are aggregated in memory and written when the runtime asks for the next
invocation: the class method of awslambdaric (the managed Python runtime's own client, also what
container images and Lambda Managed Instances run) is wrapped once, looked up in ``sys.modules``
(never imported by the layer).  Two more flush points make it correct everywhere:

* during a long invocation, an event at least ``FLUSH_INTERVAL_S`` after the last write writes at
  once (Managed Instances are never frozen, and a long invocation still shows up promptly);
* where no awslambdaric runtime client is loaded (a script, a test, another runtime interface
  client), nothing marks the end of an invocation, so every event is written at once.

Volume: nothing is written when nothing was counted.  A write is one line per ``Reason`` that
occurred (at most 7 kinds) and one for the counts (``StaleReuses``, ``ReusedAfterProbe``,
``TlsResumed``, ``TlsNotResumed``) if any occurred, so at most 8 lines per invocation that
counted something, plus at most 8 lines a minute during long invocations.  In
steady state (connections reused) an invocation counts nothing and writes nothing; a function
that makes its client inside the handler opens a connection each invocation ("first use") and
so writes one line per invocation.  Each record is well under 1 KB; a ``ConnectMs`` array holds
at most 100 values (EMF's limit), further connections in the same write are counted but not timed.

Cost: when off, nothing here runs -- the callers check ``enabled`` -- and only connection events
(not requests) reach this module when on.
"""

import sys
import threading
import time

# Set by configure(): the callers (patch.py, aio.py) check it before calling anything here.
enabled = False

FLUSH_INTERVAL_S = 60.0
# EMF: an array metric value holds at most 100 numbers.
MAX_VALUES = 100

_namespace = None
_function_name = None
_lock = threading.RLock()
# {"reasons": {reason: [count, [connect_ms, ...]]}, "counts": {metric name: count}} or None
_pending = None
_last_write = 0.0
_runtime_hooked = False


def configure(settings, environ):
    """Switch metrics on with the namespace ``settings`` names; hook the runtime if it is loaded."""
    global enabled, _namespace, _function_name, _last_write
    _namespace = settings.metrics_namespace
    _function_name = environ.get("AWS_LAMBDA_FUNCTION_NAME") or None
    _last_write = time.monotonic()
    enabled = True
    _hook_runtime()
    import os

    # A forked child (process pools, Managed Instances' workers) starts with a copy of what the
    # parent had counted and not yet written: the parent writes it, the child must not.
    os.register_at_fork(after_in_child=_forget_pending)


def _forget_pending():
    global _pending
    _pending = None


def new_connection(reason, connect_ms):
    """A connection was opened for ``reason``; its handshake took ``connect_ms`` (None: unknown)."""
    _count(reason, connect_ms, None)


def tls_session(outcome):
    """A new TLS connection offered a session: "resumed", or "not resumed" (the server did a full
    handshake).  "full" (nothing to offer) is not counted: NewConnections minus these two."""
    name = _TLS_COUNTS.get(outcome)
    if name is not None:
        _count(None, None, name)


_TLS_COUNTS = {"resumed": "TlsResumed", "not resumed": "TlsNotResumed"}


def stale_reuse():
    _count(None, None, "StaleReuses")


def reused_after_probe():
    _count(None, None, "ReusedAfterProbe")


def _count(reason, connect_ms, name):
    global _pending
    try:
        with _lock:
            if _pending is None:
                _pending = {"reasons": {}, "counts": {}}
            if reason is not None:
                entry = _pending["reasons"].setdefault(reason, [0, []])
                entry[0] += 1
                if connect_ms is not None and len(entry[1]) < MAX_VALUES:
                    entry[1].append(round(connect_ms, 3))
            else:
                _pending["counts"][name] = _pending["counts"].get(name, 0) + 1
        if not _runtime_hooked and not _hook_runtime():
            flush()  # nothing marks the end of an invocation here: write now
        elif time.monotonic() - _last_write >= FLUSH_INTERVAL_S:
            flush()
    except Exception as error:
        _report(error)


def flush():
    """Write what was counted since the last write (nothing if nothing was).  Never raises."""
    global _pending, _last_write
    try:
        with _lock:
            pending, _pending = _pending, None
            _last_write = time.monotonic()
        if not pending:
            return
        import json  # botocore imported it long before any count

        lines = [
            json.dumps(record, separators=(",", ":"))
            for record in records(pending, int(time.time() * 1000))
        ]
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
    except Exception as error:
        _report(error)


def records(pending, timestamp_ms):
    """The EMF documents for ``pending`` counts (see the module docstring), oldest reason first."""
    function_dims = ["FunctionName"] if _function_name else []
    common = {"FunctionName": _function_name} if _function_name else {}
    result = []
    for reason, (count, connect_ms) in sorted(pending["reasons"].items()):
        metrics = [{"Name": "NewConnections", "Unit": "Count"}]
        record = dict(common, Reason=reason, NewConnections=count)
        if connect_ms:
            metrics.append({"Name": "ConnectMs", "Unit": "Milliseconds"})
            record["ConnectMs"] = connect_ms if len(connect_ms) > 1 else connect_ms[0]
        directive = {
            "Namespace": _namespace,
            # Per reason, and the function's total over all reasons.
            "Dimensions": [function_dims + ["Reason"], function_dims],
            "Metrics": metrics,
        }
        record["_aws"] = {"Timestamp": timestamp_ms, "CloudWatchMetrics": [directive]}
        result.append(record)
    counts = sorted((name, n) for name, n in pending["counts"].items() if n)
    if counts:
        directive = {
            "Namespace": _namespace,
            "Dimensions": [function_dims],
            "Metrics": [{"Name": name, "Unit": "Count"} for name, _ in counts],
        }
        # A line of its own, without Reason: a log query can then sum StaleReuses without
        # picking up a reason, and NewConnections by reason without picking up stale reuses.
        record = dict(common, **dict(counts))
        record["_aws"] = {"Timestamp": timestamp_ms, "CloudWatchMetrics": [directive]}
        result.append(record)
    return result


def _hook_runtime():
    """Wrap the runtime client's ``wait_next_invocation`` so that it flushes first; True once done."""
    global _runtime_hooked
    if _runtime_hooked:
        return True
    module = sys.modules.get("awslambdaric.lambda_runtime_client")
    if module is None:
        return False
    from aws_keepalive.wrap import wrap

    # awslambdaric 4.x defines it on BaseLambdaRuntimeClient (shared by the multi-concurrent
    # client of Managed Instances), 2.x and 3.x on LambdaRuntimeClient.
    for name in ("BaseLambdaRuntimeClient", "LambdaRuntimeClient"):
        owner = getattr(module, name, None)
        if owner is not None and "wait_next_invocation" in vars(owner):
            wrap(owner, "wait_next_invocation", _make_wait_next_invocation)
            _runtime_hooked = True
            return True
    return False


def _make_wait_next_invocation(original):
    def wait_next_invocation(self, *args, **kwargs):
        flush()  # the invocation has ended; Lambda may freeze the environment from here on
        return original(self, *args, **kwargs)

    return wait_next_invocation


def _report(error):
    from aws_keepalive import diagnostics

    diagnostics.report_once("metrics", "could not write metrics: %r; the function is unaffected" % (error,))
