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

* only a context stock would use through the standard library's own methods takes part
  (``resumable``): its class is ``ssl.SSLContext`` itself, that class's ``wrap_socket`` and
  ``wrap_bio`` are the ssl module's, and no other code set either on the instance.  Any other
  context (a pinning subclass, truststore's, an instance a tracer patched) is used exactly as
  stock uses it, and nothing is offered or kept for it;
* such a context gets, once, instance attributes ``wrap_socket`` and ``wrap_bio`` that call the
  class's method, adding ``session=`` when -- and only when -- the connection now connecting in
  this thread or asyncio task set an offer for exactly this context and server name (a context
  variable, set and cleared around ``connect()`` by patch.py's connection wrapper, or around the
  aiohttp connector's ``_create_connection`` by aio.py).  Any other caller gets stock's call;
* the sessions live in a ``Cache`` owned by the connection pool (botocore: patch.py hands each
  connection its pool's cache) or the aiohttp connector, never on the context: an SSLSession
  holds its context, so a cache on the context is a reference cycle that kept every dropped
  client's context, and its CA bundle, alive until the cyclic GC ran.  A session is only offered
  through the context that made it (CPython would refuse it anyway), so never to another client;
* a session is taken from a connection when it first goes back to its pool (``sock.session``):
  a TLS 1.3 server sends its tickets after the handshake, and the client reads them with the
  first response, so right after ``connect()`` there is nothing to resume yet.  Only from a full
  handshake made while nothing live is cached for its key (see _connected: reading a session
  costs about what resuming saves); the one ticket is then reused (docs/trust.md, issue 34).

Key: (host, port, SNI, ca_certs, ca_cert_dir, ca_cert_data, the client certificate's files and what
they hold now), per pool --
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

Bounded and safe.  At most ``MAX_PER_CACHE`` sessions per pool or connector; the oldest is
dropped first.  No lock: each step is one dict operation, atomic under the
GIL, so nothing can be held across fork.  A session past its lifetime (``time + timeout``) is
dropped, not offered, and so is one past the verified chain's earliest notAfter (a resumed
handshake verifies no certificate; stock's full one would fail then).  A ticket the server
rejects: OpenSSL completes the full handshake in the same connection, at ~1.2x its client CPU,
so refusals in a row back off (_note_refusal): a server that refuses every ticket costs stock's
handshakes plus one refused offer per 64 connections.  A handshake that fails after the session
went into its ClientHello (a middlebox dropping or resetting PSK hellos) ends offering for that
key for the cache's lifetime: one failed offer, once (_connected) -- and once only however many
threads or tasks connect at the same moment: until an offer for a key has resumed, one connection
at a time offers for it (a probe), the others connect as stock (_offer_for).

Children and restores.  Every entry carries the generation it was made in: SnapStart's restore
(idle.restore_generation, bumped by snapstart.after_restore) and fork (``os.register_at_fork``)
each start a new one, so a restored clone or a forked child never offers a ticket its parent or
another clone holds -- each opens one full handshake per host, as stock does, then resumes its own.
A spawned or forkserver child is a new interpreter with new contexts: it starts empty.

Switch: ``AWS_PYTHON_KEEPALIVE_TLS_RESUME`` (settings.py).
"""

import _ssl
import contextvars
import os
import ssl
import sys
import time
import weakref

from aws_keepalive import diagnostics, idle

# Sessions per cache (per connection pool, per aiohttp connector): a client talks to a few hosts.
MAX_PER_CACHE = 16
# On a connection pool (botocore) or an aiohttp connector: its Cache.  Never on the SSLContext: an
# SSLSession holds its context, so a cache on the context is a reference cycle that keeps a dropped
# client's context (and its loaded CA bundle) alive until the cyclic garbage collector runs.
CACHE = "_aws_keepalive_tls_cache"
# On a connection: (cache, key) its verified full handshake gives a session to, until its first
# release.
PENDING_KEY = "_aws_keepalive_tls_key"
# At most 2**MAX_BACKOFF_SHIFT - 1 connections open without an offer after refusals in a row.
MAX_BACKOFF_SHIFT = 6
# A back-off's second field when a handshake that carried an offer failed: no offer again for the
# key, for the cache's lifetime (_connected).
NEVER = -1
# trust.CLIENT_CERT (not imported: trust.py is imported only when AWS_PYTHON_KEEPALIVE_TRUST_ONCE is
# on; tests/hook/test_resume.py pins that both name the same attribute).
CLIENT_CERT = "_aws_keepalive_client_cert"

enabled = False  # set by patch.apply when AWS_PYTHON_KEEPALIVE_TLS_RESUME is on
_forks = 0
# [context, server_hostname, session, handed, generation] while a connection that offers a session
# connects (``handed``: False, then True, then the SSLSocket or SSLObject it went into):
# a context variable, so each thread and each asyncio task sees only its own offer.  ``handed``
# turns True when the session went into wrap_socket / wrap_bio, i.e. into a ClientHello (a list,
# shared with the copy of the context asyncio 3.10 runs ``connection_made`` in).
_offer = contextvars.ContextVar("aws_keepalive_tls_offer", default=None)


def _standard_library_context():
    """The standard library's own SSLContext class and its own wrap_socket and wrap_bio, or
    (None, None, None).

    Found even when other code has replaced ``ssl.SSLContext`` (truststore's ``inject_into_ssl``
    does; the layer may be imported while it is injected): the class the ssl module defines
    directly on ``_ssl._SSLContext``, and functions whose globals are the ssl module's (a wrapper
    defined anywhere else has its own module's globals, functools.wraps or not).  If the class's
    methods were already replaced, nothing is the standard library's: nothing resumes."""
    names = ("wrap_socket", "wrap_bio")
    for cls in _ssl._SSLContext.__subclasses__():
        if cls.__module__ == "ssl" and cls.__name__ == "SSLContext":
            methods = [vars(cls).get(name) for name in names]
            if all(getattr(method, "__globals__", None) is vars(ssl) and method.__name__ == name
                   for method, name in zip(methods, names)):
                return cls, methods[0], methods[1]
    return None, None, None


STDLIB_CONTEXT, STDLIB_WRAP_SOCKET, STDLIB_WRAP_BIO = _standard_library_context()
_STDLIB_METHODS = {"wrap_socket": STDLIB_WRAP_SOCKET, "wrap_bio": STDLIB_WRAP_BIO}


def _forked():
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_forked)


def generation():
    """The cache generation now: a SnapStart restore or a fork starts a new one."""
    return (idle.restore_generation, _forks)


class Cache:
    """One connection pool's (botocore) or connector's (aiohttp) sessions and back-offs.

    Owned by the pool or connector, which the client owns and the context does not reach, so the
    SSLSessions (each holding its context) form no cycle: a dropped client's context is freed by
    reference counting, as stock's is."""

    __slots__ = ("sessions", "backoffs", "proven", "probes")

    def __init__(self):
        # {key: (generation, session, when its verified chain's earliest certificate expires, context)}
        self.sessions = {}
        # {key: (refusals in a row, connections still to open without an offer, or NEVER)}
        self.backoffs = {}
        # {key: True} once an offer for the key resumed: the path to it passes PSK hellos.
        self.proven = {}
        # {key: the offer in flight} for a key not proven yet: one offer at a time (_offer_for).
        self.probes = {}


def cache_of(owner):
    """``owner``'s Cache (made on first use)."""
    cache = getattr(owner, CACHE, None)
    if cache is None:
        cache = Cache()
        setattr(owner, CACHE, cache)
    return cache


def attach(pool, conn):
    """patch.py, when botocore's pool hands out a connection: the connection gets its pool's cache
    (a connection does not know its pool; the pool, not the context, owns the cache)."""
    setattr(conn, CACHE, cache_of(pool))


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
        # trust.py's pair (loaded once into the context, the connections get no cert_file), and
        # what its files hold *now*: a connection trust.py made loads no file at its reconnect, so
        # without this a half-rotated pair (a new certificate, the key not yet: stock fails every
        # call) resumed the old identity's session and succeeded (issue 34).
        _loaded_now(getattr(context, CLIENT_CERT, None)),
        server_hostname,  # last: the offer matches wrap_socket's server_hostname against it
    )


def _loaded_now(loaded):
    """trust.CLIENT_CERT's record (cert file, key file, identities when loaded) and the files'
    identities now, or None (no client certificate loaded once)."""
    if not loaded:
        return None
    return (loaded, _identity(loaded[0]), _identity(loaded[1]))


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
    cache = getattr(conn, CACHE, None)
    if cache is None:
        return None
    key = key_of(conn)
    if key is None:
        return None
    return _offer_for(cache, conn.ssl_context, key)


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
    cache, key, offer = token
    offered = offer is not None and offer[3] is not False
    if offer is not None and cache.probes.get(key) is offer:
        cache.probes.pop(key, None)  # this key's probe ended: another connection may offer
    # The offer went into a handshake that is not this connection's: aiohttp tries a host's next
    # address when a TLS handshake fails or times out (ClientConnectorError, TimeoutError), and
    # that attempt offers nothing (the offer was used up).  So the handshake that carried the
    # session failed, though the connection succeeded: behind a PSK-dropping middlebox each such
    # offer cost a connect timeout, counted as a refusal (back-off) instead of a failure (review
    # of issue 34: 4 PSK hellos in 12 calls to a two-address host).
    offer_failed = failed or (offered and ssl_object is not None and offer[3] is not True
                              and offer[3] is not ssl_object)
    if offer_failed:
        if offered:
            # The handshake that carried the session failed (timeout, reset, alert).  Some
            # middleboxes (DPI firewalls, old TLS proxies) drop or reset every ClientHello with a
            # pre_shared_key extension; each such offer costs a connect timeout (2 s to botocore's
            # 60 s), which no number of resumptions pays back (one saves ~0.5 ms of client CPU).
            # So one failed offer ends offering for this key, for the cache's lifetime: the key
            # costs stock's handshakes from then on, plus that one failure.  (Stricter than the
            # refusal back-off below, which prices a refusal at ~0.5 ms, not seconds.)
            cache.sessions.pop(key, None)
            cache.proven.pop(key, None)
            _set_backoff(cache, key, (cache.backoffs.get(key, (0, 0))[0] + 1, NEVER))
        return None if failed else "full"
    if ssl_object is None:
        return None
    if not offered:
        offer = None  # never reached a ClientHello (another wrap_socket ran): nothing was offered
    resumed = offered and ssl_object.session_reused
    if offer is not None and not resumed:
        cache.sessions.pop(key, None)  # refused: this connection's full handshake gives the next one
    # Only a full handshake with nothing live cached for the key gives its session (and none for a
    # key that is never offered again): reading ``SSLSocket.session`` costs ~0.45-0.7 ms of client
    # CPU here (CPython copies the session through i2d/d2i, peer certificate included), which ate
    # nearly all a resumption saves when every new connection paid it (loopback, CPython 3.12,
    # OpenSSL 3.0.19, client CPU per connection: offer + keep 0.97x stock's full handshake, offer
    # alone 0.78x).  So the cached session is offered again, on each new connection, until its
    # lifetime ends (one ticket reused: docs/trust.md weighs this against RFC 8446 C.4).
    backoff = cache.backoffs.get(key)
    if not resumed and key not in cache.sessions and (backoff is None or backoff[1] != NEVER):
        setattr(owner, PENDING_KEY, (cache, key))
    if offer is None:
        return "full"
    _note_refusal(cache, key, not resumed)
    return "resumed" if resumed else "not resumed"


def _note_refusal(cache, key, refused):
    """A refused offer is not free: OpenSSL 3's full handshake after a refused PSK costs the client
    ~1.2x the CPU of one that offered nothing (measured on loopback, CPython 3.12, OpenSSL 3.0:
    2.96 vs 2.47 ms median), so a server that refuses every ticket (a fleet that shares no ticket
    keys) would make each new connection dearer than stock's.  After n refusals in a row the next
    2**(n-1) - 1 connections (at most 63) offer nothing, as stock; one resumption ends the
    back-off.  (A single refusal -- a restarted server -- costs no skipped offer.)"""
    if not refused:
        cache.backoffs.pop(key, None)
        if key not in cache.proven:
            _bounded_set(cache.proven, key, True)
        return
    streak = cache.backoffs.get(key, (0, 0))[0] + 1
    _set_backoff(cache, key, (streak, 2 ** min(streak - 1, MAX_BACKOFF_SHIFT) - 1))


def _set_backoff(cache, key, backoff):
    _bounded_set(cache.backoffs, key, backoff)


def _bounded_set(table, key, value):
    """``table[key] = value``, the oldest entries dropped first to keep at most MAX_PER_CACHE."""
    table.pop(key, None)
    while len(table) >= MAX_PER_CACHE:
        try:
            table.pop(next(iter(table)), None)
        except (StopIteration, RuntimeError):  # emptied or changed by another thread meanwhile
            break
    table[key] = value


def after_release(conn):
    """When a connection first goes back to its pool: keep its session (the TLS 1.3 tickets came
    with the first response).  Once per connection; cheap no-op for every later release."""
    pending = getattr(conn, PENDING_KEY, None)
    if pending is None:
        return
    setattr(conn, PENDING_KEY, None)
    sock = getattr(conn, "sock", None)
    if isinstance(sock, ssl.SSLSocket):
        _keep(pending[0], sock, pending[1])


def _keep(cache, ssl_object, key):
    """Keep ``ssl_object``'s session (a verified full handshake's) under ``key`` in ``cache``
    (bounded)."""
    if ssl_object.version() != "TLSv1.3":
        # TLS 1.3 tickets only, and the version is looked at first: reading ``.session`` copies
        # the session out (~0.1-0.7 ms), which stock never does.  TLS 1.2 cannot resume here:
        # urllib3's contexts ask for no TLS 1.2 tickets (OP_NO_TICKET, kept: a 1.2 ticket
        # resumption has no forward secrecy), and session-ID resumption ends when a side closes
        # without close_notify, as urllib3 does; offering such a session measurably costs CPU for
        # nothing (bench/tls_resume.py).
        return
    session = ssl_object.session
    if session is None or not session.has_ticket:
        return
    valid_until = _verified_until(ssl_object)
    if valid_until is None:
        return
    sessions = cache.sessions
    sessions.pop(key, None)  # re-inserted last: the oldest entry is the first in the dict
    while len(sessions) >= MAX_PER_CACHE:
        try:
            sessions.pop(next(iter(sessions)), None)
        except (StopIteration, RuntimeError):  # emptied or changed by another thread meanwhile
            break
    sessions[key] = (generation(), session, valid_until, ssl_object.context)


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
    seconds = [cert_time_seconds(stamp) for stamp in times]
    if None in seconds:
        return None
    return min(seconds)


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def cert_time_seconds(stamp):
    """``ssl.cert_time_to_seconds(stamp)`` without ``time.strptime``, or None if ``stamp`` is not
    in the one form OpenSSL writes (``ASN1_TIME_print`` with GMT: "Nov  8 09:30:00 2027 GMT").

    The stdlib function parses with ``time.strptime``, whose first call imports ``_strptime`` (and
    its locale machinery: ~1 ms at full CPU, several at Lambda's smallest shares) on the first
    kept session of every process -- a cost stock never pays.  The form is fixed, so plain
    arithmetic (proleptic Gregorian days since 1970, UTC, as calendar.timegm) gives the same
    integer; anything else keeps no session rather than guess (tests/hook/test_resume.py compares
    both on every month, day and leap-year boundary)."""
    if not isinstance(stamp, str):
        return None
    parts = stamp.split()
    if len(parts) != 5 or parts[4] != "GMT" or parts[0] not in _MONTHS:
        return None
    clock = parts[2].split(":")
    numbers = [parts[1], parts[3]] + clock
    if len(clock) != 3 or not all(number.isdigit() and number.isascii() for number in numbers):
        return None
    day, year, hour, minute, second = (int(number) for number in numbers)
    month = _MONTHS.index(parts[0]) + 1
    if not (1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 61):  # strptime's ranges
        return None
    # Days from 1970-01-01 to year-month-day (Howard Hinnant's days_from_civil; linear in the day,
    # so "Feb 30" runs on into March, as timegm does with what strptime accepted).
    shifted = year - (month <= 2)
    era = shifted // 400
    year_of_era = shifted - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    days = era * 146097 + day_of_era - 719468
    return ((days * 24 + hour) * 60 + minute) * 60 + second


# --- aiobotocore: aiohttp's connector ----------------------------------------------------------


def before_aio_connect(connector, key):
    """aio.py, before the connector opens a connection for ``key`` (aiohttp's ConnectionKey): offer
    a cached session; returns what after_aio_connect needs (None: neither offer nor keep).

    Only for the connector's own verifying context (aiobotocore makes one per client and
    connector; ``check_hostname`` on: OpenSSL checks the name in the handshake), no proxy, no
    per-request ``ssl`` other than that context, no fingerprint."""
    if sys.version_info < (3, 11):
        # CPython 3.10's asyncio calls wrap_bio in a copy of the task's context, so what the
        # session's ClientHello records is not seen here: when aiohttp retries a failed handshake
        # on the host's next address, the failed offer cannot end offering, and a PSK-dropping
        # middlebox costs a second connect timeout (test_resume's two-address case: 2 PSK hellos
        # where the rule is 1).  No resumption for aiobotocore on 3.10 (an opt-in on an
        # interpreter whose session getter leaks anyway: settings.session_getter_leaks).
        return None
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
    key = ("aiohttp", host, getattr(key, "port", None), host.rstrip("."))
    return _offer_for(cache_of(connector), context, key)


@_clears_offer
def after_aio_connect(protocol, token, failed):
    """aio.py, after the connector opened (or failed to open) a connection: as after_connect."""
    transport = getattr(protocol, "transport", None) if protocol is not None else None
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    return _connected(protocol, ssl_object, token, failed)


def after_aio_release(protocol):
    """aio.py, when the connector takes a connection back: as after_release."""
    pending = getattr(protocol, PENDING_KEY, None)
    if pending is None:
        return
    setattr(protocol, PENDING_KEY, None)
    transport = getattr(protocol, "transport", None)
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is not None:
        _keep(pending[0], ssl_object, pending[1])


def _offer_for(cache, context, key):
    """Set this thread's or task's offer if a live session is cached for ``key``; the token
    after_*connect take, or None when ``context`` is not one resume.py may touch (resumable)."""
    if not resumable(context):
        return None
    offer = None
    sessions = cache.sessions
    entry = sessions.get(key)
    if entry is not None:
        made_in, candidate, chain_until, made_by = entry
        if (made_in == generation() and made_by is context
                and time.time() < min(candidate.time + candidate.timeout, chain_until)):
            offer = [context, key[-1], candidate, False, made_in]
        else:
            sessions.pop(key, None)
    backoff = cache.backoffs.get(key) if offer is not None else None
    if backoff is not None and backoff[1] == NEVER:
        offer = None  # a handshake carrying an offer for this key failed: never again (_connected)
        sessions.pop(key, None)
    elif backoff is not None and backoff[1] > 0:
        cache.backoffs[key] = (backoff[0], backoff[1] - 1)  # backing off: this one offers nothing
        offer = None
        if backoff[1] == 1:
            sessions.pop(key, None)  # the last one backing off keeps a fresh session for the next offer
    if offer is not None and key not in cache.proven:
        # Not proven yet (no offer for this key has resumed): this offer is a probe, and while
        # it is in flight no other connection offers for the key.  Behind a middlebox that drops
        # PSK hellos, 8 threads connecting at once each offered the one cached session and each
        # waited a connect timeout (review of issue 34: 8 failed offers where the docstring
        # promised one); now one probes and fails, the 7 others connect as stock.  setdefault is
        # one dict operation: two threads cannot both win the probe.
        probes = cache.probes
        if len(probes) >= MAX_PER_CACHE and key not in probes:
            probes.clear()  # bounded even if a connect never reported back (nothing offers then)
        in_flight = probes.get(key)
        if in_flight is not None and in_flight[4] != offer[4]:
            probes.pop(key, None)  # a probe of the parent's (fork) or before a restore: not ours
        if probes.setdefault(key, offer) is not offer:
            offer = None
    if offer is not None:
        _offer.set(offer)
    return (cache, key, offer)


def resumable(context):
    """Whether resume.py may pass sessions through ``context``: its class is the standard library's
    SSLContext itself, whose own wrap_socket and wrap_bio are the standard library's, and no other
    code has set either on the instance.  Then (once) the instance gets resume.py's wrap_socket and
    wrap_bio, which call exactly the class's methods.

    Any other context -- a subclass (certificate pinning that overrides wrap_socket; truststore's,
    injected or left over after extract_from_ssl), a class whose methods were replaced, an instance
    some code patched -- is left as stock uses it: its own methods run on every connection,
    nothing is offered, nothing is kept.  Putting the standard library's method on such an
    instance is what skipped truststore's verification and a pinning override (issue 34)."""
    cls = type(context)
    if cls is not STDLIB_CONTEXT or cls is None:
        return False
    if cls.wrap_socket is not STDLIB_WRAP_SOCKET or cls.wrap_bio is not STDLIB_WRAP_BIO:
        return False
    own = vars(context)
    wrap_socket, wrap_bio = own.get("wrap_socket"), own.get("wrap_bio")
    if wrap_socket is None and wrap_bio is None:
        # Instance attributes shadow the class's methods for this context only.
        own["wrap_socket"] = _ResumingWrap(context, "wrap_socket")
        own["wrap_bio"] = _ResumingWrap(context, "wrap_bio")
        return True
    return (type(wrap_socket) is _ResumingWrap and wrap_socket.context() is context
            and type(wrap_bio) is _ResumingWrap and wrap_bio.context() is context)


class _ResumingWrap:
    """``context.wrap_socket`` / ``wrap_bio``: the class's own method (looked up at each call),
    with ``session=`` added for the connection now offering one (in this thread or task), only
    for the server name it was offered for, and only while that method is the standard library's
    (code that replaces the class's method later gets its method called, as stock would).

    Holds its context by weak reference: the context holds this object, and a strong reference
    back would make every client's context wait for the cyclic garbage collector to be freed."""

    __slots__ = ("context", "_name")

    def __init__(self, context, name):
        self.context = weakref.ref(context)
        self._name = name

    def __call__(self, *args, **kwargs):
        context = self.context()
        method = getattr(type(context), self._name)
        offer = _offer.get()
        if (
            offer is not None
            and offer[0] is context
            and method is _STDLIB_METHODS[self._name]
            and kwargs.get("session") is None
            and not kwargs.get("server_side")
            and kwargs.get("server_hostname") == offer[1]
        ):
            _offer.set(None)
            offer[3] = True
            kwargs["session"] = offer[2]
            wrapped = method(context, *args, **kwargs)
            offer[3] = wrapped  # the SSLSocket / SSLObject whose handshake carries the offer
            return wrapped
        return method(context, *args, **kwargs)


def report(error):
    diagnostics.report_once(
        "tls resume", "TLS session resumption failed: %r; new connections do full handshakes as "
        "stock" % (error,)
    )
