"""Drive a stand-in function (lab/standin/lambda_env.py) at a chosen rate or through a schedule of idle gaps.

Two ways to space invocations, because they answer different questions:

- a *rate* (``interval_s``): invocation i is queued at ``t0 + i * interval_s``, start to start, like
  a client calling once a second; a slow invocation delays the next one but the rate does not drift;
- *idle gaps* (``gaps_s``): ``gaps_s[i]`` seconds pass between the end of invocation i-1 (response
  posted, runtime back in ``next`` and frozen) and the start of invocation i. This is the number a
  NAT's idle timer sees, so NAT scenarios use gaps ("a gap longer than the NAT timeout").

Between invocations the function is frozen (SIGSTOP) when it was created with ``freeze=True``, as
Lambda freezes an idle execution environment; the driver only sleeps. Each invocation's record
(``lambda_env.Invocation``) carries the client-observed duration, the handler's result or error, the
function's stdout/stderr lines, the retry/connection counters, and ``gap_s``: the idle time that
actually preceded it (None for the first).
"""

import math
import time
from typing import Any, Callable, List, Optional, Sequence, Union

from lab.standin.lambda_env import Invocation, LambdaFunction

Events = Union[Any, Sequence[Any], Callable[[int], Any]]


def _event(events: Events, i: int, n: int) -> Any:
    if callable(events):
        return events(i)
    if isinstance(events, (list, tuple)):
        if len(events) != n:
            raise ValueError("got %d events for %d invocations" % (len(events), n))
        return events[i]
    return events  # one event for every invocation


def run(fn: LambdaFunction, events: Events = None, *, n: Optional[int] = None,
        interval_s: Optional[float] = None, gaps_s: Optional[Sequence[float]] = None,
        timeout: float = 90.0) -> List[Invocation]:
    """Invoke ``fn`` n times at ``interval_s`` (start to start), or once per entry of ``gaps_s``
    (idle seconds before each invocation). ``events``: one event for all, a list, or f(i)."""
    if (interval_s is None) == (gaps_s is None):
        raise ValueError("give exactly one of interval_s (with n) or gaps_s")
    count = len(gaps_s) if gaps_s is not None else n
    if count is None:
        raise ValueError("interval_s needs n")
    records: List[Invocation] = []
    t0 = time.monotonic()
    last_end: Optional[float] = None
    for i in range(count):
        if gaps_s is not None:
            if last_end is not None or gaps_s[i] > 0:
                sleep_until((last_end if last_end is not None else time.monotonic()) + gaps_s[i])
        else:
            sleep_until(t0 + i * interval_s)
        started = time.monotonic()
        record = fn.invoke(_event(events, i, count), timeout)
        record.gap_s = None if last_end is None else started - last_end
        records.append(record)
        last_end = time.monotonic()
    return records


def sleep_until(deadline: float) -> None:
    """Sleep until time.monotonic() reaches ``deadline`` (at once if it already has)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        time.sleep(left)


def percentile(values: Sequence[float], p: float) -> Optional[float]:
    """Nearest-rank percentile (p in 0..100); None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[rank - 1]


def summary(records: Sequence[Invocation]) -> dict:
    """p50/p95/p99/max of the client-observed duration (ms) and the counters summed and per call."""
    durations = [r.duration_ms for r in records if r.duration_ms is not None]
    totals = {key: sum(r.counters.get(key, 0) for r in records)
              for key in ("attempts", "retries", "new_connections", "dropped_replaced", "connection_errors")}
    return {
        "invocations": len(records),
        "errors": sum(1 for r in records if not r.ok),
        "p50_ms": percentile(durations, 50),
        "p95_ms": percentile(durations, 95),
        "p99_ms": percentile(durations, 99),
        "max_ms": max(durations) if durations else None,
        "new_connections_per_invocation": totals["new_connections"] / len(records) if records else None,
        **totals,
    }
