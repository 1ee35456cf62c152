"""The Clustermapper's probes on the OpenFlow data plane (docs/mapper.md): the
switches' tables reflect them (topologies/openflow/tables.py).

A probe is an Ethernet frame to the host's own plane address, UDP port
MAPPER_PORT, sent and received with AF_PACKET: a UDP socket to one's own
address never leaves the host, and the kernel drops an arriving IP packet whose
source is a local address. A T1 probe only counts when it comes back with that
T1's mark as Ethernet source.
"""

from __future__ import annotations

import ctypes
import socket
import struct

from topologies.mapper_probe_wire import Target, targets
from topologies.mapper_probe_wire import MAGIC, PACKET_QDISC_BYPASS, PAYLOAD, SOL_PACKET, mac_bytes
from mrc_host.wire import EV_PORT_BASE, MAPPER_PORT
from topologies.fabric import FabricSpec
from topologies.openflow.tables import mapper_ev

ETH_P_IP = 0x0800
PACKET_IGNORE_OUTGOING = 23
SO_ATTACH_FILTER = 26  # asm-generic/socket.h


def _ip_checksum(header: bytes) -> int:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    total = (total & 0xFFFF) + (total >> 16)
    total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def probe_frame(spec: FabricSpec, host: int, target: Target, seq: int) -> bytes:
    """Ethernet + IPv4 + UDP to the host's own plane address; the UDP source
    port tells the T0 what to do (tables.py: MAPPER_PORT = reflect, an EV = up)."""
    mac, ip = mac_bytes(spec.host_mac(host, target.plane)), socket.inet_aton(spec.host_ip(host, target.plane))
    sport = MAPPER_PORT if target.t1 is None else EV_PORT_BASE + mapper_ev(spec, target.t1)
    payload = PAYLOAD.pack(MAGIC, host, seq)
    udp = struct.pack("!HHHH", sport, MAPPER_PORT, 8 + len(payload), 0) + payload  # UDP checksum 0: none
    ip_header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, ip, ip)
    ip_header = ip_header[:10] + struct.pack("!H", _ip_checksum(ip_header)) + ip_header[12:]
    return mac + mac + struct.pack("!H", ETH_P_IP) + ip_header + udp


def parse_reply(frame: bytes) -> tuple[int, int, bytes] | None:
    """(host, seq, Ethernet source) of a returned probe, None for anything else."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    udp = 14 + (frame[14] & 0x0F) * 4
    if len(frame) < udp + 8 + PAYLOAD.size or struct.unpack_from("!H", frame, udp + 2)[0] != MAPPER_PORT:
        return None
    magic, host, seq = PAYLOAD.unpack_from(frame, udp + 8)
    return (host, seq, frame[6:12]) if magic == MAGIC else None


def _udp_port_filter(port: int):
    """A classic BPF socket filter passing only unfragmented IPv4 UDP to `port`:
    the plane's NIC also carries the agents' data, which the mapper must not copy."""
    code = [(0x28, 0, 0, 12), (0x15, 0, 8, ETH_P_IP), (0x30, 0, 0, 23), (0x15, 0, 6, 17),
            (0x28, 0, 0, 20), (0x45, 4, 0, 0x1FFF), (0xB1, 0, 0, 14), (0x48, 0, 0, 16),
            (0x15, 0, 1, port), (0x06, 0, 0, 0xFFFF), (0x06, 0, 0, 0)]
    program = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *ins) for ins in code))
    return program, struct.pack("HL", len(code), ctypes.addressof(program))


def open_plane_socket(ifname: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
    program, fprog = _udp_port_filter(MAPPER_PORT)  # `program` lives until the kernel copied it
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    del program
    sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    # past the host's shaping queue: a probe measures the fabric, not this host's backlog
    sock.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    sock.bind((ifname, ETH_P_IP))
    sock.setblocking(False)
    return sock


class OpenFlowProbes:
    """Probes the OpenFlow tables reflect: Ethernet frames on AF_PACKET sockets, one per
    NIC port; a reply proves its path by its Ethernet source (the reflecting element's mark)."""

    def __init__(self, spec: FabricSpec, host: int):
        self.spec, self.host = spec, host
        self.expected_src = {t: mac_bytes(spec.host_mac(host, t.plane)) if t.t1 is None else
                             mac_bytes(spec.t1_mac(t.plane, t.t1)) for t in targets(spec)}
        self.socks = {p: open_plane_socket(spec.host_intf(host, p)) for p in range(spec.planes)}

    def send(self, target: Target, seq: int) -> None:
        self.socks[target.plane].send(probe_frame(self.spec, self.host, target, seq))

    def replies(self, plane: int):
        """(seq, Ethernet source) of each of this host's probes waiting on `plane`'s socket."""
        while True:
            try:
                frame = self.socks[plane].recv(2048)
            except BlockingIOError:
                return
            reply = parse_reply(frame)
            if reply is not None and reply[0] == self.host:
                yield reply[1], reply[2]

    def proves(self, target: Target, plane: int, evidence) -> bool:
        return target.plane == plane and evidence == self.expected_src[target]

    def close(self) -> None:
        for sock in self.socks.values():
            sock.close()
