"""The baseline routing emulation's timers and log, without a switch, on a
manual clock: every instant asserted is exact."""

import pytest

from topologies.system.clock import ManualClock
from topologies.routing import RoutingEmulation, read_routing_events, read_routing_log
from topologies.fabric import FabricSpec

SPEC = FabricSpec(planes=1, racks=2, spines=3, hosts_per_rack=1, evs_per_plane=3)
T0, OTHER = "t0p0r0", "t0p0r1"
UP = [2, 3, 4]  # uplink ports of a T0 with one host port
TO_R1, TO_R0 = 2, 1  # ECMP group ids toward rack 1 (on T0) and rack 0 (on OTHER)
DELAY, HOLD = 5.0, 2.0
TICK = 2.0 ** -10  # the smallest step the tests take (exact in binary: no rounding)


def routing(tmp_path, delay=DELAY, hold=HOLD):
    clock, applied = ManualClock(), []
    r = RoutingEmulation(SPEC, delay, hold, on_apply=lambda sw, gid, ports: applied.append((sw, gid, ports)),
                         log_path=tmp_path / "routing.jsonl", clock=clock)
    return r, applied, clock


def test_withdrawn_exactly_at_the_delay_and_restored_exactly_after_hold_down(tmp_path):
    r, applied, clock = routing(tmp_path)
    start = clock.now()
    r.link_state(T0, 3, up=False)
    clock.advance(DELAY - TICK)
    assert applied == [] and r.withdrawn[T0] == set()
    clock.advance(TICK)
    # T0 loses its uplink 3 toward every rack; the other T0 stops using that
    # T1 toward T0's rack (it can no longer reach it)
    assert applied == [(T0, TO_R1, [2, 4]), (OTHER, TO_R0, [2, 4])]
    assert r.withdrawn[T0] == {3}
    clock.advance(1.0)
    r.link_state(T0, 3, up=True)
    clock.advance(HOLD - TICK)
    assert len(applied) == 2
    clock.advance(TICK)
    assert applied[-2:] == [(T0, TO_R1, UP), (OTHER, TO_R0, UP)]
    events = read_routing_events(tmp_path / "routing.jsonl", start, "baseline")
    assert [(e["kind"], e["t"]) for e in events] == [("route_withdrawn", DELAY),
                                                     ("route_restored", DELAY + 1.0 + HOLD)]
    assert events[0]["target"] == "t0p0r0-t1p0s1" and events[0]["port"] == 3
    assert all(e["transport"] == "baseline" for e in events)
    assert clock.pending() == 0


def test_a_flap_shorter_than_the_delay_is_never_withdrawn(tmp_path):
    r, applied, clock = routing(tmp_path)
    r.link_state(T0, 2, up=False)
    r.link_state(T0, 2, up=False)  # repeated reports change nothing
    clock.advance(DELAY - TICK)
    r.link_state(T0, 2, up=True)
    clock.advance(10 * DELAY)
    assert applied == [] and r.withdrawn[T0] == set()
    assert [x["event"] for x in read_routing_log(tmp_path / "routing.jsonl")] == \
        ["link_down_detected", "link_up_detected"]


def test_failing_again_during_hold_down_stays_withdrawn(tmp_path):
    r, applied, clock = routing(tmp_path)
    r.link_state(T0, 4, up=False)
    clock.advance(DELAY)
    r.link_state(T0, 4, up=True)
    clock.advance(HOLD - TICK)
    r.link_state(T0, 4, up=False)  # the restore due in TICK is dropped
    clock.advance(10 * HOLD)
    assert applied == [(T0, TO_R1, [2, 3]), (OTHER, TO_R0, [2, 3])]
    assert r.withdrawn[T0] == {4}
    log = [(x["event"], x.get("withdrawn")) for x in read_routing_log(tmp_path / "routing.jsonl")]
    assert log == [("link_down_detected", False), ("route_withdrawn", None),
                   ("link_up_detected", True), ("link_down_detected", True)]
    r.link_state(T0, 4, up=True)  # up for good: the hold-down starts again from here
    clock.advance(HOLD)
    assert applied[-2:] == [(T0, TO_R1, UP), (OTHER, TO_R0, UP)] and r.withdrawn[T0] == set()


def test_host_ports_t1s_and_unknown_switches_are_ignored(tmp_path):
    r, applied, clock = routing(tmp_path, delay=0.0)
    r.link_state(T0, 1, up=False)  # the host port
    r.link_state("t1p0s0", 1, up=False)
    r.link_state("t0p9r9", 2, up=False)
    clock.advance(1.0)
    assert applied == [] and clock.pending() == 0 and not (tmp_path / "routing.jsonl").exists()


def test_a_zero_delay_withdraws_at_once(tmp_path):
    r, applied, clock = routing(tmp_path, delay=0.0)
    r.link_state(T0, 2, up=False)
    clock.advance(0.0)
    assert r.withdrawn[T0] == {2} and applied == [(T0, TO_R1, [3, 4]), (OTHER, TO_R0, [3, 4])]


def test_adopt_starts_from_what_the_switch_holds_and_cancels_timers(tmp_path):
    r, applied, clock = routing(tmp_path)
    r.link_state(T0, 2, up=False)
    r.adopt(T0, {TO_R1: [2, 3]})  # a controller restart: the switch had 4 withdrawn
    clock.advance(10 * DELAY)
    assert applied == [] and r.withdrawn[T0] == {4}
    r.link_state(T0, 4, up=True)  # its link is up: restored after the hold-down
    clock.advance(HOLD)
    assert applied == [(T0, TO_R1, UP)]


def test_a_reconnected_switch_gets_the_emulation_state_again(tmp_path):
    r, applied, clock = routing(tmp_path)
    r.adopt(T0, {TO_R1: UP})
    r.link_state(T0, 3, up=False)
    clock.advance(DELAY)
    assert r.withdrawn[T0] == {3}
    applied.clear()
    r.adopt(T0, {TO_R1: UP})  # came back holding the static table: withdrawn again
    assert applied == [(T0, TO_R1, [2, 4])]


def test_switch_gone_and_close_drop_pending_timers(tmp_path):
    r, applied, clock = routing(tmp_path)
    r.link_state(T0, 2, up=False)
    r.link_state(OTHER, 3, up=False)
    r.switch_gone(T0)
    assert clock.pending() == 1
    r.close()
    clock.advance(10 * DELAY)
    assert applied == [] and clock.pending() == 0


def test_negative_delays_are_refused(tmp_path):
    with pytest.raises(ValueError, match="must be >= 0"):
        routing(tmp_path, delay=-1.0)


def test_missing_log_reads_as_empty(tmp_path):
    assert read_routing_log(tmp_path / "none.jsonl") == []
    assert read_routing_events(tmp_path / "none.jsonl", 0.0) == []
