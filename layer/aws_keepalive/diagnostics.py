"""Diagnostics: the only place the layer writes anything, always one line on stderr.

Lambda sends a function's stderr to CloudWatch Logs line by line.  With the function's log format
set to JSON (``AWS_LAMBDA_LOG_FORMAT=JSON``) every line is a JSON object, the shape Lambda's own
JSON logs have (timestamp, level, message, logger), so log queries and subscription filters keep
working.  What is written: setting names and values, versions, file paths, endpoint host names,
reasons and durations.  Never credentials, headers or bodies: no code path here receives them.
"""

import os
import sys
import time

LOGGER = "aws_keepalive"
TEXT_PREFIX = "aws-keepalive:"

# Set by activate() from AWS_PYTHON_KEEPALIVE_DEBUG.
debug_enabled = False

# Keys of the problems already reported: report_once() reports each at most once per process,
# so a failing wrapper called on every request cannot flood the function's logs.  Some keys come
# from an open set (``open_set=True``: a stale reuse is reported once per host, a warning about
# the user's connector_args once per set of names), so a process that lives for days and talks
# to thousands of hosts would grow the set for ever: after MAX_REPORTED keys, one line says so and
# every further new key of an open set counts as reported (memory and log lines both bounded;
# debug lines, when on, still carry each event).  The layer's own failures have fixed keys, a
# few dozen at most: each is still reported once however many hosts came first.
MAX_REPORTED = 256
_reported = set()


def warn(message, **fields):
    """Write a warning line."""
    _emit("WARN", message, fields)


def debug(message, **fields):
    """Write a debug line, only when AWS_PYTHON_KEEPALIVE_DEBUG is on."""
    if debug_enabled:
        _emit("DEBUG", message, fields)


def report_once(key, message, open_set=False, **fields):
    """Write a warning line the first time ``key`` is reported in this process; True if written.
    ``open_set``: the key is one of an unbounded family (a host name), capped at MAX_REPORTED."""
    if key in _reported:
        return False
    if open_set and len(_reported) >= MAX_REPORTED:
        if None not in _reported:
            _reported.add(None)  # the one extra key: this line is written once
            _emit("WARN", "%d distinct warnings written; further new ones are not (set "
                  "AWS_PYTHON_KEEPALIVE_DEBUG=1 to see each event)" % MAX_REPORTED, {})
        return False
    _reported.add(key)
    _emit("WARN", message, fields)
    return True


def _emit(level, message, fields):
    if os.environ.get("AWS_LAMBDA_LOG_FORMAT", "").strip().upper() == "JSON":
        # json is imported here, not at module level: at startup the layer imports nothing the
        # function would not import itself, and most lines are never written.
        import json

        now = time.time()
        record = {
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
            + ".%03dZ" % (int(now * 1000) % 1000),
            "level": level,
            "message": message,
            "logger": LOGGER,
        }
        record.update(fields)
        line = json.dumps(record, default=str)
    else:
        line = "%s %s %s" % (TEXT_PREFIX, level, message)
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except Exception:  # a closed or missing stderr must not break the function
        pass
