"""tools/packaging/ca_dir.py: a hashed CA directory holds exactly its bundle's certificates, each found by
OpenSSL's own subject-hash lookup, written the same way every time."""

import datetime
import hashlib
import os
import ssl

import botocore.httpsession
import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tools.packaging import ca_dir


def loaded_from_file(bundle):
    """The certificates (DER) Python's ssl loads from a CA file."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile=bundle)
    return set(context.get_ca_certs(binary_form=True))


def directory_contents(directory):
    """The certificates (DER) in a directory's files, and whether every entry is a regular file."""
    ders = set()
    regular = True
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        regular = regular and os.path.isfile(path) and not os.path.islink(path)
        with open(path, "rb") as handle:
            ders.add(ssl.PEM_cert_to_DER_cert(handle.read().decode("ascii")))
    return ders, regular


def tree_digest(root):
    digest = hashlib.sha256()
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as handle:
                digest.update(handle.read())
    return digest.hexdigest()


def same_subject_cas(count):
    """``count`` self-signed CA certificates (PEM) with one subject name and different keys: one
    subject hash, so a directory must number them .0, .1, ..."""
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "ca_dir collision test"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "Same Subject Root")])
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    pems = []
    for serial in range(1, count + 1):
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                       .public_key(key.public_key()).serial_number(serial)
                       .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
                       .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                       .sign(key, hashes.SHA256()))
        pems.append(certificate.public_bytes(serialization.Encoding.PEM))
    return pems


def test_every_certificate_of_the_sdk_bundle_is_found_through_its_directory(tmp_path):
    """botocore's default bundle: the directory holds the same certificates Python loads from the
    file, as regular files, and OpenSSL's subject-hash lookup finds every one of them."""
    bundle = botocore.httpsession.get_cert_path(True)
    directory = ca_dir.build(bundle, str(tmp_path))
    with open(bundle, "rb") as handle:
        assert os.path.basename(directory) == hashlib.sha256(handle.read()).hexdigest()
    in_directory, regular = directory_contents(directory)
    from_file = loaded_from_file(bundle)
    assert len(from_file) > 100
    assert in_directory == from_file
    assert regular
    assert ca_dir.unreachable(bundle, directory) == []


def test_a_certificate_not_in_the_directory_is_not_found(tmp_path):
    """The lookup check is not vacuous: a CA from another bundle is reported unreachable."""
    ours, other = str(tmp_path / "ours.pem"), str(tmp_path / "other.pem")
    trustme.CA().cert_pem.write_to_path(ours)
    trustme.CA().cert_pem.write_to_path(other)
    directory = ca_dir.build(ours, str(tmp_path / "root"))
    assert ca_dir.unreachable(ours, directory) == []
    assert ca_dir.unreachable(other, directory) == [0]


def test_same_subject_hash_gets_numbered_files_in_a_fixed_order(tmp_path):
    """Three CAs sharing a subject name (so a subject hash) become <hash>.0, .1, .2, each found
    by OpenSSL; the bundle's order does not change a byte of the directory."""
    pems = same_subject_cas(3)
    forward, backward = tmp_path / "forward.pem", tmp_path / "backward.pem"
    forward.write_bytes(b"".join(pems))
    backward.write_bytes(b"".join(reversed(pems)))
    first = ca_dir.build(str(forward), str(tmp_path / "a"))
    second = ca_dir.build(str(backward), str(tmp_path / "b"))
    names = sorted(os.listdir(first))
    assert [name.split(".")[1] for name in names] == ["0", "1", "2"]
    assert len({name.split(".")[0] for name in names}) == 1
    assert ca_dir.unreachable(str(forward), first) == []
    assert tree_digest(first) == tree_digest(second)


def test_duplicates_dropped_and_other_blocks_refused(tmp_path):
    """A certificate listed twice is written once; a bundle holding a non-certificate block (a
    key) is refused rather than turned into a directory that would not carry it."""
    authority = trustme.CA()
    pem = authority.cert_pem.bytes()
    doubled = tmp_path / "doubled.pem"
    doubled.write_bytes(b"# a comment line, as cacert.pem has\n" + pem + pem)
    assert len(os.listdir(ca_dir.build(str(doubled), str(tmp_path / "root")))) == 1
    mixed = tmp_path / "mixed.pem"
    mixed.write_bytes(pem + authority.private_key_pem.bytes())
    with pytest.raises(ValueError, match="PRIVATE KEY"):
        ca_dir.build(str(mixed), str(tmp_path / "root"))


def test_build_is_reproducible(tmp_path):
    """Two builds of one bundle write the same names and bytes (the zip then is the same)."""
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(b"".join(same_subject_cas(2)) + trustme.CA().cert_pem.bytes())
    ca_dir.build(str(bundle), str(tmp_path / "a"))
    ca_dir.build(str(bundle), str(tmp_path / "b"))
    assert tree_digest(str(tmp_path / "a")) == tree_digest(str(tmp_path / "b"))
