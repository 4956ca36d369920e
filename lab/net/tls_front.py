"""A TLS-terminating TCP forwarder: HTTPS in front of a plain-TCP server (DynamoDB Local).

Real DynamoDB speaks HTTPS only, and what the layer changes (how long pooled connections live)
matters mostly because a new connection costs a TCP *and* a TLS handshake. So the lab's clients
must talk TLS, which DynamoDB Local does not. This forwarder terminates TLS and relays the bytes to
the plain upstream, one upstream connection per client connection (so the client's connection
reuse is mirrored one to one, and DynamoDB Local's own keep-alive handling still shows through).

Certificates are made at start with trustme: a throwaway CA and a server certificate for the names
and IP addresses clients will put in their URLs (``hostnames``; add the NAT namespace's host
address when clients connect from there). The CA goes to a PEM file; clients trust it through
``AWS_CA_BUNDLE`` (botocore) or ``ssl.create_default_context(cafile=...)``.

Closing: when either side closes or fails, both are closed. HTTP/1.1 never half-closes a
keep-alive connection, and TLS cannot half-close anyway (a TCP FIN after close_notify ends it).
One exception, ``reopen_upstream=True``: when the *upstream* closes a connection on which the client
has nothing in flight (DynamoDB Local's Jetty closes keep-alive connections idle for 30 s, measured
here; real DynamoDB publishes no such number), the client's connection stays open and its next
bytes go to a fresh upstream connection. That makes the endpoint look like a server without an
idle timeout, so that what a long gap does to a pooled connection is decided by the network (the
NAT), not by the emulator's web server. The check is byte-level, not HTTP-aware: a request sent in
the very instant the upstream closes could be lost, which needs 30 s of idleness first.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import ssl
import tempfile
from pathlib import Path

from lab.net._loop import LoopServer

# A TLS handshake that has not finished after this long is abandoned (a client that connected
# and went silent must not hold a task forever).  60 s: botocore's own connect and read timeouts,
# so the client, not the lab, decides when its handshake is too slow.  It was 10 s, and a client at
# 128 MB's CPU share with 32 threads (stock: each new connection parses the whole CA bundle first,
# 160+ connections per run) sometimes took longer than that between its ClientHello and its
# Finished: the front closed the connection and botocore failed UNEXPECTED_EOF_WHILE_READING after
# its retries (issue 31; with a 2 s timeout stock's threads opened 782 connections and never
# finished 600 puts in 600 s, the layer's 33 and finished them all).
HANDSHAKE_TIMEOUT = 60.0
CONNECT_TIMEOUT = 5.0


class TLSFront(LoopServer):
    """``with TLSFront(("127.0.0.1", 8000)) as tls: tls.port, tls.ca_bundle_path``."""

    def __init__(
        self,
        upstream: tuple[str, int],
        *,
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
        hostnames: tuple[str, ...] | list[str] = ("localhost", "127.0.0.1"),
        workdir: str | os.PathLike | None = None,
        reopen_upstream: bool = False,
    ) -> None:
        super().__init__("tls-front", listen_host, listen_port)
        self.upstream = upstream
        self.reopen_upstream = reopen_upstream
        self.upstream_connections = 0
        self.hostnames = list(dict.fromkeys(hostnames))
        self._workdir_arg = workdir
        self._tmp: tempfile.TemporaryDirectory | None = None
        self.workdir: Path | None = None
        self.ca_bundle_path: str | None = None
        self.accepted = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._ctx: ssl.SSLContext | None = None
        self._ca = None

    # --- certificates ---------------------------------------------------------------------------
    def _issue(self) -> None:
        """(Re)issue the server certificate for ``self.hostnames`` into the live SSL context.

        ``SSLContext.load_cert_chain`` replaces the certificate of an existing context; handshakes
        that start afterwards use the new one, so names can be added while the front runs.
        """
        import trustme  # only needed when the front runs (lab-deps/fetch paths stay stdlib-only)

        if self._ca is None:
            self._ca = trustme.CA(organization_name="aws-python-keepalive lab")
            self._ca.cert_pem.write_to_path(self.ca_bundle_path)
        cert = self._ca.issue_cert(*self.hostnames)
        if self._ctx is None:
            self._ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(self._ctx)

    def add_hostnames(self, *names: str) -> None:
        """Make the server certificate also valid for ``names`` (DNS names or IP addresses)."""
        new = [n for n in names if n not in self.hostnames]
        if new:
            for n in new:
                _check_identity(n)
            self.hostnames.extend(new)
            if self._ca is not None:
                self._issue()

    # --- lifecycle (LoopServer: start, stop, with) -----------------------------------------------
    def start(self) -> "TLSFront":
        for n in self.hostnames:
            _check_identity(n)
        if self._workdir_arg is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="lab-tls-")
            self.workdir = Path(self._tmp.name)
        else:
            self.workdir = Path(self._workdir_arg)
            self.workdir.mkdir(parents=True, exist_ok=True)
        self.ca_bundle_path = str(self.workdir / "ca.pem")
        self._issue()
        return super().start()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(
            self._handle,
            self.listen_host,
            self.listen_port,
            ssl=self._ctx,
            ssl_handshake_timeout=HANDSHAKE_TIMEOUT,
        )
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        super().stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        self._writers.clear()

    def url(self, host: str | None = None) -> str:
        """``https://host:port`` for a host the certificate covers (default: the listen host)."""
        return f"https://{_url_host(host or self.listen_host)}:{self.port}"

    # --- relaying ------------------------------------------------------------------------------
    async def _handle(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._writers.add(cwriter)
        uwriter = None
        pending = b""
        try:
            while True:
                try:
                    ureader, uwriter = await asyncio.wait_for(
                        asyncio.open_connection(*self.upstream), CONNECT_TIMEOUT
                    )
                except (OSError, asyncio.TimeoutError):
                    return
                self.upstream_connections += 1
                self._writers.add(uwriter)
                if pending:
                    uwriter.write(pending)
                up = asyncio.ensure_future(_pump(creader, uwriter))
                down = asyncio.ensure_future(_pump(ureader, cwriter))
                try:
                    await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    # Cancelling a pending StreamReader.read() loses no bytes: they stay buffered.
                    # Wait for the cancellations to land before anyone reads creader again.
                    up.cancel()
                    down.cancel()
                    await asyncio.wait([up, down], timeout=5)
                self._writers.discard(uwriter)
                _close_quietly(uwriter)
                uwriter = None
                if not (self.reopen_upstream and not down.cancelled() and down.result() == "eof"
                        and up.cancelled()):
                    return
                # The upstream closed an idle connection (DynamoDB Local's Jetty does after 30 s).
                # Keep the client's connection; its next bytes go to a new upstream connection.
                pending = await creader.read(65536)
                if not pending:
                    return
        finally:
            for w in (cwriter, uwriter):
                if w is not None:
                    self._writers.discard(w)
                    _close_quietly(w)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> str:
    """Copy until EOF ("eof") or an error on either side ("error")."""
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                return "eof"
            writer.write(data)
            await writer.drain()
    except (OSError, ssl.SSLError):
        return "error"


def _close_quietly(writer: asyncio.StreamWriter) -> None:
    try:
        writer.close()
    except Exception:
        writer.transport.abort()


def _check_identity(name: str) -> None:
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"not a host name or IP address: {name!r}")


def _url_host(host: str) -> str:
    try:
        if ipaddress.ip_address(host).version == 6:
            return f"[{host}]"
    except ValueError:
        pass
    return host
