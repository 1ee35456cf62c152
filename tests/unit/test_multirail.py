"""Multi-rail baseline: one single-path flow per plane, messages striped over them."""

import random

import pytest

from mrc_host.connection import make_paths
from mrc_host.events import MessageComplete, WriteComplete
from mrc_host.multirail import MultiRailBaseline
from mrc_host.params import TransportParams
from mrc_host.simnet import Impairments, SimNetwork

PATHS = make_paths(range(4), range(4))   # 4 planes x 4 EVs


def pair(imp=None, seed=0):
    net = SimNetwork(seed=seed, impairments=imp or Impairments())
    a = net.add("a", MultiRailBaseline(11, PATHS, TransportParams(), peer="b"))
    b = net.add("b", MultiRailBaseline(22, PATHS, TransportParams(), peer="a"))
    net.link("a", "b")
    return net, a, b


def test_one_path_per_plane_and_the_message_arrives_whole():
    net, a, b = pair()
    data = random.Random(1).randbytes(50_001)
    a.conn.write(data, 100, msg_id=7)
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=5)
    used = {(r.ev, r.plane) for r in net.data_sent("a")}
    assert used == set(a.conn.paths) and {plane for _ev, plane in used} == {0, 1, 2, 3}
    [done] = net.events("b", MessageComplete)
    assert (done.msg_id, done.offset, done.length) == (7, 100, len(data))
    assert bytes(b.conn.recv_buffer[100:100 + len(data)]) == data
    [written] = net.events("a", WriteComplete)
    assert (written.msg_id, written.length) == (7, len(data))


def test_a_message_shorter_than_the_rails_uses_fewer_stripes():
    net, a, b = pair()
    a.conn.write(b"xy", 0, msg_id=0)
    assert net.run_until(lambda: net.events("b", MessageComplete), timeout=5)
    [done] = net.events("b", MessageComplete)
    assert (done.msg_id, done.length) == (0, 2) and bytes(b.conn.recv_buffer[:2]) == b"xy"


def test_one_dead_rail_stalls_the_whole_message_until_repair():
    net, a, b = pair()
    dead = a.conn.paths[2]
    net.imp.dead_paths = {dead}
    data = random.Random(3).randbytes(40_000)
    a.conn.write(data, 0, msg_id=1)
    net.run_for(1.0)
    assert not net.events("b", MessageComplete) and not net.events("a", WriteComplete)
    assert a.conn.counters.timeouts >= 2
    net.imp.dead_paths = set()
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=5)
    assert bytes(b.conn.recv_buffer[:len(data)]) == data


def test_message_ids_beyond_the_id_space_are_refused():
    conn = MultiRailBaseline(1, PATHS)
    with pytest.raises(ValueError, match="message ids"):
        conn.write(b"abc", 0, msg_id=1 << 24)


def test_a_datagram_from_an_unused_plane_is_counted_and_dropped():
    conn = MultiRailBaseline(1, make_paths(range(2), range(2)))
    conn.receive(b"\x00" * 40, 0.0, plane=5)
    assert conn.counters.dropped == 1
