"""Load a CA bundle into an SSLContext once, instead of once per new HTTPS connection, and once
per process for clients that would verify exactly alike.

Stock botocore hands urllib3 both an SSLContext (one per URLLib3Session, i.e. per client and per
proxy manager) and ``ca_certs=<bundle path>``; urllib3's ``ssl_wrap_socket`` then calls
``context.load_verify_locations(ca_certs)`` for every new connection, re-parsing the whole
bundle (~126 certificates for botocore's cacert.pem) into a store that already holds them.

Per connection -> once per context: ``URLLib3Session._setup_ssl_cert`` sets ``pool.cert_reqs`` /
``pool.ca_certs`` before each send. After it runs we load that bundle into the pool's SSLContext
once and clear ``pool.ca_certs``; urllib3 then skips the load (it only loads when a path is given)
and verifies with the context's store, which holds exactly the bundle's CAs. ``cert_reqs`` stays
CERT_REQUIRED and hostname checking is untouched. Everything else stays stock: ``verify=False``
(no bundle), a directory (urllib3 would pass it as ``cafile`` and fail as before), a context
already loaded with another bundle, a pool without its own context.

Once per context -> once per process: a function that creates three clients (or one client per
invocation) would still parse the bundle once per client: at 128 MB that is ~0.3 s each. So when
botocore builds a client's pool-manager arguments (``_get_pool_manager_kwargs``, for its own
manager and for each proxy manager's destination pools), a client whose TLS settings are exactly
those of an earlier one gets the earlier one's context (loaded by whichever connects first).
"Exactly": the same bundle path naming the same unchanged file (device, inode, size, mtime), the
same client certificate and key (``client_cert``; urllib3 loads them into the context per
connection), the context's settings (class, protocol, options, verify flags, TLS versions: a
``create_urllib3_context`` patched to make some clients' contexts stricter keeps them apart), a
real ``ssl.SSLContext`` (a test's mock is never shared) made by botocore's own
``_get_ssl_context`` (a subclass that customises its context keeps it), and verification on.
Why that is safe: botocore's contexts carry nothing else per client --
``create_urllib3_context()`` has no arguments, and the only per-connection changes urllib3 makes
(verify_mode, check_hostname, the client certificate, ALPN) come from pool arguments that are the
same for every client with the same key. Not shared: the proxy's own context (``proxy_ca_bundle``,
``proxy_client_cert``: botocore builds and loads it itself, once per proxy manager), clients with
``verify=False`` and clients with another bundle or certificate. What it would break: code that
reaches into a client's private pool manager and changes its context (e.g. loads one more CA)
would change it for every client sharing it; ``AWS_PYTHON_KEEPALIVE_TRUST_ONCE=0`` turns all of
this module off. A bundle changed on disk is a new key: clients created afterwards read the new
file; existing clients keep what they loaded (stock would add the new file's CAs to the old ones).
"""

import os
import ssl
import threading

from . import diagnostics
from .patch import _wrap

# The bundle path loaded into a context, kept on the context itself (ssl.SSLContext has a __dict__).
LOADED = "_aws_keepalive_ca_certs"

# (bundle path, its file identity, cert_file, key_file, the context's settings) -> the SSLContext
# loaded with that bundle.
_shared = {}
_shared_lock = threading.Lock()


def patch(settings, version, path):
    """Wrap botocore's per-send certificate setup and its pool-manager arguments (patch.apply
    reports a failure once)."""
    from botocore.httpsession import URLLib3Session

    _wrap(URLLib3Session, "_setup_ssl_cert", _make_setup_ssl_cert)
    if hasattr(URLLib3Session, "_get_pool_manager_kwargs"):
        _wrap(URLLib3Session, "_get_pool_manager_kwargs", _make_get_pool_manager_kwargs)


def _make_setup_ssl_cert(original):
    def _setup_ssl_cert(self, conn, url, verify):
        original(self, conn, url, verify)
        try:
            load_once(conn)
        except Exception as error:
            diagnostics.report_once(
                "trust once load",
                "could not load the CA bundle once: %r; urllib3 loads it per connection" % (error,),
            )

    return _setup_ssl_cert


def _make_get_pool_manager_kwargs(original):
    def _get_pool_manager_kwargs(self, **extra_kwargs):
        kwargs = original(self, **extra_kwargs)
        try:
            context = shared_context(self, kwargs)
            if context is not None:
                kwargs["ssl_context"] = context
        except Exception as error:
            diagnostics.report_once(
                "trust once share",
                "could not share a loaded CA bundle between clients: %r; "
                "each client loads its own" % (error,),
            )
        return kwargs

    return _get_pool_manager_kwargs


def shared_context(session, kwargs):
    """The process's context for this client's TLS settings, or None when the client keeps its
    own (see the module docstring)."""
    from botocore.httpsession import URLLib3Session, get_cert_path

    context = kwargs.get("ssl_context")
    verify = getattr(session, "_verify", None)
    if not isinstance(context, ssl.SSLContext) or not verify:
        return None
    if type(session)._get_ssl_context is not URLLib3Session.__dict__["_get_ssl_context"]:
        return None
    bundle = get_cert_path(verify)
    if not isinstance(bundle, str) or not os.path.isfile(bundle):
        return None
    stat = os.stat(bundle)
    key = (bundle, stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns,
           kwargs.get("cert_file"), kwargs.get("key_file"),
           type(context), context.protocol, int(context.options), int(context.verify_flags),
           context.minimum_version, context.maximum_version)
    with _shared_lock:
        # The first client's own context; load_once() loads the bundle into it at the first HTTPS
        # send of any client sharing it (a client that never connects costs no load).
        return _shared.setdefault(key, context)


def load_once(pool):
    """Move ``pool.ca_certs`` into the pool's SSLContext (once per context) and clear it."""
    ca_certs = getattr(pool, "ca_certs", None)
    if not ca_certs or getattr(pool, "cert_reqs", None) != "CERT_REQUIRED":
        return
    context = getattr(pool, "conn_kw", {}).get("ssl_context")
    if context is None:
        return
    loaded = getattr(context, LOADED, None)
    if loaded is None:
        # Checked once per context, not per send: a send that opens no connection pays no stat.
        if not os.path.isfile(ca_certs):
            return
        context.load_verify_locations(cafile=ca_certs)
        setattr(context, LOADED, ca_certs)
    elif loaded != ca_certs:
        return
    pool.ca_certs = None
