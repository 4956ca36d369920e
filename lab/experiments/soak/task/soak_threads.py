"""The soak's function: 1-64 puts over 1-32 threads on one module-level client, each put checked.

Each put is an UpdateItem that adds 1 to the item's counter, read back consistently (soak_check.py
says why and builds the record of each put).  The item key names the configuration, round and put,
so the orchestrator can audit the whole table at the end as well.

Besides each put's outcome the handler reports what would show a leak: the process's resident set
(/proc/self/statm), its open file descriptors, "pool is full, discarding connection" warnings from
urllib3 (more threads than pooled connections), and the layer's own bookkeeping -- how many pooled
connections carry its idle stamp, and its count of connections checked out -- read from the pools.

read_timeout is short (SOAK_READ_TIMEOUT_S, default 2 s): a silent middlebox otherwise costs a
60 s hang per stale connection; the same value is used with and without the layer.
"""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import boto3
import soak_check
from botocore.config import Config

client = boto3.client("dynamodb",
                      config=Config(read_timeout=soak_check.READ_TIMEOUT_S, connect_timeout=2))


class _DiscardCounter(logging.Handler):
    """Counts urllib3's "Connection pool is full, discarding connection" warnings."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0
        self._lock = threading.Lock()

    def emit(self, record):
        if str(record.msg).startswith("Connection pool is full"):
            with self._lock:
                self.count += 1


_discards = _DiscardCounter()
logging.getLogger("urllib3.connectionpool").addHandler(_discards)


def _put_and_check(key):
    record = soak_check.new_record(key)
    try:
        soak_check.updated(record, client.update_item(**soak_check.update_request(key)))
        soak_check.read_back(record, client.get_item(**soak_check.read_request(key)))
    except Exception as error:  # a failed put is a result, not a crash of the function
        soak_check.failed(record, error)
    return soak_check.finished(record)


def _pool_bookkeeping():
    """Pooled connections the layer stamped, connections it counts as checked out, pool sizes."""
    stamped = checked_out = pooled = 0
    manager = client._endpoint.http_session._manager
    for key in list(manager.pools.keys()):
        pool = manager.pools.get(key)
        if pool is None:
            continue
        checked_out += getattr(pool, "_aws_keepalive_checked_out", 0)
        for conn in list(pool.pool.queue):
            if conn is not None:
                pooled += 1
                stamped += hasattr(conn, "_aws_keepalive_idle_since")
    return {"pooled": pooled, "stamped": stamped, "checked_out": checked_out}


def handler(event, context):
    prefix, count, threads = event["prefix"], int(event["puts"]), int(event["threads"])
    discards_before = _discards.count
    keys = ["%s-%d" % (prefix, index) for index in range(count)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        puts = list(pool.map(_put_and_check, keys))
    return {"puts": puts, "discards": _discards.count - discards_before,
            "bookkeeping": _pool_bookkeeping(), "process": soak_check.process()}
