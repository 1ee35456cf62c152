"""A pcap captured from a real exchange between two agents decodes with the
scapy layer, on both data planes (root: packet capture, network namespaces).

- openflow: the agents' IPv4 packets (what the OpenFlow data plane carries),
  captured on loopback with two agents in this process.
- srv6: two agents in the hosts of a small srv6 fabric (one host per rack, so
  every DATA packet crosses a T1), captured by tcpdump on the sender's T0
  ports facing it, inside the routers' namespaces: the paper's IPv6-in-IPv6
  packet, DATA leaving the sender with its route's uSID address outside and
  the receiver's address inside, ACKs arriving at the sender's own address
  (docs/wire-format.md, "The srv6 data plane"). The fabric exists only while
  the lab lock is held.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.sendrecv import AsyncSniffer
from scapy.utils import rdpcap, wrpcap

from lab.plumbing import cleanup
from lab.plumbing.lock import lab_lock
from lab.runners.agent_config import agent_config
from mrc_host import encap, wire
from mrc_host.agent import Agent, AgentConfig
from mrc_host.routes import route_of
from mrc_host.scapy_layer import MRC, MRCAck, MRCData, ecn_of, ev32_of
from tests.unit.test_agent import configs, drive
from topologies.system import netns
from topologies.fabric import FabricSpec
from topologies.srv6.builder import build_srv6_fabric
from topologies.srv6.plan import Srv6Plan
from topologies.dataplanes import dataplane_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (packet capture, namespaces)")

MESSAGE = bytes(range(256)) * 64
MSG_ID = 9
SRV6 = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=4, dataplane="srv6")
SENDER, RECEIVER = 0, 1          # h0 (rack 0) writes to h1 (rack 1)
CAPTURE_READY_S = 10.0           # tcpdump says "listening on" in well under a second
FLUSH_S = 1.0                    # lets the capture read what the kernel already queued for it
ROUTERS_CROSSED = 3              # an ACK from h1 reaches h0's T0 port through T0, T1, T0


# ---- the openflow data plane's packets: IPv4 on loopback -------------------------------------
def capture_ipv4(tmp_path) -> list:
    sniffer = AsyncSniffer(iface="lo", filter="udp", store=True)
    sniffer.start()
    time.sleep(0.5)  # the capture socket must be open before traffic starts
    ca, cb = configs(base=60)
    with Agent(ca) as a, Agent(cb) as b:
        b.register_buffer("a", bytearray(1 << 16))
        handle = a.write("b", MESSAGE, remote_offset=0, msg_id=MSG_ID)
        assert drive([a, b], lambda: handle.done)
    time.sleep(0.3)
    pcap = tmp_path / "mrc.pcap"
    wrpcap(str(pcap), sniffer.stop())
    return list(rdpcap(str(pcap)))


# ---- the srv6 data plane's packets: IPv6 on router ports ------------------------------------
def srv6_agent(fabric, me: int, peer: int) -> Agent:
    """Host `me`'s agent, its sockets made inside that host's namespace (they stay there)."""
    config = AgentConfig.from_dict(agent_config(dataplane_for(SRV6), me, [peer], transport="mrc", payload_size=1024,
                                                params={}, stats_path=None, recv_buffer_size=1 << 20))
    with netns.entered(fabric.host(me).pid):
        return Agent(config)


@contextlib.contextmanager
def tcpdump(pid: int, ifname: str, pcap):
    """tcpdump on `ifname` inside process `pid`'s namespace, writing `pcap`, for the block."""
    # UDP, alone or inside IPv6 (next header 41: the paper's packet)
    proc = subprocess.Popen([*netns.nsenter(pid), "tcpdump", "-i", ifname, "-n", "-U", "-w", str(pcap),
                             "udp or ip6 proto 41"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stderr], [], [], CAPTURE_READY_S)
        said = proc.stderr.readline() if ready else ""
        assert "listening on" in said, f"tcpdump on {ifname} did not start: {said.strip() or 'no answer'}"
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def host_ports(spec: FabricSpec, h: int) -> dict[int, str]:
    """{plane: the T0 port facing host h on that plane}."""
    return {p: spec.switch_intf(spec.t0_name(p, spec.rack_of(h)), spec.t0_host_port(h)) for p in range(spec.planes)}


def exchange_on_srv6(fabric, tmp_path) -> dict[int, list]:
    """h0 writes MESSAGE to h1 while every T0 port facing h0 is captured: {plane: packets}."""
    pcaps = {p: tmp_path / f"{port}.pcap" for p, port in host_ports(SRV6, SENDER).items()}
    with contextlib.ExitStack() as stack:
        for plane, port in host_ports(SRV6, SENDER).items():
            stack.enter_context(tcpdump(fabric.port_node(port).pid, port, pcaps[plane]))
        a = stack.enter_context(srv6_agent(fabric, SENDER, RECEIVER))
        b = stack.enter_context(srv6_agent(fabric, RECEIVER, SENDER))
        b.register_buffer(SRV6.host_name(SENDER), bytearray(1 << 16))
        handle = a.write(SRV6.host_name(RECEIVER), MESSAGE, remote_offset=0, msg_id=MSG_ID)
        assert drive([a, b], lambda: handle.done), "h0's write to h1 over the srv6 fabric did not complete"
        time.sleep(FLUSH_S)
    return {plane: list(rdpcap(str(pcap))) for plane, pcap in pcaps.items()}


@pytest.fixture(scope="module")
def srv6_capture(tmp_path_factory) -> dict[int, list]:
    with lab_lock():
        cleanup.clean()
        fabric = build_srv6_fabric(SRV6)
        try:
            yield exchange_on_srv6(fabric, tmp_path_factory.mktemp("srv6"))
        finally:
            fabric.stop()
            cleanup.clean()


# ---- what must match on both data planes ----------------------------------------------------
@pytest.fixture(params=["openflow", "srv6"])
def captured(request, tmp_path) -> list:
    if request.param == "openflow":
        return capture_ipv4(tmp_path)
    return [p for packets in request.getfixturevalue("srv6_capture").values() for p in packets]


def test_pcap_of_a_real_exchange_decodes(captured):
    packets = [p for p in captured if p.haslayer(UDP)]
    data = [p for p in packets if p.haslayer(MRCData)]
    acks = [p for p in packets if p.haslayer(MRCAck)]
    assert data and acks, f"captured {len(packets)} UDP packets, none decoded as MRC"
    for p in data + acks:
        assert p[MRC].version == wire.VERSION
        assert p[UDP].sport == wire.EV_PORT_BASE + p[MRC].ev  # the EV rides in the source port
    assert {p[MRCData].msg_id for p in data} == {MSG_ID}
    # loopback shows each packet twice (out and in), and a PSN may be retransmitted: count each once
    lengths = {p[MRCData].psn: p[MRCData].length for p in data}
    assert sum(lengths.values()) == len(MESSAGE)


# ---- srv6 only: the paper's packet, IPv6 in IPv6 ----------------------------------------------
def inner(p) -> IPv6:
    """The inner IPv6 header of the paper's packet (the outer one's payload)."""
    assert p[IPv6].nh == encap.NEXT_IPV6, f"not IPv6 in IPv6: {p.summary()}"
    return p[IPv6].payload


def test_srv6_data_carries_its_route_outside_the_receivers_address_inside(srv6_capture):
    plan = Srv6Plan(SRV6)
    for plane, packets in srv6_capture.items():
        data = [p for p in packets if p.haslayer(MRCData)]
        assert data, f"no DATA captured on plane {plane}"
        for p in data:
            ev = p[UDP].sport - wire.EV_PORT_BASE
            assert p[IPv6].src == inner(p).src == str(plan.host_address(SENDER, plane))
            assert plan.decode(p[IPv6].dst) == (plane, route_of(ev, plane, SRV6.spines)[1], RECEIVER)
            assert inner(p).dst == str(plan.host_address(RECEIVER, plane))   # the NIC's own address
            assert inner(p).nh == 17 and p[MRC].plane == plane and p[UDP].dport == wire.MRC_PORT
            assert p[UDP].chksum == 0
            assert ev32_of(p) == encap.ev32(plane, ev)   # the 32-bit EV: source port and flow label
            assert ecn_of(p) == wire.ECT0             # as sent: the host's own port marks nothing
        assert {p[UDP].sport - wire.EV_PORT_BASE for p in data} == set(SRV6.evs)   # sprayed on every EV


def test_srv6_acks_arrive_at_the_senders_own_address(srv6_capture):
    # the receiver picks the planes its ACKs go back on (it may coalesce them all on one):
    # ACKs must be there, but not necessarily on every plane
    plan, acks = Srv6Plan(SRV6), 0
    for plane, packets in srv6_capture.items():
        sent_hop_limits = {p[IPv6].hlim for p in packets if p.haslayer(MRCData)}
        for p in (p for p in packets if p.haslayer(MRCAck)):
            acks += 1
            assert p[IPv6].src == inner(p).src == str(plan.host_address(RECEIVER, plane))
            assert p[IPv6].dst == inner(p).dst == str(plan.host_address(SENDER, plane))   # every uSID consumed
            assert p[MRC].plane == plane and p[UDP].chksum == 0
            assert {p[IPv6].hlim + ROUTERS_CROSSED} == sent_hop_limits    # both hosts send the same hop limit
            assert inner(p).hlim == encap.HOP_LIMIT                        # routers decrement the outer only
    assert acks, "no ACK captured on any T0 port facing the sender"
