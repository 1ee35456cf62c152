"""What building either data plane's fabric needs: the build's error, running
commands and node scripts, and the shaping every fabric gets (host NICs by a
tbf with a control band, switch ports through the port program).

The OpenFlow fabric (topologies/openflow/builder.py) and the srv6 one
(topologies/srv6/builder.py) both build on these.
"""

from __future__ import annotations

import os
import tempfile

from topologies.port_program import port_program, shaping
from topologies.system.commands import COMMAND_TIMEOUT_S, run_command
from topologies.fabric import FabricSpec
from topologies.port_program.lossless import Thresholds
from topologies.names import SwitchPort


class BuildError(RuntimeError):
    """The fabric could not be built; the message names what to fix."""


def sh(cmd: list[str], timeout: float = COMMAND_TIMEOUT_S, input: str | None = None) -> str:
    return run_command(cmd, timeout=timeout, input=input, error=BuildError).stdout


def require_root() -> None:
    if os.geteuid() != 0:
        raise BuildError("the lab needs root: run it with sudo")


def check_port_program() -> None:
    """The lab never runs silently without trimming: say what is missing."""
    try:
        port_program.check_prerequisites()
    except port_program.PortProgramError as exc:
        raise BuildError(f"switch port program unavailable: {exc}") from None


def host_nic_shaper(dev: str, spec: FabricSpec) -> list[str]:
    """tc batch lines that shape host NIC port `dev` to the fabric's link rate,
    its agent's control datagrams ahead of its DATA (topologies/port_program/shaping.py)."""
    if spec.lossless:   # the switch ports' htb, so a pause can hold DATA alone (docs/lossless.md)
        return shaping.lossless_host_shaper(dev, spec.link_bps, port_program.htb_burst_bytes(int(spec.link_bps)))
    # burst: two jumbo frames at line speed after an idle spell, as a NIC sends them
    return shaping.host_shaper(dev, spec.link_bps, 2 * (spec.mtu + 14))


def switch_port_configs(spec: FabricSpec, ports: list[str], trimming: bool) -> dict:
    """The port program's configuration of every switch port: shaped rate,
    virtual-queue trimming (or tail drop), ECN except on the last hop (T0
    ports facing hosts, as UEC/MRC do)."""
    last_hop = last_hop_ports(spec)
    return {port: port_program.PortConfig(rate_bps=int(spec.link_bps), trimming=trimming,
                                          ecn=port not in last_hop, **lossless_fields(spec, port))
            for port in ports}


def lossless_fields(spec: FabricSpec, port: str) -> dict:
    """A switch port's PortConfig fields of the lossless mode (none when it is off): its
    thresholds, sized for its switch's ports, and its bit as an ingress port."""
    if not spec.lossless:
        return {}
    where = SwitchPort.parse(port)
    ports = spec.hosts_per_rack + spec.spines if where.switch.tier == "t0" else spec.racks
    return {"lossless": Thresholds.for_rate(spec.link_bps, ports), "port_bit": where.port}


def last_hop_ports(spec: FabricSpec) -> set[str]:
    """The T0 ports facing hosts: what leaves one is delivered."""
    return {spec.switch_intf(l.b, l.b_port) for l in spec.links if l.kind == "host-t0"}


def mark_ecn_on_last_hops(spec: FabricSpec) -> None:
    """ECN marking on the last hops too, on a live fabric built with switch_port_configs: a RoCE
    fabric marks every hop for DCQCN, where UEC/MRC's (and the lab's) trim at the last hop."""
    for port in sorted(last_hop_ports(spec)):
        port_program.set_ecn(port, True)


def run_node_script(node, lines: list[str]) -> None:
    """Run shell `lines` inside a Mininet node, stopping at the first failure;
    BuildError naming the node and what the script printed if it did not finish."""
    text = "set -e\n" + "\n".join(lines) + "\necho mrclab-configured\n"
    if getattr(node, "isRemote", False):   # on another server (topologies/cluster/remote.py): no file of ours there
        out = node.run_script(text)
    else:
        # Mininet's cmd() takes one line: run the script from a file instead.
        with tempfile.NamedTemporaryFile("w", prefix="mrclab-node-", suffix=".sh") as script:
            script.write(text)
            script.flush()
            out = node.cmd(f"bash {script.name} 2>&1")
    if "mrclab-configured" not in out:
        raise BuildError(f"configuring {node.name} failed: {out.strip()[-300:]}")

