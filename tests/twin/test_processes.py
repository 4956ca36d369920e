"""The twin's processes axis: fork, spawn and a SnapStart restore (resume.py's generations:
no session crosses into a child or a restored clone; children.py activates spawned children)."""

import pytest
from harness import Case, Check, assert_same_as_stock

CASES = {
    # Connections in order: the parent's two, the forked child's two (its first: no PSK), the parent's.
    "fork_spawn": Case("processes", {"fork": Check(no_psk_at=(2,)), "spawn": Check()}),
    # The first connection after the restore offers no PSK (snapstart.py bumps the generation).
    "snapstart": Case("snapstart", {"restore": Check(no_psk_at=(2,))},
                      env={"AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_processes_as_stock(twin, case):
    """A forked child, a spawned child and a SnapStart restore: stock's outcomes and requests; the
    child's and the restored clone's first connection offers no session."""
    assert_same_as_stock(CASES[case], twin)
