"""bench/soak_memory.py run small (needs root for its network namespace, as the lab does): every
map the layer keeps stays within its cap, and file descriptors come back to where they started,
on the stock side and the layer's.  The full soak (10 000 clients, 2 000 hosts) is
``make soak-memory``; its RSS figures are the benchmark's output, not a test's condition."""

import json
import os
import subprocess
import sys

from standin import REPO

SOAK = os.path.join(REPO, "bench", "soak_memory.py")
sys.path.insert(0, os.path.dirname(SOAK))
import soak_memory  # noqa: E402


def test_layer_maps_within_caps_and_fds_flat(tmp_path, nat_available):
    """600 clients over 300 hosts (loopback aliases), bundle rewrites, aiobotocore clients, forks,
    the layer's caps lowered (--small-caps: 100 hosts): the learned-idle table fills up to its cap
    and never past it at any checkpoint, no worker fails, and each side ends with the descriptors
    it had at the first checkpoint."""
    out = tmp_path / "soak.json"
    completed = subprocess.run(
        [sys.executable, SOAK, "--clients", "600", "--hosts", "300", "--checkpoints", "6",
         "--fork-every", "50", "--aio-every", "20", "--small-caps", "--json", str(out),
         "--timeout", "600"],
        capture_output=True, text=True, timeout=900)
    print(completed.stdout, completed.stderr[-3000:])
    assert completed.returncode == 0, completed.stderr[-3000:]
    rows = {row["side"]: row for row in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"stock", "layer"}
    for row in rows.values():
        assert row["clients"] == 600 and row["aio_clients"] == 30 and row["forks"] == 12, row
        assert row["fds_last"] == row["fds_first"], row
    layer = rows["layer"]
    assert layer["maps_max"]["idle._hosts"] == soak_memory.SMALL_CAPS["idle._hosts"], layer["maps_max"]
    assert layer["maps_max"].get("diagnostics._reported", 0) <= soak_memory.SMALL_CAPS["diagnostics._reported"]
