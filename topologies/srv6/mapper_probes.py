"""The Clustermapper's probes on the srv6 data plane (docs/mapper.md, "On srv6").

No router holds a reflection rule: a probe's destination is a source route back
to its sender (topologies/srv6/plan.py reflection_address):

    T0 hop of plane p   [block][own T0][own T0][own host]         the T0 only
    T1 s of plane p     [block][own T0][T1 s][own T0][own host]   T0, T1 s, T0

Sent as an Ethernet frame on an AF_PACKET socket per NIC port, past the host's
shaping queue (PACKET_QDISC_BYPASS, as on OpenFlow: a probe measures the fabric,
not this host's backlog, and its DATA queue holds seconds of data), with a zero UDP
checksum: every End rewrites the destination address the checksum would cover.
Received on a UDP socket bound to the host's own plane address, accepting zero
checksums (UDP_NO_CHECK6_RX). Each router takes one off the hop limit, so a
reply proves how many routers carried it (1 or 3): the counterpart of the
OpenFlow reflection's Ethernet source mark.
"""

from __future__ import annotations

import socket
import struct

from topologies.mapper_probe_wire import Target, targets
from topologies.mapper_probe_wire import MAGIC, PACKET_QDISC_BYPASS, PAYLOAD, SOL_PACKET, mac_bytes
from topologies.fabric import FabricSpec
from topologies.names import Switch
from topologies.srv6.nodes import router_port_mac
from topologies.srv6.plan import Srv6Plan
from mrc_host.udp6 import zero_checksums
from mrc_host.wire import MAPPER_PORT

ETH_P_IPV6 = 0x86DD
SEND_HOP_LIMIT = 64  # written in every probe; a reply arrives with this minus the routers crossed
HOP_LIMIT = struct.Struct("=i")  # the IPV6_HOPLIMIT control message: a native int
IPV6_HEADER = struct.Struct("!IHBB16s16s")  # version/class/flow, payload length, next header, hop limit, src, dst


def probe_frame(gateway_mac: bytes, own_mac: bytes, source: bytes, destination: bytes, payload: bytes) -> bytes:
    """Ethernet + IPv6 + UDP (MAPPER_PORT both ways, checksum 0) from `source` to `destination`."""
    udp = struct.pack("!HHHH", MAPPER_PORT, MAPPER_PORT, 8 + len(payload), 0) + payload
    ip = IPV6_HEADER.pack(6 << 28, len(udp), socket.IPPROTO_UDP, SEND_HOP_LIMIT, source, destination)
    return gateway_mac + own_mac + struct.pack("!H", ETH_P_IPV6) + ip + udp


def open_send_socket(ifname: str) -> socket.socket:
    """A packet socket that only sends (protocol 0: nothing is copied to it)."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    sock.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    sock.bind((ifname, 0))
    return sock


def open_receive_socket(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    zero_checksums(sock, send=False)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVHOPLIMIT, 1)
    sock.bind((address, MAPPER_PORT))
    sock.setblocking(False)
    return sock


class Srv6Probes:
    """One host's probes on srv6: a MapperProbes (topologies/mapper_probe_wire.py);
    a reply's evidence is the hop limit it arrived with."""

    def __init__(self, spec: FabricSpec, host: int):
        plan = Srv6Plan(spec)
        self.spec, self.host = spec, host
        self.frames = {t: self._frame_parts(plan, t) for t in targets(spec)}
        self.senders: dict[int, socket.socket] = {}
        self.socks: dict[int, socket.socket] = {}  # plane -> where its replies arrive
        try:
            for p in range(spec.planes):
                self.senders[p] = open_send_socket(spec.host_intf(host, p))
                self.socks[p] = open_receive_socket(str(plan.host_address(host, p)))
        except OSError:
            self.close()
            raise

    def _frame_parts(self, plan: Srv6Plan, target: Target) -> tuple[bytes, bytes, bytes, bytes]:
        rack = self.spec.rack_of(self.host)
        gateway = router_port_mac(Switch.t0(target.plane, rack), self.spec.t0_host_port(self.host))
        return (mac_bytes(gateway), mac_bytes(self.spec.host_mac(self.host, target.plane)),
                plan.host_address(self.host, target.plane).packed,
                plan.reflection_address(self.host, target.plane, target.t1).packed)

    def send(self, target: Target, seq: int) -> None:
        payload = PAYLOAD.pack(MAGIC, self.host, seq)
        self.senders[target.plane].send(probe_frame(*self.frames[target], payload))

    def replies(self, plane: int):
        """(seq, hop limit on arrival) of each of this host's probes waiting on `plane`'s socket."""
        while True:
            try:
                data, ancillary, _, _ = self.socks[plane].recvmsg(64, socket.CMSG_SPACE(HOP_LIMIT.size))
            except BlockingIOError:
                return
            if len(data) != PAYLOAD.size:
                continue  # not a probe: dropped
            magic, host, seq = PAYLOAD.unpack(data)
            hops = next((HOP_LIMIT.unpack(value[:HOP_LIMIT.size])[0] for level, kind, value in ancillary
                         if level == socket.IPPROTO_IPV6 and kind == socket.IPV6_HOPLIMIT), None)
            if magic == MAGIC and host == self.host:
                yield seq, hops

    @staticmethod
    def proves(target: Target, plane: int, hop_limit) -> bool:
        return target.plane == plane and hop_limit == SEND_HOP_LIMIT - Srv6Plan.reflection_routers(target.t1)

    def close(self) -> None:
        for sock in [*self.senders.values(), *self.socks.values()]:
            sock.close()

