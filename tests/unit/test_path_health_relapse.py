"""Resurrection hysteresis: a retired route comes back on probe replies in a row, in send
order, and a route that keeps failing soon after it comes back needs more of them each time
(no network but the in-memory one; injected clocks)."""

from mrc_host.connection import MrcConnection, make_paths
from mrc_host.counters import Counters
from mrc_host.events import PathStateChanged
from mrc_host.params import TransportParams
from mrc_host.path_health import ASSUMED_BAD, GOOD, PathHealth
from mrc_host.routes import route_of, routes_for
from mrc_host.simnet import Impairments, SimNetwork

TIMEOUT = 0.1            # PROBE_TIMEOUT_RTOS x the frozen RTO below
INTERVAL = 0.02          # the probe interval (its floor: SRTT is 10 ms)
PARAMS = TransportParams(probe_successes=2, active_evs_per_plane=0)


class FixedRtt:
    srtt = 0.01

    def current(self):
        return 0.05


def health(params=PARAMS):
    paths = [(ev, plane) for plane in range(2) for ev in range(4)]
    return PathHealth(paths, routes_for(paths, 2), params, FixedRtt(), Counters())


def retire(h, pid, now):
    """A SACK-gap loss on ``pid`` and its probe unanswered: its route is retired; the time after."""
    h.on_loss(pid, now, "sack_gap")
    h.probes_due(now)
    h.expire(now + TIMEOUT)
    assert h.state[pid] == ASSUMED_BAD
    return now + TIMEOUT


def replies_to_return(h, pid, now):
    """Answer every probe of ``pid``'s retired route, 5 ms after it left, until it is back:
    (replies it took, the time)."""
    replies = 0
    for _ in range(1000):
        if h.state[pid] != ASSUMED_BAD:
            break
        now += 0.005
        h.expire(now)
        for _pid, seq in h.probes_due(now):
            h.on_probe_reply(seq, now + 0.005)
            replies += 1
    return replies, now


def test_each_relapse_soon_after_a_return_doubles_the_replies_up_to_the_cap_and_a_clean_stretch_resets():
    h = health()
    now, needed = 1.0, []
    for _ in range(5):
        now = retire(h, 0, now)
        n, now = replies_to_return(h, 0, now)
        needed.append(n)
        now += 0.1                                       # back in use 0.1 s: well within the window
    assert needed == [2, 4, 8, 16, 16]                   # probe_successes x 2^relapses, 3 doublings at most
    now += PARAMS.relapse_window_intervals * INTERVAL    # a long clean stretch: a new failure is a first one
    now = retire(h, 0, now)
    assert replies_to_return(h, 0, now)[0] == 2


def test_a_route_that_failed_once_comes_back_on_probe_successes_replies_every_time():
    h = health()
    now = 1.0
    for _ in range(3):
        now = retire(h, 0, now)
        assert replies_to_return(h, 0, now)[0] == PARAMS.probe_successes
        now += 2 * PARAMS.relapse_window_intervals * INTERVAL


def test_a_reply_after_a_lost_probe_starts_a_new_row_before_that_probe_times_out():
    h = health(TransportParams(probe_successes=3, active_evs_per_plane=0))
    now = retire(h, 0, 1.0)
    seqs = []
    for k in range(4):                                   # four probes, one per interval
        now += INTERVAL
        seqs += [seq for _pid, seq in h.probes_due(now)]
    assert len(seqs) == 4
    h.on_probe_reply(seqs[0], now)
    h.on_probe_reply(seqs[2], now)                       # the second probe was lost: a new row
    h.on_probe_reply(seqs[3], now)
    assert h.state[0] == ASSUMED_BAD                     # three replies, but only two in a row
    now += INTERVAL
    (_pid, seq), = h.probes_due(now)
    h.on_probe_reply(seq, now + 0.005)
    assert h.state[0] == GOOD


def test_replies_to_probes_sent_before_the_retirement_do_not_bring_it_back():
    h = health()
    rid = h.route_of_pid[0]
    for k in range(3):                                   # three SACK-gap episodes: lossy, retired at the third
        now = 1.0 + 0.01 * k
        h.on_loss(0, now, "sack_gap")
        h.probes_due(now)
        if k < 2:
            h.on_route_ack(rid, now, now + 0.001)        # a later packet acked: the episode ends
    assert h.state[0] == ASSUMED_BAD and h.log[-1].reason == "lossy"
    for seq in list(h.probes.outstanding):               # the probes of the first two episodes answer
        h.on_probe_reply(seq, 1.03)
    assert h.state[0] == ASSUMED_BAD and h.routes[rid].replies_in_a_row == 0


PLANES, EVS, T1S = 4, 8, 2
PATHS = make_paths(range(PLANES), range(EVS))
LOSSY = {(ev, 0) for ev in range(EVS) if route_of(ev, 0, T1S) == (0, 0)}


def test_a_route_dropping_20_percent_stays_out_until_the_drop_ends_and_then_returns():
    """As the lab's path-loss row (10 Mb/s planes, 20 ms RTT): 4 s of loss on one route."""
    params = TransportParams(line_rate_bps=10e6)
    net = SimNetwork(seed=1, impairments=Impairments(delay=0.01))
    a = net.add("a", MrcConnection(11, PATHS, params, peer="b", routes=routes_for(PATHS, T1S),
                                   recv_buffer_size=64 << 20))
    net.add("b", MrcConnection(22, PATHS, params, peer="a", routes=routes_for(PATHS, T1S), recv_buffer_size=64 << 20))
    net.link("a", "b")
    for i in range(1500):
        a.conn.write(bytes(20_000), i * 20_000)
    net.run_for(0.5)
    net.imp.path_loss.update({path: 0.2 for path in LOSSY})
    net.run_for(4.0)
    net.imp.path_loss.clear()
    net.run_for(1.0)
    backs = sorted({e.time for e in net.events("a", PathStateChanged)
                    if (e.ev, e.plane) in LOSSY and e.reason == "probes_ok"})
    during = [t for t in backs if 0.5 < t <= 4.5]
    assert len(during) <= 3                              # without the hysteresis: 16 (in a row in name only: 19)
    assert any(4.5 < t <= 5.0 for t in backs)            # repaired: back within 0.5 s
    h = a.conn.health
    assert h.route_state_names()[h.route_keys.index((0, 0))] == "GOOD"
