"""The twin's flavors axis: the hook flavor over the runtime's bundled botocore (the stand-in's
boto3, lab/runtime-sdk/<RUNTIME_BOTO3>.txt, with its own prepared data and CA directory), and
aiobotocore (a function's own copy, with the botocore it pins) under the full layer."""

import pytest
import test_loader
import test_sslcontext
import test_verify
from harness import Case, Check, assert_same_as_stock


def on_hook_flavor(case, **checks):
    """``case`` on the hook flavor, with ``checks`` replacing some of its checks' rules."""
    return Case(case.scenario, dict(case.checks, **checks), flavor="hook", task=case.task, env=case.env,
                params=case.params, layer_says=case.layer_says)


CASES = {
    "hook_stdlib": on_hook_flavor(test_sslcontext.CASES["stdlib"]),
    "hook_instance_attributes": on_hook_flavor(test_sslcontext.CASES["instance_attributes"]),
    # The runtime's default bundle does not hold the twin's CA: every call refused, nothing offered.
    "hook_verify": on_hook_flavor(test_verify.CASES["verify"], default_bundle=Check(psk="never")),
    "hook_loader": on_hook_flavor(test_loader.CASES["loader"]),
    "aiobotocore": Case("aio", {"stdlib": Check(psk="resumes"), "wrap_bio_subclass": Check(psk="never")}, task="aio"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_flavor_as_stock(twin, case):
    """The hook flavor's SSLContext, verify and Loader cases, and aiobotocore's standard and
    wrap_bio-overriding contexts: as stock."""
    assert_same_as_stock(CASES[case], twin)
