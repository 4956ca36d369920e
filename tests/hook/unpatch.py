"""Undo the layer's patches in a test process: botocore's connection and pool classes as they were
before patch._patch_connection_pool, URLLib3Session's certificate setup before trust.patch
(tests/hook/test_resume.py, tests/build/test_tls_probe.py)."""

from aws_keepalive import wrap


def connection_pool():
    from botocore import awsrequest

    for owner in (awsrequest.AWSHTTPConnectionPool, awsrequest.AWSHTTPSConnectionPool,
                  awsrequest.AWSHTTPConnection, awsrequest.AWSHTTPSConnection):
        for name in ("_get_conn", "_put_conn", "_make_request", "connect"):
            original = getattr(vars(owner).get(name), wrap.WRAPPED, None)
            if original is not None:
                setattr(owner, name, original)


def trust():
    from botocore.httpsession import URLLib3Session

    for name in ("_setup_ssl_cert", "_get_pool_manager_kwargs"):
        original = getattr(vars(URLLib3Session).get(name), wrap.WRAPPED, None)
        if original is not None:
            setattr(URLLib3Session, name, original)
