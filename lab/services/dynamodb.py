"""DynamoDB Local (AWS's own emulator, from Maven Central) behind a TLS front.

    with DynamoDBLocal() as ddb:
        boto3.client("dynamodb", endpoint_url=ddb.https_url, **ddb.client_kwargs())
        subprocess.run(..., env={**os.environ, **ddb.client_env()})

Fetching: ``mvn dependency:copy-dependencies`` on ``lab/services/dynamodb-local.pom.xml`` copies the jar and
its 85 dependencies (incl. sqlite4java's native libraries) into a cache folder outside git
(``<repo>/.cache/dynamodb-local/lib``, or ``$AWS_KEEPALIVE_LAB_CACHE/dynamodb-local/lib``). The copy
goes to a temporary folder that is renamed at the end, so an interrupted fetch is never mistaken
for a complete one. ``python -m lab.services.dynamodb fetch`` (``make lab-deps``) does just that.

Starting: ``java -cp 'lib/*' ...ServerRunner -inMemory -port P -disableTelemetry`` on a free port.
DynamoDB Local listens on all interfaces; nothing else reaches this machine, and the lab's NAT
namespace reaches it through the emulator anyway. Readiness is polled with a bounded loop: a TCP
connect succeeds only once Jetty listens, so we then make one real HTTP request (ListTables) to
be sure the service answers. The JVM is stopped by pid (SIGTERM, then SIGKILL after a bound).

The TLS front (``lab.net.tls_front``) listens on ``tls_host`` (loopback by default) and forwards to
DynamoDB Local; ``https_url`` points at it and ``ca_bundle_path`` is the CA to trust.

Measured here: DynamoDB Local 2.6.1 (Jetty 12.0.14) closes a keep-alive connection after 30 s
without a request (a FIN). Gaps longer than that end pooled connections whatever the network does;
``reopen_upstream=True`` hides it (the client's TLS connection survives, see ``lab.net.tls_front``).
"""

from __future__ import annotations

import atexit
import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from lab import REPO
from lab.net import process

POM = Path(__file__).resolve().parent / "dynamodb-local.pom.xml"
MAIN_CLASS = "com.amazonaws.services.dynamodbv2.local.main.ServerRunner"

# The first fetch takes ~40 s here (85 jars); give slow mirrors room, but never hang forever.
FETCH_TIMEOUT = 900.0
# DynamoDB Local is ready in ~1.5 s on this machine; a loaded CI runner may need much more.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0


# Started and not yet stopped: stopped at interpreter exit too (Ctrl-C, an exception in a thread).
_live: "set[DynamoDBLocal]" = set()


@atexit.register
def _stop_live() -> None:
    for ddb in list(_live):
        ddb.stop()


def cache_dir() -> Path:
    base = os.environ.get("AWS_KEEPALIVE_LAB_CACHE")
    return (Path(base) if base else REPO / ".cache") / "dynamodb-local"


def ensure_jars(cache: Path | None = None, *, timeout: float = FETCH_TIMEOUT, quiet: bool = True) -> Path:
    """Return the folder holding DynamoDB Local's jars, fetching them with mvn if missing."""
    cache = cache or cache_dir()
    lib = cache / "lib"
    if lib.is_dir() and any(lib.glob("DynamoDBLocal-*.jar")):
        return lib
    if shutil.which("mvn") is None:
        raise RuntimeError("mvn not found: DynamoDB Local is fetched from Maven Central with Maven")
    tmp = cache / "lib.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    # The local repository named as tools/interpreters/install_python.py names it ($MAVEN_REPOSITORY, else
    # $HOME/.m2/repository; see its maven_repository): mvn's default follows Java's user.home, the
    # passwd entry's home, which may be another folder than $HOME or not writable at all.
    repository = os.environ.get("MAVEN_REPOSITORY") or str(Path.home() / ".m2" / "repository")
    cmd = ["mvn", "-B", f"-Dmaven.repo.local={repository}", "-f", str(POM), "dependency:copy-dependencies",
           f"-DoutputDirectory={tmp}"]
    if quiet:
        cmd.insert(1, "-q")
    proc = subprocess.run(cmd, capture_output=quiet, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"mvn failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    if not any(tmp.glob("DynamoDBLocal-*.jar")):
        raise RuntimeError(f"mvn finished but {tmp} holds no DynamoDBLocal jar")
    shutil.rmtree(lib, ignore_errors=True)
    tmp.rename(lib)
    return lib


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (the JVM binds it itself, so a race is possible but rare)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class DynamoDBLocal:
    """DynamoDB Local in a JVM plus a TLS front; a context manager that stops both."""

    def __init__(
        self,
        *,
        tls: bool = True,
        tls_host: str = "127.0.0.1",
        hostnames: tuple[str, ...] | list[str] = ("localhost", "127.0.0.1"),
        port: int | None = None,
        cache: Path | None = None,
        java: str = "java",
        start_timeout: float = START_TIMEOUT,
        reopen_upstream: bool = False,
        db_path: Path | None = None,
    ) -> None:
        self.tls_enabled = tls
        # None: the database lives in the JVM's memory and dies with it.  A folder: it survives a
        # restart of the JVM (stop() then start() on the same port), as the fault soak needs.
        self.db_path = db_path
        # DynamoDB Local (Jetty) closes keep-alive connections idle for 30 s; with True the TLS
        # front hides that (see lab.net.tls_front), so only the lab's network ends idle connections.
        self.reopen_upstream = reopen_upstream
        self.tls_host = tls_host
        self.hostnames = list(hostnames)
        self.port = port
        self.cache = cache
        self.java = java
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self.tls = None
        self._log = None

    # --- addresses -----------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def http_url(self) -> str:
        """Plain HTTP straight to DynamoDB Local (no TLS)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def https_url(self) -> str:
        """HTTPS through the TLS front."""
        assert self.tls is not None, "started with tls=False"
        return self.tls.url()

    @property
    def tls_address(self) -> tuple[str, int]:
        """Where the TLS front listens: the upstream for ``lab.net.netem.Netem``."""
        assert self.tls is not None, "started with tls=False"
        return self.tls.address

    @property
    def ca_bundle_path(self) -> str:
        assert self.tls is not None, "started with tls=False"
        return self.tls.ca_bundle_path

    def add_hostnames(self, *names: str) -> None:
        """Let clients also reach the TLS front under these names/IPs (e.g. the NAT host address)."""
        assert self.tls is not None, "started with tls=False"
        self.tls.add_hostnames(*names)

    def client_env(self) -> dict[str, str]:
        """Environment for a botocore client in another process (dummy credentials, CA bundle)."""
        env = {
            "AWS_ACCESS_KEY_ID": "lab",
            "AWS_SECRET_ACCESS_KEY": "lab",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
        }
        if self.tls is not None:
            env["AWS_CA_BUNDLE"] = self.ca_bundle_path
        return env

    def client_kwargs(self) -> dict:
        """Keyword arguments for ``boto3.client("dynamodb", ...)`` in this process."""
        kw = {
            "region_name": "us-east-1",
            "aws_access_key_id": "lab",
            "aws_secret_access_key": "lab",
            "endpoint_url": self.https_url if self.tls is not None else self.http_url,
        }
        if self.tls is not None:
            kw["verify"] = self.ca_bundle_path
        return kw

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> "DynamoDBLocal":
        lib = ensure_jars(self.cache)
        if self.port is None:
            self.port = free_port()
        storage = ["-dbPath", str(self.db_path)] if self.db_path is not None else ["-inMemory"]
        cmd = [
            self.java, "-cp", f"{lib}/*", MAIN_CLASS,
            *storage, "-port", str(self.port), "-disableTelemetry",
        ]
        # The JVM's chatter goes to a file, not to the test output (quiet on success); it is
        # shown when startup fails.
        import tempfile

        self._log = tempfile.TemporaryFile(prefix="dynamodb-local-", suffix=".log")
        self.proc = subprocess.Popen(
            cmd, cwd=str(lib.parent), stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT
        )
        _live.add(self)
        try:
            self._wait_ready()
            if self.tls_enabled:
                from lab.net.tls_front import TLSFront

                self.tls = TLSFront(("127.0.0.1", self.port), listen_host=self.tls_host,
                                    hostnames=self.hostnames, reopen_upstream=self.reopen_upstream).start()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"DynamoDB Local exited with {self.proc.returncode}:\n{self._log_text()}")
            if _answers(self.port):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"DynamoDB Local not ready on port {self.port} after {self.start_timeout} s:\n"
                    f"{self._log_text()}"
                )
            time.sleep(0.1)

    def _log_text(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.tls is not None:
            self.tls.stop()
            self.tls = None
        if self.proc is not None:
            process.stop(self.proc, STOP_TIMEOUT)
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        _live.discard(self)

    def __enter__(self) -> "DynamoDBLocal":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _answers(port: int) -> bool:
    """True when DynamoDB Local answers a ListTables request (any HTTP status counts)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request(
            "POST", "/", body="{}",
            headers={
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": "DynamoDB_20120810.ListTables",
                "Authorization": "AWS4-HMAC-SHA256 Credential=lab/20240101/us-east-1/dynamodb/aws4_request, "
                                 "SignedHeaders=host, Signature=0",
            },
        )
        conn.getresponse().read()
        return True
    except OSError:
        return False
    finally:
        conn.close()


def main(argv: list[str]) -> int:
    if argv[1:2] == ["fetch"]:
        print(ensure_jars(quiet=True))
        return 0
    if argv[1:2] == ["serve"]:
        # Manual use: run until Ctrl-C, print where to connect.
        with DynamoDBLocal() as ddb:
            print(f"DynamoDB Local {ddb.http_url} (pid {ddb.pid}); TLS {ddb.https_url}; "
                  f"AWS_CA_BUNDLE={ddb.ca_bundle_path}", flush=True)
            try:
                while ddb.proc.poll() is None:
                    time.sleep(1)
            except KeyboardInterrupt:
                pass
        return 0
    print("usage: python -m lab.services.dynamodb fetch|serve", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
