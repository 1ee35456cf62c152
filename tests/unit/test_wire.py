"""Struct codec of the wire format: round trips, validation, fuzz."""

import pytest
from hypothesis import given, settings, strategies as st

from mrc_host import wire
from mrc_host.wire import WireError

u8, u16, u32, u64 = (st.integers(0, 2**b - 1) for b in (8, 16, 32, 64))
evs = st.integers(0, wire.EV_LIMIT - 1)
flags = st.integers(0, 255)


def test_header_sizes_match_doc():
    assert (wire.COMMON_LEN, wire.DATA_HDR_LEN, wire.ACK_HDR_LEN,
            wire.NACK_HDR_LEN, wire.PROBE_HDR_LEN) == (12, 36, 32, 20, 24)
    assert (wire.MRC_PORT, wire.BASELINE_PORT, wire.EV_PORT_BASE) == (4793, 4794, 0xC000)
    assert wire.F_TRIMMED == 0x02


def test_data_layout_offsets():
    b = wire.encode_data(wire.F_LAST, 0x0102, 3, 0x04050607, 0x08090A0B, 0x0C0D0E0F,
                         0x1011121314151617, 0x18191A1B, b"\xAA" * 5)
    assert b[0] == 1 and b[1] == wire.T_DATA and b[2] == wire.F_LAST and b[3] == 36
    assert b[4:6] == b"\x01\x02" and b[6] == 3 and b[7] == 0
    assert b[8:12] == bytes.fromhex("04050607")
    assert b[12:16] == bytes.fromhex("08090A0B") and b[16:20] == bytes.fromhex("0C0D0E0F")
    assert b[20:28] == bytes.fromhex("1011121314151617") and b[28:32] == bytes.fromhex("18191A1B")
    assert b[32:34] == b"\x00\x05" and b[34:36] == b"\x00\x00" and b[36:] == b"\xAA" * 5


@given(flags.filter(lambda f: not f & wire.F_TRIMMED), evs, u8, u32, u32, u32, u64,
       st.binary(min_size=1, max_size=300), st.integers(0, 1000))
def test_data_roundtrip(fl, ev, plane, conn, msg_id, psn, offset, payload, extra):
    msg_len = min(len(payload) + extra, 2**32 - 1)
    b = wire.encode_data(fl, ev, plane, conn, msg_id, psn, offset, msg_len, payload)
    h = wire.parse(b)
    assert h == wire.DataHeader(fl, ev, plane, conn, msg_id, psn, offset, msg_len, len(payload))
    assert b[wire.DATA_HDR_LEN:] == payload
    assert wire.encode(h, payload) == b
    t = wire.parse(wire.trim(b))
    assert t.trimmed and t.length == len(payload) and t.psn == psn
    assert len(wire.trim(b)) == 36


@given(flags, evs, u8, u32, u32, u64, u32)
def test_ack_roundtrip(fl, ev, plane, conn, cum, sack, acked):
    h = wire.AckHeader(fl, ev, plane, conn, cum, sack, acked)
    assert wire.parse(wire.encode(h)) == h


@given(flags, evs, u8, u32, u32, st.sampled_from([wire.NACK_TRIMMED, wire.NACK_OTHER]))
def test_nack_roundtrip(fl, ev, plane, conn, psn, reason):
    h = wire.NackHeader(fl, ev, plane, conn, psn, reason)
    assert wire.parse(wire.encode(h)) == h


@given(st.booleans(), flags, evs, u8, u32, u32, u64)
def test_probe_roundtrip(reply, fl, ev, plane, conn, seq, ts):
    h = wire.ProbeHeader(reply, fl, ev, plane, conn, seq, ts)
    assert wire.parse(wire.encode(h)) == h


GOOD_DATA = wire.encode_data(0, 1, 0, 1, 1, 1, 0, 10, b"0123456789")


@pytest.mark.parametrize("bad,why", [
    (b"", "empty"),
    (GOOD_DATA[:11], "short common"),
    (GOOD_DATA[:30], "short data header"),
    (GOOD_DATA[:-1], "length field mismatch"),
    (GOOD_DATA + b"x", "extra payload"),
    (bytes([2]) + GOOD_DATA[1:], "bad version"),
    (GOOD_DATA[:1] + bytes([9]) + GOOD_DATA[2:], "bad type"),
    (GOOD_DATA[:3] + bytes([28]) + GOOD_DATA[4:], "bad hdr_len"),
    (wire.encode_data(0, 1, 0, 1, 1, 1, 0, 5, b"0123456789"), "length > msg_len"),
    (bytes(bytearray(GOOD_DATA[:36])), "untrimmed header without payload"),
    (wire.trim(GOOD_DATA) + b"x", "trimmed with payload"),
    (wire.encode_ack(0, 1, 0, 1, 1, 1, 1) + b"\0", "long ack"),
    (wire.encode_nack(0, 1, 0, 1, 1, 1)[:16] + b"\x07\0\0\0", "bad nack reason"),
    (GOOD_DATA[:4] + b"\xff\xff" + GOOD_DATA[6:], "ev out of range"),
])
def test_malformed_raise_wire_error(bad, why):
    with pytest.raises(WireError):
        wire.parse(bad)


@settings(max_examples=2000)
@given(st.binary(max_size=80))
def test_random_bytes_only_raise_wire_error(b):
    try:
        h = wire.parse(b)
    except WireError:
        return
    kinds = {wire.T_DATA: wire.DataHeader, wire.T_ACK: wire.AckHeader,
             wire.T_NACK: wire.NackHeader, wire.T_PROBE: wire.ProbeHeader,
             wire.T_PROBE_REPLY: wire.ProbeHeader}
    assert isinstance(h, kinds[b[1]]) and len(b) >= wire.HDR_LEN[b[1]]


@settings(max_examples=1000)
@given(st.sampled_from([GOOD_DATA, wire.trim(GOOD_DATA), wire.encode_ack(4, 1, 2, 3, 4, 5, 6),
                        wire.encode_probe(True, 0, 1, 2, 3, 4, 5)]),
       st.lists(st.tuples(st.integers(0, 60), st.integers(0, 255)), max_size=4),
       st.integers(0, 60))
def test_mutated_valid_only_raise_wire_error(base, muts, cut):
    b = bytearray(base)
    for pos, val in muts:
        if pos < len(b):
            b[pos] = val
    b = bytes(b[:max(cut, 0)] if cut < len(b) else b)
    try:
        wire.parse(b)
    except WireError:
        pass


def test_ev_ports():
    assert wire.ev_to_port(5) == 0xC005 and wire.port_to_ev(0xC005) == 5
    assert wire.port_to_ev(1234) is None
    with pytest.raises(ValueError):
        wire.ev_to_port(wire.EV_LIMIT)


def test_the_ack_of_a_duplicate_data_packet_says_duplicate():
    from mrc_host.counters import Counters
    from mrc_host.receiver import Receiver

    rx = Receiver(bytearray(4096), ack_every=4, max_window=1024, counters=Counters(), emit=lambda e: None)
    data = wire.encode_data(0, 3, 1, 7, 1, 0, 0, 2048, bytes(1024))
    flags_of = []
    for _ in range(2):
        out = []
        rx.on_data(data, 0, 3, 1, 7, 1, 0, 0, 2048, 1024, False, out)
        flags_of.append([wire.parse(d).flags for d, *_ in out])
    assert flags_of[0] in ([], [0])                      # first copy: an ordinary (or coalesced) ACK
    assert flags_of[1] == [wire.F_DUPLICATE]             # second copy: DUPLICATE at once
