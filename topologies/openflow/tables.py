"""The static forwarding tables of every switch, as plain data.

The controller turns these into OpenFlow 1.3 messages; tests check them
without a switch. In MRC mode nothing here ever changes after install: the
EV in the UDP source port picks the T1 at the T0 (the lab's stand-in for
SRv6 + static routes), and T1s and T0 downlinks forward on destination.

T0 (p, r), highest priority first:
  PRIO_MAPPER_UP  in_port = a host's port, udp dst MAPPER_PORT, udp src 0xC000+ev
                                                      -> uplink to T1 of the EV
  PRIO_MAPPER_HOP udp dst MAPPER_PORT, udp src MAPPER_PORT -> back out IN_PORT
  PRIO_LOCAL     ipv4_dst = a host of this rack      -> that host's port
  PRIO_EV        udp dst MRC_PORT, udp src 0xC000+ev  -> uplink to T1 of the EV
  PRIO_DEFAULT   ipv4_dst in remote rack r's /24     -> group ecmp_group(r)
Each ecmp_group(r) is a select group over the uplinks (OVS hashes it per
address pair, see docs/faults.md): the path of baseline traffic and of
anything that is not MRC. One group per destination rack lets the routing
emulation withdraw a T1 toward one rack only, as BGP does when a T1 loses
its link to that rack.
T1 (p, s):
  PRIO_MAPPER_HOP udp dst MAPPER_PORT      -> set eth_src = T1 mark, back out IN_PORT
  PRIO_LOCAL     ipv4_dst in rack r's /24 -> set eth_src = T1 mark, port r+1
Anything else (ARP, IPv6) matches nothing and is dropped: hosts use static ARP.

Clustermapper probes (lab/inhost/mapper.py, docs/mapper.md) go to the
sender's own address on UDP port MAPPER_PORT, and the fabric reflects them:
  T0-hop probe  udp src MAPPER_PORT: the T0 sends it back out its ingress
                port (OpenFlow IN_PORT: OVS drops an output to the ingress
                port otherwise), proving the NIC link and the T0.
  T1 probe      udp src 0xC000+ev: the T0 steers it up like MRC data (the
                T1 of the EV), the T1 marks it and reflects it back down to
                the same T0, whose PRIO_LOCAL entry delivers it to the host.
                The in_port match keeps the T0 from sending the returning
                probe up again.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from mrc_host.wire import BASELINE_PORT, EV_PORT_BASE, MAPPER_PORT, MRC_PORT  # noqa: F401 (re-exported)
from topologies.fabric import FabricError, FabricSpec
from topologies.routing import ecmp_group

ETH_TYPE_IPV4 = 0x0800
IP_PROTO_UDP = 17

PRIO_MAPPER_UP = 410
PRIO_MAPPER_HOP = 400
PRIO_LOCAL = 300
PRIO_EV = 200
PRIO_DEFAULT = 100
OFPP_IN_PORT = 0xFFFFFFF8  # OpenFlow 1.3 reserved port: "back out the port it came in on"


def mapper_ev(spec: FabricSpec, t1: int) -> int:
    """The EV a mapper probe toward T1 `t1` carries: the first EV that MRC
    steers to it (fabric.ev_to_t1), so the probe takes data's uplink."""
    return spec.evs_for_t1(t1)[0]


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


def _mapper_match(udp_src: int) -> tuple:
    return (("eth_type", ETH_TYPE_IPV4), ("ip_proto", IP_PROTO_UDP), ("udp_dst", MAPPER_PORT), ("udp_src", udp_src))


def _t0_mapper_flows(spec: FabricSpec, rack: int) -> list[Flow]:
    """T1 probes from each host's port up to their EV's T1; T0-hop probes reflected."""
    flows = []
    for i in range(spec.hosts_per_rack):
        port = spec.t0_host_port(rack * spec.hosts_per_rack + i)
        for t1 in range(spec.spines):
            ev = mapper_ev(spec, t1)
            flows.append(Flow(PRIO_MAPPER_UP, (("in_port", port), *_mapper_match(EV_PORT_BASE + ev)),
                              (("output", spec.t0_uplink_port(spec.ev_t1(ev))),)))
    flows.append(Flow(PRIO_MAPPER_HOP, _mapper_match(MAPPER_PORT), (("output", OFPP_IN_PORT),)))
    return flows


def _t0_table(spec: FabricSpec, plane: int, rack: int) -> SwitchTable:
    name = spec.t0_name(plane, rack)
    flows = _t0_mapper_flows(spec, rack)
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
    reflect = Flow(PRIO_MAPPER_HOP,
                   (("eth_type", ETH_TYPE_IPV4), ("ip_proto", IP_PROTO_UDP), ("udp_dst", MAPPER_PORT)),
                   (("set_eth_src", mark), ("output", OFPP_IN_PORT)))
    flows = (reflect,) + tuple(
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


def trace(spec: FabricSpec, src: int, dst: int, plane: int, ev: int | None, udp_dst: int = MRC_PORT,
          udp_src: int | None = None):
    """Follow a UDP packet through the static tables; returns the hops as
    (switch, out_port) and the T1 mark seen by the receiver (None if the
    packet stayed in its rack). Raises FabricError if it gets lost.
    udp_src defaults to the EV's source port (50000 without an EV); a
    mapper probe is traced with dst == src (it comes back to its sender).
    Used by tests to prove the tables route every EV where the map says."""
    dst_ip = spec.host_ip(dst, plane)
    if udp_src is None:
        udp_src = EV_PORT_BASE + ev if ev is not None else 50000
    node = spec.t0_name(plane, spec.rack_of(src))
    in_port = spec.t0_host_port(src)
    hops, mark = [], None
    for _ in range(4):
        table = switch_table(spec, node)
        flow = _first_match(table, dst_ip, udp_dst, udp_src, in_port)
        if flow is None:
            raise FabricError(f"{node}: no flow for {dst_ip}")
        port = None
        for action, arg in flow.actions:
            if action == "set_eth_src":
                mark = arg
            elif action == "output":
                if arg == in_port:  # OVS drops it: only OFPP_IN_PORT sends a packet back
                    raise FabricError(f"{node}: output to the ingress port {in_port} is dropped")
                port = in_port if arg == OFPP_IN_PORT else arg
            elif action == "group":
                # ECMP: any bucket is valid; take the first for a deterministic trace
                port = next(g for g in table.groups if g.group_id == arg).ports[0]
        hops.append((node, port))
        nxt = _peer(spec, node, port)
        if nxt is None:
            raise FabricError(f"{node} port {port} leads nowhere")
        if nxt == spec.host_name(dst):
            return hops, mark
        in_port = _peer_port(spec, node, port)
        node = nxt
    raise FabricError("forwarding loop")


def _first_match(table: SwitchTable, dst_ip: str, udp_dst: int, udp_src: int, in_port: int):
    fields = {"udp_dst": udp_dst, "udp_src": udp_src, "in_port": in_port}
    for flow in sorted(table.flows, key=lambda f: -f.priority):
        ok = True
        for key, value in flow.match:
            if key == "ipv4_dst":
                if isinstance(value, tuple):
                    net = ipaddress.ip_network(f"{value[0]}/{value[1]}")
                    ok = ipaddress.ip_address(dst_ip) in net
                else:
                    ok = dst_ip == value
            elif key in fields:
                ok = fields[key] == value
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


def _peer_port(spec: FabricSpec, node: str, port: int) -> int:
    """The port on the far side of (node, port): where the packet enters the next switch."""
    for link in spec.links:
        if link.b == node and link.b_port == port:
            return link.a_port
        if link.a == node and link.a_port == port and link.kind == "t0-t1":
            return link.b_port
    raise FabricError(f"{node} port {port} leads nowhere")
