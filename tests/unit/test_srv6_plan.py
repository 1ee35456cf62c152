"""The srv6 addressing plan (topologies/srv6/plan.py) and the route proof's rounds (no root)."""

import ipaddress
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrc_host.routes import route_of
from topologies.fabric import DEFAULT_FABRIC, FabricSpec
from topologies.names import FabricError, Switch
from topologies.srv6.nodes import router_port_mac
from topologies.srv6.route_proof import route_rounds
from topologies.srv6.plan import (CONTAINER_SLOTS, KIND_HOST, LOCATOR_BLOCK, MAX_INDEX, MAX_PLANES, Srv6Plan,
                                  container, shift, split_usid, usid, usids_of)

SPECS = [
    DEFAULT_FABRIC,
    FabricSpec(planes=2, racks=3, spines=4, hosts_per_rack=1, evs_per_plane=4),
    FabricSpec(planes=4, racks=3, spines=3, hosts_per_rack=3, evs_per_plane=7),
]
# The largest fabric FabricSpec allows.
LARGEST = FabricSpec(planes=64, racks=200, spines=64, hosts_per_rack=200, evs_per_plane=64)


def all_routes(spec):
    """(src, dst, plane, t1) of every route between two hosts; t1 None within a rack."""
    for src, dst in itertools.permutations(range(spec.hosts), 2):
        for plane in range(spec.planes):
            if spec.rack_of(src) == spec.rack_of(dst):
                yield src, dst, plane, None
            else:
                for t1 in range(spec.spines):
                    yield src, dst, plane, t1


def switch_usids(plan):
    return [plan.switch_usid(s) for s in plan.spec.switches]


@pytest.mark.parametrize("spec", SPECS + [LARGEST])
def test_every_switch_usid_is_unique_nonzero_and_carries_its_plane(spec):
    plan = Srv6Plan(spec)
    usids = switch_usids(plan)
    assert len(set(usids)) == len(usids) == spec.switch_count
    assert 0 not in usids and all(0 < u <= 0xFFFF for u in usids)
    for switch, value in zip(spec.switches, usids):
        assert split_usid(value)[0] == switch.plane


@pytest.mark.parametrize("spec", SPECS)
def test_host_usids_and_addresses(spec):
    """A host uSID is unique below its T0 and never a switch's; a host's address
    ([its T0][its uSID]) is unique in the fabric and names its host and plane back."""
    plan = Srv6Plan(spec)
    switches = set(switch_usids(plan))
    addresses = {}
    for h in range(spec.hosts):
        for plane in range(spec.planes):
            value = plan.host_usid(h, plane)
            assert value not in switches and split_usid(value) == (plane, KIND_HOST, spec.index_in_rack(h))
            addresses[plan.host_address(h, plane)] = (h, plane)
            assert plan.host_of_address(plan.host_address(h, plane)) == (h, plane)
    assert len(addresses) == spec.hosts * spec.planes
    for rack, plane in itertools.product(range(spec.racks), range(spec.planes)):
        below = [plan.host_usid(h, plane) for h in range(spec.hosts) if spec.rack_of(h) == rack]
        assert len(set(below)) == len(below)


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_the_largest_fabric_fits_every_host_address_apart(data):
    """64 planes x 40,000 hosts are too many to list: any two (host, plane) drawn get apart addresses."""
    plan = Srv6Plan(LARGEST)
    one = (data.draw(st.integers(0, LARGEST.hosts - 1)), data.draw(st.integers(0, LARGEST.planes - 1)))
    two = (data.draw(st.integers(0, LARGEST.hosts - 1)), data.draw(st.integers(0, LARGEST.planes - 1)))
    assert (plan.host_address(*one) == plan.host_address(*two)) == (one == two)
    assert plan.host_of_address(plan.host_address(*one)) == one


def test_what_limits_the_usid_space():
    """6 plane bits and 8 index bits: 64 planes and 256 racks, T1s or hosts per rack,
    above every FabricSpec limit; a route's 4 uSIDs fit the container's 6 slots."""
    assert MAX_PLANES == 64 >= LARGEST.planes
    assert MAX_INDEX + 1 == 256 >= max(LARGEST.racks, LARGEST.spines, LARGEST.hosts_per_rack)
    assert CONTAINER_SLOTS == 6
    with pytest.raises(FabricError, match="6 plane bits"):
        usid(64, KIND_HOST, 0)
    with pytest.raises(FabricError, match="8 index bits"):
        usid(0, KIND_HOST, 256)
    with pytest.raises(FabricError, match="do not fit"):
        container(*[0x100] * 7)


@pytest.mark.parametrize("spec", SPECS)
def test_every_route_decodes_back_and_the_tables_carry_it_through_its_t1(spec):
    plan = Srv6Plan(spec)
    for src, dst, plane, t1 in all_routes(spec):
        address = plan.route_address(src, dst, plane, t1)
        assert address in LOCATOR_BLOCK
        assert plan.decode(address) == (plane, t1, dst)
        hops = plan.trace(src, address)
        assert (hops[-1].node, hops[-1].action) == (spec.host_name(dst), "deliver")
        assert hops[-1].address == plan.host_address(dst, plane)
        crossed = {h.node for h in hops if h.node.startswith("t1")}
        assert crossed == (set() if t1 is None else {spec.t1_name(plane, t1)})
        assert {Switch.parse(h.node).plane for h in hops[1:-1]} == {plane}


@pytest.mark.parametrize("spec", SPECS)
def test_a_same_rack_route_is_the_destination_s_own_address(spec):
    plan = Srv6Plan(spec)
    for src, dst, plane, t1 in all_routes(spec):
        if t1 is None:
            assert plan.route_address(src, dst, plane, None) == plan.host_address(dst, plane)
            assert [h.node for h in plan.trace(src, plan.host_address(dst, plane))] == [
                spec.host_name(src), spec.t0_name(plane, spec.rack_of(src)), spec.host_name(dst)]
            with pytest.raises(FabricError, match="crosses no T1"):
                plan.route_address(src, dst, plane, 0)


@pytest.mark.parametrize("spec", SPECS)
def test_ev_address_takes_the_route_of_route_of(spec):
    plan = Srv6Plan(spec)
    for src, dst in itertools.permutations(range(spec.hosts), 2):
        same_rack = spec.rack_of(src) == spec.rack_of(dst)
        for plane, ev in itertools.product(range(spec.planes), spec.evs):
            want = route_of(ev, plane, spec.spines, same_rack)
            assert plan.decode(plan.ev_address(src, dst, plane, ev))[:2] == want


def test_an_example_route_hop_by_hop():
    """The example of docs/srv6.md: h0 -> h3 over plane 1, T1 1 of the default fabric."""
    plan = Srv6Plan(DEFAULT_FABRIC)
    address = plan.route_address(0, 3, 1, 1)
    assert str(address) == "fcbb:bb00:500:601:501:701::"
    assert [(h.node, str(h.address), h.action) for h in plan.trace(0, address)] == [
        ("h0", "fcbb:bb00:500:601:501:701::", "send"),
        ("t0p1r0", "fcbb:bb00:601:501:701::", "end"),
        ("t0p1r0", "fcbb:bb00:601:501:701::", "forward"),
        ("t1p1s1", "fcbb:bb00:501:701::", "end"),
        ("t1p1s1", "fcbb:bb00:501:701::", "forward"),
        ("t0p1r1", "fcbb:bb00:501:701::", "forward"),
        ("h3", "fcbb:bb00:501:701::", "deliver")]


@pytest.mark.parametrize("spec", SPECS)
def test_router_tables(spec):
    """An End, a /48 per neighbouring switch, a /64 per host of a T0's rack; no prefix twice."""
    plan = Srv6Plan(spec)
    for switch, table in plan.tables.items():
        prefixes = [e.prefix for e in table]
        assert len(set(prefixes)) == len(prefixes)
        assert [e.action for e in table].count("end") == 1 and table[0].prefix == plan.end_prefix(switch)
        assert sorted(e.port for e in table if e.action == "forward") == list(plan.ports(switch))
        want = spec.racks if switch.tier == "t1" else spec.hosts_per_rack + spec.spines
        assert len(table) == 1 + want


def test_wrong_t1_sids_are_dropped_at_the_first_t0():
    plan, spec = Srv6Plan(DEFAULT_FABRIC), DEFAULT_FABRIC
    dst_t0, host = plan.t0_usid(0, 1), plan.host_usid(3, 0)
    for t1 in (plan.t1_usid(1, 0), plan.t1_usid(0, spec.spines)):
        hops = plan.trace(0, container(plan.t0_usid(0, 0), t1, dst_t0, host))
        assert [(h.node, h.action) for h in hops] == [("h0", "send"), ("t0p0r0", "end"), ("t0p0r0", "drop")]


def test_shift_moves_the_usids_up_and_keeps_the_block():
    address = container(0x100, 0x200, 0x300)
    assert shift(address) == container(0x200, 0x300)
    assert shift(shift(shift(address))) == LOCATOR_BLOCK.network_address
    assert usids_of(address) == [0x100, 0x200, 0x300]


@pytest.mark.parametrize("bad, message", [
    ("not-an-address", "not an IPv6 address"),
    ("2001:db8::1", "outside the locator block"),
    ("fcbb:bb00::", "neither"),
    ("fcbb:bb00:100:600:101:300::", "mixes planes"),        # plane 0 T0, plane 1 T1
    ("fcbb:bb00:100:209:101:300::", "does not have"),       # T1 9
    ("fcbb:bb00:2100:2300::", "plane must be"),             # plane 8 of an 8-plane fabric
])
def test_decode_names_what_is_wrong(bad, message):
    with pytest.raises(FabricError, match=message):
        Srv6Plan(DEFAULT_FABRIC).decode(bad)


@pytest.mark.parametrize("args, message", [
    ((0, 0, 0, None), "to itself"),
    ((0, 3, 0, None), "t1 must be"),
    ((0, 3, 0, 2), "t1 must be"),
    ((0, 3, 8, 0), "plane must be"),
    ((0, 4, 0, 0), "host must be"),
    ((-1, 3, 0, 0), "host must be"),
])
def test_route_address_refuses_what_the_fabric_lacks(args, message):
    with pytest.raises(FabricError, match=message):
        Srv6Plan(DEFAULT_FABRIC).route_address(*args)


@pytest.mark.parametrize("spec", SPECS)
def test_route_proof_rounds_name_each_t1_once_and_cover_every_route(spec):
    rounds = route_rounds(spec)
    covered = []
    for probes in rounds:
        t1s = [(p.plane, p.t1) for p in probes if p.t1 is not None]
        assert len(set(t1s)) == len(t1s)  # a T1's counter belongs to one route of the round
        for p in probes:
            covered.append((p.src, p.dst, p.plane, p.t1))
            assert p.src != p.dst and (p.t1 is None) == (spec.rack_of(p.src) == spec.rack_of(p.dst))
    pairs = list(itertools.permutations(range(spec.hosts), 2))
    cross = {(a, b, p, t) for a, b in pairs if spec.rack_of(a) != spec.rack_of(b)
             for p in range(spec.planes) for t in range(spec.spines)}
    same = {(a, b, p, None) for a, b in pairs if spec.rack_of(a) == spec.rack_of(b) for p in range(spec.planes)}
    assert len(covered) == len(set(covered)) and set(covered) == cross | same


def test_router_port_macs_are_unique_and_unicast():
    spec = LARGEST
    plan = Srv6Plan(spec)
    macs = [router_port_mac(s, port) for s in spec.switches[::97] for port in plan.ports(s)]
    assert len(set(macs)) == len(macs)
    assert all(int(m.split(":")[0], 16) & 1 == 0 for m in macs)
    assert ipaddress.IPv6Address("fe80::1").is_link_local
