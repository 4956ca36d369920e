"""Build OpenSSL hashed CA directories from PEM bundles: ``<root>/<sha256 of the bundle>/<hash>.<n>``.

Why: a client verifying against a bundle *file* makes OpenSSL parse every certificate in it
before its first handshake (botocore's cacert.pem: 126-130 certificates, ~0.6 s at Lambda's
128 MB CPU share); against a hashed *directory* (``load_verify_locations(capath=...)``, the
layout ``openssl rehash`` writes and Debian's /etc/ssl/certs uses) OpenSSL reads only the
certificates a chain asks for, by the hash of the issuer's subject name. The layer ships one such
directory per bundle it knows (layer/aws_keepalive/trust.py recognises a bundle by the sha256 of
its bytes, the directory's name), built here from exactly that bundle, so the trusted set is the
same: every certificate of the bundle, nothing else.

The layout, step by step:

1. split the bundle into its PEM certificate blocks (``CERTIFICATE``, ``TRUSTED CERTIFICATE``,
   ``X509 CERTIFICATE``: what OpenSSL loads from a CA file); a bundle holding anything else (a
   CRL, a key) is refused, since a directory of certificates would not carry it;
2. name each certificate by its subject hash, as ``openssl x509 -subject_hash`` prints it (the
   hash OpenSSL's directory lookup computes; stable since OpenSSL 1.0.0);
3. drop exact duplicates (the same DER twice: OpenSSL's store keeps one anyway) and number the
   certificates sharing a hash ``.0``, ``.1``, ... in the order of their DER's sha256, so that
   neither a collision nor the bundle's order changes the bytes written; OpenSSL's lookup reads
   ``<hash>.0``, ``<hash>.1``, ... until one is missing;
4. write each as a regular file (no symlinks: they would not survive a zip) holding the block's
   own text; then check with ``openssl verify -partial_chain -CApath`` that OpenSSL finds every
   certificate of the bundle through the directory.

Uses the ``openssl`` command (Debian's ``openssl`` package) and the standard library only.

    python tools/packaging/ca_dir.py --out build/ca bundle.pem [bundle.pem ...]
"""

import argparse
import base64
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The PEM labels OpenSSL's CA file loader accepts as certificates.
CERTIFICATE_LABELS = ("CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE")
_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.S)


def bundle_digest(data):
    """The name of a bundle's directory: the sha256 of its bytes (what trust.py computes)."""
    return hashlib.sha256(data).hexdigest()


def certificate_blocks(data):
    """The bundle's certificates as (PEM block text, DER bytes), in bundle order."""
    blocks = []
    for match in _BLOCK.finditer(data):
        label = match.group(1).decode("ascii")
        if label not in CERTIFICATE_LABELS:
            raise ValueError("the bundle holds a %s block: only certificates fit a CA directory" % label)
        body = match.group(2)
        blocks.append((match.group(0).replace(b"\r\n", b"\n") + b"\n", base64.b64decode(body)))
    if data.count(b"-----BEGIN ") != len(blocks):
        raise ValueError("the bundle has PEM blocks that could not be read")
    return blocks


def openssl():
    """The openssl command, or a clear error naming the package that provides it."""
    path = shutil.which("openssl")
    if path is None:
        raise SystemExit("ca_dir: the `openssl` command is missing (Debian: apt-get install openssl)")
    return path


def subject_hash(pem):
    """OpenSSL's subject-name hash of one certificate, as 8 hex digits."""
    done = subprocess.run([openssl(), "x509", "-noout", "-subject_hash"], input=pem,
                          capture_output=True, check=True)
    value = done.stdout.decode("ascii").strip()
    if not re.fullmatch(r"[0-9a-f]{8}", value):
        raise ValueError("openssl printed %r as a subject hash" % value)
    return value


def layout(data):
    """The directory's files for a bundle's bytes: {file name: PEM text}."""
    unique = {}
    for pem, der in certificate_blocks(data):
        unique.setdefault(hashlib.sha256(der).hexdigest(), pem)
    # One openssl process per certificate, a few at a time (each waits mostly on process start).
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        hashes = dict(zip(unique, pool.map(subject_hash, unique.values())))
    by_hash = {}
    for fingerprint, pem in unique.items():
        by_hash.setdefault(hashes[fingerprint], []).append((fingerprint, pem))
    files = {}
    for name_hash, entries in by_hash.items():
        for index, (_, pem) in enumerate(sorted(entries)):
            files["%s.%d" % (name_hash, index)] = pem
    return files


def unreachable(bundle_path, directory):
    """The bundle's certificates OpenSSL does not find through ``directory`` (by index in the
    bundle); empty when every one is found. Each is checked as its own trust anchor
    (``-partial_chain``: verified iff the directory lookup by its subject returns it)."""
    with open(bundle_path, "rb") as handle:
        blocks = certificate_blocks(handle.read())
    with tempfile.TemporaryDirectory(prefix="ca-dir-check-") as scratch:
        paths = []
        for index, (pem, _) in enumerate(blocks):
            paths.append(os.path.join(scratch, "%d.pem" % index))
            with open(paths[-1], "wb") as out:
                out.write(pem)
        done = subprocess.run(
            [openssl(), "verify", "-partial_chain", "-no_check_time", "-no-CAfile", "-no-CAstore",
             "-CApath", directory] + paths,
            capture_output=True, text=True,
        )
    found = set(re.findall(r"^(.*\.pem): OK$", done.stdout, re.M))
    return [index for index, path in enumerate(paths) if path not in found]


def build(bundle_path, root):
    """Write ``root/<sha256>/`` for the bundle (replacing any earlier copy); returns its path."""
    with open(bundle_path, "rb") as handle:
        data = handle.read()
    files = layout(data)
    if not files:
        raise ValueError("%s holds no certificate" % bundle_path)
    directory = os.path.join(root, bundle_digest(data))
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    for name in sorted(files):
        with open(os.path.join(directory, name), "wb") as out:
            out.write(files[name])
    missing = unreachable(bundle_path, directory)
    if missing:
        raise SystemExit("ca_dir: OpenSSL does not find certificates %s of %s through %s"
                         % (missing, bundle_path, directory))
    return directory


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="root folder: one <sha256>/ per bundle is written into it")
    parser.add_argument("bundles", nargs="+", help="PEM CA bundle files")
    args = parser.parse_args(argv)
    for bundle in args.bundles:
        directory = build(bundle, args.out)
        print("ca_dir: %s -> %s (%d files)" % (bundle, directory, len(os.listdir(directory))))


if __name__ == "__main__":
    sys.exit(main())
