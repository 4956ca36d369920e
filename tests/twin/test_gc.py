"""The twin's gc axis: clients made and dropped with the cycle collector disabled or the heap
frozen (issue 34 item 3: a context the layer touched must be freed by reference counting, as
stock's is)."""

import pytest
from harness import Case, Check, assert_same_as_stock

# 30 clients; the layer's RSS growth at most stock's + 3 MB (a dropped context with its bundle is
# ~0.1 MB for this one-CA bundle: 30 kept alive would not show; contexts_alive does: at most 2 more
# than stock's -- once, at load 25, stock 2 and the layer 3, not seen again in 4 runs; the context
# cycle of issue 34 item 3 kept all 30 (33 against stock's 2).
CASES = {
    mode: Case("gc_churn", {"churn": Check(rss_growth_slack_mb=3, at_most_more={"contexts_alive": 2})},
               params=lambda run, mode=mode: {"gc": mode, "clients": 30})
    for mode in ("disabled", "frozen")
}


# AWS_PYTHON_KEEPALIVE_GC_INIT=1 on the layer's side (stock's is off: the switch is the layer's): the
# function's own thresholds, its gc.disable(), or neither, then a first client and 30 churned ones.
GC_INIT = {
    "gc_init_" + user: Case("gc_init", {"first": Check(), "churn": Check(rss_growth_slack_mb=3,
                                                                         at_most_more={"contexts_alive": 2})},
                            env={"AWS_PYTHON_KEEPALIVE_GC_INIT": "1"},
                            params=lambda run, user=user: {"user": user, "clients": 30})
    for user in ("none", "thresholds", "disabled")
}
CASES.update(GC_INIT)


@pytest.mark.parametrize("case", sorted(CASES))
def test_gc_as_stock(twin, case):
    """With gc disabled or frozen: the SSLContexts alive after 30 dropped clients at most 2 more
    than stock's (item 3's cycle kept 31 more), and RSS growth within 3 MB of stock's; with
    GC_INIT on, also the thresholds and the collector's state after the first client as stock's."""
    assert_same_as_stock(CASES[case], twin)


# Why AWS_PYTHON_KEEPALIVE_GC_INIT stays opt-in (issue 36: on by default only while the soak and the
# twin show no difference): the soak shows none since TLS resumption went opt-in, but gc.freeze()
# hides the init's objects from gc.get_objects() and gc.get_referrers(), which stock's never are.
# Read from gc_init_none's runs (the same pair), beside its checks.
@pytest.mark.parametrize("case", ["gc_init_none"])
def test_gc_init_hides_the_init_from_gc_introspection(twin, case):
    """GC_INIT's one difference, the reason it is opt-in: the session made before the first client
    is in stock's gc.get_objects() and not in the layer's (frozen); were it ever equal, the switch
    could be reconsidered for the default."""
    seen = {side: (twin[side].result or {}).get("checks", {}).get("introspection") for side in ("stock", "layer")}
    assert seen == {"stock": {"init_session_in_gc_get_objects": True},
                    "layer": {"init_session_in_gc_get_objects": False}}, seen
