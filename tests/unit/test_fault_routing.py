"""The baseline routing emulation's timers and log, without a switch."""

import time

from faults.routing import RoutingEmulation, read_routing_events, read_routing_log
from topologies.fabric import FabricSpec

SPEC = FabricSpec(planes=1, racks=2, spines=3, hosts_per_rack=1, evs_per_plane=3)
T0, OTHER = "t0p0r0", "t0p0r1"
UP = [2, 3, 4]  # uplink ports of a T0 with one host port
TO_R1, TO_R0 = 2, 1  # ECMP group ids toward rack 1 (on T0) and rack 0 (on OTHER)


def routing(tmp_path, delay=0.2, hold=0.2):
    applied = []
    r = RoutingEmulation(SPEC, delay, hold, on_apply=lambda sw, gid, ports: applied.append((sw, gid, ports)),
                         log_path=tmp_path / "routing.jsonl")
    return r, applied


def test_withdrawn_only_after_the_delay_and_restored_after_hold_down(tmp_path):
    r, applied = routing(tmp_path)
    start = time.monotonic()
    r.link_state(T0, 3, up=False)
    time.sleep(0.1)
    assert applied == []
    time.sleep(0.25)
    # T0 loses its uplink 3 toward every rack; the other T0 stops using that
    # T1 toward T0's rack (it can no longer reach it)
    assert applied == [(T0, TO_R1, [2, 4]), (OTHER, TO_R0, [2, 4])]
    r.link_state(T0, 3, up=True)
    time.sleep(0.1)
    assert len(applied) == 2
    time.sleep(0.25)
    assert applied[-2:] == [(T0, TO_R1, UP), (OTHER, TO_R0, UP)]
    events = read_routing_events(tmp_path / "routing.jsonl", start, "baseline")
    assert [e["kind"] for e in events] == ["route_withdrawn", "route_restored"]
    assert 0.2 <= events[0]["t"] < 0.3 and events[0]["target"] == "t0p0r0-t1p0s1"
    assert all(e["transport"] == "baseline" for e in events)
    r.close()


def test_a_flap_shorter_than_the_delay_is_never_withdrawn(tmp_path):
    r, applied = routing(tmp_path)
    r.link_state(T0, 2, up=False)
    r.link_state(T0, 2, up=False)  # repeated reports change nothing
    time.sleep(0.05)
    r.link_state(T0, 2, up=True)
    time.sleep(0.35)
    assert applied == []
    assert [x["event"] for x in read_routing_log(tmp_path / "routing.jsonl")] == \
        ["link_down_detected", "link_up_detected"]


def test_failing_again_during_hold_down_stays_withdrawn(tmp_path):
    r, applied = routing(tmp_path, delay=0.05, hold=0.2)
    r.link_state(T0, 4, up=False)
    time.sleep(0.15)
    r.link_state(T0, 4, up=True)
    time.sleep(0.05)
    r.link_state(T0, 4, up=False)
    time.sleep(0.3)
    assert applied == [(T0, TO_R1, [2, 3]), (OTHER, TO_R0, [2, 3])]
    assert r.withdrawn[T0] == {4}


def test_host_ports_t1s_and_unknown_switches_are_ignored(tmp_path):
    r, applied = routing(tmp_path, delay=0.0)
    r.link_state(T0, 1, up=False)  # the host port
    r.link_state("t1p0s0", 1, up=False)
    time.sleep(0.1)
    assert applied == [] and not (tmp_path / "routing.jsonl").exists()


def test_adopt_starts_from_what_the_switch_holds_and_cancels_timers(tmp_path):
    r, applied = routing(tmp_path)
    r.link_state(T0, 2, up=False)
    r.adopt(T0, {TO_R1: [2, 3]})  # a controller restart: the switch had 4 withdrawn
    time.sleep(0.3)
    assert applied == [] and r.withdrawn[T0] == {4}
    r.link_state(T0, 4, up=True)  # its link is up: restored after the hold-down
    time.sleep(0.3)
    assert applied == [(T0, TO_R1, UP)]


def test_missing_log_reads_as_empty(tmp_path):
    assert read_routing_log(tmp_path / "none.jsonl") == []
    assert read_routing_events(tmp_path / "none.jsonl", 0.0) == []
