"""The Lambda lab: everything the layer meets on AWS, on one machine with no AWS account.

Rooms, and the one direction imports run (a lower room never imports a higher one; rooms on one
floor do not import each other; tests/lab/test_layout.py pins it)::

    lab.experiments   what make demo, demo-lmi, soak, measure-*, ... run; each in its own package with
        |             its report and plot beside it; may import everything below
    lab.standin       the Lambda stand-in: Runtime API, runtime prefixes, the function's environment,
    lab.services      CPU share, trust store, bootstrap, driver  |  AWS service stand-ins (DynamoDB Local)
        |
    lab.net           the network: kernel NAT, Netem RTT proxy, TLS front, TCP_INFO, echo server
        |
    lab               this file: REPO only

The hash-pinned requirement locks (``*-requirements.in/.txt``, ``runtime-sdk/``) stay in this
folder, where ``make lock-*`` writes them. docs/lab.md walks through the whole lab.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]  # the checkout: build/, .venv/, .cache/, examples/, layer/
