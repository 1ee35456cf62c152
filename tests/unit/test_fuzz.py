"""Random and mutated datagrams never raise out of the protocol cores."""

from hypothesis import given, settings, strategies as st

from mrc_host import wire
from mrc_host.baseline import BaselineConnection
from mrc_host.connection import MrcConnection, make_paths
from mrc_host.events import WriteComplete
from mrc_host.testing import SimNetwork

PATHS = make_paths(range(2), range(3))
CONN = 77
VALID = [
    wire.encode_data(0, 1, 0, 5, 1, 0, 0, 100, b"a" * 100),
    wire.encode_data(wire.F_LAST, 2, 1, 5, 1, 1, 100, 200, b"b" * 100),
    wire.trim(wire.encode_data(0, 1, 0, 5, 2, 2, 0, 10, b"c" * 10)),
    wire.encode_ack(wire.F_ECN_ECHO, 1, 0, CONN, 1, 0b1011, 3),
    wire.encode_nack(0, 2, 1, CONN, 0, wire.NACK_TRIMMED),
    wire.encode_probe(False, 0, 1, 1, 9, 4, 5),
    wire.encode_probe(True, 0, 1, 1, CONN, 1, 5),
]



def mutate(base: bytes, muts, cut: int) -> bytes:
    b = bytearray(base)
    for pos, val in muts:
        b[pos % len(b)] = val
    return bytes(b[:cut])


mutated = st.builds(mutate, st.sampled_from(VALID),
                    st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), max_size=5),
                    st.integers(0, 200))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=200), mutated), min_size=1, max_size=30))
def test_cores_survive_garbage_and_still_transfer(datagrams):
    for cls in (MrcConnection, BaselineConnection):
        net = SimNetwork(seed=1)
        a = net.add("a", cls(CONN, PATHS, peer="b"))
        b = net.add("b", cls(5, PATHS, peer="a"))
        net.link("a", "b")
        a.conn.write(b"z" * 5000, 0)
        net.step()
        for i, d in enumerate(datagrams):
            a.conn.receive(d, 0.001 * i)
            a.conn.datagrams_to_send(0.001 * i)
        assert net.run_until(lambda: net.events("a", WriteComplete), timeout=20)
