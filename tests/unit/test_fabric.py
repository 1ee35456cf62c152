"""The fabric description, address plan, EV map and static tables (no root)."""

import itertools

import pytest

from topologies.fabric import DEFAULT_FABRIC, FabricError, FabricSpec
from topologies.openflow.tables import EV_PORT_BASE, MRC_PORT, all_tables, switch_table, trace

SPECS = [
    DEFAULT_FABRIC,
    FabricSpec(planes=2, racks=3, spines=4, hosts_per_rack=1, evs_per_plane=4),
    FabricSpec(planes=4, racks=2, spines=3, hosts_per_rack=3, evs_per_plane=7),
]


def test_default_fabric_meets_the_product_card():
    spec = DEFAULT_FABRIC
    assert spec.planes == 8 and spec.racks >= 2 and spec.spines >= 2 and spec.hosts >= 4
    assert spec.switch_count == spec.planes * (spec.racks + spec.spines)


@pytest.mark.parametrize("spec", SPECS)
def test_addresses_macs_and_dpids_are_unique(spec):
    ips = [spec.host_ip(h, p) for h in range(spec.hosts) for p in range(spec.planes)]
    macs = [spec.host_mac(h, p) for h in range(spec.hosts) for p in range(spec.planes)]
    macs += [spec.t1_mac(p, s) for p in range(spec.planes) for s in range(spec.spines)]
    dpids = [spec.dpid(name) for name in spec.switch_names]
    assert len(set(ips)) == len(ips)
    assert len(set(macs)) == len(macs)
    assert len(set(dpids)) == len(dpids)
    for name in spec.switch_names:
        assert spec.switch_of_dpid(int(spec.dpid(name), 16)) == name


@pytest.mark.parametrize("spec", SPECS)
def test_links_follow_the_two_tier_plan(spec):
    host_links = [l for l in spec.links if l.kind == "host-t0"]
    up_links = [l for l in spec.links if l.kind == "t0-t1"]
    assert len(host_links) == spec.hosts * spec.planes
    assert len(up_links) == spec.planes * spec.racks * spec.spines
    for link in host_links:
        h = int(link.a[1:])
        assert link.a_port == link.plane  # NIC port p is on plane p
        assert link.b == spec.t0_name(link.plane, spec.rack_of(h))
    # no switch port is used twice
    ends = [(l.b, l.b_port) for l in spec.links] + [(l.a, l.a_port) for l in up_links]
    assert len(set(ends)) == len(ends)


@pytest.mark.parametrize("spec", SPECS)
def test_evs_cover_every_t1_as_evenly_as_possible(spec):
    counts = [len(spec.evs_for_t1(t1)) for t1 in range(spec.spines)]
    assert min(counts) >= 1 and max(counts) - min(counts) <= 1
    assert sum(counts) == spec.evs_per_plane
    assert all(spec.ev_t1(ev) == t1 for t1 in range(spec.spines) for ev in spec.evs_for_t1(t1))


@pytest.mark.parametrize("spec", SPECS)
def test_static_tables_route_every_ev_through_its_t1(spec):
    for src, dst in itertools.permutations(range(spec.hosts), 2):
        for plane in range(spec.planes):
            for ev in spec.evs:
                hops, mark = trace(spec, src, dst, plane, ev)
                if spec.rack_of(src) == spec.rack_of(dst):
                    assert mark is None and len(hops) == 1
                else:
                    assert mark == spec.t1_mac(plane, spec.ev_t1(ev))
                    assert hops[1][0] == spec.t1_name(plane, spec.ev_t1(ev))


def test_t0_table_has_one_entry_per_ev_of_its_plane():
    spec = DEFAULT_FABRIC
    table = switch_table(spec, spec.t0_name(3, 1))
    ev_flows = [f for f in table.flows if ("udp_dst", MRC_PORT) in f.match]
    assert sorted(dict(f.match)["udp_src"] - EV_PORT_BASE for f in ev_flows) == spec.evs
    assert len(all_tables(spec)) == spec.switch_count


def test_non_mrc_traffic_takes_the_ecmp_group():
    spec = DEFAULT_FABRIC
    hops, _ = trace(spec, 0, spec.hosts - 1, 0, None, udp_dst=4794)
    assert len(hops) == 3


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"planes": 0}, "planes"),
        ({"racks": 1.5}, "racks"),
        ({"link_mbps": -1}, "link_mbps"),
        ({"evs_per_plane": 0}, "evs_per_plane"),
        ({"evs_per_plane": 1}, "every T1"),
    ],
)
def test_bad_fabric_is_refused_with_the_field_named(kwargs, words):
    with pytest.raises(FabricError, match=words):
        FabricSpec(**kwargs)


def test_unknown_key_is_refused():
    with pytest.raises(FabricError, match="unknown fabric key"):
        FabricSpec.from_dict({"planes": 8, "plane": 2})
    with pytest.raises(FabricError, match="missing: link_mbps"):
        FabricSpec.from_dict({k: v for k, v in FabricSpec().to_dict().items() if k != "link_mbps"})


def test_parse_switch_rejects_foreign_names():
    for name in ["t2p0s0", "t0p9r0", "t1p0s7", "eth0", "t0p0s0"]:
        with pytest.raises(FabricError):
            DEFAULT_FABRIC.parse_switch(name)
