"""The MRC lab header as scapy layers, for captures and classroom exercises.

Mirrors docs/wire-format.md field for field; tests/unit/test_scapy_layer.py
checks that scapy and the struct codec in ``mrc_host.wire`` produce and
parse identical bytes. Fields left as ``None`` are filled in when built:
``hdr_len`` from the type, DATA ``length`` and ``msg_len`` from the payload.

    >>> from mrc_host.scapy_layer import MRC, MRCData
    >>> pkt = IP()/UDP(sport=0xC000 + 5, dport=4793)/MRC(ev=5, conn=7)/MRCData(psn=1)/b"x" * 100

The layers are bound to UDP's destination ports, so they dissect over either
IP family: IPv4 (the OpenFlow data plane) and IPv6 (the srv6 data plane, UDP
checksum 0), also with one Segment Routing Header between IPv6 and UDP, the
form the switch port program accepts (docs/wire-format.md):

    >>> IPv6(dst="fcbb:bb00:500:601:501:701::", tc=2)/UDP(sport=0xC005, dport=4793, chksum=0)/MRC(ev=5)
    >>> IPv6()/IPv6ExtHdrSegmentRouting(addresses=[...])/UDP(dport=4793)/MRC(ev=5)

MRC on the srv6 data plane travels as the paper's IPv6 in IPv6 (mrc_host/encap.py),
which scapy dissects with its own IPv6-in-IPv6 binding; ``ev32_of`` reads the 32-bit
EV back from the flow label and the source port:

    >>> IPv6(dst=route, fl=plane)/IPv6(dst=nic, fl=plane)/UDP(sport=0xC005, dport=4793, chksum=0)/MRC(ev=5)
"""

from __future__ import annotations

from scapy.fields import (BitField, ByteEnumField, ByteField, FlagsField, IntField, LongField,
                          ShortField, XByteField)
from scapy.layers.inet import IP, UDP
# loaded for its bindings (Ether -> IPv6 -> SRH -> UDP), so a capture of the srv6
# data plane dissects whatever else the caller imported
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting  # noqa: F401
from scapy.packet import Packet, bind_layers

from . import wire

TYPE_NAMES = {wire.T_DATA: "DATA", wire.T_ACK: "ACK", wire.T_NACK: "NACK",
              wire.T_PROBE: "PROBE", wire.T_PROBE_REPLY: "PROBE_REPLY"}
# FlagsField lists bit names from the least significant bit.
FLAG_NAMES = ["RETX", "TRIMMED", "ECN_ECHO", "LAST", "DUPLICATE", "b5", "b6", "b7"]


class MRC(Packet):
    """Common 12-byte MRC header (every packet type)."""

    name = "MRC"
    fields_desc = [
        ByteField("version", wire.VERSION),
        ByteEnumField("type", wire.T_DATA, TYPE_NAMES),
        FlagsField("flags", 0, 8, FLAG_NAMES),
        ByteField("hdr_len", None),
        ShortField("ev", 0),
        ByteField("plane", 0),
        XByteField("reserved", 0),
        IntField("conn", 0),
    ]

    def post_build(self, pkt, pay):
        if self.hdr_len is None:
            pkt = pkt[:3] + bytes([wire.HDR_LEN.get(self.type, wire.COMMON_LEN)]) + pkt[4:]
        return pkt + pay


class MRCData(Packet):
    """DATA fields (offsets 12..35); the payload follows unless TRIMMED."""

    name = "MRC DATA"
    fields_desc = [
        IntField("msg_id", 0),
        IntField("psn", 0),
        LongField("offset", 0),
        IntField("msg_len", None),
        ShortField("length", None),
        ShortField("reserved", 0),
    ]

    def post_build(self, pkt, pay):
        if self.length is None:
            pkt = pkt[:20] + len(pay).to_bytes(2, "big") + pkt[22:]
        if self.msg_len is None:
            length = int.from_bytes(pkt[20:22], "big")
            pkt = pkt[:16] + length.to_bytes(4, "big") + pkt[20:]
        return pkt + pay


class MRCAck(Packet):
    name = "MRC ACK"
    fields_desc = [
        IntField("cum_psn", 0),
        BitField("sack", 0, 64),
        IntField("acked_psn", 0),
        ShortField("ports", wire.ALL_PORTS_UP),
        ShortField("reserved", 0),
    ]


class MRCNack(Packet):
    name = "MRC NACK"
    fields_desc = [
        IntField("psn", 0),
        ByteEnumField("reason", wire.NACK_TRIMMED, {wire.NACK_TRIMMED: "TRIMMED",
                                                     wire.NACK_OTHER: "OTHER"}),
        BitField("reserved", 0, 24),
    ]


class MRCProbe(Packet):
    """PROBE and PROBE_REPLY share this layout."""

    name = "MRC PROBE"
    fields_desc = [
        IntField("seq", 0),
        LongField("timestamp_ns", 0),
    ]


bind_layers(UDP, MRC, dport=wire.MRC_PORT)
bind_layers(UDP, MRC, dport=wire.BASELINE_PORT)
bind_layers(MRC, MRCData, type=wire.T_DATA)
bind_layers(MRC, MRCAck, type=wire.T_ACK)
bind_layers(MRC, MRCNack, type=wire.T_NACK)
bind_layers(MRC, MRCProbe, type=wire.T_PROBE)
bind_layers(MRC, MRCProbe, type=wire.T_PROBE_REPLY)


def ev32_of(packet: Packet) -> int:
    """The 32-bit EV of a captured MRC packet in the paper's form (encap.py): the flow
    label of its outer IPv6 header (the high half) and its UDP source port (the low)."""
    if IPv6 not in packet or UDP not in packet:
        raise ValueError(f"not an IPv6 packet with UDP: {packet.summary()}")
    return packet[IPv6].fl << 16 | packet[UDP].sport


def ecn_of(packet: Packet) -> int:
    """The ECN codepoint of a captured packet: the IPv4 TOS byte's or the IPv6
    traffic class's low two bits (wire.ECT0, wire.ECN_CE, ...); ValueError if
    it carries neither header."""
    if IPv6 in packet:   # the outer header of the paper's packet: where a router marks CE
        return packet[IPv6].tc & wire.ECN_MASK
    if IP in packet:
        return packet[IP].tos & wire.ECN_MASK
    raise ValueError(f"no IP header to read ECN from: {packet.summary()}")
