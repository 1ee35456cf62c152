"""The sans-IO pacer (mrc_host/pacing.py) alone and inside a sender on the in-memory network."""

from __future__ import annotations

import pytest

from mrc_host import wire
from mrc_host.connection import MrcConnection, make_paths
from mrc_host.pacing import UNPACED, Pacer
from mrc_host.params import TransportParams
from mrc_host.testing import Impairments, SimNetwork


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
