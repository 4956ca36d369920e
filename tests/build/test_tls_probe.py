"""tools/deploy/verify-aws/function/tls_probe.py: what make verify-aws reads from a client's pooled
connections (ticket offered, lifetime hint, resumed), checked offline with a real botocore client
and the layer's resumption against a real TLS 1.3 server on loopback."""

import os
import ssl
import sys

import botocore.session
import trustme
from botocore.config import Config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(REPO, "layer"), os.path.join(REPO, "tests", "hook"),
                os.path.join(REPO, "tools", "deploy", "verify-aws", "function")]
import tls_probe  # noqa: E402
import unpatch  # noqa: E402
from ddb_server import DynamoDBShapedServer  # noqa: E402

from aws_keepalive import patch, resume, settings  # noqa: E402


def test_pooled_tls_says_offered_hint_and_resumed(tmp_path):
    """The first connection has a ticket and no resumption; the next (a replacement) resumed, with
    the server's lifetime hint (OpenSSL's default 7200 s); stock's connections never say resumed."""
    authority = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("localhost").configure_cert(context)
    bundle = str(tmp_path / "ca.pem")
    authority.cert_pem.write_to_path(bundle)
    with DynamoDBShapedServer(tls_context=context, close_after_response=True) as server:
        def make():
            return botocore.session.get_session().create_client(
                "dynamodb", region_name="us-east-1", endpoint_url=server.url, verify=bundle,
                aws_access_key_id="a", aws_secret_access_key="b", config=Config(retries={"max_attempts": 1}))

        stock = make()
        stock.list_tables()
        stock.list_tables()
        assert [c["resumed"] for c in tls_probe.pooled_tls(stock)] == [False]
        resume.enabled = True
        patch._patch_connection_pool(settings.Settings(), None, None)
        try:
            ddb = make()
            ddb.list_tables()
            (first,) = tls_probe.pooled_tls(ddb)
            assert first == {"host": "localhost", "version": "TLSv1.3", "resumed": False, "ticket": True,
                             "lifetime_hint_s": 7200}
            ddb.list_tables()
            assert [c["resumed"] for c in tls_probe.pooled_tls(ddb)] == [True]
        finally:
            resume.enabled = False
            unpatch.connection_pool()

