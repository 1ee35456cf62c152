"""The sans-IO pacer (mrc_host/pacing.py) alone and inside a sender on the in-memory network."""

from __future__ import annotations

import pytest

from mrc_host import wire
from mrc_host.connection import MrcConnection, make_paths
from mrc_host.pacing import UNPACED, Pacer
from mrc_host.params import TransportParams
from mrc_host.simnet import Impairments, SimNetwork


def test_no_pacing_without_gain_or_rtt():
    assert Pacer(0.0, 2).allowance(1.0, 10, 0.001) == UNPACED
    assert Pacer(1.0, 2).allowance(1.0, 10, None) == UNPACED


def test_packets_are_spaced_by_srtt_over_gain_times_cwnd_after_a_burst():
    pacer = Pacer(gain=2.0, burst=2)
    cwnd, srtt, now = 10, 0.01, 5.0
    interval = srtt / (2.0 * cwnd)
    assert pacer.allowance(now, cwnd, srtt) == 2          # after idle: the burst
    pacer.on_sent(2, now, cwnd, srtt)
    assert pacer.allowance(now, cwnd, srtt) == 0
    assert pacer.release_time(now, cwnd, srtt) == pytest.approx(now + interval)
    now = pacer.release_time(now, cwnd, srtt)
    assert pacer.allowance(now, cwnd, srtt) == 1
    pacer.on_sent(1, now, cwnd, srtt)
    assert pacer.release_time(now, cwnd, srtt) == pytest.approx(now + interval)


def test_a_late_wakeup_catches_up_at_most_a_burst():
    pacer = Pacer(gain=1.0, burst=3)
    cwnd, srtt = 10, 0.01                                  # 1 ms per packet
    pacer.on_sent(1, 0.0, cwnd, srtt)                      # the next slot is at 1 ms
    assert pacer.allowance(0.0025, cwnd, srtt) == 2        # woke 1.5 ms late: the 1 and 2 ms slots
    pacer.on_sent(2, 0.0025, cwnd, srtt)
    assert pacer.allowance(0.0025, cwnd, srtt) == 0
    assert pacer.allowance(1.0, cwnd, srtt) == 3           # long idle: only the burst


def test_a_paced_sender_spreads_its_window_over_the_rtt():
    params = TransportParams(cwnd_init=16, cwnd_max=16, pacing_gain=1.0, pacing_burst=1)
    net = SimNetwork(seed=1, impairments=Impairments(delay=500e-6))
    paths = make_paths([0, 1], range(4))
    a = net.add("a", MrcConnection(1, paths, params, peer="b")).conn
    net.add("b", MrcConnection(2, paths, params, peer="a"))
    net.link("a", "b")
    a.write(bytes(400 * 1024), 0)
    assert net.run_until(lambda: a.idle, timeout=1.0)
    sends = [r.time for r in net.data_sent("a")]
    first_ack = min(r.time for r in net.log if isinstance(r.header, wire.AckHeader))
    paced = [t for t in sends if t > first_ack + 0.002]    # once the SRTT has settled
    gaps = [b - t for t, b in zip(paced, paced[1:])]
    srtt = a.sender.srtt
    assert len(gaps) > 100
    assert min(gaps) >= 0.9 * srtt / 16                     # never two at once
    # still the window's rate: 400 packets in about 400 / 16 RTTs
    assert sends[-1] - sends[0] <= 1.5 * 400 / 16 * srtt


def test_the_nic_line_rate_is_a_floor_under_window_pacing():
    pacer = Pacer(gain=1.0, burst=4, line_interval=0.002)
    assert pacer.interval(10, None) == 0.002                # no RTT yet: still the line rate
    assert pacer.interval(10, 0.01) == 0.002                # the window would go faster (1 ms)
    assert pacer.line_bound(10, 0.01)
    assert pacer.interval(2, 0.01) == pytest.approx(0.005)  # a small window paces below line rate
    assert not pacer.line_bound(2, 0.01)
    assert Pacer(0.0, 2, line_interval=0.002).interval(10, 0.01) == 0.002


def test_at_line_rate_the_sender_wakes_once_per_batch_of_half_a_burst():
    pacer = Pacer(gain=0.0, burst=8, line_interval=0.001)
    assert pacer.batch == 4
    pacer.on_sent(8, 1.0, 10, 0.01)          # a burst after idle: slots from 0.993 s, the next at 1.001 s
    assert pacer.release_time(1.0, 10, 0.01, waiting=10) == pytest.approx(1.004)   # when 4 slots have come
    assert pacer.release_time(1.0, 10, 0.01, waiting=2) == pytest.approx(1.002)    # only 2 to send
    assert pacer.release_time(1.0, 10, 0.01, waiting=1) == pytest.approx(1.001)
    assert pacer.allowance(1.0075, 10, 0.01) == 7      # woke 3.5 ms late: the rest of the burst catches up


def line_paced_pair(params: TransportParams):
    net = SimNetwork(seed=1, impairments=Impairments(delay=100e-6))
    paths = make_paths([0, 1], range(4))
    a = net.add("a", MrcConnection(1, paths, params, peer="b")).conn
    net.add("b", MrcConnection(2, paths, params, peer="a"))
    net.link("a", "b")
    return net, a


@pytest.mark.parametrize("cc", ["nscc", "aimd"])
def test_a_sender_never_outruns_its_nic_and_its_window_does_not_grow_for_it(cc):
    params = TransportParams(cc=cc, line_rate_bps=8e6, cwnd_init=64, cwnd_max=1024)   # per plane
    net, a = line_paced_pair(params)                         # 2 planes, 4 EVs each
    a.write(bytes(600 * 1024), 0)
    assert net.run_until(lambda: a.idle, timeout=5.0)
    sends = [r.time for r in net.data_sent("a")]
    took = sends[-1] - sends[0]
    assert took >= 0.95 * (len(sends) - 2) * params.frame_time() / 2   # never above the NIC's rate
    assert took <= 1.1 * len(sends) * params.frame_time() / 2          # and close to it
    if cc == "nscc":   # held by the NIC, not the window: no reason to grow (AIMD grows on every ACK)
        assert a.cc.cwnd == 64
    rows = a.stats()["cc_trace"]
    assert len(rows) >= 5 and all(b[0] - a_[0] >= 0.02 - 1e-9 for a_, b in zip(rows, rows[1:]))
    assert all(r[4] == pytest.approx(2 / params.frame_time(), rel=0.01) for r in rows)   # pacing at line rate
