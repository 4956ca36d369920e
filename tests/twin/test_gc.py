"""The twin's gc axis: clients made and dropped with the cycle collector disabled or the heap
frozen (issue 34 item 3: a context the layer touched must be freed by reference counting, as
stock's is)."""

import pytest
from harness import Case, Check, assert_same_as_stock

# 30 clients; the layer's RSS growth at most stock's + 3 MB (a dropped context with its bundle is
# ~0.1 MB for this one-CA bundle: 30 kept alive would not show; contexts_alive does).
# contexts_alive: the dropped clients' contexts still alive, of those whose calls all succeeded at
# botocore's first attempt -- as stock's, exactly (none).  A retried call's client is kept by
# botocore's own exception cycle, in stock as in the layer (function.churn_clients): counting every
# live SSLContext, as this check did until 2026-11-28 with 2 more allowed on the layer's side, saw
# 2 plus the run's retries, 0 to 4 on either side (stock 3 and the layer 6 failed it once; the
# retries came from the front, wire._relay, which now passes the endpoint's close on in time).
# The context cycle of issue 34 item 3 kept all 30 (33 against stock's 2 then).
CLIENTS = 30
CASES = {
    mode: Case("gc_churn", {"churn": Check(rss_growth_slack_mb=3)},
               params=lambda run, mode=mode: {"gc": mode, "clients": CLIENTS})
    for mode in ("disabled", "frozen")
}


# AWS_PYTHON_KEEPALIVE_GC_INIT=1 on the layer's side (stock's is off: the switch is the layer's): the
# function's own thresholds, its gc.disable(), or neither, then a first client and 30 churned ones.
GC_INIT = {
    "gc_init_" + user: Case("gc_init", {"first": Check(), "churn": Check(rss_growth_slack_mb=3)},
                            env={"AWS_PYTHON_KEEPALIVE_GC_INIT": "1"},
                            params=lambda run, user=user: {"user": user, "clients": CLIENTS})
    for user in ("none", "thresholds", "disabled")
}
CASES.update(GC_INIT)


@pytest.mark.parametrize("case", sorted(CASES))
def test_gc_as_stock(twin, case):
    """With gc disabled or frozen: the contexts of dropped clients (those not retried, at least a
    third of them, and at most 2 fewer than stock's) still alive as stock's, none (item 3's cycle
    kept all 30), and RSS growth within 3 MB of stock's; with GC_INIT on, also the thresholds and
    the collector's state after the first client as stock's."""
    assert_same_as_stock(CASES[case], twin)
    first_try = {side: twin[side].result["checks"]["churn"]["_contexts_alive_detail"]["first_try_clients"]
                 for side in ("stock", "layer")}
    # Retried clients are not counted: a run where most were would compare next to nothing (30 of
    # 30 first-try in 50 runs at load 1-5; 21 to 30 at load 3-8 before the front passed the
    # endpoint's close on with its answer, wire._relay).
    assert min(first_try.values()) >= CLIENTS // 3, first_try
    # Nor may the layer's side retry more than stock's: its retried clients are not counted either,
    # so a layer that made calls retry (a failed resumption, a reset of its own) would take them out
    # of contexts_alive, 20 of 30 within the floor above.  2 more allowed, what the count of every
    # live context allowed before (each retried client kept one alive); 0 and 0 in 50 runs now.
    assert first_try["layer"] >= first_try["stock"] - 2, first_try


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
