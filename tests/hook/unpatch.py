"""Undo patch._patch_connection_pool in a test process: botocore's connection and pool classes as
they were (tests/hook/test_resume.py, tests/build/test_tls_probe.py)."""

from aws_keepalive import wrap


def connection_pool():
    from botocore import awsrequest

    for owner in (awsrequest.AWSHTTPConnectionPool, awsrequest.AWSHTTPSConnectionPool,
                  awsrequest.AWSHTTPConnection, awsrequest.AWSHTTPSConnection):
        for name in ("_get_conn", "_put_conn", "_make_request", "connect"):
            original = getattr(vars(owner).get(name), wrap.WRAPPED, None)
            if original is not None:
                setattr(owner, name, original)
