"""Fabric links and switches by name, and their state, on a live fabric.

An interface end is (ifname, namespace pid or None for the root namespace,
the switch it belongs to or None for a host NIC, and for a router on another
server its RemoteNode): OpenFlow switch ports live in the root namespace, srv6
router ports in their router's namespace, host NIC ports in their Mininet
host's namespace. State changes and reads go through `ip` (via nsenter for
other namespaces, through the server's agent for another server's router,
topologies/cluster/node_access.py), never through Mininet's per-node shells, so a
fault thread never interleaves with a job using those shells.
"""

from __future__ import annotations

import contextlib
import json
import operator
from dataclasses import dataclass

from topologies.build import BuildError
from topologies.fabric import FabricError, FabricSpec
from topologies.names import NicPort, Switch, T0T1Link
from topologies.cluster.node_access import LocalNode, RemoteNode
from topologies.system.waiting import wait_until


class FaultError(RuntimeError):
    """A fault could not be injected or repaired, or did not take effect."""


@contextlib.contextmanager
def dataplane_step():
    """A data plane's fault step (topologies/dataplane.py): its BuildError, whose message
    names the step, is the fault's FaultError."""
    try:
        yield
    except BuildError as exc:
        raise FaultError(str(exc)) from None


@dataclass(frozen=True)
class End:
    ifname: str
    ns_pid: int | None = None  # None: root namespace
    switch: str | None = None  # the switch whose port it is; None: a host's NIC port
    remote: RemoteNode | None = None  # its router on another server (then ns_pid is None)

    @property
    def node(self) -> LocalNode | RemoteNode:
        """Where commands on this end run (ends of one namespace give equal nodes)."""
        return self.remote or LocalNode(self.ns_pid)

    @property
    def port(self) -> int:
        """The switch port number (`<switch>-eth<port>`)."""
        return int(self.ifname.rsplit("-eth", 1)[1])

    def __str__(self) -> str:
        return self.ifname


def fabric_element(spec: FabricSpec, target: str, *kinds: type, what: str):
    """`target` as one of `kinds` (topologies/names.py) that exists in this fabric;
    FaultError saying what it was for, the name and why not."""
    try:
        return spec.element(target, *kinds)
    except FabricError as exc:
        raise FaultError(f"{what}: {exc}") from None


def resolve_link(fabric, target: str) -> tuple[End, End]:
    """A T0-T1 link or a host's NIC port by name -> its two ends (switch end first
    for a NIC link, T0 end first for a T0-T1 link)."""
    spec: FabricSpec = fabric.spec
    link = fabric_element(spec, target, T0T1Link, NicPort, what="link")
    if isinstance(link, T0T1Link):
        return (switch_end(fabric, link.t0, spec.t0_uplink_port(link.spine)),
                switch_end(fabric, link.t1, spec.t1_downlink_port(link.rack)))
    t0 = Switch.t0(link.plane, spec.rack_of(link.host))
    return (switch_end(fabric, t0, spec.t0_host_port(link.host)),
            End(str(link), fabric.host(link.host).pid))


def switch_end(fabric, switch: Switch | str, port: int) -> End:
    """A switch port, in the namespace that holds its switch's ports."""
    node, ifname = fabric.access(switch), fabric.spec.switch_intf(switch, port)
    if isinstance(node, RemoteNode):
        return End(ifname, None, str(switch), node)
    return End(ifname, node.pid, str(switch))


def switch_ends(fabric, switch: str) -> list[tuple[End, End]]:
    """(own end, peer end) of every link of a switch."""
    spec: FabricSpec = fabric.spec
    fabric_element(spec, switch, Switch, what="switch")
    ends = []
    for link in spec.links:
        if link.kind == "host-t0" and link.b == switch:
            nic = link.element
            ends.append((switch_end(fabric, switch, link.b_port), End(str(nic), fabric.host(nic.host).pid)))
        elif link.kind == "t0-t1" and switch in (link.a, link.b):
            a, b = switch_end(fabric, link.a, link.a_port), switch_end(fabric, link.b, link.b_port)
            ends.append((a, b) if link.a == switch else (b, a))
    return ends


IP_TIMEOUT_S = 20.0  # one `ip` call, a whole batch of link changes included


def _ip(node: LocalNode | RemoteNode, args: list[str], input: str | None = None) -> str:
    return node.ip(args, input=input, timeout=IP_TIMEOUT_S, error=FaultError)


def set_admin(ends: list[End], up: bool) -> None:
    """Set interfaces administratively up or down: one `ip -batch` per namespace."""
    by_ns: dict[LocalNode | RemoteNode, list[str]] = {}
    for end in ends:
        by_ns.setdefault(end.node, []).append(end.ifname)
    for ns, names in by_ns.items():
        _ip(ns, ["-batch", "-"], input="".join(f"link set dev {n} {'up' if up else 'down'}\n" for n in names))


def operstates(ends: list[End]) -> dict[str, str]:
    """ifname -> kernel operstate ('UP', 'DOWN', 'LOWERLAYERDOWN', ...)."""
    by_ns: dict[LocalNode | RemoteNode, set[str]] = {}
    for end in ends:
        by_ns.setdefault(end.node, set()).add(end.ifname)
    states = {}
    for ns, names in by_ns.items():
        for link in json.loads(_ip(ns, ["-j", "link", "show"]) or "[]"):
            if link["ifname"] in names:
                states[link["ifname"]] = link.get("operstate", "UNKNOWN")
    missing = {e.ifname for e in ends} - set(states)
    if missing:
        raise FaultError(f"interfaces not found: {sorted(missing)}")
    return states


def wait_operstate(ends: list[End], up: bool, what: str, timeout: float = 5.0) -> None:
    """Poll until every end is UP (up) or not UP (down); FaultError naming the
    ends that did not get there."""
    def wrong_states() -> dict[str, str]:
        return {n: s for n, s in operstates(ends).items() if (s == "UP") != up}

    wrong = wait_until(wrong_states, timeout, interval=0.05, done=operator.not_)
    if wrong:
        raise FaultError(f"{what}: {'not up' if up else 'still up'} after {timeout:.0f} s: {wrong}")
