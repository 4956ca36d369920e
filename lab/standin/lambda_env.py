"""The Lambda execution stand-in: one function process run the way the managed Python runtime runs it.

What is real: the CPython minor (3.10 - 3.14, found or installed by tools/interpreters/find_python.py), awslambdaric
from PyPI serving invocations from a Runtime API (lab/standin/runtime_api.py), the runtime's documented startup
(lab/standin/runtime/bootstrap.py, which processes the layer's ``.pth`` files), an exec wrapper run as
/var/runtime/bootstrap runs ``AWS_LAMBDA_EXEC_WRAPPER``, a plain CPython prefix with the user site
on like /var/lang (lab/standin/runtime_prefix.py), a bundled boto3 of the kind the
managed runtimes ship in the runtime's own site-packages (lab/runtime-requirements.txt), the layer
zip extracted as the layer root, optionally bind-mounted read-only on a real ``/opt`` in a private
mount namespace, and SIGSTOP/SIGCONT freezing between invocations.

Typical use::

    with LambdaFunction(task_root="examples/put_item", handler="app.handler", python="3.12",
                        opt=layer_root, env={"AWS_PYTHON_KEEPALIVE": "1", ...}) as fn:
        record = fn.invoke({"k": 1})          # thaw, invoke, wait until idle in next, freeze

Processes: the function process is started in its own session (so it is its own process group);
every signal goes to that group by id. ``stop()`` (also from ``__exit__`` and at interpreter exit)
sends SIGCONT first, because a frozen process does not act on SIGTERM until it is continued.

Environment: the child gets an explicit environment built here, never a copy of ours: this machine
exports AWS_CA_BUNDLE, PYTHONDONTWRITEBYTECODE, PYTHONUNBUFFERED and more globally, and any of them
would make "what Lambda does" untrue (PYTHONPATH in particular disables the layer's ``.pth`` route).
"""

import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
import weakref
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from lab import REPO
from lab.standin import cpu_share
from lab.standin import runtime_prefix
from lab.standin.output_capture import OutputCapture
from lab.standin.runtime_api import Outcome, RuntimeApi, Timings

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"
PYTHON_MINORS = ("3.10", "3.11", "3.12", "3.13", "3.14")
HOOK_PREFIX = "aws-keepalive"  # the hook's stderr lines start with "aws-keepalive:"

# What Lambda sets for every function (values of a 128 MB function in us-east-1) that matters to
# Python code; the function's own variables (``env=``) come on top.
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin/:/bin:/opt/bin",
    "LANG": "en_US.UTF-8",
    "TZ": ":UTC",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_LAMBDA_FUNCTION_NAME": "lab-function",
    "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
    "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/lab-function",
    "AWS_LAMBDA_LOG_STREAM_NAME": "2026/01/01/[$LATEST]lab",
    "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
    # Dummy credentials: DynamoDB Local accepts any; nothing here can reach AWS.
    "AWS_ACCESS_KEY_ID": "AKIDLABLABLABLABLAB0",
    "AWS_SECRET_ACCESS_KEY": "lab-secret-access-key",
    "AWS_SESSION_TOKEN": "lab-session-token",
}

_live = weakref.WeakSet()


# --- interpreters: plain CPython prefixes, user site on (lab/standin/runtime_prefix.py) -----------------------
def runtime_python(minor: str, variant: str = "") -> Path:
    """The stand-in runtime's interpreter for a CPython minor, created on first use.

    ``.venv/lambda-X.Y`` is a plain CPython prefix (not a venv: a venv turns the user site, and
    with it ``usercustomize``, off; the managed runtime's interpreter has it on) whose
    site-packages holds exactly lab/runtime-requirements.txt (``variant="ric40"``: awslambdaric 4.0.x,
    ``.venv/lambda-X.Y-ric40``). See lab/standin/runtime_prefix.py.
    """
    return runtime_prefix.ensure(minor, variant)


# --- the layer root ("/opt") ----------------------------------------------------------------------
def extract_layer(zip_path, dest) -> Path:
    """Extract a layer zip (``python/`` at its root) into dest, which then stands in for /opt."""
    dest = Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(dest)
    return dest


def layer_from_source(dest, hook_dir=REPO / "layer", dist_info=False) -> Path:
    """Until build/layer.zip exists: the hook's source folder (the repo's ``layer/``) copied as
    ``<dest>/python``; with ``dist_info``, plus the ``*.dist-info`` the built layer carries (its
    entry point is what OpenTelemetry's ``initialize()`` looks up)."""
    dest = Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(hook_dir, dest / "python",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "requirements*"))
    if dist_info:
        write_dist_info(hook_dir, dest / "python")
    return dest


def write_dist_info(hook_dir, python_dir) -> str:
    """tools/packaging/build_wheel.write_dist_info, the function the layer build calls: the same METADATA and
    entry points as the shipped layer and wheel.  Returns the dist-info folder's name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_wheel", REPO / "tools" / "packaging" / "build_wheel.py")
    build_wheel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_wheel)
    return build_wheel.write_dist_info(str(hook_dir), str(python_dir))


def empty_opt(dest) -> Path:
    """A function without layers: /opt exists and is empty."""
    dest = Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    return dest


def can_mount_opt() -> Optional[str]:
    """None if a private mount namespace with a read-only /opt bind mount works here, else why not."""
    if os.geteuid() != 0:
        return "needs root (unshare --mount, mount --bind)"
    if not shutil.which("unshare") or not Path("/opt").is_dir():
        return "needs unshare(1) and an existing /opt to mount over"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            'mount --bind "$0" /opt && mount -o remount,ro,bind /opt', "/tmp"],
                           capture_output=True, text=True, timeout=10)
    if probe.returncode != 0:
        return "mount namespace unavailable: " + probe.stderr.strip()
    return None


# The glue that gives one process a read-only /opt without touching the host's: a new mount namespace
# with private propagation (so the bind mount does not leak out), a bind mount, then a read-only
# remount of that bind (a plain "mount --bind -o ro" ignores ro on older util-linux), then exec, so
# the pid the lab holds is the interpreter's own.
_MOUNT_OPT = 'mount --bind "$0" /opt && mount -o remount,ro,bind /opt && exec "$@"'


# --- records ----------------------------------------------------------------------------------------
@dataclass
class Invocation:
    """One invocation as the lab saw it."""

    index: int
    request_id: str
    outcome: Outcome
    timings: Timings
    thawed: bool  # the process was frozen and got SIGCONT just before this invocation
    stdout: list = field(default_factory=list)
    stderr: list = field(default_factory=list)
    counters: dict = field(default_factory=dict)
    gap_s: Optional[float] = None  # set by the driver: idle time before this invocation
    worker_pid: Optional[int] = None  # the process whose botocore served it (lab_observe events)
    events: list = field(default_factory=list)  # its lab_observe events, in order (lab/runtime/lab_observe.py)

    @property
    def ok(self) -> bool:
        return self.outcome.ok

    @property
    def result(self) -> Any:
        return self.outcome.body

    @property
    def duration_ms(self) -> Optional[float]:
        return self.timings.duration_ms

    def hook_lines(self):
        """The hook's lines of this invocation (text "aws-keepalive: ..." or JSON log objects)."""
        return hook_lines(self.stdout + self.stderr)


def hook_lines(lines) -> list:
    """Lines that come from the layer's hook: "aws-keepalive: ..." on stderr, or, with
    AWS_LAMBDA_LOG_FORMAT=JSON, JSON objects whose message names aws-keepalive. Accepts strings or
    output_capture.Line objects (e.g. ``LambdaFunction.init_lines``)."""
    texts = [getattr(line, "text", line) for line in lines]
    return [text for text in texts if HOOK_PREFIX in text]


def keepalive_timers(pid: int, port: int, prefix: Sequence[str] = ()) -> list:
    """The keep-alive timer of each established connection of process ``pid`` to ``port``, as ``ss``
    prints it ("59sec", "119min", "1min14sec"), or None for a connection without one. ``prefix``
    runs ss elsewhere, e.g. in the function's network namespace (``nat.command([])``)."""
    import re

    out = subprocess.run(list(prefix) + ["ss", "-tnopH", "state", "established", "dport", "= :%d" % port],
                         capture_output=True, text=True, timeout=10, check=True).stdout
    timers = []
    for line in out.splitlines():
        if "pid=%d," % pid in line:
            match = re.search(r"timer:\(keepalive,([^,]+),", line)
            timers.append(match.group(1) if match else None)
    return timers


def settled_keepalive_timers(pids, port: int, prefix: Sequence[str] = ()) -> dict:
    """``keepalive_timers`` of several processes; one whose connection shows none is read again (up
    to 3 times, 0.5 s apart): while a segment is unacknowledged ss shows the retransmission timer
    ("on") in the keep-alive timer's place, and the last call's ACKs may still be on their way."""
    timers: dict = {}
    for attempt in range(4):
        for pid in pids:
            if attempt == 0 or not timers[pid] or None in timers[pid]:
                timers[pid] = keepalive_timers(pid, port, prefix)
        if all(found and None not in found for found in timers.values()):
            break
        time.sleep(0.5)
    return timers


def timer_seconds(text: str) -> float:
    """An ss timer ('59sec' / '1min' / '119min' / '1min14sec' / '350ms') in seconds."""
    import re

    total = 0.0
    for number, unit in re.findall(r"(\d+)(min|sec|ms)", text):
        total += int(number) * {"min": 60, "sec": 1, "ms": 0.001}[unit]
    return total


def count_events(events) -> dict:
    """Per-invocation counters from lab_observe events (see lab/standin/runtime/lab_observe.py)."""
    counters = {"attempts": 0, "http_responses": 0, "retries": 0, "new_connections": 0,
                "dropped_replaced": 0, "exceptions": [], "connections": []}
    for event in events:
        kind = event["kind"]
        if kind == "attempt":
            counters["attempts"] += 1
        elif kind == "http_response":
            counters["http_responses"] += 1
        elif kind == "retry":
            counters["retries"] += 1
        elif kind == "new_connection":
            counters["new_connections"] += 1
            counters["connections"].append(event["detail"])
        elif kind == "dropped_replaced":
            counters["dropped_replaced"] += 1
        elif kind == "exception":
            counters["exceptions"].append(event["detail"])
    counters["connection_errors"] = max(0, counters["attempts"] - counters["http_responses"])
    return counters


# --- the function process -----------------------------------------------------------------------------
class LambdaFunction:
    """One execution environment: a Runtime API server plus the runtime process serving it.

    task_root: the function code folder (LAMBDA_TASK_ROOT, also the cwd); handler: "module.function".
    python: CPython minor. opt: the layer root (a folder holding ``python/``), None = no layer (an
    empty folder). real_opt: bind-mount opt read-only on /opt in a private mount namespace (root).
    env: the function's environment variables, on top of BASE_ENV (AWS_PYTHON_KEEPALIVE=1 switches
    the layer on; leaving it out is "layer present, switch off"). prefix: command prefix, e.g.
    ``["ip", "netns", "exec", "ns1"]``. Then give the Runtime API a socket made in that namespace,
    ``api_sock_factory=nat.socket`` (it serves on the namespace's 127.0.0.1, like Lambda's local
    Runtime API), or an api_host reachable from inside (e.g. the veth's host-side address; but then
    the runtime's idle ``next`` connection crosses the NAT and can be forgotten by it: see
    lab/standin/runtime_api.py).
    observe: write per-invocation counters (lab_observe). freeze: SIGSTOP between invocations.

    max_concurrency: Lambda Managed Instances' multi-concurrent mode. Sets AWS_LAMBDA_MAX_CONCURRENCY
    (awslambdaric's own MultiConcurrentRunner then starts that many worker processes, each blocking
    in ``next``) and AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances; never frozen. ``start``
    returns once every worker waits; ``invoke_burst`` sends invocations that run at the same time.
    variant: the runtime's site-packages (runtime_python), e.g. "ric40" for awslambdaric 4.0.x.
    dispatch: which waiting worker gets an invocation (lab/standin/runtime_api.py: "lifo" or "fifo").
    memory_mb: the function's memory size: AWS_LAMBDA_FUNCTION_MEMORY_SIZE, and the process runs
    in a cgroup CPU quota of that size's share of one vCPU (lab/standin/cpu_share.py; 1769 MB = 1 vCPU), as
    Lambda throttles it. None: unthrottled (BASE_ENV's 128 stays in the environment).
    """

    def __init__(self, task_root, handler: str, *, python: str = "3.12", opt=None, real_opt: bool = False,
                 env: Optional[dict] = None, prefix: Sequence[str] = (), api_host: str = "127.0.0.1",
                 api_sock_factory=None,
                 observe: bool = True, freeze: bool = True, workdir=None, init_timeout: float = 30.0,
                 max_concurrency: Optional[int] = None, variant: str = "", dispatch: str = "lifo",
                 memory_mb: Optional[int] = None):
        self.task_root = Path(task_root).resolve()
        self.handler = handler
        self.python = python
        self.opt = Path(opt).resolve() if opt is not None else None
        self.real_opt = real_opt
        self.env = dict(env or {})
        self.prefix = list(prefix)
        self.api_host = api_host
        self.api_sock_factory = api_sock_factory
        self.observe = observe
        self.max_concurrency = max_concurrency
        self.variant = variant
        self.dispatch = dispatch
        self.freeze_between = freeze and max_concurrency is None  # Managed Instances never freeze
        self.init_timeout = init_timeout
        self.memory_mb = memory_mb
        self._quota: Optional[cpu_share.Quota] = None
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="lab-lambda-"))
        self.api: Optional[RuntimeApi] = None
        self.proc: Optional[subprocess.Popen] = None
        self.capture: Optional[OutputCapture] = None
        self.frozen = False
        self.init_ms: Optional[float] = None
        self.init_lines: list = []
        self.init_events: list = []
        self._observe_path = self.workdir / "observe.jsonl"
        self._observe_offset = 0
        self._events_by_rid: dict = {}
        self._count = 0

    # --- lifecycle -------------------------------------------------------------------------------
    def command(self) -> list:
        python = str(runtime_python(self.python, self.variant))
        opt_arg = "/opt" if self.real_opt else str(self._opt_dir())
        inner = [python, str(RUNTIME_DIR / "bootstrap.py"), "--opt", opt_arg]
        if self.observe:
            inner += ["--observe", str(self._observe_path)]
        wrapper = self.exec_wrapper()
        if wrapper is not None:
            # /var/runtime/bootstrap: exec -- "$AWS_LAMBDA_EXEC_WRAPPER" <interpreter> bootstrap.py
            inner = [wrapper] + inner
        if self.real_opt:
            inner = ["unshare", "--mount", "--propagation", "private", "sh", "-c", _MOUNT_OPT,
                     str(self._opt_dir())] + inner
        return self.prefix + inner

    def exec_wrapper(self) -> Optional[str]:
        """AWS_LAMBDA_EXEC_WRAPPER as the runtime's bootstrap would exec it, or None.

        A path under /opt names a file of the layers, so without ``real_opt`` it is looked up in
        the folder standing in for /opt (the wrapper then finds the layers next to itself, as
        wrappers do with ``dirname "$0"``). Like the real bootstrap, a missing or non-executable
        wrapper is an error before the interpreter starts.
        """
        wrapper = self.env.get("AWS_LAMBDA_EXEC_WRAPPER")
        if not wrapper:
            return None
        if not self.real_opt and (wrapper == "/opt" or wrapper.startswith("/opt/")):
            wrapper = str(self._opt_dir()) + wrapper[len("/opt"):]
        if not os.access(wrapper, os.X_OK):
            raise RuntimeError("AWS_LAMBDA_EXEC_WRAPPER %s: missing or not executable" % wrapper)
        return wrapper

    def environment(self) -> dict:
        env = dict(BASE_ENV)
        env.update({
            "AWS_EXECUTION_ENV": "AWS_Lambda_python" + self.python,
            "LAMBDA_TASK_ROOT": str(self.task_root),
            "LAMBDA_RUNTIME_DIR": str(RUNTIME_DIR),
            "_HANDLER": self.handler,
            "AWS_LAMBDA_RUNTIME_API": self.api.address,
        })
        if self.max_concurrency is not None:
            env["AWS_LAMBDA_MAX_CONCURRENCY"] = str(self.max_concurrency)
            env["AWS_LAMBDA_INITIALIZATION_TYPE"] = "lambda-managed-instances"
        if self.memory_mb is not None:
            env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = str(self.memory_mb)
        env.update(self.env)
        return env

    def _opt_dir(self) -> Path:
        return self.opt if self.opt is not None else empty_opt(self.workdir / "opt-empty")

    def start(self) -> "LambdaFunction":
        """Start the server and the runtime; return once it waits for its first invocation.

        Raises RuntimeError if the runtime exits or does not get there within init_timeout, unless
        it reported an init error (then ``self.api.init_error`` is set and the process has exited or
        is exiting, as on Lambda).
        """
        command = self.command()  # first: a missing exec wrapper fails before any server exists
        sock = self.api_sock_factory() if self.api_sock_factory is not None else None
        self.api = RuntimeApi(self.api_host, sock=sock, dispatch=self.dispatch)
        self._observe_path.write_text("")
        if self.memory_mb is not None:
            self._quota = cpu_share.Quota(self.memory_mb).__enter__()
            command = self._quota.prefix() + command  # the whole process tree runs throttled
        started = time.monotonic_ns()
        try:
            self.proc = subprocess.Popen(command, env=self.environment(), cwd=str(self.task_root),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True)
        except BaseException:
            self._remove_quota()
            raise
        _live.add(self)
        self.capture = OutputCapture({"stdout": self.proc.stdout, "stderr": self.proc.stderr})
        deadline = time.monotonic() + self.init_timeout
        # Ready: the runtime blocks in next (multi-concurrent mode: every worker does).
        ready = lambda: self.api.wait_waiting(self.max_concurrency or 1, 0.1)  # noqa: E731
        while not ready():
            if self.api.restore_waiting:  # SnapStart: init done, waiting for the snapshot
                self.init_ms = (time.monotonic_ns() - started) / 1e6
                self.init_lines = self.capture.drain()
                if self.freeze_between:
                    self.freeze()
                return self
            if self.api.init_error is not None:
                self.proc.wait(max(0.1, deadline - time.monotonic()))
                self.init_lines = self.capture.drain()
                return self
            if self.proc.poll() is not None or time.monotonic() > deadline:
                lines = [line.text for line in self.capture.drain()]
                self.stop()
                raise RuntimeError("runtime did not reach 'next' (exit %s):\n%s"
                                   % (self.proc.returncode, "\n".join(lines[-30:])))
        self.init_ms = (self.api.poll_time_ns(self.max_concurrency or 1) - started) / 1e6
        self.init_lines = self.capture.drain()
        self.init_events = self._read_events().get(None, [])
        if self.freeze_between:
            self.freeze()
        return self

    def restore(self, timeout: float = 10.0) -> list:
        """SnapStart: after ``start()`` returned with the runtime blocked in ``restore/next`` (the
        lab froze it: the snapshot), thaw it and answer, as a restore does; wait until the
        after-restore hooks ran and the runtime waits for its first invocation. Returns the
        output lines of the restore. Raises RuntimeError on a restore error or a timeout."""
        if self.frozen:
            self.thaw()
        self.api.release_restore()
        reached = self.api.wait_polls(1, timeout)
        lines = self.capture.drain()
        if self.api.restore_error is not None or not reached:
            raise RuntimeError("restore failed (%s):\n%s" % (
                self.api.restore_error, "\n".join(line.text for line in lines[-30:])))
        if self.freeze_between:
            self.freeze()
        return lines

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def state(self) -> Optional[str]:
        """The process state letter from /proc/PID/stat ("S" sleeping, "T" stopped, ...)."""
        try:
            stat = Path("/proc/%d/stat" % self.proc.pid).read_text()
        except (OSError, AttributeError):
            return None
        return stat.rsplit(")", 1)[1].split()[0]  # the command name may contain spaces or ")"

    def _signal(self, sig) -> None:
        try:
            os.killpg(self.proc.pid, sig)  # its own session: process group id == pid
        except ProcessLookupError:
            pass

    def freeze(self, timeout: float = 5.0) -> None:
        """SIGSTOP the function's process group and wait until the kernel shows it stopped."""
        self._signal(signal.SIGSTOP)
        self.frozen = True
        deadline = time.monotonic() + timeout
        while self.alive() and self.state() not in ("T", "t") and time.monotonic() < deadline:
            time.sleep(0.001)

    def thaw(self) -> None:
        self._signal(signal.SIGCONT)
        self.frozen = False

    def stop(self) -> None:
        """Stop the runtime (SIGCONT, SIGTERM, then SIGKILL after 3 s) and the server. Idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            self._signal(signal.SIGCONT)
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(5)
        if self.proc is not None and self.proc.poll() is not None:
            self._signal(signal.SIGKILL)  # leftovers of its process group, if any
        self.frozen = False
        if self.capture is not None:
            self.capture.drain()
            self.capture.close()
            for pipe in (self.proc.stdout, self.proc.stderr):
                pipe.close()
            self.capture = None
        if self.api is not None:
            self.api.close()
            self.api = None
        self._remove_quota()
        _live.discard(self)
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _remove_quota(self) -> None:
        if self._quota is not None:
            self._quota.remove()
            self._quota = None

    # --- invocations ----------------------------------------------------------------------------
    def invoke(self, event: Any = None, timeout: float = 90.0) -> Invocation:
        """One invocation the way Lambda does it: thaw, queue, wait for the outcome, wait until the
        runtime is back in ``next`` (idle), collect its output and counters, freeze again."""
        polls_before = self.api.polls
        thawed = self.frozen
        if self.frozen:
            self.thaw()
        request_id = str(uuid.uuid4())
        outcome, timings = self.api.invoke({} if event is None else event, timeout, request_id)
        if outcome.kind in ("response", "error"):
            # It is idle again once it calls next for the following invocation.
            self.api.wait_polls(polls_before + 1, 10.0)
        lines = self.capture.drain()
        events = self._read_events()
        record = Invocation(self._count, request_id, outcome, timings, thawed,
                            stdout=[line.text for line in lines if line.stream == "stdout"],
                            stderr=[line.text for line in lines if line.stream == "stderr"])
        record.events = [e for evs in events.values() for e in evs]
        record.counters = count_events(record.events)
        self._count += 1
        if self.freeze_between and self.alive() and outcome.kind in ("response", "error"):
            self.freeze()
        return record

    def invoke_burst(self, events: Sequence[Any], timeout: float = 90.0) -> list:
        """Multi-concurrent mode: queue every event at once (each goes to a waiting worker, chosen
        by ``dispatch``), wait for every outcome and until every worker is back in ``next``; one
        record per event, with the worker that served it (``worker_pid``) and its counters. The
        output lines of the burst cannot be told apart by invocation: they go on the first record."""
        queued = [self.api.queue({} if event is None else event, timeout) for event in events]
        outcomes = [self.api.wait(invocation, timeout) for invocation in queued]
        self.api.wait_waiting(self.max_concurrency or 1, 10.0)
        lines = self.capture.drain()
        by_rid = self._read_events()
        records = []
        for invocation, (outcome, timings) in zip(queued, outcomes):
            mine = by_rid.get(invocation.request_id, [])
            record = Invocation(self._count, invocation.request_id, outcome, timings, thawed=False)
            record.events = mine
            record.counters = count_events(mine)
            record.worker_pid = mine[0].get("pid") if mine else None
            records.append(record)
            self._count += 1
        if records:
            records[0].stdout = [line.text for line in lines if line.stream == "stdout"]
            records[0].stderr = [line.text for line in lines if line.stream == "stderr"]
        return records

    def _read_events(self) -> dict:
        """New lab_observe events since the last call, grouped by request id (None = init)."""
        if not self.observe:
            return {}
        with open(self._observe_path, "rb") as stream:
            stream.seek(self._observe_offset)
            data = stream.read()
        complete = data[: data.rfind(b"\n") + 1]
        self._observe_offset += len(complete)
        grouped: dict = {}
        for raw in complete.splitlines():
            event = json.loads(raw)
            grouped.setdefault(event["rid"], []).append(event)
        return grouped


@atexit.register
def _stop_all():  # a test run interrupted with Ctrl-C still leaves no process behind
    for function in list(_live):
        function.stop()
