"""The function's trust store in the lab: the SDK's default CA bundle with the lab's CA appended.

On Lambda a client with ``verify=True`` (the default) verifies against the SDK's bundle
(botocore's ``get_cert_path(True)``: certifi's cacert.pem when certifi is importable, else
botocore's own, ~126 certificates), and urllib3 re-reads that whole file for every new connection
unless the layer's trust.py loads it once (docs/trust.md). A lab function given only the lab CA
(one certificate) would pay a fraction of that cost: the lab would hide it. So the lab's functions
get ``AWS_CA_BUNDLE`` pointing at a file of the same size, which botocore reads the same way: the
SDK's bundle as this lab process's botocore resolves it (the layer's pinned botocore), plus the
lab CA so the lab's TLS front is trusted.
"""

import os
import threading

_lock = threading.Lock()
_written: dict = {}  # ca_path -> the lab CA's bytes its bundle was last written with, in this process


def sdk_bundle_with(ca_path: str) -> str:
    """``<ca_path>.sdk.pem`` (the SDK's default bundle + the CA at ``ca_path``), written once per process
    and lab CA, and its path.

    A run starts many functions from one DynamoDB Local (make demo: 10, make soak: a few per round):
    each asks for the bundle, and rewriting ~220 KB for each would rename a new file under functions
    that already read the old one, for nothing. It is written again only when the CA at ``ca_path``
    changed (a new TLS front) or the file is gone. Written to a temporary name and renamed, under a
    lock, so functions started from several threads never read a half-written file."""
    with open(ca_path, "rb") as lab:
        ca = lab.read()
    path = ca_path + ".sdk.pem"
    with _lock:
        if _written.get(ca_path) == ca and os.path.exists(path):
            return path
        from botocore.httpsession import get_cert_path

        with open(get_cert_path(True), "rb") as sdk:
            data = sdk.read().rstrip(b"\n") + b"\n" + ca
        partial = "%s.%d.tmp" % (path, os.getpid())
        with open(partial, "wb") as out:
            out.write(data)
        os.replace(partial, path)
        _written[ca_path] = ca
    return path


def certificates(path: str) -> int:
    """How many certificates a PEM bundle holds."""
    with open(path, "rb") as bundle:
        return bundle.read().count(b"-----BEGIN CERTIFICATE-----")
