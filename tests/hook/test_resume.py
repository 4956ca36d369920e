"""resume.py: a new connection resumes the TLS session of an earlier verified one of the same
client, host and verify settings, and never anything else; checked with real botocore clients
against real TLS servers on loopback, whose own view (``session_reused``) is read back."""

import os
import ssl
import sys

import botocore.session
import pytest
import trustme
from botocore.config import Config
from botocore.exceptions import SSLError
import unpatch
from ddb_server import DynamoDBShapedServer

from aws_keepalive import diagnostics, metrics, patch, resume, settings, snapstart
import resume_scenarios
from psk_middlebox import PskMiddlebox


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


def tls_server(tmp_path, name, authority=None, maximum_version=None, leaf=None):
    """A DynamoDB-shaped TLS server that closes each connection after answering (so every call
    opens a new one), with a localhost certificate from ``authority`` (``leaf``, if given); its CA
    bundle's path."""
    authority = authority or trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    (leaf or authority.issue_cert("localhost")).configure_cert(context)
    if maximum_version is not None:
        context.maximum_version = maximum_version
    bundle = str(tmp_path / ("%s-ca.pem" % name))
    authority.cert_pem.write_to_path(bundle)
    return DynamoDBShapedServer(tls_context=context, close_after_response=True), bundle


def client(url, verify, config=None):
    return botocore.session.get_session().create_client(
        "dynamodb", region_name="us-east-1", endpoint_url=url, verify=verify,
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        config=config or Config(retries={"max_attempts": 1, "mode": "standard"}),
    )


def outcomes_of(ddb, calls):
    """``calls`` calls of ``ddb``: "ok" or the exception's type name, per call."""
    outcomes = []
    for _ in range(calls):
        try:
            ddb.list_tables()
            outcomes.append("ok")
        except Exception as error:
            outcomes.append(type(error).__name__)
    return outcomes


def context_of(ddb):
    return ddb._endpoint.http_session._manager.connection_pool_kw["ssl_context"]


def sessions_of(ddb):
    """What resume.py holds for a client: its connection pools' caches (resume.Cache)."""
    sessions = {}
    for pool in list(ddb._endpoint.http_session._manager.pools._container.values()):
        cache = getattr(pool, resume.CACHE, None)
        if cache is not None:
            sessions.update(cache.sessions)
    return sessions


def calls_on_new_connections(tmp_path, calls, verify=True, maximum_version=None):
    """``calls`` calls of one client, each on a new connection to a fresh server (``verify``: True
    for the server's own bundle, else botocore's verify value); (the server's tls_resumed, what
    the client holds of resume.py's: its pools' sessions, its context's __dict__)."""
    server, bundle = tls_server(tmp_path, "a", maximum_version=maximum_version)
    with server:
        ddb = client(server.url, bundle if verify is True else verify)
        for _ in range(calls):
            ddb.list_tables()
        assert server.requests == calls
        return server.tls_resumed, sessions_of(ddb), vars(context_of(ddb))


def test_new_connections_resume_the_clients_verified_session(layer, tmp_path):
    """Each new connection after the first resumes (the server says so), one session kept."""
    layer()
    resumed, sessions, _ = calls_on_new_connections(tmp_path, 4)
    assert resumed == [False, True, True, True]
    assert len(sessions) == 1


def test_stock_never_resumes(tmp_path):
    """Without the layer every new connection is a full handshake (what is being saved)."""
    assert calls_on_new_connections(tmp_path, 3)[0] == [False, False, False]


def test_switched_off_never_resumes(layer, tmp_path):
    """AWS_PYTHON_KEEPALIVE_TLS_RESUME=0: full handshakes, the context untouched."""
    layer(tls_resume=False)
    resumed, sessions, context = calls_on_new_connections(tmp_path, 3)
    assert resumed == [False, False, False]
    assert not sessions and "wrap_socket" not in context


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
    resumed, sessions, _ = calls_on_new_connections(tmp_path, 3, verify=False)
    assert resumed == [False, False, False]
    assert not sessions


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
        assert calls_in_a_forked_child(ddb, 1) == 0
        ddb.list_tables()
        assert server.tls_resumed == [False, False, True]


def calls_in_a_forked_child(ddb, calls):
    """``calls`` calls of ``ddb`` in a forked child; its exit code (0: all succeeded)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for _ in range(calls):
                ddb.list_tables()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_forked_child_is_not_blocked_by_a_probe_in_flight_in_its_parent(layer, tmp_path):
    """Forked while another thread of the parent is connecting with the first offer for a key (a
    probe, which holds off other offers for that key until it ends): the child's first connection
    is a full handshake and its second resumes -- the parent's probe, which never ends in the
    child, does not hold the child's offers off."""
    import threading

    layer()
    server, bundle = tls_server(tmp_path, "a")
    with server:
        ddb = client(server.url, bundle)
        ddb.list_tables()
        pool = next(iter(ddb._endpoint.http_session._manager.pools._container.values()))
        cache = getattr(pool, resume.CACHE)
        (key, entry), = cache.sessions.items()
        tokens = []
        # What before_connect does for a connection of another thread, up to its handshake.
        probing = threading.Thread(target=lambda: tokens.append(resume._offer_for(cache, entry[3], key)))
        probing.start()
        probing.join()
        assert cache.probes.get(key) is tokens[0][2]
        assert calls_in_a_forked_child(ddb, 2) == 0
        resume._connected(None, None, tokens[0], True)  # the parent's probe ends (never handed)
        assert server.tls_resumed == [False, False, True]


def test_tls12_server_keeps_and_offers_nothing(layer, tmp_path):
    """A TLS 1.2 server: urllib3's contexts ask for no TLS 1.2 tickets (OP_NO_TICKET) and
    session-ID resumption needs both sides to close with close_notify, which urllib3 does not, so
    no session is kept (an offer would cost CPU for nothing): full handshakes, as stock's."""
    layer()
    resumed, sessions, _ = calls_on_new_connections(tmp_path, 3, maximum_version=ssl.TLSVersion.TLSv1_2)
    assert resumed == [False, False, False]
    assert not sessions


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


def test_cache_bounded_per_pool(layer, tmp_path, monkeypatch):
    """At most MAX_PER_CACHE sessions per pool's cache, the oldest dropped first: each connection
    here has a key of its own (as each client-certificate rotation makes), so each keeps one."""
    layer()
    monkeypatch.setattr(resume, "MAX_PER_CACHE", 2)
    key_of, made = resume.key_of, []

    def new_key_each_time(conn):
        key = key_of(conn)
        made.append(key[:-1] + (len(made), key[-1]))  # server_hostname stays last
        return made[-1]

    monkeypatch.setattr(resume, "key_of", new_key_each_time)
    resumed, sessions, _ = calls_on_new_connections(tmp_path, 3)
    assert resumed == [False, False, False]
    assert list(sessions) == made[1:]


def test_a_context_resume_touched_is_freed_without_the_cycle_collector():
    """The per-context wrap_socket refers to its context weakly: a dropped context goes at once,
    as an untouched one does, not at the next garbage collection."""
    import gc
    import weakref

    context = ssl.create_default_context()
    assert resume.resumable(context)
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


# CPython 3.10: aiobotocore connections never resume (resume.before_aio_connect: asyncio's wrap_bio
# runs in a copied context there, so a failed offer could not be seen); the other cases still hold.
AIO_RESUMES = sys.version_info >= (3, 11)


@pytest.mark.parametrize("name,on,expected", [
    ("aiobotocore-3.10.0", True, [False, AIO_RESUMES, AIO_RESUMES]),
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


def stock_then_layer(script, **params):
    """``script`` (a resume_scenarios script printing one JSON object last) run in two fresh
    interpreters, the layer off then on; the two objects."""
    import json

    from conftest import python_with_layer

    runs = []
    for on in (False, True):
        run = python_with_layer(script % dict(params, on=on, here=os.path.dirname(os.path.abspath(__file__))))
        assert run.returncode == 0, run.stderr
        runs.append(json.loads(run.stdout.splitlines()[-1]))
    return runs


def aiobotocore_folder():
    """aiobotocore 3.10.0's stand-in /var/task folder for this interpreter."""
    from test_aio import AIO_DIRS, MINOR

    folder = os.path.join(AIO_DIRS, MINOR, "aiobotocore-3.10.0")
    assert os.path.isfile(os.path.join(folder, ".done")), "missing under %r: run `make test`" % (AIO_DIRS,)
    return folder


def test_aiobotocore_context_overriding_wrap_bio_runs_it_as_often_as_stock(tmp_path):
    """aiobotocore whose contexts are a subclass overriding ``wrap_bio``: the layer leaves them
    as stock uses them -- the override runs once per new connection with the layer as without
    (the layer on 3e5c09a: 0 runs, stock 3), the same outcomes, nothing resumed."""
    server, bundle = tls_server(tmp_path, "a")
    with server:
        runs = stock_then_layer(resume_scenarios.AIO_OVERRIDE_SCRIPT, aio=aiobotocore_folder(),
                                url=server.url, bundle=bundle, calls=3)
    assert runs[0] == {"outcomes": ["ok"] * 3, "calls": {"wrap_socket": 0, "wrap_bio": 3}}
    assert runs[1] == runs[0]
    assert server.tls_resumed == [False] * 6


def test_aiobotocore_behind_a_middlebox_resetting_psk_hellos_offers_once(tmp_path):
    """aiobotocore behind a middlebox that resets every ClientHello carrying a PSK: the session
    asyncio's wrap_bio put into the one reset hello ends offering for that key, so 6 calls send
    one PSK hello in all (the layer on 3e5c09a: one per new connection), all succeeding as stock."""
    server, bundle = tls_server(tmp_path, "a")
    with server:
        runs = stock_then_layer(resume_scenarios.AIO_MIDDLEBOX_SCRIPT, aio=aiobotocore_folder(),
                                bundle=bundle, target=server.server_address, action="reset",
                                addresses=1, calls=6)
    # Plain hellos: at least one per connection (a connect past its timeout on a busy machine is
    # retried, stock's too); PSK hellos: none from stock, one from the layer where it resumes.
    assert runs[0]["outcomes"] == ["ok"] * 6
    assert True not in runs[0]["hellos"][0] and len(runs[0]["hellos"][0]) >= 6
    assert runs[1]["outcomes"] == runs[0]["outcomes"]
    assert runs[1]["hellos"][0].count(True) == AIO_RESUMES, runs[1]
    assert runs[1]["hellos"][0].count(False) >= 6, runs[1]


@pytest.mark.parametrize("action", ["drop", "reset"])
def test_aiobotocore_to_a_two_address_host_behind_a_psk_refusing_middlebox_offers_once(tmp_path, action):
    """aiobotocore to a name with two addresses, each behind a middlebox dropping (or resetting)
    PSK hellos: aiohttp retries a failed handshake on the next address, where nothing is offered,
    so the call succeeds -- and that one failed offer still ends offering for the key: 12 calls,
    one PSK hello, as many outcomes as stock (main at 6bd5fa1 took it for a refusal and backed
    off: 4 PSK hellos, each a connect timeout when dropped)."""
    server, bundle = tls_server(tmp_path, "a")
    with server:
        runs = stock_then_layer(resume_scenarios.AIO_MIDDLEBOX_SCRIPT, aio=aiobotocore_folder(),
                                bundle=bundle, target=server.server_address, action=action,
                                addresses=2, calls=12)
    assert runs[0]["outcomes"] == ["ok"] * 12
    stock_hellos = runs[0]["hellos"][0] + runs[0]["hellos"][1]
    assert True not in stock_hellos and len(stock_hellos) >= 12
    assert runs[1]["outcomes"] == runs[0]["outcomes"]
    assert sum(hellos.count(True) for hellos in runs[1]["hellos"]) == int(AIO_RESUMES), runs[1]


@pytest.mark.parametrize("step", ["key_of", "_keep", "_connected"])
def test_a_failure_inside_is_reported_once_and_calls_go_on(layer, tmp_path, monkeypatch, capsys, step):
    """Whatever step of resume.py fails, every call succeeds on a full handshake and one warning
    says so (the hook never breaks a function)."""
    layer()
    monkeypatch.setattr(diagnostics, "_reported", set())

    def broken(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(resume, step, broken)
    resumed = calls_on_new_connections(tmp_path, 3)[0]
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
        first = list(sessions_of(ddb).values())[0][1]
        ddb.list_tables()
        ddb.list_tables()
        assert server.tls_resumed == [False, True, True]
        assert list(sessions_of(ddb).values())[0][1] is first
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


# --- issue 34: trust exactly stock's, failed offers, cycles, TLS 1.2 reads, rotation ---------------


@pytest.mark.parametrize("pinned", [True, False], ids=["pin-matches", "pin-differs"])
def test_a_pinning_subclass_runs_its_own_wrap_socket_as_often_as_stock(layer, tmp_path, pinned):
    """An SSLContext subclass pinning the server certificate in its wrap_socket override: the
    layer leaves its contexts as stock uses them -- same outcomes (refused when the pin differs),
    the override run as often, nothing offered, nothing set on the instance."""
    authority = trustme.CA()
    leaf = authority.issue_cert("localhost")
    server, bundle = tls_server(tmp_path, "a", authority, leaf=leaf)
    pins = {resume_scenarios.leaf_pin(leaf)} if pinned else {"0" * 64}
    runs = []
    with server:
        for on in (False, True):
            if on:
                layer()
            with resume_scenarios.botocore_context_class(resume_scenarios.pinning_context_class(pins)) as cls:
                ddb = client(server.url, bundle)
                runs.append((outcomes_of(ddb, 3), dict(cls.calls), sorted(vars(context_of(ddb)))))
    assert runs[0][0] == (["ok"] * 3 if pinned else ["SSLError"] * 3)
    assert runs[0][1]["wrap_socket"] >= 3  # botocore retries some SSL errors once more
    assert runs[1] == runs[0]
    assert server.tls_resumed == [False] * (6 if pinned else 0)


def test_wrap_socket_patched_on_the_class_after_activation_runs_as_in_stock(layer, tmp_path, monkeypatch):
    """``ssl.SSLContext.wrap_socket`` replaced on the class after a client's context got
    resume.py's instance attributes (a tracer installed late): the replacement runs on each of
    the client's new connections as often as in stock, and nothing is offered through it."""
    server, bundle = tls_server(tmp_path, "a")
    runs = []
    with server:
        for on in (False, True):
            if on:
                layer()
            ddb = client(server.url, bundle)
            assert outcomes_of(ddb, 2) == ["ok"] * 2
            stdlib = ssl.SSLContext.wrap_socket
            calls = []

            def traced(context, *args, calls=calls, stdlib=stdlib, **kwargs):
                if not kwargs.get("server_side"):  # the in-process server wraps through it too
                    calls.append(kwargs.get("session"))
                return stdlib(context, *args, **kwargs)

            with monkeypatch.context() as patched:
                patched.setattr(ssl.SSLContext, "wrap_socket", traced)
                outcomes = outcomes_of(ddb, 3)
            runs.append((outcomes, calls, server.tls_resumed[-3:]))
    assert runs[0] == (["ok"] * 3, [None] * 3, [False] * 3)
    assert runs[1] == runs[0]
    assert server.tls_resumed[5:7] == [False, True]  # before the patch, the layer resumed


def test_a_context_other_code_patched_on_the_instance_is_left_alone(layer, tmp_path):
    """Other code set ``wrap_socket`` on each context instance (a tracer): its wrapper runs on
    every connection with the layer as without, and nothing is offered through it."""
    server, bundle = tls_server(tmp_path, "a")
    counts = []
    with server:
        for on in (False, True):
            if on:
                layer()
            with resume_scenarios.instance_patched_contexts() as made:
                assert outcomes_of(client(server.url, bundle), 3) == ["ok"] * 3
            counts.append([count[0] for count in made])
    assert counts == [[3], [3]]
    assert server.tls_resumed == [False] * 6


@pytest.mark.parametrize("extract", [True, False], ids=["injected-then-extracted", "injected-left-in"])
def test_truststore_contexts_are_left_as_stock_uses_them(tmp_path, extract):
    """truststore (PyPI) injected before botocore is imported, then extracted or left in: the
    clients' contexts are truststore's, so the layer neither offers nor touches them -- every
    call as stock's (stock: all succeed; the layer on 3e5c09a failed all, its wrap_socket skipping
    truststore's)."""
    server, bundle = tls_server(tmp_path, "a")
    with server:
        runs = stock_then_layer(resume_scenarios.TRUSTSTORE_SCRIPT, extract=extract, url=server.url,
                                bundle=bundle, calls=3)
    assert runs[0]["outcomes"] == ["ok"] * 3
    assert runs[1]["outcomes"] == runs[0]["outcomes"]
    assert runs[0]["context_class"] == runs[1]["context_class"] == "truststore._api"
    # Nothing of resume.py's on the instance (trust.py may record the bundle it loaded once).
    assert not {"wrap_socket", "wrap_bio"} & set(runs[1]["instance_attributes"])
    assert server.tls_resumed == [False] * 6


@pytest.mark.parametrize("action", ["drop", "reset"])
def test_a_middlebox_refusing_psk_hellos_costs_one_failed_offer(layer, tmp_path, action):
    """Behind a middlebox that drops (or resets) every ClientHello carrying a PSK: the one failed
    offer ends offering for that key, so 12 calls send one PSK hello in all (the layer on
    3e5c09a: one per new connection, each a connect timeout), and every call succeeds, as stock."""
    server, bundle = tls_server(tmp_path, "a")
    config = Config(connect_timeout=0.5, retries={"max_attempts": 3, "mode": "standard"})
    hellos = []
    with server:
        for on in (False, True):
            if on:
                layer()
            with PskMiddlebox(server.server_address, action) as middlebox:
                ddb = client("https://localhost:%d" % middlebox.address[1], bundle, config)
                assert outcomes_of(ddb, 12) == ["ok"] * 12
                hellos.append(list(middlebox.hellos))
    # Stock offers no PSK. The layer offers one, once: a plain hello per connection besides (a
    # connect that outlasts the timeout on a loaded machine is retried, by stock too, with one
    # plain hello more: the counts of plain hellos are at least, not exactly, one per connection).
    assert True not in hellos[0] and len(hellos[0]) >= 12
    assert hellos[1].count(True) == 1 and hellos[1].count(False) >= 12, hellos[1]
    assert server.tls_resumed == [False] * 24


def calls_at_once(ddb, threads):
    """``threads`` calls of ``ddb`` started together, one per thread; their outcomes."""
    import threading

    barrier = threading.Barrier(threads)
    outcomes = []

    def call():
        barrier.wait(10)
        outcomes.extend(outcomes_of(ddb, 1))

    workers = [threading.Thread(target=call) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    return outcomes


def test_threads_connecting_at_once_behind_a_psk_dropping_middlebox_offer_once(layer, tmp_path):
    """8 threads of one client connecting at once, a session cached and never yet resumed, behind
    a middlebox dropping PSK hellos: one of them offers (and waits its connect timeout), the others
    connect as stock; 17 calls send one PSK hello in all (main at 6bd5fa1: 8 at once, each a
    connect timeout -- 60 s at botocore's default)."""
    server, bundle = tls_server(tmp_path, "a")
    config = Config(connect_timeout=1, max_pool_connections=8,
                    retries={"max_attempts": 3, "mode": "standard"})
    hellos = []
    with server:
        for on in (False, True):
            if on:
                layer()
            with PskMiddlebox(server.server_address, "drop") as middlebox:
                ddb = client("https://localhost:%d" % middlebox.address[1], bundle, config)
                outcomes = outcomes_of(ddb, 1) + calls_at_once(ddb, 8) + calls_at_once(ddb, 8)
                assert outcomes == ["ok"] * 17
                hellos.append(list(middlebox.hellos))
    # As above: plain hellos at least one per call (CI at bf9fd37, CPython 3.14, the machine busy:
    # stock's 8 connects at once, one past its 0.5 s timeout and retried, sent 18 for 17 calls).
    assert True not in hellos[0] and len(hellos[0]) >= 17
    assert hellos[1].count(True) == 1 and hellos[1].count(False) >= 17, hellos[1]


def test_threads_connecting_at_once_all_resume_once_the_key_resumed(layer, tmp_path):
    """Once an offer for a key has resumed, 8 threads connecting at once all offer and all resume
    (only a key never resumed yet is probed by one connection at a time); before that, the probe
    resumes and those that connected while it was in flight did stock's full handshake."""
    layer()
    server, bundle = tls_server(tmp_path, "a")
    with server:
        ddb = client(server.url, bundle, Config(max_pool_connections=8, retries={"max_attempts": 1}))
        assert outcomes_of(ddb, 1) + calls_at_once(ddb, 8) == ["ok"] * 9
        assert server.tls_resumed[1:].count(True) >= 1  # the probe (and any after it ended)
        assert outcomes_of(ddb, 1) == ["ok"]  # the probe pattern again: one offer, it resumes
        assert server.tls_resumed[-1] is True
        assert calls_at_once(ddb, 8) == ["ok"] * 8
        assert server.tls_resumed[-8:] == [True] * 8


def test_dropped_clients_contexts_go_by_reference_counting(tmp_path):
    """60 clients made, each one verified TLS 1.3 call, then dropped, the cyclic GC disabled: as
    many contexts alive as stock's (none), and RSS growth within 4 MB of stock's (the layer on
    3e5c09a: 60 of 60 alive, a loaded CA bundle each).  The bundle: botocore's own plus the test
    CA, so each context holds what a real client's does."""

    import botocore


    server, bundle = tls_server(tmp_path, "a")
    full_bundle = str(tmp_path / "full-bundle.pem")
    with open(os.path.join(os.path.dirname(botocore.__file__), "cacert.pem")) as source:
        shipped = source.read()
    with open(full_bundle, "w") as target, open(bundle) as test_ca:
        target.write(shipped + "\n" + test_ca.read())
    with server:
        runs = stock_then_layer(resume_scenarios.CHURN_SCRIPT, url=server.url, bundle=full_bundle, clients=60)
    assert server.tls_resumed.count(True) == 0  # one call per client: nothing to resume
    assert runs[0]["alive"] == 0
    assert runs[1]["alive"] == runs[0]["alive"]
    assert runs[1]["rss_kb"] <= runs[0]["rss_kb"] + 4096, runs


def test_tls12_connections_never_read_their_session(layer, tmp_path, monkeypatch):
    """A TLS 1.2 connection's session is never copied out (``SSLSocket.session`` read): the
    version is looked at first.  Stock reads none; TLS 1.3: only the first full handshake's."""
    original = ssl.SSLSocket.session
    reads = []

    def counted(sock):
        reads.append(sock.version())
        return original.fget(sock)

    monkeypatch.setattr(ssl.SSLSocket, "session", property(counted, original.fset))
    layer()
    resumed = calls_on_new_connections(tmp_path, 20, maximum_version=ssl.TLSVersion.TLSv1_2)[0]
    assert resumed == [False] * 20
    assert reads == []
    resumed = calls_on_new_connections(tmp_path, 5)[0]
    assert resumed == [False, True, True, True, True]
    assert reads == ["TLSv1.3"]


def test_a_client_certificate_rotated_before_its_key_fails_as_stock(layer, tmp_path):
    """mTLS, the certificate file rewritten while the key file still holds the old key: stock
    fails every call from then on (urllib3 cannot load the pair); so does the layer -- the
    connection objects trust.py made (which load no file themselves) no longer offer the session
    of the old identity, since the files it was loaded from changed (the layer on 3e5c09a resumed
    it and succeeded)."""
    import shutil

    from aws_keepalive import trust
    from test_trust import MutualTlsServer
    from test_trust import client as trust_client

    runs = []
    with MutualTlsServer(tmp_path, "m") as mtls:
        try:
            for on in (False, True):
                if on:
                    layer()
                    trust.patch(settings.Settings(), None, None)
                cert, key = str(tmp_path / ("%s.pem" % on)), str(tmp_path / ("%s.key" % on))
                shutil.copyfile(mtls.client_cert, cert)
                shutil.copyfile(mtls.client_key, key)
                mutual = trust_client(mtls.server.url, mtls.ca_bundle, client_cert=(cert, key))
                outcomes = outcomes_of(mutual, 2)
                resume_scenarios.rotate_client_certificate_before_key(cert)
                outcomes += ["ok" if outcome == "ok" else "failed" for outcome in outcomes_of(mutual, 3)]
                runs.append(outcomes)
        finally:
            unpatch.trust()
        assert runs[0] == ["ok", "ok", "failed", "failed", "failed"]
        assert runs[1] == runs[0]
        assert mtls.server.tls_resumed == [False, False, False, True]


def test_cert_time_seconds_is_the_stdlibs_without_strptime():
    """resume.cert_time_seconds gives ssl.cert_time_to_seconds's answer for every month, day,
    time-of-day and leap-year boundary (None where the stdlib raises), and importing it and
    reading a real handshake's expiry does not import ``_strptime`` (~1 ms, stock never pays)."""
    for year in (1970, 2000, 2024, 2038, 2100, 2400, 9999):
        for month in resume._MONTHS:
            for day in range(1, 32):
                for clock in ("00:00:00", "23:59:59", "12:30:60"):
                    for stamp in ("%s %2d %s %d GMT" % (month, day, clock, year),
                                  "%s %02d %s %d GMT" % (month, day, clock, year)):
                        try:
                            expected = ssl.cert_time_to_seconds(stamp)
                        except ValueError:
                            expected = None
                        assert resume.cert_time_seconds(stamp) == expected, stamp
    for stamp in ("Nov 28 08:39:29.5 2026 GMT", "Nov 28 08:39:29 2026 UTC", "Nov 28 24:00:00 2026 GMT", None):
        assert resume.cert_time_seconds(stamp) is None


STRPTIME_SCRIPT = """
import json, socket, ssl, sys, threading
from aws_keepalive import resume
server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
server.load_cert_chain(%(cert)r, %(key)r)
client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
client.load_verify_locations(%(ca)r)
left, right = socket.socketpair()
accepted = threading.Thread(target=lambda: server.wrap_socket(right, server_side=True))
accepted.start()
sock = client.wrap_socket(left, server_hostname="localhost")
accepted.join()
before = "_strptime" in sys.modules
until = resume._verified_until(sock)
print(json.dumps({"before": before, "after": "_strptime" in sys.modules, "until": until,
                  "stdlib": ssl.cert_time_to_seconds(sock.getpeercert()["notAfter"])}))
"""


def test_reading_a_sessions_expiry_does_not_import_strptime(tmp_path):
    """A real handshake's verified-chain expiry is read without importing ``_strptime`` (stock
    never imports it; ssl.cert_time_to_seconds would, ~1 ms at full CPU), and equals the
    stdlib's answer."""
    import json

    from conftest import python_with_layer

    authority = trustme.CA()
    leaf = authority.issue_cert("localhost")
    cert, key, ca = (str(tmp_path / name) for name in ("leaf.pem", "leaf.key", "ca.pem"))
    leaf.cert_chain_pems[0].write_to_path(cert)
    leaf.private_key_pem.write_to_path(key)
    authority.cert_pem.write_to_path(ca)
    run = python_with_layer(STRPTIME_SCRIPT % dict(cert=cert, key=key, ca=ca))
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["before"] is False and result["after"] is False
    assert result["until"] == result["stdlib"]
