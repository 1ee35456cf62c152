"""The paper's IPv6-in-IPv6 packet (mrc_host/encap.py): scapy decodes what the agent
writes field for field, and the receiver's check takes only that packet."""

import random

from hypothesis import given, settings, strategies as st
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6

from mrc_host import encap, wire
from mrc_host.scapy_layer import MRC, MRCData, ev32_of

SRC, ROUTE, NIC = "fcbb:bb00:100:300::", "fcbb:bb00:100:200:101:301::", "fcbb:bb00:101:301::"


def _packet(plane: int, ev: int, datagram: bytes, port: int = wire.MRC_PORT) -> bytes:
    headers = encap.headers(SRC, ROUTE, NIC, plane, ev, port)
    encap.set_length(headers, len(datagram))
    return bytes(headers) + datagram


@settings(max_examples=100)
@given(st.integers(0, 15), st.integers(0, wire.EV_LIMIT - 1), st.binary(max_size=300))
def test_scapy_reads_the_paper_s_packet_as_the_agent_wrote_it(plane, ev, payload):
    datagram = wire.encode_data(0, ev, plane, 7, 1, 2, 0, len(payload), payload)
    pkt = IPv6(_packet(plane, ev, datagram))
    outer, inner = pkt, pkt[IPv6].payload
    assert (outer.src, outer.dst, outer.nh, outer.tc, outer.hlim) == (SRC, ROUTE, 41, wire.ECT0, 64)
    assert (inner.src, inner.dst, inner.nh, inner.tc) == (SRC, NIC, 17, wire.ECT0)
    assert outer.plen == 40 + 8 + len(datagram) and inner.plen == 8 + len(datagram)
    assert (pkt[UDP].sport, pkt[UDP].dport, pkt[UDP].len, pkt[UDP].chksum) == \
        (wire.EV_PORT_BASE + ev, wire.MRC_PORT, 8 + len(datagram), 0)
    assert pkt[MRC].ev == ev and pkt[MRC].plane == plane and bytes(pkt[MRCData].payload) == payload
    # the 32-bit EV: the source port in the low half, the flow label (both headers) the high
    assert outer.fl == inner.fl == plane
    assert ev32_of(pkt) == encap.ev32(plane, ev) == plane << 16 | wire.EV_PORT_BASE + ev


def test_scapy_builds_the_same_bytes():
    datagram = wire.encode_ack(0, 5, 3, 9, 10, 0, 9)
    theirs = (IPv6(src=SRC, dst=ROUTE, tc=wire.ECT0, fl=3) / IPv6(src=SRC, dst=NIC, tc=wire.ECT0, fl=3)
              / UDP(sport=wire.EV_PORT_BASE + 5, dport=wire.MRC_PORT, chksum=0) / datagram)
    assert bytes(theirs) == _packet(3, 5, datagram)


def test_the_receiver_takes_the_inner_datagram_only_to_its_port():
    good = _packet(1, 4, wire.encode_nack(0, 4, 1, 9, 3, wire.NACK_TRIMMED))[encap.IPV6_HEADER:]
    assert encap.inner_datagram(good, len(good), wire.MRC_PORT)
    assert not encap.inner_datagram(good, len(good), wire.BASELINE_PORT)       # another transport's
    assert not encap.inner_datagram(good, encap.INNER_HEADERS + 4, wire.MRC_PORT)  # no MRC header
    not_udp = bytearray(good)
    not_udp[6] = 58                                    # ICMPv6 inside
    assert not encap.inner_datagram(not_udp, len(not_udp), wire.MRC_PORT)
    ipv4_inside = bytearray(good)
    ipv4_inside[0] = 0x45
    assert not encap.inner_datagram(ipv4_inside, len(ipv4_inside), wire.MRC_PORT)


def test_garbage_never_raises():
    rng = random.Random(5)
    for _ in range(5000):
        junk = rng.randbytes(rng.randrange(0, 120))
        encap.inner_datagram(memoryview(junk), len(junk), wire.MRC_PORT)


def test_a_trimmed_packet_keeps_its_headers_consistent():
    """What the port program leaves of a DATA packet: both IPv6 lengths and the UDP
    length cover the MRC header alone (topologies/port_program/port_program.c trim)."""
    full = _packet(2, 1, wire.encode_data(0, 1, 2, 7, 1, 2, 0, 8192, bytes(8192)))
    trimmed = bytearray(full[:encap.HEADERS + wire.DATA_HDR_LEN])
    encap.set_length(trimmed, wire.DATA_HDR_LEN)
    pkt = IPv6(bytes(trimmed))
    assert pkt.plen == 40 + 8 + 36 and pkt[IPv6].payload.plen == 8 + 36 and pkt[UDP].len == 44
    assert pkt[MRCData].length == 8192
