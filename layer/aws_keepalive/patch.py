"""Patch botocore (any version from 1.12.17 on) once it is imported: socket options, pool, idle.

Three independent patches, each applied only when it has something to do, each guarded: if one
fails (an unexpected botocore), it is reported once and that part of botocore stays stock.

1. Socket options.  ``ClientArgsCreator._compute_socket_options`` is the one place every botocore
   client's socket options come from (since 1.12.17; it grew a ``client_config`` argument at
   1.27.84).  botocore adds SO_KEEPALIVE there when asked to, but never the probe timers, so the
   kernel's defaults apply: first probe after 7200 s, far beyond the 350 s after which NAT
   gateways, NLBs and VPC endpoints forget a flow.  The wrapper decides whether keep-alive is
   wanted with the precedence modern botocore (1.42.29+) uses -- ``Config(tcp_keepalive=...)``,
   then the session's config store (``session.set_config_variable``, a config provider; from
   1.42.29 the store also holds the next two), then ``BOTOCORE_TCP_KEEPALIVE`` (only ever the
   user's: the layer does not export it), then the profile's ``tcp_keepalive`` -- with the
   layer's "on" as the last word, and then adds SO_KEEPALIVE with TCP_KEEPIDLE, TCP_KEEPINTVL and
   TCP_KEEPCNT, or leaves all of them out.

2. Pool size.  ``Session.create_client`` gets ``Config(max_pool_connections=N)`` merged under the
   caller's config when neither the caller's config nor the session's default config sets it.

3. Idle replacement and connection diagnostics.  botocore's own urllib3 pool classes
   (``AWSHTTP(S)ConnectionPool``; urllib3's classes are left alone for other libraries) note
   when each connection went back to the pool; when it is taken out again after more than
   ``max_idle_s`` (or the host's learned idle limit, idle.py), it is closed and urllib3
   reconnects it before sending -- one clean handshake instead of a reset and a retry (or a
   hang) on a flow a middlebox has forgotten.  botocore's connection classes time ``connect()``
   (TCP + TLS) and say why a connection was opened (debug line, ``NewConnections`` metric).

   Stale reuses.  The pool's ``_make_request`` (urllib3 1.x and 2.x: send the request, read the
   status line and headers; ``conn`` its first argument) is where a dead flow shows: a reused
   connection whose request fails there failed before any response byte.  Only the first
   request after a connection left the pool pays a try block; the others go straight through.
   Reset, broken pipe, remote disconnect and read timeout are the errors botocore maps to
   ConnectionClosedError / ReadTimeoutError and retries (legacy and standard modes alike): each
   is counted (``StaleReuses``), reported once per host with the settings in force, and teaches
   idle.py the host's idle limit -- a read timeout only when the kernel says the peer never
   acknowledged the request (TCP_INFO, read before urllib3 closes the socket): a slow server
   acknowledges it and then takes its time, which is no dead flow.  A request that got its
   response teaches idle.py the longest idle known to survive.
"""

import functools
import os
import socket
import threading
import time

from aws_keepalive import diagnostics, idle, metrics, resume
from aws_keepalive.wrap import wrap as _wrap

def apply(settings):
    """Apply every patch that ``settings`` asks for to the botocore that was just imported."""
    import botocore

    version = getattr(botocore, "__version__", "unknown")
    path = os.path.dirname(os.path.abspath(botocore.__file__))
    _warn_if_shadowed(version, path)
    steps = [("socket options", _patch_socket_options)]
    if settings.pool_size is not None:
        steps.append(("pool size", _patch_pool_size))
    if settings.gc_init:
        steps.append(("gc at init", _patch_first_client))
    # Always: besides max idle, the pool patch notices stale reuses (counted, reported, learned
    # from) whatever max idle is, and restores (snapstart.py) even when max idle is off.
    idle.learn = settings.learn
    resume.enabled = settings.tls_resume
    steps.append(("connection pool", _patch_connection_pool))
    if settings.trust_once:
        from . import trust  # only when asked for: it imports ssl

        steps.append(("trust store", trust.patch))
        steps.append(("client certificate at connect", _check_client_cert_at_connect))
    if settings.prepared:
        index = _prepared_index(version)
        if index is not None:
            from . import prepared  # only when there is an index for this botocore release

            steps.append(("data loader", lambda *_: prepared.patch(index)))
        else:
            diagnostics.debug("prepared data: none for botocore %s (at %s); stock loading" % (version, path))
    for name, step in steps:
        try:
            step(settings, version, path)
        except Exception as error:
            diagnostics.report_once(
                "patch " + name,
                "could not patch the %s of botocore %s (%s): %r; that part stays stock botocore"
                % (name, version, path, error),
            )
    diagnostics.debug("patched botocore %s at %s" % (version, path), botocore_version=version)


# --- 1. socket options ------------------------------------------------------------------------


def _patch_socket_options(settings, version, path):
    from botocore.args import ClientArgsCreator

    if not hasattr(ClientArgsCreator, "_compute_socket_options"):
        diagnostics.warn(
            "botocore %s (%s) is older than 1.12.17 and has no socket options to extend; "
            "keep-alive timers are not applied" % (version, path)
        )
        return
    timers = [
        (socket.IPPROTO_TCP, getattr(socket, option), value)
        for option, value in (
            ("TCP_KEEPIDLE", settings.keepidle_s),
            ("TCP_KEEPINTVL", settings.keepintvl_s),
            ("TCP_KEEPCNT", settings.keepcnt),
        )
        # Linux has all three; the layer may also be loaded on a developer's macOS.
        if hasattr(socket, option)
    ]
    ours = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)] + timers
    ours_keys = set(option[:2] for option in ours)

    def make_wrapper(original):
        def _compute_socket_options(self, scoped_config, *args, **kwargs):
            options = original(self, scoped_config, *args, **kwargs)
            try:
                # 1.27.84+ pass the client's Config; older versions have no tcp_keepalive in it.
                client_config = args[0] if args else kwargs.get("client_config")
                kept = [option for option in options if tuple(option[:2]) not in ours_keys]
                config_store = getattr(self, "_config_store", None)
                if keepalive_wanted(settings, scoped_config, client_config, config_store):
                    return kept + ours
                return kept
            except Exception as error:
                diagnostics.report_once(
                    "socket options",
                    "could not compute keep-alive socket options: %r; using botocore's" % (error,),
                )
                return options

        return _compute_socket_options

    _wrap(ClientArgsCreator, "_compute_socket_options", make_wrapper)


def keepalive_wanted(settings, scoped_config, client_config, config_store=None):
    """Whether a client gets TCP keep-alive: explicit user settings first, then the layer (on)."""
    explicit = getattr(client_config, "tcp_keepalive", None)
    if explicit is not None:
        return bool(explicit)
    # The config store answers None for "nobody set it": its default is None in every botocore
    # (1.42.29+ map tcp_keepalive to the session variable, BOTOCORE_TCP_KEEPALIVE and the
    # profile, default None; older ones map nothing, so only a provider the user registered or an
    # override answers).  So any other value was set by someone, and botocore 1.42.29+ read it by
    # truth value, unconverted when it is an override (set_config_variable('tcp_keepalive',
    # 'True') is on): the same test here, so that a False that reaches botocore this way wins.
    if config_store is not None:
        stored = config_store.get_config_variable("tcp_keepalive")
        if stored is not None:
            return bool(stored)
    # The layer never sets BOTOCORE_TCP_KEEPALIVE, so a value here is the user's (set before
    # startup or by the function's code since) and wins over a profile, as in botocore 1.42.29+.
    env_value = os.environ.get("BOTOCORE_TCP_KEEPALIVE")
    if env_value is not None:
        return env_value.strip().lower() == "true"
    profile_value = scoped_config.get("tcp_keepalive") if scoped_config else None
    if profile_value is not None:
        if isinstance(profile_value, bool):
            return profile_value
        return str(profile_value).strip().lower() == "true"
    return True


# --- the first client ends the init's GC setting (gcinit.py) ---------------------------------


def _patch_first_client(settings, version, path):
    # ClientCreator's, not Session's create_client (which the pool-size patch wraps: one wrapper per
    # function, wrap.py): every client of every session is made by it, boto3's too.
    from botocore.client import ClientCreator

    from . import gcinit

    if not gcinit.pending():
        return

    def make_wrapper(original):
        def create_client(self, *args, **kwargs):
            try:
                return original(self, *args, **kwargs)
            finally:
                if gcinit.pending():
                    gcinit.end()

        return create_client

    _wrap(ClientCreator, "create_client", make_wrapper)


# --- 2. pool size -----------------------------------------------------------------------------


def _patch_pool_size(settings, version, path):
    import inspect

    from botocore.config import Config
    from botocore.session import Session

    # ``config`` is a keyword for boto3, but may be passed by position: find its index once.
    parameters = list(inspect.signature(Session.create_client).parameters)
    config_index = parameters.index("config") - 1  # without self

    def make_wrapper(original):
        def create_client(self, *args, **kwargs):
            try:
                config = config_argument(args, kwargs, config_index)
                if not sets_pool_size(config) and not sets_pool_size(
                    self.get_default_client_config()
                ):
                    ours = Config(max_pool_connections=settings.pool_size)
                    config = ours if config is None else ours.merge(config)
                    args, kwargs = with_config_argument(args, kwargs, config_index, config)
            except Exception as error:
                diagnostics.report_once(
                    "pool size", "could not set max_pool_connections: %r; using botocore's" % (error,)
                )
            return original(self, *args, **kwargs)

        return create_client

    _wrap(Session, "create_client", make_wrapper)


def sets_pool_size(config):
    """True when ``config`` (a botocore Config or aiobotocore AioConfig) sets max_pool_connections."""
    return config is not None and "max_pool_connections" in getattr(
        config, "_user_provided_options", {}
    )


def config_argument(args, kwargs, config_index):
    """The ``config`` a create_client call was given, by position or by keyword (None: none)."""
    return args[config_index] if len(args) > config_index else kwargs.get("config")


def with_config_argument(args, kwargs, config_index, config):
    """``(args, kwargs)`` of that call with ``config`` put where the caller passed it (or as keyword)."""
    if len(args) > config_index:
        return args[:config_index] + (config,) + args[config_index + 1 :], kwargs
    return args, dict(kwargs, config=config)


# --- 3. idle replacement and connection diagnostics -------------------------------------------

# Guards the per-pool count of connections taken out and not yet returned (several threads share
# one client's pool).
_checked_out_lock = threading.RLock()


def _patch_connection_pool(settings, version, path):
    from botocore import awsrequest

    for pool_class in (awsrequest.AWSHTTPConnectionPool, awsrequest.AWSHTTPSConnectionPool):
        _wrap(pool_class, "_get_conn", functools.partial(_make_get_conn, settings))
        _wrap(pool_class, "_put_conn", _make_put_conn)
        _wrap(pool_class, "_make_request", functools.partial(_make_make_request, settings))
    _wrap(awsrequest.AWSHTTPConnection, "connect", functools.partial(_make_connect, "TCP"))
    _wrap(awsrequest.AWSHTTPSConnection, "connect", functools.partial(_make_connect, "TCP + TLS"))


def _make_get_conn(settings, original):
    def _get_conn(self, *args, **kwargs):
        opened_before = self.num_connections
        conn = original(self, *args, **kwargs)
        try:
            _before_use(self, conn, opened_before, settings.max_idle_s)
        except Exception as error:
            diagnostics.report_once("get_conn", "connection check failed: %r" % (error,))
        if resume.enabled and conn is not None:
            try:
                resume.attach(self, conn)  # the pool owns the TLS session cache (resume.Cache)
            except Exception as error:
                resume.report(error)
        return conn

    return _get_conn


def _before_use(pool, conn, opened_before, max_idle_s):
    """Label why ``conn`` will (re)connect, and close it first if it sat idle too long."""
    with _checked_out_lock:
        others_checked_out = getattr(pool, "_aws_keepalive_checked_out", 0)
        pool._aws_keepalive_checked_out = others_checked_out + 1
    conn._aws_keepalive_reused_idle_s = None  # set below only if this checkout reuses it
    if getattr(conn, "_aws_keepalive_idle_since", None) is None:
        # Never went back to the pool, so urllib3 made it just now: the pool's first, or one
        # beside connections that other threads hold, or the replacement of one discarded after
        # an error.  Decided from the connection's own stamp, not from the pool's count: another
        # thread may open a connection (and grow the count) while this one takes a stale pooled
        # connection, which must still get the max-idle check below (found by the fault soak).
        if opened_before == 0:
            conn._aws_keepalive_reason = "first use"
        elif others_checked_out:
            conn._aws_keepalive_reason = "pool full"
        else:
            conn._aws_keepalive_reason = "peer closed"
    elif getattr(conn, "sock", None) is None:
        # urllib3 saw the peer's FIN or RST while the connection sat in the pool and closed it.
        conn._aws_keepalive_reason = "peer closed"
    else:
        reason, idle_s, answered_s = idle.replace_reason(
            getattr(conn, "_aws_keepalive_idle_since", None), conn.sock, max_idle_s, conn.host
        )
        if reason is not None:
            conn.close()
            conn._aws_keepalive_reason = reason
            return
        # Reused: the first request on it is watched for a dead flow (_make_request).
        conn._aws_keepalive_reused_idle_s = idle_s
        if answered_s is not None:
            if metrics.enabled:
                metrics.reused_after_probe()
            diagnostics.debug(
                "reusing connection to %s:%s idle %.0f s: keep-alive answered %.1f s ago"
                % (conn.host, conn.port, idle_s, answered_s),
                host=conn.host,
                idle_s=round(idle_s, 3),
                keepalive_answered_s=answered_s,
            )


def _make_put_conn(original):
    def _put_conn(self, conn, *args, **kwargs):
        try:
            with _checked_out_lock:
                self._aws_keepalive_checked_out = max(
                    0, getattr(self, "_aws_keepalive_checked_out", 0) - 1
                )
            if conn is not None:
                conn._aws_keepalive_idle_since = idle.stamp()
        except Exception as error:
            diagnostics.report_once("put_conn", "connection bookkeeping failed: %r" % (error,))
        if resume.enabled and conn is not None:
            try:
                resume.after_release(conn)
            except Exception as error:
                resume.report(error)
        return original(self, conn, *args, **kwargs)

    return _put_conn


def _make_make_request(settings, original):
    def _make_request(self, *args, **kwargs):
        conn = args[0] if args else kwargs.get("conn")
        idle_s = getattr(conn, "_aws_keepalive_reused_idle_s", None)
        if idle_s is None:
            return original(self, *args, **kwargs)
        conn._aws_keepalive_reused_idle_s = None
        started = time.monotonic()
        try:
            response = original(self, *args, **kwargs)
        except Exception as error:
            # Before urllib3 closes the connection: a read timeout needs its socket's TCP_INFO.
            stale_reuse(settings, conn.host, conn.port, idle_s, error, "botocore",
                        sock=getattr(conn, "sock", None), elapsed_s=time.monotonic() - started)
            raise
        try:
            if idle.learn:
                idle.reused_ok(conn.host, idle_s)
        except Exception as error:
            diagnostics.report_once("reuse", "connection bookkeeping failed: %r" % (error,))
        return response

    return _make_request


# Exceptions (by class name, found anywhere in the chain) that say the flow under a reused
# connection was dead before any response byte came back, and what to call each.  By name, so
# that neither urllib3 nor aiohttp needs importing; subclasses are matched through the MRO.
_STALE_NAMES = {
    "RemoteDisconnected": "remote disconnect",  # http.client: the status line read got EOF
    "ServerDisconnectedError": "remote disconnect",  # aiohttp
    "SSLEOFError": "remote disconnect",
    "SSLZeroReturnError": "remote disconnect",
    "BrokenPipeError": "broken pipe",
    "ConnectionResetError": "reset",
    "ConnectionAbortedError": "reset",
    "ReadTimeoutError": "read timeout",  # urllib3 and botocore
    "ServerTimeoutError": "read timeout",  # aiohttp (sock_read); a connect timeout is excluded
    "TimeoutError": "read timeout",  # socket.timeout (3.10+), asyncio.TimeoutError (3.11+)
    "timeout": "read timeout",  # socket.timeout before 3.10
}
# Not a dead flow: the response had started (aiohttp reads the body inside send), or a connect.
_NOT_STALE_NAMES = ("ClientPayloadError", "ConnectTimeoutError", "ConnectTimeout")


def stale_kind(error):
    """'reset', 'broken pipe', 'remote disconnect' or 'read timeout' if ``error`` (or what it wraps:
    ``__cause__``, ``__context__``, botocore's ``kwargs['error']``) says a reused connection's flow
    was dead; None for anything else."""
    import errno

    seen = 0
    while error is not None and seen < 8:
        seen += 1
        names = [cls.__name__ for cls in type(error).__mro__]
        if any(name in _NOT_STALE_NAMES for name in names):
            return None
        if "ServerTimeoutError" in names and str(error).lower().startswith("connect"):
            return None
        for name in names:
            if name in _STALE_NAMES:
                return _STALE_NAMES[name]
        number = getattr(error, "errno", None)  # aiohttp's ClientOSError carries the errno
        if number in (errno.ECONNRESET, errno.ECONNABORTED):
            return "reset"
        if number == errno.EPIPE:
            return "broken pipe"
        wrapped = getattr(error, "kwargs", None)
        wrapped = wrapped.get("error") if isinstance(wrapped, dict) else None
        error = wrapped or error.__cause__ or error.__context__
    return None


def stale_reuse(settings, host, port, idle_s, error, family, sock=None, elapsed_s=None):
    """A request on a connection reused after ``idle_s`` failed with ``error``: if that is a dead
    flow, count it, learn from it, and say so (once per host and process; debug lines each time).

    A read timeout is a dead flow only if the peer never acknowledged the request (``sock``, the
    connection's socket, still open, and nothing acknowledged in the ``elapsed_s`` since the
    request started: idle.request_unacknowledged); a slow server's read timeout, or a send that
    timed out against a live server that stopped reading, is not a stale reuse and teaches
    nothing."""
    try:
        kind = stale_kind(error)
        if kind is None:
            return
        unacknowledged = (idle.request_unacknowledged(sock, elapsed_s) if kind == "read timeout"
                          else True)
        if not unacknowledged:
            evidence = "no TCP_INFO to tell" if unacknowledged is None else "acknowledged by the peer"
            diagnostics.debug(
                "read timeout on a connection to %s:%s reused after %.1f s idle, the request %s: "
                "not counted as a dead flow, nothing learned (%s)" % (host, port, idle_s, evidence,
                                                                       family),
                host=host, port=port, idle_s=round(idle_s, 3),
            )
            return
        learned_s = idle.reused_stale(host, idle_s)
        if metrics.enabled:
            metrics.stale_reuse()
        if learned_s is None:
            learned = "learning is off (AWS_PYTHON_KEEPALIVE_LEARN=0)"
        elif learned_s >= settings.max_idle_s:
            learned = "max idle (%s s) stays the limit for %s" % (settings.max_idle_s, host)
        else:
            learned = "%s's pooled connections are now replaced once idle %.1f s (learned idle)" % (
                host,
                learned_s,
            )
        message = (
            "stale pooled connection to %s:%s: reused after %.1f s idle, it met a %s before any "
            "response byte (%s); %s retries on a new connection; %s; settings: %s"
            % (host, port, idle_s, kind, type(error).__name__, family, learned, settings.describe())
        )
        fields = dict(host=host, port=port, idle_s=round(idle_s, 3), error=kind,
                      learned_idle_s=None if learned_s is None else round(learned_s, 3))
        if not diagnostics.report_once("stale reuse " + str(host), message, open_set=True, **fields):
            diagnostics.debug(message, **fields)  # the warning went out once; details each time
    except Exception as failure:
        diagnostics.report_once("stale reuse", "stale reuse bookkeeping failed: %r" % (failure,))


# trust.give_changed_files once the trust store is patched (apply): every TLS connect asks it
# first whether its connection object must load rotated client certificate files (trust.py).
_before_tls_connect = None


def _check_client_cert_at_connect(settings, version, path):
    global _before_tls_connect
    from . import trust

    _before_tls_connect = trust.give_changed_files


def _make_connect(handshake, original):
    tls = handshake != "TCP"

    def connect(self, *args, **kwargs):
        if tls and _before_tls_connect is not None:
            try:
                _before_tls_connect(self)
            except Exception as error:
                diagnostics.report_once("client cert at connect", "could not check the client certificate "
                                        "files at connect: %r" % (error,))
        reason = getattr(self, "_aws_keepalive_reason", None) or "first use"
        offer = None
        if tls and resume.enabled:
            try:
                offer = resume.before_connect(self)
            except Exception as error:
                resume.report(error)
        started = time.perf_counter()
        try:
            result = original(self, *args, **kwargs)
        except BaseException:
            if tls and resume.enabled:
                resume.after_connect(self, offer, True)
            raise
        connect_ms = (time.perf_counter() - started) * 1000.0
        session = resume.after_connect(self, offer, False) if tls and resume.enabled else None
        if metrics.enabled:
            metrics.new_connection(reason, connect_ms)
            if session is not None:
                metrics.tls_session(session)
        if diagnostics.debug_enabled:
            fields = dict(host=self.host, port=self.port, reason=reason,
                          connect_ms=round(connect_ms, 3))
            what = handshake
            if session is not None:
                # "resumed", "not resumed" (offered, the server did a full handshake), "full"
                what += ", TLS session " + session if session != "full" else ", full TLS handshake"
                fields["tls_session"] = session
            diagnostics.debug(
                "new connection to %s:%s (%s) in %.1f ms (%s)"
                % (self.host, self.port, reason, connect_ms, what),
                **fields,
            )
        self._aws_keepalive_reason = None
        return result

    return connect


# --- prepared data ---------------------------------------------------------------------------


def _prepared_index(version):
    """The index file the layer build prepared for this botocore release,
    ``aws_keepalive/prepared-data/botocore-<version>.pickle`` (the full flavor's own release, the
    hook flavor's runtime releases), or None.  Which data folder it may answer for is decided by
    prepared.py, at first use.

    Checked here, with one stat, so that where there is none (a release the build did not prepare,
    the source tree) neither prepared.py nor pickle is imported (docs/coldstart.md, import
    findings).  The one place the index's name is made at run time (tools/packaging/prepare_data.py writes
    it)."""
    if not version or version.startswith(".") or "/" in version or os.sep in version:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    index = os.path.join(here, "prepared-data", "botocore-%s.pickle" % version)
    return index if os.path.isfile(index) else None


# --- shadowing copies -------------------------------------------------------------------------


def _warn_if_shadowed(version, path):
    """Warn when the function's own botocore (e.g. in /var/task) wins over the layer's copy."""
    layer_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    layer_botocore = os.path.join(layer_root, "botocore")
    if not os.path.isdir(layer_botocore):
        return
    if os.path.realpath(layer_botocore) == os.path.realpath(path):
        return
    layer_version = "unknown"
    for entry in sorted(os.listdir(layer_root)):
        if entry.startswith("botocore-") and entry.endswith(".dist-info"):
            layer_version = entry[len("botocore-") : -len(".dist-info")]
    diagnostics.warn(
        "botocore %s at %s shadows the layer's botocore %s at %s (the function bundles its own "
        "copy); keep-alive is applied to the copy in use" % (version, path, layer_version, layer_botocore),
        botocore_version=version,
        botocore_path=path,
    )
