"""Failover and recovery as a user sees them, from synthetic route records whose figures are known by hand.

Default fabric: 2 hosts per rack (h0, h1 in rack 0; h2, h3 in rack 1), 2 T1s per plane.
"""

from dataclasses import replace

import pytest

from lab.analysis.crossing import route_crosses
from lab.analysis.event_record import RunEvent
from lab.analysis.failover import fault_figures, in_rtts, route_failover_recovery, routing_failover_recovery
from lab.analysis.fault_windows import FaultWindow, fault_windows
from lab.analysis.iteration_record import Iteration
from lab.analysis.path_retirement import retirements
from lab.analysis.route_records import median_route_gap, route_records
from lab.analysis.run_config import RunConfig
from lab.analysis.summary import summarize
from mrc_host.routes import ROUTE_SILENCE_S
from topologies.fabric import DEFAULT_FABRIC

CFG = {"fabric": DEFAULT_FABRIC.to_dict(), "job": {"buffer_bytes": 1_000_000}}
RUN_END = 30.0


def route(plane=0, t1=1, first=0.0, last=RUN_END, silences=(), acks=None, first_acked=None, last_acked=None):
    """A route record as the agent writes it; acks default to the sends shifted by 10 ms."""
    shift = 0.01
    return {"plane": plane, "t1": t1, "state": "GOOD", "sent": 100, "acked": 100,
            "first_sent": first, "last_sent": last,
            "first_acked": first + shift if first_acked is None else first_acked,
            "last_acked": last + shift if last_acked is None else last_acked,
            "send_silences": [list(s) for s in silences],
            "ack_silences": [[a + shift, b + shift] for a, b in silences] if acks is None else [list(s) for s in acks]}


def stats(*routes, host="h0", peer="h2", srtt=0.015):
    """One sender's stats: a connection to ``peer`` with these routes."""
    return {host: {"peers": {peer: {"data_sent": 100, "srtt": srtt, "routes": list(routes)}}}}


def figures(per_host, events):
    windows = fault_windows(events, "mrc")
    faults, dropped = fault_figures("mrc", events, windows, per_host, DEFAULT_FABRIC)
    assert dropped == 0
    return faults


def fault(t0, t1, target="t1p0s1", name="link_down"):
    evs = [{"t": t0, "kind": "fault_start", "fault": name, "target": target, "transport": "mrc"}]
    if t1 is not None:
        evs.append({"t": t1, "kind": "fault_end", "fault": name, "target": target, "transport": "mrc"})
    return as_events(*evs)


def as_events(*records):
    """events.jsonl lines as the analysis reads them."""
    return [RunEvent.from_dict(r) for r in records]


BUSY = route(plane=0, t1=0)   # the connection's other route on plane 0 (T1 0): carries data all along


def test_route_that_stops_30_ms_after_the_fault_fails_over_in_30_ms_and_recovers_on_its_first_ack():
    # sends stop 30 ms after the fault at 10 s and resume 40 ms after the repair at 20 s;
    # its first ack after the repair comes 50 ms after it
    dead = route(silences=[(10.03, 20.04)], acks=[(10.04, 20.05)])
    f, = figures(stats(dead, BUSY), fault(10.0, 20.0))
    assert f.basis == "routes"
    assert f.failover_s == pytest.approx(0.03) and f.routes_failed == 1
    assert f.failover_rtts == pytest.approx(2.0)        # RTT 15 ms
    assert f.recovery_s == pytest.approx(0.05) and f.routes_unrecovered == 0
    assert f.recovery_rtts == pytest.approx(0.05 / 0.015)
    assert f.routes_kept_sending == 0                    # BUSY goes through T1 0: not crossed


def test_recovery_busy_leaves_out_the_time_the_connection_had_nothing_to_send():
    # repaired at 20 s; the connection had nothing to send from 19.9 s to 20.12 s
    # (between two steps of the job); the route's first packet after the
    # repair went at 20.13 s and was acked at 20.15 s: 150 ms after the repair,
    # of which 120 ms the connection sent nothing anywhere
    dead = route(silences=[(10.03, 20.13)], acks=[(10.04, 20.15)])
    per_host = stats(dead, BUSY)
    per_host["h0"]["peers"]["h2"]["idle_spans"] = [[5.0, 5.1], [19.9, 20.12]]
    f, = figures(per_host, fault(10.0, 20.0))
    assert f.recovery_s == pytest.approx(0.15)
    assert f.recovery_busy_s == pytest.approx(0.03) and f.recovery_busy_rtts == pytest.approx(2.0)
    # idle time after the route's first packet is not left out: the route was back then
    per_host["h0"]["peers"]["h2"]["idle_spans"] = [[20.135, 20.2]]
    f, = figures(per_host, fault(10.0, 20.0))
    assert f.recovery_busy_s == pytest.approx(0.15)
    # unreadable idle spans: nothing is left out
    per_host["h0"]["peers"]["h2"]["idle_spans"] = [["soon", 20.2]]
    f, = figures(per_host, fault(10.0, 20.0))
    assert f.recovery_busy_s == pytest.approx(0.15)


def test_failover_busy_leaves_out_the_time_the_connection_had_nothing_to_send():
    # the fault at 10 s came as the job paused: the connection had nothing to
    # send from 9.95 s to 10.08 s; the route then carried data until 10.11 s:
    # 110 ms after the fault, of which 80 ms the connection sent nothing anywhere
    dead = route(silences=[(10.11, 20.04)], acks=[(10.12, 20.05)])
    per_host = stats(dead, BUSY)
    per_host["h0"]["peers"]["h2"]["idle_spans"] = [[9.95, 10.08]]
    f, = figures(per_host, fault(10.0, 20.0))
    assert f.failover_s == pytest.approx(0.11)
    assert f.failover_busy_s == pytest.approx(0.03) and f.failover_busy_rtts == pytest.approx(2.0)
    # idle time after the route's last packet is not left out (nor counted)
    per_host["h0"]["peers"]["h2"]["idle_spans"] = [[10.2, 10.3]]
    f, = figures(per_host, fault(10.0, 20.0))
    assert f.failover_busy_s == pytest.approx(0.11)


def test_failover_after_loss_counts_from_the_first_packet_the_failure_dropped():
    # the fault at 10 s; the route's next packet went at 10.02 s and was dropped, as
    # was every later one, the last at 10.045 s: 25 ms from the first loss to the
    # last packet (45 ms from the fault instant)
    dead = route(silences=[(10.045, 20.04)], acks=[(10.04, 20.05)])
    dead["drop_spans"] = [[3.0, 3.0], [10.02, 10.045]]        # a random loss long before is not this fault's
    f, = figures(stats(dead, BUSY), fault(10.0, 20.0))
    assert f.failover_s == pytest.approx(0.045)
    assert f.failover_after_loss_s == pytest.approx(0.025)
    assert f.failover_after_loss_rtts == pytest.approx(0.025 / 0.015)
    # a packet in flight at the fault instant (sent before it) counts from the fault
    dead["drop_spans"] = [[9.99, 10.045]]
    f, = figures(stats(dead, BUSY), fault(10.0, 20.0))
    assert f.failover_after_loss_s == pytest.approx(0.045)
    # the job paused between the first loss and the last packet: that time is left out
    per_host = stats(dead, BUSY)
    per_host["h0"]["peers"]["h2"]["idle_spans"] = [[10.01, 10.03]]
    f, = figures(per_host, fault(10.0, 20.0))
    assert f.failover_after_loss_s == pytest.approx(0.025)
    # a route left before it dropped anything (a denial came first): no such figure
    del dead["drop_spans"]
    f, = figures(stats(dead, BUSY), fault(10.0, 20.0))
    assert f.failover_s == pytest.approx(0.045) and f.failover_after_loss_s is None


def test_the_route_gap_is_the_time_between_two_packets_on_a_route_while_in_use():
    # 101 packets over 10 s with one 4 s silence: 6 s of use, 99 gaps -> 60.6 ms
    used = {**route(first=0.0, last=10.0, silences=[(3.0, 7.0)]), "sent": 101}
    steady = {**route(first=0.0, last=1.0), "sent": 101}            # 10 ms
    few = {**route(first=0.0, last=1.0), "sent": 5}                 # too few to say
    per_host = stats(used, steady, few, {"plane": "x"}, "not a route")
    per_host["h1"] = {"peers": {"h3": {"routes": [steady, steady]}}}
    assert median_route_gap(per_host) == pytest.approx(0.01)
    assert median_route_gap(stats(used)) == pytest.approx(6.0 / 99)
    assert median_route_gap({}) is None and median_route_gap({"h0": "garbage"}) is None


def test_the_latest_failed_route_sets_the_figures():
    early = route(t1=1, silences=[(10.02, 20.2)], acks=[(10.03, 20.3)])
    late = route(plane=1, t1=1, silences=[(10.07, 20.1)], acks=[(10.08, 20.2)])
    per_host = stats(early, route(plane=0, t1=0), late, route(plane=1, t1=0))
    f, = figures(per_host, fault(10.0, 20.0, target="t0p0r0-t1p0s1"))
    assert f.failover_s == pytest.approx(0.02) and f.routes_failed == 1   # plane 0 only: `early`
    both = FaultWindow("f", "x", "mrc", 10.0, 20.0, paths=((0, 1), (1, 3)))      # named paths: EVs 1, 3 -> T1 1
    routes, _ = route_records(per_host)
    f = route_failover_recovery(routes, both, 0.01, lambda w, r: route_crosses(w, r, spines=2, hosts_per_rack=2))
    assert f.failover_s == pytest.approx(0.07) and f.routes_failed == 2
    assert f.recovery_s == pytest.approx(0.3) and f.recovery_rtts == pytest.approx(30)


def test_a_fault_crossing_no_route_has_no_failover():
    f, = figures(stats(route(), BUSY), fault(10.0, 20.0, target="t1p3s1"))
    assert f.failover_s is None and f.recovery_s is None
    assert f.routes_failed == f.routes_kept_sending == 0
    assert f.note == "no route that carried data crosses it"


def test_a_route_that_kept_sending_through_the_fault_is_counted_apart():
    f, = figures(stats(route(), BUSY), fault(10.0, 20.0, name="blackhole"))
    assert f.failover_s is None and f.routes_failed == 0 and f.routes_kept_sending == 1
    # one that paused inside the fault and was busy again at the repair kept sending too
    f, = figures(stats(route(silences=[(12.0, 13.0)]), BUSY), fault(10.0, 20.0))
    assert f.failover_s is None and f.routes_kept_sending == 1


def test_open_silence_at_the_end_of_the_run():
    # the route never sent again after 10.03 s; its silence is open (not in the list)
    dead = route(last=10.03, last_acked=10.05)
    f, = figures(stats(dead, BUSY), fault(10.0, 20.0))
    assert f.failover_s == pytest.approx(0.03) and f.routes_failed == 1
    assert f.recovery_s is None and f.routes_unrecovered == 1     # never acked again
    f, = figures(stats(dead, BUSY), fault(10.0, None))                  # never repaired
    assert f.failover_s == pytest.approx(0.03)
    assert f.recovery_s is None and f.routes_unrecovered == 0


def test_a_fault_outlasting_the_data_measures_up_to_the_end_of_the_data():
    busy_to_end = route()                   # still sending when the data ends: kept sending
    f, = figures(stats(busy_to_end, BUSY), fault(10.0, None))
    assert f.failover_s is None and f.routes_kept_sending == 1
    f, = figures(stats(route(last=RUN_END - 2 * ROUTE_SILENCE_S), BUSY), fault(10.0, None))
    assert f.failover_s == pytest.approx(RUN_END - 2 * ROUTE_SILENCE_S - 10.0)


def test_a_route_whose_last_packet_just_preceded_the_fault_failed_over_at_once():
    # its last packet 10 ms before the fault, then silent until after the repair: the element
    # failed before its next packet was due (the mapper denied it first), a failover of 0
    dead = route(silences=[(9.99, 20.04)], acks=[(10.0, 20.05)])
    f, = figures(stats(dead, BUSY), fault(10.0, 20.0))
    assert f.routes_failed == 1 and f.failover_s == 0.0 and f.recovery_s == pytest.approx(0.05)


def test_silences_that_are_not_the_faults():
    # idle since before the fault: not the fault's doing
    f, = figures(stats(route(silences=[(9.0, 25.0)]), BUSY), fault(10.0, 20.0))
    assert f.routes_failed == 0 and f.failover_s is None
    # the whole connection paused across the repair (between iterations): not a failover
    pause = [(19.98, 20.06)]
    f, = figures(stats(route(silences=pause), route(t1=0, silences=pause)), fault(10.0, 20.0))
    assert f.routes_failed == 0 and f.failover_s is None


def test_acks_that_never_paused_across_the_repair_count_as_the_silence_threshold():
    # sends stopped 30 ms before a repair that came 50 ms after the fault: acks of earlier
    # packets were still arriving at the repair instant
    dead = route(silences=[(10.03, 10.2)], acks=[(10.09, 10.23)])
    f, = figures(stats(dead, BUSY), fault(10.0, 10.06))
    assert f.failover_s == pytest.approx(0.03)
    assert f.recovery_s == pytest.approx(ROUTE_SILENCE_S)


def test_route_crosses_rules():
    def w(target):
        return FaultWindow("f", target, "mrc", 0.0, 1.0)
    routes, _ = route_records({
        "h0": {"peers": {"h2": {"routes": [route(plane=3, t1=1), route(plane=3, t1="ev5")]},
                         "h1": {"routes": [route(plane=3, t1=None)]}}}})
    far, by_ev, near = routes
    kw = {"spines": 2, "hosts_per_rack": 2}
    assert route_crosses(w("t1p3s1"), far, **kw) and not route_crosses(w("t1p3s0"), far, **kw)
    assert not route_crosses(w("t1p2s1"), far, **kw)
    assert route_crosses(w("t0p3r1"), far, **kw) and route_crosses(w("t0p3r0-t1p3s1"), far, **kw)
    assert not route_crosses(w("t0p3r0-t1p3s0"), far, **kw)
    assert route_crosses(w("h2-eth3"), far) and not route_crosses(w("h3-eth3"), far)
    assert route_crosses(w("t1p3s1"), by_ev, **kw) and not route_crosses(w("t1p3s0"), by_ev, **kw)   # 5 % 2
    assert route_crosses(w("t1p3s0"), by_ev)                      # fabric unknown: plane only
    assert not route_crosses(w("t1p3s1"), near, **kw)             # within a rack: no T1
    assert route_crosses(w("t0p3r0"), near, **kw) and not route_crosses(w("t0p3r1"), near, **kw)


def test_unreadable_route_records_are_counted_and_dropped():
    bad = [route(), "junk", {"plane": "0"}, {**route(), "t1": True}, {**route(), "last_sent": "soon"},
           {**route(), "send_silences": [[2.0, 1.0]]}, {**route(), "ack_silences": [[1.0]]}, {"t1": 0},
           {**route(), "dropped": -1}, {**route(), "dropped": True}]
    routes, dropped = route_records({"h0": {"peers": {"h2": {"routes": bad}, "h3": {"routes": "x"}}}, "h1": 7})
    assert len(routes) == 1 and dropped == 9


def test_a_routes_dropped_packets_are_read_and_absent_means_none():
    routes, _ = route_records({"h0": {"peers": {"h2": {"routes": [{**route(plane=1), "dropped": 4}, route(plane=2)]}}}})
    assert [(r.plane, r.dropped) for r in routes] == [(1, 4), (2, 0)]


def test_in_rtts():
    assert in_rtts(0.03, 0.015) == pytest.approx(2.0)
    assert in_rtts(None, 0.015) is None and in_rtts(0.03, None) is None and in_rtts(0.03, 0.0) is None


def test_baseline_failover_is_routings_withdrawal_and_recovery_its_restore():
    link = "t0p0r0-t1p0s1"
    evs = fault(10.0, 20.0, target=link) + fault(40.0, 41.0, target=link) + fault(50.0, 52.0, target="h0-eth0")
    evs = [replace(e, transport="baseline") for e in evs] + as_events(
        {"t": 15.2, "kind": "route_withdrawn", "target": link, "transport": "baseline"},
        {"t": 15.3, "kind": "route_withdrawn", "target": "t0p1r0-t1p1s1", "transport": "baseline"},  # other plane
        {"t": 23.0, "kind": "route_restored", "target": link, "transport": "baseline"})
    windows = fault_windows(evs, "baseline")
    f, short, port = (routing_failover_recovery(evs, w, "baseline", rtt=0.02) for w in windows)
    assert f.basis == "routing" and f.failover_s == pytest.approx(5.2) and f.routes_failed == 1
    assert f.recovery_s == pytest.approx(3.0) and f.failover_rtts == pytest.approx(260)
    assert short.failover_s is None and "withdrew nothing" in short.note
    assert port.failover_s is None and port.note == "routing withdraws T0-T1 links only"
    # a T1's fault: its links' withdrawals
    t1 = routing_failover_recovery(evs, FaultWindow("reboot", "t1p0s1", "baseline", 10.0, 20.0), "baseline")
    assert t1.failover_s == pytest.approx(5.2)


def test_summarize_reports_route_figures_retirements_and_the_baseline_basis():
    its = [Iteration(transport=t, iteration=0, start=0.0, end=RUN_END, duration=RUN_END, verified=True)
           for t in ("mrc", "baseline")]
    evs = fault(10.0, 20.0) + [replace(e, transport="baseline") for e in fault(10.0, 20.0)] + as_events(
        {"t": 10.02, "kind": "path_state", "transport": "mrc", "host": "h0", "peer": "h2", "plane": 0, "ev": 1,
         "old": "GOOD", "new": "ASSUMED_BAD", "reason": "test"})
    counters = {"mrc": stats(route(silences=[(10.03, 20.04)], acks=[(10.04, 20.05)]), BUSY),
                "baseline": {"h0": {"peers": {"h2": {"data_sent": 5, "rails": [{"plane": 0, "ev": 0, "srtt": 0.02}]}}}}}
    s = summarize(its, evs, counters, config=RunConfig(CFG))
    m, b = s["mrc"], s["baseline"]
    assert m.retirements == 1 and b.retirements == 0 and m.route_records_dropped == 0
    assert m.faults[0].failover_s == pytest.approx(0.03) and m.faults[0].failover_rtts == pytest.approx(2)
    assert b.faults[0].basis == "routing" and b.faults[0].failover_s is None
    assert retirements(evs, "baseline") == 0
    no_routes = summarize(its[:1], evs, {"mrc": {"h0": {"peers": {"h2": {"data_sent": 1}}}}}, config=RunConfig(CFG))["mrc"]
    assert no_routes.faults[0].basis is None
    assert no_routes.faults[0].note == "no route records in the agents' stats"


def test_the_run_tables_fault_rows():
    from lab.analysis import fault_text
    from lab.analysis.report import summary_rows
    from lab.analysis.summary_record import summary_from_dict

    f = {"fault": "link_flap", "target": "t1p0s1", "start": 10.0, "end": 20.0, "basis": "routes",
         "failover_s": 0.031, "failover_rtts": 2.07, "routes_failed": 3, "routes_kept_sending": 1,
         "recovery_s": 0.05, "recovery_rtts": 3.33, "routes_unrecovered": 0, "note": None}
    withdrawn = {**f, "basis": "routing", "failover_s": 5.2, "failover_rtts": 260.0, "routes_failed": 1,
                 "routes_kept_sending": 0, "routes_unrecovered": 1}
    never = {**f, "failover_s": None, "routes_failed": 0, "routes_kept_sending": 0, "recovery_s": None,
             "note": "no route that carried data crosses it"}
    garbage = {"fault": "x", "failover_s": "soon", "failover_rtts": [], "routes_unrecovered": 0}
    summary = summary_from_dict({"mrc": {"faults": [f, never, garbage, "junk"]}, "baseline": {"faults": [withdrawn]}})

    def sentences(s):   # cost, failover, recovery, note: faults.csv's last columns
        return [fault_text.csv_row(t, fault)[-4:] for t, fault in fault_text.each_fault(s)]

    rows = sentences(summary)
    assert rows[0] == ["-", "31 ms (2.1 RTT), 3 routes; 1 kept sending", "50 ms (3.3 RTT)", ""]
    assert rows[1][1:] == ["-, 0 routes", "-", "no route that carried data crosses it"]
    assert rows[2][1] == "? (?), 0 routes"
    no_rtt = summary_from_dict({"mrc": {"faults": [{**f, "failover_rtts": None}]}})
    assert sentences(no_rtt)[0][1].startswith("31 ms, 3 routes")
    assert rows[3][1:3] == ["5200 ms (260.0 RTT), 1 links withdrawn", "1 link(s) never restored"]
    cost = {**f, "packets_lost": [1, 0], "detection_s": 0.006, "iteration_cost_s": 0.0071, "iteration_cost_rtts": 2.1}
    assert sentences(summary_from_dict({"mrc": {"faults": [cost]}}))[0][0] == (
        "1, 0 packets lost per connection (out of use 6 ms after the first loss); iteration +7 ms (+2.1 RTT)")
    # the printed table: numbers only, the units in the headers, a note as its code
    cells = fault_text.rows(summary)
    assert cells[0] == ["mrc", "link_flap", "t1p0s1", "10.0-20.0", "-", "-", "31 (2.1)", "50 (3.3)", ""]
    assert cells[1][6:] == ["-", "-", "unused"]
    assert cells[2][3] == "0.0-open" and cells[2][6] == "? (?)"
    assert cells[3][0] == "baseline" and cells[3][6:8] == ["5200 (260)", "never"]
    assert fault_text.rows(summary_from_dict({"mrc": {"faults": [cost]}}))[0][4:6] == ["0-1", "+2.1"]
    assert dict(summary_rows(summary_from_dict({"mrc": {"retirements": 0}, "baseline": {}})))[
        "paths retired (into ASSUMED_BAD)"] == ["0", "-"]


def test_route_times_are_rebased_to_the_job_start_like_path_events():
    from lab.analysis.route_records import rebase_route_times

    raw = {"host": "h0", "time": 1005.0, "peers": {
        "h2": {"srtt": 0.02, "routes": [route(first=1000.5, last=1030.0, silences=[(1010.03, 1020.04)]), "junk"]},
        "h1": {"srtt": 0.02}, "h3": "junk"}}
    out = rebase_route_times(raw, 1000.0)
    r = out["peers"]["h2"]["routes"][0]
    assert (r["first_sent"], r["last_sent"], r["last_acked"]) == (0.5, 30.0, 30.01)
    assert r["send_silences"] == [[10.03, 20.04]] and r["ack_silences"] == [[10.04, 20.05]]
    assert out["peers"]["h2"]["routes"][1] == "junk" and out["peers"]["h3"] == "junk"
    assert out["time"] == 1005.0 and out["peers"]["h2"]["srtt"] == 0.02     # only route times move
    assert raw["peers"]["h2"]["routes"][0]["first_sent"] == 1000.5          # the input is left alone
    assert rebase_route_times({"peers": None}, 1.0) == {"peers": None}


def test_a_route_still_down_under_another_fault_at_the_repair_is_that_faults_recovery():
    # a T0-T1 link flap 10-20 s, and a reboot of its T1 10.5-25 s: at 20 s the route
    # is still down (the reboot); it comes back 50 ms after the reboot ends
    dead = route(silences=[(10.03, 25.04)], acks=[(10.04, 25.05)])
    flap = fault(10.0, 20.0, target="t0p0r0-t1p0s1")
    reboot = fault(10.5, 25.0, target="t1p0s1", name="switch_reboot")
    f_flap, f_reboot = figures(stats(dead, BUSY), sorted(flap + reboot, key=lambda e: e.t))
    assert f_flap.routes_still_down == 1 and f_flap.recovery_s is None
    assert f_flap.note == "its routes stayed down under another fault"
    assert f_flap.routes_unrecovered == 0
    # the reboot found the route already silent: neither failover nor recovery is its own
    assert f_reboot.failover_s is None and f_reboot.recovery_s is None
    # without the reboot the flap's recovery is the route's first ack after 20 s: 5.05 s
    f_alone, = figures(stats(dead, BUSY), flap)
    assert f_alone.recovery_s == pytest.approx(5.05) and f_alone.routes_still_down == 0


def test_packets_lost_per_struck_connection_and_the_detection_delay():
    # the fault at 10 s on T1 1 of plane 0: h0 -> h2 lost 2 packets there (one sent just before the
    # fault, in its queue then), and one long before; h1 -> h3's route through it lost 1
    dead = route(silences=[(10.02, 20.04)], acks=[(10.04, 20.05)])
    dead["drop_spans"] = [[3.0, 3.0, 1], [9.995, 10.01, 2]]
    other = route(silences=[(10.01, 20.04)], acks=[(10.03, 20.05)])
    other["drop_spans"] = [[10.005, 10.005, 1]]
    per_host = {**stats(dead, BUSY), **stats(other, route(plane=0, t1=0), host="h1", peer="h3")}
    # h0's route went SUSPECT 6 ms after its first loss (the fault instant: the earlier one
    # was sent before it); an event on another route or before the loss does not count
    events = fault(10.0, 20.0) + as_events(
        {"t": 9.0, "kind": "path_state", "host": "h0", "peer": "h2", "plane": 0, "ev": 1, "new": "SUSPECT"},
        {"t": 10.004, "kind": "path_state", "host": "h0", "peer": "h2", "plane": 0, "ev": 0, "new": "SUSPECT"},
        {"t": 10.006, "kind": "path_state", "host": "h0", "peer": "h2", "plane": 0, "ev": 3, "new": "SUSPECT"},
        {"t": 10.008, "kind": "path_state", "host": "h1", "peer": "h3", "plane": 0, "ev": 1, "new": "ASSUMED_BAD"})
    f, = figures(per_host, events)
    assert f.packets_lost == [2, 1]                         # (h0, h2), then (h1, h3)
    assert f.detection_s == pytest.approx((0.006 + 0.003) / 2)
    # a record written before spans held counts gives no figure rather than a wrong one
    dead["drop_spans"] = [[9.995, 10.01]]
    f, = figures(stats(dead, BUSY), fault(10.0, 20.0))
    assert f.packets_lost is None


def test_the_iteration_a_fault_strikes_costs_its_excess_over_the_fault_free_median():
    from lab.analysis.iterations import iteration_cost
    its = [Iteration(transport="mrc", iteration=k, start=s, end=s + d, duration=d, verified=True)
           for k, (s, d) in enumerate(((0.0, 0.3), (0.3, 0.34), (0.64, 0.3)))]
    assert iteration_cost(its, FaultWindow("link_flap", "x", "mrc", 0.5, 3.0), 0.3) == pytest.approx(0.04)
    assert iteration_cost(its, FaultWindow("link_flap", "x", "mrc", 0.3, 3.0), 0.3) == pytest.approx(0.04)
    assert iteration_cost(its, FaultWindow("link_flap", "x", "mrc", 5.0, 6.0), 0.3) is None      # after the last
    assert iteration_cost(its, FaultWindow("link_flap", "x", "mrc", 0.5, 3.0), None) is None


def test_the_mappers_repair_is_the_lifting_of_its_denial_of_the_faulted_element():
    from lab.analysis.failover import mapper_repair

    window = FaultWindow("link_flap", "t0p5r1-t1p5s0", "mrc", 8.0, 14.0)
    link = {"kind": "t0t1_link", "plane": 5, "rack": 1, "t1": 0}
    events = as_events({"t": 8.1, "kind": "mapper_deny", "transport": "mrc", "element": link},
                       {"t": 14.01, "kind": "mapper_undeny", "transport": "mrc", "element": {**link, "plane": 4}},
                       {"t": 14.022, "kind": "mapper_undeny", "transport": "mrc", "element": link},
                       {"t": 14.03, "kind": "mapper_undeny", "transport": "mrc", "element": link})
    assert mapper_repair(events, window, "mrc", DEFAULT_FABRIC) == pytest.approx(0.022)
    assert mapper_repair(events, window, "baseline", DEFAULT_FABRIC) is None
    assert mapper_repair(events[:2], window, "mrc", DEFAULT_FABRIC) is None                 # never lifted
    t1 = FaultWindow("switch_reboot", "t1p5s0", "mrc", 12.0, 20.0)
    t1_back = as_events({"t": 20.05, "kind": "mapper_undeny", "transport": "mrc", "element": {"kind": "t1", "plane": 5, "t1": 0}})
    assert mapper_repair(t1_back, t1, "mrc", DEFAULT_FABRIC) == pytest.approx(0.05)
    assert mapper_repair(as_events({"t": 20.05, "kind": "mapper_undeny", "transport": "mrc", "element": "junk"}),
                         t1, "mrc", DEFAULT_FABRIC) is None
