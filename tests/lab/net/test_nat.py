"""The kernel NAT: real conntrack + nftables in a namespace, real sockets, scaled-down timeouts.

T (the NAT idle timeout) is 2 s here; gaps are 3.5 s. Keep-alive timers are whole seconds.
"""

import signal
import subprocess
import sys
import time

import pytest

from lab.net.echo import EchoServer
from lab.net.nat import NatNamespace, keepalive_options, signal_process
from lab.net import tcpinfo

T = 2
GAP = 3.5

pytestmark = pytest.mark.usefixtures("nat_available")


@pytest.fixture
def nat():
    with NatNamespace(timeout=T, mode="reset") as n:
        yield n


@pytest.fixture
def echo(nat):
    with EchoServer(nat.host_address) as server:
        yield server


def _roundtrip(s, data=b"x"):
    s.sendall(data)
    return s.recv(len(data))


def test_commands_run_inside_the_namespace(nat):
    """popen() runs a process in the namespace: it sees only the namespace's address, same pid."""
    proc = nat.popen([sys.executable, "-c", "import os,socket,subprocess;print(os.getpid());"
                      "print(subprocess.run(['ip','-o','-4','addr'],capture_output=True,text=True).stdout)"],
                     stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=20)
    pid, addrs = out.split("\n", 1)
    assert int(pid) == proc.pid  # ip netns exec execs: SIGSTOP on proc.pid stops the function itself
    assert nat.ns_address in addrs and nat.host_address not in addrs


def test_flow_is_tracked_with_the_configured_timeout(nat, echo):
    """conntrack tracks the namespace's connection as ESTABLISHED with at most T seconds left."""
    with nat.create_connection(echo.address) as s:
        assert _roundtrip(s) == b"x"
        flow = nat.flow(s)
        assert flow["state"] == "ESTABLISHED" and 0 <= flow["timeout"] <= T


def test_without_probes_next_use_after_timeout_is_reset(nat, echo):
    """No keep-alive, gap > T: conntrack forgot the flow and the next send meets a TCP reset."""
    with nat.create_connection(echo.address) as s:
        assert _roundtrip(s) == b"x"
        time.sleep(GAP)
        assert nat.flow(s) is None
        with pytest.raises(ConnectionResetError):
            _roundtrip(s)


def test_probes_before_timeout_keep_the_flow_alive(nat, echo):
    """SO_KEEPALIVE with IDLE=INTVL=1 s < T: probes refresh conntrack, the connection works after the gap."""
    with nat.create_connection(echo.address, options=keepalive_options(1, 1, 3)) as s:
        assert _roundtrip(s) == b"x"
        time.sleep(GAP)
        assert nat.flow(s) is not None
        assert tcpinfo.last_ack_recv_ms(s) < 1500  # probe ACKs got through the NAT
        assert _roundtrip(s, b"again") == b"again"


def test_silent_drop_variant_hangs_instead_of_resetting(nat, echo):
    """mode=drop: after the timeout the request vanishes; the client only sees its read timeout."""
    nat.set_mode("drop")
    with nat.create_connection(echo.address, timeout=0.5) as s:
        assert _roundtrip(s) == b"x"
        time.sleep(GAP)
        with pytest.raises(TimeoutError):
            _roundtrip(s)


def test_freeze_drops_probes_before_conntrack_sees_them(nat, echo):
    """freeze(): no packet leaves, so even probing connections lose their flow across a gap > T."""
    with nat.create_connection(echo.address, options=keepalive_options(1, 1, 9)) as s:
        assert _roundtrip(s) == b"x"
        nat.freeze()
        try:
            time.sleep(GAP)
            assert nat.flow(s) is None
            assert tcpinfo.tcp_info(s)["probes"] >= 1  # the kernel did probe; nobody answered
        finally:
            nat.thaw()
        with pytest.raises(ConnectionResetError):
            _roundtrip(s)


def test_stopped_process_keeps_its_flow_alive_through_kernel_probes(nat, echo):
    """A SIGSTOPped process's socket is still probed by the kernel: its flow survives a gap > T."""
    code = (
        "import socket,sys\n"
        "s=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=5)\n"
        "s.setsockopt(socket.SOL_SOCKET,socket.SO_KEEPALIVE,1)\n"
        "s.setsockopt(socket.IPPROTO_TCP,socket.TCP_KEEPIDLE,1)\n"
        "s.setsockopt(socket.IPPROTO_TCP,socket.TCP_KEEPINTVL,1)\n"
        "for line in sys.stdin:\n"
        "    s.sendall(b'x'); print(s.recv(1).decode(), flush=True)\n"
    )
    proc = nat.popen([sys.executable, "-c", code, echo.host, str(echo.port)],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "x"
        signal_process(proc, signal.SIGSTOP)
        time.sleep(GAP)
        assert len(nat.flows()) == 1
        signal_process(proc, signal.SIGCONT)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "x"
    finally:
        proc.stdin.close()
        proc.wait(10)


def test_delete_removes_namespace_and_veth():
    """Leaving the context deletes the namespace and both veth ends."""
    with NatNamespace(timeout=T) as n:
        name, veth = n.name, n.host_veth
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert subprocess.run(["ip", "link", "show", veth], capture_output=True).returncode != 0
