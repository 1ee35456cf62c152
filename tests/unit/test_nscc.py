"""NSCC-like congestion control (mrc_host/nscc.py) on the in-memory network: senders
through one bottleneck (testing.Bottleneck), simulated clock only."""

from __future__ import annotations

import pytest

from mrc_host.connection import MrcConnection, make_paths
from mrc_host.nscc import Nscc
from mrc_host.params import TransportParams
from mrc_host.simnet import Bottleneck, Impairments, SimNetwork

PATHS = make_paths([0, 1], range(4))
PACKET = 1024 + 36                      # payload + MRC header: what the bottleneck carries
RATE = 40e6                             # bytes/s: ~26 us per packet
ONE_WAY = 250e-6                        # base RTT ~0.53 ms, BDP ~20 packets
PARAMS = TransportParams(cc="nscc", cwnd_init=8, cwnd_min=2, cwnd_max=512, pacing_gain=1.2,
                         nscc_target_delay=0.0)


def bottleneck_net(senders: int, params: TransportParams = PARAMS, rate: float = RATE):
    """``senders`` pairs s<i> -> r<i> whose DATA shares one bottleneck (ECN above ~11 packets)."""
    net = SimNetwork(seed=1, impairments=Impairments(delay=ONE_WAY))
    net.bottleneck = Bottleneck(rate=rate, ecn_bytes=12_000, limit_bytes=120_000)
    conns = []
    for i in range(senders):
        s = net.add(f"s{i}", MrcConnection(2 * i + 1, PATHS, params, peer=f"r{i}")).conn
        net.add(f"r{i}", MrcConnection(2 * i + 2, PATHS, params, peer=f"s{i}", recv_buffer_size=16 << 20))
        net.link(f"s{i}", f"r{i}")
        conns.append(s)
    return net, conns


def acked(conn) -> int:
    return sum(conn.sender.pkts_acked)


def delivered_over(net, conns, seconds: float) -> list[int]:
    before = [acked(c) for c in conns]
    net.run_for(seconds)
    return [acked(c) - b for c, b in zip(conns, before)]


def median_queueing(net, since: float) -> float:
    q = sorted(d for t, d in net.bottleneck.delays if t >= since)
    return q[len(q) // 2]


@pytest.mark.parametrize("senders", [1, 2, 4, 8])
def test_senders_into_one_bottleneck_converge_to_equal_shares(senders):
    net, conns = bottleneck_net(senders)
    for c in conns:                       # they join one after another, 1 ms (~2 RTTs) apart
        c.write(bytes(8 << 20), 0)
        net.run_for(0.001)
    net.run_for(0.05)                     # ~50 RTTs to converge
    shares = delivered_over(net, conns, 0.05)
    mean = sum(shares) / senders
    assert max(abs(s - mean) for s in shares) <= 0.10 * mean, shares
    assert sum(shares) * PACKET >= 0.9 * RATE * 0.05          # the bottleneck stays busy
    assert sum(c.counters.timeouts for c in conns) == 0


def test_window_follows_a_step_change_of_capacity():
    net, (conn,) = bottleneck_net(1)
    conn.write(bytes(16 << 20), 0)
    net.run_for(0.03)
    fast_window = conn.cc.cwnd
    net.bottleneck.rate = RATE / 2
    net.run_for(0.02)                     # ~20 RTTs at the new rate
    t = net.now
    got = delivered_over(net, [conn], 0.02)[0]
    assert got * PACKET >= 0.9 * (RATE / 2) * 0.02                    # still fills the link
    assert median_queueing(net, t) <= 2 * conn.cc.target              # without a standing queue
    bdp = (RATE / 2) * (conn.cc.base_rtt + conn.cc.target) / PACKET
    assert conn.cc.cwnd <= 1.5 * bdp < fast_window                    # the window came down
    net.bottleneck.rate = RATE
    net.run_for(0.02)
    assert delivered_over(net, [conn], 0.02)[0] * PACKET >= 0.9 * RATE * 0.02   # and goes back up


def test_no_window_growth_while_application_limited():
    net, (conn,) = bottleneck_net(1, TransportParams(**{**PARAMS.__dict__, "cwnd_init": 16}))
    for i in range(40):                   # 4 packets every ms: a quarter of the window per RTT
        conn.write(bytes(4 * 1024), i * 4096)
        net.run_for(0.001)
    assert conn.counters.messages_sent >= 39
    assert conn.cc.cwnd <= 16


def test_a_trim_cuts_and_quick_adapt_takes_the_window_to_what_was_delivered():
    cc = Nscc(64, 2, 512, target_delay=0.0)
    for i in range(10):                                  # base RTT 1 ms, no queue
        cc.on_ack_feedback(1, i * 1e-4, 0.001, False, 0.001, True)
    before = cc.cwnd
    cc.on_trim(0.0011, 0.001)
    assert cc.cwnd == before - 1
    # the first ACK opened a quick-adapt period (base RTT + target = 1.5 ms); when it
    # ends, 9 + 5 packets were delivered in it: far below the window
    cc.on_ack_feedback(5, 0.0030, 0.001, False, 0.001, True)
    assert cc.cwnd == 9 + 5


def test_ecn_with_delay_above_target_cuts_in_proportion_once_per_rtt():
    cc = Nscc(100, 2, 512, target_rtts=0.5, target_delay=0.0)
    cc.on_ack_feedback(1, 0.0, 0.001, False, 0.001, True)     # base RTT 1 ms, target 0.5 ms
    start = cc.cwnd
    now = 0.0
    for _ in range(40):                                        # the queue builds to 1 ms of delay
        now += 1e-4
        cc.on_ack_feedback(1, now, 0.002, True, 0.002, True)
    cuts = start / cc.cwnd
    assert 1.0 < cuts
    # 4 ms of marks at 1 ms delay: at most one cut per RTT (2 ms), each
    # 0.8 x (avg - 0.5 ms) / avg <= 0.4
    assert cc.cwnd >= start * 0.6 ** 2


def test_ecn_with_delay_below_target_holds_the_window():
    cc = Nscc(50, 2, 512, target_delay=0.0)
    cc.on_ack_feedback(1, 0.0, 0.001, False, 0.001, True)
    w = cc.cwnd
    cc.on_ack_feedback(1, 0.0002, 0.0011, True, 0.001, True)   # a transient mark
    assert cc.cwnd == w


def test_losses_on_a_route_already_out_of_use_do_not_compound_cuts():
    params = TransportParams(cc="nscc", cwnd_init=64, pacing_gain=0.0)
    net = SimNetwork(seed=3, impairments=Impairments(delay=50e-6, dead_paths={(0, 0)}))
    a = net.add("a", MrcConnection(1, PATHS, params, peer="b")).conn
    net.add("b", MrcConnection(2, PATHS, params, peer="a"))
    net.link("a", "b")
    cuts = []
    real = a.cc.on_timeout
    a.cc.on_timeout = lambda now, srtt=0.0: (cuts.append(now), real(now, srtt))
    a.write(bytes(400 * 1024), 0)
    assert net.run_until(lambda: a.idle, timeout=2.0)
    lost = a.counters.sack_losses + a.counters.timeouts
    assert lost >= 2                       # the dead route lost several packets ...
    assert len(cuts) <= 1                  # ... and the window heard of it once at most


def test_with_a_known_line_rate_the_target_is_at_least_one_packet_time():
    params = TransportParams(cc="nscc", line_rate_bps=10e6, payload_size=8192)
    cc = Nscc.from_params(params)
    assert cc.target == pytest.approx(params.frame_time())   # 6.6 ms: no link queues less than a packet
    assert Nscc.from_params(TransportParams(cc="nscc")).target == pytest.approx(0.0005)   # rate unknown
