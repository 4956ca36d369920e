"""One status line, rewritten in place on stderr, while a long lab run goes on (make demo, make soak).

    progress = Progress("demo 128 MB", total=232)
    fn = progress.wrap(fn, lambda: (run.phase, "on / 1 put"))   # counts each invoke()
    progress.print("a line of the log")                          # clears, prints, redraws
    progress.close()                                             # clears the line

Only when stderr is a terminal: piped into a file or a CI log, nothing is written (a status line
rewritten with ``\\r`` a few hundred times is noise there). The line is cut to the terminal's width
so it never wraps (a wrapped line cannot be rewritten in place). Thread-safe: make demo's
environments run in threads.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import Callable, Optional

CLEAR = "\r\x1b[K"  # carriage return, erase to the end of the line


class Progress:
    def __init__(self, title: str, total: Optional[int] = None, stream=None, unit: str = "invocations"):
        self.title = title
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _isatty(self.stream)
        self.done = 0
        self.started = time.monotonic()
        self._last = ("", "")
        self._shown = False
        self._lock = threading.Lock()

    def show(self, phase: str, configuration: str) -> None:
        """Redraw the line with this phase and configuration (the count unchanged)."""
        with self._lock:
            self._last = (phase, configuration)
            self._draw()

    def step(self, phase: str, configuration: str) -> None:
        """One more invocation done."""
        with self._lock:
            self.done += 1
            self._last = (phase, configuration)
            self._draw()

    def wrap(self, fn, describe: Callable[[], tuple]):
        """``fn`` whose ``invoke()`` shows ``describe()`` -> (phase, configuration) before each
        invocation and counts it after."""
        return _Counted(fn, self, describe)

    def print(self, line: str) -> None:
        """Print a log line to stdout without mixing it into the status line."""
        with self._lock:
            if self._shown:
                self.stream.write(CLEAR)
                self.stream.flush()
            print(line, flush=True)
            if self._shown:
                self._draw()

    def close(self) -> None:
        with self._lock:
            if self._shown:
                self.stream.write(CLEAR)
                self.stream.flush()
            self._shown = False
            self.enabled = False

    def line(self) -> str:
        phase, configuration = self._last
        count = "%d/%d" % (self.done, self.total) if self.total is not None else "%d" % self.done
        return "%s | %s | %s | %s %s | %.0f s" % (self.title, phase, configuration, count, self.unit,
                                                  time.monotonic() - self.started)

    def _draw(self) -> None:
        if not self.enabled:
            return
        width = shutil.get_terminal_size((80, 24)).columns
        self.stream.write(CLEAR + self.line()[: max(10, width - 1)])
        self.stream.flush()
        self._shown = True


class _Counted:
    def __init__(self, fn, progress: Progress, describe: Callable[[], tuple]) -> None:
        self.fn = fn
        self.progress = progress
        self.describe = describe

    def invoke(self, event, timeout=90.0):
        self.progress.show(*self.describe())
        record = self.fn.invoke(event, timeout)
        self.progress.step(*self.describe())
        return record


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
