"""The Clustermapper's sans-IO core: probe pacing, miss/success counting, localisation."""

import pytest

from lab.inhost.mapper_logic import (FINDINGS_STALE_S, MAX_PROBES_PER_S, MISSES_TO_FAIL, PROBE_BATCH_S,
                                     PROBE_INTERVAL_S, PROBE_TIMEOUT_S, RETRY_INTERVAL_S, SUCCESSES_TO_REPAIR,
                                     Findings, ProbeHealth, ProbeSchedule, cycle_s, localise)
from topologies.mapper_probe_wire import Target, targets
from mrc_host.denylist import DeniedElement
from topologies.fabric import DEFAULT_FABRIC, FabricSpec

SPEC = DEFAULT_FABRIC  # 8 planes, 2 racks x 2 hosts, 2 T1s
NOW = 100.0


def findings(host, *failed, t=NOW, since=50.0):
    return Findings(host, t, {Target(*f): since + host for f in failed})


def keys(elements):
    return {(e.kind, e.plane, e.rack, e.t1, e.host) for e in elements}


# ---- pacing ---------------------------------------------------------------------------
def test_every_target_is_probed_once_per_cycle_evenly_and_within_the_rate_cap():
    all_targets = targets(SPEC)
    assert len(all_targets) == SPEC.planes * (1 + SPEC.spines)
    schedule = ProbeSchedule(all_targets, start=0.0)
    sent, now = [], 0.0
    while now < 10 * cycle_s(len(all_targets)) - 1e-9:
        sent += [(now, t) for t in schedule.due(now)]
        now += 0.001
    assert len(sent) / now <= MAX_PROBES_PER_S
    assert cycle_s(len(all_targets)) >= PROBE_INTERVAL_S
    for target in all_targets:
        times = [t for t, x in sent if x == target]
        assert len(times) == 10
        gaps = [b - a for a, b in zip(times, times[1:])]
        # the test's clock steps 1 ms at a time, so a gap may be off by one step
        assert all(abs(gap - cycle_s(len(all_targets))) < 0.0011 for gap in gaps)


def test_a_stalled_mapper_resumes_without_a_burst():
    schedule = ProbeSchedule(targets(SPEC), start=0.0)
    schedule.due(0.0)
    assert len(schedule.due(5.0)) == 1  # five seconds late: one probe, not a hundred


def test_a_mapper_that_sleeps_until_next_due_sends_in_batches_and_keeps_the_cycle():
    """Woken only at next_due(), the mapper sends about PROBE_BATCH_S of the cycle at once:
    a wake-up per batch, every target still once per cycle."""
    all_targets = targets(SPEC)
    schedule = ProbeSchedule(all_targets, start=0.0)
    cycle, now, wakes, sent = cycle_s(len(all_targets)), 0.0, 0, []
    while now < 10 * cycle - 1e-9:
        sent += [(now, t) for t in schedule.due(now)]
        wakes += 1
        now = schedule.next_due()
    # a wake sends what is due, then sleeps until the next probe's time plus a batch less one gap
    assert wakes <= 10 * cycle / (PROBE_BATCH_S - schedule.gap) + 2
    assert len(sent) / wakes >= PROBE_BATCH_S / schedule.gap - 1
    for target in all_targets:
        times = [t for t, x in sent if x == target]
        # each cycle's turn, sent at most a batch late (the last turn may fall past the loop's end)
        assert len(times) in (9, 10) and all(abs(b - a - cycle) <= PROBE_BATCH_S for a, b in zip(times, times[1:]))


def test_a_watched_target_wakes_the_mapper_at_its_retry():
    sick = Target(0, 1)
    schedule = ProbeSchedule(targets(SPEC), start=0.0)
    schedule.due(0.0, [sick])
    assert schedule.next_due([sick]) == pytest.approx(RETRY_INTERVAL_S)
    assert schedule.next_due() > RETRY_INTERVAL_S


def test_the_oldest_outstanding_probe_says_when_the_next_miss_is_due():
    health = ProbeHealth(targets(SPEC))
    assert health.next_expiry() == float("inf")
    health.sent(Target(0), 1.0)
    health.sent(Target(1), 1.2)
    assert health.next_expiry() == pytest.approx(1.0 + PROBE_TIMEOUT_S)


def test_the_rate_cap_stretches_the_cycle_of_a_large_fabric():
    big = FabricSpec(planes=8, racks=2, spines=16, hosts_per_rack=1, evs_per_plane=16)
    assert cycle_s(len(targets(big))) == pytest.approx(8 * 17 / MAX_PROBES_PER_S)


# ---- miss / success counting -------------------------------------------------------------
def run(health, target, outcomes, t=0.0):
    """Send one probe per 50 ms; True = answered after 10 ms, False = never."""
    transitions = []
    for ok in outcomes:
        seq = health.sent(target, t)
        if ok:
            transitions += health.replied(seq, t + 0.01)
        transitions += health.expire(t + PROBE_TIMEOUT_S + 0.001)
        t += 0.05
    return transitions, t


def test_failed_after_n_consecutive_misses_back_after_m_successes():
    target = Target(2, 1)
    health = ProbeHealth([target])
    out, t = run(health, target, [False] * (MISSES_TO_FAIL - 1) + [True] + [False] * (MISSES_TO_FAIL - 1))
    assert out == [] and health.failed() == {}  # never N in a row
    out, t = run(health, target, [False], t)
    assert [x.failed for x in out] == [True] and target in health.failed()
    out, t = run(health, target, [True] * (SUCCESSES_TO_REPAIR - 1) + [False] + [True] * (SUCCESSES_TO_REPAIR - 1), t)
    assert out == [] and target in health.failed()
    out, _ = run(health, target, [True], t)
    assert [x.failed for x in out] == [False] and health.failed() == {}


def test_a_reply_after_the_timeout_is_a_miss_and_an_unknown_reply_is_counted():
    target = Target(0)
    health = ProbeHealth([target], misses_to_fail=1)
    seq = health.sent(target, 0.0)
    (transition,) = health.replied(seq, PROBE_TIMEOUT_S + 0.1)
    assert transition.failed and transition.target == target
    assert health.replied(12345, 1.0) == [] and health.late_replies == 1


def test_a_t0_hop_back_voids_the_t1_verdicts_taken_through_it():
    hop, via_t1, other_plane = Target(1), Target(1, 0), Target(2, 0)
    health = ProbeHealth([hop, via_t1, other_plane])
    t = 0.0
    for target in (hop, via_t1, other_plane):  # the NIC of plane 1 is down: both fail
        _, t = run(health, target, [False] * MISSES_TO_FAIL, t)
    assert set(health.failed()) == {hop, via_t1, other_plane}
    out, t = run(health, hop, [True] * SUCCESSES_TO_REPAIR, t)
    assert [(x.target, x.failed) for x in out] == [(hop, False), (via_t1, False)]
    assert set(health.failed()) == {other_plane}  # another plane keeps its verdict
    out, _ = run(health, via_t1, [False] * MISSES_TO_FAIL, t)  # a T1 really down fails again
    assert [(x.target, x.failed) for x in out] == [(via_t1, True)]


def test_findings_round_trip_and_garbage_is_none():
    f = findings(3, (1,), (2, 0))
    assert Findings.from_dict(f.to_dict()) == f
    for bad in [None, [], {}, {"version": 1, "host": "h3", "t": 1, "failed": []},
                {"version": 2, "host": 3, "t": 1, "failed": []},
                {"version": 1, "host": 3, "t": 1, "failed": [{"plane": "x", "t1": None, "since": 1}]}]:
        assert Findings.from_dict(bad) is None


# ---- localisation -----------------------------------------------------------------------
def test_nothing_failed_denies_nothing():
    assert localise(SPEC, [findings(h) for h in range(4)], NOW) == []


def test_one_racks_t1_probe_failing_is_that_t0_t1_link():
    reports = [findings(0, (3, 1)), findings(1, (3, 1)), findings(2), findings(3)]
    (element,) = localise(SPEC, reports, NOW)
    assert keys([element]) == {("t0t1_link", 3, 0, 1, None)}
    assert element.source == "mapper:h0" and element.since == 50.0


def test_every_rack_losing_a_t1_is_that_t1():
    reports = [findings(h, (5, 0)) for h in range(4)]
    assert keys(localise(SPEC, reports, NOW)) == {("t1", 5, None, 0, None)}


def test_a_t1_probe_lost_by_one_host_of_a_rack_is_not_the_link():
    reports = [findings(0, (3, 1)), findings(1), findings(2), findings(3)]
    assert localise(SPEC, reports, NOW) == []


def test_one_hosts_t0_hop_failing_is_its_nic_port_and_explains_its_t1_probes():
    reports = [findings(0, (4,), (4, 0), (4, 1)), findings(1), findings(2), findings(3)]
    assert keys(localise(SPEC, reports, NOW)) == {("nic_port", 4, None, None, 0)}


def test_every_host_of_a_rack_losing_its_t0_hop_is_the_t0():
    lost = [(6,), (6, 0), (6, 1)]
    reports = [findings(2, *lost), findings(3, *lost), findings(0), findings(1)]
    assert keys(localise(SPEC, reports, NOW)) == {("t0", 6, 1, None, None)}


def test_a_t0_down_leaves_one_rack_of_evidence_about_the_t1s():
    # rack 1's T0 on plane 6 is down and rack 0 loses T1 0 too: with one rack
    # of evidence that is rack 0's link, not the T1
    lost = [(6,), (6, 0), (6, 1)]
    reports = [findings(2, *lost), findings(3, *lost), findings(0, (6, 0)), findings(1, (6, 0))]
    assert keys(localise(SPEC, reports, NOW)) == {("t0", 6, 1, None, None), ("t0t1_link", 6, 0, 0, None)}


def test_a_rack_with_one_reporting_host_cannot_tell_its_t0_from_its_nic():
    spec = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=2)
    reports = [findings(0, (1,)), findings(1)]
    assert keys(localise(spec, reports, NOW)) == {("nic_port", 1, None, None, 0)}


def test_stale_or_foreign_findings_are_ignored():
    reports = [findings(0, (3, 1), t=NOW - FINDINGS_STALE_S - 0.1), findings(1), findings(2),
               findings(3), findings(99, (0,))]
    assert localise(SPEC, reports, NOW) == []


def test_every_mapper_merging_the_same_findings_writes_the_same_entries():
    reports = [findings(h, (1, 0), (2,)) for h in range(4)]
    first = localise(SPEC, reports, NOW)
    assert localise(SPEC, list(reversed(reports)), NOW) == first
    assert all(isinstance(e, DeniedElement) for e in first)


# ---- fast retries of watched targets ---------------------------------------------------
def test_a_watched_target_is_probed_every_retry_interval_besides_the_cycle():
    from lab.inhost.mapper_logic import RETRY_INTERVAL_S
    all_targets = [Target(0), Target(0, 0), Target(0, 1)]
    sched = ProbeSchedule(all_targets, start=0.0)
    sched.due(0.0)
    sick = Target(0, 1)
    probes = []
    t = 0.0
    while t < 0.5:
        t = round(t + 0.001, 6)
        probes += [(t, x) for x in sched.due(t, [sick])]
    times = [t for t, x in probes if x == sick]
    assert len(times) >= 0.5 / RETRY_INTERVAL_S - 1
    assert max(b - a for a, b in zip(times, times[1:])) <= RETRY_INTERVAL_S + 0.0011   # never waits a cycle


def test_a_failed_target_that_answers_is_probed_again_at_once_until_repaired():
    sick = Target(0, 1)
    health = ProbeHealth([Target(0), sick], timeout=0.3, misses_to_fail=1, successes_to_repair=2)
    sched = ProbeSchedule([Target(0), sick], start=0.0)
    seq = health.sent(sick, 0.0)
    health.expire(0.31)                                  # failed
    assert sick in sched.due(0.31, [sick]) and not health.repairing(sick)
    seq = health.sent(sick, 0.31)
    assert health.replied(seq, 0.312) == [] and health.repairing(sick)
    sched.retry_now(sick)
    assert sick in sched.due(0.312, [sick])              # not RETRY_INTERVAL_S later
    seq = health.sent(sick, 0.312)
    assert [tr.failed for tr in health.replied(seq, 0.314)] == [False]
    assert not health.repairing(sick)


def test_a_timeout_of_a_probe_older_than_an_answered_one_is_not_a_miss():
    target = Target(1, 0)
    h = ProbeHealth([target], timeout=0.3, misses_to_fail=1, successes_to_repair=2)
    old = h.sent(target, 0.0)                  # lost in the fault
    new = h.sent(target, 0.1)
    assert h.replied(new, 0.12) == []
    assert h.expire(0.5) == []                 # the old probe's timeout says nothing new
    assert h.states[target].successes == 1 and old not in h.outstanding


def test_a_slowed_fabric_stretches_the_probe_cycle_retries_and_batches():
    slow = FabricSpec(link_mbps=1.0)
    assert slow.time_scale == pytest.approx(10.0) and FabricSpec(link_mbps=100.0).time_scale == 1.0
    assert SPEC.time_scale == 1.0
    normal = ProbeSchedule(targets(SPEC), start=0.0)
    stretched = ProbeSchedule(targets(slow), start=0.0, scale=slow.time_scale)
    assert stretched.cycle == pytest.approx(10 * normal.cycle) and stretched.gap == pytest.approx(10 * normal.gap)
    sick = Target(0, 1)
    stretched.due(0.0, [sick])
    assert stretched.next_due([sick]) == pytest.approx(10 * RETRY_INTERVAL_S)
    assert cycle_s(24, 10.0) == pytest.approx(10 * cycle_s(24))
