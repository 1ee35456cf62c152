"""The baseline's plain IPv6 addressing on the srv6 data plane (topologies/srv6/plan.py):
every address routed, same rack direct, one path per T1 between racks, withdrawals
as topologies.routing.RoutingEmulation makes them, and no overlap with the uSID space."""

import ipaddress
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies.routing import RoutingEmulation
from topologies.system.clock import ManualClock
from topologies.fabric import FabricSpec
from topologies.names import FabricError, Switch
from topologies.srv6.builder import baseline_route_line
from topologies.srv6.plan import BASELINE_BLOCK, LOCATOR_BLOCK, Srv6Plan
from topologies.routing import ecmp_group

DEFAULT = Srv6Plan(FabricSpec())
THREE_T1S = Srv6Plan(FabricSpec(planes=2, racks=3, spines=3, hosts_per_rack=2))


def test_the_default_fabric_addresses():
    assert str(DEFAULT.baseline_address(0, 0)) == "fd00:ba5e::1:0"
    assert str(DEFAULT.baseline_address(3, 1)) == "fd00:ba5e:1:1::1:3"
    assert str(DEFAULT.baseline_plane_prefix(7)) == "fd00:ba5e:7::/48"
    assert str(DEFAULT.baseline_rack_prefix(1, 1)) == "fd00:ba5e:1:1::/64"


@pytest.mark.parametrize("plan", [DEFAULT, THREE_T1S])
def test_every_address_is_unique_decodes_and_lies_in_its_prefixes(plan):
    spec, seen = plan.spec, set()
    for h, plane in itertools.product(range(spec.hosts), range(spec.planes)):
        address = plan.baseline_address(h, plane)
        assert address not in seen
        seen.add(address)
        assert plan.baseline_host_of_address(address) == (h, plane)
        assert address in plan.baseline_plane_prefix(plane)
        assert address in plan.baseline_rack_prefix(plane, spec.rack_of(h))
        assert address in BASELINE_BLOCK and address not in LOCATOR_BLOCK
        assert int(address) & 0xFFFFFFFF != 0  # never an all-zero interface identifier


def test_no_baseline_route_overlaps_the_usid_space():
    assert not BASELINE_BLOCK.overlaps(LOCATOR_BLOCK)
    for switch in DEFAULT.spec.switches:
        for route in DEFAULT.baseline_table(switch):
            assert route.prefix.subnet_of(BASELINE_BLOCK)
            assert all(not route.prefix.overlaps(entry.prefix) for entry in DEFAULT.router_table(switch))
    for h, plane in itertools.product(range(DEFAULT.spec.hosts), range(DEFAULT.spec.planes)):
        assert not DEFAULT.baseline_plane_prefix(plane).overlaps(DEFAULT.host_gateway_prefix(h, plane))


@pytest.mark.parametrize("plan", [DEFAULT, THREE_T1S])
def test_every_address_is_routed_from_every_host(plan):
    """Same rack: straight through the T0. Other racks: one path per T1, each
    crossing that T1 only, on the destination's plane."""
    spec = plan.spec
    for src, dst, plane in itertools.product(range(spec.hosts), range(spec.hosts), range(spec.planes)):
        if src == dst:
            continue
        paths = plan.baseline_paths(src, dst, plane)
        t0 = str(Switch.t0(plane, spec.rack_of(src)))
        if spec.rack_of(src) == spec.rack_of(dst):
            assert paths == [(f"h{src}", t0, f"h{dst}")]
        else:
            far = str(Switch.t0(plane, spec.rack_of(dst)))
            assert paths == [(f"h{src}", t0, str(Switch.t1(plane, s)), far, f"h{dst}")
                             for s in range(spec.spines)]


def test_a_t0_routes_other_racks_over_every_uplink_and_its_hosts_directly():
    spec = THREE_T1S.spec
    table = {r.prefix: r.ports for r in THREE_T1S.baseline_table(Switch.t0(1, 2))}
    assert table == {
        ipaddress.IPv6Network(THREE_T1S.baseline_address(4, 1)): (spec.t0_host_port(4),),
        ipaddress.IPv6Network(THREE_T1S.baseline_address(5, 1)): (spec.t0_host_port(5),),
        THREE_T1S.baseline_rack_prefix(1, 0): tuple(spec.t0_uplink_port(s) for s in range(3)),
        THREE_T1S.baseline_rack_prefix(1, 1): tuple(spec.t0_uplink_port(s) for s in range(3)),
    }
    t1 = {r.prefix: r.ports for r in THREE_T1S.baseline_table(Switch.t1(1, 2))}
    assert t1 == {THREE_T1S.baseline_rack_prefix(1, r): (spec.t1_downlink_port(r),) for r in range(3)}


def test_a_withdrawn_link_leaves_every_route_through_it():
    """Link (rack 0, T1 1) withdrawn: rack 0's T0 stops using T1 1 toward every
    rack, the other T0s stop using it toward rack 0, and T1 1 drops rack 0's route."""
    spec, withdrawn = THREE_T1S.spec, frozenset({(0, 1)})
    assert THREE_T1S.baseline_paths(0, 2, 0, withdrawn) == [
        ("h0", "t0p0r0", f"t1p0s{s}", "t0p0r1", "h2") for s in (0, 2)]
    assert THREE_T1S.baseline_paths(4, 0, 0, withdrawn) == [
        ("h4", "t0p0r2", f"t1p0s{s}", "t0p0r0", "h0") for s in (0, 2)]
    assert len(THREE_T1S.baseline_paths(2, 4, 0, withdrawn)) == 3  # racks 1 and 2: untouched
    t1 = {r.prefix: r.ports for r in THREE_T1S.baseline_rack_routes(Switch.t1(0, 1), withdrawn)}
    assert t1[THREE_T1S.baseline_rack_prefix(0, 0)] == ()
    everything = frozenset((r, s) for r in range(spec.racks) for s in range(spec.spines))
    assert THREE_T1S.baseline_paths(0, 2, 0, everything) == []


@settings(max_examples=60, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 2), st.integers(0, 2))))
def test_withdrawals_match_the_routing_emulation(links):
    """The T0 routes the plan gives for a set of withdrawn links are the ECMP groups
    topologies.routing computes for it: one rule for both data planes."""
    spec = THREE_T1S.spec
    emulation = RoutingEmulation(spec, 1.0, 1.0, on_apply=lambda *a: None, clock=ManualClock())
    for rack, s in links:
        emulation.withdrawn[spec.t0_name(0, rack)].add(spec.t0_uplink_port(s))
    for rack in range(spec.racks):
        routes = THREE_T1S.baseline_rack_routes(Switch.t0(0, rack), frozenset(links))
        groups = emulation.groups(spec.t0_name(0, rack))
        assert {r.prefix: list(r.ports) for r in routes} == {
            THREE_T1S.baseline_rack_prefix(0, dest): groups[ecmp_group(dest)]
            for dest in range(spec.racks) if dest != rack}


def test_route_lines_are_plain_or_multipath():
    spec = DEFAULT.spec
    t0 = Switch.t0(1, 0)
    rack_route = next(r for r in DEFAULT.baseline_table(t0) if r.prefix.prefixlen == 64)
    assert baseline_route_line(spec, t0, rack_route) == (
        "route add fd00:ba5e:1:1::/64 nexthop via fe80::1 dev t0p1r0-eth3 nexthop via fe80::1 dev t0p1r0-eth4")
    host_route = DEFAULT.baseline_table(t0)[0]
    assert baseline_route_line(spec, t0, host_route) == "route add fd00:ba5e:1::1:0/128 via fe80::1 dev t0p1r0-eth1"


@pytest.mark.parametrize("address", ["fd00:ba5e:1:1::1:0",   # h0 lives in rack 0
                                     "fd00:ba5e:8::1:0",      # no plane 8
                                     "fd00:ba5e::1:9",        # no host 9
                                     "fd00:ba5e::2:0",        # not the host tag
                                     "fcbb:bb00:100:300::",   # a uSID address
                                     "not an address"])
def test_what_is_no_host_baseline_address_is_named(address):
    with pytest.raises(FabricError, match="baseline address|not an IPv6 address"):
        DEFAULT.baseline_host_of_address(address)


def test_the_largest_fabric_fits():
    spec = FabricSpec(planes=64, racks=200, spines=64, hosts_per_rack=200, evs_per_plane=64)
    plan = Srv6Plan(spec)
    last = spec.hosts - 1
    address = plan.baseline_address(last, 63)
    assert plan.baseline_host_of_address(address) == (last, 63)
