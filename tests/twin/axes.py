"""Which twin axis proves each switch of the layer (tests/twin/test_switches.py pins that every
variable settings.py reads is here).

``AXES``: a switch that changes what the layer does on a path stock also takes (an optimization,
today's or a future one) -> the twin modules (tests/twin/test_<axis>.py) whose cases run through
it.  Adding an optimization means adding its switch here with the axis that exercises it (a new
module with its ``CASES``, or new cases in one that fits): until then test_switches fails.

``NOT_AXES``: the variables that are no optimization of a stock path, each with why no twin axis
is owed.  Moving a variable here needs that reason to be true: a switch that can make a call's
outcome, what goes on the wire or memory differ from stock belongs in ``AXES``.
"""

AXES = {
    # The layer itself: every case runs with it off and on.
    "AWS_PYTHON_KEEPALIVE": ("sslcontext", "verify", "loader"),
    # trust.py: the CA bundle loaded once per client (a known one read from its hashed directory).
    "AWS_PYTHON_KEEPALIVE_TRUST_ONCE": ("verify",),
    # prepared.py: client creation answered from the build's prepared data.
    "AWS_PYTHON_KEEPALIVE_PREPARED": ("loader", "models"),
    # gcinit.py: fewer cyclic GC runs from activation to the first client, then the heap frozen.
    "AWS_PYTHON_KEEPALIVE_GC_INIT": ("gc",),
    # resume.py: new TLS connections resume an earlier verified session of the same client.
    "AWS_PYTHON_KEEPALIVE_TLS_RESUME": ("sslcontext", "verify"),
}

NOT_AXES = {
    "AWS_PYTHON_KEEPALIVE_IDLE": "a socket option (TCP_KEEPIDLE): no call, byte or answer changes; "
                                 "tests/hook pins the option with getsockopt",
    "AWS_PYTHON_KEEPALIVE_INTERVAL": "a socket option (TCP_KEEPINTVL), as IDLE",
    "AWS_PYTHON_KEEPALIVE_COUNT": "a socket option (TCP_KEEPCNT), as IDLE",
    "AWS_PYTHON_KEEPALIVE_POOL_SIZE": "off unless the user sets it: botocore's own max_pool_connections, "
                                      "the user's setting",
    "AWS_PYTHON_KEEPALIVE_MAX_IDLE": "the layer's purpose, not a stock path made cheaper: a pooled "
                                     "connection idle too long is closed and replaced by the same handshake "
                                     "stock makes after a reset; the lab's NAT experiments (tests/lab) measure it",
    "AWS_PYTHON_KEEPALIVE_LEARN": "acts only after a stale reuse already failed (which stock retries the "
                                  "same way): shortens max idle for that host; tests/lab",
    "AWS_PYTHON_KEEPALIVE_DEBUG": "output only (debug lines on stderr); every twin run has it on",
    "AWS_PYTHON_KEEPALIVE_METRICS": "output only (EMF records on stdout)",
    "AWS_PYTHON_KEEPALIVE_METRICS_NAMESPACE": "output only (the EMF records' namespace)",
}

# The full layer's patches to its own SDK (layer/patches/<distribution>/, issue 36): not a switch but
# an optimization of a stock path all the same.  The full flavor's stock twin runs the pinned wheels as
# published, its layer twin the patched tree (sites.py), so every full-flavor case compares them.
# Each patched distribution names the axes that exercise its patched modules; sdk_patches
# (test_sdk_patches.py) uses what the patches made lazy (docs, S3 transfers, timestamps), hook off.
SDK_PATCHES = {
    "boto3": ("sslcontext", "verify", "loader", "proxies", "client_certs", "middleboxes", "gc", "processes",
              "sdk_patches"),
    "botocore": ("sslcontext", "verify", "loader", "proxies", "client_certs", "middleboxes", "gc", "processes",
                 "sdk_patches"),
    "urllib3": ("sslcontext", "verify", "proxies", "client_certs", "middleboxes", "sdk_patches"),
}
