"""wire.py: the twin's endpoint answers an S3 PUT it does not serve with its 501, over TLS behind
the front, however the client's body and the server's close interleave; the front passes the
server's close on with its answer, and the last bytes before a reset."""

import select
import socket
import struct
import tempfile
import threading
import time

import boto3
import botocore.config
from pki import PKI
from wire import Front, Wire, _relay

CALLS = 12
# Answers closed at once through the front, and what the front reads first from a client: a TLS
# record whose body is one byte, no ClientHello (nothing to record, the front connects on).
CLOSES = 20
NOT_A_HELLO = b"\x16\x03\x01\x00\x01\x00"
RESETS = 10  # answers followed by a reset, already both queued when the relay reads


def test_refused_put_is_answered_not_cut():
    """Stock botocore's put_object (Expect: 100-continue, a chunked body; one attempt, each on a new
    connection: the server closes after answering) gets the server's 501 on every one of CALLS,
    never an SSLError from a connection closed under its body (33 of 40 calls before the server
    read the body of the PUTs it refuses)."""
    pki = PKI(tempfile.mkdtemp())
    wire = Wire(pki.server_context("leaf"))
    outcomes = []
    try:
        made = boto3.session.Session().client(
            "s3", endpoint_url=wire.url, verify=pki.bundle, region_name="us-east-1",
            aws_access_key_id="AKIDTESTWIRE", aws_secret_access_key="test-secret",
            config=botocore.config.Config(retries={"mode": "standard", "max_attempts": 1}))
        for _ in range(CALLS):
            try:
                made.put_object(Bucket="twin", Key="k", Body=b"x")
                outcomes.append("ok")
            except made.exceptions.ClientError as error:
                outcomes.append(error.response["Error"]["Code"])
            except Exception as error:
                outcomes.append("%s: %s" % (type(error).__name__, str(error)[:120]))
        made.close()
    finally:
        wire.close()
    assert outcomes == ["501"] * CALLS, outcomes


def test_the_front_passes_a_close_on_with_the_last_bytes():
    """A server that answers and closes (the answer and its FIN in one segment, as the twin's
    endpoint server sends them): the front's client has the close as soon as it has the answer,
    CLOSES times in a row.  urllib3 looks for a close before it reuses a pooled connection: a close
    that came a moment after the answer let a call made in between go into the closing
    connection, meet RemoteDisconnected (or an SSLEOFError) and be retried by botocore, whose
    retry keeps the failed attempt's exception, and the dropped client, in a reference cycle (0 to
    9 of test_gc's 30 churned clients a run, in either twin)."""
    backend = socket.create_server(("127.0.0.1", 0))
    backend.settimeout(10)
    front = Front(backend.getsockname()[1])
    seen = []
    try:
        for _ in range(CLOSES):
            with socket.create_connection(("127.0.0.1", front.port), timeout=10) as client:
                client.sendall(NOT_A_HELLO)  # the front reads a first record before it connects on
                server, _ = backend.accept()
                with server:
                    server.settimeout(10)
                    server.recv(len(NOT_A_HELLO))
                    server.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
                    server.sendall(b"answer")
                    server.shutdown(socket.SHUT_WR)  # uncorks: the answer and the FIN together
                    answer = b""
                    while len(answer) < len(b"answer"):
                        answer += client.recv(64)
                    readable = select.select([client], [], [], 0)[0]
                    seen.append((answer, bool(readable) and client.recv(64) == b""))
    finally:
        front.close()
        backend.close()
    late = sum(1 for answer, closed in seen if not closed)
    assert seen == [(b"answer", True)] * CLOSES, "%d of %d closes came after the answer: %r" % (late, CLOSES, seen)


def test_the_relay_passes_on_the_last_bytes_before_a_reset():
    """A server that answers and resets (SO_LINGER 0: a close with unread data does the same),
    both queued at the relay before it reads: the client gets the answer, then the close, RESETS
    times; the reset met while looking for a close behind the answer must not drop the answer
    (the old relay sent it on before reading further)."""
    got = []
    for _ in range(RESETS):
        with socket.create_server(("127.0.0.1", 0)) as listener:
            front_to_server = socket.create_connection(listener.getsockname())
            server, _ = listener.accept()
        client, front_to_client = socket.socketpair()
        client.settimeout(10)
        server.sendall(b"answer")
        server.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        server.close()
        time.sleep(0.05)  # on loopback both the answer and the reset are queued by now
        relay = threading.Thread(target=_relay, args=(front_to_server, front_to_client, threading.Event()))
        relay.start()
        received = b""
        with client:
            while chunk := client.recv(64):
                received += chunk
        relay.join(10)
        got.append(received)
    assert got == [b"answer"] * RESETS, got
