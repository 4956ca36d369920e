"""Shared fixtures for the lab's tests: the repo root on sys.path, and the NAT availability gate.

Tests that need a network namespace are skipped with the reason printed (``make test-lab`` runs
pytest with ``-rs``) when this machine cannot make one, except in CI (``CI=true``), where the lab
must work and the same condition is a failure.
"""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lab.net import nat  # noqa: E402


@pytest.fixture(scope="session")
def nat_available():
    reason = nat.unavailable_reason()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the NAT lab is unavailable: {reason}")
        pytest.skip(reason)


@pytest.fixture
def echo_server():
    from lab.net.echo import EchoServer

    with EchoServer("127.0.0.1") as server:
        yield server
