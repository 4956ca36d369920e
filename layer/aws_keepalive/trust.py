"""Load a client's CA bundle into its SSLContext once, instead of once per new HTTPS connection.

Stock botocore hands urllib3 both a shared SSLContext (one per URLLib3Session, i.e. per client
and per proxy manager) and ``ca_certs=<bundle path>``; urllib3's ``ssl_wrap_socket`` then calls
``context.load_verify_locations(ca_certs)`` for every new connection, re-parsing the whole
bundle (~150 certificates for certifi's cacert.pem) into a store that already holds them.

``URLLib3Session._setup_ssl_cert`` sets ``pool.cert_reqs`` / ``pool.ca_certs`` before each send.
After it runs we load that bundle into the pool's SSLContext once and clear ``pool.ca_certs``;
urllib3 then skips the load (it only loads when a path is given) and verifies with the context's
store, which holds exactly the bundle's CAs. ``cert_reqs`` stays CERT_REQUIRED and hostname
checking is untouched. Everything else stays stock: ``verify=False`` (no bundle), a directory
(urllib3 would pass it as ``cafile`` and fail as before), a context already loaded with another
bundle, a pool without its own context.

Once per context, not per process: an SSLContext belongs to one client (and its client_cert), so
two clients with different bundles never share a store. A bundle changed on disk after a client's
first connection is not re-read by that client (stock adds the new file's CAs to the old ones on
the next connection; new clients read the new file).
"""

import os

from . import diagnostics
from .patch import _wrap

# The bundle path loaded into a context, kept on the context itself (ssl.SSLContext has a __dict__).
LOADED = "_aws_keepalive_ca_certs"


def patch(settings, version, path):
    """Wrap botocore's per-send certificate setup (patch.apply reports a failure once)."""
    from botocore.httpsession import URLLib3Session

    _wrap(URLLib3Session, "_setup_ssl_cert", _make_setup_ssl_cert)


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
