"""The twin's certificates, made once per session (trustme, ECDSA: milliseconds each).

* a CA and a ``localhost`` leaf; ``bundle``: that CA's PEM (what the function verifies with);
  ``other_bundle``: a CA that signed nothing the servers show;
* a client CA the ``mtls`` server context trusts (CERT_OPTIONAL: it records whatever client
  certificate comes), and two client identities, ``client_a`` / ``client_b`` (cert and key files);
* ``expiring`` / ``expiring_intermediate``: a leaf, or the intermediate CA above a leaf, valid
  until ``EXPIRY_S`` after the endpoint's first connection (made then: however long the
  interpreter took to start, its first call meets a valid chain).
"""

import datetime
import os
import ssl

import trustme
from cryptography import x509

EXPIRY_S = 4


class PKI:
    def __init__(self, folder):
        self.folder = folder
        self.ca = trustme.CA()
        self.leaf = self.ca.issue_cert("localhost")
        self.bundle = self._write("ca.pem", self.ca.cert_pem.bytes())
        self.other_bundle = self._write("other-ca.pem", trustme.CA().cert_pem.bytes())
        self.client_ca = trustme.CA()
        self.client_ca_bundle = self._write("client-ca.pem", self.client_ca.cert_pem.bytes())
        self.clients = {}
        for name in ("client_a", "client_b"):
            identity = self.client_ca.issue_cert(name + "@twin.test", common_name=name)
            self.clients[name] = (self._write(name + ".crt", identity.cert_chain_pems[0].bytes()),
                                  self._write(name + ".key", identity.private_key_pem.bytes()))
        self.expiry = {}

    def _write(self, name, data):
        path = os.path.join(self.folder, name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def server_context(self, kind):
        """A maker of server contexts for ``kind``: called once per endpoint (and per connection
        when the endpoint refuses tickets)."""
        if kind in ("expiring", "expiring_intermediate"):
            return lambda: _MadeAtFirstConnection(lambda: self._expiring_context(kind))

        def make():
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.leaf.configure_cert(context)
            if kind == "mtls":
                context.verify_mode = ssl.CERT_OPTIONAL
                context.load_verify_locations(self.client_ca_bundle)
            elif kind != "leaf":
                raise ValueError(kind)
            return context

        return make

    def _expiring_context(self, kind):
        if kind == "expiring":
            leaf = self.ca.issue_cert("localhost", not_after=self._soon())
        else:
            leaf = _short_lived_intermediate(self.ca, self._soon()).issue_cert("localhost")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        leaf.configure_cert(context)
        return context

    @staticmethod
    def _soon():
        return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(
            seconds=EXPIRY_S)


class _MadeAtFirstConnection:
    """A server context made by ``make`` when the first connection comes (then kept)."""

    def __init__(self, make):
        self.make, self.context = make, None

    def wrap_socket(self, *args, **kwargs):
        if self.context is None:
            self.context = self.make()
        return self.context.wrap_socket(*args, **kwargs)


def _short_lived_intermediate(root, not_after):
    """A trustme intermediate CA under ``root`` whose own certificate ends at ``not_after``: the
    certificate trustme made, re-signed by the root with that end."""
    from cryptography.hazmat.primitives import hashes

    child = root.create_child_ca()
    made = child._certificate
    builder = (x509.CertificateBuilder().subject_name(made.subject).issuer_name(made.issuer)
               .public_key(made.public_key()).serial_number(made.serial_number)
               .not_valid_before(made.not_valid_before_utc).not_valid_after(not_after))
    for extension in made.extensions:
        builder = builder.add_extension(extension.value, extension.critical)
    child._certificate = builder.sign(root._private_key, hashes.SHA256())
    return child
