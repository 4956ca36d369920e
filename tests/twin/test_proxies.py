"""The twin's proxies axis: a client's connections through loopback proxies the test runs (the
trust store's https-proxy rule, trust.py; resumption never offers through a proxy, resume.py)."""

import pytest
from harness import Case, Check, assert_same_as_stock

CASES = {
    "proxies": Case("proxies", {
        "connect_proxy": Check(psk="never", proxy="http"),
        "https_proxy": Check(psk="never", proxy="https"),
        "https_proxy_ca": Check(psk="never", proxy="https"),
        "no_proxy": Check(proxy="http"),
    }),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_proxies_as_stock(twin, case):
    """An HTTP CONNECT proxy, an https:// proxy (verified with the client's bundle, or with
    proxy_ca_bundle) and NO_PROXY: stock's outcomes, CONNECTs and requests; no PSK through a proxy."""
    assert_same_as_stock(CASES[case], twin)
