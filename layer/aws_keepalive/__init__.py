"""aws_keepalive: live TCP keep-alive for every botocore client, switched on by AWS_PYTHON_KEEPALIVE.

The pipeline, one module per step:

    environment --> settings  (settings.py: parsed and validated once, at startup)
                --> patch     (hook.py waits for botocore; patch.py: socket options, pool, idle;
                               aio.py: the same for aiobotocore's aiohttp connector;
                               idle.py: when a pooled connection is stale, for every client family)
                --> diagnostics (diagnostics.py: one-line warnings and debug lines on stderr)

Entry points: ``aws_keepalive.pth`` (the managed runtime executes its import line while adding
/opt/python as a site directory, before the handler is imported) and ``sitecustomize.py`` (for
interpreters started with /opt/python already on PYTHONPATH, e.g. behind an exec wrapper).  Both
call ``activate``; the second call does nothing.
"""

__version__ = "0.1.0"

_activated = False


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
    from aws_keepalive import hook

    # botocore 1.42.29+ reads this itself; it also reaches child processes.  A user's value wins.
    os.environ.setdefault("BOTOCORE_TCP_KEEPALIVE", "true")
    if config.debug:
        from aws_keepalive import diagnostics

        diagnostics.debug_enabled = True
        diagnostics.debug(
            "aws-keepalive %s on (via %s); botocore %s; %s"
            % (__version__, route, _locate_botocore(), config.describe()),
            layer_version=__version__,
            route=route,
        )

    def patch_botocore(module):
        try:
            from aws_keepalive import patch

            patch.apply(config)
        except Exception as error:
            _report_failure("patch", error)

    hook.install(patch_botocore)

    def patch_aiobotocore(module):
        try:
            from aws_keepalive import aio

            aio.apply(config)
        except Exception as error:
            _report_failure("aiobotocore patch", error)

    # aiobotocore (and aioboto3 on top) sends through aiohttp, which patch.py does not reach.
    hook.install(patch_aiobotocore, "aiobotocore.session")


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
