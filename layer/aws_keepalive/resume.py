"""TLS session resumption for botocore's new connections: the replacement handshake made cheaper.

Why.  Max idle (idle.py) and SnapStart (snapstart.py) replace a pooled connection with a clean
handshake; after a freeze that handshake is most of what the layer still costs.  A resumed TLS 1.3
handshake skips the server's certificate chain (not sent, not parsed, not verified: at 128 MB's
CPU share that is a large part of the client's handshake CPU).  TLS 1.3 only: see after_release
for why TLS 1.2 connections neither keep nor offer a session.  urllib3 never resumes (#1886,
#1898, #2706); Node's https.Agent and Java's JSSE do by default.  CPython's ssl resumes when a
session from an earlier connection of the *same* SSLContext is passed as
``wrap_socket(session=...)`` (docs/trust.md has the numbers).

Where.  botocore makes one SSLContext per client (``URLLib3Session._get_ssl_context``), and
urllib3 (1.26 and 2.x) opens every TLS connection with ``context.wrap_socket(sock,
server_hostname=...)``, with no session argument.  So:

* the cache lives on the client's own context (an attribute: ssl.SSLContext has a __dict__): a
  session never crosses contexts, hence never clients (CPython would refuse it anyway);
* the context gets, once, an instance attribute ``wrap_socket`` that adds ``session=`` when --
  and only when -- the botocore connection now connecting in this thread set an offer for exactly
  this context and server name (a thread-local, set and cleared around ``connect()`` by patch.py's
  connection wrapper).  Any other caller of the context's ``wrap_socket`` gets stock's call;
* a session is taken from a connection when it first goes back to its pool (``sock.session``):
  a TLS 1.3 server sends its tickets after the handshake, and the client reads them with the
  first response, so right after ``connect()`` there is nothing to resume yet.

Key: (host, port, SNI, ca_certs, ca_cert_dir, ca_cert_data, cert_file, key_file), per context --
and only for a connection that verifies as stock would: the pool asks for CERT_REQUIRED, no
fingerprint pinning, no ``assert_hostname`` override, and urllib3 said ``is_verified`` after the
handshake (its hostname check included).  ``verify=False`` (CERT_NONE) connections neither offer
nor give a session, even on a context that is CERT_NONE for every pool: there is nothing verified
to save, and one client's CERT_NONE pool (an http:// endpoint behind an https:// proxy) shares its
context with its verified ones.  A resumed handshake is as trusted as the full one that made the
session: the same context, trust store and server name verified it, and OpenSSL hands urllib3 the
session's peer certificate for its checks.

Not resumed, by decision: connections through any proxy (a CONNECT tunnel, an https:// proxy,
TLS in TLS): the tunnel's far end is the target, but the proxy settings would have to join the key
and the proxy contexts urllib3 builds per connection cannot resume anyway; such connections stay
exactly stock.  aiobotocore: not covered (docs/trust.md says why).

Bounded and safe.  At most ``MAX_PER_CONTEXT`` sessions per context (a client talks to a few
hosts); the oldest is dropped first.  No lock: each step is one dict operation, atomic under the
GIL, so nothing can be held across fork.  A session past its lifetime (``time + timeout``) is
dropped, not offered.  A ticket the server rejects costs what stock pays: OpenSSL completes the
full handshake in the same connection.  A handshake that fails while a session was offered drops
that key's session, so the retry botocore makes offers none.

Children and restores.  Every entry carries the generation it was made in: SnapStart's restore
(idle.restore_generation, bumped by snapstart.after_restore) and fork (``os.register_at_fork``)
each start a new one, so a restored clone or a forked child never offers a ticket its parent or
another clone holds -- each opens one full handshake per host, as stock does, then resumes its own.
A spawned or forkserver child is a new interpreter with new contexts: it starts empty.

Switch: ``AWS_PYTHON_KEEPALIVE_TLS_RESUME`` (settings.py).
"""

import os
import ssl
import threading
import time
import weakref

from aws_keepalive import diagnostics, idle

# Sessions per SSLContext (per client): a client talks to one or a few endpoints.
MAX_PER_CONTEXT = 16
# On a context: {key: (generation, session)}.
SESSIONS = "_aws_keepalive_tls_sessions"
# On a connection: the key its verified handshake may give a session to, until its first release.
PENDING_KEY = "_aws_keepalive_tls_key"

enabled = False  # set by patch.apply when AWS_PYTHON_KEEPALIVE_TLS_RESUME is on
_forks = 0
_offer = threading.local()  # .value: (context, server_hostname, session) while connect() runs


def _forked():
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_forked)


def generation():
    """The cache generation now: a SnapStart restore or a fork starts a new one."""
    return (idle.restore_generation, _forks)


def key_of(conn):
    """The cache key of a botocore HTTPS connection about to connect, or None when it must neither
    offer nor give a session (unverified, pinned, proxied, no SSLContext of its own)."""
    context = getattr(conn, "ssl_context", None)
    if not isinstance(context, ssl.SSLContext):
        return None
    if getattr(conn, "proxy", None) or getattr(conn, "_tunnel_host", None):
        return None
    if getattr(conn, "cert_reqs", None) not in (None, "CERT_REQUIRED", "REQUIRED", ssl.CERT_REQUIRED):
        return None
    if getattr(conn, "assert_fingerprint", None) or getattr(conn, "assert_hostname", None) is not None:
        return None
    host = getattr(conn, "host", None)
    server_hostname = getattr(conn, "server_hostname", None) or host
    return (
        host,
        getattr(conn, "port", None),
        server_hostname,
        getattr(conn, "ca_certs", None),
        getattr(conn, "ca_cert_dir", None),
        getattr(conn, "ca_cert_data", None),
        getattr(conn, "cert_file", None),
        getattr(conn, "key_file", None),
    )


def before_connect(conn):
    """Offer a cached session for this connection's handshake; returns what after_connect needs."""
    key = key_of(conn)
    if key is None:
        return None
    context = conn.ssl_context
    _install(context)
    session = None
    sessions = getattr(context, SESSIONS, None)
    entry = sessions.get(key) if sessions else None
    if entry is not None:
        made_in, candidate = entry
        if made_in == generation() and time.time() < candidate.time + candidate.timeout:
            session = candidate
        else:
            sessions.pop(key, None)
    if session is not None:
        # What urllib3 passes as server_hostname (2.x strips a trailing dot).
        _offer.value = (context, key[2].rstrip(".") if isinstance(key[2], str) else key[2], session)
    return (context, key, session)


def after_connect(conn, token, failed):
    """After ``connect()``: clear the offer; note whether the handshake resumed.  Returns
    "resumed", "not resumed" (a session was offered, the server did a full handshake), "full"
    (nothing offered), or None (not a connection this module looks at)."""
    _offer.value = None
    if token is None:
        return None
    context, key, session = token
    if failed:
        if session is not None:
            sessions = getattr(context, SESSIONS, None)
            if sessions is not None:
                sessions.pop(key, None)
        return None
    sock = getattr(conn, "sock", None)
    if not getattr(conn, "is_verified", False) or not isinstance(sock, ssl.SSLSocket):
        return None
    setattr(conn, PENDING_KEY, key)
    if session is None:
        return "full"
    return "resumed" if sock.session_reused else "not resumed"


def after_release(conn):
    """When a connection first goes back to its pool: keep its session (the TLS 1.3 tickets came
    with the first response).  Once per connection; cheap no-op for every later release."""
    key = getattr(conn, PENDING_KEY, None)
    if key is None:
        return
    setattr(conn, PENDING_KEY, None)
    sock = getattr(conn, "sock", None)
    if not isinstance(sock, ssl.SSLSocket):
        return
    session = sock.session
    if session is None:
        return
    if sock.version() != "TLSv1.3" or not session.has_ticket:
        # TLS 1.3 tickets only.  TLS 1.2 cannot resume here: urllib3's contexts ask for no TLS 1.2
        # tickets (OP_NO_TICKET, kept: a 1.2 ticket resumption has no forward secrecy), and
        # session-ID resumption ends when a side closes without close_notify, as urllib3 does;
        # offering such a session measurably costs CPU for nothing (bench/tls_resume.py).
        return
    sessions = getattr(sock.context, SESSIONS, None)
    if sessions is None:
        return
    sessions.pop(key, None)  # re-inserted last: the oldest entry is the first in the dict
    while len(sessions) >= MAX_PER_CONTEXT:
        try:
            sessions.pop(next(iter(sessions)), None)
        except (StopIteration, RuntimeError):  # emptied or changed by another thread meanwhile
            break
    sessions[key] = (generation(), session)


def _install(context):
    """Give ``context`` (once) its cache and the wrap_socket that passes the offered session."""
    if SESSIONS in vars(context):
        return
    setattr(context, SESSIONS, {})
    # An instance attribute shadows the class's method for this context only.
    context.wrap_socket = _ResumingWrap(context)


class _ResumingWrap:
    """``context.wrap_socket`` with ``session=`` added for the connection now offering one.

    Holds its context by weak reference: the context holds this object, and a strong reference
    back would make every client's context wait for the cyclic garbage collector to be freed."""

    __slots__ = ("_context",)

    def __init__(self, context):
        self._context = weakref.ref(context)

    def __call__(self, sock, *args, **kwargs):
        context = self._context()
        offer = getattr(_offer, "value", None)
        if (
            offer is not None
            and offer[0] is context
            and not args
            and kwargs.get("session") is None
            and not kwargs.get("server_side")
            and kwargs.get("server_hostname") == offer[1]
        ):
            _offer.value = None
            kwargs["session"] = offer[2]
        return ssl.SSLContext.wrap_socket(context, sock, *args, **kwargs)


def report(error):
    diagnostics.report_once(
        "tls resume", "TLS session resumption failed: %r; new connections do full handshakes as "
        "stock" % (error,)
    )
