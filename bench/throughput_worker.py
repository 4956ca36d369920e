"""One configuration of ``make bench-throughput``, in its own interpreter: N PutItems, one JSON line out.

    python bench/throughput_worker.py --configuration threads-stock --items 2000 --concurrency 32 \
        --endpoint https://127.0.0.1:PORT --table bench [--layer layer/]

Run by bench/throughput.py, once per configuration, so each starts from a cold interpreter and the
layer is either there or not (``--layer``: its folder is added with ``site.addsitedir`` before
anything imports botocore, which runs the layer's ``.pth`` exactly as the Lambda runtime does; the
switch and the pool size come from the environment the parent sets).

Configurations:

* ``sequential``    one boto3 client, one put after the other.
* ``threads-*``     one boto3 client shared by ``concurrency`` threads (botocore clients are
                    thread-safe); the pool is botocore's (10) unless the layer sets it.
* ``aiobotocore-*`` one aiobotocore client shared by ``concurrency`` tasks on one loop.
* ``raw``           the limit: ``concurrency`` asyncio tasks, each with its own TLS connection,
                    writing hand-built HTTP/1.1 keep-alive PutItem requests. No signing, no
                    botocore: a fixed Authorization header naming the access key (DynamoDB Local
                    keeps one database per key and checks no signature). What a client that costs
                    nothing would get from this server over this network.

Every configuration first makes its client and one warm-up put (not timed, not counted in items);
then the clock runs over exactly ``items`` puts. Per put: its latency. Pool discards: urllib3's
"Connection pool is full, discarding connection" warnings, counted by a logging handler.
"""

import argparse
import asyncio
import collections
import itertools
import json
import logging
import os
import re
import site
import ssl
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

CONFIGURATIONS = ("sequential", "threads-stock", "threads-layer", "aiobotocore-stock", "aiobotocore-layer",
                  "raw")


class _DiscardCounter(logging.Handler):
    """Counts urllib3's "Connection pool is full, discarding connection" warnings."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        if str(record.msg).startswith("Connection pool is full"):
            self.count += 1


class Failures:
    """Every put that raised (after the SDK's own retries): how many, by exception type and message
    (the first line, addresses and ports cut off so that alike failures count together).  The run
    goes on: a failed put is counted here, not in the latencies (issue 31: one failure used to abort
    the whole benchmark without saying which configuration met it)."""

    def __init__(self):
        self.by_kind = collections.Counter()
        self.lock = threading.Lock()

    def add(self, error):
        message = re.sub(r"0x[0-9a-f]+|:\d{2,5}\b", "", str(error).splitlines()[0] if str(error) else "")
        with self.lock:
            self.by_kind["%s: %s" % (type(error).__name__, message[:200])] += 1

    def as_json(self):
        return dict(self.by_kind)


FAILURES = Failures()


def _item(i):
    return {"pk": {"S": "%s-%d" % (uuid.uuid4().hex, i)}, "n": {"N": str(i)}}


def run_boto3(args, threads):
    import boto3

    client = boto3.client("dynamodb", endpoint_url=args.endpoint)
    client.put_item(TableName=args.table, Item=_item(-1))
    counter = itertools.count()  # next() on a count is atomic under the GIL
    latencies = []
    lock = threading.Lock()

    def work():
        mine = []
        while next(counter) < args.items:
            t0 = time.perf_counter()
            try:
                client.put_item(TableName=args.table, Item=_item(0))
            except Exception as error:
                FAILURES.add(error)
                continue
            mine.append(time.perf_counter() - t0)
        with lock:
            latencies.extend(mine)

    started = time.perf_counter()
    if threads == 1:
        work()
    else:
        with ThreadPoolExecutor(threads) as pool:
            for future in [pool.submit(work) for _ in range(threads)]:
                future.result()
    return time.perf_counter() - started, latencies


async def _aiobotocore(args):
    from aiobotocore.session import get_session

    async with get_session().create_client("dynamodb", endpoint_url=args.endpoint) as client:
        await client.put_item(TableName=args.table, Item=_item(-1))
        counter = itertools.count()
        latencies = []

        async def work():
            while next(counter) < args.items:
                t0 = time.perf_counter()
                try:
                    await client.put_item(TableName=args.table, Item=_item(0))
                except Exception as error:
                    FAILURES.add(error)
                    continue
                latencies.append(time.perf_counter() - t0)

        started = time.perf_counter()
        await asyncio.gather(*(work() for _ in range(args.concurrency)))
        return time.perf_counter() - started, latencies


def _raw_request(host, key, table, i):
    body = json.dumps({"TableName": table, "Item": _item(i)}).encode()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    head = ("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.0\r\n"
            "X-Amz-Target: DynamoDB_20120810.PutItem\r\nX-Amz-Date: %s\r\n"
            "Authorization: AWS4-HMAC-SHA256 Credential=%s/%s/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=%s\r\nContent-Length: %d\r\n\r\n"
            % (host, stamp, key, stamp[:8], "0" * 64, len(body)))
    return head.encode() + body



async def _raw(args):
    url = urlsplit(args.endpoint)
    context = None
    if url.scheme == "https":
        context = ssl.create_default_context(cafile=os.environ["AWS_CA_BUNDLE"])
    key = os.environ["AWS_ACCESS_KEY_ID"]
    counter = itertools.count()
    latencies = []

    async def put(reader, writer, i):
        writer.write(_raw_request(url.netloc, key, args.table, i))
        status = await reader.readline()
        length = 0
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        body = await reader.readexactly(length)
        if b" 200 " not in status:
            raise RuntimeError("raw PutItem failed: %r %r" % (status, body[:200]))

    async def connect():
        return await asyncio.open_connection(url.hostname, url.port, ssl=context)

    async def work(connection=None):
        reader, writer = connection or await connect()
        try:
            while (i := next(counter)) < args.items:
                t0 = time.perf_counter()
                await put(reader, writer, i)
                latencies.append(time.perf_counter() - t0)
        finally:
            writer.close()

    # Warm-up as for the other configurations: one connection and one put before the clock runs;
    # the other connections are opened inside the timed part, as a client's pool would open them.
    first = await connect()
    await put(*first, -1)
    started = time.perf_counter()
    await asyncio.gather(work(first), *(work() for _ in range(args.concurrency - 1)))
    return time.perf_counter() - started, latencies


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--configuration", required=True, choices=CONFIGURATIONS)
    p.add_argument("--items", type=int, required=True)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--endpoint", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--layer", help="the layer's python folder, added as a site directory first")
    args = p.parse_args(argv)
    if args.layer:
        site.addsitedir(args.layer)
    discards = _DiscardCounter()
    logging.getLogger("urllib3.connectionpool").addHandler(discards)
    name = args.configuration
    if name == "sequential":
        elapsed, latencies = run_boto3(args, 1)
    elif name.startswith("threads-"):
        elapsed, latencies = run_boto3(args, args.concurrency)
    elif name.startswith("aiobotocore-"):
        elapsed, latencies = asyncio.run(_aiobotocore(args))
    else:
        elapsed, latencies = asyncio.run(_raw(args))
    layer_modules = sorted(m for m in sys.modules if m.startswith("aws_keepalive"))
    print(json.dumps({"configuration": name, "items": len(latencies), "elapsed_s": elapsed,
                      "latencies_s": latencies, "pool_discards": discards.count,
                      "failures": FAILURES.as_json(),
                      "layer_modules": layer_modules}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
