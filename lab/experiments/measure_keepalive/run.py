"""Measure how TCP keep-alive timers must relate to a NAT idle timeout (issue 4, item 6).

    sudo .venv/test-3.12/bin/python -m lab.experiments.measure_keepalive.run [--timeout 4] [--gap 9] [--no-botocore]

Every scenario gets its own ``lab.net.nat.NatNamespace`` (its own conntrack table, idle timeout T)
and its own peer in the root namespace, so all scenarios of a phase run at the same time and the
whole run takes about two gaps plus DynamoDB Local's start. Timers are whole seconds (the kernel's
unit), so T is scaled to a few seconds, not to the 350 s of AWS NAT gateways; the relations carry
over, the absolute numbers do not.

A scenario: connect from inside the namespace (optionally with SO_KEEPALIVE + TCP_KEEPIDLE/INTVL/
CNT), exchange one message, then stay idle for ``gap`` seconds in one of three ways:

* ``idle``   the process simply does not use the connection (a warm Lambda between invocations
             whose kernel keeps running; also what SIGSTOP gives, see ``sigstop``);
* ``sigstop`` the connection belongs to a child process that is SIGSTOPped for the gap (freeze
             model (a): the process is stopped, the kernel still probes);
* ``freeze`` nftables drops every packet on the namespace's veth for the gap, before conntrack
             sees it (freeze model (b): no packet leaves or enters a frozen environment).

During the gap the TCP state (``TCP_INFO``) is sampled every 0.25 s to see whether and when the
kernel closed the socket itself (a probe answered by the NAT's reset, or CNT unanswered probes).
After the gap: ``last_ack_recv`` (ms since the last ACK, offset 56 of struct tcp_info), unanswered
probes, whether conntrack still has the flow, and what the next use meets:

Columns ``idle>=M`` and ``ack>=M`` apply two replacement rules (M = T - 1) to each row: replace
the pooled connection when it was unused for M (wall clock), or when its last ACK is M old
(TCP_INFO); ``!`` marks a reuse that meets a reset or a hang. The summary counts, per rule, the
errors let through and the healthy connections replaced needlessly.

    ok            the echo came back over the same connection
    reset         ECONNRESET on use (the NAT answered the stale flow with a RST)
    hang          no answer within the 1 s read timeout (silent drop)
    closed:<err>  the kernel had already closed the socket during the gap (err = the socket's
                  pending error); urllib3 sees such a socket as dropped *before* reusing it and
                  opens a new one, so the application meets no error, only a new handshake.

A second phase runs plain botocore (the layer is not used) against DynamoDB Local over TLS,
through ``lab.net.netem`` (2 ms RTT) from inside the namespace, and reports botocore's RetryAttempts
and the call's latency after the gap.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

from lab.net import tcpinfo
from lab.net.echo import EchoServer
from lab.net.nat import NatNamespace, keepalive_options


@dataclass
class Scenario:
    name: str
    mode: str = "reset"  # NAT: reset | drop
    timers: Optional[tuple] = None  # (IDLE, INTVL, CNT) or None = no keep-alive
    how: str = "idle"  # idle | sigstop | freeze
    gap: Optional[float] = None  # default: --gap
    settle: float = 0.0  # idle seconds (probes running, nothing frozen) before the gap starts
    result: dict = field(default_factory=dict)


def _timers(s: Scenario) -> str:
    return "-" if s.timers is None else "%d/%d/%d" % s.timers


# --- raw socket scenarios --------------------------------------------------------------------------
def _use(sock: socket.socket) -> str:
    info = tcpinfo.tcp_info(sock)
    if info["state"] != tcpinfo.TCP_ESTABLISHED:
        err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        return "closed:" + (errno.errorcode.get(err, str(err)) if err else "EOF")
    sock.settimeout(1.0)
    try:
        sock.sendall(b"again")
        data = sock.recv(16)
        return "ok" if data == b"again" else f"eof({data!r})"
    except ConnectionResetError:
        return "reset"
    except (TimeoutError, socket.timeout):
        return "hang"
    except OSError as e:
        return f"error:{errno.errorcode.get(e.errno, e.errno)}"


def _watch(sock: socket.socket, stop: threading.Event, t0: float, out: dict) -> None:
    while not stop.wait(0.25):
        try:
            state = tcpinfo.tcp_info(sock)["state"]
        except OSError:
            return
        if state != tcpinfo.TCP_ESTABLISHED and "died_at" not in out:
            out["died_at"] = round(time.monotonic() - t0, 2)


def run_socket(s: Scenario, T: int, gap: float) -> None:
    gap = s.gap or gap
    with NatNamespace(timeout=T, mode=s.mode) as nat, EchoServer(nat.host_address) as echo:
        opts = keepalive_options(*s.timers) if s.timers else ()
        if s.how == "sigstop":
            return _run_sigstop(s, nat, echo, opts, gap)
        sock = nat.create_connection(echo.address, timeout=2, options=opts)
        with sock:
            sock.sendall(b"x")
            assert sock.recv(1) == b"x"
            time.sleep(s.settle)
            stop = threading.Event()
            t0 = time.monotonic()
            watcher = threading.Thread(target=_watch, args=(sock, stop, t0, s.result), daemon=True)
            watcher.start()
            try:
                with nat.frozen_while(s.how == "freeze"):
                    time.sleep(gap)
            finally:
                stop.set()
                watcher.join(2)
            info = tcpinfo.tcp_info(sock)
            s.result.update(
                last_ack_ms=info["last_ack_recv_ms"],
                probes=info["probes"],
                flow=nat.flow(sock) is not None if info["state"] == tcpinfo.TCP_ESTABLISHED else None,
                outcome=_use(sock),
            )


_CHILD = r"""
import socket, struct, sys
host, port, timers = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((host, port), timeout=5)
if timers != "-":
    idle, intvl, cnt = map(int, timers.split("/"))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, idle)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, intvl)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, cnt)
s.settimeout(1.0)
for line in sys.stdin:
    raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    state, probes = raw[0], raw[3]
    last_ack = struct.unpack_from("I", raw, 56)[0]
    try:
        s.sendall(b"x")
        out = "ok" if s.recv(1) == b"x" else "eof"
    except ConnectionResetError:
        out = "reset"
    except socket.timeout:
        out = "hang"
    except OSError as e:
        out = "error:%s" % e.errno
    print(out, state, probes, last_ack, flush=True)
"""


def _run_sigstop(s: Scenario, nat: NatNamespace, echo: EchoServer, opts, gap: float) -> None:
    proc = nat.popen([sys.executable, "-c", _CHILD, echo.host, str(echo.port), _timers(s)],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("go\n")
        proc.stdin.flush()
        first = proc.stdout.readline().split()
        assert first and first[0] == "ok", first
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            time.sleep(gap)
            flows = nat.flows()
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        outcome, state, probes, last_ack = proc.stdout.readline().split()
        s.result.update(outcome=outcome if state == "1" else f"closed:state{state}",
                        probes=int(probes), last_ack_ms=int(last_ack), flow=bool(flows))
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def socket_scenarios(T: int) -> list[Scenario]:
    below = max(1, T - 1)  # the largest whole-second timer strictly below T
    return [
        Scenario("no keep-alive", timers=None),
        Scenario("IDLE,INTVL << T", timers=(1, 1, 3)),
        Scenario("IDLE,INTVL = T-1", timers=(below, below, 3)),
        Scenario("IDLE = T", timers=(T, 1, 3)),
        Scenario("IDLE < T <= INTVL", timers=(1, T + 1, 3)),
        Scenario("IDLE > T", timers=(T + 1, 1, 3)),
        Scenario("drop: no keep-alive", mode="drop", timers=None),
        Scenario("drop: IDLE,INTVL << T", mode="drop", timers=(1, 1, 3)),
        Scenario("drop: IDLE < T <= INTVL", mode="drop", timers=(1, T + 1, 3)),
        Scenario("(a) SIGSTOP, no keep-alive", how="sigstop", timers=None),
        Scenario("(a) SIGSTOP, IDLE,INTVL << T", how="sigstop", timers=(1, 1, 3)),
        Scenario("(b) freeze, no keep-alive", how="freeze", timers=None),
        Scenario("(b) freeze, 1/1/CNT=20", how="freeze", timers=(1, 1, 20)),
        Scenario("(b) freeze, 1/1/CNT=2", how="freeze", timers=(1, 1, 2)),
        # Probes run for 2.5 s (last ACK at ~2 s), then a freeze of T: the thaw comes ~T+0.5 s after
        # the last packet, just after the NAT forgot the flow. The kernel gives up on a connection
        # max(IDLE,INTVL) + CNT*INTVL after the last ACK: with that below T the socket is already
        # closed at the thaw (no reset); above T it is still open and meets the reset.
        Scenario("(b) freeze T after probing, 1/1/2", how="freeze", timers=(1, 1, 2), settle=2.5, gap=T),
        Scenario("(b) freeze T after probing, 1/1/%d" % T, how="freeze", timers=(1, 1, T), settle=2.5,
                 gap=T),
        Scenario("(b) freeze 0.5T, 1/1/20", how="freeze", timers=(1, 1, 20), gap=0.5 * T),
        Scenario("(b) freeze 0.9T, 1/1/20", how="freeze", timers=(1, 1, 20), gap=0.9 * T),
        Scenario("(b) freeze 1.1T, 1/1/20", how="freeze", timers=(1, 1, 20), gap=1.1 * T),
        Scenario("(b) freeze 0.9T, none", how="freeze", timers=None, gap=0.9 * T),
        Scenario("(b) freeze 1.1T, none", how="freeze", timers=None, gap=1.1 * T),
    ]


def _parallel(fn, scenarios: list[Scenario], *args) -> None:
    def run(s: Scenario) -> None:
        try:
            fn(s, *args)
        except Exception as e:  # noqa: BLE001 - reported in the table
            s.result["outcome"] = f"FAILED: {type(e).__name__}: {e}"

    threads = [threading.Thread(target=run, args=(s,), daemon=True) for s in scenarios]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)


# --- conntrack evidence: the flow's remaining timeout while probes run ----------------------------
def conntrack_trace(T: int, seconds: float, timers: Optional[tuple]) -> list[tuple]:
    """(t, conntrack seconds left or None, last_ack_recv_ms) once a second for an idle connection."""
    rows = []
    with NatNamespace(timeout=T) as nat, EchoServer(nat.host_address) as echo:
        opts = keepalive_options(*timers) if timers else ()
        with nat.create_connection(echo.address, options=opts) as sock:
            sock.sendall(b"x")
            sock.recv(1)
            t0 = time.monotonic()
            while time.monotonic() - t0 < seconds:
                time.sleep(0.5)
                f = nat.flow(sock)
                rows.append((round(time.monotonic() - t0, 1), f["timeout"] if f else None,
                             tcpinfo.last_ack_recv_ms(sock)))
    return rows


# --- botocore scenarios ------------------------------------------------------------------------
@contextlib.contextmanager
def _botocore_timers(timers: Optional[tuple]):
    """Plain botocore with SO_KEEPALIVE + timers on its sockets (what the layer automates): wrap the
    one method every client's socket options pass through (see FACTS.md)."""
    import botocore.args

    original = botocore.args.ClientArgsCreator._compute_socket_options

    def patched(self, *a, **kw):
        opts = list(original(self, *a, **kw))
        if timers:
            opts += [o for o in keepalive_options(*timers)]
        return opts

    botocore.args.ClientArgsCreator._compute_socket_options = patched
    try:
        yield
    finally:
        botocore.args.ClientArgsCreator._compute_socket_options = original


def run_botocore(scenarios: list[Scenario], T: int, gap: float) -> None:
    import boto3
    from botocore.config import Config

    from lab.services.dynamodb import DynamoDBLocal
    from lab.net.netem import Netem

    with contextlib.ExitStack() as stack:
        ddb = stack.enter_context(DynamoDBLocal())
        admin = boto3.client("dynamodb", **ddb.client_kwargs())
        admin.create_table(TableName="measure", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                           AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                           BillingMode="PAY_PER_REQUEST")
        jobs = []
        for s in scenarios:
            nat = stack.enter_context(NatNamespace(timeout=T, mode=s.mode))
            net = stack.enter_context(Netem(ddb.tls_address, rtt=0.002, listen_host=nat.host_address))
            ddb.add_hostnames(nat.host_address)
            with _botocore_timers(s.timers):
                kw = ddb.client_kwargs()
                kw["endpoint_url"] = f"https://{nat.host_address}:{net.port}"
                client = boto3.client("dynamodb", **kw, config=Config(
                    read_timeout=1, connect_timeout=2, retries={"mode": "standard", "max_attempts": 3}))
            jobs.append((s, nat, net, client))

        def put(client, key):
            t = time.perf_counter()
            meta = client.put_item(TableName="measure", Item={"pk": {"S": key}})["ResponseMetadata"]
            return (time.perf_counter() - t) * 1000, meta.get("RetryAttempts", 0)

        def one(job):
            s, nat, net, client = job
            try:
                nat.call(put, client, s.name + "-1")
                nat.call(put, client, s.name + "-2")
                with nat.frozen_while(s.how == "freeze"):
                    time.sleep(gap)
                ms, retries = nat.call(put, client, s.name + "-3", timeout=30)
                s.result.update(outcome="ok", ms=round(ms, 1), retries=retries, conns=net.accepted)
            except Exception as e:  # noqa: BLE001
                s.result["outcome"] = f"FAILED: {type(e).__name__}: {e}"[:120]

        threads = [threading.Thread(target=one, args=(j,), daemon=True) for j in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)


def botocore_scenarios(T: int) -> list[Scenario]:
    return [
        Scenario("botocore, no keep-alive", timers=None),
        Scenario("botocore, 1/1/3", timers=(1, 1, 3)),
        Scenario("botocore, drop, no keep-alive", mode="drop", timers=None),
        Scenario("botocore, drop, 1/1/3", mode="drop", timers=(1, 1, 3)),
        Scenario("botocore, (b) freeze, 1/1/20", how="freeze", timers=(1, 1, 20)),
        Scenario("botocore, (b) freeze, 1/1/2", how="freeze", timers=(1, 1, 2)),
    ]


# --- report ------------------------------------------------------------------------------------
def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--timeout", type=int, default=4, help="NAT idle timeout T in seconds (default 4)")
    p.add_argument("--gap", type=float, default=None, help="idle gap in seconds (default 2T + 1)")
    p.add_argument("--no-botocore", action="store_true", help="skip the DynamoDB Local phase")
    args = p.parse_args(argv)
    # SIGTERM -> KeyboardInterrupt, so `with` blocks and the atexit hooks of lab.net.nat / lab.services.dynamodb
    # delete namespaces and stop DynamoDB Local on `kill` as on Ctrl-C.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    T = args.timeout
    gap = args.gap or 2 * T + 1
    print(f"NAT idle timeout T = {T} s, gap = {gap} s (timers: IDLE/INTVL/CNT in s)\n")

    scenarios = socket_scenarios(T)
    _parallel(run_socket, scenarios, T, gap)
    M = T - 1  # a max-idle with a margin below T
    print(f"{'scenario':36} {'NAT':5} {'timers':8} {'gap':>5} {'died@':>6} {'flow':>5} "
          f"{'last_ack':>8} {'probes':>6}  {'next use':18} {'idle>=M':8} {'ack>=M':8}")
    tally = {"idle": [0, 0], "ack": [0, 0]}  # [errors let through, healthy connections replaced]
    for s in scenarios:
        r = s.result
        outcome = str(r.get("outcome"))
        rules = {}
        for rule, value in (("idle", s.settle + (s.gap or gap)), ("ack", r.get("last_ack_ms", 0) / 1000)):
            if outcome.startswith("closed"):
                rules[rule] = "(gone)"  # urllib3 discards a socket the kernel closed: no rule needed
                continue
            replace = value >= M
            rules[rule] = "replace" if replace else "reuse"
            if not replace and outcome in ("reset", "hang"):
                tally[rule][0] += 1
                rules[rule] += "!"
            if replace and outcome == "ok":
                tally[rule][1] += 1
        print(f"{s.name:36} {s.mode:5} {_timers(s):8} {s.gap or gap:5.1f} {str(r.get('died_at', '-')):>6} "
              f"{str(r.get('flow', '-')):>5} {str(r.get('last_ack_ms', '-')):>8} {str(r.get('probes', '-')):>6}"
              f"  {outcome:18} {rules['idle']:8} {rules['ack']:8}")
    print(f"\nreplacement rules with M = T-1 = {M} s: replace a pooled connection if")
    print(f"  idle>=M  (wall-clock idle since last use >= M): {tally['idle'][0]} resets/hangs let through, "
          f"{tally['idle'][1]} healthy connections replaced")
    print(f"  ack>=M   (TCP_INFO last_ack_recv >= M):         {tally['ack'][0]} resets/hangs let through, "
          f"{tally['ack'][1]} healthy connections replaced")

    print(f"\nconntrack seconds left / last_ack_recv ms for an idle connection (T = {T} s):")
    traces = {}
    threads = [threading.Thread(target=lambda k=k, t=t: traces.__setitem__(k, conntrack_trace(T, 2 * T, t)))
               for k, t in (("1/1/3", (1, 1, 3)), ("none", None))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for k in ("1/1/3", "none"):
        print(f"  {k:6} " + "  ".join(f"{t}s:{left if left is not None else 'gone'}/{ack}"
                                     for t, left, ack in traces.get(k, [])))

    if not args.no_botocore:
        bs = botocore_scenarios(T)
        run_botocore(bs, T, gap)
        import botocore

        print(f"\nplain botocore {botocore.__version__} via netem (2 ms RTT) + TLS + DynamoDB Local, "
              "read_timeout 1 s, standard retries; put_item after the gap:")
        print(f"{'scenario':36} {'NAT':5} {'timers':8} {'ms':>8} {'retries':>7} {'conns':>5}  outcome")
        for s in bs:
            r = s.result
            print(f"{s.name:36} {s.mode:5} {_timers(s):8} {str(r.get('ms', '-')):>8} "
                  f"{str(r.get('retries', '-')):>7} {str(r.get('conns', '-')):>5}  {r.get('outcome')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
