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
* the context gets, once, instance attributes ``wrap_socket`` and ``wrap_bio`` that add
  ``session=`` when -- and only when -- the connection now connecting in this thread or asyncio
  task set an offer for exactly this context and server name (a context variable, set and cleared
  around ``connect()`` by patch.py's connection wrapper, or around the aiohttp connector's
  ``_create_connection`` by aio.py).  Any other caller of the context gets stock's call;
* a session is taken from a connection when it first goes back to its pool (``sock.session``):
  a TLS 1.3 server sends its tickets after the handshake, and the client reads them with the
  first response, so right after ``connect()`` there is nothing to resume yet.  Only from a full
  handshake made while nothing live is cached for its key (see _connected: reading a session
  costs about what resuming saves).

Key: (host, port, SNI, ca_certs, ca_cert_dir, ca_cert_data, the client certificate's files and what
they hold now), per context --
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
exactly stock.

aiobotocore.  aiohttp opens TLS through asyncio (``loop.create_connection(ssl=context,
server_hostname=...)``), whose SSL protocol calls ``context.wrap_bio(..., server_hostname=...)``:
in CPython 3.11+ while the connecting task runs, in 3.10 in ``connection_made``, a callback the
loop runs in a copy of that task's context -- either way the task's offer is visible there and
nowhere else.  aiobotocore makes one context per client and connector (verify on: CERT_REQUIRED
and ``check_hostname``, so OpenSSL checked chain and name in the full handshake); the key is the
connector's (host, port, server name).  The session is taken when the connector takes the
connection back (aio.py's ``_release``).

Bounded and safe.  At most ``MAX_PER_CONTEXT`` sessions per context (a client talks to a few
hosts); the oldest is dropped first.  No lock: each step is one dict operation, atomic under the
GIL, so nothing can be held across fork.  A session past its lifetime (``time + timeout``) is
dropped, not offered, and so is one past the verified chain's earliest notAfter (a resumed
handshake verifies no certificate; stock's full one would fail then).  A ticket the server
rejects: OpenSSL completes the full handshake in the same connection, at ~1.2x its client CPU,
so refusals in a row back off (_note_refusal): a server that refuses every ticket costs stock's
handshakes plus one refused offer per 64 connections.  A handshake that fails while a session
was offered drops that key's session, so the retry botocore makes offers none.

Children and restores.  Every entry carries the generation it was made in: SnapStart's restore
(idle.restore_generation, bumped by snapstart.after_restore) and fork (``os.register_at_fork``)
each start a new one, so a restored clone or a forked child never offers a ticket its parent or
another clone holds -- each opens one full handshake per host, as stock does, then resumes its own.
A spawned or forkserver child is a new interpreter with new contexts: it starts empty.

Switch: ``AWS_PYTHON_KEEPALIVE_TLS_RESUME`` (settings.py).
"""

import contextvars
import os
import ssl
import time
import weakref

from aws_keepalive import diagnostics, idle

# Sessions per SSLContext (per client): a client talks to one or a few endpoints.
MAX_PER_CONTEXT = 16
# On a context: {key: (generation, session, when its verified chain's earliest certificate expires)}.
SESSIONS = "_aws_keepalive_tls_sessions"
# On a context: {key: (refusals in a row, connections still to open without an offer)}: the back-off
# after the server refused an offered session (_connected).
REFUSED = "_aws_keepalive_tls_refused"
# At most 2**MAX_BACKOFF_SHIFT - 1 connections open without an offer after refusals in a row.
MAX_BACKOFF_SHIFT = 6
# On a connection: the key its verified full handshake gives a session to, until its first release.
PENDING_KEY = "_aws_keepalive_tls_key"
# trust.CLIENT_CERT (not imported: trust.py is imported only when AWS_PYTHON_KEEPALIVE_TRUST_ONCE is
# on; tests/hook/test_resume.py pins that both name the same attribute).
CLIENT_CERT = "_aws_keepalive_client_cert"

enabled = False  # set by patch.apply when AWS_PYTHON_KEEPALIVE_TLS_RESUME is on
_forks = 0
# (context, server_hostname, session) while a connection that offers a session connects: a
# context variable, so each thread and each asyncio task sees only its own offer.
_offer = contextvars.ContextVar("aws_keepalive_tls_offer", default=None)


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
    if isinstance(server_hostname, str):
        server_hostname = server_hostname.rstrip(".")  # what urllib3 2.x passes to wrap_socket
    cert_file, key_file = getattr(conn, "cert_file", None), getattr(conn, "key_file", None)
    return (
        host,
        getattr(conn, "port", None),
        getattr(conn, "ca_certs", None),
        getattr(conn, "ca_cert_dir", None),
        getattr(conn, "ca_cert_data", None),
        # The client certificate, as files *and* as what they hold now: a resumed session keeps the
        # identity of the handshake that made it, so a rotated certificate (stock presents the new
        # one at the next connect) must not resume a session made with the old one.  urllib3 loads
        # cert_file per connection; trust.py records what it loaded into the context once
        # (trust.CLIENT_CERT: cert file, key file, their identities then).
        cert_file, key_file, _identity(cert_file), _identity(key_file),
        getattr(context, CLIENT_CERT, None),
        server_hostname,  # last: the offer matches wrap_socket's server_hostname against it
    )


def _identity(path):
    """(device, inode, size, mtime) of a client-certificate file, or None (no file, none set)."""
    if not path:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def before_connect(conn):
    """Offer a cached session for this connection's handshake; returns what after_connect needs."""
    key = key_of(conn)
    if key is None:
        return None
    return _offer_for(conn.ssl_context, key)


def _clears_offer(function):
    """After a connect (whatever happened): this thread's or task's offer is cleared, and a failure
    here is reported once and answered None -- the connection itself stays as it is."""

    def cleared(*args):
        try:
            return function(*args)
        except Exception as error:
            report(error)
            return None
        finally:
            _offer.set(None)

    return cleared


@_clears_offer
def after_connect(conn, token, failed):
    """After ``connect()``: clear the offer; note whether the handshake resumed.  Returns
    "resumed", "not resumed" (a session was offered, the server did a full handshake), "full"
    (nothing offered), or None (not a connection this module looks at)."""
    sock = getattr(conn, "sock", None)
    verified = getattr(conn, "is_verified", False) and isinstance(sock, ssl.SSLSocket)
    return _connected(conn, sock if verified else None, token, failed)


def _connected(owner, ssl_object, token, failed):
    """after_connect's work for any client family: ``ssl_object`` the verified connection's
    SSLSocket or SSLObject (None: not verified as stock would); ``owner`` keeps the key until its
    first release."""
    if token is None:
        return None
    context, key, session = token
    if failed:
        if session is not None:
            sessions = getattr(context, SESSIONS, None)
            if sessions is not None:
                sessions.pop(key, None)
        return None
    if ssl_object is None:
        return None
    resumed = session is not None and ssl_object.session_reused
    sessions = getattr(context, SESSIONS, None)
    if session is not None and not resumed and sessions is not None:
        sessions.pop(key, None)  # refused: this connection's full handshake gives the next one
    # Only a full handshake with nothing live cached for the key gives its session: reading
    # ``SSLSocket.session`` costs ~0.45-0.7 ms of client CPU here (CPython copies the session
    # through i2d/d2i, peer certificate included), which ate nearly all a resumption saves when
    # every new connection paid it (loopback, CPython 3.12, OpenSSL 3.0.19, client CPU per
    # connection: offer + keep 0.97x stock's full handshake, offer alone 0.78x).  A resumed
    # connection's server verified no chain, so its ticket is also the wrong one to keep past the
    # first: the cached session is offered again (TLS 1.3 tickets are reusable unless the server
    # refuses a second use -- then the refusal back-off below applies) until its lifetime ends.
    if not resumed and (sessions is None or key not in sessions):
        setattr(owner, PENDING_KEY, key)
    if session is None:
        return "full"
    _note_refusal(context, key, not resumed)
    return "resumed" if resumed else "not resumed"


def _note_refusal(context, key, refused):
    """A refused offer is not free: OpenSSL 3's full handshake after a refused PSK costs the client
    ~1.2x the CPU of one that offered nothing (measured on loopback, CPython 3.12, OpenSSL 3.0:
    2.96 vs 2.47 ms median), so a server that refuses every ticket (a fleet that shares no ticket
    keys) would make each new connection dearer than stock's.  After n refusals in a row the next
    2**(n-1) - 1 connections (at most 63) offer nothing, as stock; one resumption ends the
    back-off.  (A single refusal -- a restarted server -- costs no skipped offer.)"""
    backoffs = getattr(context, REFUSED, None)
    if backoffs is None:
        return
    if not refused:
        backoffs.pop(key, None)
        return
    streak = backoffs.pop(key, (0, 0))[0] + 1
    while len(backoffs) >= MAX_PER_CONTEXT:
        try:
            backoffs.pop(next(iter(backoffs)), None)
        except (StopIteration, RuntimeError):  # emptied or changed by another thread meanwhile
            break
    backoffs[key] = (streak, 2 ** min(streak - 1, MAX_BACKOFF_SHIFT) - 1)


def after_release(conn):
    """When a connection first goes back to its pool: keep its session (the TLS 1.3 tickets came
    with the first response).  Once per connection; cheap no-op for every later release."""
    key = getattr(conn, PENDING_KEY, None)
    if key is None:
        return
    setattr(conn, PENDING_KEY, None)
    sock = getattr(conn, "sock", None)
    if isinstance(sock, ssl.SSLSocket):
        _keep(sock, key)


def _keep(ssl_object, key):
    """Keep ``ssl_object``'s session (a verified full handshake's) under ``key`` in its context's
    cache (bounded)."""
    session = ssl_object.session
    if session is None:
        return
    if ssl_object.version() != "TLSv1.3" or not session.has_ticket:
        # TLS 1.3 tickets only.  TLS 1.2 cannot resume here: urllib3's contexts ask for no TLS 1.2
        # tickets (OP_NO_TICKET, kept: a 1.2 ticket resumption has no forward secrecy), and
        # session-ID resumption ends when a side closes without close_notify, as urllib3 does;
        # offering such a session measurably costs CPU for nothing (bench/tls_resume.py).
        return
    sessions = getattr(ssl_object.context, SESSIONS, None)
    if sessions is None:
        return
    valid_until = _verified_until(ssl_object)
    if valid_until is None:
        return
    sessions.pop(key, None)  # re-inserted last: the oldest entry is the first in the dict
    while len(sessions) >= MAX_PER_CONTEXT:
        try:
            sessions.pop(next(iter(sessions)), None)
        except (StopIteration, RuntimeError):  # emptied or changed by another thread meanwhile
            break
    sessions[key] = (generation(), session, valid_until)


def _verified_until(ssl_object):
    """When the earliest certificate of the chain the handshake verified expires (seconds since
    the epoch), or None (nothing to read: keep no session).

    A resumed TLS 1.3 handshake verifies no certificate: the server sends none.  Stock's next full
    handshake fails CERTIFICATE_VERIFY_FAILED once the server's certificate (or an intermediate)
    has expired, so a session is never offered past the chain's earliest notAfter (review of
    issue 30: a ticket outliving the leaf resumed where stock failed).  The verified chain is read
    from the private ``_sslobj.get_verified_chain`` (3.10+), whose items are ``_ssl.Certificate``
    objects with ``get_info``; the public ``SSLSocket.get_verified_chain`` of 3.13+ returns DER
    bytes, which the stdlib cannot parse.  The leaf's notAfter alone where it does not exist; a
    chain whose items cannot be read keeps no session."""
    times = [ssl_object.getpeercert().get("notAfter")]
    chain = getattr(getattr(ssl_object, "_sslobj", None), "get_verified_chain", None)
    if chain is not None:
        verified = chain()
        if verified is None:  # a resumed handshake (none is kept): nothing verified to read
            return None
        if not all(hasattr(certificate, "get_info") for certificate in verified):
            return None
        times += [certificate.get_info().get("notAfter") for certificate in verified]
    if not all(times):
        return None
    return min(ssl.cert_time_to_seconds(stamp) for stamp in times)


# --- aiobotocore: aiohttp's connector ----------------------------------------------------------


def before_aio_connect(connector, key):
    """aio.py, before the connector opens a connection for ``key`` (aiohttp's ConnectionKey): offer
    a cached session; returns what after_aio_connect needs (None: neither offer nor keep).

    Only for the connector's own verifying context (aiobotocore makes one per client and
    connector; ``check_hostname`` on: OpenSSL checks the name in the handshake), no proxy, no
    per-request ``ssl`` other than that context, no fingerprint."""
    context = getattr(connector, "_ssl", None)
    if not isinstance(context, ssl.SSLContext) or not getattr(key, "is_ssl", False):
        return None
    if getattr(key, "proxy", None) is not None:
        return None
    if getattr(key, "ssl", True) not in (True, None) and getattr(key, "ssl", None) is not context:
        return None
    if context.verify_mode != ssl.CERT_REQUIRED or not context.check_hostname:
        return None
    host = getattr(key, "host", None)
    if not isinstance(host, str):
        return None
    # aiohttp's server_hostname: (req.server_hostname or host).rstrip("."); aiobotocore sets none.
    return _offer_for(context, ("aiohttp", host, getattr(key, "port", None), host.rstrip(".")))


@_clears_offer
def after_aio_connect(protocol, token, failed):
    """aio.py, after the connector opened (or failed to open) a connection: as after_connect."""
    transport = getattr(protocol, "transport", None) if protocol is not None else None
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    return _connected(protocol, ssl_object, token, failed)


def after_aio_release(protocol):
    """aio.py, when the connector takes a connection back: as after_release."""
    key = getattr(protocol, PENDING_KEY, None)
    if key is None:
        return
    setattr(protocol, PENDING_KEY, None)
    transport = getattr(protocol, "transport", None)
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is not None:
        _keep(ssl_object, key)


def _offer_for(context, key):
    """Install the context's hooks, set this thread's or task's offer if a live session is cached
    for ``key``; the token after_*connect take."""
    _install(context)
    session = None
    sessions = getattr(context, SESSIONS, None)
    entry = sessions.get(key) if sessions else None
    if entry is not None:
        made_in, candidate, chain_until = entry
        if made_in == generation() and time.time() < min(candidate.time + candidate.timeout, chain_until):
            session = candidate
        else:
            sessions.pop(key, None)
    backoffs = getattr(context, REFUSED, None)
    backoff = backoffs.get(key) if session is not None and backoffs else None
    if backoff is not None and backoff[1] > 0:
        backoffs[key] = (backoff[0], backoff[1] - 1)  # backing off: this one offers nothing
        session = None
        if backoff[1] == 1:
            sessions.pop(key, None)  # the last one backing off keeps a fresh session for the next offer
    if session is not None:
        _offer.set((context, key[-1], session))
    return (context, key, session)


def _install(context):
    """Give ``context`` (once) its cache, and the wrap_socket (urllib3) and wrap_bio (asyncio, for
    aiohttp) that pass the offered session."""
    if SESSIONS in vars(context):
        return
    setattr(context, SESSIONS, {})
    setattr(context, REFUSED, {})
    # Instance attributes shadow the class's methods for this context only.
    context.wrap_socket = _ResumingWrap(context, ssl.SSLContext.wrap_socket)
    context.wrap_bio = _ResumingWrap(context, ssl.SSLContext.wrap_bio)


class _ResumingWrap:
    """``context.wrap_socket`` / ``wrap_bio`` with ``session=`` added for the connection now
    offering one (in this thread or task), and only for the server name it was offered for.

    Holds its context by weak reference: the context holds this object, and a strong reference
    back would make every client's context wait for the cyclic garbage collector to be freed."""

    __slots__ = ("_context", "_method")

    def __init__(self, context, method):
        self._context = weakref.ref(context)
        self._method = method

    def __call__(self, *args, **kwargs):
        context = self._context()
        offer = _offer.get()
        if (
            offer is not None
            and offer[0] is context
            and kwargs.get("session") is None
            and not kwargs.get("server_side")
            and kwargs.get("server_hostname") == offer[1]
        ):
            _offer.set(None)
            kwargs["session"] = offer[2]
        return self._method(context, *args, **kwargs)


def report(error):
    diagnostics.report_once(
        "tls resume", "TLS session resumption failed: %r; new connections do full handshakes as "
        "stock" % (error,)
    )
