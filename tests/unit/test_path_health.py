"""The path-health state machine, transition by transition."""

from mrc_host.path_health import ASSUMED_BAD, GOOD, SKIP, PathHealth
from mrc_host.path_select import RoundRobin


def health(n=4, min_usable=1, **kw):
    args = dict(skip_time=1.0, probe_interval=0.5, probe_successes=2, min_usable=min_usable)
    args.update(kw)
    return PathHealth([(ev, ev % 2) for ev in range(n)], **args)


def test_ecn_skip_then_expire():
    h = health()
    h.on_ecn_echo(1, now=10.0)
    assert h.state[1] == SKIP and h.next_deadline() == 11.0
    h.on_ecn_echo(1, now=10.5)             # extends
    h.expire(11.2)
    assert h.state[1] == SKIP
    h.expire(11.5)
    assert h.state[1] == GOOD
    assert [(e.old, e.new, e.reason) for e in h.log] == [("GOOD", "SKIP", "ecn_echo"),
                                                         ("SKIP", "GOOD", "skip_expired")]


def test_trim_keeps_path_usable():
    h = health()
    h.on_trim(2, 1.0)
    assert h.state[2] == GOOD and h.trims[2] == 1 and not h.log


def test_loss_retires_probes_revive_after_k_consecutive():
    h = health()
    h.on_loss(3, 5.0, "rto")
    assert h.state[3] == ASSUMED_BAD and h.usable == 3
    (pid, seq1), = h.probes_due(5.0)
    assert pid == 3 and h.probes_due(5.1) == []
    h.on_probe_reply(3, seq1 + 7, 5.1)     # wrong seq: ignored
    h.on_probe_reply(3, seq1, 5.1)
    assert h.state[3] == ASSUMED_BAD and h.consecutive[3] == 1
    (_, seq2), = h.probes_due(5.1)         # next probe at once after a reply
    h.on_probe_reply(3, seq2, 5.2)
    assert h.state[3] == GOOD and h.usable == 4
    assert h.log[-1].reason == "probes_ok" and h.log[-1].time == 5.2


def test_unanswered_probe_resets_the_count():
    h = health()
    h.on_loss(0, 0.0, "sack_gap")
    (_, s1), = h.probes_due(0.0)
    h.on_probe_reply(0, s1, 0.1)
    (_, s2), = h.probes_due(0.1)           # this one is lost
    assert h.probes_due(0.3) == []
    (_, s3), = h.probes_due(0.6)           # due again: previous unanswered
    assert h.consecutive[0] == 0
    h.on_probe_reply(0, s3, 0.7)
    assert h.state[0] == ASSUMED_BAD


def test_floor_and_late_signals_on_retired_paths():
    h = health(n=3, min_usable=2)
    h.on_loss(0, 1.0, "rto")
    h.on_loss(1, 1.0, "rto")                # would leave 1 < 2 usable
    assert h.state == [ASSUMED_BAD, GOOD, GOOD] and h.floor_holds == 1
    h.on_ecn_echo(0, 1.1)
    assert h.state[0] == ASSUMED_BAD


def test_round_robin_alternates_planes_and_skips_unusable():
    h = health(n=8)
    rr = RoundRobin(h.paths, h)
    picks = [rr.select() for _ in range(8)]
    assert sorted(picks) == list(range(8))
    assert all(h.paths[p][1] != h.paths[q][1] for p, q in zip(picks, picks[1:]))
    h.on_loss(2, 0.0, "rto")
    h.on_ecn_echo(5, 0.0)
    picks = [rr.select() for _ in range(12)]
    assert 2 not in picks and 5 not in picks
    assert rr.select(avoid=picks[-1] ^ 0) is not None
    for pid in (0, 1, 3, 4, 6, 7):
        h.state[pid] = ASSUMED_BAD
    assert rr.select() == 5                  # SKIP used when nothing is GOOD
    assert rr.select(avoid=5) == 5            # only usable path: reused rather than stall
    h.state[5] = ASSUMED_BAD
    assert rr.select() is None


def test_round_robin_gives_every_plane_an_equal_share_when_evs_are_retired():
    """A plane's NIC port is the bottleneck: a plane that lost half its EVs
    (one T1) still gets its full share, spread over its remaining EVs."""
    paths = [(ev, plane) for plane in range(4) for ev in range(8)]
    h = PathHealth(paths, skip_time=1.0, probe_interval=0.5, probe_successes=2, min_usable=1)
    for pid, (ev, plane) in enumerate(paths):
        if plane == 2 and ev % 2 == 0:
            h.state[pid] = ASSUMED_BAD
    rr = RoundRobin(paths, h)
    picks = [paths[rr.select()] for _ in range(4 * 8 * 10)]
    per_plane = [sum(1 for _ev, p in picks if p == plane) for plane in range(4)]
    assert per_plane == [80, 80, 80, 80]
    assert all(p != q for (_a, p), (_b, q) in zip(picks, picks[1:]))   # planes alternate
    assert {ev for ev, p in picks if p == 2} == {1, 3, 5, 7}           # only its GOOD EVs
