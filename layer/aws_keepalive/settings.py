"""Environment -> settings: every variable the layer reads, parsed and validated once.

This module runs at interpreter startup (from the ``.pth`` line), before the function's handler is
imported, so it imports nothing at module level; the diagnostics module is only imported when there
is something to say.  A bad value never stops the function:
it gets one warning line naming the variable and the accepted values, and the default is used
instead.
"""

SWITCH = "AWS_PYTHON_KEEPALIVE"
ON_VALUES = ("1", "true", "yes", "on")
# The package's __init__, aws_keepalive.pth and _aws_keepalive_site.py tell "off" with inline
# copies of these, so that the off path imports no submodule; tests/hook/test_pth.py pins them.
OFF_VALUES = ("", "0", "false", "no", "off")

# Why these defaults (see README "Choosing the timers"):
#
# * The middleboxes between a Lambda function and an AWS endpoint (NAT gateway, NLB, Gateway and
#   Interface VPC endpoints, Network Firewall, Transit Gateway) forget a TCP flow after 350 s
#   without a packet.  Linux sends the first keep-alive probe after TCP_KEEPIDLE seconds of
#   silence and, while probes are answered, the next one about max(TCP_KEEPIDLE, TCP_KEEPINTVL)
#   after the last answer (FACTS.md, measured).  So both timers must stay below 350 s; 60 s
#   leaves room for five probes per window, and one lost probe is not fatal.
# * TCP_KEEPINTVL and TCP_KEEPCNT only matter once a probe goes unanswered: 10 s x 3 means a peer
#   that vanished is detected 60 + 30 = 90 s into the silence, and the dead connection is
#   dropped from the pool by urllib3 instead of eating the next request.
# * MAX_IDLE covers what probes cannot: while Lambda freezes the execution environment between
#   invocations, it is unknown whether the kernel still sends probes.  If it does not, a flow idle
#   for 350 s is gone.  Replacing a pooled connection that has been idle for more than 300 s
#   costs one handshake, and only after a gap that long; reusing it could cost a reset and a
#   retry, or a hang until read_timeout (60 s).  300 s leaves a 50 s margin under 350 s.
KEEPIDLE_S = 60
KEEPINTVL_S = 10
KEEPCNT = 3
MAX_IDLE_S = 300
# TLS session resumption for new connections (resume.py).  TLS_RESUME is what a Settings built
# directly means (the tests' and benchmarks' "resumption on"); a function gets it only by asking:
# AWS_PYTHON_KEEPALIVE_TLS_RESUME=1.  Why opt-in (issue 34's rule: an optimization stays on by
# default only while the stock twin shows no difference from stock): resumption's differences
# cannot be removed.  A pre-shared key goes on the wire where stock sends none (one ticket per host,
# so a passive observer can link the connections: RFC 8446 appendix C.4); behind a middlebox that
# drops PSK ClientHellos one connection per host and pool waits out its connect timeout before the
# layer stops offering (tests/twin/test_middleboxes.py, docs/trust.md); and on the CPython releases
# of session_getter_leaks every session read stays in memory for the process's life.  What it
# saves is at most a fifth of a replacement handshake's client CPU, less with the session read it
# needs (make bench-tls-resume: about nothing at 128 MB's share).
TLS_RESUME = True
TLS_RESUME_BY_DEFAULT = False


def session_getter_leaks(version_info, implementation):
    """Whether ``ssl.SSLSocket.session`` leaks the SSL_SESSION it returns on this interpreter
    (CPython gh-116810: each read keeps OpenSSL's session, with the server's certificate, for the
    process's life).  resume.py reads it once per new TLS connection, so on these interpreters a
    long-lived process that opens connections to many hosts grows without bound: measured on
    CPython 3.12.1 / OpenSSL 3.0.19, +30 KB RSS per connection (a 2 000-name certificate), 12 MB
    per 400 reads, linear; none on 3.14.3 / OpenSSL 3.5.5 (+32 KB per 400).  The fix reached
    3.12.8 and 3.13.1 (its backports); 3.11 and older 3.x releases keep it.  Before 3.10 the
    getter duplicated the session instead and did not leak (the issue's report: not on 3.8)."""
    if implementation != "cpython":
        return False
    version = tuple(version_info[:3])
    return (3, 10) <= version < (3, 12, 8) or (3, 13) <= version < (3, 13, 1)


def tls_resume_by_default():
    """Resumption when the function does not say: off (TLS_RESUME_BY_DEFAULT), and never by default
    where reading a session leaks it.  A function's own AWS_PYTHON_KEEPALIVE_TLS_RESUME=1 wins."""
    import sys  # always loaded: no import cost

    return TLS_RESUME_BY_DEFAULT and not session_getter_leaks(sys.version_info, sys.implementation.name)
# The cyclic GC during init (gcinit.py): a raised young threshold until the first client, then the
# init's objects frozen.  Off by default until make soak-memory and the stock twin show no
# difference (docs/coldstart.md, "The cyclic GC during init").
GC_INIT = False

# Kernel limits (include/net/tcp.h: MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL, MAX_TCP_KEEPCNT).
MAX_TCP_KEEPIDLE = 32767
MAX_TCP_KEEPINTVL = 32767
MAX_TCP_KEEPCNT = 127
# A Lambda execution environment allows 1024 open file descriptors.
MAX_POOL_SIZE = 1000
MAX_MAX_IDLE_S = 86400
# The CloudWatch namespace of the layer's metrics (metrics.py).  CloudWatch accepts 1 - 255
# characters from this set, and reserves names starting with "AWS/" for AWS services
# (PutMetricData, Namespace).
METRICS_NAMESPACE = "aws-python-keepalive"
NAMESPACE_CHARACTERS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_/#: "
)


class Settings:
    """The layer's effective configuration, read from the environment once at startup."""

    __slots__ = (
        "keepidle_s",
        "keepintvl_s",
        "keepcnt",
        "pool_size",
        "max_idle_s",
        "debug",
        "trust_once",
        "learn",
        "metrics",
        "metrics_namespace",
        "prepared",
        "tls_resume",
        "gc_init",
    )

    def __init__(
        self,
        keepidle_s=KEEPIDLE_S,
        keepintvl_s=KEEPINTVL_S,
        keepcnt=KEEPCNT,
        pool_size=None,
        max_idle_s=MAX_IDLE_S,
        debug=False,
        trust_once=True,
        learn=True,
        metrics=False,
        metrics_namespace=METRICS_NAMESPACE,
        prepared=True,
        tls_resume=TLS_RESUME,
        gc_init=GC_INIT,
    ):
        self.keepidle_s = keepidle_s
        self.keepintvl_s = keepintvl_s
        self.keepcnt = keepcnt
        # None: botocore's own default (10) for clients that do not set max_pool_connections.
        self.pool_size = pool_size
        # 0: never replace idle connections (stock botocore behaviour).
        self.max_idle_s = max_idle_s
        self.debug = debug
        # Load each client's CA bundle into its SSLContext once, not per connection (trust.py).
        self.trust_once = trust_once
        # After a stale reuse on a host, replace that host's pooled connections before they sit
        # idle that long again (idle.py, "learned idle").  Acts only after a failure.
        self.learn = learn
        # CloudWatch Embedded Metric Format records on stdout (metrics.py); off by default.
        self.metrics = metrics
        self.metrics_namespace = metrics_namespace
        # Client creation answers its listings and top-level data files from what the layer build
        # prepared (prepared.py); only for a botocore release the build prepared, as built.
        self.prepared = prepared
        # A new TLS connection resumes the session of an earlier verified one of the same client,
        # host and verify settings (resume.py): the replacement handshake after a freeze skips
        # the certificate chain.  Opt-in for a function (TLS_RESUME_BY_DEFAULT above says why).
        self.tls_resume = tls_resume
        # Fewer cyclic GC runs during init, then the init's objects frozen (gcinit.py).
        self.gc_init = gc_init

    def describe(self):
        """One line for the debug log: the effective settings, by name."""
        pool = "botocore default" if self.pool_size is None else self.pool_size
        max_idle = "off" if self.max_idle_s == 0 else self.max_idle_s
        text = "keepidle_s=%s keepintvl_s=%s keepcnt=%s pool_size=%s max_idle_s=%s learn=%s" % (
            self.keepidle_s,
            self.keepintvl_s,
            self.keepcnt,
            pool,
            max_idle,
            "on" if self.learn else "off",
        )
        if self.metrics:
            text += " metrics=%s" % self.metrics_namespace
        if not self.prepared:
            text += " prepared=off"
        if not self.tls_resume:
            text += " tls_resume=off"
        if self.gc_init != GC_INIT:
            text += " gc_init=%s" % ("on" if self.gc_init else "off")
        return text


def switch(environ):
    """True when AWS_PYTHON_KEEPALIVE switches the layer on; False (with a warning) otherwise."""
    value = environ.get(SWITCH, "").strip().lower()
    if value in ON_VALUES:
        return True
    if value not in OFF_VALUES:
        _warn(
            "%s=%r is not one of %s (on) or %s, empty or unset (off); the layer stays off"
            % (SWITCH, environ[SWITCH], "/".join(ON_VALUES), "/".join(OFF_VALUES[1:]))
        )
    return False


def from_environ(environ):
    """Settings from the environment, or None when the switch is off (or not understood)."""
    if not switch(environ):
        return None
    return Settings(
        keepidle_s=_integer(environ, "AWS_PYTHON_KEEPALIVE_IDLE", KEEPIDLE_S, 1, MAX_TCP_KEEPIDLE),
        keepintvl_s=_integer(
            environ, "AWS_PYTHON_KEEPALIVE_INTERVAL", KEEPINTVL_S, 1, MAX_TCP_KEEPINTVL
        ),
        keepcnt=_integer(environ, "AWS_PYTHON_KEEPALIVE_COUNT", KEEPCNT, 1, MAX_TCP_KEEPCNT),
        pool_size=_integer(environ, "AWS_PYTHON_KEEPALIVE_POOL_SIZE", None, 1, MAX_POOL_SIZE),
        max_idle_s=_integer(environ, "AWS_PYTHON_KEEPALIVE_MAX_IDLE", MAX_IDLE_S, 0, MAX_MAX_IDLE_S),
        debug=_flag(environ, "AWS_PYTHON_KEEPALIVE_DEBUG"),
        trust_once=_flag(environ, "AWS_PYTHON_KEEPALIVE_TRUST_ONCE", default=True),
        learn=_flag(environ, "AWS_PYTHON_KEEPALIVE_LEARN", default=True),
        metrics=_flag(environ, "AWS_PYTHON_KEEPALIVE_METRICS"),
        metrics_namespace=_namespace(environ, "AWS_PYTHON_KEEPALIVE_METRICS_NAMESPACE"),
        prepared=_flag(environ, "AWS_PYTHON_KEEPALIVE_PREPARED", default=True),
        tls_resume=_flag(environ, "AWS_PYTHON_KEEPALIVE_TLS_RESUME", default=tls_resume_by_default()),
        gc_init=_flag(environ, "AWS_PYTHON_KEEPALIVE_GC_INIT", default=GC_INIT),
    )


def _integer(environ, name, default, minimum, maximum):
    """An integer in [minimum, maximum] from ``name``; the default (with a warning) otherwise."""
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw, 10)
    except ValueError:
        value = None
    if value is None or not minimum <= value <= maximum:
        _warn(
            "%s=%r is not an integer from %d to %d; using %s"
            % (name, environ[name], minimum, maximum, "botocore's default" if default is None else default)
        )
        return default
    return value


def _flag(environ, name, default=False):
    """A boolean from ``name`` with the switch's vocabulary; ``default`` (with a warning) otherwise."""
    value = environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in ON_VALUES:
        return True
    if value not in OFF_VALUES:
        _warn(
            "%s=%r is not one of %s or %s; using %s"
            % (name, environ[name], "/".join(ON_VALUES), "/".join(OFF_VALUES[1:]),
               "on" if default else "off")
        )
        return default
    return False


def _namespace(environ, name):
    """A CloudWatch namespace from ``name``; the layer's own (with a warning) if CloudWatch would refuse it."""
    raw = environ.get(name, "")
    value = raw.strip()
    if not value:
        return METRICS_NAMESPACE
    if len(value) > 255 or not set(value) <= NAMESPACE_CHARACTERS or value.startswith("AWS/"):
        _warn(
            "%s=%r is not a CloudWatch namespace (1 - 255 of A-Z a-z 0-9 . - _ / # : and space, "
            "not starting with AWS/); using %s" % (name, raw, METRICS_NAMESPACE)
        )
        return METRICS_NAMESPACE
    return value


def _warn(message):
    from aws_keepalive import diagnostics

    diagnostics.warn(message)
