"""The lab's network: what stands between a function and AWS.

``nat`` (a network namespace behind a kernel NAT whose conntrack forgets idle flows: reset or
silent drop), ``netem`` (an asyncio TCP proxy adding round-trip time and counting connections),
``tls_front`` (TLS in front of a plain endpoint, a trustme CA), ``tcpinfo`` (the kernel's TCP_INFO
of a socket), ``echo`` (a TCP echo server); ``_loop``: the event-loop thread the proxies share.
Two helpers every room uses, one resource each: ``server_thread`` (a socketserver server serving on
a thread of its own) and ``process`` (a process the lab started, stopped by pid).

Imports: the standard library and third-party packages only, nothing else of ``lab``.
"""
