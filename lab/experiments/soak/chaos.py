"""The soak's fault schedule: what happens in each round, drawn once from a seed.

A round is: an idle gap (every environment frozen), then one invocation per configuration.  Each
round carries

* ``gap_s``: uniform in [0.1 T, 3 T], T the scaled NAT timeout -- short gaps reuse live flows,
  gaps between T and the endpoint's own idle timeout meet the NAT's verdict on a forgotten flow,
  longer ones also meet the endpoint closing the connection;
* ``nat_mode``: "reset" (what AWS documents for NAT gateways) or "drop" (a silent middlebox); it
  switches with probability 1/3 per round, so both modes come in runs;
* ``restart``: None, "tls" (the TLS front) or "dynamodb" (DynamoDB Local's JVM), with
  ``restart_at`` the fraction of the gap after which it happens.  Restarts happen while every
  environment is frozen: a JVM restart takes seconds, longer than any retry budget, so one in the
  middle of an invocation would fail puts whatever the client does -- it tests the JVM, not the
  connection pool.  What they test is pooled connections whose server went away;
* ``puts`` (1-64) and ``threads`` (1-32, at most ``puts``).

The same schedule is used for every configuration (they run side by side), so differences come from
the layer only.  Restarts are spread over the rounds the run is expected to have (at least
``MIN_RESTARTS``), alternating kinds.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Optional

MIN_RESTARTS = 3
MODES = ("reset", "drop")
RESTART_KINDS = ("tls", "dynamodb")
MAX_ROUNDS = 10000


@dataclass
class Round:
    index: int
    gap_s: float
    nat_mode: str
    restart: Optional[str]
    restart_at: float
    puts: int
    threads: int

    def as_dict(self) -> dict:
        return asdict(self)


def expected_rounds(duration_s: float, nat_timeout_s: float, invoke_s: float = 1.5) -> int:
    """How many rounds fit in ``duration_s``: mean gap 1.55 T plus the invocations' time."""
    return max(1, int(duration_s / (1.55 * nat_timeout_s + invoke_s)))


def schedule(seed: int, duration_s: float, nat_timeout_s: float, *, rounds: Optional[int] = None) -> list[Round]:
    """The rounds of one soak: ``rounds`` of them (default: twice the expected number, so the run
    ends on its deadline, not on the schedule), restarts within the expected ones."""
    rng = random.Random(seed)
    expected = expected_rounds(duration_s, nat_timeout_s)
    total = min(MAX_ROUNDS, rounds if rounds is not None else 2 * expected)
    restarts = _restart_rounds(rng, expected, total)
    mode = rng.choice(MODES)
    out = []
    for index in range(total):
        if index and rng.random() < 1 / 3:
            mode = MODES[1 - MODES.index(mode)]
        puts = rng.randint(1, 64)
        out.append(Round(index=index, gap_s=round(rng.uniform(0.1, 3.0) * nat_timeout_s, 3),
                         nat_mode=mode, restart=restarts.get(index),
                         restart_at=round(rng.uniform(0.1, 0.9), 3),
                         puts=puts, threads=rng.randint(1, min(32, puts))))
    return out


def _restart_rounds(rng: random.Random, expected: int, total: int) -> dict:
    """Round index -> restart kind: at least MIN_RESTARTS within the first ``expected`` rounds
    (one in six rounds on long runs), kinds alternating, never in round 0 (the warm-up)."""
    wanted = max(MIN_RESTARTS, expected // 6)
    # Evenly spaced slots over rounds 1 .. 0.9 * expected, jittered within the slot.
    span = max(wanted, int(0.9 * expected))
    slots = [1 + (span * i) // wanted for i in range(wanted + 1)]
    first = rng.randrange(len(RESTART_KINDS))
    chosen = {}
    for i in range(wanted):
        index = rng.randrange(slots[i], max(slots[i] + 1, slots[i + 1]))
        if index < total:
            chosen[index] = RESTART_KINDS[(first + i) % len(RESTART_KINDS)]
    return chosen
