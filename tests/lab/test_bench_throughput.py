"""bench/throughput.py run small (BENCH_N=100) on the bench venv (.venv/bench, `make test-lab` makes it):
the JSON has the documented shape and its counts agree with each other. No timing is asserted:
speed is the benchmark's output, not a test's condition."""

import json
import os
import subprocess

import pytest

from standin import REPO

BENCH_PY = os.path.join(REPO, ".venv", "bench", "bin", "python")
ITEMS = 100
CONCURRENCY = 32
BOTOCORE_POOL = 10  # botocore's default max_pool_connections
FIELDS = {"configuration", "items", "items_per_s", "p50_ms", "p99_ms", "new_connections", "pool_discards",
          "failed", "failures"}
ORDER = ["sequential", "threads-stock", "threads-layer", "aiobotocore-stock", "aiobotocore-layer", "raw",
         "raw-no-network"]


@pytest.fixture(scope="module", name="bench")
def bench_fixture(tmp_path_factory):
    if not os.path.exists(BENCH_PY):
        pytest.fail("%s missing: run `make .venv/bench/bin/python` (make test-lab does)" % BENCH_PY)
    out = tmp_path_factory.mktemp("bench") / "bench-throughput.json"
    proc = subprocess.run([BENCH_PY, os.path.join(REPO, "bench", "throughput.py"), "--items", str(ITEMS),
                           "--rtt-ms", "4", "--concurrency", str(CONCURRENCY), "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    print(proc.stdout, proc.stderr[-2000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout


def _rows(bench):
    return {row["configuration"]: row for row in bench[0]["rows"]}


def test_every_configuration_has_one_row_with_the_documented_fields(bench):
    """One row per configuration, in order, each with exactly the documented fields and N items."""
    data, stdout = bench
    assert [row["configuration"] for row in data["rows"]] == ORDER
    for row in data["rows"]:
        assert set(row) == FIELDS, row
        assert row["items"] == ITEMS and row["failed"] == 0 and row["failures"] == {}, row
        assert row["items_per_s"] > 0 and 0 < row["p50_ms"] <= row["p99_ms"], row
        assert row["configuration"] in stdout  # the printed table holds the same rows


def test_connection_counts_agree_with_the_pools(bench):
    """Sequential opens one connection; a urllib3 pool keeps at most its size, so every connection
    beyond it is one discard (stock: 10, layer: 32, so none); aiohttp waits instead of opening more
    than its limit (10) and discards nothing; the raw client opens exactly one per worker."""
    rows = _rows(bench)
    assert rows["sequential"]["new_connections"] == 1 and rows["sequential"]["pool_discards"] == 0
    for name, pool in (("threads-stock", BOTOCORE_POOL), ("threads-layer", CONCURRENCY)):
        new, discards = rows[name]["new_connections"], rows[name]["pool_discards"]
        assert new - discards == min(pool, new), rows[name]
    assert rows["threads-layer"]["pool_discards"] == 0
    assert 1 <= rows["aiobotocore-stock"]["new_connections"] <= BOTOCORE_POOL
    assert 1 <= rows["aiobotocore-layer"]["new_connections"] <= CONCURRENCY
    assert rows["aiobotocore-stock"]["pool_discards"] == rows["aiobotocore-layer"]["pool_discards"] == 0
    assert rows["raw"]["new_connections"] == CONCURRENCY
    assert rows["raw-no-network"]["new_connections"] is None  # no Netem in front: nothing counts them
