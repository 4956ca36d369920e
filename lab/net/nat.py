"""A NAT idle timeout from the real kernel: conntrack + nftables in a network namespace.

AWS NAT gateways (and NLBs, VPC endpoints) forget a TCP flow after 350 s without a packet and
answer the flow's next packet from inside with a RST; other middleboxes drop it silently. Whether
TCP keep-alive probes prevent that is a question about real kernels, so this module does not
emulate it in user space: it builds the situation from Linux's own connection tracking.

Topology (``NatNamespace``)::

    root namespace                         namespace <name> ("the function's network")
    host_address (10.231.N.1/30) <--veth--> ns_address (10.231.N.2/30)
    Netem / TLS front / servers             the function process (or a socket made in there)

Inside the namespace (per-namespace sysctls, so the host is untouched):

* ``net.netfilter.nf_conntrack_tcp_timeout_established = timeout``: an established flow with no
  packet in either direction for ``timeout`` seconds is forgotten (the scaled-down 350 s).
* ``net.netfilter.nf_conntrack_tcp_loose = 0``: conntrack does not pick up a flow in the middle,
  so the next packet of a forgotten flow is classified ``ct state invalid`` instead of silently
  starting a new entry (the default, loose=1, would make every flow immortal).
* nftables, table ``inet lab``:
  - ``output``: ``oifname VETH ct state invalid reject with tcp reset`` (``mode="reset"``, what AWS
    documents for NAT gateways) or ``... drop`` (``mode="drop"``: the silent middlebox, the 60 s
    hang), or nothing (``mode="off"``). The reset is generated towards the local socket and comes
    back in through ``lo``; the rules match only the veth so they never touch it (dropping it
    would turn the reset variant into the drop variant).
  - ``input``: ``iifname VETH ct state invalid drop``: packets from the far side of a forgotten
    flow do not reach the function either (a NAT has no mapping for them).
  - ``freeze_out``/``freeze_in`` at priority -300, i.e. *before* conntrack (-200): empty, unless
    ``freeze()`` is active, when they drop everything on the veth. That models a frozen Lambda
    environment from which no packet leaves: a dropped probe must not refresh the flow, so it has
    to be dropped before conntrack sees it.

Every packet conntrack sees on a flow (either direction, keep-alive probes and their ACKs
included) restarts the flow's timeout; ``flows()`` shows the remaining seconds.

Running code in the namespace:

* ``command(argv)`` -> ``["ip", "netns", "exec", name, *argv]``: a prefix for any launcher;
  ``popen(argv, **kw)`` starts it and remembers the process so ``delete()`` stops it by pid.
* ``socket(...)`` / ``create_connection(...)``: a socket made inside the namespace from this
  process. A socket belongs to the namespace of the thread that created it, and setns(2) with
  CLONE_NEWNET changes only the calling thread, so a short-lived helper thread enters the
  namespace, makes the socket and exits; the socket then works from any thread.
  ``call(fn, ...)`` runs any function that way (e.g. one that opens a botocore connection).

Names are unique (``akl-<pid>-<n>``, veths ``aklNh``/``aklNn`` with N claimed atomically by
``ip link add``); ``delete()`` removes the namespace (which destroys both veth ends). Namespaces
left behind by a killed run whose pid is gone are removed at the next ``create()``.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import itertools
import os
import re
import signal
import socket as _socket
import subprocess
import threading
import time
from typing import Any, Callable, Optional

from lab.net import process

PREFIX = "akl"
SUBNET = "10.231.{n}.{host}"
MODES = ("reset", "drop", "off")
CMD_TIMEOUT = 15.0
CLONE_NEWNET = 0x40000000
_counter = itertools.count()
_claim_lock = threading.Lock()
# Namespaces this process created and has not deleted yet: deleted at interpreter exit too, so a
# Ctrl-C that skips a `with` block's exit (e.g. in a daemon thread) leaves nothing behind.
_live: "set[NatNamespace]" = set()


@atexit.register
def _delete_live() -> None:
    for nat in list(_live):
        nat.delete()


class NamespaceError(RuntimeError):
    pass


def _run(argv: list[str], *, input: Optional[str] = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=CMD_TIMEOUT)
    if check and proc.returncode != 0:
        raise NamespaceError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def missing_tools() -> list[str]:
    """Commands the NAT needs that are not installed (``make lab-deps`` installs them)."""
    import shutil

    return [t for t in ("ip", "nft", "conntrack") if shutil.which(t) is None]


def unavailable_reason() -> Optional[str]:
    """Why a namespace cannot be made here (None if it can): not root, tools missing, or the
    kernel refuses (e.g. inside an unprivileged container). Creates and deletes a probe."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    missing = missing_tools()
    if missing:
        return f"missing commands: {', '.join(missing)} (run `make lab-deps`)"
    try:
        with NatNamespace(timeout=5):
            pass
    except Exception as e:  # noqa: BLE001 - any failure means "not here"
        return f"cannot create a NAT namespace: {e}"
    return None


def cleanup_stale() -> list[str]:
    """Delete namespaces named ``akl-<pid>-<n>`` whose creating process no longer exists."""
    removed = []
    out = _run(["ip", "netns", "list"], check=False).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(rf"{PREFIX}-(\d+)-\d+", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            _run(["ip", "netns", "del", name], check=False)
            removed.append(name)
    return removed


def _setns(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if hasattr(os, "setns"):  # Python 3.12+
            os.setns(fd, CLONE_NEWNET)
        else:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.setns(fd, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err))
    finally:
        os.close(fd)


class NatNamespace:
    """``with NatNamespace(timeout=2, mode="reset") as nat: nat.host_address, nat.popen([...])``."""

    def __init__(self, *, timeout: int = 20, mode: str = "reset") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if int(timeout) != timeout or timeout < 1:
            raise ValueError("conntrack timeouts are whole seconds >= 1")
        self.timeout = int(timeout)
        self.mode = mode
        self.name: Optional[str] = None
        self.index: Optional[int] = None
        self.host_veth = self.ns_veth = ""
        self.host_address = self.ns_address = ""
        self.frozen = False
        self._procs: list[subprocess.Popen] = []

    # --- lifecycle -----------------------------------------------------------------------------
    def create(self) -> "NatNamespace":
        cleanup_stale()
        self.name = f"{PREFIX}-{os.getpid()}-{next(_counter)}"
        _run(["ip", "netns", "add", self.name])
        _live.add(self)
        try:
            self._claim_veth()
            ns = ["ip", "-n", self.name]
            _run(["ip", "addr", "add", f"{self.host_address}/30", "dev", self.host_veth])
            _run(["ip", "link", "set", self.host_veth, "up"])
            _run(ns + ["addr", "add", f"{self.ns_address}/30", "dev", self.ns_veth])
            _run(ns + ["link", "set", self.ns_veth, "up"])
            _run(ns + ["link", "set", "lo", "up"])
            # The nft table first: its ct expressions register conntrack in this namespace, which
            # makes the nf_conntrack sysctls appear there.
            self._nft(self._ruleset())
            self.set_timeout(self.timeout)
            self._sysctl("net.netfilter.nf_conntrack_tcp_loose", 0)
        except BaseException:
            self.delete()
            raise
        return self

    def _claim_veth(self) -> None:
        # `ip link add` fails with EEXIST if the name is taken (another run, or a leftover), so
        # the first index that succeeds is ours; its /30 is then ours too.
        start = os.getpid() % 250
        with _claim_lock:
            for i in range(250):
                n = (start + i) % 250
                host, peer = f"{PREFIX}{n}h", f"{PREFIX}{n}n"
                proc = _run(["ip", "link", "add", host, "type", "veth", "peer", "name", peer,
                             "netns", self.name], check=False)
                if proc.returncode == 0:
                    self.index, self.host_veth, self.ns_veth = n, host, peer
                    self.host_address = SUBNET.format(n=n, host=1)
                    self.ns_address = SUBNET.format(n=n, host=2)
                    return
                if "exists" not in proc.stderr:
                    raise NamespaceError(f"ip link add {host}: {proc.stderr.strip()}")
        raise NamespaceError("no free veth index (250 lab namespaces exist?)")

    def delete(self) -> None:
        """Stop processes started with ``popen`` (by pid), delete the namespace and veth."""
        for proc in self._procs:
            process.stop(proc)
        self._procs.clear()
        if self.name:
            _run(["ip", "netns", "del", self.name], check=False)
        if self.host_veth:
            _run(["ip", "link", "del", self.host_veth], check=False)
        self.name = None
        _live.discard(self)

    def __enter__(self) -> "NatNamespace":
        return self.create()

    def __exit__(self, *exc) -> None:
        self.delete()

    # --- configuration -------------------------------------------------------------------------
    def _sysctl(self, key: str, value: Any) -> None:
        _run(["ip", "netns", "exec", self.name, "sysctl", "-q", "-w", f"{key}={value}"])

    def set_timeout(self, seconds: int) -> None:
        """The NAT idle timeout. Applies to a flow from its next packet on (conntrack re-arms
        an entry's timer with the current value at every packet)."""
        self.timeout = int(seconds)
        self._sysctl("net.netfilter.nf_conntrack_tcp_timeout_established", self.timeout)

    def _nft(self, script: str) -> None:
        _run(["ip", "netns", "exec", self.name, "nft", "-f", "-"], input=script)

    def _expired_rule(self) -> str:
        return {
            "reset": f'oifname "{self.ns_veth}" ct state invalid reject with tcp reset',
            "drop": f'oifname "{self.ns_veth}" ct state invalid drop',
            "off": "",
        }[self.mode]

    def _ruleset(self) -> str:
        return f"""
table inet lab {{
  chain output {{
    type filter hook output priority 0; policy accept;
    {self._expired_rule()}
  }}
  chain input {{
    type filter hook input priority 0; policy accept;
    iifname "{self.ns_veth}" ct state invalid drop
  }}
  chain freeze_out {{
    type filter hook output priority -300; policy accept;
  }}
  chain freeze_in {{
    type filter hook prerouting priority -300; policy accept;
  }}
}}
"""

    def set_mode(self, mode: str) -> None:
        """What a packet of an expired flow meets: ``reset``, ``drop`` or nothing (``off``)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode = mode
        rule = self._expired_rule()
        self._nft("flush chain inet lab output\n" + (f"add rule inet lab output {rule}\n" if rule else ""))

    def freeze(self) -> None:
        """From now on no packet leaves or enters through the veth, and conntrack sees none."""
        self._nft(
            f'add rule inet lab freeze_out oifname "{self.ns_veth}" drop\n'
            f'add rule inet lab freeze_in iifname "{self.ns_veth}" drop\n'
        )
        self.frozen = True

    def thaw(self) -> None:
        self._nft("flush chain inet lab freeze_out\nflush chain inet lab freeze_in\n")
        self.frozen = False

    @contextlib.contextmanager
    def frozen_while(self, enabled: bool = True):
        """``freeze()`` for the body of a ``with`` (when ``enabled``), thawed even if it raises."""
        if not enabled:
            yield
            return
        self.freeze()
        try:
            yield
        finally:
            self.thaw()

    def forget_flows(self) -> None:
        """Forget every tracked flow now (``conntrack -F`` in the namespace), as a restore from a
        snapshot does: the restored environment's network path has never seen those flows, so
        their next packet meets the ``mode`` rule (a reset, or silence). Checked: raises if a flow
        through the veth is still tracked after a few bounded attempts."""
        left = []
        for _ in range(5):
            _run(["ip", "netns", "exec", self.name, "conntrack", "-F"], check=False)
            left = [f for f in self.flows() if self.host_address in (f["src"], f["dst"])]
            if not left:
                return
            time.sleep(0.05)
        raise RuntimeError(f"conntrack still tracks {left} in {self.name}")

    # --- observing ----------------------------------------------------------------------------
    def flows(self) -> list[dict]:
        """conntrack's TCP entries in the namespace: state, seconds left, addresses, ports."""
        out = _run(["ip", "netns", "exec", self.name, "conntrack", "-L", "-p", "tcp"], check=False).stdout
        flows = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 5 or parts[0] != "tcp":
                continue
            kv = {}
            for p in parts[4:]:
                if "=" in p:
                    k, v = p.split("=", 1)
                    kv.setdefault(k, v)  # the first (original-direction) tuple
            flows.append({
                "state": parts[3], "timeout": int(parts[2]),
                "src": kv.get("src"), "dst": kv.get("dst"),
                "sport": int(kv.get("sport", 0)), "dport": int(kv.get("dport", 0)),
            })
        return flows

    def flow(self, sock: _socket.socket) -> Optional[dict]:
        """The conntrack entry of a socket made in the namespace (None once it is forgotten)."""
        sport = sock.getsockname()[1]
        dst, dport = sock.getpeername()[:2]
        for f in self.flows():
            if f["sport"] == sport and f["dport"] == dport and f["dst"] == dst:
                return f
        return None

    # --- running code in the namespace ---------------------------------------------------------
    def command(self, argv: list[str]) -> list[str]:
        """``argv`` prefixed so that it runs in the namespace."""
        assert self.name, "create() first"
        return ["ip", "netns", "exec", self.name, *argv]

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        """Start ``argv`` in the namespace; ``delete()`` stops it by pid if still running.

        Note: ``ip netns exec`` execs the command (same pid), so ``proc.pid`` is the command's pid
        and SIGSTOP/SIGCONT on it freeze the process itself."""
        proc = subprocess.Popen(self.command(argv), **kwargs)
        self._procs.append(proc)
        return proc

    def call(self, fn: Callable[..., Any], *args, timeout: float = 60.0, **kwargs) -> Any:
        """Run ``fn(*args, **kwargs)`` in a fresh thread inside the namespace; return its result."""
        assert self.name, "create() first"
        result: dict = {}

        def target() -> None:
            try:
                _setns(f"/run/netns/{self.name}")
                result["value"] = fn(*args, **kwargs)
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                result["error"] = e

        t = threading.Thread(target=target, name=f"in-{self.name}", daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive():
            raise TimeoutError(f"function in namespace {self.name} still running after {timeout} s")
        if "error" in result:
            raise result["error"]
        return result["value"]

    def socket(self, family: int = _socket.AF_INET, type: int = _socket.SOCK_STREAM) -> _socket.socket:
        """A socket that lives in the namespace."""
        return self.call(_socket.socket, family, type)

    def create_connection(self, address: tuple[str, int], timeout: Optional[float] = 5.0,
                          options: tuple = ()) -> _socket.socket:
        """A TCP connection from inside the namespace; ``options`` are (level, name, value)
        setsockopt triples applied before connecting (e.g. keep-alive timers)."""

        def connect() -> _socket.socket:
            s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            try:
                for level, name, value in options:
                    s.setsockopt(level, name, value)
                s.settimeout(timeout)
                s.connect(address)
                return s
            except BaseException:
                s.close()
                raise

        return self.call(connect, timeout=(timeout or 30) + 5)


def keepalive_options(idle: int, interval: int, count: int = 3) -> tuple:
    """setsockopt triples for SO_KEEPALIVE with the given TCP_KEEPIDLE/INTVL/CNT."""
    return (
        (_socket.SOL_SOCKET, _socket.SO_KEEPALIVE, 1),
        (_socket.IPPROTO_TCP, _socket.TCP_KEEPIDLE, int(idle)),
        (_socket.IPPROTO_TCP, _socket.TCP_KEEPINTVL, int(interval)),
        (_socket.IPPROTO_TCP, _socket.TCP_KEEPCNT, int(count)),
    )


def signal_process(proc: subprocess.Popen, sig: int = signal.SIGSTOP) -> None:
    """Send ``sig`` to a process started with ``popen`` (SIGSTOP/SIGCONT model a frozen function)."""
    if proc.poll() is None:
        os.kill(proc.pid, sig)
