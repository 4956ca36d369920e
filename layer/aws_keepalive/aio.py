"""Patch aiobotocore (2.x and 3.x; so aioboto3 too) once it is imported: socket options, pool, idle.

aiobotocore builds on botocore but sends through aiohttp: its ``AIOHTTPSession`` receives the
socket options botocore computed and ignores them (``# TODO: handle socket_options`` in its
source), so its connections get no keep-alive at all.  aiobotocore pins its own botocore, which a
function bundles and which then shadows the layer's: that copy is patched by patch.py like any
other (hook.py watches ``botocore.session``, which ``aiobotocore.session`` imports first), and
this module patches aiobotocore on top.  The pieces:

1. Socket options.  The options botocore's (patched) ``_compute_socket_options`` produced reach
   ``AIOHTTPSession`` as ``socket_options`` -- SO_KEEPALIVE with the probe timers, or none when
   the user's ``AioConfig(tcp_keepalive=False)`` / BOTOCORE_TCP_KEEPALIVE / profile says so: the
   precedence is botocore's, decided in one place.  Each connection the session's aiohttp
   connector opens gets them with setsockopt right after connect (the socket factory hook that
   aiohttp grew in 3.12 does not exist in the 3.9 - 3.11 lines aiobotocore 2.x allows; options
   set after connect take effect the same way, as no probe is due during a handshake).  A
   ``socket_factory`` in the user's ``connector_args`` is theirs: then nothing is set.

2. Pool size.  ``AioSession._create_client`` gets ``AioConfig(max_pool_connections=N)`` merged
   under the caller's config when neither it nor the session's default config sets it; aiohttp
   takes it as the connector's ``limit``.  The layer's range (1 - 1000, settings.py) lies inside
   aiohttp's (any positive integer; 0 would mean unlimited), so an out-of-range value is already
   refused with a warning naming the variable and the default (aiobotocore's 10) is kept.

3. Idle replacement and connection diagnostics.  aiohttp closes pooled connections idle longer
   than ``keepalive_timeout`` (aiobotocore: 12 s) by a loop callback and by a check on reuse,
   both on the loop's monotonic clock.  Neither helps after a freeze: a module-level client on a
   persistent loop may come back to a pooled connection whose flow a NAT forgot.  So each
   connector (patched per instance, aiohttp's classes stay untouched for other libraries) notes
   when a connection went back to its pool (``idle.stamp()``) and, before aiohttp picks one for
   reuse, closes those ``idle.replace_reason()`` calls stale -- the same rule, reasons and TCP_INFO
   proof of life as for botocore.  Debug lines say why each new connection was opened; a
   connection aiohttp itself dropped for idleness shows as "keepalive_timeout".

4. Peer closed while the loop did not run.  Before the same pick, a pooled connection whose
   socket is readable (the endpoint's FIN or RST arrived while the environment was frozen, unread
   because aiohttp reads only when its loop runs) is closed too, "peer closed": urllib3's check
   before reuse, which botocore's own pool already has (``_readable``).

5. Stale reuses.  ``AIOHTTPSession.send`` (aiobotocore's class) runs each request with a note
   in a context variable; the connector's ``_get`` adds to it the idle time of the pooled
   connection it hands out, ``_create_connection`` a mark for a new one.  A send that fails
   with a dead-flow error (patch.stale_kind) after a reuse, or that succeeded only on a new
   connection after one (aiohttp's own retry of an idempotent request), is a stale reuse:
   counted, reported once per host and taught to idle.py, as for botocore.  aiobotocore reads
   the body inside ``send``; a payload error (the response had started) is not counted.

Only ``AIOHTTPSession`` is covered.  aiobotocore 3.x also offers an httpx backend
(``AioConfig(http_session_cls=HttpxSession)``); a client using it gets one warning saying it is
not covered (httpx pools in httpcore, with other internals; see docs/async.md).
"""

import contextvars
import os
import select
import time

from aws_keepalive import diagnostics, idle, metrics, patch, resume
from aws_keepalive.wrap import wrap

# During one AIOHTTPSession.send: a list of (host, port, idle_s, socket) for each pooled connection the
# connector handed out, and None for each new connection (see 5. above).
_send_note = contextvars.ContextVar("aws_keepalive_send_note", default=None)

# Reason for a connection aiohttp closed itself because it sat idle past keepalive_timeout.
KEEPALIVE_TIMEOUT = "keepalive_timeout"
# Reason for a connection the endpoint closed (or sent something unasked on) while it rested.
PEER_CLOSED = "peer closed"


def apply(settings):
    """Apply every aiobotocore patch ``settings`` asks for; each part fails on its own."""
    import aiobotocore

    version = getattr(aiobotocore, "__version__", "unknown")
    path = os.path.dirname(os.path.abspath(aiobotocore.__file__))
    resume.enabled = settings.tls_resume  # as patch.apply sets it (botocore is patched first)
    steps = [("create_client", _patch_create_client), ("HTTP session", _patch_http_session)]
    for name, step in steps:
        try:
            step(settings)
        except Exception as error:
            diagnostics.report_once(
                "aio " + name,
                "could not patch the %s of aiobotocore %s (%s): %r; that part stays stock aiobotocore"
                % (name, version, path, error),
            )
    diagnostics.debug(
        "patched aiobotocore %s at %s" % (version, path), aiobotocore_version=version
    )


# --- client creation: pool size, and warnings about what the layer leaves alone ----------------


def _patch_create_client(settings):
    import inspect

    from aiobotocore.config import AioConfig
    from aiobotocore.session import AioSession

    # ``config`` may be passed by position: find its index once (without self).  Read from the
    # code object behind aiobotocore's decorator (functools.wraps): inspect.signature would cost
    # 60 us, half of this whole patch.
    code = inspect.unwrap(AioSession._create_client).__code__
    parameters = code.co_varnames[: code.co_argcount]
    config_index = parameters.index("config") - 1

    def make_wrapper(original):
        # aiobotocore's _create_client is a coroutine function; this wrapper only rewrites the
        # arguments and hands back the coroutine, so it works whatever awaits it.
        def _create_client(self, *args, **kwargs):
            try:
                config = patch.config_argument(args, kwargs, config_index)
                default_config = self.get_default_client_config()
                _warn_about_user_config(config)
                _warn_about_user_config(default_config)
                if (
                    settings.pool_size is not None
                    and not patch.sets_pool_size(config)
                    and not patch.sets_pool_size(default_config)
                ):
                    ours = AioConfig(max_pool_connections=settings.pool_size)
                    # The caller's merge keeps its connector_args (AioConfig 2.x rebuilds a merge
                    # from the left-hand side's connector_args); it sets no pool size, so ours
                    # cannot override anything of the caller's.
                    config = ours if config is None else config.merge(ours)
                    args, kwargs = patch.with_config_argument(args, kwargs, config_index, config)
            except Exception as error:
                diagnostics.report_once(
                    "aio pool size",
                    "could not set max_pool_connections for aiobotocore: %r; using aiobotocore's"
                    % (error,),
                )
            return original(self, *args, **kwargs)

        return _create_client

    wrap(AioSession, "_create_client", make_wrapper)


def _warn_about_user_config(config):
    """One warning each for connector_args the user set and for a non-aiohttp HTTP session."""
    if config is None:
        return
    from aiobotocore.httpsession import AIOHTTPSession

    session_class = getattr(config, "http_session_cls", None)
    if isinstance(session_class, type) and not issubclass(session_class, AIOHTTPSession):
        diagnostics.report_once(
            "aio http_session_cls " + session_class.__name__,
            "AioConfig(http_session_cls=%s) is not covered by the layer: its connections get no "
            "keep-alive timers and no idle replacement (only aiobotocore's aiohttp session is)"
            % session_class.__name__,
            open_set=True,
        )
    connector_args = getattr(config, "connector_args", None) or {}
    users = {
        name: value
        for name, value in connector_args.items()
        if not (name == "keepalive_timeout" and value == _default_keepalive_timeout())
    }
    if users:
        note = (
            "its socket_factory makes the sockets, so the layer sets no socket options"
            if "socket_factory" in users
            else "the layer still sets keep-alive timers on each connection"
        )
        # Keyed by kind -- which names win -- not by the values: a resolver, ssl_context or
        # socket_factory is a new object (a new repr, with its address) for every client, and the
        # common ``async with session.create_client(...)`` per request would warn per request.
        diagnostics.report_once(
            "aio connector_args " + ",".join(sorted(users)),
            "AioConfig(connector_args=%r) set by the function wins over the layer's connector "
            "settings; %s" % (users, note),
            connector_args=repr(users),
            open_set=True,
        )


def _default_keepalive_timeout():
    try:
        from aiobotocore._constants import DEFAULT_KEEPALIVE_TIMEOUT
    except ImportError:  # 2.x before the constants module
        DEFAULT_KEEPALIVE_TIMEOUT = 12
    return DEFAULT_KEEPALIVE_TIMEOUT


# --- the HTTP session: patch each connector it creates ------------------------------------------


def _patch_http_session(settings):
    from aiobotocore.httpsession import AIOHTTPSession

    def make_wrapper(original):
        async def _get_session(self, *args, **kwargs):
            session = await original(self, *args, **kwargs)
            try:
                connector = session.connector
                if connector is not None and not getattr(connector, "_aws_keepalive", None):
                    socket_options = list(getattr(self, "_socket_options", None) or [])
                    connector_args = getattr(self, "_connector_args", None) or {}
                    if "socket_factory" in connector_args:
                        socket_options = []
                    _patch_connector(connector, socket_options, settings.max_idle_s)
            except Exception as error:
                diagnostics.report_once(
                    "aio connector",
                    "could not patch aiobotocore's aiohttp connector: %r; its connections behave "
                    "as stock aiobotocore" % (error,),
                )
            return session

        return _get_session

    wrap(AIOHTTPSession, "_get_session", make_wrapper)
    idle.learn = settings.learn

    def make_send(original):
        async def send(self, *args, **kwargs):
            note = []
            token = _send_note.set(note)
            started = time.monotonic()
            try:
                response = await original(self, *args, **kwargs)
            except Exception as error:
                reused = [entry for entry in note if entry is not None]
                if reused:
                    host, port, idle_s, sock = reused[-1]
                    patch.stale_reuse(settings, host, port, idle_s, error, "aiobotocore", sock=sock,
                                      elapsed_s=time.monotonic() - started)
                raise
            finally:
                _send_note.reset(token)
            try:
                _after_send(settings, note)
            except Exception as error:
                diagnostics.report_once("aio reuse", "connection bookkeeping failed: %r" % (error,))
            return response

        return send

    wrap(AIOHTTPSession, "send", make_send)


class _RetriedByAiohttp(Exception):
    """Stands for the error aiohttp swallowed when it retried a request on a new connection."""


def _after_send(settings, note):
    if not note:
        return
    if note[-1] is not None:
        if idle.learn:
            host, _, idle_s, _ = note[-1]
            idle.reused_ok(host, idle_s)
        return
    reused = [entry for entry in note if entry is not None]
    if reused:
        # A pooled connection was handed out, then a new one opened in the same send: aiohttp
        # met a dead flow and retried by itself (it does for idempotent methods).
        host, port, idle_s, _ = reused[-1]
        patch.stale_reuse(
            settings, host, port, idle_s, ConnectionResetError("retried by aiohttp"), "aiohttp"
        )


class _ConnectorState:
    """What the layer remembers about one aiohttp connector (it goes with the connector).

    Bounded for a connector that lives for days and talks to thousands of hosts (S3 bucket
    names): ``resting`` follows aiohttp's pool -- entries of connections aiohttp dropped by itself
    (its keepalive_timeout cleanup, a peer's close) are swept out whenever the map has doubled
    since the last sweep (``_sweep``: amortised O(1) per release, never more than twice the pool
    plus ``SWEEP_SLACK``) -- and ``reasons`` / ``opened`` keep the ``MAX_KEYS`` keys used last (a
    key dropped from them only labels its next new connection "first use").
    """

    SWEEP_SLACK = 64
    MAX_KEYS = 1024

    def __init__(self, socket_options, max_idle_s):
        self.socket_options = socket_options
        self.max_idle_s = max_idle_s
        # id(protocol) -> (key, protocol, stamp) for each connection resting in the pool.
        self.resting = {}
        self.sweep_at = self.SWEEP_SLACK
        # key -> why the next connection for it is opened (set when a pooled one was dropped).
        self.reasons = {}
        # keys that had a connection already (a dict: insertion order says which came first).
        self.opened = {}

    def set_reason(self, key, reason):
        self.reasons.pop(key, None)
        self.reasons[key] = reason
        _trim(self.reasons, self.MAX_KEYS)

    def mark_opened(self, key):
        self.opened.pop(key, None)
        self.opened[key] = True
        _trim(self.opened, self.MAX_KEYS)


def _trim(table, size):
    while len(table) > size:
        del table[next(iter(table))]


def _sweep(connector, state):
    """Drop ``resting`` entries of connections no longer in the connector's pool."""
    pooled = set(id(entry[0]) for conns in connector._conns.values() for entry in conns)
    for protocol_id in [p for p in state.resting if p not in pooled]:
        del state.resting[protocol_id]
    state.sweep_at = 2 * len(state.resting) + state.SWEEP_SLACK


def _patch_connector(connector, socket_options, max_idle_s):
    """Wrap this connector's _get, _release and _create_connection (instance attributes).

    Instance attributes, not class patches: aiohttp's connector classes serve every aiohttp user
    in the function, and only aiobotocore's connectors are the layer's business.  The three
    methods exist with these roles in every aiohttp from 3.9 on (``_get`` is synchronous before
    3.10 and a coroutine after; the wrapper runs its check first and returns what the original
    returns, so it fits both).
    """
    state = _ConnectorState(socket_options, max_idle_s)
    original_get = connector._get
    original_release = connector._release
    original_create = connector._create_connection
    keepalive_timeout = getattr(connector, "_keepalive_timeout", None)

    def _get(key, *args, **kwargs):
        try:
            _drop_stale(connector, state, key, keepalive_timeout)
        except Exception as error:
            diagnostics.report_once("aio get", "connection check failed: %r" % (error,))
        result = original_get(key, *args, **kwargs)
        if hasattr(result, "__await__"):  # aiohttp 3.10+: a coroutine
            return _noted(result, key)
        _note_reuse(state, key, result)
        return result

    async def _noted(awaitable, key):
        result = await awaitable
        _note_reuse(state, key, result)
        return result

    def _release(key, protocol, *args, **kwargs):
        if resume.enabled:
            try:
                resume.after_aio_release(protocol)  # before aiohttp may close it
            except Exception as error:
                resume.report(error)
        result = original_release(key, protocol, *args, **kwargs)
        try:
            pooled = connector._conns.get(key) or ()
            if any(entry[0] is protocol for entry in pooled):
                state.resting[id(protocol)] = (key, protocol, idle.stamp())
            if len(state.resting) > state.sweep_at:
                _sweep(connector, state)
        except Exception as error:
            diagnostics.report_once("aio release", "connection bookkeeping failed: %r" % (error,))
        return result

    async def _create_connection(req, *args, **kwargs):
        key = getattr(req, "connection_key", None)
        reason = state.reasons.pop(key, None)
        if reason is None:
            if key not in state.opened:
                reason = "first use"
            elif len(getattr(connector, "_acquired", ())) > 1:
                # Others hold connections (the count includes aiohttp's placeholder for this one).
                reason = "pool full"
            else:
                reason = PEER_CLOSED
        # Marked before the await: concurrent tasks start their connects before the first ends.
        state.mark_opened(key)
        note = _send_note.get()
        if note is not None:
            note.append(None)
        offer = None
        if resume.enabled:
            try:
                offer = resume.before_aio_connect(connector, key)
            except Exception as error:
                resume.report(error)
        started = time.perf_counter()
        try:
            protocol = await original_create(req, *args, **kwargs)
        except BaseException:
            if resume.enabled:
                resume.after_aio_connect(None, offer, True)
            raise
        session = resume.after_aio_connect(protocol, offer, False) if resume.enabled else None
        try:
            _set_socket_options(protocol, state.socket_options)
            connect_ms = (time.perf_counter() - started) * 1000.0
            if metrics.enabled:
                metrics.new_connection(reason, connect_ms)
                if session is not None:
                    metrics.tls_session(session)
            if diagnostics.debug_enabled:
                host, port = getattr(key, "host", "?"), getattr(key, "port", "?")
                handshake = "TCP + TLS" if getattr(key, "is_ssl", False) else "TCP"
                fields = dict(host=host, port=port, reason=reason, connect_ms=round(connect_ms, 3))
                if session is not None:
                    handshake += (", TLS session " + session if session != "full"
                                  else ", full TLS handshake")
                    fields["tls_session"] = session
                diagnostics.debug(
                    "new connection to %s:%s (%s) in %.1f ms (%s, aiobotocore)"
                    % (host, port, reason, connect_ms, handshake),
                    **fields,
                )
        except Exception as error:
            diagnostics.report_once(
                "aio socket options",
                "could not set keep-alive options on an aiobotocore connection: %r" % (error,),
            )
        return protocol

    connector._get = _get
    connector._release = _release
    connector._create_connection = _create_connection
    connector._aws_keepalive = state


def _note_reuse(state, key, result):
    """The connector handed out ``result`` (a protocol before aiohttp 3.10, a Connection after, or
    None): if it came from the pool, note its idle time for the send in progress."""
    if result is None:
        return
    protocol = result if id(result) in state.resting else getattr(result, "protocol", None)
    resting = state.resting.pop(id(protocol), None)
    note = _send_note.get()
    if resting is None or note is None:
        return
    # The socket too: after a read timeout its TCP_INFO says whether the request was acknowledged.
    transport = getattr(protocol, "transport", None)
    sock = transport.get_extra_info("socket") if transport is not None else None
    note.append((getattr(key, "host", None), getattr(key, "port", None),
                 idle.idle_seconds(resting[2]), sock))


def _set_socket_options(protocol, socket_options):
    if not socket_options:
        return
    transport = getattr(protocol, "transport", None)
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return
    for level, option, value in socket_options:
        sock.setsockopt(level, option, value)


def _drop_stale(connector, state, key, keepalive_timeout):
    """Before aiohttp picks a pooled connection for ``key``: close the stale ones, note why.

    Also notices connections of ``key`` that left the pool while resting (aiohttp's idle callback
    or the peer closed them), so the next new connection is labelled with the right reason.
    """
    pooled = connector._conns.get(key)
    pooled_ids = set(id(entry[0]) for entry in pooled) if pooled else set()
    for protocol_id, (resting_key, protocol, since) in list(state.resting.items()):
        if resting_key != key:
            continue
        if protocol_id not in pooled_ids:
            # Gone from the pool without being taken: closed by aiohttp's cleanup or the peer.
            del state.resting[protocol_id]
            if not _is_connected(protocol) or protocol.transport is None:
                idle_s = idle.idle_seconds(since)
                timed_out = keepalive_timeout is not None and idle_s >= keepalive_timeout
                state.set_reason(key, KEEPALIVE_TIMEOUT if timed_out else PEER_CLOSED)
    if not pooled:
        return
    for entry in list(pooled):
        protocol = entry[0]
        resting = state.resting.pop(id(protocol), None)
        since = resting[2] if resting is not None else None
        if not _is_connected(protocol):
            state.set_reason(key, PEER_CLOSED)
            continue  # aiohttp drops it itself
        transport = protocol.transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        if _readable(sock):
            reason, idle_s, answered_s = PEER_CLOSED, idle.idle_seconds(since), None
        else:
            reason, idle_s, answered_s = idle.replace_reason(
                since, sock, state.max_idle_s, getattr(key, "host", None)
            )
        if reason is None and keepalive_timeout is not None and idle_s > keepalive_timeout:
            # aiohttp's own check on reuse will close it (the idle callback did not run yet).
            state.set_reason(key, KEEPALIVE_TIMEOUT)
        if reason is not None:
            pooled.remove(entry)
            protocol.close()
            state.set_reason(key, reason)
        else:
            if since is not None:
                state.resting[id(protocol)] = (key, protocol, since)
            if answered_s is not None:
                if metrics.enabled:
                    metrics.reused_after_probe()
                host = getattr(key, "host", "?")
                diagnostics.debug(
                    "reusing connection to %s:%s idle %.0f s: keep-alive answered %.1f s ago (aiobotocore)"
                    % (host, getattr(key, "port", "?"), idle_s, answered_s),
                    host=host,
                    idle_s=round(idle_s, 3),
                    keepalive_answered_s=answered_s,
                )


def _readable(sock):
    """True when a resting pooled connection's socket has something to read: EOF, RST or stray data.

    aiohttp learns that the peer closed a connection only when its event loop runs and reads the
    FIN; until then ``is_connected()`` says yes.  A loop that did not run while the FIN arrived --
    the Lambda environment was frozen between invocations, or the function blocked the loop --
    hands the dead connection out, the request fails with ServerDisconnectedError and botocore
    retries it (the aio soak counted 50 such retries in 150 s; docs/soak.md).  An idle HTTP/1.1
    connection must have nothing to read, so, like urllib3's ``wait_for_read(sock, timeout=0)``
    before reuse, one zero-timeout poll on the socket says whether it is still good: about a
    microsecond, no loop iteration, and the loop's own registration of the socket is untouched.
    For TLS the poll is on the TCP socket under the TLS layer; a close_notify or a FIN both make it
    readable.  Any doubt (no socket, no fd, poll fails) answers False: aiohttp's behaviour stays.
    """
    if sock is None:
        return False
    try:
        fd = sock.fileno()
        if fd < 0:
            return False
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def _is_connected(protocol):
    is_connected = getattr(protocol, "is_connected", None)
    return bool(is_connected()) if is_connected is not None else True
