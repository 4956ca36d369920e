"""The twin's patched-SDK axis (issue 36): the full flavor's layer twin runs the SDK with its declared
patches (layer/patches/: lazy imports of s3transfer, the docs modules, dateutil.parser,
importlib.metadata, configparser, pathlib; the IPv6 patterns compiled at their
first use), its stock twin the same pinned wheels without them (sites.py); here the hook is
off in both, so that only the patches differ, and the scenario uses what they made lazy.
Each twin runs tests/build/sdk_probe.py's checks and a threaded multipart S3 transfer against its
own moto server (API shape: moto answers as S3 does)."""

import os

import pytest
from harness import Case, Check, assert_same_as_stock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def probe_and_moto(run):
    moto = os.environ.get("AWS_KEEPALIVE_MOTO", os.path.join(REPO, ".venv", "moto", "bin", "moto_server"))
    return {"probe": os.path.join(REPO, "tests", "build", "sdk_probe.py"), "moto": moto}


CASES = {
    "sdk_patches": Case("sdk_patches", {"sdk": Check()}, flavor="full", env={"AWS_PYTHON_KEEPALIVE": "0"},
                        params=probe_and_moto, timeout_s=300),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_patched_sdk_as_stock(twin, case):
    """With the patches and without: the same docstrings, documentation, TransferConfig, S3 transfer
    methods, timestamps, host parsing (IPv6 literals too), deferred module attributes, config file,
    file cache, send errors and S3 multipart transfer (etag, length, round trip); the layer's twin
    ran the patched tree and its first client imported and compiled none of what the patches
    deferred."""
    assert_same_as_stock(CASES[case], twin)
    stock, layer = twin["stock"].result["checks"]["sdk"], twin["layer"].result["checks"]["sdk"]
    assert (stock["_patched"], layer["_patched"]) == (False, True)
    assert layer["_imported_at_first_client"] == [] and "s3transfer" in stock["_imported_at_first_client"]
    assert layer["_compiled_at_first_client"] == [] and "_HOST_PORT_RE" in stock["_compiled_at_first_client"]
    assert layer["s3 upload"]["round trip"] is True and layer["s3 upload"]["etag"].endswith('-3"')
