"""The scapy layer and the struct codec agree byte for byte on every type."""

from hypothesis import given, settings, strategies as st
from scapy.layers.inet import IP, UDP

from mrc_host import wire
from mrc_host.scapy_layer import MRC, MRCAck, MRCData, MRCNack, MRCProbe

u8, u32, u64 = (st.integers(0, 2**b - 1) for b in (8, 32, 64))
evs = st.integers(0, wire.EV_LIMIT - 1)


def check_both_ways(struct_bytes, scapy_pkt, parsed):
    assert bytes(scapy_pkt) == struct_bytes
    assert wire.parse(bytes(scapy_pkt)) == parsed
    # and scapy dissects struct bytes into the same fields
    again = MRC(struct_bytes)
    assert bytes(again) == struct_bytes


@settings(max_examples=150)
@given(u8, evs, u8, u32, u32, u32, u64, st.binary(min_size=1, max_size=200), st.booleans())
def test_data(fl, ev, plane, conn, msg_id, psn, offset, payload, trimmed):
    fl = (fl | wire.F_TRIMMED) if trimmed else (fl & ~wire.F_TRIMMED)
    msg_len = len(payload) + 17
    b = wire.encode_data(fl, ev, plane, conn, msg_id, psn, offset, msg_len, payload)
    if trimmed:
        b = b[:36]
    pkt = (MRC(flags=fl, ev=ev, plane=plane, conn=conn)
           / MRCData(msg_id=msg_id, psn=psn, offset=offset, msg_len=msg_len, length=len(payload)))
    if not trimmed:
        pkt = pkt / payload
    check_both_ways(b, pkt, wire.parse(b))
    d = MRC(b)
    assert d[MRCData].psn == psn and d[MRCData].offset == offset and d.ev == ev


@settings(max_examples=150)
@given(u8, evs, u8, u32, u32, u64, u32)
def test_ack(fl, ev, plane, conn, cum, sack, acked):
    b = wire.encode_ack(fl, ev, plane, conn, cum, sack, acked)
    pkt = MRC(type=wire.T_ACK, flags=fl, ev=ev, plane=plane, conn=conn) / MRCAck(
        cum_psn=cum, sack=sack, acked_psn=acked)
    check_both_ways(b, pkt, wire.parse(b))
    assert MRC(b)[MRCAck].sack == sack


@settings(max_examples=100)
@given(u8, evs, u8, u32, u32, st.sampled_from([1, 2]))
def test_nack(fl, ev, plane, conn, psn, reason):
    b = wire.encode_nack(fl, ev, plane, conn, psn, reason)
    pkt = MRC(type=wire.T_NACK, flags=fl, ev=ev, plane=plane, conn=conn) / MRCNack(psn=psn, reason=reason)
    check_both_ways(b, pkt, wire.parse(b))


@settings(max_examples=100)
@given(st.booleans(), u8, evs, u8, u32, u32, u64)
def test_probe(reply, fl, ev, plane, conn, seq, ts):
    b = wire.encode_probe(reply, fl, ev, plane, conn, seq, ts)
    t = wire.T_PROBE_REPLY if reply else wire.T_PROBE
    pkt = MRC(type=t, flags=fl, ev=ev, plane=plane, conn=conn) / MRCProbe(seq=seq, timestamp_ns=ts)
    check_both_ways(b, pkt, wire.parse(b))


def test_udp_binding_both_ports():
    for port in (wire.MRC_PORT, wire.BASELINE_PORT):
        raw = bytes(IP() / UDP(sport=wire.EV_PORT_BASE + 3, dport=port)
                    / MRC(ev=3) / MRCData(psn=9) / b"abc")
        p = IP(raw)
        assert p.haslayer(MRCData) and p[MRCData].psn == 9 and p[MRC].ev == 3
        assert p[MRCData].length == 3 and p[MRC].hdr_len == 36
