"""The static forwarding tables of every switch, as plain data.

The controller turns these into OpenFlow 1.3 messages; tests check them
without a switch. In MRC mode nothing here ever changes after install: the
EV in the UDP source port picks the T1 at the T0 (the lab's stand-in for
SRv6 + static routes), and T1s and T0 downlinks forward on destination.

T0 (p, r), highest priority first:
  PRIO_LOCAL     ipv4_dst = a host of this rack      -> that host's port
  PRIO_EV        udp dst MRC_PORT, udp src 0xC000+ev  -> uplink to T1 of the EV
  PRIO_DEFAULT   ipv4_dst in remote rack r's /24     -> group ecmp_group(r)
Each ecmp_group(r) is a select group over the uplinks (OVS hashes it per
address pair, see docs/faults.md): the path of baseline traffic and of
anything that is not MRC. One group per destination rack lets the routing
emulation withdraw a T1 toward one rack only, as BGP does when a T1 loses
its link to that rack.
T1 (p, s):
  PRIO_LOCAL     ipv4_dst in rack r's /24 -> set eth_src = T1 mark, port r+1
Anything else (ARP, IPv6) matches nothing and is dropped: hosts use static ARP.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from mrc_host.wire import BASELINE_PORT, EV_PORT_BASE, MRC_PORT  # noqa: F401 (re-exported)
from topologies.fabric import FabricError, FabricSpec

ETH_TYPE_IPV4 = 0x0800
IP_PROTO_UDP = 17

PRIO_LOCAL = 300
PRIO_EV = 200
PRIO_DEFAULT = 100
ECMP_GROUP_BASE = 1


def ecmp_group(dest_rack: int) -> int:
    """Group id of a T0's ECMP group toward `dest_rack` (one per remote rack,
    so routing can withdraw a T1 for one destination rack only)."""
    return ECMP_GROUP_BASE + dest_rack


def rack_subnet(plane: int, rack: int) -> tuple[str, str]:
    return (f"10.{plane}.{rack}.0", "255.255.255.0")


@dataclass(frozen=True)
class Flow:
    """One flow entry. match: (field, value) pairs in OpenFlow 1.3 OXM names;
    a value may be (value, mask). actions: ("output", port), ("group", id),
    ("set_eth_src", mac)."""

    priority: int
    match: tuple
    actions: tuple


@dataclass(frozen=True)
class Group:
    """A select group: one bucket per output port."""

    group_id: int
    ports: tuple


@dataclass(frozen=True)
class SwitchTable:
    name: str
    dpid: str
    flows: tuple
    groups: tuple


def _t0_table(spec: FabricSpec, plane: int, rack: int) -> SwitchTable:
    name = spec.t0_name(plane, rack)
    flows = []
    for i in range(spec.hosts_per_rack):
        h = rack * spec.hosts_per_rack + i
        flows.append(
            Flow(
                PRIO_LOCAL,
                (("eth_type", ETH_TYPE_IPV4), ("ipv4_dst", spec.host_ip(h, plane))),
                (("output", spec.t0_host_port(h)),),
            )
        )
    for ev in spec.evs:
        flows.append(
            Flow(
                PRIO_EV,
                (
                    ("eth_type", ETH_TYPE_IPV4),
                    ("ip_proto", IP_PROTO_UDP),
                    ("udp_dst", MRC_PORT),
                    ("udp_src", EV_PORT_BASE + ev),
                ),
                (("output", spec.t0_uplink_port(spec.ev_t1(ev))),),
            )
        )
    uplinks = tuple(spec.t0_uplink_port(s) for s in range(spec.spines))
    groups = []
    for r in range(spec.racks):
        if r == rack:
            continue
        flows.append(Flow(PRIO_DEFAULT, (("eth_type", ETH_TYPE_IPV4), ("ipv4_dst", rack_subnet(plane, r))),
                          (("group", ecmp_group(r)),)))
        groups.append(Group(ecmp_group(r), uplinks))
    return SwitchTable(name, spec.dpid(name), tuple(flows), tuple(groups))


def _t1_table(spec: FabricSpec, plane: int, spine: int) -> SwitchTable:
    name = spec.t1_name(plane, spine)
    mark = spec.t1_mac(plane, spine)
    flows = tuple(
        Flow(
            PRIO_LOCAL,
            (("eth_type", ETH_TYPE_IPV4), ("ipv4_dst", rack_subnet(plane, r))),
            (("set_eth_src", mark), ("output", spec.t1_downlink_port(r))),
        )
        for r in range(spec.racks)
    )
    return SwitchTable(name, spec.dpid(name), flows, ())


def switch_table(spec: FabricSpec, name: str) -> SwitchTable:
    """The complete static table of one switch."""
    tier, plane, index = spec.parse_switch(name)
    return _t0_table(spec, plane, index) if tier == "t0" else _t1_table(spec, plane, index)


def all_tables(spec: FabricSpec) -> dict[str, SwitchTable]:
    return {name: switch_table(spec, name) for name in spec.switch_names}


def trace(spec: FabricSpec, src: int, dst: int, plane: int, ev: int | None, udp_dst: int = MRC_PORT):
    """Follow a UDP packet through the static tables; returns the hops as
    (switch, out_port) and the T1 mark seen by the receiver (None if the
    packet stayed in its rack). Raises FabricError if it gets lost.
    Used by tests to prove the tables route every EV where the map says."""
    dst_ip = spec.host_ip(dst, plane)
    udp_src = EV_PORT_BASE + ev if ev is not None else 50000
    node = spec.t0_name(plane, spec.rack_of(src))
    hops, mark = [], None
    for _ in range(4):
        table = switch_table(spec, node)
        flow = _first_match(table, dst_ip, udp_dst, udp_src)
        if flow is None:
            raise FabricError(f"{node}: no flow for {dst_ip}")
        port = None
        for action, arg in flow.actions:
            if action == "set_eth_src":
                mark = arg
            elif action == "output":
                port = arg
            elif action == "group":
                # ECMP: any bucket is valid; take the first for a deterministic trace
                port = next(g for g in table.groups if g.group_id == arg).ports[0]
        hops.append((node, port))
        nxt = _peer(spec, node, port)
        if nxt is None:
            raise FabricError(f"{node} port {port} leads nowhere")
        if nxt == spec.host_name(dst):
            return hops, mark
        node = nxt
    raise FabricError("forwarding loop")


def _first_match(table: SwitchTable, dst_ip: str, udp_dst: int, udp_src: int):
    for flow in sorted(table.flows, key=lambda f: -f.priority):
        ok = True
        for key, value in flow.match:
            if key == "ipv4_dst":
                if isinstance(value, tuple):
                    net = ipaddress.ip_network(f"{value[0]}/{value[1]}")
                    ok = ipaddress.ip_address(dst_ip) in net
                else:
                    ok = dst_ip == value
            elif key == "udp_dst":
                ok = udp_dst == value
            elif key == "udp_src":
                ok = udp_src == value
            if not ok:
                break
        if ok:
            return flow
    return None


def _peer(spec: FabricSpec, node: str, port: int):
    for link in spec.links:
        if link.b == node and link.b_port == port:
            return link.a
        if link.a == node and link.a_port == port and link.kind == "t0-t1":
            return link.b
    return None
