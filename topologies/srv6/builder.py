"""Make a FabricSpec real as the srv6 data plane: every switch a kernel IPv6
router in its own network namespace, static routes installed once, the
sender choosing the path by the address it writes (topologies/srv6/plan.py,
docs/srv6.md).

    fabric = build_srv6_fabric(spec)     # hosts, routers, shaped veths, every route
    verify_routes(fabric)                # topologies/srv6/route_proof.py: every route proved
    fabric.stop()                        # ends every namespace: nothing is left

Each node is a Mininet node (its own shell and network namespace, named as
the lab names switches and hosts, so the lab's cleanup finds it). Every veth
is created straight into its two namespaces by one `ip -batch` in the root
namespace (none ever lives there), each end with a fabric-unique ifindex
(`port_ifindex`), then each node is configured by one script: its sysctls
were set when it started, the script brings its ports up and installs its
neighbours, routes and (a host) its shaping in one `ip -batch` and one
`tc -batch`.

Links are point-to-point, so on every port `fe80::1` names the node at the
other end: a permanent neighbour entry with that node's MAC, the gateway of
every static route. No interface needs a link-local address, nothing runs
neighbour discovery or duplicate address detection, and the ports carry no
IPv6 chatter of their own.

Over several servers (`placement=`, topologies/cluster/placement.py, docs/cluster.md): each plane's
routers run on its server (topologies/srv6/remote_nodes.py RemoteRouter), the cables within a server are
veths made there the same way, and the host-T0 cables to another server's planes are
CrossingCables (veths at both ports, VXLAN between). Each other server's router ports get the
port program through that server's agent (`agents=`, topologies/cluster/server_channel.py).

Shaping as on the OpenFlow fabric: a host's NIC ports by the same tbf with a
control band (topologies/build.py host_nic_shaper); every router port by the switch port program
(trimming, ECN, priority classes, fault hooks; switch_port_configs),
attached at its egress from inside its router's namespace. The program's
maps are keyed by ifindex, which the kernel keeps unique per namespace
only: so every veth end gets one unique in the fabric, in a range far above
the root namespace's (checked at build).
"""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from dataclasses import dataclass, field

from topologies.build import (BuildError, check_port_program, host_nic_shaper, require_root, run_node_script, sh,
                               switch_port_configs)
from topologies.port_program import port_program
from topologies.fabric import FabricSpec
from topologies.names import Host, Switch
from topologies.cluster.node_access import LocalNode, RemoteNode
from topologies.port_program.pause_controller import PauseController
from topologies.cluster.placement import Placement
from topologies.srv6.nodes import (FIRST_IFINDEX, cable_end, mininet_node_classes, port_ifindex,
                                   router_port_mac)
from topologies.srv6.plan import BaselineRoute, Srv6Plan
from topologies.srv6.un_engine import END_IFINDEX, UnEngine, chosen_engine

DATAPATH = "kernel IPv6 router"  # what forwards: the kernel, in each router namespace; the engine of its uN End is named after it
# The device every router's End route is attached to: an ifb, always up and never a
# port, because the kernel deletes a route whose port is set down (a link fault) and
# refuses a non-local route on `lo` (it makes it a reject route). Measured: End counts
# and forwards on it. With the eBPF engine (topologies/srv6/un_engine.py) the End route
# is a plain route to it, and a packet the program did not shift is dropped there.
END_DEVICE = "usid"
# `ip -j route` names the default route "default".
DEFAULT_ROUTE = "::/0"
# On every point-to-point port: the node at the other end (see the module docstring).
PEER = "fe80::1"
@dataclass
class Srv6Fabric:
    """A running srv6 fabric (a topologies/dataplane.py Fabric), plus its routers."""

    spec: FabricSpec
    plan: Srv6Plan
    engine: UnEngine                             # who runs every router's uN End (un_engine.py)
    datapath: str = DATAPATH                     # and its engine's name, once built
    build_s: float = 0.0
    hosts: dict = field(default_factory=dict)    # name -> Mininet node
    routers: dict = field(default_factory=dict)  # name -> Mininet node
    pauses: PauseController | None = None        # the lossless mode's (spec.lossless)
    placement: Placement | None = None           # planes on other servers (topologies/cluster/placement.py)
    crossings: list = field(default_factory=list)  # the cables between servers (CrossingCable, topologies/srv6/remote_nodes.py)
    relays: list = field(default_factory=list)     # and their CarrierRelays, one per other server
    agents: dict = field(default_factory=dict)     # server -> its agent's channel (topologies/cluster/server_channel.py)

    def host(self, h: int):
        return self.hosts[self.spec.host_name(h)]

    def router(self, switch: Switch | str):
        return self.routers[str(switch)]

    def access(self, name: Switch | str) -> LocalNode | RemoteNode:
        """Where a node's commands run: its namespace here (its shell's pid), or its server's agent."""
        server = self.server_of(str(name))
        if server is None:
            return LocalNode(self.node(str(name)).pid)
        return RemoteNode(server, str(name), self.agents[server])

    def switch_ports(self) -> list[str]:
        """Every router port; each lives in its router's namespace (`port_node`)."""
        return [self.spec.switch_intf(switch, port) for switch in self.spec.switches
                for port in self.plan.ports(switch)]

    def node(self, name: str):
        """The Mininet node (router or host) named `name`."""
        return self.routers.get(name) or self.hosts[name]

    def port_node(self, ifname: str):
        """The Mininet node (router or host) whose namespace holds interface `ifname`."""
        return self.node(ifname.rsplit("-eth", 1)[0])

    def server_of(self, name: str) -> str | None:
        """The server a node (router or host) runs on; None: this one (the runner's)."""
        if self.placement is None:
            return None
        server = self.placement.server_of(name)
        return None if server == self.placement.servers[0] else server

    def port_pids(self) -> dict[str, int]:
        """Every router port here -> the pid of its router's shell (a process in its namespace);
        another server's ports are reached through its agent, by their router's name."""
        return {port: self.port_node(port).pid for port in self.switch_ports()
                if self.server_of(self.port_node(port).name) is None}

    def stop(self) -> None:
        """End every node's shell: its namespace goes, and the veths in it (a host's
        only once the processes started in it have ended too: the lab's cleanup ends them)."""
        if self.pauses is not None:
            self.pauses.stop()
        for relay in self.relays:
            relay.stop()
        for cable in self.crossings:     # their tunnel ends and patch namespaces
            cable.stop()
        for node in [*self.hosts.values(), *self.routers.values()]:
            node.terminate()
        self.hosts, self.routers, self.crossings, self.relays = {}, {}, [], []


def _check_before_build(spec: FabricSpec, shaping: bool, other_servers: list[str], agents: dict,
                        engine: UnEngine | None) -> UnEngine:
    """Refuse a build that cannot succeed, before anything is made: shaping on a server without
    its agent, no root, no port program (here or on another server), ifindexes out of range, a
    uN engine this kernel refuses. Returns the engine (chosen_engine() when None)."""
    without = [server for server in other_servers if server not in agents]
    if shaping and without:
        raise BuildError(f"shaping on server(s) {', '.join(without)} needs their agent (topologies/cluster/server_channel.py, "
                         "docs/cluster.md): open one to each, or build the fabric with shaping off")
    require_root()
    if shaping:
        check_port_program()
        for agent in agents.values():
            agent.call("port_program", call="check_prerequisites")
    check_ifindex_range(spec)
    engine = engine or chosen_engine()
    refused = engine.unavailable()
    if refused:
        raise BuildError(f"uN engine {engine.name}: {refused}")
    return engine


def build_srv6_fabric(spec: FabricSpec, shaping: bool = True, trimming: bool = True,
                      placement: Placement | None = None, agents: dict | None = None,
                      engine: UnEngine | None = None) -> Srv6Fabric:
    """Build the srv6 fabric and return it running, every static route installed.

    shaping: shape every port to spec.link_mbps (host NICs by host_nic_shaper, router ports
        through the switch port program); off only for functional tests
    trimming: router ports trim DATA packets on congestion (True) or tail-drop them
    placement: whole planes on other servers (topologies/cluster/placement.py, docs/cluster.md), the
        hosts and the first server's planes here; None: all here
    agents: over several servers, each other server's agent (topologies/cluster/server_channel.py
        ServerChannel, open): the port program there is attached through it
    engine: who runs the routers' uN End (topologies/srv6/un_engine.py); None: the one
        chosen_engine() picks for this kernel"""
    # mininet loads in ~0.1 s: only building or stopping a fabric pays for it
    from mininet.log import setLogLevel

    spread = placement is not None and len(placement.servers) > 1
    agents = dict(agents or {})
    engine = _check_before_build(spec, shaping, placement.servers[1:] if spread else [], agents, engine)
    setLogLevel("error")
    started = time.monotonic()
    fabric = Srv6Fabric(spec=spec, plan=Srv6Plan(spec), engine=engine, datapath=f"{DATAPATH} (uN End: {engine.name})",
                        placement=placement if spread else None, agents=agents)
    node_class, router_class = mininet_node_classes()
    try:
        for name in spec.host_names:  # one by one: stop() ends those made before a failure
            fabric.hosts[name] = node_class(name)
        if spread:
            _make_spread(fabric, router_class)
        else:
            for name in spec.switch_names:
                fabric.routers[name] = router_class(name)
            sh(["ip", "-batch", "-"], input=_veth_batch(fabric, range(len(spec.links))))
        for h in range(spec.hosts):
            run_node_script(fabric.host(h), _host_script(fabric, h, shaping))
        prepared = _prepare_engine(fabric)
        for switch in spec.switches:
            _configure_router(fabric, switch, prepared[fabric.server_of(str(switch))])
        if shaping:
            _attach_port_program(fabric, trimming)
        if shaping and spec.lossless:
            fabric.pauses = PauseController(fabric)
            fabric.pauses.start()
    except BaseException:
        fabric.stop()
        raise
    fabric.build_s = time.monotonic() - started
    return fabric


def check_ifindex_range(spec: FabricSpec) -> None:
    """BuildError if a root-namespace interface holds an ifindex the fabric's veths take:
    the port program would take that interface's counters for a router port's."""
    last = port_ifindex(len(spec.links) - 1, 1)
    clash = [name for index, name in socket.if_nameindex() if FIRST_IFINDEX <= index <= last]
    if clash:
        raise BuildError(f"interface(s) {', '.join(clash[:5])} of the root namespace hold ifindexes the srv6 "
                         f"fabric reserves ({FIRST_IFINDEX}-{last}): remove them (`ip link delete NAME`)")


def _make_spread(fabric: Srv6Fabric, router_class) -> None:
    """The routers and cables of a fabric over several servers: each router on its plane's
    server, the cables within one server as veths made there, the crossing ones (host-T0)
    as CrossingCable (topologies/srv6/remote_nodes.py), then a carrier relay to each other server."""
    from topologies.cluster.remote import CarrierRelay, on_server
    from topologies.srv6.remote_nodes import remote_classes

    spec, placement = fabric.spec, fabric.placement
    here = placement.servers[0]
    remote_router, crossing_cable = remote_classes()
    for name in spec.switch_names:
        server = placement.server_of(name)
        fabric.routers[name] = router_class(name) if server == here else remote_router(name, server=server)
    crossing = set(placement.crossing_cables())
    for server in placement.servers:
        cables = [i for i, link in enumerate(spec.links) if i not in crossing and placement.server_of(link.a) == server]
        if not cables:
            continue
        if server == here:
            sh(["ip", "-batch", "-"], input=_veth_batch(fabric, cables))
        else:   # the pids are that server's, as its routers' shells are
            router = fabric.router(spec.links[cables[0]].a)
            on_server(router, f"ip -batch - <<'EOF'\n{_veth_batch(fabric, cables)}EOF\n")
    for cable in sorted(crossing):
        link = spec.links[cable]
        fabric.crossings.append(crossing_cable(fabric.node(link.a), fabric.node(link.b), spec=spec, cable=cable))
    for server in placement.servers[1:]:     # each holds a plane: place_planes gives none more servers
        fabric.relays.append(CarrierRelay(fabric.router(Switch.t0(placement.planes_of(server)[0], 0))))


def _veth_batch(fabric: Srv6Fabric, cables) -> str:
    """`ip -batch` lines creating cables (indices in spec.links) as veths whose ends are born
    in their nodes' namespaces, with their MACs, fabric-unique ifindexes and the fabric's MTU."""
    spec, lines = fabric.spec, []
    for cable in cables:
        link = spec.links[cable]
        ends = []
        for end, (name, port) in enumerate(((link.a, link.a_port), (link.b, link.b_port))):
            ifname, mac = cable_end(spec, name, port)
            ends.append(f"name {ifname} address {mac} mtu {spec.mtu} index {port_ifindex(cable, end)} "
                        f"netns {fabric.port_node(ifname).pid}")
        lines.append(f"link add {ends[0]} type veth peer {ends[1]}\n")
    return "".join(lines)


def _batch(tool: str, lines: list[str]) -> str:
    """A script line feeding `lines` to `tool -batch`."""
    return f"{tool} -batch - <<'EOF'\n" + "\n".join(lines) + "\nEOF"


def _port_lines(ifname: str, peer_mac: str) -> list[str]:
    """ip lines for one port: up, its peer as a permanent neighbour."""
    return [f"link set dev {ifname} up", f"neigh replace {PEER} lladdr {peer_mac} dev {ifname} nud permanent"]


def _host_script(fabric: Srv6Fabric, h: int, shaping: bool) -> list[str]:
    """Per plane: the NIC port's own address, and one route -- its T0's uSID out of
    that port -- so the destination address alone picks the plane."""
    spec, plan = fabric.spec, fabric.plan
    ip_lines, tc_lines = ["link set dev lo up"], []
    for plane in range(spec.planes):
        ifname = spec.host_intf(h, plane)
        t0 = Switch.t0(plane, spec.rack_of(h))
        ip_lines += _port_lines(ifname, router_port_mac(t0, spec.t0_host_port(h))) + [
            f"addr add {plan.host_address(h, plane)}/128 dev {ifname} nodad",
            f"route add {plan.host_gateway_prefix(h, plane)} via {PEER} dev {ifname}"]
        tc_lines += host_nic_shaper(ifname, spec) if shaping else []
    ip_lines += _baseline_host_lines(fabric, h)
    return [_batch("ip", ip_lines)] + ([_batch("tc", tc_lines)] if tc_lines else [])


def _prepare_engine(fabric: Srv6Fabric) -> dict[str | None, str]:
    """The uN engine made ready on every server that holds routers (server_of's names,
    None: this one): what each server's routers need of it (the eBPF program's pin there)."""
    prepared = {None: fabric.engine.prepare()}
    for server, agent in fabric.agents.items():
        prepared[server] = agent.call("un_engine", call="prepare", engine=fabric.engine.name)
    return prepared


def _configure_router(fabric: Srv6Fabric, switch: Switch, prepared: str) -> None:
    """Its End device (at END_IFINDEX, with the fabric's MTU), ports, neighbours, the End
    route, the static table, and its engine's tc lines (`prepared`: prepare()'s on its server)."""
    lines = [f"link add name {END_DEVICE} index {END_IFINDEX} mtu {fabric.spec.mtu} type ifb"] + \
        router_lines(fabric, switch) + [baseline_route_line(fabric.spec, switch, route)
                                         for route in fabric.plan.baseline_rack_routes(switch) if route.ports]
    run_node_script(fabric.router(switch), [_batch("ip", lines)])
    ports = [fabric.spec.switch_intf(switch, port) for port in fabric.plan.ports(switch)]
    tc_lines = fabric.engine.router_tc_lines(ports, prepared)
    if tc_lines:   # by nsenter, not the node's shell: mnexec gave that a /sys of its own, without bpffs
        try:
            fabric.access(switch).run(["tc", "-batch", "-"], input="\n".join(tc_lines) + "\n", error=BuildError)
        except BuildError as exc:
            raise BuildError(f"attaching the uN program on {switch}: {exc}") from None


def router_lines(fabric: Srv6Fabric, switch: Switch) -> list[str]:
    """ip lines of a router's static configuration, idempotent: its End route on the
    End device, then every port's lines (port_lines). Not the baseline's rack routes:
    the routing process owns those once the fabric runs."""
    return [f"link set dev {END_DEVICE} up", fabric.engine.end_route(fabric.plan.end_prefix(switch), END_DEVICE)] + [
        line for port in fabric.plan.ports(switch) for line in port_lines(fabric, switch, port)]


def port_lines(fabric: Srv6Fabric, switch: Switch, port: int) -> list[str]:
    """ip lines of one router port, idempotent: up, its peer as a permanent neighbour,
    and the static routes out of it (uSID /48s and /64s, the baseline's host routes).
    What the kernel deletes when the port is set administratively down."""
    spec, plan = fabric.spec, fabric.plan
    ifname = spec.switch_intf(switch, port)
    routes = [str(entry.prefix) for entry in plan.router_table(switch)
              if entry.action != "end" and entry.port == port]
    routes += [str(route.prefix) for route in plan.baseline_host_routes(switch) if route.ports == (port,)]
    return _port_lines(ifname, _peer_mac(fabric, switch, port)) + [
        f"route replace {prefix} via {PEER} dev {ifname}" for prefix in routes]


def _peer_mac(fabric: Srv6Fabric, switch: Switch, port: int) -> str:
    spec, peer = fabric.spec, fabric.plan.port_peer(switch, port)
    if isinstance(peer, Host):
        return spec.host_mac(peer.index, switch.plane)
    return router_port_mac(peer, _port_towards(spec, peer, switch))


# ---- after a fault: put a port's or a router's static configuration back, and check it --------
def _in_namespace(fabric: Srv6Fabric, switch: Switch, args: list[str], input: str | None = None) -> str:
    """`ip` in a router's namespace (by nsenter here, through its server's agent elsewhere):
    never through the node's Mininet shell, which a job may be using from another thread."""
    return fabric.access(switch).ip(args, input=input, error=BuildError)


def restore_port(fabric: Srv6Fabric, switch: Switch, port: int) -> None:
    """Bring a router port up with what the kernel deleted when it was set down
    (port_lines); the baseline's rack routes are the routing process's to write."""
    _in_namespace(fabric, switch, ["-batch", "-"], "\n".join(port_lines(fabric, switch, port)) + "\n")


def restore_router(fabric: Srv6Fabric, switch: Switch) -> None:
    """A rebooted router's whole static configuration back (router_lines), as the
    OpenFlow controller reinstalls a rebooted switch's flows."""
    _in_namespace(fabric, switch, ["-batch", "-"], "\n".join(router_lines(fabric, switch)) + "\n")


def flush_router(fabric: Srv6Fabric, switch: Switch) -> None:
    """Wipe a router's tables, as a reboot does: every route and neighbour (its ports
    are set down first, which already deletes most of them)."""
    _in_namespace(fabric, switch, ["-6", "-batch", "-"], "route flush table main\nneigh flush all nud all\n")


def held_static(fabric: Srv6Fabric, switch: Switch) -> tuple[dict[str, str], dict[str, str]]:
    """What a router holds now: {prefix: device} of its IPv6 routes (every nexthop's
    device, comma-joined, for a multipath one) and {device: MAC} of its fe80::1 neighbours."""
    routes = {}
    for route in json.loads(_in_namespace(fabric, switch, ["-j", "-6", "route", "show"]) or "[]"):
        # a blackhole route shows `dev lo`: it is known by its type
        devices = [hop.get("dev") for hop in route.get("nexthops", [])] or [route.get("type") or route.get("dev")]
        dst = DEFAULT_ROUTE if route["dst"] == "default" else route["dst"]
        routes[str(ipaddress.IPv6Network(dst))] = ",".join(sorted(str(d) for d in devices))
    held = json.loads(_in_namespace(fabric, switch, ["-j", "-6", "neigh", "show"]) or "[]")
    neighbours = {n["dev"]: n.get("lladdr", "") for n in held
                  if n.get("dst") == PEER and "PERMANENT" in n.get("state", [])}
    return routes, neighbours


def static_problems(fabric: Srv6Fabric, switch: Switch, ports: list[int] | None = None,
                    held: tuple[dict, dict] | None = None) -> list[str]:
    """What the router lacks of its static configuration on `ports` (None: every port,
    and its End route): each missing or misplaced route and neighbour, named.
    `held`: what held_static() read, if the caller has it already."""
    spec, plan = fabric.spec, fabric.plan
    routes, neighbours = held or held_static(fabric, switch)
    want_routes = {} if ports is not None else {str(plan.end_prefix(switch)): END_DEVICE}
    problems = []
    for port in plan.ports(switch) if ports is None else ports:
        ifname = spec.switch_intf(switch, port)
        if neighbours.get(ifname) != _peer_mac(fabric, switch, port):
            problems.append(f"{switch}: no permanent neighbour {PEER} on {ifname}")
        for line in port_lines(fabric, switch, port):
            if line.startswith("route replace "):
                want_routes[line.split()[2]] = ifname
    for prefix, device in want_routes.items():
        if routes.get(prefix) != device:
            problems.append(f"{switch}: route {prefix} {'on ' + routes[prefix] if prefix in routes else 'missing'}, "
                            f"expected on {device}")
    return problems


def _attach_port_program(fabric: Srv6Fabric, trimming: bool) -> None:
    """Every router port configured as the OpenFlow fabric's switch ports, the program
    attached from inside its router's namespace (one tc batch per router)."""
    configs = switch_port_configs(fabric.spec, fabric.switch_ports(), trimming)
    here = fabric.port_pids()
    try:
        port_program.attach_many({port: configs[port] for port in here}, netns=here)
    except port_program.PortProgramError as exc:
        raise BuildError(f"switch port program on the srv6 routers: {exc}") from None
    for server, agent in fabric.agents.items():   # every other server's ports, in one request each
        ports = [port for port in configs if fabric.server_of(fabric.port_node(port).name) == server]
        agent.call("port_program", call="attach_many", args=[{port: configs[port].to_json() for port in ports}],
                   netns={port: fabric.port_node(port).name for port in ports})


def _port_towards(spec: FabricSpec, switch: Switch, neighbour: Switch) -> int:
    """The port of `switch` that faces `neighbour` (a T0 and a T1 of one plane)."""
    return spec.t0_uplink_port(neighbour.index) if switch.tier == "t0" else spec.t1_downlink_port(neighbour.index)


# ---- the baseline's routes (docs/srv6.md, "The baseline on srv6") ---------------------
def _baseline_host_lines(fabric: Srv6Fabric, h: int) -> list[str]:
    """Per plane: the host's baseline address on that plane's NIC port, and the plane's
    baseline prefix out of it (the destination alone picks the plane, as for uSIDs)."""
    spec, plan, lines = fabric.spec, fabric.plan, []
    for plane in range(spec.planes):
        ifname = spec.host_intf(h, plane)
        lines += [f"addr add {plan.baseline_address(h, plane)}/128 dev {ifname} nodad",
                  f"route add {plan.baseline_plane_prefix(plane)} via {PEER} dev {ifname}"]
    return lines


def baseline_route_line(spec: FabricSpec, switch: Switch, route: BaselineRoute) -> str:
    """`ip route` arguments installing one baseline route of a router: a plain route
    for one port, an ECMP multipath route (one nexthop per port) for several."""
    if len(route.ports) == 1:
        return f"route add {route.prefix} via {PEER} dev {spec.switch_intf(switch, route.ports[0])}"
    hops = " ".join(f"nexthop via {PEER} dev {spec.switch_intf(switch, port)}" for port in route.ports)
    return f"route add {route.prefix} {hops}"
