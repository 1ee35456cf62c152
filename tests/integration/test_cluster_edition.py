"""Mininet's cluster edition (mininet/examples/cluster.py: RemoteHost, RemoteLink,
MininetCluster) against the second server of tests/cluster_harness.py: a host here and a host
on server B joined by a tunnel, ping across; as its own testNsTunnels does, with the links this
machine can make (an ssh -w tap tunnel, and VXLAN where the example's GRE needs a kernel with
gretap), then MininetCluster placing hosts by the servers a topology names.

This machine has no sudo: the harness's shims stand in (tests/cluster_harness.py). The nodes'
names (ca, cb, cc) are none of the lab's, so the lab's cleanup never takes them for its own.
Root only; hold the machine's lock around it (`flock /tmp/labrun.lock python -m pytest ...`)."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster_harness import missing, missing_tun, remote_vxlan_link_class, second_server

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
cluster = pytest.importorskip("mininet.examples.cluster")
NODE_SHELL = re.compile(r"mininet:c[a-z]\s*$")
# Mininet's net.stop() signals its node shells and does not wait for them to exit
SHELL_EXIT_S = 3.0


@pytest.fixture(scope="module")
def server():
    from mininet.log import setLogLevel

    setLogLevel("warning")
    with second_server() as srv:
        yield srv


def link_names(text: str) -> set[str]:
    return {line.split(":", 2)[1].strip().split("@")[0] for line in text.splitlines() if ":" in line}


def left_here() -> dict:
    """What a cluster-edition network of this file's nodes left on this side."""
    shells = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and NODE_SHELL.search((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()):
                shells.append(int(entry.name))
        except OSError:
            continue
    links = link_names(subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout)
    found = {"node shells": shells, "links": sorted(n for n in links if n == "tap9" or re.match(r"c[a-z]-eth", n))}
    return {k: v for k, v in found.items() if v}


@pytest.fixture
def on_the_cluster(server, monkeypatch):
    """Server B, with this process set up to drive it as the cluster edition does (the shims
    first in PATH, HOME in its state directory); afterwards nothing of the network is left
    on either side (what is, is removed, then the test fails)."""
    env = server.shim_env()
    Path(env["HOME"]).mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.setenv("HOME", env["HOME"])
    yield server
    def left_there() -> set[str]:
        return link_names(server.ssh(["ip", "-o", "link"])) - {"lo", server.server_veth}

    deadline = time.monotonic() + SHELL_EXIT_S
    while (left_here() or left_there()) and time.monotonic() < deadline:
        time.sleep(0.05)
    here, there = left_here(), left_there()
    for pid in here.get("node shells", []):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for name in here.get("links", []):
        subprocess.run(["ip", "link", "del", name], capture_output=True)
    assert (here, there) == ({}, set())


def link_classes():
    return {"ssh": cluster.RemoteSSHLink, "vxlan": remote_vxlan_link_class()}


@pytest.mark.parametrize("link", ["ssh", "vxlan"])
def test_a_host_on_each_server_pings_across_the_tunnel(on_the_cluster, link):
    from mininet.net import Mininet

    if link == "ssh" and missing_tun():
        pytest.skip(missing_tun())

    server = on_the_cluster
    net = Mininet(host=cluster.RemoteHost, link=link_classes()[link], controller=None)
    try:
        here, there = net.addHost("ca"), net.addHost("cb", server=server.ip)
        net.addLink(here, there)
        net.start()
        assert there.cmd("hostname").strip() == server.hostname       # cb runs on server B ...
        assert here.cmd("hostname").strip() != server.hostname        # ... ca here
        assert link_names(there.cmd("ip -o link")) == {"lo", "cb-eth0"}  # the tunnel's end, in cb
        assert net.ping([here, there], timeout="2") == 0.0
    finally:
        net.stop()


def test_mininet_cluster_places_hosts_on_the_servers_its_topology_names(on_the_cluster):
    from mininet.topo import Topo

    server = on_the_cluster

    class TwoServers(Topo):
        def build(self):
            ca = self.addHost("ca", server="localhost")
            cb = self.addHost("cb", server=server.ip)
            cc = self.addHost("cc", server=server.ip, ip="10.1.0.2/24")
            self.addLink(ca, cb)                                            # crosses: a tunnel
            self.addLink(cb, cc, params1={"ip": "10.1.0.1/24"})             # on server B: a veth

    # controller=None: with no switches there is nothing to control, and this machine has no
    # OpenFlow reference controller ("Could not find a default OpenFlow controller")
    net = cluster.MininetCluster(topo=TwoServers(), servers=["localhost", server.ip],
                                 link=remote_vxlan_link_class(), controller=None,
                                 placement=cluster.RoundRobinPlacer)
    try:
        net.start()
        ca, cb, cc = net.get("ca", "cb", "cc")
        assert [n.cmd("hostname").strip() == server.hostname for n in (ca, cb, cc)] == [False, True, True]
        assert net.ping([ca, cb], timeout="2") == 0.0
        # cb's own address is on its tunnel port (10.0.0.2): ping the veth's ends by theirs
        assert " 0% packet loss" in cb.cmd("ping -c1 -W2 10.1.0.2")
        assert " 0% packet loss" in cc.cmd("ping -c1 -W2 10.1.0.1")
    finally:
        net.stop()
