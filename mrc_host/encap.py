"""The MRC paper's packet on the wire: IPv6 in IPv6 (sans-IO; agent_sockets.py sends it).

On the srv6 data plane an MRC datagram leaves the host as the paper's
section 2.2 describes:

    outer IPv6  src = the sender's address on the plane
                dst = the route: the uSID carrier [block][src T0][T1][dst T0][dst host]
                next header 41 (IPv6), flow label = the EV's high 16 bits
    inner IPv6  src = the same, dst = the receiving NIC's own address
                next header 17 (UDP), flow label = the same
    UDP         source port = the EV's low 16 bits, destination = the transport's port,
                checksum 0
    MRC header and payload (wire.py)

The routers read and rewrite only the outer destination; the receiving host
(the lab's NIC is its agent) recognises the inner destination as its own and
strips both headers. The 32-bit EV is striped across the UDP source port and
the flow label (paper, section 2.3): the lab's EV is ``plane << 16 | 0xC000 + ev``,
so the source port is the one every other lab packet carries for that EV and the
flow label names the plane.

Both traffic classes leave ECT(0); a router marks CE in the outer one (the port
program's first header), which the receiver reads from the outer header it strips,
as RFC 6040's decapsulation would copy it inward.

The inner UDP checksum is 0: the inner addresses never change, so it could be
valid, but Python's cheapest checksum over an 8 KB payload costs 12 µs at each
end, a fifth to a third of the agents' whole cost per packet (docs/wire-format.md);
the MRC header is parsed strictly instead.
"""

from __future__ import annotations

import ipaddress
import struct

from . import wire

IPV6_HEADER = 40
UDP_HEADER = 8
# what the sender puts before each MRC datagram, and the receiver strips (the outer
# header is the socket's: a raw IPv6 socket delivers what follows it)
HEADERS = 2 * IPV6_HEADER + UDP_HEADER
INNER_HEADERS = IPV6_HEADER + UDP_HEADER
NEXT_IPV6, NEXT_UDP = 41, 17
HOP_LIMIT = 64

_FIRST_WORD = struct.Struct("!I")            # version 4, traffic class 8, flow label 20
_put_u16 = struct.Struct("!H").pack_into
# where the three lengths sit in the headers: outer and inner payload length, UDP length
# (a sender reads the last to skip rewriting lengths that are already right)
_OUTER_LEN, _INNER_LEN, UDP_LENGTH_AT = 4, IPV6_HEADER + 4, 2 * IPV6_HEADER + 4


def ev32(plane: int, ev: int) -> int:
    """The 32-bit EV on the wire for the lab's (plane, EV): the plane in the high half,
    the EV's UDP source port in the low half."""
    return plane << 16 | wire.ev_to_port(ev)


def split_ev32(value: int) -> tuple[int, int]:
    """(UDP source port, flow label) carrying a 32-bit EV."""
    return value & 0xFFFF, value >> 16


def _ipv6_header(flow_label: int, payload: int, next_header: int, src: bytes, dst: bytes) -> bytes:
    first = 6 << 28 | wire.ECT0 << 20 | flow_label
    return _FIRST_WORD.pack(first) + struct.pack("!HBB", payload, next_header, HOP_LIMIT) + src + dst


def headers(src: str, route: str, nic: str, plane: int, ev: int, dport: int) -> bytearray:
    """The 88 bytes before a datagram to `nic` over `route`, lengths for an empty
    datagram (``set_length`` fixes them per datagram)."""
    sport, label = split_ev32(ev32(plane, ev))
    s, r, n = (ipaddress.IPv6Address(a).packed for a in (src, route, nic))
    udp = struct.pack("!HHHH", sport, dport, UDP_HEADER, 0)
    return bytearray(_ipv6_header(label, INNER_HEADERS, NEXT_IPV6, s, r)
                     + _ipv6_header(label, UDP_HEADER, NEXT_UDP, s, n) + udp)


def set_length(header: bytearray, datagram_len: int) -> None:
    """Write the three length fields of `header` (from ``headers``) for a datagram this long."""
    udp = UDP_HEADER + datagram_len
    _put_u16(header, _OUTER_LEN, IPV6_HEADER + udp)
    _put_u16(header, _INNER_LEN, udp)
    _put_u16(header, UDP_LENGTH_AT, udp)


def inner_datagram(packet, length: int, port: int) -> bool:
    """Whether `packet` (what follows the outer IPv6 header, `length` bytes) is an
    inner IPv6 header, then UDP to `port`, then at least an MRC common header."""
    return (length >= INNER_HEADERS + wire.COMMON_LEN and packet[0] >> 4 == 6
            and packet[6] == NEXT_UDP and packet[42] << 8 | packet[43] == port)
