"""Reference solution of exercise 05."""

from itertools import count
from math import factorial, prod
from statistics import fmean


def ring_share(uplink_loads: dict) -> float:
    """The ring moves at the pace of the fabric's busiest uplink; a collision-free spread would load
    every uplink with the mean. Over the whole fabric rather than min over T0s of mean / max: the two
    agree when every T0 sends the same bytes; when a collided T0 sends more (its flows' retransmissions),
    its own mean weighs them twice as much as the fabric's and overestimates the share (measured:
    exercises/05-ecmp-collisions/README.md, "The tolerance")."""
    loads = [load for t0 in uplink_loads.values() for load in t0]
    return fmean(loads) / max(loads)


def occupancies(n: int, uplinks: int):
    """Every way n queue pairs can fall on the uplinks, as counts per uplink."""
    if uplinks == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in occupancies(n - first, uplinks - 1):
            yield (first, *rest)


def busiest_uplink(n: int, uplinks: int) -> dict:
    """P(the busiest uplink carries m queue pairs), m -> probability (multinomial)."""
    dist: dict = {}
    for counts in occupancies(n, uplinks):
        p = factorial(n) / prod(factorial(c) for c in counts) / uplinks ** n
        dist[max(counts)] = dist.get(max(counts), 0.0) + p
    return dist


def expected_share(qps: int, flows_per_t0: int, uplinks: int, t0s: int = 1) -> float:
    n = qps * flows_per_t0
    dist = busiest_uplink(n, uplinks)
    # the worst T0 has the most queue pairs on one uplink: P(all t0s T0s have <= m) = P(<= m) ** t0s
    below, total = 0.0, 0.0
    for m in sorted(dist):
        at_most = below + dist[m]
        total += (n / uplinks) / m * (at_most ** t0s - below ** t0s)
        below = at_most
    return total


def qps_to_match(match: float, flows_per_t0: int, uplinks: int, t0s: int) -> int:
    # a search, not a formula: the share is not monotonic in the queue pairs (an odd count of
    # queue pairs cannot split evenly over 2 uplinks)
    return next(q for q in count(1) if expected_share(q, flows_per_t0, uplinks, t0s) >= match)

REASONING = """
A synchronous ring finishes a step only when every hop has delivered its
message. Each message is cut into equal stripes, one per queue pair, and
each queue pair is pinned to one uplink by the hash; an uplink carrying k
stripes needs k stripe-times, so every hop waits for the busiest uplink of
the fabric. A collision-free spread would load every uplink with the mean,
so the ring gets mean / max (the worst T0's, or over the whole fabric). With 1 queue pair, 2 flows
share one uplink of a T0 half of the time; over 2 T0s, 3 times in 4. More
queue pairs average the hash out, but slowly: the busiest uplink's excess
shrinks like 1 / sqrt(queue pairs). Left out: the retransmissions a
collided uplink carries, per-step latency, and the CPU that the queue
pairs (each with its own window and timers) cost.
"""
