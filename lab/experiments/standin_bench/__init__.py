"""What the Lambda stand-in itself costs: cold start and per-invocation overhead (``run``).
Imports: lab.standin."""
