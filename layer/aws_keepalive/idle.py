"""When a pooled connection must not be reused: the one rule shared by every client family.

botocore's urllib3 pool (patch.py) and, as client families are added, their own pools call the
same two functions, so "stale" means the same thing everywhere:

* ``stamp()`` when a connection goes back to its pool;
* ``replace_reason(stamp, sock, max_idle_s, host)`` when it is taken out again: a reason to
  close it and open a new one, or None to reuse it;
* ``reused_ok(host, idle_s)`` / ``reused_stale(host, idle_s)`` when a request on a reused
  connection got its response, or failed before any response byte (a stale reuse).

A connection is replaced when it sat idle for more than ``max_idle_s`` -- unless keep-alive
probes proved the flow alive recently (see ``keepalive_answered_s``) -- or when it went back to
the pool before a restore of the execution environment from a snapshot (``restore_generation``,
bumped by whatever notices a restore): its flow does not exist on the restored environment's
network path, whatever the clocks say.

The learned idle limit.  Max idle (300 s) is set against the 350 s AWS documents for NAT
gateways, NLBs and VPC endpoints; a firewall, proxy or Lambda's own purge may forget a flow
sooner, and then the layer would meet the same reset (or hang) after every long gap.  So after a
stale reuse at idle X on a host, that host's pooled connections are replaced once idle for more
than ``LEARN_FRACTION`` x X ("learned idle"): the path's real timeout T lies below X, and
connections reused at X again (gaps as long as the failing one, give or take scheduling jitter)
would meet it again.  If T is lower still, the next failure lowers the limit again, so the limit
converges on T from above, one failure at a time.  Two bounds:

* never below the longest idle reused successfully on that host since its last stale reuse
  (that flow survived, so the path's timeout is above it);
* never above max idle (which already replaces anything idle longer), and with max idle off
  (``AWS_PYTHON_KEEPALIVE_MAX_IDLE=0``, "never replace idle connections") nothing is learned.

Learning must never leave a path worse off than stock, so a lesson needs proof and does not last:

* Proof of a dead flow.  A reset, a broken pipe or a close before the status line come from the
  far end (or a NAT speaking for it).  A read timeout does not by itself: a slow server that
  received the request and takes longer than ``read_timeout`` to answer looks the same to the
  client.  The kernel can tell them apart: ``request_unacknowledged(sock)``, read from TCP_INFO
  right after the failure and before the socket is closed, says whether the peer's TCP ever
  acknowledged what was sent (``tcpi_unacked``: segments sent and not acknowledged;
  ``tcpi_retransmits``: retransmissions of the oldest one).  A middlebox that forgot the flow
  drops the request, so it stays unacknowledged and is retransmitted; a slow server's kernel
  acknowledges it within a round trip.  Only the first is a stale reuse; a read timeout with
  the request acknowledged, or with no TCP_INFO to tell (not Linux), teaches nothing.
* Evidence the path holds longer.  A reuse that succeeds after an idle at least as long as the
  failing one (possible when keep-alive probes kept the flow alive, or once the lesson expired)
  shows the failure no longer describes the path: the host's failure is forgotten.
* A budget.  One failure cannot tell an idle timeout from a one-off (a server restarting, a
  load balancer draining, a reset under load): a lesson taken from a one-off would cost a new
  connection per gap longer than the learned limit -- per call, for a function calling every
  half second after a reset at 0.3 s -- where stock pays nothing more.  So a lesson replaces at
  most ``PROBE_AFTER`` connections (4) on its own authority; the next connection past the learned
  limit is reused, a probe, and the lesson lapses.  A probe that succeeds at an idle past the
  lapsed limit shows the path holds: nothing more is replaced (a wrong lesson cost at most 4
  handshakes).  A probe that meets a dead flow is a stale reuse like any other: it teaches the
  limit again, with twice the budget (up to ``MAX_PROBE_AFTER``), so on a path that really
  forgets flows the layer meets the failure on 1 gap of 5, then of 9, 17, ... -- stock on every
  one.  (The lab's learning table, tests/lab/test_e2e_learn.py, has three long gaps after the
  lesson: all replaced.)
* Expiry.  A lesson lasts ``LEARNED_LIFETIME_S`` (one hour) after the stale reuse that taught
  it; then the host is back on max idle, and if the path still forgets flows, the next long gap
  meets it once more and relearns.  Why an hour: a wrong or outdated lesson costs one extra
  handshake per gap longer than the learned limit, for at most an hour; relearning costs one
  stale reuse (a retry, or a wait for read_timeout behind a silent middlebox) per host per hour.
  The learned limit is below max idle (300 s), so at least 12 such gaps fit in an hour: stock
  meets the dead flow on every one of them, the layer on at most one.
* Bounded.  The table holds at most ``MAX_HOSTS`` hosts (1 024, about 0.2 MB); beyond that the
  host entered longest ago is dropped (insertion order, so a read never needs the lock), which
  costs that host at most one stale reuse to relearn.  A function that talks to more than a
  thousand endpoint hosts (S3 virtual-hosted bucket names) keeps a working set, not every name.

Idle times come from ``idle_seconds`` (the larger of the monotonic and the wall clock, see
there): a clock that missed a freeze can only understate a failure's idle time, which lowers the
limit (one more handshake), never raises it past a failure.  The per-host table is shared by
every client and thread of the process: writes hold a lock, reads take one attribute of a host's
entry, which is atomic; it holds one entry per endpoint host the function talks to, up to
``MAX_HOSTS``.
"""

import socket
import threading
import time

# Bumped once per restore of the execution environment from a snapshot.  A stamp taken before
# the bump belongs to a connection whose flow the network has never seen from this environment.
restore_generation = 0
# True once something (snapstart.py) will bump restore_generation: the pool must then be watched
# even when max idle is off.
restore_watched = False

# Reasons, as the debug lines print them.
MAX_IDLE = "max idle"
LEARNED_IDLE = "learned idle"
RESTORED = "restored"

# Set by patch.apply from AWS_PYTHON_KEEPALIVE_LEARN (on by default; acts only after a failure).
learn = True
# The learned limit is this fraction of the shortest idle time that met a stale flow.
LEARN_FRACTION = 0.8
# A lesson's lifetime after the stale reuse that taught it (see the module docstring).
LEARNED_LIFETIME_S = 3600.0
# Connections a lesson replaces before the next one past its limit is reused as a probe (see the
# module docstring: "A budget"); doubled by each probe that meets a dead flow, up to the maximum.
PROBE_AFTER = 4
MAX_PROBE_AFTER = 256
# Hosts the table holds at most; the one entered longest ago goes first.
MAX_HOSTS = 1024


class _Host:
    """What the table knows about one endpoint host (see the module docstring)."""

    __slots__ = ("longest_ok_s", "shortest_stale_s", "stale_at", "replaced", "replace_budget",
                 "lapsed_limit_s")

    def __init__(self):
        # The longest idle a reused connection survived on this host (s); a stale reuse at that
        # idle or less resets it.
        self.longest_ok_s = 0.0
        # The shortest idle that met a stale flow (s), or None: no lesson.
        self.shortest_stale_s = None
        # time.monotonic() of the last stale reuse, or None; the lesson expires
        # LEARNED_LIFETIME_S after it.
        self.stale_at = None
        # Connections the lesson replaced so far, and how many it may replace ("A budget":
        # PROBE_AFTER, doubled by each probe that met a dead flow, up to MAX_PROBE_AFTER).
        self.replaced = 0
        self.replace_budget = PROBE_AFTER
        # The limit of a lesson that lapsed into a probe (s), or None.
        self.lapsed_limit_s = None


# host -> _Host
_hosts = {}
_hosts_lock = threading.RLock()


def stamp():
    """What to remember about a connection when it goes back to the pool."""
    return (time.monotonic(), time.time(), restore_generation)


def idle_seconds(since):
    """Seconds since ``stamp()`` returned ``since`` (0 if None).

    Measured on both clocks and the larger taken: CLOCK_MONOTONIC is immune to wall-clock steps,
    but whether it advances while Lambda freezes the execution environment is not documented;
    the wall clock is corrected when the environment thaws.  Overstating the idle time costs one
    handshake; understating it could cost a reset or a hang.
    """
    if since is None:
        return 0.0
    monotonic_then, wall_then = since[0], since[1]
    return max(time.monotonic() - monotonic_then, time.time() - wall_then)


def replace_reason(since, sock, max_idle_s, host=None):
    """(reason, idle_s, answered_s): reason is None to reuse the connection, else why to replace it.

    ``answered_s`` is set when the connection was idle past its limit (max idle, or the learned
    limit of ``host``) but is reused because keep-alive probes were answered that many seconds ago
    (callers say so in a debug line and count it).
    """
    if since is None:
        return None, 0.0, None
    if since[2] != restore_generation:
        return RESTORED, idle_seconds(since), None
    if not max_idle_s:
        return None, 0.0, None
    idle_s = idle_seconds(since)
    limit_s, reason = max_idle_s, MAX_IDLE
    if learn and host is not None:
        learned_s = learned_limit_s(host)
        if learned_s is not None and learned_s < max_idle_s:
            limit_s, reason = learned_s, LEARNED_IDLE
    if idle_s <= limit_s:
        return None, idle_s, None
    answered_s = keepalive_answered_s(sock, idle_s)
    if answered_s is not None and answered_s < limit_s:
        return None, idle_s, answered_s
    if reason == LEARNED_IDLE and idle_s <= max_idle_s and _lesson_spent(host):
        return None, idle_s, None  # a probe: the lesson has lapsed
    return reason, idle_s, None


def _lesson_spent(host):
    """Count one replacement by ``host``'s lesson; True (and the lesson lapses) when its budget
    is spent: the connection is then reused as a probe.  Only runs when a connection is about to
    be replaced (a handshake follows), so the lock costs nothing that matters."""
    with _hosts_lock:
        state = _hosts.get(host)
        if state is None or state.shortest_stale_s is None:
            return False
        state.replaced += 1
        if state.replaced <= state.replace_budget:
            return False
        state.lapsed_limit_s = max(state.longest_ok_s, state.shortest_stale_s * LEARN_FRACTION)
        state.shortest_stale_s = state.stale_at = None
        state.replaced = 0
        return True


def learned_limit_s(host):
    """The learned idle limit of ``host`` in seconds, or None before any stale reuse there (or
    once the last one is more than ``LEARNED_LIFETIME_S`` ago)."""
    state = _hosts.get(host)
    if state is None:
        return None
    # One read each: a writer may change them.
    stale_s, stale_at = state.shortest_stale_s, state.stale_at
    if stale_s is None or stale_at is None:
        return None
    if time.monotonic() - stale_at > LEARNED_LIFETIME_S:
        return None
    return max(state.longest_ok_s, stale_s * LEARN_FRACTION)


def _entry(host):
    """The table's entry for ``host``, made if missing (the caller holds the lock)."""
    state = _hosts.get(host)
    if state is None:
        while len(_hosts) >= MAX_HOSTS:
            del _hosts[next(iter(_hosts))]  # the host entered longest ago
        state = _hosts[host] = _Host()
    return state


def reused_ok(host, idle_s):
    """A request on a connection reused after ``idle_s`` got its response: the flow was alive."""
    state = _hosts.get(host)
    if state is not None and idle_s <= state.longest_ok_s:
        return  # the common case, without the lock
    with _hosts_lock:
        state = _entry(host)
        if idle_s > state.longest_ok_s:
            state.longest_ok_s = idle_s
        if state.shortest_stale_s is not None and idle_s >= state.shortest_stale_s:
            # The path held a flow as long as the one that failed: that failure is history.
            state.shortest_stale_s = state.stale_at = None
            state.replace_budget = PROBE_AFTER
        if state.lapsed_limit_s is not None and idle_s > state.lapsed_limit_s:
            # A probe past a lapsed lesson's limit got its answer: the lesson was wrong.
            state.replace_budget, state.lapsed_limit_s = PROBE_AFTER, None


def reused_stale(host, idle_s):
    """A request on a connection reused after ``idle_s`` met a dead flow; returns the host's
    learned limit from now on (None when learning is off)."""
    with _hosts_lock:
        state = _entry(host)
        expired = state.stale_at is None or time.monotonic() - state.stale_at > LEARNED_LIFETIME_S
        if state.lapsed_limit_s is not None:
            # The path failed again after a lesson lapsed unrefuted: it was right, trust it longer.
            state.replace_budget = min(2 * state.replace_budget, MAX_PROBE_AFTER)
            state.lapsed_limit_s = None
        state.replaced = 0
        if expired or state.shortest_stale_s is None or idle_s < state.shortest_stale_s:
            state.shortest_stale_s = idle_s
        if state.longest_ok_s >= idle_s:
            # A flow that died at idle_s outdates an older success at that idle or longer (the
            # path's timeout went down): nothing known to work since.
            state.longest_ok_s = 0.0
        state.stale_at = time.monotonic()
    return learned_limit_s(host) if learn else None


# struct tcp_info (include/uapi/linux/tcp.h): eight one-byte fields, then u32 fields; the four
# "times" (milliseconds ago) start at byte 44: last_data_sent, last_ack_sent (unused by Linux),
# last_data_recv, last_ack_recv.  Stable since Linux 2.6.
_TCP_INFO_TIMES_OFFSET = 44
_TCP_INFO_LENGTH = 60


# struct tcp_info: tcpi_retransmits is the third byte, tcpi_unacked the u32 at byte 24,
# tcpi_notsent_bytes the u32 at byte 144 (Linux 4.6+; an older kernel returns less).
_TCP_INFO_RETRANSMITS_OFFSET = 2
_TCP_INFO_UNACKED_OFFSET = 24
_TCP_INFO_NOTSENT_OFFSET = 144
_TCP_INFO_NOTSENT_LENGTH = 148


def request_unacknowledged(sock, elapsed_s=None):
    """After a read timeout on ``sock`` (still open): True when the peer's TCP never acknowledged
    all that was sent: segments in flight unacknowledged (``tcpi_unacked``), the oldest being
    retransmitted (``tcpi_retransmits``), or bytes still waiting in the send queue
    (``tcpi_notsent_bytes``: a drop on the way out of this host, e.g. a netfilter rule, fails the
    transmission, so the request never counts as sent): a dead flow.  False when everything sent
    was acknowledged (the peer is alive, only slow), None when the kernel cannot say (not Linux,
    not TCP, socket closed).

    ``elapsed_s``: seconds since the request started on this connection.  A peer whose kernel
    acknowledged anything within them is alive, whatever is still queued: a server that stopped
    reading a large body (its window closed, the rest of the request waits in the send queue and
    the send times out) answers each zero-window probe.  A flow a middlebox forgot acknowledges
    nothing after the request left, so ``tcpi_last_ack_recv`` is older than the request."""
    import struct

    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_NOTSENT_LENGTH)
        retransmits = info[_TCP_INFO_RETRANSMITS_OFFSET]
        (unacked,) = struct.unpack_from("=I", info, _TCP_INFO_UNACKED_OFFSET)
        (last_ack_recv_ms,) = struct.unpack_from("=I", info, _TCP_INFO_TIMES_OFFSET + 12)
        notsent = 0
        if len(info) >= _TCP_INFO_NOTSENT_LENGTH:
            (notsent,) = struct.unpack_from("=I", info, _TCP_INFO_NOTSENT_OFFSET)
    except (AttributeError, OSError, IndexError, TypeError, struct.error):
        return None
    if elapsed_s is not None and last_ack_recv_ms / 1000.0 < elapsed_s:
        return False  # acknowledged something during the request: alive
    return unacked > 0 or retransmits > 0 or notsent > 0


def keepalive_answered_s(sock, idle_s):
    """Seconds since the peer last ACKed anything, if the kernel's clock can be trusted; else None.

    A connection idle for longer than max_idle_s is still fine to reuse when keep-alive probes
    crossed the middlebox recently: each probe's answer refreshes the flow at the NAT, and Linux
    notes its arrival (tcpi_last_ack_recv).  But that clock (jiffies) is the guest kernel's: if the
    whole execution environment was frozen, the kernel may not have counted the frozen time, and a
    small "last ACK" would then be a lie.  The kernel also says how long ago the last *data*
    arrived (tcpi_last_data_recv); that was the end of the last response, just before the
    connection went idle, so when the kernel's figure falls short of the idle time measured here,
    its clock missed part of the gap and nothing it says is used.
    """
    import struct

    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_LENGTH)
        _, _, last_data_recv_ms, last_ack_recv_ms = struct.unpack_from(
            "=4I", info, _TCP_INFO_TIMES_OFFSET
        )
    except (AttributeError, OSError, struct.error):
        return None  # not Linux, not TCP, or a closed socket: no evidence, replace
    if last_data_recv_ms / 1000.0 + 2.0 < idle_s:
        return None
    return last_ack_recv_ms / 1000.0
