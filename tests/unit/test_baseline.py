"""Baseline transport: single path, go-back-N; it stalls while its path is dead."""

import random

from hypothesis import given, settings, strategies as st

from mrc_host.baseline import BaselineConnection, ecmp_path
from mrc_host.connection import make_paths
from mrc_host.events import MessageComplete, WriteComplete
from mrc_host.params import TransportParams
from mrc_host.simnet import Impairments, SimNetwork

PATHS = make_paths(range(4), range(4))


def pair(imp=None, seed=0, params=TransportParams()):
    net = SimNetwork(seed=seed, impairments=imp or Impairments())
    a = net.add("a", BaselineConnection(11, PATHS, params, peer="b"))
    b = net.add("b", BaselineConnection(22, PATHS, params, peer="a"))
    net.link("a", "b")
    return net, a, b


def test_uses_one_hashed_path_only():
    net, a, b = pair()
    a.conn.write(random.Random(1).randbytes(50_000), 0)
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=5)
    assert {(r.ev, r.plane) for r in net.data_sent("a")} == {a.conn.path}
    assert a.conn.path == ecmp_path(11, PATHS)


def test_stalls_while_its_path_is_dead_then_completes_after_repair():
    net, a, b = pair()
    net.imp.dead_paths = {a.conn.path}
    data = random.Random(2).randbytes(30_000)
    a.conn.write(data, 10)
    net.run_for(2.0)
    assert not net.events("b", MessageComplete) and not net.events("a", WriteComplete)
    assert a.conn.counters.timeouts >= 3
    # exponential backoff: the gaps between retransmission rounds grow
    rounds = sorted({round(r.time, 6) for r in net.data_sent("a")})
    gaps = [y - x for x, y in zip(rounds, rounds[1:])]
    assert gaps[-1] > 2 * gaps[0]
    net.imp.dead_paths = set()
    t_repair = net.now
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=5)
    assert net.now - t_repair <= TransportParams().rto_max + 0.01
    assert bytes(b.conn.recv_buffer[10:10 + len(data)]) == data


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), loss=st.sampled_from([0, 0.02, 0.1]),
       trim=st.sampled_from([0, 0.05]), reorder=st.sampled_from([0, 0.3]), dup=st.sampled_from([0, 0.1]))
def test_go_back_n_delivers_byte_exact_under_loss(seed, loss, trim, reorder, dup):
    net, a, b = pair(Impairments(loss=loss, trim=trim, reorder=reorder, dup=dup), seed)
    data = random.Random(seed).randbytes(20_000)
    a.conn.write(data, 0)
    b.conn.write(data[::-1], 0)
    done = lambda: net.events("a", WriteComplete) and net.events("b", WriteComplete)
    assert net.run_until(done, timeout=60)
    assert bytes(b.conn.recv_buffer[:len(data)]) == data
    assert bytes(a.conn.recv_buffer[:len(data)]) == data[::-1]
