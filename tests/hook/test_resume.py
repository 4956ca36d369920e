"""resume.py: a new connection resumes the TLS session of an earlier verified one of the same
client, host and verify settings, and never anything else; checked with real botocore clients
against real TLS servers on loopback, whose own view (``session_reused``) is read back."""

import os
import ssl
import sys

import botocore.session
import pytest
import trustme
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.httpsession import URLLib3Session
from botocore.exceptions import SSLError
import unpatch
from ddb_server import DynamoDBShapedServer

from aws_keepalive import diagnostics, metrics, patch, resume, settings, snapstart


@pytest.fixture
def layer(request):
    """The layer's connection patch (with resume.py as ``settings`` says) on this process's
    botocore, removed after the test."""

    def apply(**options):
        config = settings.Settings(**options)
        resume.enabled = config.tls_resume
        patch._patch_connection_pool(config, None, None)

    yield apply
    unpatch.connection_pool()
    resume.enabled = False


def tls_server(tmp_path, name, authority=None, maximum_version=None):
    """A DynamoDB-shaped TLS server that closes each connection after answering (so every call
    opens a new one), with a localhost certificate from ``authority``; its CA bundle's path."""
    authority = authority or trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("localhost").configure_cert(context)
    if maximum_version is not None:
        context.maximum_version = maximum_version
    bundle = str(tmp_path / ("%s-ca.pem" % name))
    authority.cert_pem.write_to_path(bundle)
    return DynamoDBShapedServer(tls_context=context, close_after_response=True), bundle


def client(url, verify):
    return botocore.session.get_session().create_client(
        "dynamodb", region_name="us-east-1", endpoint_url=url, verify=verify,
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}),
    )


def context_of(ddb):
    return ddb._endpoint.http_session._manager.connection_pool_kw["ssl_context"]


def calls_on_new_connections(tmp_path, calls, verify=True, maximum_version=None):
    """``calls`` calls of one client, each on a new connection to a fresh server (``verify``: True
    for the server's own bundle, else botocore's verify value); (the server's tls_resumed, what
    the client's context holds of resume.py's: its __dict__)."""
    server, bundle = tls_server(tmp_path, "a", maximum_version=maximum_version)
    with server:
        ddb = client(server.url, bundle if verify is True else verify)
        for _ in range(calls):
            ddb.list_tables()
        assert server.requests == calls
        return server.tls_resumed, vars(context_of(ddb))


def test_new_connections_resume_the_clients_verified_session(layer, tmp_path):
    """Each new connection after the first resumes (the server says so), one session kept."""
    layer()
    resumed, context = calls_on_new_connections(tmp_path, 4)
    assert resumed == [False, True, True, True]
    assert len(context[resume.SESSIONS]) == 1


def test_stock_never_resumes(tmp_path):
    """Without the layer every new connection is a full handshake (what is being saved)."""
    assert calls_on_new_connections(tmp_path, 3)[0] == [False, False, False]


def test_switched_off_never_resumes(layer, tmp_path):
    """AWS_PYTHON_KEEPALIVE_TLS_RESUME=0: full handshakes, the context untouched."""
    layer(tls_resume=False)
    resumed, context = calls_on_new_connections(tmp_path, 3)
    assert resumed == [False, False, False]
    assert resume.SESSIONS not in context and "wrap_socket" not in context


def test_a_session_is_never_offered_by_a_client_with_another_bundle(layer, tmp_path):
    """Client A (bundle a) resumes; client B, whose bundle does not trust the server, still fails
    verification (a session of A's would skip it), and client C (another file of the same CA)
    starts with a full handshake of its own."""
    layer()
    authority = trustme.CA()
    server, bundle_a = tls_server(tmp_path, "a", authority)
    other_bundle = str(tmp_path / "other-ca.pem")
    trustme.CA().cert_pem.write_to_path(other_bundle)
    same_ca_other_file = str(tmp_path / "c-ca.pem")
    authority.cert_pem.write_to_path(same_ca_other_file)
    with server:
        a = client(server.url, bundle_a)
        a.list_tables()
        a.list_tables()
        assert server.tls_resumed == [False, True]
        b = client(server.url, other_bundle)
        for _ in range(2):
            with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
                b.list_tables()
        assert server.tls_resumed == [False, True]  # B never got as far as a request
        c = client(server.url, same_ca_other_file)
        c.list_tables()
        c.list_tables()
        assert server.tls_resumed == [False, True, False, True]
        a.list_tables()
        assert server.tls_resumed[-1] is True


def test_verify_false_neither_offers_nor_keeps_a_session(layer, tmp_path):
    """verify=False connections do full handshakes and leave nothing in the cache."""
    layer()
    resumed, context = calls_on_new_connections(tmp_path, 3, verify=False)
    assert resumed == [False, False, False]
    assert not context.get(resume.SESSIONS)


def test_a_rejected_ticket_falls_back_to_a_full_handshake(layer, tmp_path, capsys):
    """The server forgot its ticket keys (a new server context): the offered session is refused,
    the call succeeds on a full handshake, the debug line says so, and the next one resumes."""
    layer()
    diagnostics.debug_enabled = True
    try:
        authority = trustme.CA()
        server, bundle = tls_server(tmp_path, "a", authority)
        with server:
            ddb = client(server.url, bundle)
            ddb.list_tables()
            fresh = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            authority.issue_cert("localhost").configure_cert(fresh)
            server.tls_context = fresh
            ddb.list_tables()
            ddb.list_tables()
            assert server.tls_resumed == [False, False, True]
    finally:
        diagnostics.debug_enabled = False
    err = capsys.readouterr().err
    assert "full TLS handshake" in err
    assert "TLS session not resumed" in err
    assert "TLS session resumed" in err


def test_snapstart_restore_drops_every_session(layer, tmp_path):
    """After a SnapStart restore the first new connection is a full handshake (no ticket from the
    snapshot), then the restored process resumes its own."""
    layer()
    server, bundle = tls_server(tmp_path, "a")
    with server:
        ddb = client(server.url, bundle)
        ddb.list_tables()
        snapstart.after_restore()
        ddb.list_tables()
        ddb.list_tables()
        assert server.tls_resumed == [False, False, True]


def test_a_forked_child_starts_with_no_session(layer, tmp_path):
    """A forked child's first new connection on an inherited client is a full handshake; the
    parent keeps resuming with its own sessions."""
    layer()
    server, bundle = tls_server(tmp_path, "a")
    with server:
        ddb = client(server.url, bundle)
        ddb.list_tables()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                ddb.list_tables()
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        ddb.list_tables()
        assert server.tls_resumed == [False, False, True]


def test_tls12_server_keeps_and_offers_nothing(layer, tmp_path):
    """A TLS 1.2 server: urllib3's contexts ask for no TLS 1.2 tickets (OP_NO_TICKET) and
    session-ID resumption needs both sides to close with close_notify, which urllib3 does not, so
    no session is kept (an offer would cost CPU for nothing): full handshakes, as stock's."""
    layer()
    resumed, context = calls_on_new_connections(tmp_path, 3, maximum_version=ssl.TLSVersion.TLSv1_2)
    assert resumed == [False, False, False]
    assert not context.get(resume.SESSIONS)


def test_metrics_count_resumed_and_refused_sessions(layer, tmp_path, capsys, monkeypatch):
    """EMF: TlsResumed counts a resumed handshake, TlsNotResumed a refused offer."""
    layer()
    monkeypatch.setattr(metrics, "_pending", None)
    monkeypatch.setattr(metrics, "enabled", True)
    monkeypatch.setattr(metrics, "_namespace", "test")
    authority = trustme.CA()
    server, bundle = tls_server(tmp_path, "a", authority)
    with server:
        ddb = client(server.url, bundle)
        ddb.list_tables()
        ddb.list_tables()
        fresh = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        authority.issue_cert("localhost").configure_cert(fresh)
        server.tls_context = fresh
        ddb.list_tables()
    out = capsys.readouterr().out
    assert out.count('"TlsResumed":1') == 1
    assert out.count('"TlsNotResumed":1') == 1


def test_cache_bounded_per_context(layer, tmp_path, monkeypatch):
    """At most MAX_PER_CONTEXT sessions per client context (one per host and port), the oldest
    dropped first; a host still cached still resumes."""
    layer()
    monkeypatch.setattr(resume, "MAX_PER_CONTEXT", 2)
    authority = trustme.CA()
    servers = [tls_server(tmp_path, "s%d" % i, authority)[0] for i in range(3)]
    bundle = str(tmp_path / "ca.pem")
    authority.cert_pem.write_to_path(bundle)
    http = URLLib3Session(verify=bundle)  # one client's HTTP session: one context
    for server in servers:
        server.__enter__()
    try:
        for server in servers + servers[2:]:
            request = AWSRequest(method="POST", url=server.url, data=b"{}").prepare()
            assert http.send(request).status_code == 200
        context = http._manager.connection_pool_kw["ssl_context"]
        cached_ports = [key[1] for key in vars(context)[resume.SESSIONS]]
        assert cached_ports == [servers[1].server_address[1], servers[2].server_address[1]]
        assert servers[2].tls_resumed == [False, True]
    finally:
        for server in servers:
            server.__exit__(None, None, None)


def test_a_context_resume_touched_is_freed_without_the_cycle_collector():
    """The per-context wrap_socket refers to its context weakly: a dropped context (and its
    sessions) goes at once, as an untouched one does, not at the next garbage collection."""
    import gc
    import weakref

    context = ssl.create_default_context()
    resume._install(context)
    assert isinstance(vars(context)["wrap_socket"], resume._ResumingWrap)
    gone = weakref.ref(context)
    gc.disable()
    try:
        del context
        assert gone() is None
    finally:
        gc.enable()


AIO_SCRIPT = """
import asyncio, json, sys
sys.path.insert(0, %(aio)r)
from aws_keepalive import aio, patch, settings
config = settings.Settings(tls_resume=%(on)r)
patch.apply(config)
aio.apply(config)
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session

async def main():
    async with get_session().create_client(
            "dynamodb", region_name="us-east-1", endpoint_url=%(url)r, verify=%(verify)r,
            aws_access_key_id="a", aws_secret_access_key="b",
            config=AioConfig(retries={"max_attempts": 1})) as client:
        for _ in range(3):
            await client.list_tables()
asyncio.run(main())
"""


@pytest.mark.parametrize("name,on,expected", [
    ("aiobotocore-3.10.0", True, [False, True, True]),
    ("aiobotocore-3.10.0", False, [False, False, False]),
] + ([
    # aiohttp 3.9.5's aiobotocore 2.26 context checks no hostname in OpenSSL (check_hostname off):
    # nothing is offered there.  (No aiohttp 3.9.5 wheels for CPython 3.13+: see test_aio.MATRIX.)
    ("aiobotocore-2.26.0-aiohttp-3.9.5", True, [False, False, False]),
] if sys.version_info < (3, 13) else []))
def test_aiobotocore_new_connections_resume(tmp_path, name, on, expected):
    """An aiobotocore client's new connections resume its verified session (asyncio's wrap_bio
    gets the task's offer), only with the switch on and a context that checks the hostname."""
    from conftest import python_with_layer
    from test_aio import AIO_DIRS, MINOR

    folder = os.path.join(AIO_DIRS, MINOR, name)
    assert os.path.isfile(os.path.join(folder, ".done")), "%s missing under %r: run `make test`" % (name, AIO_DIRS)
    server, bundle = tls_server(tmp_path, "a")
    with server:
        run = python_with_layer(AIO_SCRIPT % dict(aio=folder, on=on, url=server.url, verify=bundle))
        assert run.returncode == 0, run.stderr
        assert server.tls_resumed == expected


@pytest.mark.parametrize("step", ["key_of", "_keep", "_connected"])
def test_a_failure_inside_is_reported_once_and_calls_go_on(layer, tmp_path, monkeypatch, capsys, step):
    """Whatever step of resume.py fails, every call succeeds on a full handshake and one warning
    says so (the hook never breaks a function)."""
    layer()
    monkeypatch.setattr(diagnostics, "_reported", set())

    def broken(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(resume, step, broken)
    resumed, _ = calls_on_new_connections(tmp_path, 3)
    assert resumed == [False, False, False]
    warnings = [line for line in capsys.readouterr().err.splitlines() if "TLS session resumption failed" in line]
    assert len(warnings) == 1 and "injected" in warnings[0]


def test_a_rotated_client_certificate_is_never_resumed_past(layer, tmp_path):
    """mTLS with trust.py's once-per-client certificate load: after the certificate files are
    rewritten with one the server refuses, the next connection presents it (refused, as stock's),
    not a session resumed from the old certificate's handshake; rotated back, it is accepted."""
    import shutil

    from aws_keepalive import trust
    from botocore.exceptions import ConnectionClosedError
    from test_trust import MutualTlsServer
    from test_trust import client as trust_client

    assert resume.CLIENT_CERT == trust.CLIENT_CERT
    layer()
    trust.patch(settings.Settings(), None, None)
    try:
        with MutualTlsServer(tmp_path, "m") as mtls:
            stranger = trustme.CA().issue_cert("stranger@example.com")
            stranger_cert, stranger_key = str(tmp_path / "stranger.pem"), str(tmp_path / "stranger.key")
            stranger.cert_chain_pems[0].write_to_path(stranger_cert)
            stranger.private_key_pem.write_to_path(stranger_key)
            cert, key = str(tmp_path / "rotating.pem"), str(tmp_path / "rotating.key")
            rotating = None
            # Accepted, then rotated to the stranger (refused), then back (accepted, in full).
            for source_cert, source_key, accepted in ((mtls.client_cert, mtls.client_key, [False, True]),
                                                      (stranger_cert, stranger_key, [False, True]),
                                                      (mtls.client_cert, mtls.client_key, [False, True, False])):
                shutil.copyfile(source_cert, cert)
                shutil.copyfile(source_key, key)
                rotating = rotating or trust_client(mtls.server.url, mtls.ca_bundle, client_cert=(cert, key))
                if source_cert == stranger_cert:
                    with pytest.raises((SSLError, ConnectionClosedError)):
                        rotating.list_tables()
                else:
                    rotating.list_tables()
                    if len(accepted) == 2:
                        rotating.list_tables()
                assert mtls.server.tls_resumed == accepted
    finally:
        unpatch.trust()


def test_a_session_is_never_offered_past_its_server_certificates_expiry(layer, tmp_path, monkeypatch, capsys):
    """The server's certificate expired after the session was made (the server still presents
    it): stock's next full handshake fails CERTIFICATE_VERIFY_FAILED, so must the layer's -- a
    resumed TLS 1.3 handshake verifies no certificate and would succeed.  Before that, resumed
    connections keep no session of their own (reading one costs more CPU than resuming saves):
    the full handshake's session is offered again, and nothing is reported."""
    import datetime
    import time

    monkeypatch.setattr(diagnostics, "_reported", set())
    layer()
    authority = trustme.CA()
    expires = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=3)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("localhost", not_after=expires).configure_cert(context)
    bundle = str(tmp_path / "expiring-ca.pem")
    authority.cert_pem.write_to_path(bundle)
    with DynamoDBShapedServer(tls_context=context, close_after_response=True) as server:
        ddb = client(server.url, bundle)
        ddb.list_tables()
        first = list(vars(context_of(ddb))[resume.SESSIONS].values())[0][1]
        ddb.list_tables()
        ddb.list_tables()
        assert server.tls_resumed == [False, True, True]
        assert list(vars(context_of(ddb))[resume.SESSIONS].values())[0][1] is first
        time.sleep(max(0.0, expires.timestamp() - time.time()) + 1.5)
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            ddb.list_tables()
        assert server.tls_resumed == [False, True, True]
    assert "TLS session resumption failed" not in capsys.readouterr().err


class _RefusingEveryTicket:
    """A server TLS context that forgets its ticket keys at each connection (a fleet that shares
    none): every offered session is refused."""

    def __init__(self, leaf):
        self.leaf = leaf

    def wrap_socket(self, *args, **kwargs):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.leaf.configure_cert(context)
        return context.wrap_socket(*args, **kwargs)


def test_a_server_refusing_every_ticket_is_offered_one_less_and_less_often(layer, tmp_path, capsys):
    """A refused offer costs ~1.2x a full handshake's client CPU: against a server refusing every
    ticket, 12 new connections offer 4 times (calls 2, 3, 5, 9), not 11; once the server accepts
    again, one resumption ends the back-off and the next connections resume."""
    layer()
    diagnostics.debug_enabled = True
    try:
        authority = trustme.CA()
        leaf = authority.issue_cert("localhost")
        server, bundle = tls_server(tmp_path, "a", authority)
        stable = server.tls_context
        server.tls_context = _RefusingEveryTicket(leaf)
        with server:
            ddb = client(server.url, bundle)
            for _ in range(12):
                ddb.list_tables()
            assert capsys.readouterr().err.count("TLS session not resumed") == 4
            server.tls_context = stable
            for _ in range(8):
                ddb.list_tables()
            assert server.tls_resumed[12:] == [False] * 4 + [True] * 4
    finally:
        diagnostics.debug_enabled = False
