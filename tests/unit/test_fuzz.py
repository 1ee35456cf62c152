"""Core fuzz: garbage and mutants of real traffic, interleaved with it, never corrupt a transfer.

Two cores talk over the in-memory network (mrc_host.simnet.SimNetwork) on its
own monotonic clock, with loss, duplication, reordering, trimming and CE
marks; every datagram either core sends, replies included, goes through that
network (none is dropped by the test). Next to each real datagram the
network's tamper hook injects what a hypothesis plan says: an exact replay, a
trimmed copy, a mutant that wire.parse rejects, a valid mutant under a
connection id neither end uses, or random bytes. Afterwards every byte in each
receive buffer must be the one written there (untouched bytes still zero),
every message must complete exactly once on each side, and each core must have
reported exactly the injected datagrams wire.parse rejects.
"""

import random
import struct

import pytest
from hypothesis import given, settings, strategies as st

from mrc_host import wire
from mrc_host.baseline import BaselineConnection
from mrc_host.connection import MrcConnection, make_paths
from mrc_host.events import MessageComplete, ProtocolError, WriteComplete
from mrc_host.multirail import MultiRailBaseline
from mrc_host.simnet import Impairments, SimNetwork, field_mutants

PATHS = make_paths(range(2), range(3))
CONN_A, CONN_B, FOREIGN = 77, 5, 0xF0E1D2C3       # FOREIGN: a connection neither end uses
BUFFER = 1 << 16
WARMUP = b"warm-up: both rails adopt the peer's connection id"
FIRST_OFFSET = 64
CORES = [MrcConnection, BaselineConnection, MultiRailBaseline]


def rejected(d) -> bool:
    try:
        wire.parse(d)
    except wire.WireError:
        return True
    return False


def with_conn(d: bytes, conn: int) -> bytes:
    b = bytearray(d)
    struct.pack_into("!I", b, 8, conn)
    return bytes(b)


actions = st.one_of(
    st.tuples(st.just("pass")),
    st.tuples(st.just("replay"), st.floats(0, 0.05)),
    st.tuples(st.just("trimmed copy")),
    st.tuples(st.just("rejected mutant"), st.integers(0, 10_000)),
    st.tuples(st.just("foreign mutant"), st.integers(0, 10_000)),
    st.tuples(st.just("junk"), st.binary(max_size=60)),
)


class Tamperer:
    """SimNetwork tamper hook: applies the plan's actions in turn, one per real datagram,
    and counts per destination the injected datagrams that parse rejects."""

    def __init__(self, plan):
        self.plan = plan
        self.k = 0
        self.rejected: dict[str, int] = {"a": 0, "b": 0}

    def __call__(self, src, dst, dgram, ev, plane):
        action = self.plan[self.k % len(self.plan)]
        self.k += 1
        extras = self.extras(action, dgram)
        for extra in extras:
            self.rejected[dst] += rejected(extra)
        delay = action[1] if action[0] == "replay" else 0.0
        return [(extra, delay) for extra in extras]

    @staticmethod
    def extras(action, dgram: bytes) -> list[bytes]:
        kind = action[0]
        if kind == "replay":
            return [dgram]
        if kind == "trimmed copy":
            return [wire.trim(dgram)] if dgram[1] == wire.T_DATA else []
        if kind == "junk":
            return [action[1]]
        if kind in ("rejected mutant", "foreign mutant"):
            want_rejected = kind == "rejected mutant"
            options = [m for _label, m in field_mutants(dgram) if rejected(m) == want_rejected]
            pick = options[action[1] % len(options)]
            return [pick if want_rejected else with_conn(pick, FOREIGN)]
        return []


def messages_for(rng: random.Random, sizes: list[int]) -> list[tuple[int, int, bytes]]:
    """(msg_id, offset, data): back to back from FIRST_OFFSET, ids from 10."""
    out, offset = [], FIRST_OFFSET
    for i, n in enumerate(sizes):
        out.append((10 + i, offset, rng.randbytes(n)))
        offset += n
    return out


def expected_image(msgs) -> bytes:
    image = bytearray(BUFFER)
    image[:len(WARMUP)] = WARMUP
    for _mid, offset, data in msgs:
        image[offset:offset + len(data)] = data
    return bytes(image)


def completed(net, name, kind) -> list[int]:
    return sorted(e.msg_id for e in net.events(name, kind))


@pytest.mark.parametrize("cls", CORES, ids=lambda c: c.__name__)
@settings(max_examples=40)
@given(plan=st.lists(actions, min_size=1, max_size=25),
       sizes_ab=st.lists(st.integers(1, 9000), min_size=1, max_size=3),
       sizes_ba=st.lists(st.integers(1, 9000), min_size=1, max_size=3),
       seed=st.integers(0, 2**16))
def test_transfers_survive_interleaved_garbage(cls, plan, sizes_ab, sizes_ba, seed):
    imp = Impairments(loss=0.02, dup=0.05, reorder=0.2, trim=0.05, ecn=0.05)
    net = SimNetwork(seed=seed, impairments=imp)
    a = net.add("a", cls(CONN_A, PATHS, peer="b", recv_buffer_size=BUFFER))
    b = net.add("b", cls(CONN_B, PATHS, peer="a", recv_buffer_size=BUFFER))
    net.link("a", "b")
    # clean warm-up: each receiver adopts its peer's connection id before any foreign one
    a.conn.write(WARMUP, 0, msg_id=1)
    b.conn.write(WARMUP, 0, msg_id=1)
    assert net.run_until(lambda: completed(net, "a", MessageComplete) == [1] ==
                         completed(net, "b", MessageComplete), timeout=30)

    tamper = net.tamper = Tamperer(plan)
    rng = random.Random(seed)
    sent = {"a": messages_for(rng, sizes_ab), "b": messages_for(rng, sizes_ba)}
    for name, msgs in sent.items():
        for mid, offset, data in msgs:
            net.endpoints[name].conn.write(data, offset, msg_id=mid)
    want = {name: [1] + [m[0] for m in msgs] for name, msgs in sent.items()}

    def all_done():
        return (completed(net, "a", WriteComplete) == want["a"]
                and completed(net, "b", WriteComplete) == want["b"]
                and completed(net, "b", MessageComplete) == want["a"]
                and completed(net, "a", MessageComplete) == want["b"])
    assert net.run_until(all_done, timeout=30), net.endpoints["a"].conn.stats()
    net.run_for(0.5)        # let replays and retransmissions still in flight arrive
    assert tamper.k > 0 and all_done()     # nothing completed twice
    assert bytes(b.conn.recv_buffer) == expected_image(sent["a"])
    assert bytes(a.conn.recv_buffer) == expected_image(sent["b"])
    for name, msgs in (("b", sent["a"]), ("a", sent["b"])):
        arrived = {e.msg_id: (e.offset, e.length) for e in net.events(name, MessageComplete)}
        assert arrived == {1: (0, len(WARMUP)), **{m: (o, len(d)) for m, o, d in msgs}}
        assert len(net.events(name, ProtocolError)) == tamper.rejected[name]
