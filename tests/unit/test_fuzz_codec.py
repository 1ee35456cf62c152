"""Structure-aware fuzz of the wire codec, and the cores' inline DATA parser against it.

Random bytes almost never get past the version byte, so the corpus here starts
from a valid header of every type and mutates one field, length or boundary at a
time (mrc_host.simnet.field_mutants). A deterministic sweep must reach every
``raise WireError`` in ``wire.parse``: if a check becomes unreachable (or a new
one is added that no mutant reaches) the sweep test fails and names it.
"""

import re
from collections import Counter

import pytest
from hypothesis import event, given, settings, strategies as st

from mrc_host import wire
from mrc_host.baseline import BaselineConnection
from mrc_host.connection import MrcConnection, make_paths
from mrc_host.events import ProtocolError
from mrc_host.multirail import MultiRailBaseline
from mrc_host.simnet import field_mutants, parse_checks

PATHS = make_paths(range(2), range(3))
BASES = {
    "data": wire.encode_data(0, 3, 1, 7, 9, 5, 100, 50, b"p" * 20),
    "data last retx": wire.encode_data(wire.F_LAST | wire.F_RETX, 2, 0, 7, 9, 6, 120, 50, b"q" * 30),
    "data one byte": wire.encode_data(0, 0, 0, 7, 1, 0, 0, 1, b"r"),
    "trimmed data": wire.trim(wire.encode_data(wire.F_LAST, 3, 1, 7, 9, 5, 100, 50, b"p" * 20)),
    "ack": wire.encode_ack(0, 1, 0, 7, 1, 0b101, 3),
    "ack ecn": wire.encode_ack(wire.F_ECN_ECHO, wire.EV_LIMIT - 1, 1, 7, 5, 0, 4),
    "nack trimmed": wire.encode_nack(0, 1, 0, 7, 2, wire.NACK_TRIMMED),
    "nack other": wire.encode_nack(0, 1, 1, 7, 2, wire.NACK_OTHER),
    "probe": wire.encode_probe(False, 0, 1, 0, 7, 1, 2),
    "probe reply": wire.encode_probe(True, 0, 1, 1, 7, 1, 2),
}
CORPUS = [(f"{base}: {label}", m) for base, d in BASES.items() for label, m in field_mutants(d)]
# bytes the parser ignores (documented as reserved, 0): zeroed before a round-trip comparison
RESERVED = {wire.T_DATA: [7, 34, 35], wire.T_ACK: [7, 30, 31], wire.T_NACK: [7, 17, 18, 19]}


def rejection(datagram) -> tuple[int, str] | None:
    """(line of the raise in wire.parse, message) if parse rejects ``datagram``, else None."""
    try:
        wire.parse(datagram)
    except wire.WireError as e:
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        return tb.tb_lineno, str(e)
    return None


def reencoded(datagram: bytes) -> tuple[bytes, bytes]:
    """(the datagram with its reserved bytes zeroed, encode(parse(datagram)))."""
    h = wire.parse(datagram)
    expected = bytearray(datagram)
    for i in RESERVED.get(datagram[1], [7]):
        expected[i] = 0
    return bytes(expected), wire.encode(h, datagram[wire.DATA_HDR_LEN:])


def test_the_sweep_reaches_every_check_in_parse():
    sites = parse_checks()
    assert len(sites) >= 11, sites        # the checks wire.parse had when this test was written
    reached = Counter()
    for _label, m in CORPUS:
        r = rejection(m)
        if r is not None:
            reached[r[0]] += 1
    assert set(reached) <= set(sites), "a WireError raised outside wire.parse's own checks"
    missing = {line: src for line, src in sites.items() if line not in reached}
    assert not missing, f"checks in wire.parse no mutant reaches: {missing}"
    # and valid mutants exist too (the sweep is not all rejections)
    assert sum(reached.values()) < len(CORPUS)


def test_each_check_is_reached_from_the_mutation_aimed_at_it():
    """A few named mutants hit exactly the check they target (the reason is the message)."""
    expect = {
        ("data", "truncated to 11"): "truncated: 11 bytes < common header",
        ("data", "version=0"): "bad version 0",
        ("data", "type=6"): "bad type 6",
        ("ack", "hdr_len=36"): "type 2: hdr_len 36 != 32",
        ("data", "truncated to 20"): "truncated: 20 bytes < hdr_len 36",
        ("probe", f"ev={wire.EV_LIMIT}"): "ev out of range",
        ("data", f"flags={wire.F_TRIMMED}"): "trimmed DATA with 20 payload bytes",
        ("data", "length=21"): "DATA length field 21 != payload 20",
        ("data", "msg_len=19"): "DATA length 20 not in 1..msg_len 19",
        ("trimmed data", "length=0"): "DATA length 0 not in 1..msg_len 50",
        ("nack other", "extended by 1"): "type 3: 21 bytes != 20",
        ("nack other", "reason=3"): "bad NACK reason 3",
        ("data", "read as type 2"): "type 2: 56 bytes != 32",
    }
    by_label = dict(CORPUS)
    for (base, label), message in expect.items():
        r = rejection(by_label[f"{base}: {label}"])
        assert r is not None and r[1] == message, (base, label, r)


def test_accepted_mutants_round_trip():
    """Whatever parse accepts encodes back to the same bytes (reserved bytes aside)."""
    accepted = [(label, m) for label, m in CORPUS if rejection(m) is None]
    assert len(accepted) > 100
    for label, m in accepted:
        expected, again = reencoded(m)
        assert again == expected, label


def stacked_mutant(base: str, picks: list[int]) -> bytes:
    """Apply field_mutants several times: pick i chooses among the current datagram's mutants."""
    d = BASES[base]
    for pick in picks:
        options = list(field_mutants(d))
        d = options[pick % len(options)][1]
    return d


stacked = st.builds(stacked_mutant, st.sampled_from(sorted(BASES)),
                    st.lists(st.integers(0, 10_000), min_size=1, max_size=3))


@settings(max_examples=400)
@given(stacked)
def test_stacked_mutants_are_rejected_or_round_trip(d):
    r = rejection(d)
    event(re.sub(r"\d+", "N", r[1]) if r else f"accepted type {d[1]}")
    if r is None:
        expected, again = reencoded(d)
        assert again == expected


# --- the connection's inline DATA and ACK parsers must agree with wire.parse ------------------------
class Observed:
    """What one core did with one datagram: the DATA fields its receiver was handed and the
    ACK fields its sender was (MRC's inline parsers), and whether it reported a ProtocolError."""

    def __init__(self, cls):
        self.conn = cls(7, PATHS, peer="x")
        self.placed: list[tuple] = []
        receiver = getattr(self.conn, "receiver", None)
        if receiver is not None:
            real = receiver.on_data

            def record(datagram, flags, ev, plane, conn, msg_id, psn, offset, msg_len, length,
                       ecn_ce, out):
                self.placed.append((flags, ev, plane, conn, msg_id, psn, offset, msg_len, length))
                real(datagram, flags, ev, plane, conn, msg_id, psn, offset, msg_len, length,
                     ecn_ce, out)
            receiver.on_data = record
            real_ack = self.conn.sender.on_ack

            def record_ack(flags, ev, plane, cum, sack, acked_psn, now, ports):
                self.placed.append((flags, ev, plane, 7, cum, sack, acked_psn, ports))
                real_ack(flags, ev, plane, cum, sack, acked_psn, now, ports)
            self.conn.sender.on_ack = record_ack

    def feed(self, datagram, now: float) -> tuple[list, int]:
        self.placed.clear()
        self.conn.receive(datagram, now, plane=datagram[6] % 2 if len(datagram) > 6 else 0)
        self.conn.datagrams_to_send(now)
        errors = 0
        while (e := self.conn.next_event()) is not None:
            errors += isinstance(e, ProtocolError)
        return list(self.placed), errors


def check_agreement(observers: dict, datagram: bytes, now: float) -> None:
    rejected = rejection(datagram) is not None
    h = None if rejected else wire.parse(datagram)
    for name, obs in observers.items():
        placed, errors = obs.feed(datagram, now)
        assert errors == (1 if rejected else 0), (name, datagram.hex())
        if name == "mrc":
            # an ACK of another connection is dropped before the sender hears of it
            taken = isinstance(h, wire.DataHeader) or (isinstance(h, wire.AckHeader) and h.conn == 7)
            want = [tuple(h)] if taken else []
            assert placed == want, datagram.hex()


def fresh_observers() -> dict:
    return {"mrc": Observed(MrcConnection), "baseline": Observed(BaselineConnection),
            "multirail": Observed(MultiRailBaseline)}


def test_fast_path_agrees_with_parse_on_the_sweep():
    """The MRC connection parses DATA inline (connection.receive's fast path); for the same
    bytes it must accept exactly what wire.parse accepts, with the same fields, and every
    core must report exactly the datagrams parse rejects."""
    observers = fresh_observers()
    for i, (_label, m) in enumerate(CORPUS):
        check_agreement(observers, m, i * 1e-4)


@settings(max_examples=300)
@given(st.lists(st.one_of(stacked, st.binary(max_size=80)), min_size=1, max_size=20))
def test_fast_path_agrees_with_parse_on_random_mutants(datagrams):
    observers = fresh_observers()
    for i, d in enumerate(datagrams):
        check_agreement(observers, d, i * 1e-4)


@pytest.mark.parametrize("base", ["data", "trimmed data"])
def test_fast_path_agrees_on_memoryviews(base):
    """The agent hands the core memoryview slices of its receive buffer, not bytes."""
    observers = fresh_observers()
    for i, (_label, m) in enumerate(field_mutants(BASES[base])):
        rejected = rejection(m) is not None
        placed, errors = observers["mrc"].feed(memoryview(bytearray(m)), i * 1e-4)
        assert errors == rejected and bool(placed) == (not rejected)
