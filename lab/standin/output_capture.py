"""Collect a child process's stdout/stderr lines and hand them out per invocation.

The lab needs to say which lines the function printed during which invocation (the hook's
``aws-keepalive:`` lines, botocore warnings, the handler's prints). Time stamps alone cannot say it:
a line written just before the response may still sit in the pipe when the driver looks.

What makes the split exact: the driver only asks (``drain()``) when the runtime is idle, blocked in
the Runtime API's ``next`` or frozen, so it writes nothing. At that moment everything it wrote is
already in the pipe, and reading the pipe *non-blocking until EAGAIN* returns all of it and nothing
of the next invocation.

Why a background thread as well: a chatty invocation could fill the 64 KiB pipe buffer; the child
would then block in write() and never post its response. The thread keeps the pipes empty. Both the
thread and ``drain()`` read only non-blocking and under one lock, so neither can hold the lock while
waiting for data (the mistake that would make ``drain()`` hang behind a thread blocked in read()).
"""

import os
import selectors
import threading
import time
from dataclasses import dataclass


@dataclass
class Line:
    stream: str  # "stdout" or "stderr"
    t_ns: int  # time.monotonic_ns() when the lab read it
    text: str  # without the trailing newline


class OutputCapture:
    """``OutputCapture({"stdout": proc.stdout, "stderr": proc.stderr})``; ``drain()`` -> new lines."""

    def __init__(self, streams):
        self._lock = threading.Lock()
        self._partial = {}
        self._fds = {}
        self._pending = []
        self.lines = []  # everything, in the order read
        self._selector = selectors.DefaultSelector()
        for name, fileobj in streams.items():
            fd = fileobj.fileno()
            os.set_blocking(fd, False)
            self._fds[fd] = name
            self._partial[name] = b""
            self._selector.register(fd, selectors.EVENT_READ, name)
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="output-capture", daemon=True)
        self._thread.start()

    def _read_available(self, fd):
        """Read fd until EAGAIN or EOF; caller holds the lock. Returns False at EOF."""
        name = self._fds[fd]
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                chunk = b""
            if not chunk:
                if self._partial[name]:  # a last line without newline
                    self._add(name, self._partial[name])
                    self._partial[name] = b""
                return False
            data = self._partial[name] + chunk
            *complete, self._partial[name] = data.split(b"\n")
            for raw in complete:
                self._add(name, raw)

    def _add(self, name, raw):
        line = Line(name, time.monotonic_ns(), raw.decode("utf-8", "replace").rstrip("\r"))
        self._pending.append(line)
        self.lines.append(line)

    def _run(self):
        while not self._stop and self._fds:
            try:
                events = self._selector.select(0.1)
            except (OSError, ValueError):
                return
            with self._lock:
                for key, _ in events:
                    if key.fd in self._fds and not self._read_available(key.fd):
                        self._selector.unregister(key.fd)
                        del self._fds[key.fd]

    def drain(self):
        """All complete lines not returned before, reading whatever is in the pipes right now."""
        with self._lock:
            for fd in list(self._fds):
                if not self._read_available(fd):
                    self._selector.unregister(fd)
                    del self._fds[fd]
            pending, self._pending = self._pending, []
        return pending

    def close(self):
        self._stop = True
        self._thread.join(2)
        with self._lock:
            self._selector.close()
