"""lab/experiments/async_patterns/run.py's pieces that need no namespace: the task folder it builds for the stand-in,
and how a pattern's invocations become a table row. (The patterns themselves run in
`make measure-async`; the example's behaviour behind the NAT is pinned by test_e2e_async.py.)"""

from lab.experiments.async_patterns.run import PATTERNS, async_task, short_error, summarize


def test_task_folder_bundles_aiobotocore_and_every_pattern_module():
    """The task folder holds aiobotocore from the lock and one module per pattern handler, the
    persistent-loop one being the example itself."""
    task = async_task("3.12")
    assert (task / "aiobotocore" / "__init__.py").exists()
    for _, handler in PATTERNS:
        assert (task / (handler.split(".")[0] + ".py")).exists(), handler
    example = task.parents[1] / "examples" / "async_put_item" / "app.py"
    assert (task / "app.py").read_text() == example.read_text()


def test_summary_counts_new_connections_of_warm_invocations_only():
    """The first invocation's connection is the cold start's; the row averages the others, takes the
    p50 of successful invocations and the first error without object reprs."""
    rows = [{"ok": True, "error": None, "ms": 100.0, "new_connections": 1},
            {"ok": True, "error": None, "ms": 10.0, "new_connections": 0},
            {"ok": False, "error": "Task <Task pending coro=<f() at <x>>> got Future <F> attached", "ms": 5.0,
             "new_connections": 1}]
    row = summarize("p", rows)
    assert row["new_per_warm_invocation"] == 0.5
    assert row["p50_ms"] == 55.0
    assert row["ok"] == 2 and row["first_error"] == "Task got Future attached"
    assert short_error("a <b <c>> d") == "a d"
