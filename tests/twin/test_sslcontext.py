"""The twin's SSLContext axis: the context botocore makes, replaced or decorated by other code.
The layer offers a session only on the standard library's own context (issue 34 item 1): any
other is used exactly as stock uses it, its overrides called as often."""

import hashlib
import ssl

import pytest
from harness import Case, Check, assert_same_as_stock


def leaf_sha256(run):
    der = ssl.PEM_cert_to_DER_cert(run.pki.leaf.cert_chain_pems[0].bytes().decode())
    return {"leaf_sha256": hashlib.sha256(der).hexdigest()}


CASES = {
    "stdlib": Case("context_stdlib", {"calls": Check(psk="resumes")}),
    "pinning_subclass": Case("context_pinning_subclass",
                             {"wrong_pin": Check(psk="never"), "right_pin": Check(psk="never")}, params=leaf_sha256),
    "truststore": Case("context_truststore", {"injected": Check(psk="never"), "extracted": Check(psk="never")}),
    "instance_attributes": Case("context_instance_attributes",
                                {"instance_wrap_socket": Check(psk="never"), "plain_attribute": Check()}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_context_as_stock(twin, case):
    """Each way of making or decorating the SSLContext gives stock's outcomes, wrapper counts and
    wire, and the layer resumes only on the standard library's own context."""
    assert_same_as_stock(CASES[case], twin)
