"""Per-invocation counters of HTTP attempts, retries and connections, for an untouched handler.

The lab must tell, for every invocation, how many requests botocore retried and how many new
connections urllib3 opened, without changing the function's code and for every boto3 the function
may end up with: the runtime's bundled one (botocore 1.34 or 1.42, "legacy" retry mode) or the
layer's (botocore 1.44, urllib3 2, "standard" retry mode).

Why logging, and which records. Patching botocore or urllib3 would put lab code inside the very code
path the layer changes, and importing either early would change which copy gets imported. Both
libraries, in every version in use, already log each event we need at DEBUG level, with the *same*
format strings (checked in botocore 1.34.162 / 1.44.5 and urllib3 1.26.20 / 2.8):

  logger                      format string (``record.msg``)                 counts as
  botocore.endpoint           "Sending http request: %s"                     attempt
  urllib3.connectionpool      '%s://%s:%s "%s %s %s" %s %s'                  http_response
  urllib3.connectionpool      "Starting new HTTP(S) connection (%d): %s:%s"  new_connection
  urllib3.connectionpool      "Resetting dropped connection: %s"             dropped_replaced
  botocore.retryhandler       "Retry needed, action of: %s"         (legacy)   retry
  botocore.retries.standard   "Retry needed, retrying request ..."  (standard) retry
  botocore.retryhandler       "retry needed, retryable exception caught: %s" exception (legacy only)

An attempt without an HTTP response failed at the connection level (reset, closed, read timeout):
``connection_errors = attempts - http_responses``. That is what a NAT that dropped the flow causes,
whatever the retry mode; the legacy mode also names the exception, the standard mode does not log it.
Matching ``record.msg`` (the unformatted string) keeps the cost to one comparison per record: the
arguments are never formatted.

Side effects on the function, kept minimal and listed here: those four loggers get level DEBUG (only
if the function left them at NOTSET) and ``propagate = False``; our handler passes on to the parent
loggers' handlers every record at or above the level the parents would have let through, so the
function's log output is what it would have been. If the function configures these loggers itself
after start, its settings win and the counters may be incomplete.

Output: one JSON line per event to the ``--observe`` file, with the request id awslambdaric is
serving (None during init) and the process that logged it (multi-concurrent mode: the worker):
``{"rid": ..., "kind": ..., "t": <time.time()>, "detail": ..., "pid": ..., "thread": <its name>}``
(the thread tells a request the handler sent from one a library sent from its own thread, e.g. the
durable execution SDK's background checkpoint thread). The lab reads it after
each invocation, when the runtime is idle; line buffering makes every event visible as soon as it
is logged, and each line is one append (workers share the file).
"""

import json
import logging
import os
import sys
import threading
import time

_KINDS = {
    ("botocore.endpoint", "Sending http request: %s"): "attempt",
    ("urllib3.connectionpool", '%s://%s:%s "%s %s %s" %s %s'): "http_response",
    ("urllib3.connectionpool", "Starting new HTTP connection (%d): %s:%s"): "new_connection",
    ("urllib3.connectionpool", "Starting new HTTPS connection (%d): %s:%s"): "new_connection",
    ("urllib3.connectionpool", "Resetting dropped connection: %s"): "dropped_replaced",
    ("botocore.retryhandler", "Retry needed, action of: %s"): "retry",
    ("botocore.retries.standard", "Retry needed, retrying request after delay of: %s"): "retry",
    ("botocore.retryhandler", "retry needed, retryable exception caught: %s"): "exception",
}
LOGGERS = sorted({name for name, _ in _KINDS})


def _request_id():
    bootstrap = sys.modules.get("awslambdaric.bootstrap")
    return getattr(bootstrap, "_GLOBAL_AWS_REQUEST_ID", None)


class _CountingHandler(logging.Handler):
    def __init__(self, stream):
        super().__init__(logging.DEBUG)
        self._stream = stream

    def emit(self, record):
        kind = _KINDS.get((record.name, record.msg))
        if kind is not None:
            detail = None
            if kind == "exception" and record.args:
                error = record.args[0]
                detail = type(error).__name__
                inner = getattr(error, "kwargs", {}).get("error")  # botocore keeps the urllib3 cause
                if inner is not None:
                    detail += "(%s)" % type(inner).__name__
            elif kind in ("new_connection", "dropped_replaced") and record.args:
                detail = ":".join(str(a) for a in record.args[-2:]) if kind == "new_connection" else str(record.args[0])
            line = {"rid": _request_id(), "kind": kind, "t": time.time(), "detail": detail,
                    "pid": os.getpid(), "thread": threading.current_thread().name}
            self._stream.write(json.dumps(line) + "\n")
        # Pass the record on as propagation would have, at the level the parents let through.
        parent = logging.getLogger(record.name).parent
        if parent is not None and record.levelno >= parent.getEffectiveLevel():
            parent.handle(record)


def install(path):
    """Attach the counting handler; called by the stand-in bootstrap before any layer code runs."""
    stream = open(path, "a", buffering=1, encoding="utf-8")
    handler = _CountingHandler(stream)
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.DEBUG)
        logger.propagate = False
        logger.addHandler(handler)
    return handler
