"""SnapStart: no pooled connection from before the snapshot is reused after a restore.

With SnapStart (python3.12+) Lambda runs init once, snapshots the execution environment, and
later restores copies of it.  A connection a function opened during init (a module-level call, a
config fetch) sits in botocore's pool inside the snapshot; on a restored environment its flow
exists nowhere -- no NAT, no load balancer, no server knows it -- so the first call on it meets a
reset and a retry, or a hang until read_timeout.  Max idle only catches restores more than
max_idle_s after the snapshot, and a restore can come seconds later.

AWS's way in is the runtime's ``snapshot_restore_py`` module: functions registered with
``register_after_restore`` run on each restored environment before its first invocation.  Ours
bumps ``idle.restore_generation``; every connection stamped before the bump is then closed when
taken out of its pool (reason "restored") and urllib3 opens a clean one: one handshake, no error,
no retry.  Closing lazily, at the next use, rather than walking every pool in the hook keeps the
hook trivially cheap and reaches pools the layer has no list of.

The same bump retires every TLS session resume.py kept (its cache generation includes
``restore_generation``): a ticket inside the snapshot would be offered by every restored clone, so
each clone's first connection per host is a full handshake and later ones resume its own session.

The module is the runtime's, never shipped by the layer: the registry that matters is the one the
runtime itself reads.  When it is missing, or the environment is not a SnapStart one, nothing is
registered.
"""

from aws_keepalive import diagnostics

SNAP_START = "snap-start"


def register(environ):
    """Register the after-restore hook when this is a SnapStart init.  True if registered."""
    if environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") != SNAP_START:
        return False
    try:
        import snapshot_restore_py
    except ImportError:
        diagnostics.warn(
            "AWS_LAMBDA_INITIALIZATION_TYPE=snap-start but the runtime's snapshot_restore_py is not "
            "importable; pooled connections from before a snapshot are replaced only after max idle"
        )
        return False
    # Imported only here, in a SnapStart init: activation calls register() at interpreter start,
    # and idle imports socket and threading (what botocore imports anyway, but a process that never
    # imports botocore should not pay for them at startup).
    from aws_keepalive import idle

    # Set before botocore is patched (activation registers this first), so the pool patch is
    # applied even when max idle is off.
    idle.restore_watched = True
    snapshot_restore_py.register_after_restore(after_restore)
    diagnostics.debug("SnapStart: after-restore hook registered")
    return True


def after_restore():
    """Run by the runtime on a restored environment: mark every pooled connection as stale."""
    try:
        from aws_keepalive import idle

        idle.restore_generation += 1
        diagnostics.debug(
            "SnapStart restore: pooled connections will be replaced at their next use",
            restore_generation=idle.restore_generation,
        )
    except Exception as error:  # a failing hook would fail the restore: never raise
        try:
            diagnostics.report_once("after restore", "after-restore hook failed: %r" % (error,))
        except Exception:
            pass
