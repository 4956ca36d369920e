"""trust.py: each client's CA bundle is loaded once, and verification stays exactly as strict,
checked with real botocore clients against real TLS servers on loopback."""

import ssl

import botocore.session
import pytest
import trustme
from botocore.config import Config
from botocore.exceptions import ConnectionClosedError, ProxyConnectionError, SSLError
from botocore.httpsession import URLLib3Session
import test_matrix
from conftest import ON
from ddb_server import DynamoDBShapedServer

from aws_keepalive import patch, settings, trust


@pytest.fixture
def trust_once():
    """The layer's trust patch on this process's botocore, removed after the test (with the
    process's shared contexts, so no test sees another's)."""
    trust._shared.clear()
    trust.patch(settings.Settings(), None, None)
    yield
    for name in ("_setup_ssl_cert", "_get_pool_manager_kwargs"):
        setattr(URLLib3Session, name, getattr(getattr(URLLib3Session, name), patch.WRAPPED))
    trust._shared.clear()


@pytest.fixture
def loads(monkeypatch):
    """The bundle paths passed to the real SSLContext.load_verify_locations, in order."""
    seen = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self, cafile=None, *args, **kwargs):
        seen.append(cafile)
        return original(self, cafile, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    return seen


class TlsServer:
    """A DynamoDB-shaped TLS server with a localhost certificate from its own CA."""

    def __init__(self, tmp_path, name, close_after_response=True):
        authority = trustme.CA()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        authority.issue_cert("localhost").configure_cert(context)
        self.ca_bundle = str(tmp_path / ("%s-ca.pem" % name))
        authority.cert_pem.write_to_path(self.ca_bundle)
        self.server = DynamoDBShapedServer(
            tls_context=context, close_after_response=close_after_response
        )

    def __enter__(self):
        self.server.__enter__()
        return self

    def __exit__(self, *exc):
        self.server.__exit__(*exc)


def client(url, verify, session=None, **config):
    session = session or botocore.session.get_session()
    return session.create_client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=url,
        verify=verify,
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}, **config),
    )


def context_of(ddb):
    """The SSLContext a client's pools get (botocore's private pool manager)."""
    return ddb._endpoint.http_session._manager.connection_pool_kw["ssl_context"]


def test_bundle_loaded_once_for_many_new_connections(trust_once, loads, tmp_path):
    """Three calls on three new connections load the client's bundle once (stock: three times)."""
    with TlsServer(tmp_path, "a") as tls:
        ddb = client(tls.server.url, tls.ca_bundle)
        for _ in range(3):
            ddb.list_tables()
        assert tls.server.connections == 3
    assert loads.count(tls.ca_bundle) == 1


def test_stock_loads_per_connection(loads, tmp_path):
    """Without the patch urllib3 re-reads the bundle for every new connection (the cost fixed)."""
    with TlsServer(tmp_path, "a") as tls:
        ddb = client(tls.server.url, tls.ca_bundle)
        for _ in range(3):
            ddb.list_tables()
    assert loads.count(tls.ca_bundle) == 3


def test_unknown_ca_is_still_rejected(trust_once, tmp_path):
    """A server whose CA is not in the client's bundle fails verification, every time."""
    with TlsServer(tmp_path, "a") as tls, TlsServer(tmp_path, "b") as other:
        ddb = client(tls.server.url, other.ca_bundle)
        for _ in range(2):
            with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
                ddb.list_tables()


def test_hostname_mismatch_is_still_rejected(trust_once, tmp_path):
    """A trusted certificate for another name (localhost, reached as 127.0.0.1) is rejected."""
    with TlsServer(tmp_path, "a") as tls:
        good = client(tls.server.url, tls.ca_bundle)
        good.list_tables()
        by_ip = client(tls.server.url.replace("localhost", "127.0.0.1"), tls.ca_bundle)
        for _ in range(2):
            with pytest.raises(SSLError):
                by_ip.list_tables()


def test_clients_with_different_bundles_never_share_cas(trust_once, tmp_path):
    """Client A trusts only CA a, client B only CA b, whichever connected first."""
    with TlsServer(tmp_path, "a") as a, TlsServer(tmp_path, "b") as b:
        client_a = client(a.server.url, a.ca_bundle)
        client_b = client(b.server.url, b.ca_bundle)
        client_a.list_tables()
        client_b.list_tables()
        cross_a = client(b.server.url, a.ca_bundle)
        cross_b = client(a.server.url, b.ca_bundle)
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            cross_a.list_tables()
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            cross_b.list_tables()
        client_a.list_tables()
        client_b.list_tables()


def test_verify_false_still_connects(trust_once, loads, tmp_path):
    """verify=False connects to an untrusted server and loads no bundle."""
    with TlsServer(tmp_path, "a") as tls:
        ddb = client(tls.server.url, False)
        ddb.list_tables()
        ddb.list_tables()
    assert loads == []


LOADS_PER_NEW_CONNECTION = """
    import os
    import ssl

    import botocore.session

    loaded = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self, cafile=None, *args, **kwargs):
        loaded.append(cafile)
        return original(self, cafile, *args, **kwargs)

    ssl.SSLContext.load_verify_locations = counting

    def handler(event, context):
        ddb = botocore.session.get_session().create_client(
            "dynamodb", region_name="us-east-1", endpoint_url=os.environ["URL"])
        for _ in range(3):
            ddb.list_tables()
            ddb._endpoint.http_session._manager.clear()  # the next call opens a new connection
        return loaded.count(os.environ["AWS_CA_BUNDLE"])
"""


@pytest.mark.parametrize("env,loads_expected", [
    ({"AWS_PYTHON_KEEPALIVE": "1"}, 1),
    ({"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_TRUST_ONCE": "0"}, 3),
    ({}, 3),
])
def test_switch_loads_aws_ca_bundle_once(run_function, tls_server, env, loads_expected):
    """Through the layer's entry point, AWS_CA_BUNDLE is read once for three new connections;
    AWS_PYTHON_KEEPALIVE_TRUST_ONCE=0 (or the layer off) keeps stock's once per connection."""
    run = run_function(LOADS_PER_NEW_CONNECTION,
                       env=dict(env, URL=tls_server.url, AWS_CA_BUNDLE=tls_server.ca_bundle))
    assert run.result == loads_expected, run
    assert tls_server.connections == 3


@pytest.mark.parametrize("version", test_matrix.MATRIX)
def test_bundled_botocore_loads_bundle_once(version, run_function, tls_server, tmp_path):
    """A function's own botocore (the matrix versions) also reads AWS_CA_BUNDLE once for three
    new connections, and still verifies: the call succeeds only because the bundle was loaded."""
    task, opt = test_matrix._task_and_opt(tmp_path, test_matrix._folder(test_matrix.MINOR, version))
    run = run_function(LOADS_PER_NEW_CONNECTION, task=task, opt=opt,
                       env=dict(ON, URL=tls_server.url, AWS_CA_BUNDLE=tls_server.ca_bundle))
    assert run.result == 1, run
    assert not [line for line in run.layer_lines if "trust" in line], run.stderr


class ConnectProxy:
    """An HTTP CONNECT proxy on loopback that tunnels to 127.0.0.1:<the requested port>. With
    ``tmp_path``: an HTTPS proxy (TLS to the proxy, a certificate for localhost from its own CA,
    ``ca_bundle``), the client speaking TLS to the destination inside TLS to it."""

    def __init__(self, tmp_path=None):
        import socket
        import threading

        self.context = None
        if tmp_path is not None:
            authority = trustme.CA()
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            authority.issue_cert("localhost").configure_cert(self.context)
            self.ca_bundle = str(tmp_path / "proxy-ca.pem")
            authority.cert_pem.write_to_path(self.ca_bundle)
        self.listener = socket.create_server(("127.0.0.1", 0))
        port = self.listener.getsockname()[1]
        self.url = ("https://localhost:%d" if self.context else "http://127.0.0.1:%d") % port
        self.tunnels = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import threading

        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw):
        import select
        import socket

        upstream = None
        try:
            near = self.context.wrap_socket(raw, server_side=True) if self.context else raw
            head = b""
            while b"\r\n\r\n" not in head:
                head += near.recv(4096)
            port = int(head.split(b" ")[1].decode().rsplit(":", 1)[1])
            upstream = socket.create_connection(("127.0.0.1", port))
            self.tunnels += 1
            near.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            # One thread both ways: an SSLSocket must not be read and written from two threads, and
            # bytes it has already decrypted (pending) would not wake select.
            pending = getattr(near, "pending", lambda: 0)
            while True:
                ready = [near] if pending() else select.select([near, upstream], [], [], 10)[0]
                if not ready:
                    break
                if near in ready:
                    data = near.recv(65536)
                    if not data:
                        break
                    upstream.sendall(data)
                if upstream in ready:
                    data = upstream.recv(65536)
                    if not data:
                        break
                    near.sendall(data)
        except (OSError, ssl.SSLError):
            pass
        finally:
            for sock in (raw, upstream):
                if sock is not None:
                    sock.close()

    def close(self):
        self.listener.close()


def test_through_a_proxy_bundle_loaded_once_and_still_verified(trust_once, loads, tmp_path):
    """Through an HTTPS proxy tunnel: one bundle load for three new connections, and a server
    whose CA is not in the bundle is still rejected."""
    proxy = ConnectProxy()
    try:
        with TlsServer(tmp_path, "a") as tls, TlsServer(tmp_path, "b") as other:
            session = botocore.session.get_session()
            make = lambda verify: session.create_client(  # noqa: E731
                "dynamodb", region_name="us-east-1", endpoint_url=tls.server.url, verify=verify,
                aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
                config=Config(proxies={"https": proxy.url},
                              retries={"max_attempts": 1, "mode": "standard"}))
            ddb = make(tls.ca_bundle)
            for _ in range(3):
                ddb.list_tables()
            with pytest.raises(SSLError):
                make(other.ca_bundle).list_tables()
    finally:
        proxy.close()
    assert proxy.tunnels >= 4  # every connection went through the tunnel
    assert loads.count(tls.ca_bundle) == 1


# --- once per process: clients with the same TLS settings share one loaded context ---------------


def test_clients_with_the_same_bundle_share_one_load(trust_once, loads, tmp_path):
    """Three clients (three sessions, as boto3.client does) with one bundle: one load in the
    process, one context; each still verifies its server (stock: one load per connection)."""
    with TlsServer(tmp_path, "a") as tls:
        clients = [client(tls.server.url, tls.ca_bundle) for _ in range(3)]
        for ddb in clients:
            ddb.list_tables()
        assert tls.server.connections == 3
    assert loads.count(tls.ca_bundle) == 1
    assert len({id(context_of(ddb)) for ddb in clients}) == 1


def test_a_client_that_never_connects_loads_nothing(trust_once, loads, tmp_path):
    """Sharing moves no cost to client creation: a client that sends nothing loads no bundle."""
    with TlsServer(tmp_path, "a") as tls:
        client(tls.server.url, tls.ca_bundle)
    assert loads == []


def test_a_bundle_changed_on_disk_is_read_by_new_clients(trust_once, tmp_path):
    """The shared context is keyed on the file's identity: after the bundle file is rewritten
    with another CA, a new client trusts only the new CA; the old client keeps what it loaded."""
    with TlsServer(tmp_path, "a") as a, TlsServer(tmp_path, "b") as b:
        path = str(tmp_path / "bundle.pem")
        with open(path, "wb") as out:
            out.write(open(a.ca_bundle, "rb").read())
        old = client(a.server.url, path)
        old.list_tables()
        with open(path, "wb") as out:
            out.write(open(b.ca_bundle, "rb").read() + b"\n")
        client(b.server.url, path).list_tables()
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            client(a.server.url, path).list_tables()
        old.list_tables()


class MutualTlsServer(TlsServer):
    """A TLS server that requires a client certificate issued by its own CA."""

    def __init__(self, tmp_path, name):
        super().__init__(tmp_path, name, close_after_response=True)
        authority = trustme.CA()
        context = self.server.tls_context
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cadata=authority.cert_pem.bytes().decode())
        leaf = authority.issue_cert("lab-client@example.com")
        self.client_cert = str(tmp_path / ("%s-client.pem" % name))
        self.client_key = str(tmp_path / ("%s-client.key" % name))
        leaf.cert_chain_pems[0].write_to_path(self.client_cert)
        leaf.private_key_pem.write_to_path(self.client_key)


def test_client_certificates_keep_clients_apart(trust_once, tmp_path):
    """client_cert is honoured: with the same bundle, a client with the certificate gets through
    a server that demands one, a client without it is refused (whichever was created first), and
    the two never share a context."""
    with MutualTlsServer(tmp_path, "m") as mtls:
        without = client(mtls.server.url, mtls.ca_bundle)
        with_cert = client(mtls.server.url, mtls.ca_bundle,
                           client_cert=(mtls.client_cert, mtls.client_key))
        with_cert.list_tables()
        # TLS 1.3: the server's "certificate required" alert arrives on the first read, or the
        # server's close does.
        with pytest.raises((SSLError, ConnectionClosedError)):
            without.list_tables()
        with_cert.list_tables()
        assert context_of(with_cert) is not context_of(without)
        again = client(mtls.server.url, mtls.ca_bundle, client_cert=(mtls.client_cert, mtls.client_key))
        again.list_tables()
        assert context_of(again) is context_of(with_cert)


def test_profile_ca_bundle_and_aws_ca_bundle_honoured(trust_once, loads, tmp_path, monkeypatch):
    """The profile's ca_bundle and AWS_CA_BUNDLE are what the client trusts, as stock: each
    connects to its server, rejects the other's, and is loaded once for two new connections."""
    with TlsServer(tmp_path, "a") as a, TlsServer(tmp_path, "b") as b:
        config_file = tmp_path / "config"
        config_file.write_text("[default]\nca_bundle = %s\n" % a.ca_bundle)
        monkeypatch.setenv("AWS_CONFIG_FILE", str(config_file))
        monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)
        for _ in range(2):
            client(a.server.url, None).list_tables()
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            client(b.server.url, None).list_tables()
        monkeypatch.setenv("AWS_CA_BUNDLE", b.ca_bundle)  # the variable wins over the profile
        for _ in range(2):
            client(b.server.url, None).list_tables()
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            client(a.server.url, None).list_tables()
        client(a.server.url, a.ca_bundle).list_tables()  # an explicit verify wins over both
    assert loads.count(a.ca_bundle) == 1 and loads.count(b.ca_bundle) == 1


def test_https_proxy_with_its_own_ca_bundle(trust_once, loads, tmp_path):
    """proxies_config's proxy_ca_bundle verifies the proxy, the client's bundle the destination
    inside the tunnel: three new connections load each once; a proxy bundle without the proxy's
    CA is refused, and so is a destination whose CA is not in the client's bundle."""
    proxy = ConnectProxy(tmp_path)
    try:
        with TlsServer(tmp_path, "a") as tls, TlsServer(tmp_path, "b") as other:
            def make(verify, proxy_ca):
                return client(tls.server.url, verify, proxies={"https": proxy.url},
                              proxies_config={"proxy_ca_bundle": proxy_ca})

            ddb = make(tls.ca_bundle, proxy.ca_bundle)
            for _ in range(3):
                ddb.list_tables()
            assert proxy.tunnels == 3
            with pytest.raises(ProxyConnectionError) as refused:
                make(tls.ca_bundle, other.ca_bundle).list_tables()  # the proxy is not trusted
            assert "CERTIFICATE_VERIFY_FAILED" in str(refused.value.kwargs.get("error"))
            with pytest.raises(SSLError):
                make(other.ca_bundle, proxy.ca_bundle).list_tables()  # the destination is not
    finally:
        proxy.close()
    assert loads.count(tls.ca_bundle) == 1
    assert loads.count(proxy.ca_bundle) == 2  # botocore's own: once per proxy manager (two clients)


def test_contexts_with_other_settings_are_not_shared(trust_once, tmp_path, monkeypatch):
    """A create_urllib3_context patched to make one client's context stricter (TLS 1.3 only) keeps
    that client apart from a default one with the same bundle, and a non-SSLContext (a test's
    mock) is never shared."""
    import botocore.httpsession

    original = botocore.httpsession.create_urllib3_context
    with TlsServer(tmp_path, "a") as tls:
        default = client(tls.server.url, tls.ca_bundle)

        def tls13_only(*args, **kwargs):
            context = original(*args, **kwargs)
            context.minimum_version = ssl.TLSVersion.TLSv1_3
            return context

        monkeypatch.setattr(botocore.httpsession, "create_urllib3_context", tls13_only)
        strict = client(tls.server.url, tls.ca_bundle)
        monkeypatch.setattr(botocore.httpsession, "create_urllib3_context", original)
        default.list_tables()
        strict.list_tables()
        assert context_of(strict) is not context_of(default)
        assert context_of(strict).minimum_version == ssl.TLSVersion.TLSv1_3
        assert context_of(default).minimum_version != ssl.TLSVersion.TLSv1_3
        client(tls.server.url, tls.ca_bundle).list_tables()
    kwargs = {"ssl_context": object(), "cert_file": None, "key_file": None}
    session = URLLib3Session(verify=tls.ca_bundle)
    assert trust.shared_context(session, kwargs) is None
