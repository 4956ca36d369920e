"""aws_keepalive: live TCP keep-alive for every botocore client, switched on by AWS_PYTHON_KEEPALIVE.

The pipeline, one module per step:

    environment --> settings  (settings.py: parsed and validated once, at startup)
                --> patch     (hook.py waits for botocore; patch.py: socket options, pool, idle;
                               aio.py: the same for aiobotocore's aiohttp connector;
                               idle.py: when a pooled connection is stale, for every client family;
                               snapstart.py: after a SnapStart restore, no pre-snapshot connection;
                               trust.py: the CA bundle not parsed per connection (a known
                               bundle read from its hashed directory, any other once per client);
                               resume.py: a new TLS connection resumes the session of an
                               earlier verified one of the same client and host (the
                               replacement handshake after max idle or a restore);
                               prepared.py: client creation answers botocore's service listings
                               and endpoints.json from data the layer build prepared for that
                               botocore release (the full flavor's own, the runtimes' bundled
                               ones), checked by one listing of its data folder
                               and of each service folder it loads;
                               children.py: the same in every process multiprocessing starts;
                               wrap.py: the one way every patch replaces a function)
                --> diagnostics (diagnostics.py: one-line warnings and debug lines on stderr;
                                 metrics.py: CloudWatch EMF records on stdout, when switched on)

Stale reuses (a reused pooled connection whose request failed before any response byte) are
noticed by patch.py and aio.py, reported once per host, counted, and taught to idle.py, which
then replaces that host's connections before they sit idle that long again ("learned idle").

Entry points ("routes", named in the debug startup line), each calling ``activate``; whichever
fires first activates, later calls do nothing (docs/activation.md):

* ``pth`` -- ``aws_keepalive.pth``: the managed runtime executes its import line while adding
  /opt/python as a site directory, before the handler is imported.
* ``start`` -- ``aws_keepalive.start`` (PEP 829): from Python 3.15 site calls the entry point it
  names (``_aws_keepalive_site:start``) instead, and skips the ``.pth``'s import line, which
  3.18+ ignores altogether.
* ``usercustomize`` -- ``usercustomize.py`` next to the package (via ``_aws_keepalive_site``):
  for interpreters started with /opt/python already on PYTHONPATH, e.g. behind an exec wrapper,
  whatever sitecustomize the wrapper puts first (site imports usercustomize after it) -- when the
  user site is on, as for the managed runtime's interpreter.  The layer ships no
  ``sitecustomize.py``: in /opt/python it would replace another layer's, or be replaced by it
  (docs/activation.md).
* ``opentelemetry`` -- ``opentelemetry_pre_instrument`` below, an entry point OpenTelemetry's
  ``initialize()`` calls before it loads any instrumentor (and so before botocore's).
* ``fork`` / ``forkserver`` / ``spawn`` -- children of an activated process (children.py):
  awslambdaric's workers on Lambda Managed Instances, a function's own process pools.  A forked
  child inherits the activation; a forkserver or spawn child is a new interpreter, activated from
  the data multiprocessing sends it, before it imports anything of the function's.
"""

__version__ = "0.1.0"

# settings.OFF_VALUES (the values of AWS_PYTHON_KEEPALIVE that mean off), inlined: the entry point
# below tells "off" without importing a submodule, and settings.py does not import the package
# back (no import cycle).  aws_keepalive.pth and _aws_keepalive_site.py carry copies too, as they
# must not import the package at all when off; tests/hook/test_pth.py pins that all of them agree.
_OFF_VALUES = ("", "0", "false", "no", "off")

_activated = False
_config = None  # the settings activation parsed (settings.Settings), for startup_line


def activate(route):
    """Switch the layer on if AWS_PYTHON_KEEPALIVE says so.  Never raises."""
    global _activated
    if _activated:
        return
    _activated = True
    try:
        _activate(route)
    except Exception as error:
        _report_failure("activation", error)


def _activate(route):
    import os

    from aws_keepalive import settings

    config = settings.from_environ(os.environ)
    if config is None:
        return
    import sys

    from aws_keepalive import hook

    # No BOTOCORE_TCP_KEEPALIVE is exported: it would reach the exec wrapper's child processes
    # (and any subprocess), where botocore 1.42.29+ would turn on SO_KEEPALIVE with the kernel's
    # 7200 s timer and nothing else -- a half state that looks on and helps nothing.  The patch
    # decides per client instead (patch.keepalive_wanted).
    global _config
    _config = config
    if config.debug:
        from aws_keepalive import diagnostics

        diagnostics.debug_enabled = True
        startup_line(route)

    def patch_botocore(module):
        try:
            from aws_keepalive import patch

            patch.apply(config)
        except Exception as error:
            _report_failure("patch", error)

    if "botocore.session" in sys.modules:
        # Reached through a late route (a wrapper imported botocore first): clients created
        # before this point keep stock sockets and pools; clients created after are patched.
        from aws_keepalive import diagnostics

        diagnostics.warn(
            "botocore was imported before the layer activated (via %s); clients created before "
            "now are not patched" % route
        )
    if config.gc_init and "botocore.session" not in sys.modules:
        # Before the handler's imports: fewer cyclic GC runs until the first client (gcinit.py; a
        # forkserver or spawn child imports the handler after this too).
        from aws_keepalive import gcinit

        gcinit.begin()
    if config.metrics:
        from aws_keepalive import metrics

        metrics.configure(config, os.environ)
    from aws_keepalive import children, snapstart

    if route not in children.CHILD_ROUTES:
        # Before the hook: the pool patch applies when restore hooks are registered (patch.apply).
        # Only the process the runtime restores registers them (a child's would never run).
        snapstart.register(os.environ)
    hook.install(patch_botocore)

    def patch_aiobotocore(module):
        try:
            from aws_keepalive import aio

            aio.apply(config)
        except Exception as error:
            _report_failure("aiobotocore patch", error)

    # aiobotocore (and aioboto3 on top) sends through aiohttp, which patch.py does not reach.
    hook.install(patch_aiobotocore, "aiobotocore.session")
    # Every process multiprocessing starts from here, whatever its start method (children.py);
    # a forked child's debug line comes from here too (children.py does not import the package).
    children.install(startup_line if config.debug else None)


def startup_line(route):
    """The debug startup line: version, route, the botocore to be imported, the settings."""
    import os

    from aws_keepalive import diagnostics

    from aws_keepalive.children import CHILD_ROUTES

    where = " in pid %d" % os.getpid() if route in CHILD_ROUTES else ""
    diagnostics.debug(
        "aws-keepalive %s on (via %s)%s; botocore %s; %s"
        % (__version__, route, where, _locate_botocore(), _config.describe()),
        layer_version=__version__,
        route=route,
        pid=os.getpid(),
    )


def opentelemetry_pre_instrument():
    """Entry point of group ``opentelemetry_pre_instrument`` (the layer's dist-info names it).

    OpenTelemetry's ``initialize()`` calls it with no arguments in the function's process, before
    it loads the instrumentors.  Never raises (``activate`` catches everything).
    """
    import os

    if os.environ.get("AWS_PYTHON_KEEPALIVE", "").strip().lower() in _OFF_VALUES:
        return
    activate("opentelemetry")


def _locate_botocore():
    """'<version> at <path>' of the botocore the function will import, without importing it."""
    import re
    import sys

    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec("botocore", None) if find_spec is not None else None
        if spec is not None and spec.origin:
            try:
                with open(spec.origin, encoding="utf-8") as source:
                    match = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", source.read())
            except OSError:
                match = None
            return "%s at %s" % (match.group(1) if match else "unknown", spec.origin)
    return "not found on sys.path"


def _report_failure(step, error):
    try:
        from aws_keepalive import diagnostics

        diagnostics.report_once(
            step,
            "%s failed: %r; boto3/botocore clients behave as stock botocore" % (step, error),
        )
    except Exception:
        pass
