"""A network emulator: a TCP proxy that adds a round-trip time and can kill idle connections.

This kernel has no ``tc netem``, so latency is added in user space. The lab's chain is

    function  ->  Netem  ->  TLS front  ->  DynamoDB Local

Netem sits *in front of* the TLS front, so the function's TLS handshake crosses the emulated
network and pays its round trips, exactly as a new connection to real DynamoDB would (TCP
handshake + TLS handshake + request). Placed behind the TLS front it would only delay HTTP bytes
and make new connections look cheaper than they are, which would hide the very cost the layer
exists to avoid.

The model, with ``rtt`` in seconds:

* Opening a connection costs one RTT. The client's ``connect()`` returns at once (the proxy's
  kernel completes the handshake), so the cost is charged to the first bytes instead: nothing the
  client sends is forwarded before ``accept time + rtt``. From the client's point of view the first
  answer comes after ``rtt`` (connect) + ``rtt`` (request/response), as with a real handshake.
* Data costs ``rtt / 2`` each way. Every chunk read is stamped ``deliver_at = read time + rtt/2``
  and put on a FIFO queue for its direction; a writer task per direction sleeps until the head's
  time and writes it. Reading never waits for delivery, so a stream of chunks arrives ``rtt/2``
  late but at its original pace and in order (a bandwidth-unlimited link), instead of each chunk
  waiting for the previous one's delay, which would serialise pipelined traffic.
* FIN is forwarded like data (delayed, in order, as a half-close); a reset from one side aborts
  the other side.

Killing idle connections (``close_idle(min_idle, how)``, or automatically with
``idle_timeout=``/``idle_action=``) the three ways middleboxes do:

* ``"fin"``: both sides are closed normally; the client reads EOF.
* ``"rst"``: the client socket is closed with SO_LINGER 0, so the kernel sends a RST; the client's
  next read or write fails with ECONNRESET.
* ``"drop"``: the proxy stops forwarding and never answers: the client connection stays open and
  unread (the kernel still ACKs, as the TCP stack of a server behind a silent middlebox would
  not; for the application it looks the same: a request goes out, no response ever comes, until
  its read timeout). The upstream side is closed.

What this proxy cannot emulate: a middlebox idle timer that *kernel* keep-alive probes refresh.
Probes are answered by the proxy's own kernel and never reach user space, so ``idle_timeout``
here expires regardless of SO_KEEPALIVE. Use ``lab.net.nat`` (conntrack in a network namespace) for
that: it is the real kernel deciding.

Counters: ``accepted`` (connections accepted since start), and per connection (``connections()``)
bytes and chunks each way, open/last-activity times and how it ended.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import struct
import time
from typing import Optional

from lab.net._loop import LoopServer

CONNECT_TIMEOUT = 5.0
ACTIONS = ("fin", "rst", "drop")


@dataclasses.dataclass
class ConnStats:
    """One proxied connection. Times are ``time.monotonic()`` seconds."""

    id: int
    peer: tuple
    opened_at: float
    last_activity: float
    bytes_up: int = 0  # client -> upstream
    bytes_down: int = 0  # upstream -> client
    chunks_up: int = 0
    chunks_down: int = 0
    state: str = "open"  # open | closed | fin | rst | drop | refused
    closed_at: Optional[float] = None

    @property
    def idle(self) -> float:
        return time.monotonic() - self.last_activity


class _Conn:
    def __init__(self, stats: ConnStats, cwriter: asyncio.StreamWriter) -> None:
        self.stats = stats
        self.cwriter = cwriter
        self.uwriter: Optional[asyncio.StreamWriter] = None
        self.tasks: list[asyncio.Future] = []
        self.done = asyncio.Event()
        self.fins = 0


class Netem(LoopServer):
    """``with Netem(upstream=("127.0.0.1", 8443), rtt=0.01) as net: net.port, net.accepted``."""

    def __init__(
        self,
        upstream: tuple[str, int],
        *,
        rtt: float = 0.0,
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
        idle_timeout: Optional[float] = None,
        idle_action: str = "rst",
    ) -> None:
        if idle_action not in ACTIONS:
            raise ValueError(f"idle_action must be one of {ACTIONS}")
        super().__init__("netem", listen_host, listen_port)
        self.upstream = upstream
        self.rtt = float(rtt)
        self.idle_timeout = idle_timeout
        self.idle_action = idle_action
        self.accepted = 0
        self._conns: dict[int, _Conn] = {}
        self._stats: list[ConnStats] = []
        self._reaper: Optional[asyncio.Future] = None

    # --- lifecycle (LoopServer: start, stop, with) -----------------------------------------------
    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.listen_host, self.listen_port)
        self.port = self._server.sockets[0].getsockname()[1]
        self._reaper = asyncio.ensure_future(self._reap_idle())

    async def _stop(self) -> None:
        self._server.close()
        if self._reaper:
            self._reaper.cancel()
        for conn in list(self._conns.values()):
            self._finish(conn, "closed", abort=True)

    # --- reading counters (thread-safe snapshots) ----------------------------------------------
    def connections(self) -> list[ConnStats]:
        """Copies of every connection's counters, oldest first (open and closed)."""
        return self._loop.call(self._snapshot())

    async def _snapshot(self) -> list[ConnStats]:
        return [dataclasses.replace(s) for s in self._stats]

    def open_connections(self) -> list[ConnStats]:
        return [s for s in self.connections() if s.state == "open"]

    # --- killing idle connections --------------------------------------------------------------
    def close_idle(self, min_idle: float = 0.0, how: str = "fin") -> int:
        """Close (``fin``), reset (``rst``) or silently drop (``drop``) every open connection idle
        for at least ``min_idle`` seconds; returns how many were hit."""
        if how not in ACTIONS:
            raise ValueError(f"how must be one of {ACTIONS}")
        return self._loop.call(self._close_idle(min_idle, how))

    async def _close_idle(self, min_idle: float, how: str) -> int:
        hit = 0
        now = time.monotonic()
        for conn in list(self._conns.values()):
            if conn.stats.state == "open" and now - conn.stats.last_activity >= min_idle:
                self._finish(conn, how)
                hit += 1
        return hit

    async def _reap_idle(self) -> None:
        while True:
            timeout = self.idle_timeout
            await asyncio.sleep(min(timeout / 10, 0.25) if timeout else 0.25)
            if timeout:
                await self._close_idle(timeout, self.idle_action)

    # --- proxying ------------------------------------------------------------------------------
    async def _handle(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        now = time.monotonic()
        self.accepted += 1
        stats = ConnStats(id=self.accepted, peer=cwriter.get_extra_info("peername"), opened_at=now,
                          last_activity=now)
        self._stats.append(stats)
        conn = _Conn(stats, cwriter)
        self._conns[stats.id] = conn
        # The connection counts as established one RTT after the accept: client bytes wait for it.
        established = loop.time() + self.rtt
        try:
            ureader, uwriter = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream), CONNECT_TIMEOUT
            )
        except (OSError, asyncio.TimeoutError):
            self._finish(conn, "refused", abort=True)
            return
        if conn.done.is_set():  # killed while connecting
            uwriter.transport.abort()
            return
        conn.uwriter = uwriter
        up: asyncio.Queue = asyncio.Queue()
        down: asyncio.Queue = asyncio.Queue()
        conn.tasks = [
            asyncio.ensure_future(self._read(creader, up, conn, "up", established)),
            asyncio.ensure_future(self._write(up, uwriter, conn)),
            asyncio.ensure_future(self._read(ureader, down, conn, "down", 0.0)),
            asyncio.ensure_future(self._write(down, cwriter, conn)),
        ]
        await conn.done.wait()

    async def _read(self, reader, queue: asyncio.Queue, conn: _Conn, direction: str, hold_until: float) -> None:
        loop = asyncio.get_running_loop()
        last_at = 0.0
        try:
            while True:
                data = await reader.read(65536)
                now = loop.time()
                # max() keeps delivery times monotonic if rtt is changed while data is in flight.
                at = last_at = max(max(now, hold_until) + self.rtt / 2, last_at)
                if not data:
                    queue.put_nowait((at, None))  # the FIN travels like data
                    return
                s = conn.stats
                s.last_activity = time.monotonic()
                if direction == "up":
                    s.bytes_up += len(data)
                    s.chunks_up += 1
                else:
                    s.bytes_down += len(data)
                    s.chunks_down += 1
                queue.put_nowait((at, data))
        except OSError:
            # A reset (or error) on one side becomes a reset on the other.
            self._finish(conn, "closed", abort=True)

    async def _write(self, queue: asyncio.Queue, writer: asyncio.StreamWriter, conn: _Conn) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                at, data = await queue.get()
                delay = at - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if data is None:
                    if writer.can_write_eof():
                        writer.write_eof()
                    self._half_closed(conn)
                    return
                writer.write(data)
                await writer.drain()
        except OSError:
            self._finish(conn, "closed", abort=True)

    def _half_closed(self, conn: _Conn) -> None:
        # Both readers done (both FINs delivered) -> the connection is over.
        conn.fins += 1
        if conn.fins >= 2:
            self._finish(conn, "closed")

    def _finish(self, conn: _Conn, how: str, abort: bool = False) -> None:
        """End a connection: ``closed``/``fin`` close both sides, ``rst`` resets the client,
        ``drop`` keeps the client socket open and unanswered."""
        if conn.done.is_set():
            if how == "closed" and conn.stats.state == "drop":
                # stop(): now really close the black-holed client socket.
                conn.cwriter.transport.abort()
            return
        current = asyncio.current_task()
        for t in conn.tasks:
            if t is not current:
                t.cancel()
        s = conn.stats
        s.state = how
        s.closed_at = time.monotonic()
        if how == "rst":
            _reset(conn.cwriter)
        elif how == "drop":
            conn.cwriter.transport.pause_reading()
        elif abort:
            conn.cwriter.transport.abort()
        else:
            conn.cwriter.close()
        if conn.uwriter is not None:
            if abort:
                conn.uwriter.transport.abort()
            else:
                conn.uwriter.close()
        if how != "drop":
            self._conns.pop(s.id, None)
        conn.done.set()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with SO_LINGER {on, 0}: the kernel discards unsent data and sends a RST."""
    sock = writer.get_extra_info("socket")
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    writer.transport.abort()
