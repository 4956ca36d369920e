"""make measure-keepalive: which keep-alive timers survive a NAT idle timeout, on real sockets
(``run``). Imports: lab.services, lab.net."""
