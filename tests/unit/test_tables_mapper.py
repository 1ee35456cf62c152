"""The Clustermapper's reflection rules in the static tables, followed by trace() (no root)."""

import pytest

from topologies.fabric import DEFAULT_FABRIC, FabricError, FabricSpec
from topologies.openflow.tables import (BASELINE_PORT, EV_PORT_BASE, MAPPER_PORT, MRC_PORT, OFPP_IN_PORT, PRIO_LOCAL,
                               mapper_ev, switch_table, trace)

SPECS = [
    DEFAULT_FABRIC,
    FabricSpec(planes=2, racks=3, spines=4, hosts_per_rack=1, evs_per_plane=4),
    FabricSpec(planes=4, racks=2, spines=3, hosts_per_rack=3, evs_per_plane=7),
]


def test_the_mapper_port_is_its_own():
    assert MAPPER_PORT not in (MRC_PORT, BASELINE_PORT)
    assert not EV_PORT_BASE <= MAPPER_PORT < EV_PORT_BASE + 16384


@pytest.mark.parametrize("spec", SPECS)
def test_t0_hop_probe_comes_straight_back_out_of_the_ingress_port(spec):
    for host in range(spec.hosts):
        for plane in range(spec.planes):
            hops, mark = trace(spec, host, host, plane, None, udp_dst=MAPPER_PORT, udp_src=MAPPER_PORT)
            assert hops == [(spec.t0_name(plane, spec.rack_of(host)), spec.t0_host_port(host))]
            assert mark is None


@pytest.mark.parametrize("spec", SPECS)
def test_t1_probe_goes_up_to_its_evs_t1_and_back_to_the_same_t0(spec):
    for host in range(spec.hosts):
        rack = spec.rack_of(host)
        for plane in range(spec.planes):
            for t1 in range(spec.spines):
                ev = mapper_ev(spec, t1)
                assert spec.ev_t1(ev) == t1
                hops, mark = trace(spec, host, host, plane, ev, udp_dst=MAPPER_PORT)
                t0 = spec.t0_name(plane, rack)
                assert hops == [(t0, spec.t0_uplink_port(t1)),
                                (spec.t1_name(plane, t1), spec.t1_downlink_port(rack)),
                                (t0, spec.t0_host_port(host))]
                assert mark == spec.t1_mac(plane, t1)


def test_reflection_rules_use_the_openflow_in_port_and_outrank_local_delivery():
    spec = DEFAULT_FABRIC
    t0 = switch_table(spec, spec.t0_name(0, 1))
    t1 = switch_table(spec, spec.t1_name(0, 1))
    for table in (t0, t1):
        reflect = [f for f in table.flows if ("output", OFPP_IN_PORT) in f.actions]
        assert len(reflect) == 1 and reflect[0].priority > PRIO_LOCAL
        assert ("udp_dst", MAPPER_PORT) in reflect[0].match
    assert ("set_eth_src", spec.t1_mac(0, 1)) in [f for f in t1.flows if f.priority > PRIO_LOCAL][0].actions
    up = [f for f in t0.flows if any(k == "in_port" for k, _ in f.match)]
    assert len(up) == spec.hosts_per_rack * spec.spines
    assert {dict(f.match)["in_port"] for f in up} == {spec.t0_host_port(h) for h in (2, 3)}


def test_a_probe_without_a_mapper_rule_is_dropped_not_reflected():
    # only the mapper EVs go up; any other source port falls to local delivery,
    # which would be an output to the ingress port: OVS drops it, and so does trace
    spec = DEFAULT_FABRIC
    with pytest.raises(FabricError, match="ingress port"):
        trace(spec, 0, 0, 0, None, udp_dst=MAPPER_PORT, udp_src=EV_PORT_BASE + spec.evs_per_plane - 1)
    with pytest.raises(FabricError, match="ingress port"):
        trace(spec, 0, 0, 0, None, udp_dst=MRC_PORT)


def test_mrc_data_still_ignores_the_mapper_rules():
    spec = DEFAULT_FABRIC
    hops, mark = trace(spec, 0, 2, 5, 3)
    assert mark == spec.t1_mac(5, spec.ev_t1(3)) and len(hops) == 3
