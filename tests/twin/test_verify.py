"""The twin's verify axis: every way a function says what to trust (the trust-store optimization,
trust.py, and resumption, resume.py, both key on it)."""

import pytest
from harness import Case, Check, assert_same_as_stock

CASES = {
    "verify": Case("verify", {
        # The full flavor's default bundle trusts the twin's servers (sites.py): verified through the
        # layer's hashed directory, then resumed; the hook flavor's refuses them (test_flavors).
        "default_bundle": Check(psk="resumes"),
        "aws_ca_bundle": Check(psk="resumes"),
        "rewritten": Check(),
        "verify_false": Check(psk="never"),
        "custom_path": Check(psk="resumes"),
    }, params=lambda run: {"other_bundle": run.pki.other_bundle}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_verify_as_stock(twin, case):
    """The default bundle, AWS_CA_BUNDLE, a bundle rewritten in place while its client lives,
    verify=False and a custom path: stock's outcomes and wire; resumption only where verified."""
    assert_same_as_stock(CASES[case], twin)
