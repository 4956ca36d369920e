"""What the soak's two functions (soak_threads, soak_aio) check and report, written once.

A put is an UpdateItem that ADDs 1 to the item's counter ``n``: a request sent twice (a retry after
the server had already applied it) leaves n == 2, where a PutItem would hide it.  Each put is then
read back (GetItem, consistent read) and must show n == 1.  The handlers differ only in how they
call the client (a thread pool, or tasks that await); the requests they send and the record they
return for each put come from here, so the two workloads are judged by the same rules.
"""

import os
import time

READ_TIMEOUT_S = float(os.environ.get("SOAK_READ_TIMEOUT_S", "2"))
TABLE_NAME = os.environ["TABLE_NAME"]
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def update_request(key):
    """UpdateItem arguments: add 1 to the item's counter."""
    return {"TableName": TABLE_NAME, "Key": {"pk": {"S": key}}, "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}}, "ReturnValues": "UPDATED_NEW"}


def read_request(key):
    """GetItem arguments: read the item back, consistently."""
    return {"TableName": TABLE_NAME, "Key": {"pk": {"S": key}}, "ConsistentRead": True}


def new_record(key):
    """The record of one put, before it is sent."""
    return {"key": key, "t": time.time(), "retries": 0, "error": None, "n": None}


def updated(record, response):
    """The UpdateItem answered: count its retries, time the put."""
    record["retries"] += response["ResponseMetadata"]["RetryAttempts"]
    record["ms"] = _ms_since(record)


def read_back(record, response):
    """The GetItem answered: count its retries, keep the counter it read (0 if the item is missing)."""
    record["retries"] += response["ResponseMetadata"]["RetryAttempts"]
    record["n"] = int(response["Item"]["n"]["N"]) if "Item" in response else 0


def failed(record, error):
    """A failed put is a result, not a crash of the function."""
    record["error"] = "%s: %s" % (type(error).__name__, str(error)[:200])
    record.setdefault("ms", _ms_since(record))


def finished(record):
    record["end"] = time.time()
    return record


def process():
    """The function's resident set (/proc/self/statm) and open file descriptors."""
    with open("/proc/self/statm") as statm:
        rss_pages = int(statm.read().split()[1])
    return {"rss_kb": rss_pages * PAGE_SIZE // 1024, "fds": len(os.listdir("/proc/self/fd"))}


def _ms_since(record):
    return round((time.time() - record["t"]) * 1000.0, 3)
