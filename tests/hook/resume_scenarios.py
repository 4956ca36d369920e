"""Scenario set-ups around TLS session resumption (resume.py), shared by tests/hook/test_resume.py
and the stock twin: each builds one configuration stock accepts, so that stock (the layer off) and
the layer can be run through it side by side and their outcomes compared.

* ``pinning_context_class``: an ``ssl.SSLContext`` subclass pinning the server certificate by
  overriding ``wrap_socket`` (and ``wrap_bio``), counting its calls;
* ``botocore_context_class``: makes botocore build its clients' contexts from such a class (as
  truststore's ``inject_into_ssl`` makes it, by the name botocore imported);
* ``instance_patched_contexts``: other code setting ``wrap_socket`` on each new context instance;
* ``TRUSTSTORE_SCRIPT``: truststore from PyPI injected before botocore is imported, then
  extracted or left in, in a fresh interpreter;
* ``AIO_OVERRIDE_SCRIPT``: the same subclass under aiobotocore, whose asyncio calls ``wrap_bio``;
* ``AIO_MIDDLEBOX_SCRIPT``: aiobotocore behind psk_middlebox.py's dropping or resetting middlebox, at one
  address or two;
* ``CHURN_SCRIPT``: clients made and dropped with the cyclic GC disabled, counting live contexts
  and the RSS growth, in a fresh interpreter;
* ``rotate_client_certificate_before_key``: a client certificate replaced on disk, its key not yet.

The loopback middlebox that drops or resets ClientHellos carrying a PSK is psk_middlebox.py.
"""

import contextlib
import hashlib
import ssl


def pinning_context_class(pins):
    """A fresh ``ssl.SSLContext`` subclass whose ``wrap_socket`` and ``wrap_bio`` run the
    standard library's and then (client side, after the handshake) refuse a server whose leaf
    certificate's SHA-256 is not in ``pins``; ``calls`` counts the overrides' runs.  (wrap_bio's
    handshake happens later, in asyncio: its override counts and passes through.)"""

    class PinningContext(ssl.SSLContext):
        calls = {"wrap_socket": 0, "wrap_bio": 0}

        def wrap_socket(self, *args, **kwargs):
            PinningContext.calls["wrap_socket"] += 1
            sock = super().wrap_socket(*args, **kwargs)
            if not kwargs.get("server_side"):
                leaf = sock.getpeercert(binary_form=True)
                if leaf is None or hashlib.sha256(leaf).hexdigest() not in pins:
                    sock.close()
                    raise ssl.SSLError("server certificate does not match the pinned one")
            return sock

        def wrap_bio(self, *args, **kwargs):
            PinningContext.calls["wrap_bio"] += 1
            return super().wrap_bio(*args, **kwargs)

    return PinningContext


def leaf_pin(cert):
    """The SHA-256 pin of a trustme LeafCert's certificate."""
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(cert.cert_chain_pems[0].bytes().decode())).hexdigest()


@contextlib.contextmanager
def botocore_context_class(cls):
    """While inside: botocore's ``create_urllib3_context`` builds ``cls`` contexts (it calls the
    ``SSLContext`` name botocore.httpsession imported, which is what truststore's injection
    replaces too)."""
    import botocore.httpsession

    before = botocore.httpsession.SSLContext
    botocore.httpsession.SSLContext = cls
    try:
        yield cls
    finally:
        botocore.httpsession.SSLContext = before


@contextlib.contextmanager
def instance_patched_contexts():
    """While inside: every context botocore makes gets a ``wrap_socket`` instance attribute (a
    tracing wrapper other code set, calling the bound method it replaced); yields the list of the
    wrappers' call counts, one per context."""
    import botocore.httpsession

    original = botocore.httpsession.create_urllib3_context
    counts = []

    def create_urllib3_context(*args, **kwargs):
        context = original(*args, **kwargs)
        bound = context.wrap_socket
        count = [0]
        counts.append(count)

        def traced(*wrap_args, **wrap_kwargs):
            count[0] += 1
            return bound(*wrap_args, **wrap_kwargs)

        context.wrap_socket = traced
        return context

    botocore.httpsession.create_urllib3_context = create_urllib3_context
    try:
        yield counts
    finally:
        botocore.httpsession.create_urllib3_context = original


# Fresh interpreter (conftest.python_with_layer): truststore injected before botocore is imported,
# so botocore.httpsession binds truststore's SSLContext; then extracted (``extract``) or left in.
# The layer is applied as patch.apply does when ``on``.  Prints one JSON object: each call's
# outcome ("ok" or the exception's type and message start), and whether the server resumed.
TRUSTSTORE_SCRIPT = """
import json
import truststore
truststore.inject_into_ssl()
from aws_keepalive import patch, settings
if %(on)r:
    patch.apply(settings.Settings())
import botocore.session
from botocore.config import Config
if %(extract)r:
    truststore.extract_from_ssl()
client = botocore.session.get_session().create_client(
    "dynamodb", region_name="us-east-1", endpoint_url=%(url)r, verify=%(bundle)r,
    aws_access_key_id="a", aws_secret_access_key="b",
    config=Config(retries={"max_attempts": 1}))
outcomes = []
for _ in range(%(calls)d):
    try:
        client.list_tables()
        outcomes.append("ok")
    except Exception as error:
        outcomes.append("%%s: %%s" %% (type(error).__name__, str(error)[:60]))
context = client._endpoint.http_session._manager.connection_pool_kw["ssl_context"]
print(json.dumps({"outcomes": outcomes, "context_class": type(context).__module__,
                  "instance_attributes": sorted(vars(context))}))
"""

# Fresh interpreter: ``clients`` botocore clients, each making one call (a verified TLS 1.3
# connection, so the layer caches a session) and then dropped, with the cyclic GC disabled (a
# cold-start tuning some functions use).  ``on``: the layer applied as patch.apply does.  Prints
# one JSON object: contexts still alive, RSS growth in kB (from the first client on).
CHURN_SCRIPT = """
import gc, json, weakref
from aws_keepalive import patch, settings
if %(on)r:
    patch.apply(settings.Settings())
import botocore.session
from botocore.config import Config
session = botocore.session.get_session()

def rss_kb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4

def one_client():
    client = session.create_client(
        "dynamodb", region_name="us-east-1", endpoint_url=%(url)r, verify=%(bundle)r,
        aws_access_key_id="a", aws_secret_access_key="b", config=Config(retries={"max_attempts": 1}))
    client.list_tables()
    return weakref.ref(client._endpoint.http_session._manager.connection_pool_kw["ssl_context"])

one_client()  # warm: models loaded, first-use allocations made
gc.collect()
gc.disable()
before = rss_kb()
contexts = [one_client() for _ in range(%(clients)d)]
print(json.dumps({"alive": sum(ref() is not None for ref in contexts), "rss_kb": rss_kb() - before}))
"""


# Fresh interpreter, aiobotocore from the folder ``aio``: its clients' contexts are a subclass
# overriding ``wrap_bio`` (pinning_context_class; aiobotocore builds its context with botocore's
# create_urllib3_context, so through the same name).  ``on``: patch.apply and aio.apply as the
# layer does.  Prints one JSON object: each call's outcome and the overrides' run counts.
AIO_OVERRIDE_SCRIPT = """
import asyncio, json, sys
sys.path[:0] = [%(aio)r, %(here)r]
from aws_keepalive import aio, patch, settings
if %(on)r:
    config = settings.Settings()
    patch.apply(config)
    aio.apply(config)
import botocore.httpsession
import resume_scenarios
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
cls = resume_scenarios.pinning_context_class(set())
botocore.httpsession.SSLContext = cls
outcomes = []

async def main():
    async with get_session().create_client(
            "dynamodb", region_name="us-east-1", endpoint_url=%(url)r, verify=%(bundle)r,
            aws_access_key_id="a", aws_secret_access_key="b",
            config=AioConfig(retries={"max_attempts": 1})) as client:
        for _ in range(%(calls)d):
            try:
                await client.list_tables()
                outcomes.append("ok")
            except Exception as error:
                outcomes.append(type(error).__name__)
asyncio.run(main())
print(json.dumps({"outcomes": outcomes, "calls": cls.calls}))
"""


# Fresh interpreter, aiobotocore from ``aio``: ``calls`` calls to a name with ``addresses`` (1 or
# 2) addresses, each a PskMiddlebox (psk_middlebox.py, in ``here``; ``action``) in front of
# ``target``.  aiohttp tries the next address when a TLS handshake fails, so with two a PSK hello
# the first address drops is followed by one without on the second.  Two addresses come from a
# resolver given to aiohttp (loopback has one address per name here; DynamoDB's regional names
# have several).  Prints each call's outcome and each middlebox's hellos (True: carried a PSK).
AIO_MIDDLEBOX_SCRIPT = """
import asyncio, contextlib, json, socket, sys
sys.path[:0] = [%(aio)r, %(here)r]
from aws_keepalive import aio, patch, settings
if %(on)r:
    config = settings.Settings()
    patch.apply(config)
    aio.apply(config)
import aiohttp.abc, aiohttp.connector
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from psk_middlebox import PskMiddlebox
outcomes = []


class EachMiddlebox(aiohttp.abc.AbstractResolver):
    def __init__(self, *args, **kwargs):
        pass

    async def resolve(self, host, port=0, family=socket.AF_INET):
        return [dict(hostname=host, host="127.0.0.1", port=box.address[1], family=socket.AF_INET,
                     proto=0, flags=socket.AI_NUMERICHOST) for box in boxes]

    async def close(self):
        pass


if %(addresses)r > 1:
    aiohttp.connector.DefaultResolver = EachMiddlebox


async def main():
    async with get_session().create_client(
            "dynamodb", region_name="us-east-1", endpoint_url="https://localhost:%%d" %% boxes[0].address[1],
            verify=%(bundle)r, aws_access_key_id="a", aws_secret_access_key="b",
            config=AioConfig(connect_timeout=1, retries={"max_attempts": 3, "mode": "standard"})) as client:
        for _ in range(%(calls)r):
            try:
                await client.list_tables()
                outcomes.append("ok")
            except Exception as error:
                outcomes.append(type(error).__name__)
                print(repr(error), file=sys.stderr)
with contextlib.ExitStack() as stack:
    boxes = [stack.enter_context(PskMiddlebox(%(target)r, %(action)r)) for _ in range(%(addresses)r)]
    asyncio.run(main())
print(json.dumps({"outcomes": outcomes, "hellos": [box.hellos for box in boxes]}))
"""


def rotate_client_certificate_before_key(cert_path):
    """Rewrite a client-certificate file with a new certificate (a new key pair's, from a new CA)
    while the key file beside it still holds the old key: a rotation half done.  Stock's urllib3
    loads the pair at each new connection and fails (KEY_VALUES_MISMATCH) until the key follows."""
    import trustme

    trustme.CA().issue_cert("rotated-client@example.com").cert_chain_pems[0].write_to_path(cert_path)

