"""The soak's function: 1-64 puts over 1-32 threads on one module-level client, each put checked.

A put is an UpdateItem that ADDs 1 to the item's counter ``n``: a request botocore sent twice (a
retry after the server had already applied it) leaves n == 2, where a PutItem would hide it.  Each
put is then read back (GetItem, consistent read) and must show n == 1.  The item key names the
configuration, round and put, so the orchestrator can audit the whole table at the end as well.

Besides each put's outcome the handler reports what would show a leak: the process's resident set
(/proc/self/statm), its open file descriptors, "pool is full, discarding connection" warnings from
urllib3 (more threads than pooled connections), and the layer's own bookkeeping -- how many pooled
connections carry its idle stamp, and its count of connections checked out -- read from the pools.

read_timeout is short (event "read_timeout_s", default 2 s): a silent middlebox otherwise costs a
60 s hang per stale connection; the same value is used with and without the layer.
"""

import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config

READ_TIMEOUT_S = float(os.environ.get("SOAK_READ_TIMEOUT_S", "2"))
client = boto3.client("dynamodb", config=Config(read_timeout=READ_TIMEOUT_S, connect_timeout=2))
TABLE_NAME = os.environ["TABLE_NAME"]
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


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
    started = time.time()
    record = {"key": key, "t": started, "retries": 0, "error": None, "n": None}
    try:
        response = client.update_item(
            TableName=TABLE_NAME, Key={"pk": {"S": key}}, UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="UPDATED_NEW")
        record["retries"] += response["ResponseMetadata"]["RetryAttempts"]
        record["ms"] = round((time.time() - started) * 1000.0, 3)
        read = client.get_item(TableName=TABLE_NAME, Key={"pk": {"S": key}}, ConsistentRead=True)
        record["retries"] += read["ResponseMetadata"]["RetryAttempts"]
        record["n"] = int(read["Item"]["n"]["N"]) if "Item" in read else 0
    except Exception as error:  # a failed put is a result, not a crash of the function
        record["error"] = "%s: %s" % (type(error).__name__, str(error)[:200])
        record.setdefault("ms", round((time.time() - started) * 1000.0, 3))
    record["end"] = time.time()
    return record


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


def _process():
    with open("/proc/self/statm") as statm:
        rss_pages = int(statm.read().split()[1])
    return {"rss_kb": rss_pages * PAGE_SIZE // 1024, "fds": len(os.listdir("/proc/self/fd"))}


def handler(event, context):
    prefix, count, threads = event["prefix"], int(event["puts"]), int(event["threads"])
    discards_before = _discards.count
    keys = ["%s-%d" % (prefix, index) for index in range(count)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        puts = list(pool.map(_put_and_check, keys))
    return {"puts": puts, "discards": _discards.count - discards_before,
            "bookkeeping": _pool_bookkeeping(), "process": _process()}
