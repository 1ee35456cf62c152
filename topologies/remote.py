"""Routers on another server and the cables that cross to them, on Mininet's cluster edition
(mininet/examples/cluster.py: RemoteMixin, RemoteLink), for the fabric spread over several
servers (docs/cluster.md). The first step: the classes, not yet used by the srv6 builder.

    RemoteRouter, CrossingCable = remote_classes()
    router = RemoteRouter("t0p1r0", server="198.18.1.2", ssh_config="/path/ssh_config")
    cable = CrossingCable(host, router, spec=spec, cable=3)   # spec.links[3], host end here
    cable.set_port(1, up=False)   # the router's port down; the host's NIC loses carrier
    cable.stop()                  # both ends, both tunnels ends
    clean_patch_namespace()       # this server's crossings, whatever a killed run left

RemoteRouter is the srv6 builder's Router (its sysctls, its hash seed) on another server.
What it changes in RemoteMixin: every ssh takes the caller's ssh config file (`-F`:
identity, known hosts, port, ControlMaster; the path from `ssh_config=` or $MRCLAB_SSH_CONFIG),
and no `sudo` runs on either side when the remote user is root (the cluster edition runs
`sudo -E -u USER ssh ... sudo -E CMD`, and machines without sudo exist).

CrossingCable is one cable of spec.links whose ends are on different servers. Both ports
stay veths, with the lab's names, MACs and ifindexes (builder.port_ifindex): the tunnel
sits between two patch namespaces, one per server, so nothing in a node sees it:

    node (server 1)            patch ns (server 1)                patch ns (server 2)       node (server 2)
    port ==veth== stub --tc mirred-- vxlan ~~underlay UDP~~ vxlan --tc mirred-- stub ==veth== port

Each vxlan is made in its server's root namespace, where the underlay is (its UDP socket
stays there), then moved into the patch namespace. Why not the tunnel device as the port, as
the cluster edition does: a vxlan's operstate is UNKNOWN, `carrier off` is refused, and the
far end going down changes nothing at the near end; a NIC-link fault relies on the host's
veth losing carrier. A tunnel does not carry carrier either, so `set_port` carries it: a
port set down also sets the far side's stub down, and the far port loses carrier as the
other end of a veth does. (A port set down by other means does not: that is a later step.)
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from topologies.build import BuildError
from topologies.fabric import FabricSpec

SSH_CONFIG_ENV = "MRCLAB_SSH_CONFIG"
# The namespace on every server holding its crossing cables' stubs and tunnel ends: deleting
# it takes every crossing of that server with it (the stubs' veth peers, the ports, go too).
PATCH_NETNS = "mrclab-xlink"
VXLAN_PORT = 4789       # IANA's VXLAN port
# What VXLAN adds to a frame on the underlay: Ethernet 14 + VXLAN 8 + UDP 8 + IPv4 20
VXLAN_OVERHEAD = 50
# tc's "match everything": this kernel has u32 but no matchall classifier
MATCH_ALL = "u32 match u32 0 0"


class RemoteError(BuildError):
    """A remote node or crossing cable could not be made; the message says what to do."""


def ssh_config(path: str | os.PathLike | None = None) -> Path:
    """The ssh config file every ssh to a server takes: `path`, else $MRCLAB_SSH_CONFIG."""
    given = path or os.environ.get(SSH_CONFIG_ENV)
    if not given:
        raise RemoteError(f"no ssh config for the servers: pass ssh_config= or set {SSH_CONFIG_ENV}")
    if not Path(given).is_file():
        raise RemoteError(f"ssh config {given} does not exist")
    return Path(given)


def remote_classes():
    """(RemoteRouter, CrossingCable); Mininet loads only when a fabric is built."""
    from mininet.examples.cluster import RemoteLink, RemoteMixin
    from mininet.node import Node

    from topologies.srv6.builder import mininet_node_classes

    _, router_class = mininet_node_classes()

    class RemoteRouter(RemoteMixin, router_class):
        """A fabric router on `server` (its address, or a name `getent ahostsv4` resolves)."""

        def __init__(self, name, server, ssh_config_path=None, user="root", **params):
            self.ssh_config = ssh_config(ssh_config_path)
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

    class CrossingCable(RemoteLink):
        """Cable `cable` of spec.links between node1 and node2 on different servers (either may be
        the remote one); see the module docstring. The nodes are spec's names for its ends."""

        def __init__(self, node1, node2, spec: FabricSpec, cable: int, **params):
            from topologies.srv6.builder import cable_end, port_ifindex

            link = spec.links[cable]
            if (link.a, link.b) != (node1.name, node2.name):
                raise RemoteError(f"cable {cable} joins {link.a} and {link.b}, not {node1.name} and {node2.name}")
            if getattr(node1, "server", "localhost") == getattr(node2, "server", "localhost"):
                raise RemoteError(f"cable {cable} ({link.a}-{link.b}) does not cross servers: make it a veth")
            self.spec, self.cable, self.vni = spec, cable, cable + 1
            ends = ((link.a, link.a_port), (link.b, link.b_port))
            self.ports = [cable_end(spec, name, port) for name, port in ends]   # (ifname, MAC) per end
            self.ifindexes = [port_ifindex(cable, end) for end in (0, 1)]
            self.stub = f"mrclab-xs{cable}"
            self.tunnel_end = f"mrclab-xv{cable}"
            super().__init__(node1, node2, intfName1=self.ports[0][0], intfName2=self.ports[1][0], **params)

        # ---- making it ----------------------------------------------------------------------
        def makeIntfPair(self, intfname1, intfname2, addr1=None, addr2=None, node1=None, node2=None,
                         deleteIntfs=True):
            nodes = (node1 or self.node1, node2 or self.node2)
            underlay = [underlay_address(node, nodes[1 - i]) for i, node in enumerate(nodes)]
            made = []
            try:
                for end, node in enumerate(nodes):
                    on_server(node, self._end_script(end, node, underlay[end], underlay[1 - end]))
                    made.append(node)
            except BaseException:
                for node in made:
                    on_server(node, self._removal_script(), check=False)
                raise
            return None     # RemoteLink keeps no tunnel process: there is none

        def _end_script(self, end: int, node, local: str, remote: str) -> str:
            ifname, mac = self.ports[end]
            mtu = self.spec.mtu
            stub, tunnel, ns = self.stub, self.tunnel_end, PATCH_NETNS
            return "\n".join([
                "set -e",
                f"[ -e /run/netns/{ns} ] || ip netns add {ns}",
                f"ip -n {ns} link set dev lo up",
                f"ip link add name {ifname} address {mac} mtu {mtu} index {self.ifindexes[end]} netns {node.pid} "
                f"type veth peer name {stub} mtu {mtu} netns {ns}",
                f"ip link add name {tunnel} mtu {mtu} type vxlan id {self.vni} local {local} remote {remote} "
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

        def _removal_script(self) -> str:
            """Removes this cable's stub (its veth peer, the port, goes with it) and tunnel end,
            and the patch namespace when it holds nothing else."""
            ns = PATCH_NETNS
            return "\n".join([
                f"[ -e /run/netns/{ns} ] || exit 0",
                f"ip -n {ns} link del dev {self.stub} 2>/dev/null",
                f"ip -n {ns} link del dev {self.tunnel_end} 2>/dev/null",
                f"[ -n \"$(ip -n {ns} -o link show | grep -v ': lo:')\" ] || ip netns del {ns}",
                "exit 0",
            ])

        # ---- using it -----------------------------------------------------------------------
        def set_port(self, end: int, up: bool) -> None:
            """Set the port at `end` (0: node1's, 1: node2's) up or down, and the far side's stub
            with it, so the far port gains or loses carrier as the other end of a veth does."""
            if end not in (0, 1):
                raise RemoteError(f"cable end {end}: 0 or 1")
            state = "up" if up else "down"
            nodes = (self.node1, self.node2)
            ifname = self.ports[end][0]
            out = nodes[end].cmd(f"ip link set dev {ifname} {state} && echo mrclab-port-ok")
            if "mrclab-port-ok" not in out:
                raise RemoteError(f"setting {ifname} {state} on {nodes[end].name} failed: {out.strip()[-300:]}")
            on_server(nodes[1 - end], f"ip -n {PATCH_NETNS} link set dev {self.stub} {state}")

        def stop(self) -> None:
            for node in (self.node1, self.node2):
                on_server(node, self._removal_script(), check=False)

        def delete(self) -> None:
            self.stop()

        def status(self) -> str:
            return f"({self.ports[0][0]}<->{self.ports[1][0]} vxlan {self.vni})"

    return RemoteRouter, CrossingCable


def on_server(node, script: str, check: bool = True, timeout: float = 30) -> str:
    """Run a shell script in the root namespace of `node`'s server (here for a local node,
    over the node's ssh for a remote one); its output. RemoteError if it fails (and `check`)."""
    if getattr(node, "isRemote", False):
        proc = node._popen(["sh", "-s"], tt=False, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(script, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise RemoteError(f"a script on {node.server} did not finish within {timeout:g} s") from None
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        where = node.server
    else:
        done = subprocess.run(["sh", "-s"], input=script, capture_output=True, text=True, timeout=timeout)
        where = "this server"
    if check and done.returncode != 0:
        raise RemoteError(f"on {where}: {(done.stderr or done.stdout).strip()[-400:]} "
                          f"(script: {shlex.quote(script.splitlines()[-1])[:200]})")
    return done.stdout


def underlay_address(node, peer) -> str:
    """The IPv4 address `node`'s server reaches `peer`'s server from: a remote node's is the
    address it was reached at; this server's is the source of its route to the peer's."""
    if getattr(node, "isRemote", False):
        return node.serverIP
    route = subprocess.run(["ip", "-o", "route", "get", peer.serverIP], capture_output=True, text=True)
    words = route.stdout.split()
    if route.returncode != 0 or "src" not in words:
        raise RemoteError(f"no route from this server to {peer.server} ({peer.serverIP}): "
                          f"{route.stderr.strip() or route.stdout.strip()}")
    return words[words.index("src") + 1]


def clean_patch_namespace() -> bool:
    """Remove this server's patch namespace, and every crossing cable with it (whatever a
    killed run left); True if there was one."""
    if not Path("/run/netns", PATCH_NETNS).exists():
        return False
    subprocess.run(["ip", "netns", "del", PATCH_NETNS], capture_output=True, text=True, check=False)
    return True
