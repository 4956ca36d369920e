"""make measure-learn: the learned idle limit end to end, a NAT shorter than max idle (``run``).
Imports: lab.standin, lab.services, lab.net, bench.rows."""
