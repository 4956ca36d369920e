"""make verify-aws: what the TLS sessions of a botocore client's pooled connections say, the one fact
only AWS can give (issue 30): does the endpoint offer TLS 1.3 tickets, with what lifetime hint, and
does a connection opened after a gap longer than the NAT timeout resume (resume.py)?

Read from the client's own pool after a call, without changing it: each pooled connection's
socket, ``session_reused`` (this connection's handshake resumed), ``session.has_ticket`` (the server
sent a ticket) and ``session.ticket_lifetime_hint`` (seconds).  Stock botocore never offers a
session, so its connections always say ``resumed: false``: the layer-on function is the one to read.
"""


def pooled_tls(client):
    """[{host, version, resumed, ticket, lifetime_hint_s}] of the client's pooled TLS connections."""
    found = []
    manager = client._endpoint.http_session._manager
    for pool in list(manager.pools._container.values()):
        queue = getattr(getattr(pool, "pool", None), "queue", None) or ()
        for conn in list(queue):
            sock = getattr(conn, "sock", None) if conn is not None else None
            if sock is None or not hasattr(sock, "session_reused"):
                continue
            session = sock.session
            found.append({
                "host": conn.host,
                "version": sock.version(),
                "resumed": bool(sock.session_reused),
                "ticket": bool(session is not None and session.has_ticket),
                "lifetime_hint_s": session.ticket_lifetime_hint if session is not None else None,
            })
    return found
