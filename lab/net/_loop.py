"""An asyncio event loop running in a background thread, for the lab's proxies.

The TLS front and the network emulator are asyncio servers so that one thread can serve every
connection, and so that TLS reads and writes on one connection never run concurrently from two
threads (an ``ssl.SSLSocket`` shared by a reader and a writer thread is not safe). The tests and
the demo, however, are ordinary blocking code. This class bridges the two: ``start()`` spins up a
loop in a daemon thread, ``call(coro)`` runs a coroutine there and waits (bounded) for its result,
and ``stop()`` cancels whatever is still running and joins the thread (bounded). ``LoopServer``
is the lifecycle both proxies share: an asyncio server on a loop thread of its own, started and
stopped by blocking calls, and a context manager.

Errors that asyncio would print to stderr from callbacks nobody awaits (a client that aborts a TLS
handshake, a peer that resets a connection) are recorded in ``errors`` instead: the lab provokes
such errors on purpose, and output on success must stay quiet.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine


class LoopThread:
    def __init__(self, name: str) -> None:
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self.errors: list[dict] = []
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 10.0) -> None:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(lambda _loop, context: self.errors.append(context))
            self.loop = loop
            asyncio.set_event_loop(loop)
            ready.set()
            try:
                loop.run_forever()
            finally:
                # Cancel what is left so that sockets get closed, then close the loop.
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.wait(pending, timeout=5))
                loop.close()

        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError(f"{self.name}: event loop did not start within {timeout} s")

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 10.0) -> Any:
        """Run ``coro`` on the loop and return its result (raises on timeout or error)."""
        assert self.loop is not None, "start() first"
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call_soon(self, fn, *args) -> None:
        assert self.loop is not None, "start() first"
        self.loop.call_soon_threadsafe(fn, *args)

    def stop(self, timeout: float = 10.0) -> None:
        if self.loop is None or self._thread is None:
            return
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError(f"{self.name}: event loop thread did not stop within {timeout} s")
        self._thread = None


class LoopServer:
    """An asyncio server on a ``LoopThread`` of its own (subclassed by the Netem proxy and the TLS front).

    A subclass writes two coroutines: ``_start()`` opens ``_server`` and sets ``port``; ``_stop()``
    closes it and aborts the connections it holds.  ``start()`` runs the first on the loop (and
    stops again if it fails), ``stop()`` the second, bounded and never raising (stopping runs in
    ``finally`` and ``__exit__``; what it could not close the loop's own stop cancels), then ends
    the loop.
    """

    def __init__(self, name: str, listen_host: str, listen_port: int) -> None:
        self.listen_host = listen_host
        self.listen_port = listen_port
        self.port: int | None = None
        self._loop = LoopThread(name)
        self._server: asyncio.base_events.Server | None = None

    async def _start(self) -> None:
        raise NotImplementedError

    async def _stop(self) -> None:
        raise NotImplementedError

    def start(self):
        self._loop.start()
        try:
            self._loop.call(self._start())
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._loop.loop is not None and self._server is not None:
            try:
                self._loop.call(self._stop(), timeout=10)
            except Exception:
                pass
        self._loop.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def address(self) -> tuple[str, int]:
        assert self.port is not None, "start() first"
        return (self.listen_host, self.port)
