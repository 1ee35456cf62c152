"""Incast with a victim flow, its pure parts (no root): Jain's index, who sends to whom,
the record and its figures from two runs' series."""

import json
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.runners.bandwidth import BandwidthResult, FlowSeries
from lab.runners.incast import IncastError, jain_index
from lab.runners.incast_victim import VictimIncastResult, _fill_victim, pick_victim_hosts, run_incast_victim
from topologies.fabric import FabricSpec


# ---- Jain's index ----------------------------------------------------------------------
def test_jain_is_one_for_equal_shares_and_one_over_n_when_one_takes_all():
    assert jain_index([5.0, 5.0, 5.0, 5.0]) == 1.0
    assert jain_index([8.0, 0.0, 0.0, 0.0]) == 0.25
    assert jain_index([3.0, 1.0]) == 0.8        # 16 / (2 x 10)


def test_jain_of_nothing_delivered_is_unknown():
    assert jain_index([0.0, 0.0]) is None


@pytest.mark.parametrize("values, words", [([], "at least one"), ([1.0, -2.0], ">= 0")])
def test_jain_refuses_bad_values_in_one_line(values, words):
    with pytest.raises(IncastError, match=words) as err:
        jain_index(values)
    assert "\n" not in str(err.value)


@given(st.lists(st.floats(0.0, 1e4), min_size=1, max_size=20).filter(any))
def test_jain_lies_between_one_over_n_and_one(values):
    j = jain_index(values)
    assert 1 / len(values) - 1e-4 <= j <= 1.0 + 1e-4


# ---- hosts -----------------------------------------------------------------------------
def test_victim_goes_from_another_rack_to_an_idle_host_in_the_targets_rack():
    spec = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=3)   # rack 0: h0-h2, rack 1: h3-h5
    assert pick_victim_hosts(spec, 3, target=0) == ([2, 3, 4], 5, 1)
    assert pick_victim_hosts(spec, 2, target=0) == ([3, 4], 5, 1)    # other racks first
    assert pick_victim_hosts(spec, 1, target=4) == ([0], 2, 3)


def test_the_bench_fabric_takes_six_senders_beside_the_victim_pair():
    spec = FabricSpec(racks=3, spines=2, hosts_per_rack=3)
    senders, victim, idle = pick_victim_hosts(spec, 6, target=0)
    assert (victim, idle) == (8, 1) and senders == [2, 3, 4, 5, 6, 7]
    assert 0 not in senders and spec.rack_of(idle) == spec.rack_of(0) != spec.rack_of(victim)


@pytest.mark.parametrize("spec, senders, target, words", [
    (FabricSpec(planes=2, racks=2, hosts_per_rack=1), 1, 0, "two hosts in the target's rack"),
    (FabricSpec(planes=2, racks=1, hosts_per_rack=4), 1, 0, "two racks"),
    (FabricSpec(planes=2, racks=2, hosts_per_rack=3), 4, 0, "need 7 hosts"),
    (FabricSpec(planes=2, racks=2, hosts_per_rack=3), 0, 0, "need 3 hosts"),
    (FabricSpec(planes=2, racks=2, hosts_per_rack=3), 1, 6, "no host 6"),
])
def test_impossible_incasts_are_refused_in_one_line(spec, senders, target, words):
    with pytest.raises(IncastError, match=words) as err:
        pick_victim_hosts(spec, senders, target)
    assert "\n" not in str(err.value)


def test_run_refuses_before_starting_anything(tmp_path):
    session = SimpleNamespace(spec=FabricSpec(planes=2, racks=2, hosts_per_rack=2), workdir=tmp_path)
    with pytest.raises(IncastError, match="need 5 hosts; the fabric has 4"):
        run_incast_victim(session, senders=2, duration=1.0)
    assert list(tmp_path.iterdir()) == []


# ---- figures from the two runs ---------------------------------------------------------
def run(flows: dict, error=None) -> BandwidthResult:
    """A BandwidthResult with one FlowSeries per (src, dst) -> mean Mb/s."""
    series = [FlowSeries(s, d, [], [], m, chunks=1) for (s, d), m in flows.items()]
    return BandwidthResult("mrc", 1.0, 0.2, 32768, 20.0, flows=series, verified=error is None, error=error,
                           stats={"h0": {}})


def victim_result(alone: BandwidthResult, incast: BandwidthResult) -> VictimIncastResult:
    r = VictimIncastResult("mrc", "h0", ["h3", "h4"], "h5", "h1", 1.0, alone=alone, incast=incast)
    _fill_victim(r)
    return r


def test_figures_come_from_the_incast_run_and_the_victims_run_alone():
    r = victim_result(run({("h5", "h1"): 19.0}),
                      run({("h3", "h0"): 9.0, ("h4", "h0"): 9.0, ("h5", "h1"): 9.5}))
    assert r.sender_mbps == {"h3": 9.0, "h4": 9.0} and r.jain == 1.0
    assert (r.victim_mbps, r.victim_alone_mbps, r.victim_ratio) == (9.5, 19.0, 0.5)
    assert r.verified and r.error is None
    d = json.loads(json.dumps(r.as_dict()))
    assert "stats" not in d["incast"] and "stats" not in d["alone"]


def test_an_error_in_either_run_is_the_results_and_no_figure_is_made_up():
    r = victim_result(run({("h5", "h1"): 19.0}), run({}, error="h3: expected DONE, got ''"))
    assert r.error == "h3: expected DONE, got ''" and not r.verified
    assert r.jain is None and r.victim_ratio is None and r.sender_mbps == {}


def test_no_ratio_when_the_victim_delivered_nothing_alone():
    r = victim_result(run({("h5", "h1"): 0.0}), run({("h3", "h0"): 1.0, ("h4", "h0"): 1.0, ("h5", "h1"): 0.0}))
    assert r.victim_alone_mbps == 0.0 and r.victim_ratio is None
