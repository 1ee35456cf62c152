"""The grader's exact computation for exercise 05 (pure: no lab, no root).

A T0 sends `flows_per_t0` ring flows up over `uplinks` uplinks; each flow is
striped over `qps` queue pairs of equal size, and the ECMP hash puts each
queue pair on an uplink uniformly at random, independently. The ring runs at
the pace of the busiest uplink of the worst of its `t0s` T0s, so its share of
a collision-free spread is (queue pairs / uplinks) / (the most queue pairs on
one uplink), taken at the worst T0. Counting is exact (integers), so the
grader's answer does not depend on sampling.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb


def assignments_within(n: int, uplinks: int, cap: int) -> int:
    """Ways to hash n distinct queue pairs onto `uplinks` uplinks with at most `cap` on each."""
    ways = [1] + [0] * n   # ways[j]: j queue pairs placed on the uplinks filled so far
    for _ in range(uplinks):
        ways = [sum(comb(j, k) * ways[j - k] for k in range(min(j, cap) + 1)) for j in range(n + 1)]
    return ways[n]


def expected_share(qps: int, flows_per_t0: int, uplinks: int, t0s: int = 1) -> float:
    """E[min over t0s T0s of mean(uplink load) / max(uplink load)], each queue pair hashed uniformly."""
    if min(qps, flows_per_t0, uplinks, t0s) < 1:
        raise ValueError("qps, flows_per_t0, uplinks and t0s must all be >= 1")
    n = qps * flows_per_t0
    total = uplinks ** n
    # P(a T0's busiest uplink carries <= m queue pairs); the worst T0's: that to the power t0s
    at_most = [Fraction(assignments_within(n, uplinks, m), total) ** t0s for m in range(n + 1)]
    return float(sum(Fraction(n, uplinks * m) * (at_most[m] - at_most[m - 1]) for m in range(1, n + 1)))


def smallest_qps(match: float, flows_per_t0: int, uplinks: int, t0s: int, limit: int) -> int | None:
    """The fewest queue pairs per connection whose expected share is >= match (None up to `limit`).
    The share is not monotonic in qps (an odd count cannot split evenly over 2 uplinks), hence a search."""
    return next((q for q in range(1, limit + 1) if expected_share(q, flows_per_t0, uplinks, t0s) >= match), None)
