"""The route and EV health state machine, transition by transition (no network)."""

from dataclasses import replace

from mrc_host.counters import Counters
from mrc_host.params import TransportParams
from mrc_host.path_health import ASSUMED_BAD, BACKUP, DENIED, GOOD, SKIP, SUSPECT, PathHealth
from mrc_host.path_select import RoundRobin
from mrc_host.probes import PROBE_ALLOWANCE, PROBE_WIRE_BYTES
from mrc_host.routes import route_of, routes_for

RTO = 0.05
TIMEOUT = 2 * RTO        # PROBE_TIMEOUT_RTOS x RTO


class FixedRtt:
    """An RTT estimator frozen at one SRTT and RTO."""

    def __init__(self, srtt=0.01, rto=RTO):
        self.srtt, self.rto = srtt, rto

    def current(self):
        return self.rto


PARAMS = TransportParams(skip_time=0.005, skip_rtts=2.0, probe_interval=0.02, probe_interval_rtts=1.0,
                         probe_successes=2, active_evs_per_plane=0)


def health(planes=2, evs=4, t1s=2, params=PARAMS, rtt=None, same_rack=False):
    """Paths (ev, plane) for ev in range(evs) on each plane; EV e takes T1 e % t1s."""
    paths = [(ev, plane) for plane in range(planes) for ev in range(evs)]
    return PathHealth(paths, routes_for(paths, t1s, same_rack), params, rtt or FixedRtt(), Counters())


def pid_of(h, ev, plane):
    return h.paths.index((ev, plane))


def aliases(h, ev, plane):
    """Every pid on the route EV ``ev`` takes on ``plane``."""
    return h.routes[h.route_of_pid[pid_of(h, ev, plane)]].pids


def test_skip_lasts_at_least_two_rtts_then_expires():
    h = health()
    h.on_ecn_echo(1, now=10.0)                  # skip = max(5 ms, 2 x 10 ms) = 20 ms
    assert h.state[1] == SKIP and h.next_deadline() == 10.02
    h.expire(10.019)
    assert h.state[1] == SKIP
    h.expire(10.02)
    assert h.state[1] == GOOD
    assert [(e.old, e.new, e.reason) for e in h.log] == [("GOOD", "SKIP", "ecn_echo"),
                                                         ("SKIP", "GOOD", "skip_expired")]


def test_an_ecn_marked_ev_is_passed_over_by_the_selector():
    h = health(planes=1, evs=4)
    rr = RoundRobin(h.paths, h)
    h.on_ecn_echo(2, now=0.0)
    picks = [rr.select() for _ in range(12)]
    assert 2 not in picks and set(picks) == {0, 1, 3}


def test_a_second_echo_while_skipping_migrates_load_to_a_backup_ev_of_the_plane():
    h = health(planes=1, evs=8, params=replace(PARAMS, active_evs_per_plane=2))
    active = [p for p, s in enumerate(h.state) if s == GOOD]
    assert len(active) == 2 and {h.route_of_pid[p] for p in active} == {0, 1}   # one per T1
    congested = active[0]
    h.on_ecn_echo(congested, 0.0)
    h.on_ecn_echo(congested, 0.001)
    assert h.state[congested] == BACKUP and h.ecn_migrations == 1
    now_active = [p for p, s in enumerate(h.state) if s in (GOOD, SKIP)]
    assert len(now_active) == 2 and congested not in now_active


def test_trim_keeps_path_usable():
    h = health()
    h.on_trim(2, 1.0)
    assert h.state[2] == GOOD and h.trims[2] == 1 and not h.log


def test_a_loss_makes_every_alias_of_the_route_suspect_and_a_reply_clears_it():
    h = health()
    h.on_loss(pid_of(h, 1, 0), 5.0, "rto")
    route = aliases(h, 1, 0)
    assert len(route) == 2 and all(h.state[p] == SUSPECT for p in route)
    (pid, seq), = h.probes_due(5.0)
    assert pid in route and h.probes_due(5.001) == []      # one probe, waiting for its answer
    h.on_probe_reply(seq + 7, 5.01)                          # not a probe we sent: ignored
    assert h.state[route[0]] == SUSPECT
    h.on_probe_reply(seq, 5.03)                              # late (30 ms > probe interval) but outstanding
    assert all(h.state[p] == GOOD for p in route) and h.log[-1].reason == "probe_ok"


def test_an_unanswered_probe_retires_the_route_and_k_replies_bring_it_back_at_any_rtt():
    h = health()
    dead = aliases(h, 0, 1)
    h.on_loss(dead[0], 0.0, "sack_gap")
    h.probes_due(0.0)
    h.expire(TIMEOUT)                                          # the probe timed out
    assert all(h.state[p] == ASSUMED_BAD for p in dead)
    assert h.log[-1].reason == "sack_gap"
    # the route is probed every probe interval; replies come back 40 ms later (> interval)
    sent = []
    t = TIMEOUT
    while t < TIMEOUT + 0.2 and h.state[dead[0]] == ASSUMED_BAD:
        sent += [(seq, t) for _pid, seq in h.probes_due(t)]
        for seq, at in list(sent):
            if at + 0.04 <= t:
                h.on_probe_reply(seq, t)
                sent.remove((seq, at))
        t = round(t + 0.005, 6)
    assert all(h.state[p] == GOOD for p in dead) and h.log[-1].reason == "probes_ok"


def test_suspect_routes_are_held_when_most_routes_lose_at_once_as_in_a_host_stall():
    h = health()
    for route in h.routes:
        h.on_loss(route.pids[0], 1.0, "rto")
    assert all(s == SUSPECT for s in h.state)
    h.probes_due(1.0)
    h.expire(1.0 + TIMEOUT)                                    # every probe timed out too
    assert all(s == SUSPECT for s in h.state) and h.stall_holds == len(h.routes)
    for _pid, seq in h.probes_due(1.0 + TIMEOUT):              # the peer wakes up and answers
        h.on_probe_reply(seq, 1.0 + TIMEOUT + 0.01)
    assert all(s == GOOD for s in h.state)


def test_the_last_route_of_a_plane_is_not_retired_on_rtos_alone():
    h = health()
    first, second = aliases(h, 0, 0), aliases(h, 1, 0)
    h.on_loss(first[0], 0.0, "sack_gap")
    h.probes_due(0.0)
    h.expire(TIMEOUT)
    assert h.state[first[0]] == ASSUMED_BAD
    h.on_loss(second[0], 1.0, "rto")                        # the plane's other route, RTO only
    h.probes_due(1.0)
    h.expire(1.0 + TIMEOUT)
    assert h.state[second[0]] == SUSPECT and h.floor_holds == 1
    h.on_loss(second[0], 1.1, "sack_gap")                   # evidence from the fabric: retire
    h.probes_due(1.1)
    h.expire(1.1 + TIMEOUT)
    assert h.state[second[0]] == ASSUMED_BAD


def test_a_retired_route_is_swapped_for_backup_evs_of_the_same_plane_and_spread_back_on_return():
    h = health(planes=2, evs=8, params=replace(PARAMS, active_evs_per_plane=4))
    plane0 = [p for p in range(len(h.paths)) if h.paths[p][1] == 0]
    def active_by_t1():
        return sorted(h.route_keys[h.route_of_pid[p]][1] for p in plane0 if h.evs[p].active)
    assert active_by_t1() == [0, 0, 1, 1]
    dead = aliases(h, 0, 0)
    h.on_loss(dead[0], 0.0, "sack_gap")
    h.probes_due(0.0)
    h.expire(TIMEOUT)
    assert active_by_t1() == [1, 1, 1, 1] and h.swaps == 2
    assert all(h.state[p] == ASSUMED_BAD for p in dead)
    assert sum(h.state[p] == GOOD for p in plane0) == 4     # the plane keeps 4 EVs carrying data
    t = TIMEOUT + 0.02
    for _ in range(2):
        (_pid, seq), = h.probes_due(t)
        h.on_probe_reply(seq, t + 0.001)
        t += 0.001
    assert active_by_t1() == [0, 0, 1, 1]


def test_denied_routes_and_whole_planes_come_back_when_every_denial_is_lifted():
    h = health()
    h.set_denied("denylist", [(0, 1), (1, None)], 2.0)
    assert all(h.state[p] == DENIED for p in aliases(h, 1, 0))
    assert all(h.state[p] == DENIED for p in range(len(h.paths)) if h.paths[p][1] == 1)
    assert all(h.state[p] == GOOD for p in aliases(h, 0, 0))
    h.set_ports_down("port_down", [1], 2.1)                 # a second reason on plane 1
    h.set_denied("denylist", [], 2.2)
    assert h.state[pid_of(h, 0, 1)] == DENIED               # still down: its port
    assert h.state[pid_of(h, 1, 0)] == GOOD                 # lifted: its denier saw it work
    h.set_ports_down("port_down", [], 2.3)
    assert h.route_state_names() == ["GOOD"] * len(h.route_keys)
    assert h.probes_due(2.3) == []                          # no probing back


def test_keepalive_probes_one_route_each_interval_planes_in_turn():
    h = health(planes=2, evs=4)
    picks = []
    for i in range(4):
        got = h.probes_due(i * 0.02, keepalive=True)
        assert len(got) == 1 and h.probes_due(i * 0.02 + 0.005, keepalive=True) == []
        pid, seq = got[0]
        h.on_probe_reply(seq, i * 0.02 + 0.001)
        picks.append(h.route_keys[h.route_of_pid[pid]])
    assert [plane for plane, _t1 in picks] == [0, 1, 0, 1]
    assert sorted(picks) == [(0, 0), (0, 1), (1, 0), (1, 1)]       # every route refreshed


def test_probes_stay_within_the_budget_of_data_bytes():
    h = health()
    sent = 0
    for i in range(2000):                                   # a route that stays dead, no data
        for route in h.routes:
            h.schedule_probe(route, 0.0)
        sent += len(h.probes_due(i * 0.001))
    assert sent * PROBE_WIRE_BYTES <= PROBE_ALLOWANCE
    h.probes.c.data_bytes_sent += 1_000_000
    for route in h.routes:
        h.schedule_probe(route, 0.0)
    more = len(h.probes_due(3.0))
    assert more > 0 and h.probes.bytes_sent <= PROBE_ALLOWANCE + 0.01 * 1_000_000


def test_route_of_is_the_ev_modulo_the_t1s_and_none_within_a_rack():
    assert [route_of(ev, 3, 2) for ev in range(4)] == [(3, 0), (3, 1), (3, 0), (3, 1)]
    assert route_of(5, 2, 2, same_rack=True) == (2, None)
    assert route_of(5, 2, None) == (2, "ev5")


def test_round_robin_alternates_planes_and_skips_unusable():
    h = health(planes=2, evs=4, t1s=None)
    rr = RoundRobin(h.paths, h)
    picks = [rr.select() for _ in range(8)]
    assert sorted(picks) == list(range(8))
    assert all(h.paths[p][1] != h.paths[q][1] for p, q in zip(picks, picks[1:]))
    h.on_loss(2, 0.0, "rto")
    h.on_ecn_echo(5, 0.0)
    picks = [rr.select() for _ in range(12)]
    assert 2 not in picks and 5 not in picks
    for pid in (0, 1, 3, 4, 6, 7):
        h.state[pid] = ASSUMED_BAD
    assert rr.select() == 5                  # SKIP used when nothing is GOOD
    h.state[5] = ASSUMED_BAD
    assert rr.select() == 2                  # then the SUSPECT route
    assert rr.select(avoid=2) == 2           # only usable path: reused rather than stall
    h.state[2] = ASSUMED_BAD
    assert rr.select() is None


def test_a_route_back_in_use_gets_the_next_packet():
    h = health(planes=4, evs=8, params=replace(PARAMS, active_evs_per_plane=4))
    rr = RoundRobin(h.paths, h)
    back = aliases(h, 1, 2)
    h.set_denied("denylist", [h.route_keys[h.route_of_pid[back[0]]]], now=1.0)
    [rr.select() for _ in range(5)]
    h.set_denied("denylist", [], now=2.0)                    # lifted: the route is back
    first = rr.select()
    assert first in back and h.state[first] == GOOD
    picks = [rr.select() for _ in range(8)]
    assert len({h.paths[p][1] for p in picks}) == 4, "then the planes take their turns again"


def test_round_robin_gives_every_plane_an_equal_share_when_evs_are_retired():
    """A plane's NIC port is the bottleneck: a plane that lost half its EVs
    (one T1) still gets its full share, spread over its remaining EVs."""
    h = health(planes=4, evs=8)
    for pid, (ev, plane) in enumerate(h.paths):
        if plane == 2 and ev % 2 == 0:
            h.state[pid] = ASSUMED_BAD
    rr = RoundRobin(h.paths, h)
    picks = [h.paths[rr.select()] for _ in range(4 * 8 * 10)]
    per_plane = [sum(1 for _ev, p in picks if p == plane) for plane in range(4)]
    assert per_plane == [80, 80, 80, 80]
    assert all(p != q for (_a, p), (_b, q) in zip(picks, picks[1:]))   # planes alternate
    assert {ev for ev, p in picks if p == 2} == {1, 3, 5, 7}           # only its GOOD EVs


def test_an_overdue_packet_makes_its_route_suspect_and_a_later_sent_ack_clears_it():
    h = health()
    pid = pid_of(h, 1, 0)
    h.on_overdue(pid, sent=1.000, now=1.030)
    assert all(h.state[p] == SUSPECT for p in aliases(h, 1, 0))
    assert h.losses[pid] == 0                                    # suspicion, not a loss
    (_probe_pid, _seq), = h.probes_due(1.030)                     # and a probe at once
    rid = h.route_of_pid[pid]
    h.on_route_ack(rid, sent=0.990, now=1.031)                   # sent before it: says nothing
    assert h.state[pid] == SUSPECT
    h.on_route_ack(rid, sent=1.000, now=1.032)                   # the late packet itself
    assert h.state[pid] == GOOD
    assert (h.log[-1].reason, h.overdue_suspicions, h.ack_clears) == ("acked", 1, 1)


def test_an_overdue_suspicion_does_not_count_towards_retiring_a_lossy_route():
    h = health()
    pid = pid_of(h, 1, 0)
    rid = h.route_of_pid[pid]
    for i in range(2 * 3):
        h.on_overdue(pid, sent=1.0 + i * 0.01, now=1.005 + i * 0.01)
        h.on_route_ack(rid, sent=1.0 + i * 0.01, now=1.006 + i * 0.01)
    assert h.state[pid] == GOOD and not h.routes[rid].gap_suspicions


def test_a_sack_gap_loss_counts_once_per_episode_even_after_an_overdue_suspicion():
    h = health()
    pid = pid_of(h, 1, 0)
    rid = h.route_of_pid[pid]
    for i in range(3):                                           # three episodes, 10 ms apart
        t = 1.0 + i * 0.01
        h.on_overdue(pid, sent=t - 0.02, now=t)                  # suspect before the loss...
        h.on_loss(pid, t + 0.002, "sack_gap", sent=t - 0.02)     # ...which still counts once
        h.on_loss(pid, t + 0.003, "sack_gap", sent=t - 0.019)    # (not twice)
        if i < 2:
            assert len(h.routes[rid].gap_suspicions) == i + 1
            h.on_route_ack(rid, sent=t, now=t + 0.004)           # the route carried traffic again
    assert h.state[pid] == ASSUMED_BAD and h.log[-1].reason == "lossy"


def test_sack_gaps_hopping_over_most_routes_are_a_stall_not_lossy_routes():
    # a clean bench run on a busy machine: the receiver's host was descheduled and SACK gaps hit
    # every plane within 45 ms, each route cleared by an ACK moments later; no packet was lost
    h = health(planes=8, evs=8, same_rack=True)
    order = [6, 7, 2, 6, 7, 4, 1, 6, 1, 7, 3, 0, 1, 6, 3, 5, 0, 0]
    for i, plane in enumerate(order):
        t = 8.13 + i * 0.0025
        pid = pid_of(h, 0, plane)
        h.on_loss(pid, t, "sack_gap", sent=t - 0.02)
        assert h.state[pid] == SUSPECT, f"plane {plane} retired at {t:.4f}"
        h.on_route_ack(h.route_of_pid[pid], sent=t, now=t + 0.001)
    assert h.stall_holds > 0


def test_a_lossy_route_among_quiet_ones_is_still_retired_at_once():
    h = health(planes=8, evs=8, same_rack=True)
    pid = pid_of(h, 0, 3)
    for i in range(3):
        t = 1.0 + i * 0.01
        h.on_loss(pid, t, "sack_gap", sent=t - 0.02)
        if i < 2:
            h.on_route_ack(h.route_of_pid[pid], sent=t, now=t + 0.001)
    assert h.state[pid] == ASSUMED_BAD and h.log[-1].reason == "lossy"


def test_a_sack_gap_loss_that_was_reordering_is_forgotten():
    h = health()
    pid = pid_of(h, 1, 0)
    rid = h.route_of_pid[pid]
    for i in range(3):
        t = 1.0 + i * 0.01
        h.on_loss(pid, t, "sack_gap", sent=t - 0.02)
        h.on_spurious_gap(pid)                                   # acked after all
        h.on_route_ack(rid, sent=t, now=t + 0.001)
    assert h.state[pid] == GOOD and h.routes[rid].gap_suspicions == []
