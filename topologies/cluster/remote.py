"""What the lab needs to work across servers, whatever the data plane (docs/cluster.md): the
ssh config every ssh takes, a script run on a node's server, the underlay address toward a
peer, the patch namespace where crossing cables end, the carrier relay between servers, and
the stubs' counters. The srv6 routers on other servers and the cables that cross to them are
topologies/srv6/remote_nodes.py.

    relay = CarrierRelay(router)  # ports' state across every cable between the two servers
    relay.stop()
    clean_patch_namespace()       # this server's crossings, whatever a killed run left

A tunnel does not carry carrier: CarrierRelay does, one relay in each server's patch
namespace (topologies/cluster/carrier_relay.py), so a port set down by any means (the lab's link
faults set it in its node) takes the far port's carrier, as the other end of a veth does.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from topologies.cluster.carrier_relay import STUB_PREFIX
from topologies.system.commands import run_command
from topologies.cluster.server_errors import RemoteError

SSH_CONFIG_ENV = "MRCLAB_SSH_CONFIG"
# The namespace on every server holding its crossing cables' stubs and tunnel ends: deleting
# it takes every crossing of that server with it (the stubs' veth peers, the ports, go too).
PATCH_NETNS = "mrclab-xlink"
VXLAN_PORT = 4789       # IANA's VXLAN port
# What VXLAN adds to a frame on the underlay: Ethernet 14 + VXLAN 8 + UDP 8 + IPv4 20
VXLAN_OVERHEAD = 50
# tc's "match everything": this kernel has u32 but no matchall classifier
MATCH_ALL = "u32 match u32 0 0"
TUNNEL_PREFIX = "mrclab-xv"      # + the cable's index, as the stubs' STUB_PREFIX
IFNAMSIZ = 15


def ssh_config(path: str | os.PathLike | None = None) -> Path:
    """The ssh config file every ssh to a server takes: `path`, else $MRCLAB_SSH_CONFIG."""
    given = path or os.environ.get(SSH_CONFIG_ENV)
    if not given:
        raise RemoteError(f"no ssh config for the servers: pass ssh_config_file= or set {SSH_CONFIG_ENV}")
    if not Path(given).is_file():
        raise RemoteError(f"ssh config {given} does not exist")
    return Path(given)


class CarrierRelay:
    """The carrier relays of this server and `remote`'s (a RemoteRouter), joined by their stdin
    and stdout, the far one over ssh. Start it once the cables between the two servers exist;
    it serves cables made later too. It ends when stopped or when either side goes."""

    def __init__(self, remote):
        from topologies.cluster import carrier_relay

        source = Path(carrier_relay.__file__).read_text()   # the far server needs no copy of the lab
        there_to_here, here_to_there = os.pipe(), os.pipe()
        try:
            self.here = subprocess.Popen(["ip", "netns", "exec", PATCH_NETNS, sys.executable, "-u", "-c", source],
                                         stdin=there_to_here[0], stdout=here_to_there[1],
                                         stderr=subprocess.DEVNULL, start_new_session=True)
            self.there = remote._popen(["ip", "netns", "exec", PATCH_NETNS, "python3", "-u", "-c",
                                        shlex.quote(source)], tt=False, stdin=here_to_there[0],
                                       stdout=there_to_here[1], stderr=subprocess.DEVNULL)
        finally:
            for fd in (*there_to_here, *here_to_there):
                os.close(fd)

    def alive(self) -> bool:
        return self.here.poll() is None and self.there.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        """End the ssh: the far relay reads the end of its input and exits, then this one."""
        for proc in (self.there, self.here):
            if proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


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


def patch_namespaces() -> list[str]:
    """This server's patch namespace, if there is one: [] or [PATCH_NETNS]."""
    return [PATCH_NETNS] if Path("/run/netns", PATCH_NETNS).exists() else []


def clean_patch_namespace() -> bool:
    """Remove this server's patch namespace, and every crossing cable with it (whatever a
    killed run left); True if there was one."""
    if not patch_namespaces():
        return False
    subprocess.run(["ip", "netns", "del", PATCH_NETNS], capture_output=True, text=True, check=False)
    return True


def stub_counters() -> dict[int, dict[str, int]]:
    """This server's crossing cables' stubs: cable -> {rx,tx}_{packets,bytes}, rx what the stub
    took from its port into the tunnel, tx what it gave its port from it; {} with none (another
    server's come through its agent)."""
    if not patch_namespaces():
        return {}
    shown = run_command(["ip", "-n", PATCH_NETNS, "-j", "-s", "link", "show"], timeout=10, error=RemoteError).stdout
    counters = {}
    for link in json.loads(shown or "[]"):
        name = link["ifname"]
        if name.startswith(STUB_PREFIX):
            stats = link["stats64"]
            counters[int(name[len(STUB_PREFIX):])] = {f"{way}_{unit}": stats[way][unit]
                                                      for way in ("rx", "tx") for unit in ("packets", "bytes")}
    return counters
