"""The ECMP-collisions row's expectation (lab/paper/ecmp_expectation.py): the RoCE-like ring's
efficiency over hash outcomes, against a brute force over every queue pair's T1 that computes
each flow's fair share on its own, and against exercise 05's exact count."""

import importlib.util
from itertools import product
from pathlib import Path

import pytest

from lab.paper import ecmp_expectation as model
from lab.paper.settings import ROCE_FABRIC
from topologies.fabric import FabricSpec

ROCE = FabricSpec(**ROCE_FABRIC)
EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "solutions" / "05-ecmp-collisions" / "exact_share.py"


def brute_force(spec: FabricSpec, flows, qps: int) -> float:
    """E[efficiency] over every T1 of every queue pair: each stripe's fair share on each link of its
    path (1 / the stripes there, in flows), the step as long as its slowest stripe takes."""
    crossing = [f for f in flows if spec.rack_of(f[0]) != spec.rack_of(f[1])]
    total = 0.0
    outcomes = list(product(range(spec.spines), repeat=qps * len(crossing)))
    for t1s in outcomes:
        paths = {}   # (flow, queue pair) -> its links
        for i, (src, dst) in enumerate(flows):
            for q in range(qps):
                links = [("out", src), ("in", dst)]
                if (src, dst) in crossing:
                    t1 = t1s[crossing.index((src, dst)) * qps + q]
                    links += [("up", spec.rack_of(src), t1), ("down", t1, spec.rack_of(dst))]
                paths[i, q] = links
        on = {}
        for links in paths.values():
            for link in links:
                on[link] = on.get(link, 0) + 1
        # a stripe is 1/qps of a flow; at 1/n of a link it takes n/qps flow-times
        slowest = max(max(on[link] for link in links) / qps for links in paths.values())
        total += 1 / slowest
    return total / len(outcomes)


def test_the_roce_ring_collides_on_3_of_4_outcomes():
    # two flows up each T0 over 2 uplinks: they share one (half each) with probability 1/2, at each T0
    e = model.expected_ring_efficiency(ROCE, "interleaved", qps=1)
    assert e.exact and e.distribution == {0.5: pytest.approx(0.75), 1.0: pytest.approx(0.25)}
    assert e.mean == pytest.approx(0.625)


def test_a_contiguous_ring_crosses_each_way_once_and_never_collides():
    assert model.ring_flows(ROCE, "contiguous") == [(0, 1), (1, 2), (2, 3), (3, 0)]
    assert model.expected_ring_efficiency(ROCE, "contiguous").distribution == {1.0: pytest.approx(1.0)}


@pytest.mark.parametrize("spec, placement, qps", [
    (ROCE, "interleaved", 1), (ROCE, "interleaved", 2), (ROCE, "interleaved", 3), (ROCE, "contiguous", 2),
    (FabricSpec(planes=1, racks=3, spines=2, hosts_per_rack=2), "interleaved", 1),
    (FabricSpec(planes=1, racks=2, spines=3, hosts_per_rack=3, evs_per_plane=16), "interleaved", 1)])
def test_the_expectation_is_the_brute_force_one(spec, placement, qps):
    flows = model.ring_flows(spec, placement)
    assert model.expected_ring_efficiency(spec, placement, qps).mean == pytest.approx(brute_force(spec, flows, qps))


@pytest.mark.parametrize("qps", [1, 2, 3, 16])
def test_the_roce_ring_is_exercise_05s_exact_share(qps):
    # the interleaved ring sends 2 flows up each of the 2 T0s; the rack's downlinks carry the same ones
    spec = importlib.util.spec_from_file_location("exact_share", EXERCISE)
    exact = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exact)
    assert model.expected_ring_efficiency(ROCE, "interleaved", qps).mean == pytest.approx(
        exact.expected_share(qps, flows_per_t0=2, uplinks=2, t0s=2))


def test_many_outcomes_are_sampled_near_the_exact_expectation(monkeypatch):
    exact = model.expected_ring_efficiency(ROCE, "interleaved", qps=3)
    monkeypatch.setattr(model, "EXACT_LIMIT", 10)
    model.expected_efficiency.cache_clear()
    try:
        sampled = model.expected_ring_efficiency(ROCE, "interleaved", qps=3)
    finally:
        model.expected_efficiency.cache_clear()
    assert exact.exact and not sampled.exact and "Monte Carlo" in sampled.how()
    assert sampled.mean == pytest.approx(exact.mean, abs=0.01)
    assert sum(sampled.distribution.values()) == pytest.approx(1.0)


def test_one_outcome_is_the_nic_load_over_the_busiest_links():
    flows = model.ring_flows(ROCE, "interleaved")      # h0->h2, h2->h1, h1->h3, h3->h0
    assert model.efficiency(ROCE, flows, 1, [(1, 0), (0, 1), (0, 1), (1, 0)]) == 1.0
    assert model.efficiency(ROCE, flows, 1, [(1, 0), (1, 0), (1, 0), (0, 1)]) == 0.5   # h0->h2 and h1->h3
    assert model.efficiency(ROCE, flows, 2, [(1, 1), (2, 0), (1, 1), (1, 1)]) == pytest.approx(2 / 3)
