"""What ECMP hashing alone leaves the RoCE-like baseline's ring all-reduce, in expectation over
hash outcomes (pure Python; the ECMP-collisions row prints it beside the lab's runs).

The model, on one plane of `FabricSpec` (every link at the same rate):
- a ring step sends one flow from each rank to the next (the ranks in lab/runners/job.py's
  `ring_order`), every flow the same size, all at once;
- each flow is striped over `qps` queue pairs of equal size; a queue pair going to another rack
  is hashed by its T0 onto one T1, uniformly and independently of every other (a T1 has one way
  down to each rack, a flow inside a rack does not cross a T1);
- a link shared by queue pairs gives each a fair share, so a link's load (its flows' stripes on
  it, in whole flows) sets how long it takes, and the step lasts as long as its busiest link: with
  1 QP, as long as its slowest flow, which gets 1 / (the most flows on a link of its path).
Efficiency is the step's time without collisions over its time with them: the busiest NIC link's
load (every host's NIC carries its flows whatever the hash) over the busiest link's. Hashing
noise, not the transport: the lab's go-back-N loses more than a fair share to a collision.

Exact over every outcome when there are few (each flow's split of its queue pairs over the T1s,
weighted by its multinomial probability), else a seeded Monte Carlo.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from math import factorial, prod

from lab.runners.job import ring_order
from topologies.fabric import FabricSpec

EXACT_LIMIT = 200_000      # outcomes (splits of every flow) counted exactly; above this, sampled
MONTE_CARLO_DRAWS = 20_000
MONTE_CARLO_SEED = 1       # a fixed seed: the same expectation in every run


@dataclass(frozen=True)
class Expectation:
    """The efficiency's distribution over hash outcomes."""
    distribution: dict       # efficiency (rounded to 1e-9) -> probability
    exact: bool              # every outcome counted (else MONTE_CARLO_DRAWS draws)

    @property
    def mean(self) -> float:
        return sum(eff * p for eff, p in self.distribution.items())

    def how(self) -> str:
        return "exact over every hash outcome" if self.exact else f"Monte Carlo over {MONTE_CARLO_DRAWS} draws"


def ring_flows(spec: FabricSpec, placement: str) -> list[tuple[int, int]]:
    """(sender, receiver) host indices of each flow of a ring step."""
    ranks = [spec.host_names.index(name) for name in ring_order(spec, placement)]
    return list(zip(ranks, ranks[1:] + ranks[:1]))


def splits(qps: int, spines: int) -> list[tuple[tuple[int, ...], float]]:
    """Each way `qps` queue pairs land on `spines` T1s (queue pairs per T1) and its probability."""
    ways = [c for c in product(range(qps + 1), repeat=spines) if sum(c) == qps]
    return [(c, factorial(qps) / prod(factorial(k) for k in c) / spines ** qps) for c in ways]


def efficiency(spec: FabricSpec, flows: list[tuple[int, int]], qps: int, on_t1: list[tuple[int, ...]]) -> float:
    """One outcome: on_t1[i] is how many of the i-th rack-crossing flow's queue pairs each T1
    carries (flows inside a rack cross no T1)."""
    return _efficiency(_nic_load(flows), _crossing_racks(spec, flows), qps, on_t1)


def _nic_load(flows: list[tuple[int, int]]) -> int:
    """Flows on the busiest NIC link, either way: the same whatever the hash."""
    return max(Counter(src for src, _ in flows).most_common(1)[0][1],
               Counter(dst for _, dst in flows).most_common(1)[0][1])


def _crossing_racks(spec: FabricSpec, flows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(sender's rack, receiver's rack) of each flow that crosses the T1s."""
    return [(spec.rack_of(a), spec.rack_of(b)) for a, b in flows if spec.rack_of(a) != spec.rack_of(b)]


def _efficiency(nic: int, crossing: list[tuple[int, int]], qps: int, on_t1: list[tuple[int, ...]]) -> float:
    stripes: dict = {}   # T0-T1 link, either way -> queue pairs on it
    for (a, b), counts in zip(crossing, on_t1):
        for t1, n in enumerate(counts):
            stripes[a, t1, "up"] = stripes.get((a, t1, "up"), 0) + n
            stripes[b, t1, "down"] = stripes.get((b, t1, "down"), 0) + n
    return nic / max(nic, max(stripes.values(), default=0) / qps)


@lru_cache(maxsize=None)
def expected_efficiency(spec: FabricSpec, flows: tuple[tuple[int, int], ...], qps: int = 1) -> Expectation:
    """The efficiency's distribution when each queue pair of `flows` is hashed at random."""
    nic, crossing = _nic_load(list(flows)), _crossing_racks(spec, list(flows))
    options = splits(qps, spec.spines)
    dist: Counter = Counter()
    if len(options) ** len(crossing) <= EXACT_LIMIT:
        for outcome in product(options, repeat=len(crossing)):
            eff = _efficiency(nic, crossing, qps, [c for c, _ in outcome])
            dist[round(eff, 9)] += prod(p for _, p in outcome)
        return Expectation(dict(dist), exact=True)
    rng = random.Random(MONTE_CARLO_SEED)
    for _ in range(MONTE_CARLO_DRAWS):
        dist[round(_efficiency(nic, crossing, qps, [draw(rng, qps, spec.spines) for _ in crossing]), 9)] += 1
    return Expectation({eff: n / MONTE_CARLO_DRAWS for eff, n in dist.items()}, exact=False)


def draw(rng: random.Random, qps: int, spines: int) -> list[int]:
    """One flow's queue pairs hashed at random: how many land on each T1."""
    counts = [0] * spines
    for _ in range(qps):
        counts[rng.randrange(spines)] += 1
    return counts


def expected_ring_efficiency(spec: FabricSpec, placement: str, qps: int = 1) -> Expectation:
    """The ring all-reduce's expectation on `spec` with ranks placed by `placement`."""
    return expected_efficiency(spec, tuple(ring_flows(spec, placement)), qps)
