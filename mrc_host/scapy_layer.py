"""The MRC lab header as scapy layers, for captures and classroom exercises.

Mirrors docs/wire-format.md field for field; tests/unit/test_scapy_layer.py
checks that scapy and the struct codec in ``mrc_host.wire`` produce and
parse identical bytes. Fields left as ``None`` are filled in when built:
``hdr_len`` from the type, DATA ``length`` and ``msg_len`` from the payload.

    >>> from mrc_host.scapy_layer import MRC, MRCData
    >>> pkt = IP()/UDP(sport=0xC000 + 5, dport=4793)/MRC(ev=5, conn=7)/MRCData(psn=1)/b"x" * 100
"""

from __future__ import annotations

from scapy.fields import (BitField, ByteEnumField, ByteField, FlagsField, IntField, ShortField,
                          LongField, ShortField, XByteField)
from scapy.layers.inet import UDP
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
