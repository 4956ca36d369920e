"""A loopback middlebox that refuses TLS ClientHellos carrying a pre-shared key.

Some DPI firewalls and old TLS-terminating proxies drop, or reset, every ClientHello with the TLS
1.3 ``pre_shared_key`` extension (type 41: a resumption offer); a client that keeps offering a
session behind one waits a connect timeout per new connection.  ``PskMiddlebox`` is a TCP proxy
in front of a real server: it reads each connection's first TLS record, parses the ClientHello's
extensions, and then

* ``action="drop"``: a hello with a PSK is never forwarded nor answered (the connection stays
  open and silent until the client gives up or the middlebox stops);
* ``action="reset"``: a hello with a PSK is answered by a TCP reset (SO_LINGER 0, then close);
* any other hello is forwarded, and the connection relayed both ways, untouched.

``hellos`` lists, per connection in order, whether its hello carried a PSK.  Standard library
only, threads; every socket it opened is closed by ``stop()`` (or leaving the ``with`` block).
"""

import socket
import struct
import threading

PRE_SHARED_KEY = 41  # RFC 8446 section 4.2: extension type of pre_shared_key


def offers_psk(record):
    """Whether a TLS record holding a ClientHello carries the pre_shared_key extension.

    ``record``: the 5-byte record header and the handshake message after it (one record; a
    ClientHello without post-quantum key shares fits one).  Anything unparsable counts as no."""
    try:
        if record[0] != 22 or record[5] != 1:  # handshake record, ClientHello
            return False
        at = 5 + 4 + 2 + 32  # record header, handshake header, legacy_version, random
        at += 1 + record[at]  # legacy_session_id
        at += 2 + struct.unpack_from("!H", record, at)[0]  # cipher_suites
        at += 1 + record[at]  # legacy_compression_methods
        end = at + 2 + struct.unpack_from("!H", record, at)[0]
        at += 2
        while at + 4 <= end:
            kind, length = struct.unpack_from("!HH", record, at)
            if kind == PRE_SHARED_KEY:
                return True
            at += 4 + length
    except (IndexError, struct.error):
        return False
    return False


def _read_exactly(sock, size):
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


class PskMiddlebox:
    """A TCP proxy on 127.0.0.1 in front of ``target`` ((host, port)) that drops or resets
    ClientHellos carrying a PSK (see the module docstring); ``address`` is where to connect."""

    def __init__(self, target, action="drop"):
        if action not in ("drop", "reset"):
            raise ValueError("action must be 'drop' or 'reset', not %r" % (action,))
        self.target = target
        self.action = action
        self.hellos = []
        self._sockets = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = self._listener.getsockname()
        self._stopped = False
        self._thread = threading.Thread(target=self._accept, name="psk-middlebox", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """Close the listener and every connection; wait for the accept thread."""
        self._stopped = True
        # close() alone does not wake a thread blocked in accept() on Linux: the join below then
        # waited its whole 5 s, twice per test (10-20 s a test, ~80 s of each hook suite's wall
        # time). shutdown() makes that accept() fail at once.
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            try:
                sock.close()
            except OSError:
                pass
        if self._thread.is_alive():
            self._thread.join(5)

    def _keep(self, sock):
        with self._lock:
            self._sockets.append(sock)
        if self._stopped:
            sock.close()

    def _accept(self):
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._keep(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        try:
            header = _read_exactly(client, 5)
            if header is None:
                return
            body = _read_exactly(client, struct.unpack_from("!H", header, 3)[0])
            if body is None:
                return
            record = header + body
            psk = offers_psk(record)
            with self._lock:
                self.hellos.append(psk)
            if psk:
                if self.action == "reset":
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    client.close()
                return  # "drop": held open and silent until the client or stop() closes it
            server = socket.create_connection(self.target)
            self._keep(server)
            server.sendall(record)
            threading.Thread(target=self._relay, args=(server, client), daemon=True).start()
            self._relay(client, server)
        except OSError:
            return

    @staticmethod
    def _relay(source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass
