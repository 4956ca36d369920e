"""idle.py: the learned idle limit per host (the rule both client families share)."""

import socket
import threading

import pytest

from aws_keepalive import idle
from conftest import loopback_pair


@pytest.fixture(autouse=True)
def fresh_table(monkeypatch):
    monkeypatch.setattr(idle, "_hosts", {})
    monkeypatch.setattr(idle, "learn", True)


def _stamp_idle(seconds):
    """A stamp taken ``seconds`` ago on both clocks."""
    monotonic, wall, generation = idle.stamp()
    return (monotonic - seconds, wall - seconds, generation)


def test_nothing_learned_before_a_stale_reuse():
    """Before any failure a host has no learned limit, and max idle decides."""
    idle.reused_ok("h", 100.0)
    assert idle.learned_limit_s("h") is None
    assert idle.replace_reason(_stamp_idle(200), None, 300, "h")[0] is None


def test_stale_reuse_sets_a_limit_below_the_failing_idle():
    """After a stale reuse at idle X, connections idle past 0.8 X are replaced ("learned idle")."""
    assert idle.reused_stale("h", 200.0) == pytest.approx(160.0)
    assert idle.replace_reason(_stamp_idle(170), None, 300, "h")[0] == idle.LEARNED_IDLE
    assert idle.replace_reason(_stamp_idle(150), None, 300, "h")[0] is None
    # Other hosts keep max idle.
    assert idle.replace_reason(_stamp_idle(170), None, 300, "other")[0] is None


def test_limit_never_below_longest_successful_reuse():
    """A host where a connection idle 190 s was reused successfully keeps reusing up to 190 s."""
    idle.reused_ok("h", 190.0)
    assert idle.reused_stale("h", 200.0) == pytest.approx(190.0)


def test_success_at_the_failing_idle_or_longer_forgets_the_failure():
    """A reuse that worked after an idle as long as the one that failed (probes kept the flow, or
    the path changed): the path holds longer than the lesson says, the host is back on max idle."""
    idle.reused_stale("h", 200.0)
    idle.reused_ok("h", 199.0)
    assert idle.learned_limit_s("h") == pytest.approx(199.0)
    idle.reused_ok("h", 250.0)
    assert idle.learned_limit_s("h") is None
    assert idle.replace_reason(_stamp_idle(290), None, 300, "h")[0] is None


def test_a_newer_failure_outdates_an_older_longer_success():
    """The path's timeout went down: a failure at 100 s after a success at 190 s sets the limit
    from the failure (80 s), not from the old success."""
    idle.reused_ok("h", 190.0)
    assert idle.reused_stale("h", 100.0) == pytest.approx(80.0)


def test_lesson_expires_after_its_lifetime(monkeypatch):
    """LEARNED_LIFETIME_S after the stale reuse that taught it, the host is back on max idle; a
    new stale reuse teaches again."""
    now = [1000.0]
    monkeypatch.setattr(idle.time, "monotonic", lambda: now[0])
    idle.reused_stale("h", 100.0)
    now[0] += idle.LEARNED_LIFETIME_S - 1
    assert idle.learned_limit_s("h") == pytest.approx(80.0)
    now[0] += 2
    assert idle.learned_limit_s("h") is None
    assert idle.reused_stale("h", 150.0) == pytest.approx(120.0)  # expired: not min(100, 150)


def _replaced_in_a_row(host, idle_s):
    """How many connections idle ``idle_s`` the host's lesson replaces before one is reused."""
    for count in range(10 * idle.MAX_PROBE_AFTER):
        if idle.replace_reason(_stamp_idle(idle_s), None, 300, host)[0] is None:
            return count
    raise AssertionError("never reused")


def test_a_lesson_replaces_its_budget_then_lets_a_probe_through():
    """A lesson replaces PROBE_AFTER connections, then reuses the next one (a probe); the probe's
    success past the lapsed limit ends it: a one-off failure costs at most PROBE_AFTER handshakes."""
    idle.reused_stale("h", 100.0)
    assert _replaced_in_a_row("h", 120.0) == idle.PROBE_AFTER
    assert idle.learned_limit_s("h") is None
    idle.reused_ok("h", 120.0)
    assert _replaced_in_a_row("h", 250.0) == 0


def test_a_probe_that_meets_a_dead_flow_doubles_the_budget():
    """A probe that fails confirms the lesson: it is taught again and lasts twice as many
    replacements, up to MAX_PROBE_AFTER; a success past the limit brings the budget back down."""
    idle.reused_stale("h", 100.0)
    budgets = []
    for _ in range(8):
        budgets.append(_replaced_in_a_row("h", 120.0))
        idle.reused_stale("h", 120.0)  # the probe met the dead flow
    assert budgets == [min(idle.PROBE_AFTER * 2 ** n, idle.MAX_PROBE_AFTER) for n in range(8)]
    idle.reused_ok("h", 120.0)  # the path held as long as the failing idle: the failure is history
    idle.reused_stale("h", 100.0)
    assert _replaced_in_a_row("h", 120.0) == idle.PROBE_AFTER


def test_table_bounded_oldest_host_dropped():
    """More hosts than MAX_HOSTS: the table keeps MAX_HOSTS, dropping the host entered first."""
    for n in range(idle.MAX_HOSTS + 10):
        idle.reused_stale("host-%d" % n, 100.0)
    assert len(idle._hosts) == idle.MAX_HOSTS
    assert idle.learned_limit_s("host-0") is None
    assert idle.learned_limit_s("host-%d" % (idle.MAX_HOSTS + 9)) == pytest.approx(80.0)


def test_request_acknowledged_by_a_live_peer_on_a_real_socket():
    """A request the peer's kernel acknowledged (a slow server: it read it and did not answer):
    not unacknowledged; a closed socket: unknown (None)."""
    import time

    with loopback_pair() as (client, server):
        client.sendall(b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        server.recv(1024)
        deadline = time.monotonic() + 5
        while idle.request_unacknowledged(client) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert idle.request_unacknowledged(client) is False
    assert idle.request_unacknowledged(client) is None


def test_send_queued_behind_a_live_peers_closed_window_is_acknowledged():
    """A live server that stopped reading a large body: its window closes, the rest of the request
    waits in the send queue (tcpi_notsent_bytes > 0) and the send times out.  Its kernel
    acknowledged what it received during the request, so for a request that started before that,
    the request is not unacknowledged: no dead flow (before: counted, and a limit learned).  With
    no time given (the kernel's queue alone), it still looks unacknowledged."""
    import time

    with loopback_pair() as (client, server):
        server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        started = time.monotonic()
        client.setblocking(False)
        sent = 0
        try:
            while sent < 64 << 20:
                sent += client.send(b"x" * 65536)
        except BlockingIOError:
            pass
        time.sleep(0.3)  # the send queue stays full: the server reads nothing
        elapsed_s = time.monotonic() - started
        assert idle.request_unacknowledged(client) is True
        assert idle.request_unacknowledged(client, elapsed_s) is False


DROPPED_REQUEST = """
import socket, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from aws_keepalive import idle
listener = socket.create_server(("127.0.0.1", 0))
port = listener.getsockname()[1]
client = socket.create_connection(("127.0.0.1", port))
server, _ = listener.accept()
client.sendall(b"GET / HTTP/1.1\\r\\n\\r\\n")
server.recv(100)
server.sendall(b"HTTP/1.1 200 OK\\r\\n\\r\\n")
client.recv(100)
time.sleep(0.3)
subprocess.run([sys.argv[2], "add table inet t; add chain inet t c { type filter hook input priority 0; }; "
                "add rule inet t c tcp dport %d drop" % port], check=True)
started = time.monotonic()
client.sendall(b"POST / HTTP/1.1\\r\\nContent-Length: 0\\r\\n\\r\\n")
time.sleep(0.8)
print(idle.request_unacknowledged(client, time.monotonic() - started))
"""


def test_request_a_middlebox_dropped_stays_unacknowledged_in_a_network_namespace():
    """The silent middlebox, on a real kernel (a network namespace of its own, nft dropping the
    flow after its first exchange): the request is retransmitted and nothing is acknowledged
    during it, so it is a dead flow even with the request's elapsed time given."""
    import os
    import shutil
    import subprocess
    import sys

    from conftest import LAYER

    nft = shutil.which("nft") or "/usr/sbin/nft"
    if os.geteuid() != 0 or not shutil.which("unshare") or not os.path.exists(nft):
        pytest.skip("needs root, unshare and nft")
    command = "ip link set lo up && exec %s -c '%s' %s %s" % (
        sys.executable, DROPPED_REQUEST.replace("'", "'\\''"), LAYER, nft)
    completed = subprocess.run(["unshare", "-n", "sh", "-c", command], capture_output=True,
                               text=True, timeout=30)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "True", completed


def test_limit_never_above_max_idle_and_max_idle_wins():
    """A learned limit above max idle changes nothing: max idle replaces first, reason max idle."""
    idle.reused_stale("h", 1000.0)
    assert idle.replace_reason(_stamp_idle(310), None, 300, "h")[0] == idle.MAX_IDLE
    assert idle.replace_reason(_stamp_idle(290), None, 300, "h")[0] is None


def test_shorter_failures_lower_the_limit_longer_ones_do_not_raise_it():
    """The limit converges from above: the shortest failing idle counts."""
    idle.reused_stale("h", 200.0)
    idle.reused_stale("h", 100.0)
    idle.reused_stale("h", 250.0)
    assert idle.learned_limit_s("h") == pytest.approx(80.0)


def test_learning_off_and_max_idle_off_learn_nothing(monkeypatch):
    """AWS_PYTHON_KEEPALIVE_LEARN=0 (idle.learn False) or max idle 0: no learned replacement."""
    idle.reused_stale("h", 10.0)
    assert idle.replace_reason(_stamp_idle(20), None, 0, "h")[0] is None
    monkeypatch.setattr(idle, "learn", False)
    assert idle.replace_reason(_stamp_idle(20), None, 300, "h")[0] is None
    assert idle.reused_stale("h", 10.0) is None


def test_wall_clock_counts_when_monotonic_missed_a_freeze():
    """A stamp whose monotonic clock did not advance through a freeze still shows the wall-clock
    idle time, so the learned limit applies."""
    idle.reused_stale("h", 5.0)
    monotonic, wall, generation = idle.stamp()
    assert idle.replace_reason((monotonic, wall - 10, generation), None, 300, "h")[0] == idle.LEARNED_IDLE


def test_threads_updating_one_host_keep_the_extremes():
    """Concurrent successes and failures: the longest success and the shortest failure survive."""
    def work(offset):
        for i in range(2000):
            idle.reused_ok("h", float(i % 50 + offset))
            idle.reused_stale("h", float(100 + (i + offset) % 300))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    state = idle._hosts["h"]
    assert (state.longest_ok_s, state.shortest_stale_s) == (56.0, 100.0)
