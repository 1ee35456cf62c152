"""Make a FabricSpec real: Mininet hosts, Open vSwitch switches, shaped links.

`build_fabric(spec, controller_port, settings)` returns a running `Fabric`; its
`stop()` tears it down. The switches connect to the lab's controller on
127.0.0.1 in secure fail mode (never standalone: the fabric has loops, and
a learning switch floods it into a broadcast storm).

Facts of this machine kind that shape the code (docs/machine.md):
- no OVS kernel module on some machines: prefer the kernel datapath, fall
  back to the userspace one (`datapath=user`);
- with the userspace datapath, TCP/UDP need checksum offload off on hosts;
- a shaping qdisc on an OVS-userspace port loses packets silently when the
  one AF_PACKET transmit socket of ovs-vswitchd fills; its send buffer is
  sized to the fabric's worst backlog (ovs-vswitchd restarted if its
  socket is already too small; `net.core.wmem_default` raised until the
  first packet, then restored).
"""

from __future__ import annotations

import operator
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from topologies.build import (BuildError, check_port_program, host_nic_shaper, require_root, run_node_script, sh,
                               switch_port_configs)
from topologies.port_program import port_program
from topologies.openflow.ovs_budget import ovs_backlog_budget, ovs_tx_sndbuf
from topologies.system.commands import run_command
from topologies.dataplane import Settings
from topologies.fabric import FabricSpec
from topologies.cluster.node_access import LocalNode
from topologies.openflow.control import accepts_connections
from topologies.openflow.tables import all_tables
from topologies.system.waiting import wait_until

OVS_CTL = "/usr/share/openvswitch/scripts/ovs-ctl"
# Socket send buffer OVS's port sockets get while the fabric is built.
OVS_PORT_WMEM = "8388608"


# ---- prerequisites ------------------------------------------------------------
def ensure_ovs_running() -> None:
    if subprocess.run(["which", "ovs-vsctl"], capture_output=True).returncode != 0:
        raise BuildError("Open vSwitch is not installed: run sudo ./setup.sh (apt package openvswitch-switch)")
    if run_command(["ovs-vsctl", "--timeout=3", "show"], check=False, error=BuildError).returncode == 0:
        return
    run_command([OVS_CTL, "start", "--system-id=random"], what="could not start Open vSwitch", error=BuildError)


def kernel_datapath_available() -> bool:
    """True if the openvswitch kernel module is loaded or loadable."""
    if Path("/sys/module/openvswitch").exists():
        return True
    return subprocess.run(["modprobe", "-q", "openvswitch"], capture_output=True).returncode == 0


# ---- the Mininet topology -------------------------------------------------------
def mininet_topo(spec: FabricSpec):
    # mininet loads in ~0.1 s: only building or stopping a fabric pays for it
    from mininet.topo import Topo

    topo = Topo()
    for h in range(spec.hosts):
        topo.addHost(spec.host_name(h), ip=None)
    for name in spec.switch_names:
        topo.addSwitch(name, dpid=spec.dpid(name))
    for link in spec.links:
        if link.kind == "host-t0":
            topo.addLink(link.a, link.b, port1=link.a_port, port2=link.b_port,
                         addr1=spec.host_mac(link.element.host, link.plane))
        else:
            topo.addLink(link.a, link.b, port1=link.a_port, port2=link.b_port)
    return topo


@dataclass
class Fabric:
    """A running fabric. hosts: name -> Mininet host."""

    spec: FabricSpec
    net: object
    datapath: str
    build_s: float = 0.0
    hosts: dict = field(default_factory=dict)
    pauses: None = None     # the lossless mode runs on srv6 only (OpenFlowDataPlane.lossless_capable)

    def host(self, h: int):
        return self.hosts[self.spec.host_name(h)]

    def switch_ports(self) -> list[str]:
        return [intf.name for sw in self.net.switches for intf in sw.intfList() if intf.name != "lo"]

    def access(self, switch) -> LocalNode:
        """Every switch port lives in the root namespace."""
        return LocalNode(None)

    def stop(self) -> None:
        """Stop Mininet's nodes; the lab's cleanup removes whatever remains."""
        # mininet loads in ~0.1 s: only building or stopping a fabric pays for it
        from mininet.node import OVSSwitch

        net = self.net
        for host in net.hosts:
            host.terminate()
        OVSSwitch.batchShutdown(net.switches)
        for link in net.links:
            link.stop()


def check_build_prerequisites(shaping: bool) -> None:
    """Root, a running Open vSwitch and (when shaping) the switch port program,
    each failing with what to install: the lab never runs silently without trimming."""
    require_root()
    ensure_ovs_running()
    if shaping:
        check_port_program()


def lab_controller(port: int, name: str = "c0"):
    """Mininet's handle on the lab's controller (already listening on 127.0.0.1:port)."""
    # mininet loads in ~0.1 s: only building a fabric pays for it
    from mininet.node import RemoteController

    class LabController(RemoteController):
        # Mininet's own check runs `echo A | telnet ip port` in the node's shell and
        # decodes that output as UTF-8 (Node.read): when the controller's binary
        # OpenFlow HELLO wins the race with telnet's escape, it reaches that output
        # and a byte such as 0xf6 raises UnicodeDecodeError. Connect only instead.
        def isListening(self, ip, port):
            return accepts_connections(ip, port)

    return LabController(name, ip="127.0.0.1", port=port)


def build_fabric(spec: FabricSpec, controller_port: int, settings: Settings, shaping: bool = True,
                 trimming: bool = True) -> Fabric:
    """Build and start the fabric; returns once every switch holds its full
    table (verified by reading the tables back).

    settings: sets and restores the sysctl the build needs (topologies/dataplane.py Settings)

    shaping: shape every link to spec.link_mbps (switch ports through the
        port program, host NICs by host_nic_shaper); off only for functional tests
    trimming: switch ports trim DATA packets on congestion (True) or
        tail-drop them (False): the lab-wide switch of the port program
    """
    # mininet loads in ~0.1 s: only building or stopping a fabric pays for it
    from mininet.link import Link
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.node import OVSSwitch

    check_build_prerequisites(shaping)
    setLogLevel("error")
    datapath = "kernel" if kernel_datapath_available() else "user"
    started = time.monotonic()

    class LabSwitch(OVSSwitch):
        def __init__(self, name, **params):
            super().__init__(name, failMode="secure", datapath=datapath,
                             protocols="OpenFlow13", **params)

    net = Mininet(topo=mininet_topo(spec), switch=LabSwitch, controller=None, link=Link,
                  autoSetMacs=False, autoStaticArp=False, waitConnected=False, build=False)
    net.addController(lab_controller(controller_port))
    fabric = Fabric(spec=spec, net=net, datapath=datapath)
    try:
        net.build()
        fabric.hosts = {h.name: h for h in net.hosts}
        for h in range(spec.hosts):
            _configure_host(fabric, h, shaping)
        configs = switch_port_configs(spec, fabric.switch_ports(), trimming) if shaping else {}
        tx_need = prepare_ovs_tx_buffer(configs) if datapath == "user" else 0
        settings.set_sysctl("net.core.wmem_default", str(max(int(OVS_PORT_WMEM), tx_need)))
        try:
            net.start()
            for sw in net.switches:
                sw.cmd(f"ovs-vsctl br-set-external-id {sw.name} mrclab 1")
            # after net.start(): adding a port to a bridge makes OVS reset the root
            # qdisc of a port without QoS, which removed the port program's htb
            # (switch ports ran unshaped; measured: noqueue root after build)
            _configure_switch_ports(fabric, configs)
            wait_for_tables(spec)
            if tx_need:
                check_ovs_tx_buffer(fabric, tx_need)
        finally:
            settings.restore_sysctls()
    except BaseException:
        fabric.stop()
        raise
    fabric.build_s = time.monotonic() - started
    return fabric


def prepare_ovs_tx_buffer(configs: dict) -> int:
    """Make room for every shaped port's worst backlog in ovs-vswitchd's one
    transmit socket (see ovs_budget.py: beyond its send buffer OVS drops
    packets no counter names). That socket takes net.core.wmem_default when
    ovs-vswitchd first transmits, so: if it already exists and is too
    small, restart ovs-vswitchd -- only when no bridge exists (the session
    cleaned up the lab's first; anyone else's would be disturbed: then fail
    and say what to do); the caller keeps wmem_default at the returned size
    until the fabric's first packet has been sent."""
    need, have = ovs_backlog_budget(configs.values())
    if have is not None and have < need:
        others = run_command(["ovs-vsctl", "list-br"], check=False, error=BuildError).stdout.split()
        if others:  # never disturb bridges that are not the lab's
            raise BuildError(
                f"ovs-vswitchd's transmit socket buffer is {have} bytes, the fabric's queues need {need}, "
                f"and restarting it would disturb bridges that are not the lab's ({', '.join(others)}): "
                f"restart ovs-vswitchd yourself with net.core.wmem_default >= {need}, or remove them")
        run_command([OVS_CTL, "--no-ovsdb-server", "restart"], error=BuildError,
                    what="could not restart ovs-vswitchd to enlarge its transmit buffer")
    return need


def check_ovs_tx_buffer(fabric: Fabric, need: int) -> None:
    """Send one packet through the fabric so ovs-vswitchd opens its transmit
    socket now (while wmem_default is raised), then check its size."""
    spec = fabric.spec
    src, dst = fabric.host(0), spec.host_ip(spec.hosts - 1, 0)
    src.cmd(f"ping -c 1 -W 1 {dst} >/dev/null 2>&1")
    have = ovs_tx_sndbuf()
    if have is None or have < need:
        raise BuildError(f"ovs-vswitchd's transmit socket buffer is {have} bytes, the fabric's queues "
                         f"need {need}: congestion would lose packets no counter names "
                         "(see docs/port-program.md)")


def _configure_switch_ports(fabric: Fabric, configs: dict) -> None:
    """MTU and IPv6 off on every switch port; the port program on each one in `configs`."""
    spec = fabric.spec
    ports = fabric.switch_ports()
    for port in ports:
        # no IPv6 chatter (router/MLD solicitations) from the root namespace on
        # fabric ports: the conservation audit counts every packet on them
        Path(f"/proc/sys/net/ipv6/conf/{port}/disable_ipv6").write_text("1")
    sh(["ip", "-batch", "-"], input="".join(f"link set dev {p} mtu {spec.mtu}\n" for p in ports))
    if configs:
        port_program.attach_many(configs)


def _configure_host(fabric: Fabric, h: int, shaping: bool) -> None:
    """Addresses, MTU, offloads, static ARP, no IPv6 chatter, shaping."""
    spec = fabric.spec
    host = fabric.host(h)
    lines = [
        "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
        # the agents' EV sockets bind to fixed source ports; keep them out of
        # the ephemeral range of this namespace
        "sysctl -qw net.ipv4.ip_local_port_range='32768 49151'",
    ]
    neigh = []
    for p in range(spec.planes):
        dev = spec.host_intf(h, p)
        lines += [
            f"ip addr flush dev {dev}",
            f"ip addr add {spec.host_ip(h, p)}/{spec.plane_prefix_len()} dev {dev}",
            f"ip link set dev {dev} mtu {spec.mtu} up",
            f"ethtool -K {dev} tx off rx off >/dev/null 2>&1",
        ]
        if shaping:
            lines.append("tc -batch - <<'EOF'\n" + "\n".join(host_nic_shaper(dev, spec)) + "\nEOF")
        for peer in range(spec.hosts):
            if peer != h:
                neigh.append(f"neigh replace {spec.host_ip(peer, p)} lladdr {spec.host_mac(peer, p)} "
                             f"dev {dev} nud permanent")
    lines.append("ip -batch - <<'EOF'\n" + "\n".join(neigh) + "\nEOF")
    run_node_script(host, lines)


def expected_counts(spec: FabricSpec) -> dict[str, tuple[int, int]]:
    return {name: (len(t.flows), len(t.groups)) for name, t in all_tables(spec).items()}


def installed_counts(switch: str) -> tuple[int, int]:
    flows = sh(["ovs-ofctl", "-O", "OpenFlow13", "dump-aggregate", switch])
    flow_count = int(flows.split("flow_count=")[1].split()[0])
    groups = sh(["ovs-ofctl", "-O", "OpenFlow13", "dump-groups", switch])
    group_count = sum(1 for line in groups.splitlines() if "group_id=" in line)
    return flow_count, group_count


def wait_for_tables(spec: FabricSpec, timeout: float = 30.0) -> None:
    """Block until every switch holds exactly its static table."""
    pending = expected_counts(spec)

    def still_pending() -> dict:
        for name in list(pending):
            try:
                if installed_counts(name) == pending[name]:
                    del pending[name]
            except BuildError:
                pass  # switch not ready yet
        return pending

    if wait_until(still_pending, timeout, interval=0.2, done=operator.not_):
        raise BuildError(
            f"{len(pending)} switches lack their tables after {timeout:.0f} s "
            f"(e.g. {sorted(pending)[:3]}); is the controller running? see its log"
        )
