"""lab/standin/trust_store.py: the lab functions' trust store is the SDK's default bundle plus the lab CA."""

import os
import ssl

import trustme
from botocore.httpsession import get_cert_path

from lab.standin.trust_store import certificates, sdk_bundle_with


def test_bundle_is_the_sdk_default_plus_the_lab_ca_and_verifies_the_lab_server(tmp_path):
    """Every certificate of botocore's verify=True bundle and the lab CA; a context loaded from it
    completes a handshake with a server certified by the lab CA."""
    authority = trustme.CA()
    ca_path = str(tmp_path / "ca.pem")
    authority.cert_pem.write_to_path(ca_path)
    path = sdk_bundle_with(ca_path)
    sdk = get_cert_path(True)
    assert certificates(sdk) > 100
    assert certificates(path) == certificates(sdk) + 1
    assert open(path, "rb").read().startswith(open(sdk, "rb").read().rstrip(b"\n"))

    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("localhost").configure_cert(server)
    client = ssl.create_default_context(cafile=path)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    c = client.wrap_bio(incoming, outgoing, server_hostname="localhost")
    s = server.wrap_bio(s_in, s_out, server_side=True)
    for _ in range(10):  # pump the handshake between the two ends in memory
        for end in (c, s):
            try:
                end.do_handshake()
            except ssl.SSLWantReadError:
                pass
        s_in.write(outgoing.read())
        incoming.write(s_out.read())
    c.do_handshake()  # raises SSLCertVerificationError if the lab CA were missing
    assert c.getpeercert()["subject"]


def test_bundle_is_written_once_per_process_and_again_for_a_new_ca(tmp_path):
    """Every function a run starts asks for the bundle: the second ask returns the same file
    unrewritten (same inode); a different CA at that path (a new TLS front) writes it again."""
    ca_path = str(tmp_path / "ca.pem")
    trustme.CA().cert_pem.write_to_path(ca_path)
    first = os.stat(sdk_bundle_with(ca_path)).st_ino
    assert os.stat(sdk_bundle_with(ca_path)).st_ino == first

    authority = trustme.CA()
    authority.cert_pem.write_to_path(ca_path)
    path = sdk_bundle_with(ca_path)
    assert os.stat(path).st_ino != first
    assert open(path, "rb").read().endswith(authority.cert_pem.bytes())
