"""Fixed zip metadata shared by the layer zip (build_layer.py) and the wheel (build_wheel.py).

A build of one commit must give the same bytes on any machine: so no entry may carry the
builder's clock, umask or file mtimes, and the compression level is fixed.  Both writers take
their ZipInfo from ``file_info`` and their date from ``zip_date_time``.
"""

import hashlib
import os
import time
import zipfile

DEFAULT_DATE_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644
COMPRESS_LEVEL = 9


def zip_date_time():
    """SOURCE_DATE_EPOCH when set (reproducible-builds.org convention), else 1980-01-01."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return DEFAULT_DATE_TIME
    # The zip format cannot store dates before 1980.
    return max(DEFAULT_DATE_TIME, time.gmtime(int(epoch))[:6])


def info(path, date_time, mode=FILE_MODE):
    """A ZipInfo for ``path`` with the fixed date and Unix ``mode`` (a regular 0644 file by default)."""
    entry = zipfile.ZipInfo(path, date_time=date_time)
    entry.create_system = 3  # Unix, so that external_attr carries the mode bits
    entry.external_attr = mode << 16
    return entry


def write_file(archive, path, data, date_time):
    """Add ``data`` as the regular file ``path``, deflated at the fixed level."""
    archive.writestr(info(path, date_time), data, compress_type=zipfile.ZIP_DEFLATED,
                     compresslevel=COMPRESS_LEVEL)


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
