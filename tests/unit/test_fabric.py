"""The fabric description, address plan, EV map and static tables (no root)."""

import itertools

import pytest

from topologies.fabric import DEFAULT_FABRIC, FabricError, FabricSpec
from topologies.tables import EV_PORT_BASE, MRC_PORT, all_tables, switch_table, trace

SPECS = [
    DEFAULT_FABRIC,
    FabricSpec(planes=2, racks=3, spines=4, hosts_per_rack=1, ev_space=16),
    FabricSpec(planes=4, racks=2, spines=3, hosts_per_rack=3, ev_space=24),
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
def test_evs_are_split_equally_and_cover_every_path(spec):
    per_plane = [len(spec.evs_of_plane(p)) for p in range(spec.planes)]
    assert len(set(per_plane)) == 1 and sum(per_plane) == spec.ev_space
    for path in spec.paths():
        evs = spec.evs_for_path(path.plane, path.t1)
        assert evs, f"no EV selects {path}"
        assert all(spec.ev_path(ev) == path for ev in evs)


@pytest.mark.parametrize("spec", SPECS)
def test_static_tables_route_every_ev_through_its_t1(spec):
    for src, dst in itertools.permutations(range(spec.hosts), 2):
        for ev in range(spec.ev_space):
            path = spec.ev_path(ev)
            hops, mark = trace(spec, src, dst, path.plane, ev)
            if spec.rack_of(src) == spec.rack_of(dst):
                assert mark is None and len(hops) == 1
            else:
                assert mark == spec.t1_mac(path.plane, path.t1)
                assert hops[1][0] == spec.t1_name(path.plane, path.t1)


def test_t0_table_has_one_entry_per_ev_of_its_plane():
    spec = DEFAULT_FABRIC
    table = switch_table(spec, spec.t0_name(3, 1))
    ev_flows = [f for f in table.flows if ("udp_dst", MRC_PORT) in f.match]
    assert sorted(dict(f.match)["udp_src"] - EV_PORT_BASE for f in ev_flows) == spec.evs_of_plane(3)
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
        ({"ev_space": 60}, "multiple of planes"),
        ({"ev_space": 8}, "every path"),
    ],
)
def test_bad_fabric_is_refused_with_the_field_named(kwargs, words):
    with pytest.raises(FabricError, match=words):
        FabricSpec(**kwargs)


def test_unknown_key_is_refused():
    with pytest.raises(FabricError, match="unknown fabric key"):
        FabricSpec.from_dict({"planes": 8, "plane": 2})


def test_parse_switch_rejects_foreign_names():
    for name in ["t2p0s0", "t0p9r0", "t1p0s7", "eth0", "t0p0s0"]:
        with pytest.raises(FabricError):
            DEFAULT_FABRIC.parse_switch(name)
