"""The srv6 fabric's nodes as Mininet makes them, and what names a cable's ends: the
namespace sysctls of hosts and routers, each router's hash seed, router port MACs and the
fabric-unique ifindex of every veth end. Shared by the builder (topologies/srv6/builder.py)
and the routers on other servers (topologies/srv6/remote_nodes.py)."""

from __future__ import annotations

import zlib
from pathlib import Path

from topologies.build import BuildError
from topologies.fabric import FabricSpec
from topologies.names import Host, Switch

# Namespace-wide IPv6 settings of every node, set before its ports exist so each port
# inherits them (`default`): IPv6 on, no router advertisements or solicitations, no
# duplicate address detection, no link-local addresses (neighbours are static).
NODE_SYSCTLS = {f"net.ipv6.conf.{scope}.{key}": value for scope in ("all", "default") for key, value in {
    "disable_ipv6": 0, "accept_ra": 0, "accept_dad": 0, "dad_transmits": 0, "router_solicitations": 0,
    "addr_gen_mode": 1}.items()}
# A router also forwards and accepts segment routing on every port.
# The baseline's ECMP routes pick a nexthop by the packet's 5-tuple hash (ports
# included), as a RoCE fabric's switches do, not by its addresses alone.
BASELINE_ROUTER_SYSCTLS = {"net.ipv6.fib_multipath_hash_policy": 1}
ROUTER_SYSCTLS = {**NODE_SYSCTLS, **{f"net.ipv6.conf.{scope}.{key}": 1 for scope in ("all", "default")
                                     for key in ("forwarding", "seg6_enabled")}, **BASELINE_ROUTER_SYSCTLS}
# Each router hashes with its own fixed seed (from its name). Left at 0, every namespace uses
# the kernel's one random key, drawn at boot: the baseline's flows then took the same T1s in
# every run on one machine and other T1s on the next machine, so whether a scenario's fault
# met them (t1-reboot's T1, production-day's first flap) changed with the machine. Kernels
# before 6.11 lack the setting and keep the boot key.
MULTIPATH_HASH_SEED = "net.ipv4.fib_multipath_hash_seed"   # covers IPv6 multipath too


def multipath_hash_seed(name: str) -> int:
    """The router's hash seed: nonzero (0 asks the kernel for a random one)."""
    return zlib.crc32(name.encode()) or 1


def has_multipath_hash_seed() -> bool:
    return Path("/proc/sys", *MULTIPATH_HASH_SEED.split(".")).exists()


# The ifindex of the veth ends of cable i of spec.links: FIRST_IFINDEX + 2i and + 2i + 1.
# Far above what the root namespace hands out (tens of thousands after days of lab
# runs), and the largest fabric's 2 x 3.4 M ends stay below 2**31.
FIRST_IFINDEX = 1_000_000_000


def mininet_node_classes():
    # mininet loads in ~0.1 s: only building or stopping a fabric pays for it
    from mininet.node import Node

    class Srv6Node(Node):
        """A fabric node in its own network namespace; `sysctls` are set as soon as it starts."""

        sysctls: dict = NODE_SYSCTLS

        def __init__(self, name, **params):
            super().__init__(name, inNamespace=True, **params)
            settings = " ".join(f"{key}={value}" for key, value in self.sysctls.items())
            out = self.cmd(f"sysctl -qw {settings} 2>&1 && echo mrclab-sysctl-ok")
            if "mrclab-sysctl-ok" not in out:
                raise BuildError(f"setting IPv6 sysctls in {name} failed: {out.strip()[-300:]}")

    class Router(Srv6Node):
        """A fabric switch as a kernel IPv6 router: forwarding and SRv6 on, its own hash seed."""

        sysctls = ROUTER_SYSCTLS

        def __init__(self, name, **params):
            if has_multipath_hash_seed():
                self.sysctls = {**ROUTER_SYSCTLS, MULTIPATH_HASH_SEED: multipath_hash_seed(name)}
            super().__init__(name, **params)

    return Srv6Node, Router


def router_port_mac(switch: Switch, port: int) -> str:
    """02:a<tier>:<plane>:<index>:<port, 2 bytes>: unique, and readable in `ip link`."""
    tier = 0xA0 + int(switch.tier[1])
    return f"02:{tier:02x}:{switch.plane:02x}:{switch.index:02x}:{port >> 8:02x}:{port & 0xFF:02x}"


def cable_end(spec: FabricSpec, name: str, port: int) -> tuple[str, str]:
    """(interface, MAC) of one end of a cable: a host's NIC port (port = plane) or a router port."""
    if Host.match(name) is not None:
        host = Host.parse(name).index
        return spec.host_intf(host, port), spec.host_mac(host, port)
    return spec.switch_intf(name, port), router_port_mac(Switch.parse(name), port)


def port_ifindex(cable: int, end: int) -> int:
    """The ifindex of end 0 (a) or 1 (b) of cable `cable` (its position in spec.links)."""
    return FIRST_IFINDEX + 2 * cable + end
