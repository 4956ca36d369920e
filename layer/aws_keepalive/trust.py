"""Verify each new HTTPS connection against exactly the CAs stock botocore uses, without parsing
the whole CA bundle for every connection.

What stock does. botocore makes one SSLContext per client (``URLLib3Session._get_ssl_context``;
one more per proxy manager) and, before every send, sets ``cert_reqs='CERT_REQUIRED'`` and
``ca_certs=<bundle path>`` on the urllib3 pool (``_setup_ssl_cert``). urllib3 then calls
``context.load_verify_locations(ca_certs)`` for every new connection, re-parsing the whole bundle
(botocore's cacert.pem: 126 certificates, ~0.3 s at 128 MB) into a store that already holds it;
for TLS to an ``https://`` proxy without ``proxy_ca_bundle`` it builds a fresh context per
connection and loads the same ``ca_certs`` into it.

What this module changes, after botocore's ``_setup_ssl_cert`` and only for a pool that verifies
(``CERT_REQUIRED``) against a bundle *file*, nothing else (``verify=False``, a directory, a
missing file: stock):

1. A bundle the layer knows (the SDK's default bundle, recognised by the sha256 of its bytes,
   computed once per path and file identity): the pool gets ``ca_cert_dir=<a hashed directory
   built from exactly that bundle at layer build time>`` (tools/packaging/ca_dir.py; ``ca/<sha256>/`` next to
   this file) and ``ca_certs=None``. urllib3 hands the directory to ``load_verify_locations`` for
   every connection, as it did the file, wherever it used ``ca_certs``: the pool's context (1.26
   ``HTTPSConnection.connect``, 2.x ``_ssl_wrap_socket_and_match_hostname``) and the context it
   builds for TLS to an https proxy (1.26 ``_connect_tls_proxy`` / ``create_proxy_ssl_context``,
   2.x ``_connect_tls_proxy``), and a directory, like a file, keeps urllib3 from falling back to
   ``load_default_certs``. But adding a directory costs nothing (OpenSSL keeps one entry per
   directory) and a handshake reads only the certificates its chain needs, by subject-name hash:
   the first connection of a process costs what it costs with a one-certificate bundle. The
   trusted set is the bundle's: the directory holds every certificate of it and nothing else.
2. Any other bundle (``verify=<path>``, ``AWS_CA_BUNDLE``, a profile's ``ca_bundle``, a
   ``certifi`` the function bundles): loaded into the pool's own SSLContext once per context and
   file identity, and ``ca_certs`` cleared, so urllib3 skips the per-connection load and verifies
   with the context's store, which holds exactly the bundle's CAs -- except for a pool whose TLS to
   an ``https://`` proxy takes its CAs from ``ca_certs`` (no ``proxy_ca_bundle``): cleared, urllib3
   would verify the proxy against the system's default CAs, so such a pool keeps stock's
   per-connection load.

Why nothing is shared between clients (it was, once per process, until issue 21): urllib3 writes
``verify_mode`` and ``check_hostname`` into a pool's context at every connect, and the context
carries per-client settings (``keylog_filename`` from ``SSLKEYLOGFILE`` at client creation,
ciphers, a patched ``create_urllib3_context``'s choices). One client's ``CERT_NONE`` pool (an
``http://`` endpoint behind an ``https://`` proxy) sharing a context with an ordinary client let
the ordinary client complete handshakes with servers its bundle does not trust. So each client
keeps the context botocore made for it, exactly stock's granularity, and the known-bundle
directory makes a per-client context as cheap as a shared one was; an unknown bundle costs one
parse per client (stock: one per connection).

A bundle file rewritten while a client lives: the file is stat'ed at every send that verifies
against it (its identity: device, inode, size, mtime and ctime); a new identity is recognised (or
loaded) afresh, added to what the context already trusts -- as stock's next connection would add
the new file's CAs to its context's store. So the send right after a bundle refresh (a retry)
verifies as stock's would: there is no window (issue 31; until then a pool looked again only a
second after its last look, and a retry within that second failed CERTIFICATE_VERIFY_FAILED where
stock succeeded). The stat costs ~1 µs per send at a full vCPU; the ctime catches a rewrite whose
writer set the old mtime back (``touch -r``). What the layer remembers per bundle path is bounded
(``_MAX_PATHS``); no lock, so nothing to reset after fork.

A client certificate (``Config(client_cert=...)``): stock urllib3 loads it into the client's shared
SSLContext (``load_cert_chain``) for every new connection, while another thread may be handshaking
with that context -- which crashes CPython 3.12 / OpenSSL 3.0 (segfault or hang: docs/compat.md,
"Client certificate"). So it is loaded once, into the context botocore just made for the client's
pool manager, before any thread can use it (``_get_pool_manager_kwargs``, at client creation),
and the pools get no ``cert_file``: urllib3 then loads nothing per connection and every
handshake presents that certificate, as stock's would. The files are stat'ed at each send; once
either changed on disk (a rotated certificate), the pools get ``cert_file``/``key_file`` back and
load them per connection as stock does, and the new files are loaded into the context once (for the
connection objects made before, which reconnect with the context's certificate). Anything unusual
stays stock: an encrypted key (stock raises per connection), a file that fails to load, a proxy
manager's context.

``AWS_PYTHON_KEEPALIVE_TRUST_ONCE=0`` switches this module off.
"""

import hashlib
import os
import ssl
import stat

from aws_keepalive import diagnostics
from aws_keepalive.wrap import wrap

# The hashed CA directories the layer's build wrote, one per known bundle, named by its sha256.
CA_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ca")
# On a context: (bundle path, file identity) last loaded into it (ssl.SSLContext has a __dict__).
LOADED = "_aws_keepalive_ca_certs"
# On a pool: the directory this module set as its ca_cert_dir.
DIRECTORY = "_aws_keepalive_ca_cert_dir"
# On a context: (cert file, key file, their identities when loaded into it) for a client certificate
# loaded once (load_client_cert).
CLIENT_CERT = "_aws_keepalive_client_cert"

# bundle path -> (file identity, its known directory or None). A process names few bundle paths;
# past _MAX_PATHS (a process writing a bundle per client under new names) it starts over.
_known = {}
_MAX_PATHS = 32


def patch(settings, version, path):
    """Wrap botocore's per-send certificate setup (patch.apply reports a failure once)."""
    from botocore.httpsession import URLLib3Session

    wrap(URLLib3Session, "_setup_ssl_cert", _make_setup_ssl_cert)
    if hasattr(URLLib3Session, "_get_pool_manager_kwargs"):
        wrap(URLLib3Session, "_get_pool_manager_kwargs", _make_get_pool_manager_kwargs)


def _make_get_pool_manager_kwargs(original):
    def _get_pool_manager_kwargs(self, **extra_kwargs):
        kwargs = original(self, **extra_kwargs)
        if not extra_kwargs:  # the client's own pool manager (a proxy manager's: stock)
            try:
                load_client_cert(kwargs)
            except Exception as error:
                diagnostics.report_once(
                    "client cert once",
                    "could not load the client certificate once: %r; urllib3 loads it per connection" % (error,),
                )
        return kwargs

    return _get_pool_manager_kwargs


def load_client_cert(kwargs):
    """Load ``cert_file``/``key_file`` into the new ``ssl_context`` once and take them out of the
    pool kwargs (module docstring); anything unusual leaves the kwargs as botocore made them."""
    cert_file, key_file = kwargs.get("cert_file"), kwargs.get("key_file")
    context = kwargs.get("ssl_context")
    if not (isinstance(cert_file, str) and cert_file) or not isinstance(context, ssl.SSLContext):
        return
    identities = (file_identity(cert_file), file_identity(key_file) if key_file else None)
    if identities[0] is None or (key_file and identities[1] is None) or _encrypted(key_file or cert_file):
        return
    context.load_cert_chain(cert_file, key_file)
    setattr(context, CLIENT_CERT, (cert_file, key_file, identities))
    kwargs["cert_file"] = kwargs["key_file"] = None


def _encrypted(key_file):
    """urllib3's test for a key that needs a password (stock raises SSLError per connection then)."""
    with open(key_file) as source:
        return any("ENCRYPTED" in line for line in source)


def client_cert_changed(pool):
    """At each send: if the client certificate loaded once into the pool's context changed on disk,
    give the pool its files back (urllib3 loads them per connection from then on, as stock does)
    and load the new files into the context once: a connection object the pool made before (its
    ``cert_file`` None) that reconnects -- the peer dropped it -- presents what the context holds,
    where stock's object reloads its file; without this it presented the old certificate for as
    long as the pool made no new connection object (review of issue 31: every later send)."""
    context = getattr(pool, "conn_kw", {}).get("ssl_context")
    changed = _files_changed(context)
    if changed is not None:
        cert_file, key_file, now = changed
        pool.key_file = key_file
        pool.cert_file = cert_file
        # And to the connection objects idle in the pool (made before, ``cert_file`` None): each
        # reconnects loading the files, as stock's objects do.  Without it, a half-rotated pair
        # made it connect with no certificate at all -- the failed load below leaves the context
        # without one (OpenSSL drops a certificate whose key does not match) -- and succeed where
        # stock fails (a server that asks for a certificate but accepts none; the stock twin's
        # key_mismatch case).  Repeated at each send until a load succeeds, so objects other
        # threads put back meanwhile get the files before their next use.
        _give_files_to_idle_connections(pool, cert_file, key_file)
        # A half-rotated pair (a certificate without its key yet) raises here: reported once, and
        # tried again at the next send (the identities are recorded only once it loaded).
        context.load_cert_chain(cert_file, key_file)
        setattr(context, CLIENT_CERT, (cert_file, key_file, now))


def _files_changed(context):
    """(cert_file, key_file, their identities now) when the client certificate files loaded once
    into ``context`` changed on disk since; None when they did not, or none was loaded."""
    loaded = getattr(context, CLIENT_CERT, None)
    if loaded is None:
        return None
    cert_file, key_file, identities = loaded
    now = (file_identity(cert_file), file_identity(key_file) if key_file else None)
    return None if now == identities else (cert_file, key_file, now)


def _give_files_to_idle_connections(pool, cert_file, key_file):
    """``cert_file`` / ``key_file`` on every connection object in ``pool``'s queue (urllib3 1.26
    and 2.x keep them there; None entries are free slots)."""
    for conn in list(getattr(getattr(pool, "pool", None), "queue", None) or ()):
        if conn is not None:
            conn.cert_file, conn.key_file = cert_file, key_file


def give_changed_files(conn):
    """At each connect of a connection object made while the client certificate was loaded once
    (its ``cert_file`` None): if the files changed on disk since they were loaded into its context,
    give the object the files, so that urllib3 loads them for this connection, as stock's object
    does.  The sends' check (``client_cert_changed``) reaches the objects idle in the pool only; one
    another thread had checked out before the rotation reconnects without a send seeing it first --
    with the context's old certificate, or with none once a half-rotated pair failed to load into
    it (OpenSSL drops a certificate whose key does not match) -- and was accepted where stock's
    failed (KEY_VALUES_MISMATCH; test_trust's checked-out-before test).  Two stats per new
    connection of a client with a client certificate; nothing for the others.  Called by patch.py's
    connect wrapper (one wrapper per method: wrap() leaves a method already ours alone)."""
    if getattr(conn, "cert_file", None) is not None:
        return
    changed = _files_changed(getattr(conn, "ssl_context", None))
    if changed is not None:
        conn.cert_file, conn.key_file = changed[:2]


def _make_setup_ssl_cert(original):
    def _setup_ssl_cert(self, conn, url, verify):
        original(self, conn, url, verify)
        try:
            client_cert_changed(conn)
        except Exception as error:
            # The files went back to the pool first: urllib3 loads them per connection, as stock.
            diagnostics.report_once(
                "client cert rotated",
                "could not load the rotated client certificate once: %r; urllib3 loads it per connection"
                % (error,),
            )
        try:
            apply(conn)
        except Exception as error:
            original(self, conn, url, verify)  # botocore's settings again, as if never touched
            diagnostics.report_once(
                "trust once load",
                "could not load the CA bundle once: %r; urllib3 loads it per connection" % (error,),
            )

    return _setup_ssl_cert


def apply(pool):
    """After botocore set ``pool.cert_reqs`` / ``pool.ca_certs``: give the pool the bundle's hashed
    directory, or load the bundle into its context once, or leave it (see the module docstring)."""
    ca_certs = getattr(pool, "ca_certs", None)
    identity = None
    if getattr(pool, "cert_reqs", None) == "CERT_REQUIRED" and isinstance(ca_certs, str) and ca_certs:
        # At every send: the next new connection must trust what stock's would (no window).
        identity = file_identity(ca_certs)
    directory = known_directory(ca_certs, identity) if identity is not None else None
    ours = getattr(pool, DIRECTORY, None)
    if directory is not None:
        # The directory before clearing the file: a connection another thread opens in between
        # sees one or both, never neither.
        pool.ca_cert_dir = directory
        setattr(pool, DIRECTORY, directory)
        pool.ca_certs = None
        return
    if ours is not None:
        # An earlier send set it; this one is not for a known bundle (stock has no directory).
        if getattr(pool, "ca_cert_dir", None) == ours:
            pool.ca_cert_dir = None
        setattr(pool, DIRECTORY, None)
    if identity is not None:
        load_once(pool, ca_certs, identity)


def file_identity(path):
    """(device, inode, size, mtime, ctime) of a regular file, or None (a directory, a missing file:
    urllib3 gets it as stock does and fails or not as stock does)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def known_directory(path, identity):
    """The hashed directory shipped for the bundle at ``path`` (as it is at ``identity``), or None."""
    cached = _known.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    directory = None
    if os.path.isdir(CA_ROOT):
        with open(path, "rb") as bundle:
            digest = hashlib.sha256(bundle.read()).hexdigest()
        candidate = os.path.join(CA_ROOT, digest)
        if os.path.isdir(candidate):
            directory = candidate
    if len(_known) >= _MAX_PATHS:
        _known.clear()
    _known[path] = (identity, directory)
    return directory


def load_once(pool, ca_certs, identity):
    """Load ``ca_certs`` into the pool's own SSLContext (once per context and file identity) and
    clear ``pool.ca_certs``; a pool whose https proxy is verified with ``ca_certs`` stays stock."""
    context = getattr(pool, "conn_kw", {}).get("ssl_context")
    if not isinstance(context, ssl.SSLContext) or proxy_verified_with_ca_certs(pool):
        return
    if getattr(context, LOADED, None) != (ca_certs, identity):
        context.load_verify_locations(cafile=ca_certs)
        setattr(context, LOADED, (ca_certs, identity))
    pool.ca_certs = None


def proxy_verified_with_ca_certs(pool):
    """True when urllib3 verifies the pool's TLS to an ``https://`` proxy with ``pool.ca_certs``
    (no proxy SSLContext: botocore makes one only for ``proxy_ca_bundle`` / ``proxy_client_cert``)."""
    proxy = getattr(pool, "proxy", None)
    if proxy is None or getattr(proxy, "scheme", None) != "https":
        return False
    return getattr(getattr(pool, "proxy_config", None), "ssl_context", None) is None
