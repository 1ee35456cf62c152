"""srv6 routers on another server and the cables that cross to them, on Mininet's cluster
edition (mininet/examples/cluster.py: RemoteMixin, RemoteLink), for the fabric spread over
several servers (docs/cluster.md).

    RemoteRouter, CrossingCable = remote_classes()
    router = RemoteRouter("t0p1r0", server="198.18.1.2", ssh_config_file="/path/ssh_config")
    cable = CrossingCable(host, router, spec=spec, cable=8)   # spec.links[8], host end here
    cable.stop()                  # both ports, both tunnel ends

RemoteRouter is the srv6 builder's Router (its sysctls, its hash seed) on another server.
What it changes in RemoteMixin: every ssh takes the caller's ssh config file (`-F`:
identity, known hosts, port, ControlMaster; the path from `ssh_config=` or $MRCLAB_SSH_CONFIG),
and no `sudo` runs on either side when the remote user is root (the cluster edition runs
`sudo -E -u USER ssh ... sudo -E CMD`, and machines without sudo exist).

CrossingCable is one cable of spec.links whose ends are on different servers. Both ports
stay veths, with the lab's names, MACs and ifindexes (nodes.port_ifindex): the tunnel
sits between two patch namespaces, one per server, so nothing in a node sees it:

    node (server 1)            patch ns (server 1)                patch ns (server 2)       node (server 2)
    port ==veth== stub --tc mirred-- vxlan ~~underlay UDP~~ vxlan --tc mirred-- stub ==veth== port

Each vxlan is made in its server's root namespace, where the underlay is (its UDP socket
stays there), then moved into the patch namespace. Why not the tunnel device as the port, as
the cluster edition does: a vxlan's operstate is UNKNOWN, `carrier off` is refused, and the
far end going down changes nothing at the near end; a NIC-link fault relies on the host's
veth losing carrier, which topologies/cluster/remote.py CarrierRelay carries across.
"""

from __future__ import annotations

import os
import subprocess

from topologies.cluster.carrier_relay import STUB_PREFIX
from topologies.fabric import FabricSpec
from topologies.cluster.remote import (IFNAMSIZ, MATCH_ALL, PATCH_NETNS, TUNNEL_PREFIX, VXLAN_OVERHEAD, VXLAN_PORT,
                               on_server, ssh_config, underlay_address)
from topologies.cluster.server_errors import RemoteError
from topologies.srv6.nodes import cable_end, mininet_node_classes, port_ifindex


def remote_classes():
    """(RemoteRouter, CrossingCable); Mininet loads only when a fabric is built."""
    from mininet.examples.cluster import RemoteLink, RemoteMixin
    from mininet.node import Node

    _, router_class = mininet_node_classes()
    return remote_router_class(RemoteMixin, router_class, Node), crossing_cable_class(RemoteLink)


def remote_router_class(RemoteMixin, router_class, Node):
    """The builder's Router on another server, from Mininet's classes (remote_classes)."""

    class RemoteRouter(RemoteMixin, router_class):
        """A fabric router on `server` (its address, or a name `getent ahostsv4` resolves)."""

        def __init__(self, name, server, ssh_config_file=None, user="root", **params):
            self.ssh_config = ssh_config(ssh_config_file)
            super().__init__(name, server=server, user=user, **params)
            if not self.isRemote:
                raise RemoteError(f"{name}: server {server!r} is this one; use the builder's Router")

        def _popen(self, cmd, sudo=True, tt=True, **params):
            """The command on the server: one ssh with the caller's config, `sudo -n` only for
            a remote user other than root, `-tt` for the node's interactive shell."""
            if isinstance(cmd, str):
                cmd = cmd.split()
            if self.isRemote:
                elevate = ["sudo", "-n"] if sudo and self.user != "root" else []
                cmd = ["ssh", "-F", str(self.ssh_config), "-q", "-o", "BatchMode=yes",
                       "-tt" if tt else "-T", self.dest, *elevate, *cmd]
            params.update(preexec_fn=os.setpgrp)   # as RemoteMixin: ^C here does not reach it
            return Node._popen(self, cmd, **params)

        def run_script(self, text: str, timeout: float = 60) -> str:
            """Run a shell script in this node's network namespace over one ssh, the script on
            stdin (the build's scripts live in this server's /tmp, not there); its output."""
            proc = self._popen(["nsenter", "-t", str(self.pid), "-n", "bash", "-s"], tt=False,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                return proc.communicate(text, timeout=timeout)[0]
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise RemoteError(f"a script in {self.name} on {self.server} did not finish "
                                  f"within {timeout:g} s") from None

    return RemoteRouter


def crossing_cable_class(RemoteLink):
    """A cable between servers, from Mininet's RemoteLink (remote_classes)."""

    class CrossingCable(RemoteLink):
        """Cable `cable` of spec.links between node1 and node2 on different servers (either may be
        the remote one); see the module docstring. The nodes are spec's names for its ends."""

        def __init__(self, node1, node2, spec: FabricSpec, cable: int, **params):
            link = spec.links[cable]
            if (link.a, link.b) != (node1.name, node2.name):
                raise RemoteError(f"cable {cable} joins {link.a} and {link.b}, not {node1.name} and {node2.name}")
            if getattr(node1, "server", "localhost") == getattr(node2, "server", "localhost"):
                raise RemoteError(f"cable {cable} ({link.a}-{link.b}) does not cross servers: make it a veth")
            self.spec, self.cable, self.vni = spec, cable, cable + 1
            ends = ((link.a, link.a_port), (link.b, link.b_port))
            self.ports = [cable_end(spec, name, port) for name, port in ends]   # (ifname, MAC) per end
            self.ifindexes = [port_ifindex(cable, end) for end in (0, 1)]
            self.stub, self.tunnel_end = f"{STUB_PREFIX}{cable}", f"{TUNNEL_PREFIX}{cable}"
            if len(self.stub) > IFNAMSIZ:
                raise RemoteError(f"cable {cable}: crossing cables are numbered below "
                                  f"{10 ** (IFNAMSIZ - len(STUB_PREFIX))} (interface names)")
            super().__init__(node1, node2, intfName1=self.ports[0][0], intfName2=self.ports[1][0], **params)

        def makeIntfPair(self, intfname1, intfname2, addr1=None, addr2=None, node1=None, node2=None,
                         deleteIntfs=True):
            nodes = (node1 or self.node1, node2 or self.node2)
            underlay = [underlay_address(node, nodes[1 - i]) for i, node in enumerate(nodes)]
            made = []
            try:
                for end, node in enumerate(nodes):
                    on_server(node, cable_end_script(self, end, node.pid, underlay[end], underlay[1 - end]))
                    made.append(node)
            except BaseException:
                for node in made:
                    on_server(node, cable_removal_script(self), check=False)
                raise
            return None     # RemoteLink keeps no tunnel process: there is none

        def stop(self) -> None:
            for node in (self.node1, self.node2):
                on_server(node, cable_removal_script(self), check=False)

        def delete(self) -> None:
            self.stop()

        def status(self) -> str:
            return f"({self.ports[0][0]}<->{self.ports[1][0]} vxlan {self.vni})"

    return CrossingCable


def cable_end_script(cable, end: int, node_pid: int, local: str, remote: str) -> str:
    """The script that makes end `end` (0 or 1) of a CrossingCable on its node's server: the port
    in the node (`node_pid`), its stub and the vxlan toward `remote` in the patch namespace."""
    ifname, mac = cable.ports[end]
    mtu = cable.spec.mtu
    stub, tunnel, ns = cable.stub, cable.tunnel_end, PATCH_NETNS
    return "\n".join([
        "set -e",
        # the underlay carries the fabric's frames whole, or they would be fragmented
        f"dev=$(ip -o route get {remote} | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p')",
        f"mtu=$(cat /sys/class/net/$dev/mtu)",
        f"[ \"$mtu\" -ge {mtu + VXLAN_OVERHEAD} ] || {{ echo \"the underlay to {remote}, $dev, has MTU $mtu: "
        f"the fabric's {mtu} needs {mtu + VXLAN_OVERHEAD} (VXLAN adds {VXLAN_OVERHEAD})\" >&2; exit 1; }}",
        f"[ -e /run/netns/{ns} ] || ip netns add {ns}",
        # no IPv6 of their own on the stubs and tunnel ends (set before they arrive): a stub's
        # MLD report would reach its router as a packet no port sent, and the audit counts them
        f"ip netns exec {ns} sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1",
        f"ip -n {ns} link set dev lo up",
        f"ip link add name {ifname} address {mac} mtu {mtu} index {cable.ifindexes[end]} netns {node_pid} "
        f"type veth peer name {stub} mtu {mtu} netns {ns}",
        f"ip link add name {tunnel} mtu {mtu} type vxlan id {cable.vni} local {local} remote {remote} "
        f"dstport {VXLAN_PORT} nolearning",
        f"ip link set dev {tunnel} netns {ns}",
        f"ip -n {ns} link set dev {stub} up",
        f"ip -n {ns} link set dev {tunnel} up",
        f"ip netns exec {ns} tc qdisc add dev {stub} clsact",
        f"ip netns exec {ns} tc qdisc add dev {tunnel} clsact",
        f"ip netns exec {ns} tc filter add dev {stub} ingress pref 1 {MATCH_ALL} "
        f"action mirred egress redirect dev {tunnel}",
        f"ip netns exec {ns} tc filter add dev {tunnel} ingress pref 1 {MATCH_ALL} "
        f"action mirred egress redirect dev {stub}",
    ])


def cable_removal_script(cable) -> str:
    """Removes a CrossingCable's stub (its veth peer, the port, goes with it) and tunnel end,
    and the patch namespace when it holds nothing else."""
    ns = PATCH_NETNS
    return "\n".join([
        f"[ -e /run/netns/{ns} ] || exit 0",
        f"ip -n {ns} link del dev {cable.stub} 2>/dev/null",
        f"ip -n {ns} link del dev {cable.tunnel_end} 2>/dev/null",
        f"[ -n \"$(ip -n {ns} -o link show | grep -v ': lo:')\" ] || ip netns del {ns}",
        "exit 0",
    ])
