"""The baseline's queue pairs (TransportParams.qps): a message striped over several
go-back-N flows per plane, each from its own EV, reassembled byte for byte."""

import random
import re
from collections import Counter

import pytest

from lab.scenario.load import ScenarioError, load_scenario
from mrc_host import wire
from mrc_host.baseline import ecmp_path
from mrc_host.connection import make_paths
from mrc_host.events import MessageComplete, WriteComplete
from mrc_host.multirail import MAX_QUEUE_PAIRS, MultiRailBaseline, qps_problem, queue_pair_paths
from mrc_host.params import TransportParams
from mrc_host.simnet import Impairments, SimNetwork

ONE_PLANE = make_paths([0], range(16))       # the single-plane fabric: 1 plane x 16 EVs
TWO_PLANES = make_paths(range(2), range(8))


def pair(paths, qps, imp=None, seed=0, window=4):
    net = SimNetwork(seed=seed, impairments=imp or Impairments())
    params = TransportParams(qps=qps, cwnd_init=window)
    a = net.add("a", MultiRailBaseline(11, paths, params, peer="b", flow_key=("a", "b")))
    b = net.add("b", MultiRailBaseline(22, paths, params, peer="a", flow_key=("b", "a")))
    net.link("a", "b")
    return net, a, b


def data_paths(net, src):
    """Packets of DATA `src` sent, by (ev, plane)."""
    return Counter((r.ev, r.plane) for r in net.data_sent(src))


@pytest.mark.parametrize("paths, qps", [(ONE_PLANE, 16), (ONE_PLANE, 5), (TWO_PLANES, 3)])
def test_a_message_is_striped_over_every_queue_pair_and_arrives_whole(paths, qps):
    net, a, b = pair(paths, qps)
    data = random.Random(qps).randbytes(300_001)
    a.conn.write(data, 64, msg_id=9)
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=10)
    planes = len({plane for _ev, plane in paths})
    used = data_paths(net, "a")
    assert set(used) == set(a.conn.paths) and len(used) == planes * qps
    assert all(len([p for p in used if p[1] == plane]) == qps for plane in range(planes))
    [done] = net.events("b", MessageComplete)
    assert (done.msg_id, done.offset, done.length) == (9, 64, len(data))
    assert bytes(b.conn.recv_buffer[64:64 + len(data)]) == data
    assert b.conn.stats()["receive_queue_pairs"] <= planes * qps


def test_one_queue_pair_per_plane_is_the_old_one_flow_per_plane():
    """qps 1 keeps each plane's one path where the ECMP hash of (flow, plane) put it."""
    by_plane = {plane: [p for p in TWO_PLANES if p[1] == plane] for plane in range(2)}
    key = ("h0", "h3")
    assert queue_pair_paths(by_plane, key, 1) == [ecmp_path((key, plane), by_plane[plane]) for plane in range(2)]
    net, a, _b = pair(ONE_PLANE, 1)
    a.conn.write(b"x" * 50_000, 0, msg_id=1)
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=5)
    assert list(data_paths(net, "a")) == a.conn.paths and len(a.conn.paths) == 1


def test_queue_pairs_take_distinct_evs_and_each_connection_its_own():
    evs = {0: list(ONE_PLANE)}
    chosen = queue_pair_paths(evs, ("h0", "h2"), 16)
    assert sorted(chosen) == sorted(ONE_PLANE)
    firsts = {queue_pair_paths(evs, ("h0", f"h{n}"), 4)[0] for n in range(40)}
    assert len(firsts) >= 8   # the hash spreads connections over (half of) the plane's EVs


def test_a_port_salt_redraws_the_queue_pairs_ev_and_salt_0_keeps_the_unsalted_one():
    evs = {0: list(ONE_PLANE)}
    flows = [("h0", f"h{n}") for n in range(20)]
    unsalted = [queue_pair_paths(evs, key, 1) for key in flows]
    assert [queue_pair_paths(evs, key, 1, salt=0) for key in flows] == unsalted
    for salt in (1, 2, 3):
        salted = [queue_pair_paths(evs, key, 1, salt) for key in flows]
        assert salted != unsalted and salted == [queue_pair_paths(evs, key, 1, salt) for key in flows]
    # the connection takes its salt from its parameters
    conn = MultiRailBaseline(11, ONE_PLANE, TransportParams(qp_port_salt=5), peer="b", flow_key=flows[0])
    assert conn.paths == queue_pair_paths(evs, flows[0], 1, 5)


def test_both_directions_at_once_with_several_queue_pairs():
    net, a, b = pair(ONE_PLANE, 8, Impairments(reorder=0.2))
    to_b, to_a = random.Random(1).randbytes(100_000), random.Random(2).randbytes(70_000)
    a.conn.write(to_b, 0, msg_id=1)
    b.conn.write(to_a, 0, msg_id=2)
    assert net.run_until(lambda: net.events("a", WriteComplete) and net.events("b", WriteComplete), timeout=20)
    assert bytes(b.conn.recv_buffer[:len(to_b)]) == to_b and bytes(a.conn.recv_buffer[:len(to_a)]) == to_a


def test_go_back_n_recovers_every_queue_pair_under_loss_and_trims():
    net, a, b = pair(ONE_PLANE, 6, Impairments(loss=0.03, trim=0.03), seed=5, window=8)
    data = random.Random(5).randbytes(400_000)
    a.conn.write(data, 0, msg_id=3)
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=60)
    assert bytes(b.conn.recv_buffer[:len(data)]) == data
    c = a.conn.counters
    assert c.retransmits > 0 and c.nacks_received > 0
    # go-back-N per queue pair: every retransmission goes back on the queue pair it was sent on
    assert {(r.ev, r.plane) for r in net.data_sent("a") if r.header.flags & wire.F_RETX} <= set(a.conn.paths)
    assert a.conn.stats()["messages_sent"] == 1 and b.conn.stats()["messages_received"] == 1


def test_one_dead_queue_pair_stalls_the_whole_message_until_repair():
    net, a, b = pair(ONE_PLANE, 4)
    net.imp.dead_paths = {a.conn.paths[2]}
    data = random.Random(3).randbytes(60_000)
    a.conn.write(data, 0, msg_id=1)
    net.run_for(1.0)
    assert not net.events("b", MessageComplete) and a.conn.counters.timeouts >= 2
    net.imp.dead_paths = set()
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=5)
    assert bytes(b.conn.recv_buffer[:len(data)]) == data


def test_data_of_another_connection_opens_no_queue_pair():
    net, a, b = pair(ONE_PLANE, 2)
    a.conn.write(b"y" * 20_000, 0, msg_id=1)
    assert net.run_until(lambda: net.events("a", WriteComplete), timeout=5)
    before, pairs = b.conn.counters.dropped, b.conn.stats()["receive_queue_pairs"]
    free_ev = next(ev for ev, _plane in ONE_PLANE if (ev, 0) not in b.conn.rails)
    forged = wire.encode_data_header(0, free_ev, 0, 999, 1, 0, 0, 4, 4) + b"evil"
    b.conn.receive(forged, net.now, plane=0)
    assert b.conn.counters.dropped == before + 1 and b.conn.stats()["receive_queue_pairs"] == pairs
    ack = wire.encode_ack(0, free_ev, 0, 22, 5, 0, 4)     # for a queue pair b does not have
    b.conn.receive(ack, net.now, plane=0)
    assert b.conn.counters.dropped == before + 2


@pytest.mark.parametrize("qps, planes, evs, says", [
    (0, 1, 16, "must be >= 1, got 0"),
    (17, 1, 16, "qps 17 needs 17 EVs per plane"),
    (16, 16, 16, f"1..{MAX_QUEUE_PAIRS} queue pairs, 16 planes x qps 16 make 256"),
])
def test_impossible_queue_pair_counts_are_refused_in_one_line(qps, planes, evs, says):
    problem = qps_problem(qps, planes, evs)
    assert says in problem and "\n" not in problem
    if qps >= 1:
        with pytest.raises(ValueError, match=re.escape(f"multi-rail baseline: {problem}")):
            MultiRailBaseline(1, make_paths(range(planes), range(evs)), TransportParams(qps=qps))
    assert qps_problem(1, 1, 1) is None and qps_problem(16, 8, 16) is None


@pytest.mark.parametrize("qps", [0, -1, 2.0, True, "4"])
def test_transport_params_refuse_a_qps_that_is_no_count(qps):
    with pytest.raises(ValueError, match=r"qps .* must be an integer >= 1, got"):
        TransportParams(qps=qps)
    with pytest.raises(ValueError, match="qps"):
        TransportParams.from_dict({"qps": qps})


@pytest.mark.parametrize("fabric, qps, says", [
    ("{planes: 1, link_mbps: 80}", 16, "transport_params.qps: qps 16 needs 16 EVs per plane"),
    ("{planes: 1, link_mbps: 80}", 0, "transport_params.qps: qps (queue pairs per plane) must be >= 1"),
])
def test_a_scenario_asking_for_impossible_queue_pairs_fails_to_load_in_one_line(tmp_path, fabric, qps, says):
    path = tmp_path / "qps.yaml"
    path.write_text(f"description: x\nfabric: {fabric}\ntransport_params: {{qps: {qps}}}\n")
    with pytest.raises(ScenarioError) as exc:
        load_scenario(path)
    assert says in str(exc.value) and "\n" not in str(exc.value)
    path.write_text(f"description: x\nfabric: {{planes: 1, link_mbps: 80, evs_per_plane: 16}}\n"
                    f"transport_params: {{qps: 16}}\n")
    assert load_scenario(path).transport_params == {"qps": 16}


def test_every_message_length_makes_stripes_none_of_them_empty():
    """A length that does not divide evenly (100 bytes over 16 queue pairs: 15 stripes of 7 would
    leave the 16th empty) uses fewer queue pairs, and every byte lands where it belongs."""
    net, a, b = pair(ONE_PLANE, 16)
    rng = random.Random(7)
    at = 0
    messages = {}
    for msg_id, length in enumerate([1, 15, 16, 17, 100, 250, 4097], start=1):
        data = rng.randbytes(length)
        a.conn.write(data, at, msg_id=msg_id)
        messages[msg_id] = (at, data)
        at += length
    assert net.run_until(lambda: len(net.events("a", WriteComplete)) == len(messages), timeout=10)
    done = {m.msg_id: (m.offset, m.length) for m in net.events("b", MessageComplete)}
    assert done == {i: (offset, len(data)) for i, (offset, data) in messages.items()}
    assert all(bytes(b.conn.recv_buffer[offset:offset + len(data)]) == data for offset, data in messages.values())


def test_the_labs_window_is_one_bdp_per_plane_shared_by_its_queue_pairs():
    from lab.runners.agent_config import lab_transport_params, lab_window
    from topologies.fabric import DEFAULT_FABRIC, FabricSpec

    assert (lab_window(DEFAULT_FABRIC, "mrc"), lab_window(DEFAULT_FABRIC, "baseline")) == (24, 3)   # as measured
    single = FabricSpec(planes=1, link_mbps=80, evs_per_plane=16)
    assert (lab_window(single, "mrc"), lab_window(single, "baseline")) == (10, 10)
    assert [lab_window(single, "baseline", qps) for qps in (2, 3, 10, 16)] == [5, 4, 1, 1]
    assert lab_transport_params(single, "baseline", {"qps": 4})["cwnd_init"] == 3
    assert lab_transport_params(single, "baseline", {"qps": 4, "cwnd_init": 7})["cwnd_init"] == 7


def test_nscc_gets_the_nic_line_rate_and_no_pinned_window():
    from lab.runners.agent_config import lab_transport_params, lab_window
    from topologies.fabric import DEFAULT_FABRIC

    nscc = lab_transport_params(DEFAULT_FABRIC, "mrc", {"cc": "nscc"})
    assert nscc == {"cc": "nscc", "line_rate_bps": DEFAULT_FABRIC.link_bps, "rto_min": 0.151,   # 3 x 60 KB at 10 Mb/s
                    "cwnd_init": lab_window(DEFAULT_FABRIC, "mrc")}                              # starts at one BDP
    assert "cwnd_max" not in nscc                                                                # ...not pinned
    aimd = lab_transport_params(DEFAULT_FABRIC, "mrc", {"cc": "aimd"})
    assert aimd["cwnd_init"] == aimd["cwnd_max"] and "line_rate_bps" not in aimd
    assert "line_rate_bps" not in lab_transport_params(DEFAULT_FABRIC, "baseline", {"cc": "nscc"})
    dcqcn = lab_transport_params(DEFAULT_FABRIC, "baseline", {"baseline_cc": "dcqcn"})
    assert dcqcn["line_rate_bps"] == DEFAULT_FABRIC.link_bps and dcqcn["cwnd_init"] == dcqcn["cwnd_max"]
    assert TransportParams.from_dict(dcqcn).baseline_cc == "dcqcn"
