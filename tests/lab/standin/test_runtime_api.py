"""lab/standin/runtime_api.py: the Runtime API server, driven by a real HTTP client playing the runtime."""

import http.client
import json
import statistics
import threading
import time

from lab.standin.runtime_api import PREFIX, RuntimeApi


class FakeRuntime:
    """The runtime's side of the protocol over one kept-alive HTTP/1.1 connection, as libcurl does."""

    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=10)

    def next(self):
        self.conn.request("GET", PREFIX + "/invocation/next")
        response = self.conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()

    def post(self, path, body, headers=None):
        self.conn.request("POST", PREFIX + path, body=body, headers=headers or {})
        response = self.conn.getresponse()
        return response.status, response.read()


def _in_thread(function, *args):
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", function(*args)), daemon=True)
    thread.start()
    return thread, result


def test_next_blocks_until_invoke_and_carries_lambda_headers():
    """`next` waits for a queued invocation and delivers the event with Lambda's headers."""
    with RuntimeApi() as api:
        runtime = FakeRuntime(api.address)
        thread, got = _in_thread(runtime.next)
        assert api.wait_polls(1, 5)
        time.sleep(0.2)
        assert thread.is_alive(), "next returned before any invocation was queued"
        invocation = api.queue({"k": 1}, timeout=30, request_id="rid-1")
        thread.join(5)
        status, headers, body = got["value"]
        assert status == 200 and json.loads(body) == {"k": 1}
        assert headers["Lambda-Runtime-Aws-Request-Id"] == "rid-1"
        assert int(headers["Lambda-Runtime-Deadline-Ms"]) > time.time() * 1000 + 25_000
        assert headers["Lambda-Runtime-Invoked-Function-Arn"].startswith("arn:aws:lambda:")
        assert headers["Lambda-Runtime-Trace-Id"].startswith("Root=1-")
        assert runtime.post("/invocation/rid-1/response", b'{"ok": true}')[0] == 202
        outcome, timings = api.wait(invocation, 5)
        assert outcome.kind == "response" and outcome.body == {"ok": True}
        assert timings.queued_ns <= timings.delivered_ns <= timings.completed_ns
        assert timings.duration_ms >= timings.wait_ms >= 0


def test_error_post_becomes_an_error_outcome_with_its_type():
    """POST .../error yields kind "error", the body and the Lambda-Runtime-Function-Error-Type."""
    with RuntimeApi() as api:
        runtime = FakeRuntime(api.address)
        thread, got = _in_thread(api.invoke, {}, 10.0, "rid-e")
        runtime.next()
        error = {"errorMessage": "boom", "errorType": "ValueError"}
        status, _ = runtime.post("/invocation/rid-e/error", json.dumps(error).encode(),
                                 {"Lambda-Runtime-Function-Error-Type": "ValueError"})
        thread.join(5)
        outcome, _ = got["value"]
        assert status == 202
        assert outcome.kind == "error" and not outcome.ok
        assert outcome.error_type == "ValueError" and outcome.body["errorMessage"] == "boom"


def test_init_error_ends_a_waiting_invoke():
    """POST /init/error is recorded and a pending invoke returns it at once, not at its timeout."""
    with RuntimeApi() as api:
        runtime = FakeRuntime(api.address)
        started = time.monotonic()
        thread, got = _in_thread(api.invoke, {}, 30.0)
        time.sleep(0.1)
        status, _ = runtime.post("/init/error", b'{"errorType": "Runtime.ImportModuleError"}',
                                 {"Lambda-Runtime-Function-Error-Type": "Runtime.ImportModuleError"})
        thread.join(5)
        outcome, _ = got["value"]
        assert status == 202 and outcome.kind == "init_error"
        assert api.init_error.error_type == "Runtime.ImportModuleError"
        assert time.monotonic() - started < 5


def test_unknown_request_id_is_rejected():
    """A response for a request id that was never delivered gets 400 and changes nothing."""
    with RuntimeApi() as api:
        assert FakeRuntime(api.address).post("/invocation/nope/response", b"{}")[0] == 400


def test_invoke_times_out_and_withdraws_the_invocation():
    """Nobody polling: invoke returns kind "timeout" and the event is not delivered later."""
    with RuntimeApi() as api:
        outcome, timings = api.invoke({"late": True}, timeout=0.3)
        assert outcome.kind == "timeout" and timings.delivered_ns is None
        runtime = FakeRuntime(api.address)
        thread, _ = _in_thread(runtime.next)
        thread.join(0.5)
        assert thread.is_alive(), "a timed-out invocation was still delivered"


def test_round_trip_has_no_delayed_ack_stall():
    """An invocation round trip over a kept-alive connection costs ~1 ms, not the 40 ms Nagle stall."""
    with RuntimeApi() as api:
        runtime = FakeRuntime(api.address)
        durations = []
        for i in range(15):
            thread, got = _in_thread(api.invoke, {"i": i}, 5.0, "rid-%d" % i)
            runtime.next()
            runtime.post("/invocation/rid-%d/response" % i, b"{}")
            thread.join(5)
            durations.append(got["value"][1].duration_ms)
        assert statistics.median(durations) < 15, durations


def test_bind_address_is_configurable():
    """The server binds to the given address (a namespace's veth address in the NAT lab)."""
    with RuntimeApi("127.0.0.2") as api:
        assert api.address.startswith("127.0.0.2:")
        runtime = FakeRuntime(api.address)
        thread, got = _in_thread(runtime.next)
        assert api.wait_polls(1, 5)
        api.queue({}, request_id="x")
        thread.join(5)
        assert got["value"][0] == 200


def test_close_releases_a_blocked_next():
    """Closing the server answers a runtime blocked in `next`, so no handler thread is left waiting."""
    api = RuntimeApi()
    runtime = FakeRuntime(api.address)
    thread, got = _in_thread(runtime.next)
    assert api.wait_polls(1, 5)
    api.close()
    thread.join(5)
    assert not thread.is_alive() and got["value"][0] == 500


def test_restore_next_blocks_until_released_then_next_works():
    """SnapStart: `restore/next` blocks (restore_waiting) until release_restore(); `next` follows."""
    with RuntimeApi() as api:
        runtime = FakeRuntime(api.address)

        def restore_next():
            runtime.conn.request("GET", PREFIX + "/restore/next")
            response = runtime.conn.getresponse()
            return response.status, response.read()

        thread, result = _in_thread(restore_next)
        deadline = time.monotonic() + 5
        while not api.restore_waiting and time.monotonic() < deadline:
            time.sleep(0.01)
        assert api.restore_waiting and "value" not in result
        api.release_restore()
        thread.join(5)
        assert result["value"] == (200, b"") and not api.restore_waiting
        thread, result = _in_thread(runtime.next)
        assert api.wait_polls(1, 5)
        api.queue({"k": 1})
        thread.join(5)
        assert result["value"][0] == 200 and json.loads(result["value"][2]) == {"k": 1}


def test_restore_error_is_recorded():
    """`restore/error` (an after-restore hook raised) is kept with its error type."""
    with RuntimeApi() as api:
        status, _ = FakeRuntime(api.address).post(
            "/restore/error", json.dumps({"errorType": "ValueError"}),
            {"Lambda-Runtime-Function-Error-Type": "Runtime.AfterRestoreError"})
        assert status == 202
        assert api.restore_error.kind == "restore_error"
        assert api.restore_error.error_type == "Runtime.AfterRestoreError"


def _blocked_runtimes(api, n):
    """n runtimes, each on its own connection, blocked in ``next`` one after the other (in order)."""
    runtimes, calls = [], []
    for i in range(n):
        runtime = FakeRuntime(api.address)
        runtimes.append(runtime)
        calls.append(_in_thread(runtime.next))
        assert api.wait_waiting(i + 1, 5)
    return runtimes, calls


def test_n_concurrent_long_polls_each_get_one_invocation():
    """Multi-concurrent mode: 4 workers block in next at once; 4 invocations, one each, all answered."""
    with RuntimeApi() as api:
        runtimes, calls = _blocked_runtimes(api, 4)
        assert api.waiting == 4
        invocations = [api.queue({"i": i}, request_id="rid-%d" % i) for i in range(4)]
        ids = []
        for thread, got in calls:
            thread.join(5)
            status, headers, body = got["value"]
            ids.append(headers["Lambda-Runtime-Aws-Request-Id"])
        assert sorted(ids) == ["rid-0", "rid-1", "rid-2", "rid-3"]
        for runtime, rid in zip(runtimes, ids):  # answered concurrently, in any order
            assert runtime.post("/invocation/%s/response" % rid, b"{}")[0] == 202
        assert all(api.wait(invocation, 5)[0].kind == "response" for invocation in invocations)
        assert api.waiting == 0


def test_lifo_dispatch_keeps_the_last_waiter_busy():
    """dispatch="lifo": an invocation goes to the worker that came back to next last."""
    with RuntimeApi() as api:
        runtimes, calls = _blocked_runtimes(api, 3)
        api.queue({}, request_id="rid-last")
        calls[2][0].join(5)
        assert calls[2][1]["value"][1]["Lambda-Runtime-Aws-Request-Id"] == "rid-last"
        assert calls[0][0].is_alive() and calls[1][0].is_alive() and api.waiting == 2


def test_fifo_dispatch_rotates_through_the_workers():
    """dispatch="fifo": an invocation goes to the worker waiting longest."""
    with RuntimeApi(dispatch="fifo") as api:
        runtimes, calls = _blocked_runtimes(api, 3)
        api.queue({}, request_id="rid-first")
        calls[0][0].join(5)
        assert calls[0][1]["value"][1]["Lambda-Runtime-Aws-Request-Id"] == "rid-first"
        assert calls[1][0].is_alive() and calls[2][0].is_alive() and api.waiting == 2
