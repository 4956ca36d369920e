"""trust.py: each client verifies against exactly the CAs stock botocore uses -- under threads,
through every kind of proxy, with its own TLS settings -- while its CA bundle is parsed once per
client (an unknown bundle) or not at all (a known bundle, served from its hashed directory);
checked with real botocore clients against real TLS servers on loopback."""

import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time

import botocore.httpsession
import botocore.session
import pytest
import trustme
from botocore.config import Config
from botocore.exceptions import ConnectionClosedError, ProxyConnectionError, SSLError
from botocore.httpsession import URLLib3Session
import test_matrix
from conftest import ON, REPO
from ddb_server import DynamoDBShapedServer

from aws_keepalive import settings, trust, wrap

sys.path.insert(0, REPO)
from tools.packaging import ca_dir  # noqa: E402


@pytest.fixture
def trust_once():
    """The layer's trust patch on this process's botocore, removed after the test (with what it
    remembered about bundle files, so no test sees another's)."""
    trust._known.clear()
    trust.patch(settings.Settings(), None, None)
    yield
    URLLib3Session._setup_ssl_cert = getattr(URLLib3Session._setup_ssl_cert, wrap.WRAPPED)
    trust._known.clear()


@pytest.fixture
def known(tmp_path, monkeypatch):
    """known(bundle): make ``bundle`` one the layer knows, as its build does for the SDK's default
    bundle: a hashed directory written by tools/packaging/ca_dir.py under a CA root trust.py reads."""
    root = tmp_path / "ca-root"

    def make_known(bundle):
        monkeypatch.setattr(trust, "CA_ROOT", str(root))
        return ca_dir.build(bundle, str(root))

    return make_known


@pytest.fixture
def loads(monkeypatch):
    """The bundle paths passed to the real SSLContext.load_verify_locations, in order (a
    directory as ("capath", path))."""
    seen = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self, cafile=None, capath=None, *args, **kwargs):
        seen.append(cafile if capath is None else ("capath", capath))
        return original(self, cafile, capath, *args, **kwargs)

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
        config=Config(**{"retries": {"max_attempts": 1, "mode": "standard"}, **config}),
    )


def refused_client(url, verify, **config):
    """``client`` for calls that must be refused (see ``assert_refused``): one attempt per call."""
    return client(url, verify, retries={"total_max_attempts": 1, "mode": "standard"}, **config)


def assert_refused(call, match="", times=2):
    """``call()`` refused with SSLError (its message matching ``match``) ``times`` times, never
    accepted.  A connection reset instead (ConnectionClosedError over ConnectionResetError) is
    neither a refusal nor an acceptance and is called again, at most 3 times: on this machine, six
    suites at once, a new connection to a test server has met a reset during the handshake, on
    stock's paths too (fresh-clone CI at 3267d3c on 3.13, at d508231 on 3.14 on botocore's retry of
    a refused call, at 958ab9e on 3.10 on a one-attempt call); cause not found (the sandbox's network
    stack under load is the first suspect)."""
    refusals, resets = 0, 0
    while refusals < times:
        try:
            call()
        except SSLError as error:
            assert re.search(match, str(error)), error
            refusals += 1
        except ConnectionClosedError as error:
            assert "Connection reset" in str(error.kwargs.get("error")), error
            resets += 1
            assert resets <= 3, error
        else:
            pytest.fail("accepted: %r" % (call,))


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
        ddb = refused_client(tls.server.url, other.ca_bundle)
        assert_refused(ddb.list_tables, "CERTIFICATE_VERIFY_FAILED")


def test_hostname_mismatch_is_still_rejected(trust_once, tmp_path):
    """A trusted certificate for another name (localhost, reached as 127.0.0.1) is rejected."""
    with TlsServer(tmp_path, "a") as tls:
        good = client(tls.server.url, tls.ca_bundle)
        good.list_tables()
        by_ip = refused_client(tls.server.url.replace("localhost", "127.0.0.1"), tls.ca_bundle)
        assert_refused(by_ip.list_tables)


def test_clients_with_different_bundles_never_share_cas(trust_once, tmp_path):
    """Client A trusts only CA a, client B only CA b, whichever connected first."""
    with TlsServer(tmp_path, "a") as a, TlsServer(tmp_path, "b") as b:
        client_a = client(a.server.url, a.ca_bundle)
        client_b = client(b.server.url, b.ca_bundle)
        client_a.list_tables()
        client_b.list_tables()
        cross_a = refused_client(b.server.url, a.ca_bundle)
        cross_b = refused_client(a.server.url, b.ca_bundle)
        assert_refused(cross_a.list_tables, "CERTIFICATE_VERIFY_FAILED", times=1)
        assert_refused(cross_b.list_tables, "CERTIFICATE_VERIFY_FAILED", times=1)
        client_a.list_tables()
        client_b.list_tables()


def test_verify_false_still_connects(trust_once, loads, tmp_path):
    """verify=False connects to an untrusted server and loads no bundle."""
    with TlsServer(tmp_path, "a") as tls:
        ddb = client(tls.server.url, False)
        ddb.list_tables()
        ddb.list_tables()
    assert loads == []


CA_LOADS_PER_NEW_CONNECTION = """
    import os

    import botocore.session

    from keepalive_probe import record_ca_loads

    loaded = record_ca_loads()

    def handler(event, context):
        ddb = botocore.session.get_session().create_client(
            "dynamodb", region_name="us-east-1", endpoint_url=os.environ["URL"])
        for _ in range(3):
            ddb.list_tables()
            ddb._endpoint.http_session._manager.clear()  # the next call opens a new connection
        return loaded
"""


def _file_loads(run, bundle):
    """How many of the function's CA loads read the file ``bundle``."""
    return [cafile for cafile, _ in run.result].count(bundle)


@pytest.mark.parametrize("env,loads_expected", [
    ({"AWS_PYTHON_KEEPALIVE": "1"}, 1),
    ({"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_TRUST_ONCE": "0"}, 3),
    ({}, 3),
])
def test_switch_loads_aws_ca_bundle_once(run_function, tls_server, env, loads_expected):
    """Through the layer's entry point, AWS_CA_BUNDLE is read once for three new connections;
    AWS_PYTHON_KEEPALIVE_TRUST_ONCE=0 (or the layer off) keeps stock's once per connection."""
    run = run_function(CA_LOADS_PER_NEW_CONNECTION,
                       env=dict(env, URL=tls_server.url, AWS_CA_BUNDLE=tls_server.ca_bundle))
    assert _file_loads(run, tls_server.ca_bundle) == loads_expected, run
    assert tls_server.connections == 3


@pytest.mark.parametrize("version", test_matrix.MATRIX)
def test_bundled_botocore_loads_bundle_once(version, run_function, tls_server, tmp_path):
    """A function's own botocore (the matrix versions) also reads AWS_CA_BUNDLE once for three
    new connections, and still verifies: the call succeeds only because the bundle was loaded."""
    task, opt = test_matrix._task_and_opt(tmp_path, test_matrix._folder(test_matrix.MINOR, version))
    run = run_function(CA_LOADS_PER_NEW_CONNECTION, task=task, opt=opt,
                       env=dict(ON, URL=tls_server.url, AWS_CA_BUNDLE=tls_server.ca_bundle))
    assert _file_loads(run, tls_server.ca_bundle) == 1, run
    assert not [line for line in run.layer_lines if "trust" in line], run.stderr


@pytest.mark.parametrize("version", test_matrix.MATRIX)
def test_bundled_botocore_verifies_through_a_known_directory(version, run_function, tls_server, tmp_path):
    """A function's own botocore (the matrix versions: urllib3 1.26 and 2.x) with a bundle the
    layer knows: three new connections load its hashed directory, never the file, and succeed."""
    task, opt = test_matrix._task_and_opt(tmp_path, test_matrix._folder(test_matrix.MINOR, version))
    package = os.path.join(opt, "python", "aws_keepalive")
    os.remove(package)  # a symlink to layer/aws_keepalive: a copy gets the CA root
    shutil.copytree(os.path.join(REPO, "layer", "aws_keepalive"), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    directory = ca_dir.build(tls_server.ca_bundle, os.path.join(package, "ca"))
    run = run_function(CA_LOADS_PER_NEW_CONNECTION, task=task, opt=opt,
                       env=dict(ON, URL=tls_server.url, AWS_CA_BUNDLE=tls_server.ca_bundle))
    # One load per connection attempt, each the directory and never the file: under load a
    # retried attempt adds one (seen once each on two matrix versions in a loaded make test).
    assert len(run.result) >= 3 and all(load == [None, directory] for load in run.result), run
    assert tls_server.connections >= 3


class Proxy:
    """A proxy on loopback: plain HTTP, or HTTPS (TLS to the proxy with a localhost certificate
    from its own CA, ``ca_bundle``) when given ``tmp_path``. It tunnels CONNECT requests (the
    client then speaks TLS to the destination, inside TLS to an HTTPS proxy) and forwards requests
    in absolute form (an ``http://`` endpoint behind the proxy) to the host they name."""

    def __init__(self, tmp_path=None):
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
        self.forwarded = 0
        # Connections the proxy took from its listener, and what failed taking one: a test can
        # tell a client the proxy refused from a connection the proxy never served.
        self.accepted = 0
        self.accept_errors = []
        self.closed = False
        # What the proxy's side of each refused TLS handshake said (e.g. the client's alert
        # "tlsv1 alert unknown ca"): proof that the client, not a broken proxy, ended it.
        self.handshake_errors = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        # Only close() ends this loop. An accept or thread start that fails while the listener is
        # open (ECONNABORTED, EMFILE, a thread limit) is recorded and the loop goes on: ending it
        # would leave every later client waiting for a handshake nobody does (CI once saw a 60 s
        # read timeout in the TLS handshake to this proxy, cause unknown).
        while not self.closed:
            try:
                raw, _ = self.listener.accept()
            except OSError as error:
                if not self.closed:
                    self.accept_errors.append(repr(error))
                    time.sleep(0.01)
                continue
            self.accepted += 1
            try:
                threading.Thread(target=self._serve, args=(raw,), daemon=True).start()
            except RuntimeError as error:
                self.accept_errors.append(repr(error))
                raw.close()

    def _serve(self, raw):
        import select

        upstream = None
        try:
            try:
                client_sock = self.context.wrap_socket(raw, server_side=True) if self.context else raw
            except ssl.SSLError as error:
                self.handshake_errors.append(str(error))
                raise
            head = b""
            while b"\r\n\r\n" not in head:
                data = client_sock.recv(4096)
                if not data:
                    return
                head += data
            method, target = head.split(b" ")[:2]
            if method == b"CONNECT":
                port = int(target.decode().rsplit(":", 1)[1])
            else:  # absolute form: http://127.0.0.1:PORT/path
                port = int(target.decode().split("/")[2].rsplit(":", 1)[1])
            upstream = socket.create_connection(("127.0.0.1", port))
            if method == b"CONNECT":
                self.tunnels += 1
                client_sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                # One forwarded request per connection, its answer marked "Connection: close":
                # the upstream server closes after each response, and relaying that close a moment
                # later let the client send its next request on this connection first, which then
                # met an EOF in TLS (a harness race, seen once in 250 calls on an idle machine).
                self.forwarded += 1
                length = 0
                for line in head.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(head) - (head.index(b"\r\n\r\n") + 4) < length:  # the body, whole
                    data = client_sock.recv(65536)
                    if not data:
                        return
                    head += data
                upstream.sendall(head)
                answer = b""
                while True:
                    data = upstream.recv(65536)
                    if not data:
                        break
                    answer += data
                status, _, rest = answer.partition(b"\r\n")
                client_sock.sendall(status + b"\r\nConnection: close\r\n" + rest)
                return
            # One thread both ways: an SSLSocket must not be read and written from two threads, and
            # bytes it has already decrypted (pending) would not wake select.
            while True:
                pending = getattr(client_sock, "pending", lambda: 0)()
                ready = [client_sock] if pending else select.select([client_sock, upstream], [], [], 10)[0]
                if not ready:
                    break
                if client_sock in ready:
                    data = client_sock.recv(65536)
                    if not data:
                        break
                    upstream.sendall(data)
                if upstream in ready:
                    data = upstream.recv(65536)
                    if not data:
                        break
                    client_sock.sendall(data)
        except (OSError, ssl.SSLError):
            pass
        finally:
            for sock in (raw, upstream):
                if sock is not None:
                    sock.close()

    def close(self):
        # shutdown() first: close() alone leaves a thread blocked in accept() holding the
        # listening socket, which then keeps accepting on its port for the life of the process.
        self.closed = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()

    def state(self):
        """What the proxy saw, for an assertion's message."""
        return {"accepted": self.accepted, "accept_errors": self.accept_errors,
                "handshake_errors": self.handshake_errors, "tunnels": self.tunnels}


def test_through_a_proxy_bundle_loaded_once_and_still_verified(trust_once, loads, tmp_path):
    """Through an HTTPS proxy tunnel: one bundle load for three new connections, and a server
    whose CA is not in the bundle is still rejected."""
    proxy = Proxy()
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


# --- once per client: each client keeps its own context, as stock ----------------------------------


def test_each_client_loads_its_bundle_once_in_its_own_context(trust_once, loads, tmp_path):
    """Three clients (three sessions, as boto3.client does) with one bundle, two new connections
    each: three loads, one per client, in three contexts (stock: six loads, three contexts)."""
    with TlsServer(tmp_path, "a") as tls:
        clients = [client(tls.server.url, tls.ca_bundle) for _ in range(3)]
        for ddb in clients + clients:
            ddb.list_tables()
        assert tls.server.connections == 6
    assert loads.count(tls.ca_bundle) == 3
    assert len({id(context_of(ddb)) for ddb in clients}) == 3


def test_a_client_that_never_connects_loads_nothing(trust_once, loads, tmp_path):
    """No cost moves to client creation: a client that sends nothing loads no bundle."""
    with TlsServer(tmp_path, "a") as tls:
        client(tls.server.url, tls.ca_bundle)
    assert loads == []


def test_a_bundle_changed_on_disk_is_read_by_new_clients(trust_once, tmp_path):
    """After the bundle file is rewritten with another CA, a new client trusts only the new CA;
    the old client still reaches its server (as stock, it adds the new file's CAs to its own)."""
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


def test_client_certificates_honoured_under_concurrency(trust_once, tmp_path):
    """client_cert is honoured with a thread on a client with the certificate and one on a client
    without (same bundle): against a server that demands one, the first is never refused and the
    second never accepted, and every client has its own context."""
    with MutualTlsServer(tmp_path, "m") as mtls:
        without = client(mtls.server.url, mtls.ca_bundle)
        with_cert = client(mtls.server.url, mtls.ca_bundle,
                           client_cert=(mtls.client_cert, mtls.client_key))
        # TLS 1.3: the server's "certificate required" alert arrives on the first read, or the
        # server's close does.
        # One thread per client: urllib3 loads a client certificate into the client's context
        # for each new connection, and two threads of one client doing so at once crashed
        # CPython (3.12.1, OpenSSL 3.0) here with stock botocore too.
        outcomes = hammer({"with": with_cert.list_tables, "without": without.list_tables},
                          expected=(SSLError, ConnectionClosedError), threads_each=1)
        assert outcomes["with"]["failed"] == 0 and outcomes["with"]["ok"] >= 5, outcomes
        assert outcomes["without"]["ok"] == 0 and outcomes["without"]["refused"] >= 5, outcomes
        again = client(mtls.server.url, mtls.ca_bundle, client_cert=(mtls.client_cert, mtls.client_key))
        again.list_tables()
        assert len({id(context_of(ddb)) for ddb in (without, with_cert, again)}) == 3


def test_client_certificate_loaded_once_not_per_connection(trust_once, tmp_path, monkeypatch):
    """A client certificate is loaded into the client's context once, at its creation, not for each
    new connection (stock: once per connection, racing other threads' handshakes: the crash in
    docs/compat.md); every connection still presents it to a server that demands one."""
    loaded = []
    original = ssl.SSLContext.load_cert_chain
    monkeypatch.setattr(ssl.SSLContext, "load_cert_chain",
                        lambda self, *args, **kwargs: loaded.append(args[0]) or original(self, *args, **kwargs))
    with MutualTlsServer(tmp_path, "m") as mtls:
        with_cert = client(mtls.server.url, mtls.ca_bundle, client_cert=(mtls.client_cert, mtls.client_key))
        for _ in range(4):
            with_cert.list_tables()
        assert mtls.server.connections == 4  # the server closes each one: four handshakes
    # (The server's own certificate was loaded too, by trustme, into the server's context.)
    assert [path for path in loaded if path == mtls.client_cert] == [mtls.client_cert]


def test_client_certificate_rewritten_on_disk_is_presented_as_stock(trust_once, tmp_path):
    """The certificate files rewritten after the client was created (a rotation): the next send
    presents the new certificate, as stock's next connection would."""
    with MutualTlsServer(tmp_path, "m") as mtls:
        stranger = trustme.CA().issue_cert("stranger@example.com")
        cert, key = str(tmp_path / "rotating.pem"), str(tmp_path / "rotating.key")
        stranger.cert_chain_pems[0].write_to_path(cert)
        stranger.private_key_pem.write_to_path(key)
        rotating = client(mtls.server.url, mtls.ca_bundle, client_cert=(cert, key))
        with pytest.raises((SSLError, ConnectionClosedError)):
            rotating.list_tables()
        shutil.copyfile(mtls.client_cert, cert)
        shutil.copyfile(mtls.client_key, key)
        rotating.list_tables()



def client_with_copied_certificate(mtls, tmp_path):
    """(cert path, key path, client): a client whose client_cert files are copies of the server's
    accepted pair, at paths a test may rewrite (a rotation)."""
    cert, key = str(tmp_path / "rotating.pem"), str(tmp_path / "rotating.key")
    shutil.copyfile(mtls.client_cert, cert)
    shutil.copyfile(mtls.client_key, key)
    return cert, key, client(mtls.server.url, mtls.ca_bundle, client_cert=(cert, key))


def test_client_certificate_rotated_after_a_connection_is_presented_on_its_reconnect(trust_once, tmp_path):
    """The certificate files rewritten after the client connected (a rotation) with no failed call in
    between: the pooled connection, dropped by the server and reconnected, presents the new
    certificate, as stock's (urllib3 loads cert_file at each connect); here one the server refuses,
    so the refusal shows which one was presented. Rotated back, the next send is accepted."""
    with MutualTlsServer(tmp_path, "m") as mtls:
        cert, key, rotating = client_with_copied_certificate(mtls, tmp_path)
        rotating.list_tables()
        rotating.list_tables()  # the server closed the first connection: the same object reconnected
        stranger = trustme.CA().issue_cert("stranger@example.com")
        stranger.cert_chain_pems[0].write_to_path(cert)
        stranger.private_key_pem.write_to_path(key)
        with pytest.raises((SSLError, ConnectionClosedError)):
            rotating.list_tables()
        shutil.copyfile(mtls.client_cert, cert)
        shutil.copyfile(mtls.client_key, key)
        rotating.list_tables()



def test_half_rotated_client_certificate_is_reported_as_such(trust_once, tmp_path, monkeypatch):
    """A certificate rotated before its key (a pair that does not match yet): the send fails as
    stock's does, and the one warning names the client certificate (it said "CA bundle"); once
    the key follows, the next send presents the new pair."""
    from aws_keepalive import diagnostics

    warnings = []
    monkeypatch.setattr(diagnostics, "_reported", set())
    monkeypatch.setattr(diagnostics, "_emit", lambda level, message, fields: warnings.append(message))
    with MutualTlsServer(tmp_path, "m") as mtls:
        cert, key, rotating = client_with_copied_certificate(mtls, tmp_path)
        rotating.list_tables()
        other = trustme.CA().issue_cert("other@example.com")
        other.cert_chain_pems[0].write_to_path(cert)
        with pytest.raises((SSLError, ConnectionClosedError)):
            rotating.list_tables()
        assert len(warnings) == 1 and "client certificate" in warnings[0], warnings
        shutil.copyfile(mtls.client_cert, cert)
        rotating.list_tables()


def test_half_rotated_client_certificate_fails_where_a_certificate_is_optional(trust_once, tmp_path):
    """A server that asks for a client certificate but accepts a connection without one: a
    certificate rotated before its key fails every send with KEY_VALUES_MISMATCH, as stock's
    (urllib3 loads the pair per connection), and the server gets no request.  The pooled connection
    object reconnected without any certificate and succeeded (found by the stock twin): the failed
    load had emptied the context it presents from."""
    with MutualTlsServer(tmp_path, "m") as mtls:
        mtls.server.tls_context.verify_mode = ssl.CERT_OPTIONAL
        cert, key, rotating = client_with_copied_certificate(mtls, tmp_path)
        rotating.list_tables()
        trustme.CA().issue_cert("other@example.com").cert_chain_pems[0].write_to_path(cert)
        for _ in range(3):
            with pytest.raises(SSLError, match="KEY_VALUES_MISMATCH"):
                rotating.list_tables()
        assert mtls.server.requests == 1


@pytest.fixture
def connect_checked():
    """patch.py's connect wrapper on botocore's TLS connections, asking trust.py first (as patch.apply
    sets it up with the trust store on), removed after the test."""
    import functools

    from botocore.awsrequest import AWSHTTPSConnection

    from aws_keepalive import patch

    own = "connect" in AWSHTTPSConnection.__dict__
    patch._check_client_cert_at_connect(None, None, None)
    wrap.wrap(AWSHTTPSConnection, "connect", functools.partial(patch._make_connect, "TCP + TLS"))
    yield
    if own:
        AWSHTTPSConnection.connect = getattr(AWSHTTPSConnection.connect, wrap.WRAPPED)
    else:
        del AWSHTTPSConnection.connect
    patch._before_tls_connect = None


def test_half_rotated_client_certificate_fails_a_reconnect_of_a_connection_checked_out_before(
        trust_once, connect_checked, tmp_path):
    """Connection objects another thread took from the pool before the certificate was rotated
    (before its key): each one's reconnect fails with KEY_VALUES_MISMATCH, as stock's (its object
    loads the pair at connect), whether or not a send saw the rotation first.  Before, the one
    reconnecting before any send presented the old certificate from the context, and the one after
    a failed send presented none (the failed load had emptied the context): both were accepted by
    a server for which a certificate is optional."""
    with MutualTlsServer(tmp_path, "m") as mtls:
        mtls.server.tls_context.verify_mode = ssl.CERT_OPTIONAL
        cert, key, rotating = client_with_copied_certificate(mtls, tmp_path)
        rotating.list_tables()
        pool = rotating._endpoint.http_session._manager.connection_from_url(mtls.server.url)
        held = [pool._get_conn(), pool._get_conn()]  # in other threads' hands, as an urlopen holds one
        trustme.CA().issue_cert("other@example.com").cert_chain_pems[0].write_to_path(cert)
        with pytest.raises(ssl.SSLError, match="KEY_VALUES_MISMATCH"):
            held[0].connect()
        with pytest.raises(SSLError, match="KEY_VALUES_MISMATCH"):
            rotating.list_tables()
        with pytest.raises(ssl.SSLError, match="KEY_VALUES_MISMATCH"):
            held[1].connect()
        assert mtls.server.requests == 1


# Two threads of one client with a client certificate against a server that demands one and closes
# every connection after answering, for argv[1] seconds (tests/hook and the layer on sys.path).
TWO_THREADS_CLIENT_CERT = """
import os, ssl, sys, threading, time
sys.path[:0] = sys.argv[2:4]
import botocore.session, trustme
from botocore.config import Config
from ddb_server import DynamoDBShapedServer
if sys.argv[4] == "layer":
    from aws_keepalive import settings, trust
    trust.patch(settings.Settings(), None, None)
folder = sys.argv[5]
server_ca, client_ca = trustme.CA(), trustme.CA()
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
server_ca.issue_cert("localhost").configure_cert(context)
context.verify_mode = ssl.CERT_REQUIRED
context.load_verify_locations(cadata=client_ca.cert_pem.bytes().decode())
leaf = client_ca.issue_cert("client@example.com")
cert, key, bundle = (os.path.join(folder, name) for name in ("client.pem", "client.key", "ca.pem"))
leaf.cert_chain_pems[0].write_to_path(cert)
leaf.private_key_pem.write_to_path(key)
server_ca.cert_pem.write_to_path(bundle)
with DynamoDBShapedServer(tls_context=context, close_after_response=True) as server:
    ddb = botocore.session.get_session().create_client(
        "dynamodb", region_name="us-east-1", endpoint_url=server.url, verify=bundle,
        aws_access_key_id="a", aws_secret_access_key="b",
        config=Config(client_cert=(cert, key), retries={"max_attempts": 1}))
    deadline = time.monotonic() + float(sys.argv[1])
    calls = []
    def work():
        while time.monotonic() < deadline:
            ddb.list_tables()
            calls.append(1)
    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(len(calls))
"""


def test_two_threads_of_a_client_with_a_client_certificate_do_not_crash(tmp_path):
    """The stock crash (docs/compat.md): two threads of one client with a client certificate, a new
    connection per call, for 10 s, in a subprocess bounded to 90 s: with the layer it neither
    crashes nor hangs, and every call succeeds (stock here: a segfault or a hang in 2 of 3 runs)."""
    completed = subprocess.run(
        [sys.executable, "-c", TWO_THREADS_CLIENT_CERT, "10", os.path.dirname(os.path.abspath(__file__)),
         os.path.join(REPO, "layer"), "layer", str(tmp_path)],
        capture_output=True, text=True, timeout=90)
    assert completed.returncode == 0, (completed.returncode, completed.stderr[-2000:])
    assert int(completed.stdout.split()[-1]) > 20


def test_profile_ca_bundle_and_aws_ca_bundle_honoured(trust_once, loads, tmp_path, monkeypatch):
    """The profile's ca_bundle and AWS_CA_BUNDLE are what the client trusts, as stock: each
    connects to its server, rejects the other's, and each client loads its bundle once for two
    new connections (a: three clients, three loads; b: two and two; stock: four and three)."""
    with TlsServer(tmp_path, "a") as a, TlsServer(tmp_path, "b") as b:
        config_file = tmp_path / "config"
        config_file.write_text("[default]\nca_bundle = %s\n" % a.ca_bundle)
        monkeypatch.setenv("AWS_CONFIG_FILE", str(config_file))
        monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)
        via_profile = client(a.server.url, None)
        for _ in range(2):
            via_profile.list_tables()
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            client(b.server.url, None).list_tables()
        monkeypatch.setenv("AWS_CA_BUNDLE", b.ca_bundle)  # the variable wins over the profile
        via_variable = client(b.server.url, None)
        for _ in range(2):
            via_variable.list_tables()
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            client(a.server.url, None).list_tables()
        client(a.server.url, a.ca_bundle).list_tables()  # an explicit verify wins over both
    assert loads.count(a.ca_bundle) == 3 and loads.count(b.ca_bundle) == 2


def test_https_proxy_with_its_own_ca_bundle(trust_once, loads, tmp_path):
    """proxies_config's proxy_ca_bundle verifies the proxy, the client's bundle the destination
    inside the tunnel: three new connections load each once per client; a proxy bundle without
    the proxy's CA is refused, and so is a destination whose CA is not in the client's bundle."""
    proxy = Proxy(tmp_path)
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
    # Once per client that sent (stock: once per connection to the destination, three).
    assert loads.count(tls.ca_bundle) == 2
    assert loads.count(proxy.ca_bundle) == 2  # botocore's own: once per proxy manager (two clients)


def test_contexts_with_other_settings_are_not_shared(trust_once, tmp_path, monkeypatch):
    """A create_urllib3_context patched to make one client's context stricter (TLS 1.3 only) keeps
    that client apart from a default one with the same bundle."""
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


def hammer(calls, expected, seconds=3.0, threads_each=2, min_calls=5, cap_s=60.0):
    """Run each named call in ``threads_each`` threads for ``seconds``, and on a loaded machine
    on until each name has ``min_calls`` outcomes (at most ``cap_s``); per name, how many calls
    succeeded (``ok``), raised one of ``expected`` (``refused``) or anything else (``failed``)."""
    outcomes = {name: {"ok": 0, "refused": 0, "failed": 0, "errors": []} for name in calls}
    lock = threading.Lock()
    start = time.monotonic()
    deadline, cap = start + seconds, start + cap_s

    def calls_made(name):
        return sum(outcomes[name][kind] for kind in ("ok", "refused", "failed"))

    def loop(name):
        while time.monotonic() < deadline or (calls_made(name) < min_calls
                                              and time.monotonic() < cap):
            try:
                calls[name]()
                kind = "ok"
            except expected:
                kind = "refused"
            except Exception as error:
                kind = "failed"
                outcomes[name]["errors"].append(repr(error)[:200])
            with lock:
                outcomes[name][kind] += 1

    workers = [threading.Thread(target=loop, args=(name,)) for name in calls for _ in range(threads_each)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return outcomes


# --- issue 21: what a shared context let one client do to another ----------------------------------


def test_a_cert_none_pool_never_lowers_another_clients_checks(trust_once, tmp_path):
    """Two threads each on client A (verify on, an http:// endpoint behind an https:// proxy, so
    its pool to the proxy has CERT_NONE) and client B (same bundle) against a server that bundle
    does not trust: B never completes a TLS handshake (stock: never) and A never fails."""
    proxy = Proxy(tmp_path)
    try:
        with DynamoDBShapedServer(close_after_response=True) as plain, \
                TlsServer(tmp_path, "untrusted") as untrusted, TlsServer(tmp_path, "t") as trusted:
            a = client(plain.url, trusted.ca_bundle, proxies={"http": proxy.url})
            b = client(untrusted.server.url, trusted.ca_bundle)
            outcomes = hammer({"a": a.list_tables, "b": b.list_tables}, expected=SSLError)
            handshakes = untrusted.server.requests
    finally:
        proxy.close()
    assert outcomes["b"]["ok"] == 0 and handshakes == 0, outcomes
    assert outcomes["a"]["failed"] == 0 and outcomes["a"]["refused"] == 0, outcomes
    assert outcomes["a"]["ok"] >= 5 and outcomes["b"]["refused"] >= 5, outcomes
    assert proxy.forwarded >= 5


@pytest.mark.parametrize("known_bundle", [False, True], ids=["unknown-bundle", "known-bundle"])
def test_https_proxy_trusted_through_the_clients_bundle(trust_once, known, tmp_path, known_bundle):
    """An https:// proxy without proxy_ca_bundle whose CA is only in verify=<bundle> is
    accepted, as stock (urllib3 verifies it with the pool's ca_certs, or the known bundle's
    directory), for three new connections; the destination is verified inside the tunnel."""
    proxy = Proxy(tmp_path)
    try:
        with TlsServer(tmp_path, "a") as tls:
            bundle = str(tmp_path / "both.pem")
            with open(bundle, "wb") as out:
                for path in (tls.ca_bundle, proxy.ca_bundle):
                    out.write(open(path, "rb").read())
            if known_bundle:
                known(bundle)
            ddb = client(tls.server.url, bundle, proxies={"https": proxy.url})
            for _ in range(3):
                ddb.list_tables()
            assert tls.server.connections == 3
    finally:
        proxy.close()
    assert proxy.tunnels == 3


@pytest.mark.parametrize("known_bundle", [False, True], ids=["unknown-bundle", "known-bundle"])
def test_https_proxy_not_trusted_through_ssl_cert_file(trust_once, known, tmp_path, monkeypatch,
                                                       known_bundle):
    """An https:// proxy without proxy_ca_bundle whose CA is only in SSL_CERT_FILE (the system's
    default CAs) is refused, as stock: the client's bundle, not the system's, verifies it."""
    proxy = Proxy(tmp_path)
    try:
        with TlsServer(tmp_path, "a") as tls:
            monkeypatch.setenv("SSL_CERT_FILE", proxy.ca_bundle)
            monkeypatch.delenv("SSL_CERT_DIR", raising=False)
            if known_bundle:
                known(tls.ca_bundle)
            # One connection per call (no retry), so the proxy's accept count tells whether the
            # call's connection was served.
            ddb = client(tls.server.url, tls.ca_bundle, proxies={"https": proxy.url},
                         connect_timeout=15, read_timeout=15,
                         retries={"total_max_attempts": 1, "mode": "standard"})
            refusals, unserved = 0, 0
            while refusals < 2:
                accepted = proxy.accepted
                with pytest.raises(ProxyConnectionError) as refused:
                    ddb.list_tables()
                error = str(refused.value.kwargs.get("error"))
                if proxy.accepted == accepted:
                    # The call's connection never reached the proxy's accept: on this sandbox a
                    # connection made ms after a refused one sometimes hangs until the timeout or
                    # is reset without being accepted (~1 run in 3 of this file on 3.14 under
                    # load; CI saw it on 3.11 and 3.13; cause not found: no fd, thread or port
                    # leak). The proxy showed no certificate, so nothing was refused or accepted:
                    # the call is not counted, and a proxy that never serves fails the test.
                    unserved += 1
                    assert unserved <= 3, (error, proxy.state())
                    continue
                # The client names the refusal, except when a loaded machine lets botocore's
                # last retry meet a reset instead; then the proxy must have seen the client's
                # unknown-CA alert (a refusal of its certificate, not a proxy that broke).
                assert "CERTIFICATE_VERIFY_FAILED" in error or (
                    "Connection reset" in error
                    and any("UNKNOWN_CA" in said.upper() for said in proxy.handshake_errors)), (
                    error, proxy.state())
                refusals += 1
            assert proxy.accepted == 2, proxy.state()
            assert tls.server.requests == 0
    finally:
        proxy.close()


def test_sslkeylogfile_unset_after_a_client_is_not_inherited(trust_once, tmp_path, monkeypatch):
    """A client created while SSLKEYLOGFILE is set writes its TLS secrets there, as stock; a
    client created after it was unset writes nothing there (its own context has no key log)."""
    keylog = tmp_path / "keys.log"
    with TlsServer(tmp_path, "a") as tls:
        monkeypatch.setenv("SSLKEYLOGFILE", str(keylog))
        logged = client(tls.server.url, tls.ca_bundle)
        logged.list_tables()
        written = keylog.stat().st_size
        assert written > 0
        monkeypatch.delenv("SSLKEYLOGFILE")
        quiet = client(tls.server.url, tls.ca_bundle)
        for _ in range(2):
            quiet.list_tables()
        assert keylog.stat().st_size == written
        logged.list_tables()
        assert keylog.stat().st_size > written


def test_ciphers_of_one_client_do_not_reach_another(trust_once, tmp_path, monkeypatch):
    """A create_urllib3_context patched to give one client a cipher the server lacks (TLS 1.2)
    fails that client only: a client created afterwards, with botocore's own ciphers, connects."""
    with TlsServer(tmp_path, "a") as tls:
        tls.server.tls_context.maximum_version = ssl.TLSVersion.TLSv1_2
        tls.server.tls_context.set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256")
        original = botocore.httpsession.create_urllib3_context

        def other_cipher(*args, **kwargs):
            context = original(*args, **kwargs)
            context.set_ciphers("ECDHE-ECDSA-AES256-GCM-SHA384")
            return context

        monkeypatch.setattr(botocore.httpsession, "create_urllib3_context", other_cipher)
        narrow = refused_client(tls.server.url, tls.ca_bundle)
        monkeypatch.setattr(botocore.httpsession, "create_urllib3_context", original)
        default = client(tls.server.url, tls.ca_bundle)
        assert_refused(narrow.list_tables, times=1)
        for _ in range(2):
            default.list_tables()
        assert_refused(narrow.list_tables, times=1)


# --- a known bundle: served from its hashed directory (tools/packaging/ca_dir.py) ------------------------------


def test_known_bundle_verified_through_its_directory(trust_once, known, loads, tmp_path):
    """A bundle the layer knows is never parsed: each of three new connections adds its hashed
    directory (capath), and a server whose CA is in it is accepted."""
    with TlsServer(tmp_path, "a") as tls:
        directory = known(tls.ca_bundle)
        ddb = client(tls.server.url, tls.ca_bundle)
        for _ in range(3):
            ddb.list_tables()
        assert tls.server.connections == 3
    assert tls.ca_bundle not in loads
    # Per connection attempt (urllib3 loads before each handshake): under load a retried attempt
    # adds one more, and the patched loader also sees other tests' lingering threads, so count
    # only this test's bundle and directory, and never fewer than one per connection.
    ours = [load for load in loads if load in (tls.ca_bundle, ("capath", directory))]
    assert ours.count(("capath", directory)) >= 3 and set(ours) == {("capath", directory)}


def test_known_bundle_rejects_a_ca_not_in_it(trust_once, known, loads, tmp_path):
    """Through the directory, a server whose CA is not in the bundle is refused, every time."""
    with TlsServer(tmp_path, "a") as tls, TlsServer(tmp_path, "b") as other:
        known(other.ca_bundle)
        ddb = refused_client(tls.server.url, other.ca_bundle)
        assert_refused(ddb.list_tables, "CERTIFICATE_VERIFY_FAILED")
    assert other.ca_bundle not in loads


def test_known_bundle_rejects_a_hostname_mismatch(trust_once, known, tmp_path):
    """Through the directory, a trusted certificate for another name (localhost, reached as
    127.0.0.1) is refused."""
    with TlsServer(tmp_path, "a") as tls:
        known(tls.ca_bundle)
        client(tls.server.url, tls.ca_bundle).list_tables()
        by_ip = refused_client(tls.server.url.replace("localhost", "127.0.0.1"), tls.ca_bundle)
        assert_refused(by_ip.list_tables)


def test_known_bundle_rewritten_on_disk_is_loaded_as_stock(trust_once, known, tmp_path):
    """A known bundle file rewritten with another CA is no longer the known one: at its next send
    the client loads the new file, as stock would at its next connection, and reaches the new CA's
    server."""
    with TlsServer(tmp_path, "a") as a, TlsServer(tmp_path, "b") as b:
        path = str(tmp_path / "bundle.pem")
        with open(path, "wb") as out:
            out.write(open(a.ca_bundle, "rb").read())
        known(path)
        reader = client(b.server.url, path)
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            reader.list_tables()
        with open(path, "wb") as out:
            out.write(open(b.ca_bundle, "rb").read() + b"\n")
        reader.list_tables()


@pytest.mark.parametrize("kind", ["unknown bundle", "known bundle"])
def test_bundle_rewritten_in_place_is_read_by_the_very_next_send(trust_once, known, tmp_path, kind):
    """A bundle rewritten in place (same file, its mtime even set back) right after a send: the
    next send of the same client (a retry after a bundle refresh) verifies with the new file, as
    stock's next connection does; no window."""
    with TlsServer(tmp_path, "a") as a, TlsServer(tmp_path, "b") as b:
        path = str(tmp_path / "bundle.pem")
        with open(path, "wb") as out:
            out.write(open(a.ca_bundle, "rb").read())
        if kind == "known bundle":
            known(path)
        reader = client(b.server.url, path)
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            reader.list_tables()
        before = os.stat(path)
        with open(path, "r+b") as out:
            out.write(open(b.ca_bundle, "rb").read() + b"\n")
            out.truncate()
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert os.stat(path).st_ino == before.st_ino
        reader.list_tables()
