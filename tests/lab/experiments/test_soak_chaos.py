"""lab/experiments/soak/chaos.py: the fault schedule the soak follows."""

from lab.experiments.soak.chaos import MIN_RESTARTS, RESTART_KINDS, expected_rounds, schedule


def test_gaps_stay_between_a_tenth_and_three_nat_timeouts():
    """Every gap is within [0.1 T, 3 T] and the whole range is used."""
    rounds = schedule(1, 3000, 4)
    gaps = [r.gap_s for r in rounds]
    assert all(0.4 <= gap <= 12.0 for gap in gaps)
    assert min(gaps) < 1.5 and max(gaps) > 11.0


def test_nat_mode_switches_between_reset_and_drop():
    """Both NAT modes occur, and the mode changes several times over a run."""
    rounds = schedule(2, 300, 4)
    modes = [r.nat_mode for r in rounds]
    assert set(modes) == {"reset", "drop"}
    assert sum(1 for a, b in zip(modes, modes[1:]) if a != b) >= 3


def test_at_least_three_restarts_within_the_expected_rounds():
    """A 60 s soak and a 300 s soak both restart at least 3 times before their expected end,
    the long one both the TLS front and DynamoDB Local, never in the first round."""
    for duration, timeout in ((60, 3), (300, 4)):
        for seed in range(20):
            expected = expected_rounds(duration, timeout)
            restarts = [r for r in schedule(seed, duration, timeout) if r.restart]
            assert len([r for r in restarts if r.index < expected]) >= MIN_RESTARTS
            assert all(r.index > 0 for r in restarts)
            assert set(r.restart for r in restarts) == set(RESTART_KINDS)


def test_workload_sizes():
    """1-64 puts over 1-32 threads, never more threads than puts; both ends reached."""
    rounds = schedule(3, 30000, 4)
    assert all(1 <= r.puts <= 64 and 1 <= r.threads <= min(32, r.puts) for r in rounds)
    assert {1, 64} <= {r.puts for r in rounds} and 32 in {r.threads for r in rounds}


def test_same_seed_same_schedule():
    """The schedule is a function of the seed: a run can be repeated with SEED=."""
    assert schedule(42, 300, 4) == schedule(42, 300, 4)
    assert schedule(42, 300, 4) != schedule(43, 300, 4)
