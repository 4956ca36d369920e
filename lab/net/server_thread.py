"""A socketserver server serving on a daemon thread of its own: the lab's plain HTTP stand-ins.

The Runtime API (lab.standin.runtime_api), the durable service's keep-alive front and Invoke
endpoint (lab.services.durable) and the tests' endpoints are blocking ``socketserver`` servers that
must serve while the caller goes on. ``ServerThread(server, name)`` starts ``serve_forever`` on a
daemon thread (polling for ``shutdown`` every 0.1 s, so ``close`` returns quickly); ``close()``
stops it, closes the listening socket and waits, bounded, for the thread to end.
"""

from __future__ import annotations

import socketserver
import threading

# How often serve_forever checks for shutdown(): close() waits at most about this long for it.
POLL_INTERVAL_S = 0.1


class ServerThread:
    def __init__(self, server: socketserver.BaseServer, name: str) -> None:
        self.server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S},
                                        name=name, daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop serving, close the listening socket, wait up to ``timeout`` s for the thread."""
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout)
