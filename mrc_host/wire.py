"""MRC lab wire format: constants, parsed-header types and a fast struct codec.

This module is the code form of docs/wire-format.md; keep them identical.
Every integer is big-endian. Each packet type has one precompiled
``struct.Struct`` covering the common 12-byte header plus the type's fields,
so encoding or decoding a header is a single C call.

``parse(datagram)`` validates and returns one of the header tuples below, or
raises ``WireError`` (a ``ValueError``) for anything malformed. The payload
of a DATA packet is ``datagram[DATA_HDR_LEN:]``; it is not copied here.
"""

from __future__ import annotations

import struct
from typing import NamedTuple, Union

# --- ports and entropy values -------------------------------------------------
MRC_PORT = 4793
BASELINE_PORT = 4794
# UDP port of the lab's Clustermapper probes (destination, and source of T0-hop
# probes): neither a transport's port nor the incast's
MAPPER_PORT = 4795
EV_PORT_BASE = 0xC000
EV_LIMIT = 16384  # ev < EV_LIMIT so that EV_PORT_BASE + ev fits in a port

VERSION = 1

# --- packet types ---------------------------------------------------------------
T_DATA = 1
T_ACK = 2
T_NACK = 3
T_PROBE = 4
T_PROBE_REPLY = 5

# --- flags (byte 2) ---------------------------------------------------------------
F_RETX = 0x01
F_TRIMMED = 0x02
F_ECN_ECHO = 0x04
F_LAST = 0x08
F_DUPLICATE = 0x10  # ACK: the packet it answers had arrived already (a retransmission was needless)

# --- NACK reasons -----------------------------------------------------------------
NACK_TRIMMED = 1
NACK_OTHER = 2

# --- IP TOS / ECN -----------------------------------------------------------------
ECN_MASK = 0x03
ECT0 = 0x02
ECN_CE = 0x03

# --- header layouts (common header is "!BBBBHBxI": ver, type, flags, hdr_len,
#     ev, plane, reserved, conn) ------------------------------------------------------
COMMON = struct.Struct("!BBBBHBxI")
DATA = struct.Struct("!BBBBHBxIIIQIHxx")   # + msg_id, psn, offset, msg_len, length
ACK = struct.Struct("!BBBBHBxIIQIH2x")     # + cum_psn, sack, acked_psn, ports
NACK = struct.Struct("!BBBBHBxIIB3x")      # + psn, reason
PROBE = struct.Struct("!BBBBHBxIIQ")       # + seq, timestamp_ns

COMMON_LEN = COMMON.size    # 12
DATA_HDR_LEN = DATA.size    # 36
ACK_HDR_LEN = ACK.size      # 32
NACK_HDR_LEN = NACK.size    # 20
PROBE_HDR_LEN = PROBE.size  # 24

# A DATA packet's bytes besides its payload, as an IP packet (what an MTU bounds):
# two IPv6 headers (the srv6 data plane's IPv6 in IPv6, encap.py: the largest of
# the lab's IP headers, so a pacer at line rate is never faster than the port), UDP
# and the MRC header; and on a NIC port, with Ethernet's header too.
PACKET_OVERHEAD = 2 * 40 + 8 + DATA_HDR_LEN
FRAME_OVERHEAD = 14 + PACKET_OVERHEAD

HDR_LEN = {
    T_DATA: DATA_HDR_LEN,
    T_ACK: ACK_HDR_LEN,
    T_NACK: NACK_HDR_LEN,
    T_PROBE: PROBE_HDR_LEN,
    T_PROBE_REPLY: PROBE_HDR_LEN,
}
MAX_PAYLOAD = 0xFFFF  # the DATA length field is 16 bits
MSG_ID_MASK = 0xFFFFFFFF  # the DATA msg_id field is 32 bits


class MessageIds:
    """Ids for messages written without one: 1, 2, ... wrapping within
    `mask`, never 0."""

    def __init__(self, mask: int = MSG_ID_MASK):
        self.mask = mask
        self.next = 1

    def take(self, msg_id: int | None = None) -> int:
        """`msg_id` if the caller chose one, else the next free id."""
        if msg_id is None:
            msg_id = self.next
            self.next = (msg_id + 1) & self.mask or 1
        return msg_id


class WireError(ValueError):
    """A datagram that is not a well-formed MRC lab packet."""


class DataHeader(NamedTuple):
    flags: int
    ev: int
    plane: int
    conn: int
    msg_id: int
    psn: int
    offset: int
    msg_len: int
    length: int

    @property
    def trimmed(self) -> bool:
        return bool(self.flags & F_TRIMMED)


# Port-state bitmap an ACK carries: bit p set = the acking host's NIC port on
# plane p is up (the remote end moves its EVs off a plane whose bit is clear)
ALL_PORTS_UP = 0xFFFF


class AckHeader(NamedTuple):
    flags: int
    ev: int
    plane: int
    conn: int
    cum_psn: int
    sack: int
    acked_psn: int
    ports: int = ALL_PORTS_UP


class NackHeader(NamedTuple):
    flags: int
    ev: int
    plane: int
    conn: int
    psn: int
    reason: int


class ProbeHeader(NamedTuple):
    """PROBE or PROBE_REPLY (``reply`` tells which)."""

    reply: bool
    flags: int
    ev: int
    plane: int
    conn: int
    seq: int
    timestamp_ns: int


Header = Union[DataHeader, AckHeader, NackHeader, ProbeHeader]


# --- encoders -----------------------------------------------------------------------
def encode_data_header(flags, ev, plane, conn, msg_id, psn, offset, msg_len, length) -> bytes:
    return DATA.pack(VERSION, T_DATA, flags, DATA_HDR_LEN, ev, plane, conn,
                     msg_id, psn, offset, msg_len, length)


def encode_data(flags, ev, plane, conn, msg_id, psn, offset, msg_len, payload) -> bytes:
    """A whole DATA datagram: header + payload (one copy of the payload)."""
    return DATA.pack(VERSION, T_DATA, flags, DATA_HDR_LEN, ev, plane, conn,
                     msg_id, psn, offset, msg_len, len(payload)) + payload


def encode_ack(flags, ev, plane, conn, cum_psn, sack, acked_psn, ports=ALL_PORTS_UP) -> bytes:
    return ACK.pack(VERSION, T_ACK, flags, ACK_HDR_LEN, ev, plane, conn,
                    cum_psn, sack, acked_psn, ports)


def encode_nack(flags, ev, plane, conn, psn, reason) -> bytes:
    return NACK.pack(VERSION, T_NACK, flags, NACK_HDR_LEN, ev, plane, conn, psn, reason)


def encode_probe(reply, flags, ev, plane, conn, seq, timestamp_ns) -> bytes:
    return PROBE.pack(VERSION, T_PROBE_REPLY if reply else T_PROBE, flags, PROBE_HDR_LEN,
                      ev, plane, conn, seq, timestamp_ns)


def encode(h: Header, payload: bytes = b"") -> bytes:
    """Encode any parsed header back to bytes (used by tests and tools)."""
    if isinstance(h, DataHeader):
        hdr = encode_data_header(*h)
        return hdr if h.flags & F_TRIMMED else hdr + payload
    if isinstance(h, AckHeader):
        return encode_ack(*h)
    if isinstance(h, NackHeader):
        return encode_nack(*h)
    if isinstance(h, ProbeHeader):
        return encode_probe(*h)
    raise TypeError(f"not a wire header: {h!r}")


def trim(datagram: bytes) -> bytes:
    """What a trimming switch does to a DATA packet: keep hdr_len bytes, set TRIMMED."""
    b = bytearray(datagram[:DATA_HDR_LEN])
    b[2] |= F_TRIMMED
    return bytes(b)


# --- decoder --------------------------------------------------------------------------
_unpack_data = DATA.unpack_from
_unpack_ack = ACK.unpack_from
_unpack_nack = NACK.unpack_from
_unpack_probe = PROBE.unpack_from


def parse(datagram) -> Header:
    """Parse and validate one datagram (bytes, bytearray or memoryview).

    Raises WireError if it is truncated, has a bad version, type or hdr_len,
    or its length fields disagree with the datagram size.
    """
    n = len(datagram)
    if n < COMMON_LEN:
        raise WireError(f"truncated: {n} bytes < common header")
    version = datagram[0]
    ptype = datagram[1]
    hdr_len = datagram[3]
    if version != VERSION:
        raise WireError(f"bad version {version}")
    expected = HDR_LEN.get(ptype)
    if expected is None:
        raise WireError(f"bad type {ptype}")
    if hdr_len != expected:
        raise WireError(f"type {ptype}: hdr_len {hdr_len} != {expected}")
    if n < expected:
        raise WireError(f"truncated: {n} bytes < hdr_len {expected}")
    if (datagram[4] << 8 | datagram[5]) >= EV_LIMIT:
        raise WireError("ev out of range")
    if ptype == T_DATA:
        (_, _, flags, _, ev, plane, conn, msg_id, psn, offset, msg_len, length) = _unpack_data(datagram)
        if flags & F_TRIMMED:
            if n != DATA_HDR_LEN:
                raise WireError(f"trimmed DATA with {n - DATA_HDR_LEN} payload bytes")
        elif n - DATA_HDR_LEN != length:
            raise WireError(f"DATA length field {length} != payload {n - DATA_HDR_LEN}")
        if length == 0 or length > msg_len:
            raise WireError(f"DATA length {length} not in 1..msg_len {msg_len}")
        return DataHeader(flags, ev, plane, conn, msg_id, psn, offset, msg_len, length)
    if n != expected:
        raise WireError(f"type {ptype}: {n} bytes != {expected}")
    if ptype == T_ACK:
        (_, _, flags, _, ev, plane, conn, cum_psn, sack, acked_psn, ports) = _unpack_ack(datagram)
        return AckHeader(flags, ev, plane, conn, cum_psn, sack, acked_psn, ports)
    if ptype == T_NACK:
        (_, _, flags, _, ev, plane, conn, psn, reason) = _unpack_nack(datagram)
        if reason not in (NACK_TRIMMED, NACK_OTHER):
            raise WireError(f"bad NACK reason {reason}")
        return NackHeader(flags, ev, plane, conn, psn, reason)
    (_, _, flags, _, ev, plane, conn, seq, ts) = _unpack_probe(datagram)
    return ProbeHeader(ptype == T_PROBE_REPLY, flags, ev, plane, conn, seq, ts)


def ev_to_port(ev: int) -> int:
    if not 0 <= ev < EV_LIMIT:
        raise ValueError(f"ev {ev} out of range 0..{EV_LIMIT - 1}")
    return EV_PORT_BASE + ev


def port_to_ev(port: int) -> int | None:
    """The EV carried in a UDP source port, or None if the port is not an EV port."""
    ev = port - EV_PORT_BASE
    return ev if 0 <= ev < EV_LIMIT else None
