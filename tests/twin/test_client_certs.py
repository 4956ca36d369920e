"""The twin's client-certificate axis: Config(client_cert=...) files rotated while the client lives
(trust.py loads a client certificate once per context and reloads it when its files change;
resume.py keys sessions on what the files hold)."""

import pytest
from harness import Case, Check, assert_same_as_stock


def client_files(run):
    return {"clients": {name: {"crt": crt, "key": key} for name, (crt, key) in run.pki.clients.items()}}


CASES = {
    "client_certs": Case("client_certs", {"rotation": Check(context="mtls"), "key_mismatch": Check(context="mtls")},
                         params=client_files),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_client_certs_as_stock(twin, case):
    """Both files rotated, and the certificate rotated before its key: stock's outcomes, and the
    server sees the same client certificate on each request as with stock."""
    assert_same_as_stock(CASES[case], twin)
