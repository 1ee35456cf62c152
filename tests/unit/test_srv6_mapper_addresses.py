"""The Clustermapper's srv6 probe addresses (Srv6Plan.reflection_address): each is a
source route that crosses exactly the element it probes and returns to its sender; the
probe frame, the hop-limit proof, and the heartbeat's srv6 addresses (no root)."""

import dataclasses
import ipaddress
import itertools
import struct

import pytest

from lab.live.fidelity import heartbeat_addresses
from topologies.mapper_probe_wire import MAGIC, PAYLOAD
from topologies.mapper_probe_wire import Target
from topologies.srv6.mapper_probes import SEND_HOP_LIMIT, Srv6Probes, probe_frame
from topologies.fabric import DEFAULT_FABRIC, FabricSpec
from topologies.names import FabricError, Host, Switch
from topologies.srv6.plan import Hop, Srv6Plan, usids_of
from mrc_host.wire import MAPPER_PORT
from topologies.dataplanes import dataplane_for

SPECS = [
    DEFAULT_FABRIC,
    FabricSpec(planes=2, racks=3, spines=4, hosts_per_rack=1, evs_per_plane=4),
    FabricSpec(planes=3, racks=2, spines=3, hosts_per_rack=3, evs_per_plane=3),
]


def probes(spec):
    """(host, plane, t1 or None) of every probe of every host."""
    for h, plane in itertools.product(range(spec.hosts), range(spec.planes)):
        for t1 in (None, *range(spec.spines)):
            yield h, plane, t1


def forwarding_nodes(hops):
    """The routers that forwarded the packet, in order (an End and its forward are one visit)."""
    return [hop.node for hop in hops if hop.action == "forward"]


def links_crossed(hops):
    """Each cable crossed, as the unordered pair of the nodes at its ends."""
    nodes = [hops[0].node] + forwarding_nodes(hops) + [hops[-1].node]
    return {frozenset(pair) for pair in zip(nodes, nodes[1:])}


@pytest.mark.parametrize("spec", SPECS)
def test_every_probe_returns_to_its_sender_through_exactly_its_elements(spec):
    plan = Srv6Plan(spec)
    for h, plane, t1 in probes(spec):
        address = plan.reflection_address(h, plane, t1)
        hops = plan.trace(h, address)
        t0 = str(Switch.t0(plane, spec.rack_of(h)))
        me = str(Host(h))
        assert hops[0].node == me, (h, plane, t1, hops)
        assert hops[-1] == Hop(me, plan.host_address(h, plane), "deliver"), (h, plane, t1, hops)
        if t1 is None:
            assert forwarding_nodes(hops) == [t0]
            assert links_crossed(hops) == {frozenset((me, t0))}
        else:
            t1_name = str(Switch.t1(plane, t1))
            assert forwarding_nodes(hops) == [t0, t1_name, t0]
            assert links_crossed(hops) == {frozenset((me, t0)), frozenset((t0, t1_name))}
        assert len(forwarding_nodes(hops)) == plan.reflection_routers(t1)


@pytest.mark.parametrize("spec", SPECS)
def test_probe_addresses_are_distinct_and_never_a_host_or_route_address(spec):
    """Distinct per (host, plane, t1), and none is an address anything else sends to:
    a probe is never mistaken for a host's own traffic on the way."""
    plan = Srv6Plan(spec)
    addresses = [plan.reflection_address(*p) for p in probes(spec)]
    assert len(set(addresses)) == len(addresses)
    others = {plan.host_address(h, p) for h in range(spec.hosts) for p in range(spec.planes)}
    others |= {plan.route_address(s, d, p, t) for s, d in itertools.permutations(range(spec.hosts), 2)
               for p in range(spec.planes)
               for t in ((None,) if spec.rack_of(s) == spec.rack_of(d) else range(spec.spines))}
    assert not others & set(addresses)


def test_the_example_addresses():
    """h3 (rack 1) on plane 1 of the default fabric: docs/mapper.md's table."""
    plan = Srv6Plan(DEFAULT_FABRIC)
    assert str(plan.reflection_address(3, 1)) == "fcbb:bb00:501:501:701::"
    assert str(plan.reflection_address(3, 1, 0)) == "fcbb:bb00:501:600:501:701::"
    assert usids_of(plan.reflection_address(0, 0, 1)) == [0x0100, 0x0201, 0x0100, 0x0300]


@pytest.mark.parametrize("args, message", [
    ((4, 0, None), r"host must be a number in 0-3, got 4"),
    ((0, 8, None), r"plane must be a number in 0-7, got 8"),
    ((0, 0, 2), r"t1 must be a T1 number in 0-1, got 2"),
    ((0, 0, True), r"t1 must be a T1 number in 0-1, got True"),
])
def test_reflection_address_refuses_what_the_fabric_lacks(args, message):
    with pytest.raises(FabricError, match=message):
        Srv6Plan(DEFAULT_FABRIC).reflection_address(*args)


def test_a_probe_frame_is_ipv6_udp_to_its_reflection_address_with_no_checksum():
    plan = Srv6Plan(DEFAULT_FABRIC)
    src, dst = plan.host_address(3, 1), plan.reflection_address(3, 1, 0)
    payload = PAYLOAD.pack(MAGIC, 3, 7)
    frame = probe_frame(b"\x02" * 6, b"\x04" * 6, src.packed, dst.packed, payload)
    assert frame[:12] == b"\x02" * 6 + b"\x04" * 6 and frame[12:14] == b"\x86\xdd"
    version_class_flow, length, next_header, hop_limit = struct.unpack_from("!IHBB", frame, 14)
    assert version_class_flow >> 28 == 6 and next_header == 17 and hop_limit == SEND_HOP_LIMIT
    assert ipaddress.IPv6Address(frame[22:38]) == src and ipaddress.IPv6Address(frame[38:54]) == dst
    assert struct.unpack_from("!HHHH", frame, 54) == (MAPPER_PORT, MAPPER_PORT, 8 + len(payload), 0)
    assert length == 8 + len(payload) and frame[62:] == payload


def test_a_reply_proves_its_path_by_the_routers_it_crossed():
    proves = Srv6Probes.proves
    assert proves(Target(1), 1, SEND_HOP_LIMIT - 1)
    assert proves(Target(1, 0), 1, SEND_HOP_LIMIT - 3)
    assert not proves(Target(1, 0), 1, SEND_HOP_LIMIT - 1)  # turned back at the T0: not via the T1
    assert not proves(Target(1), 0, SEND_HOP_LIMIT - 1)     # on another plane's socket
    assert not proves(Target(1), 1, None)                   # no hop limit given


def test_heartbeat_addresses_cross_every_plane_and_t1_on_srv6():
    spec = dataclasses.replace(DEFAULT_FABRIC, dataplane="srv6")
    plan = Srv6Plan(spec)
    addresses = heartbeat_addresses(dataplane_for(spec), 0, 3)
    assert len(set(addresses)) == spec.planes * spec.spines
    assert {plan.decode(a) for a in addresses} == {(p, t1, 3) for p in range(spec.planes) for t1 in range(2)}
    assert heartbeat_addresses(dataplane_for(spec), 0, 1) == [str(plan.host_address(1, p)) for p in range(spec.planes)]
    openflow = dataclasses.replace(DEFAULT_FABRIC, dataplane="openflow")
    assert heartbeat_addresses(dataplane_for(openflow), 0, 3) == [openflow.host_ip(3, p) for p in range(8)]
