"""The scapy layer over IPv6, as the srv6 data plane carries MRC (docs/wire-format.md):
IPv6 + UDP (checksum 0) + MRC, and IPv6 + one Segment Routing Header + UDP + MRC.
Packets built with scapy must dissect into the fields mrc_host.wire encodes, and
their MRC bytes must be wire's bytes."""

import pytest
from hypothesis import given, settings, strategies as st
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting
from scapy.layers.l2 import Ether

from mrc_host import wire
from mrc_host.scapy_layer import MRC, MRCAck, MRCData, MRCProbe, ecn_of

SENDER = "fcbb:bb00:100:300::"               # h0's plane-0 address
ROUTE = "fcbb:bb00:100:601:101:301::"        # h0 -> h3, plane 0, T1 1 (docs/srv6.md)
ARRIVED = "fcbb:bb00:101:301::"              # h3's own plane-0 address
EV = 5
# explicit MACs: an Ether() without them makes scapy resolve the IPv6 neighbour (seconds per packet)
LINK = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
u32, u64 = st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)


def carried(mrc_bytes: bytes, srh: bool, tc: int = wire.ECT0, dst: str = ROUTE) -> bytes:
    """An Ethernet frame of the srv6 data plane carrying `mrc_bytes`: the EV in the
    source port, checksum 0 as the agents send it (UDP_NO_CHECK6_TX)."""
    ip = IPv6(src=SENDER, dst=dst, tc=tc, fl=0x12345, hlim=61)
    if srh:
        ip = ip / IPv6ExtHdrSegmentRouting(addresses=[ARRIVED, dst], segleft=1)
    udp = UDP(sport=wire.ev_to_port(EV), dport=wire.MRC_PORT, chksum=0)
    return bytes(LINK.copy() / ip / udp / mrc_bytes)


def dissected(frame: bytes):
    packet = Ether(frame)
    assert packet.haslayer(MRC), f"not dissected as MRC: {packet.summary()}"
    return packet


def trim_like_a_port(frame: bytes) -> bytes:
    """What the switch port program does to a DATA packet over IPv6 (docs/port-program.md):
    keep the headers and hdr_len bytes of MRC, set TRIMMED, fix the IPv6 payload
    length (it counts the SRH) and the UDP length, UDP checksum 0."""
    packet = Ether(frame)
    udp_bytes = bytes(packet[UDP])
    mrc = wire.trim(udp_bytes[8:])
    packet[UDP].remove_payload()
    packet[UDP].len, packet[UDP].chksum = 8 + len(mrc), 0
    packet[IPv6].plen = None   # scapy recomputes it: extension headers + UDP
    return bytes(packet / MRC(mrc))


def check_ipv6_fields(packet, srh: bool) -> None:
    ip = packet[IPv6]
    assert (ip.src, ip.dst, ip.fl, ip.hlim) == (SENDER, ROUTE, 0x12345, 61)
    assert packet[UDP].chksum == 0 and packet[UDP].sport - wire.EV_PORT_BASE == packet[MRC].ev == EV
    assert ip.plen == len(ip.payload) and packet[UDP].len == len(packet[UDP])
    assert packet.haslayer(IPv6ExtHdrSegmentRouting) == srh


@pytest.mark.parametrize("srh", [False, True], ids=["ipv6", "ipv6+srh"])
@settings(max_examples=40)
@given(msg_id=u32, psn=u32, offset=u64, payload=st.binary(min_size=1, max_size=300))
def test_data_and_its_trimmed_header(srh, msg_id, psn, offset, payload):
    encoded = wire.encode_data(wire.F_LAST, EV, 0, 7, msg_id, psn, offset, len(payload) + 9, payload)
    whole = dissected(carried(encoded, srh))
    check_ipv6_fields(whole, srh)
    assert bytes(whole[MRC]) == encoded and wire.parse(bytes(whole[MRC])).psn == psn
    assert (whole[MRCData].msg_id, whole[MRCData].offset, whole[MRCData].length) == (msg_id, offset, len(payload))

    trimmed = dissected(trim_like_a_port(carried(encoded, srh)))
    check_ipv6_fields(trimmed, srh)
    assert bytes(trimmed[MRC]) == wire.trim(encoded) and len(trimmed[UDP]) == 8 + wire.DATA_HDR_LEN
    assert trimmed[MRC].flags.TRIMMED and trimmed[MRC].flags.LAST
    assert trimmed[MRCData].length == len(payload)   # the length as sent survives the trim
    assert not trimmed[MRCData].payload               # nothing after the header


@pytest.mark.parametrize("srh", [False, True], ids=["ipv6", "ipv6+srh"])
@settings(max_examples=40)
@given(flags=st.sampled_from([0, wire.F_ECN_ECHO, wire.F_DUPLICATE, wire.F_DUPLICATE | wire.F_ECN_ECHO]),
       cum=u32, sack=u64, acked=u32, ports=st.integers(0, 0xFFFF))
def test_ack_with_its_flags(srh, flags, cum, sack, acked, ports):
    encoded = wire.encode_ack(flags, EV, 3, 11, cum, sack, acked, ports)
    packet = dissected(carried(encoded, srh))
    check_ipv6_fields(packet, srh)
    assert bytes(packet[MRC]) == encoded
    ack = packet[MRCAck]
    assert (ack.cum_psn, ack.sack, ack.acked_psn, ack.ports) == (cum, sack, acked, ports)
    assert int(packet[MRC].flags) == flags
    assert bool(packet[MRC].flags.DUPLICATE) == bool(flags & wire.F_DUPLICATE)
    assert wire.parse(bytes(packet[MRC])).flags == flags


@pytest.mark.parametrize("reply", [False, True], ids=["probe", "probe-reply"])
@pytest.mark.parametrize("srh", [False, True], ids=["ipv6", "ipv6+srh"])
def test_probe(srh, reply):
    encoded = wire.encode_probe(reply, 0, EV, 6, 13, 42, 1_234_567_890_123)
    packet = dissected(carried(encoded, srh))
    check_ipv6_fields(packet, srh)
    assert bytes(packet[MRC]) == encoded
    assert (packet[MRCProbe].seq, packet[MRCProbe].timestamp_ns) == (42, 1_234_567_890_123)
    assert packet[MRC].type == (wire.T_PROBE_REPLY if reply else wire.T_PROBE)


def test_ecn_is_read_from_the_traffic_class():
    # a DSCP in the traffic class's upper bits must not hide the ECN bits
    for tc, ecn in ((wire.ECT0, wire.ECT0), (wire.ECN_CE, wire.ECN_CE), (0xB8 | wire.ECT0, wire.ECT0), (0, 0)):
        assert ecn_of(dissected(carried(wire.encode_probe(False, 0, EV, 0, 1, 1, 1), False, tc=tc))) == ecn


def test_scapy_built_mrc_over_ipv6_is_what_wire_encodes():
    # the other direction: scapy builds the MRC header, wire parses it out of the IPv6 frame
    udp = UDP(sport=wire.ev_to_port(EV), dport=wire.MRC_PORT, chksum=0)
    frame = bytes(LINK.copy() / IPv6(src=SENDER, dst=ARRIVED) / udp
                  / MRC(type=wire.T_ACK, flags=wire.F_DUPLICATE, ev=EV, plane=2, conn=9)
                  / MRCAck(cum_psn=100, sack=0b101, acked_psn=103))
    assert bytes(Ether(frame)[MRC]) == wire.encode_ack(wire.F_DUPLICATE, EV, 2, 9, 100, 0b101, 103)
