"""A threaded TCP echo server: the simplest real peer for the lab's socket-level tests.

Each connection gets a thread that sends back whatever it reads until EOF or an error. ``stop()``
closes the listener and every open connection (so blocked threads wake up) and joins the threads
with a bound.
"""

from __future__ import annotations

import socket
import threading


class EchoServer:
    """``with EchoServer("127.0.0.1") as echo: echo.address``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self.accepted = 0
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    @property
    def address(self) -> tuple[str, int]:
        return (self.host, self.port)

    def start(self) -> "EchoServer":
        self._listener = socket.create_server((self.host, self.port))
        self.port = self._listener.getsockname()[1]
        self._spawn(self._accept_loop, self._listener)
        return self

    def _spawn(self, fn, *args) -> None:
        t = threading.Thread(target=fn, args=args, daemon=True, name="echo")
        self._threads.append(t)
        t.start()

    def _accept_loop(self, listener: socket.socket) -> None:
        # The listener is passed in: stop() sets self._listener to None, maybe before this thread runs.
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                self._conns.add(conn)
            self._spawn(self._echo, conn)

    def _echo(self, conn: socket.socket) -> None:
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                conn.sendall(data)
        except OSError:
            return
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def stop(self, timeout: float = 5.0) -> None:
        if self._listener is not None:
            # shutdown() wakes a thread blocked in accept(); close() alone may not.
            try:
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in self._threads:
            t.join(timeout)
        self._threads.clear()

    def __enter__(self) -> "EchoServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
