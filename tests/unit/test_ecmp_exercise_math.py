"""Exercise 05's exact computation (exercises/solutions/05-ecmp-collisions/exact_share.py), the one its grader
holds the student's expected_share and qps_to_match to, against brute force over every hash outcome."""

import importlib.util
from fractions import Fraction
from itertools import product
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "exercises" / "solutions" / "05-ecmp-collisions" / "exact_share.py"
_spec = importlib.util.spec_from_file_location("exact_share", PATH)
exact = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exact)


def brute_force_share(qps: int, flows_per_t0: int, uplinks: int, t0s: int) -> float:
    """E[min over T0s of mean / max queue pairs per uplink], every outcome of every queue pair enumerated."""
    n = qps * flows_per_t0
    outcomes = list(product(range(uplinks), repeat=n))
    shares = [Fraction(n, uplinks * max(o.count(u) for u in range(uplinks))) for o in outcomes]
    total = sum(min(combo) for combo in product(shares, repeat=t0s))
    return float(total / len(shares) ** t0s)


@pytest.mark.parametrize("n,uplinks,cap", [(0, 2, 0), (3, 2, 1), (3, 2, 2), (5, 3, 2), (6, 4, 3), (4, 1, 4)])
def test_assignments_within_counts_every_outcome(n, uplinks, cap):
    expected = sum(1 for o in product(range(uplinks), repeat=n) if all(o.count(u) <= cap for u in range(uplinks)))
    assert exact.assignments_within(n, uplinks, cap) == expected


@pytest.mark.parametrize("case", [(1, 2, 2, 1), (1, 2, 2, 2), (2, 2, 2, 2), (3, 1, 2, 1), (2, 2, 3, 1),
                                  (1, 3, 3, 2), (4, 1, 2, 3), (2, 1, 4, 1)])
def test_expected_share_is_the_brute_force_expectation(case):
    assert exact.expected_share(*case) == pytest.approx(brute_force_share(*case), abs=1e-12)


def test_known_values():
    # one QP per flow, 2 flows, 2 uplinks: they collide half the time (share 1/2), else spread (1)
    assert exact.expected_share(1, 2, 2) == 0.75
    # the ring over 2 such T0s runs at the worse one's pace: spread only when both are, 1 time in 4
    assert exact.expected_share(1, 2, 2, 2) == 0.625
    assert exact.expected_share(7, 3, 1, 5) == 1.0   # one uplink: nothing to collide on


def test_more_t0s_can_only_lower_the_share():
    shares = [exact.expected_share(4, 2, 2, t) for t in range(1, 6)]
    assert shares == sorted(shares, reverse=True) and shares[-1] < shares[0]


def test_smallest_qps_is_the_first_count_that_meets_the_target():
    q = exact.smallest_qps(0.85, 2, 2, 2, limit=255)
    assert exact.expected_share(q, 2, 2, 2) >= 0.85
    assert all(exact.expected_share(p, 2, 2, 2) < 0.85 for p in range(1, q))


def test_smallest_qps_does_not_assume_the_share_grows_with_qps():
    # one flow over 2 uplinks: 1 QP 0.5, 2 QPs 0.75, 3 QPs 0.6875 (3 cannot split evenly)
    assert [exact.expected_share(q, 1, 2) for q in (1, 2, 3)] == [0.5, 0.75, 0.6875]
    assert exact.smallest_qps(0.7, 1, 2, 1, limit=10) == 2


def test_smallest_qps_none_when_the_limit_is_too_low():
    assert exact.smallest_qps(0.99, 2, 2, 2, limit=4) is None


def test_nonsense_sizes_are_refused():
    with pytest.raises(ValueError):
        exact.expected_share(0, 2, 2)
