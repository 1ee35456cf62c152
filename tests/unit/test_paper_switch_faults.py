"""The pure parts of the paper's switch-down (Figs. 10/11) and path-loss (Figs. 12/13) rows
(lab/paper/switch_faults.py): the faults, the capacity each leaves, the phases and dips of a
bandwidth run, what a connection lost after detecting the fault, how it used the lossy route,
and the judgements, each also on a run that does not have the paper's shape."""

from dataclasses import replace

import pytest

from lab.analysis.route_records import Route
from lab.paper import switch_faults as sf
from lab.paper import thresholds
from lab.paper.settings import LINKS_FABRIC
from lab.paper.verdict import DIFFERENT, SAME
from topologies.fabric import DEFAULT_FABRIC

SPEC = LINKS_FABRIC          # 8 planes, 2 T1s each, 2 hosts per rack
WINDOW = (1.0, 2.0)
LEFT = {sf.T0_DOWN: 7 / 8, sf.T1_DOWN: 1.0}


# ---- the faults and the capacity they leave -------------------------------------------------------
def test_the_switches_are_host_0s_t0_and_a_t1_of_the_plane():
    assert sf.switch_targets(SPEC, 3) == {sf.T0_DOWN: "t0p3r0", sf.T1_DOWN: "t1p3s0"}
    (fault,) = sf.switch_timeline("t1p3s0", 1.0)
    assert (fault.kind, fault.at, fault.duration) == ("switch_reboot", 1.0, 1.0)


def test_the_lossy_link_drops_its_share_for_one_phase():
    (fault,) = sf.path_loss_timeline(SPEC, 2, 0.2, 2.0)
    assert (fault.kind, fault.target, fault.at, fault.duration, fault.params) == (
        "loss", "t0p2r0-t1p2s0", 2.0, 2.0, {"p": 0.2})


def test_a_t0_down_leaves_7_of_8_and_a_t1_down_all_of_the_pairs_capacity():
    assert sf.capacity_left(SPEC, sf.T0_DOWN) == 7 / 8
    assert sf.capacity_left(SPEC, sf.T1_DOWN) == 1.0                 # the other T1 carries a whole NIC link
    assert sf.fabric_capacity_left(SPEC, sf.T1_DOWN) == 15 / 16      # ...but the fabric lost one T1 of 16
    one_t1 = replace(DEFAULT_FABRIC, spines=1, evs_per_plane=8)
    assert sf.capacity_left(one_t1, sf.T1_DOWN) == 7 / 8             # a plane's only T1: the plane is gone


def test_the_routes_a_fault_crosses():
    assert sf.routes_through(SPEC, sf.T0_DOWN, 1) == {(1, 0), (1, 1)}
    assert sf.routes_through(SPEC, sf.T1_DOWN, 1) == {(1, 0)}


def test_the_fault_window_is_the_ones_fault_from_when_it_took_effect():
    log = [{"t": 1.0, "kind": "fault_start", "fault": "loss", "target": "t0p0r0-t1p0s0", "effective_s": 0.01},
           {"t": 2.0, "kind": "fault_end", "fault": "loss", "target": "t0p0r0-t1p0s0"}]
    assert sf.fault_window(log) == (1.01, 2.0)
    assert sf.fault_window(log[:1]) is None                         # never repaired
    assert sf.fault_window([]) is None


# ---- throughput -----------------------------------------------------------------------------------
def test_the_fault_phase_is_measured_against_the_capacity_left():
    assert sf.fault_share([(0, 160.0), (1, 140.0), (0, 160.0)], 7 / 8) == pytest.approx(1.0)
    assert sf.fault_share([(0, 160.0), (1, 140.0), (0, 160.0)], 1.0) == pytest.approx(0.875)
    assert sf.fault_share([(0, 160.0), (0, 160.0)], 7 / 8) is None   # the fault phase was not measured
    assert sf.fault_share([(0, 0.0), (1, 140.0), (0, 160.0)], 7 / 8) is None


def test_a_dip_is_the_run_of_low_bins_at_a_change():
    # bins of 0.2 s; the fault 1.0-2.0 s leaves 7/8: 140 is what is left (not low), 100 is low;
    # after the fault 120 is low against the whole clean rate
    series = [160, 160, 160, 160, 160, 100, 100, 140, 140, 140, 150, 120, 160]
    assert sf.dips(series, 0.2, 160.0, 7 / 8, (1.0, 2.0)) == [(1.0, pytest.approx(0.4)), (2.0, pytest.approx(0.2))]
    # 120 throughout the fault: what 7/8 allows, but a dip of the whole phase when it should lose nothing
    sagging = [160] * 5 + [120] * 5 + [160] * 3
    assert sf.dips(sagging, 0.2, 160.0, 7 / 8, (1.0, 2.0)) == [(1.0, 0.0), (2.0, 0.0)]
    assert sf.dips(sagging, 0.2, 160.0, 1.0, (1.0, 2.0)) == [(1.0, pytest.approx(1.0)), (2.0, 0.0)]


# ---- the routes through the fault -----------------------------------------------------------------
def route(host, peer, plane, t1, spans=()) -> Route:
    return Route(host, peer, plane, t1, 0.0, 3.0, 0.0, 3.0, drop_spans=tuple(spans))


def move(t, ev, old, new, host="h0", peer="h2", plane=0) -> dict:
    return {"t": t, "host": host, "peer": peer, "plane": plane, "ev": ev, "old": old, "new": new}


def test_nothing_lost_after_the_connection_stopped_using_the_route():
    routes = [route("h0", "h2", 0, 0, [(0.99, 1.02, 2)]), route("h0", "h2", 0, 1),
              route("h2", "h0", 0, 0, [(1.01, 1.01, 1)]), route("h0", "h2", 1, 0, [(1.5, 1.5, 1)])]
    events = [move(0.5, 0, "GOOD", "SUSPECT"),                       # before the fault: not its detection
              move(1.03, 0, "GOOD", "SUSPECT"), move(1.30, 0, "SUSPECT", "ASSUMED_BAD"),
              move(1.02, 2, "GOOD", "SUSPECT", host="h2", peer="h0")]
    lost = sf.lost_after_detection(routes, events, {(0, 0)}, 2, WINDOW)
    assert lost == {"h0->h2": {"lost": 2, "lost_after": 0, "detected_s": pytest.approx(0.03)},
                    "h2->h0": {"lost": 1, "lost_after": 0, "detected_s": pytest.approx(0.02)}}


def test_packets_lost_on_the_route_after_detection_are_counted():
    # the route came back and lost more: a span after detection counts whole, one across it all but its first
    routes = [route("h0", "h2", 0, 0, [(1.01, 1.01, 1), (1.02, 1.10, 3), (1.5, 1.52, 2), (2.5, 2.5, 4)])]
    lost = sf.lost_after_detection(routes, [move(1.05, 0, "GOOD", "SUSPECT")], {(0, 0)}, 2, WINDOW)
    assert lost["h0->h2"] == {"lost": 6, "lost_after": 4, "detected_s": pytest.approx(0.05)}


def test_a_route_never_left_counts_no_detection_and_nothing_after():
    lost = sf.lost_after_detection([route("h0", "h2", 0, 0, [(1.5, 1.5, 1)])], [], {(0, 0)}, 2, WINDOW)
    assert lost["h0->h2"] == {"lost": 1, "lost_after": 0, "detected_s": None}


def retire(t, old_backup="BACKUP") -> list[dict]:
    """The lossy route (plane 0, T1 0: EVs 0, 2 active, 4 backup) retired; EV 5 (T1 1) activated."""
    return [move(t, 0, "SUSPECT", "ASSUMED_BAD"), move(t, 2, "SUSPECT", "ASSUMED_BAD"),
            move(t, 4, "BACKUP", "ASSUMED_BAD"), move(t, 5, old_backup, "GOOD")]


def back(t) -> list[dict]:
    return [move(t, 0, "ASSUMED_BAD", "GOOD"), move(t, 2, "ASSUMED_BAD", "GOOD"),
            move(t, 4, "ASSUMED_BAD", "BACKUP"), move(t, 5, "GOOD", "BACKUP")]


def test_a_route_retired_for_the_whole_window_with_a_backup_taking_over():
    use = sf.route_use(retire(1.1) + back(2.1), "h0", "h2", (0, 0), 2, WINDOW)
    assert use == {"retired_s": pytest.approx(0.1), "backup_activated": True, "returns": 0,
                   "out_share": pytest.approx(0.9), "evs_retired": [0, 2, 4]}


def test_a_lossy_route_back_in_use_between_retirements():
    events = retire(1.1) + back(1.3) + retire(1.5) + back(1.6) + retire(1.8)
    use = sf.route_use(events, "h0", "h2", (0, 0), 2, WINDOW)
    assert use["returns"] == 2 and use["out_share"] == pytest.approx(0.2 + 0.1 + 0.2)


def test_a_route_never_retired_or_without_a_backup():
    assert sf.route_use([move(1.1, 0, "GOOD", "SUSPECT")], "h0", "h2", (0, 0), 2, WINDOW) == {
        "retired_s": None, "backup_activated": False, "returns": 0, "out_share": 0.0, "evs_retired": []}
    assert not sf.route_use(retire(1.1, old_backup="SKIP"), "h0", "h2", (0, 0), 2, WINDOW)["backup_activated"]


def test_a_route_retired_before_the_window_counts_from_its_start():
    use = sf.route_use(retire(0.5) + back(1.5), "h0", "h2", (0, 0), 2, WINDOW)
    assert use["retired_s"] is None and use["returns"] == 1 and use["out_share"] == pytest.approx(0.5)


def test_each_evs_activity_starts_from_its_state_before_its_first_move():
    activity = sf.ev_activity(retire(1.1) + back(2.1) + [move(1.1, 0, "GOOD", "DENIED", plane=1)], "h0", "h2", 0)
    assert activity[0] == [(0.0, False), (1.1, False), (2.1, True)]    # SUSPECT before it retired: inactive
    assert activity[5] == [(0.0, False), (1.1, True), (2.1, False)]
    assert set(activity) == {0, 2, 4, 5}


def test_a_row_keeps_the_faulted_planes_path_events_only():
    run = {"bin_s": 0.2, "path_events": [move(1.0, 0, "GOOD", "SUSPECT"), move(1.0, 0, "GOOD", "SUSPECT", plane=3)]}
    assert sf.on_plane(run, 0)["path_events"] == run["path_events"][:1]


# ---- the judgements -------------------------------------------------------------------------------
def test_a_t0_down_costing_one_plane_and_a_t1_down_costing_nothing_is_figs_10_11():
    verdict, why = sf.switches_shape(0.99, 1.0, [0, 0], LEFT)
    assert verdict == SAME
    assert why.startswith("same shape: T0 down kept 0.99 of what 0.875 of the capacity allows (a drop of 0.13 of "
                          "the clean rate against 0.125 lost; approximately: 0.9-1.1: yes)")
    assert "data packets lost after detection under the T1 down 0, 0 (steady state: none: yes)" in why


@pytest.mark.parametrize("t0, t1, lost, words", [
    (0.8, 1.0, [0, 0], "a drop of 0.30 of the clean rate against 0.125 lost; approximately: 0.9-1.1: no"),
    (0.7, 1.0, [0, 0], "approximately: 0.9-1.1: no"),           # lost more than the plane
    (8 / 7, 1.0, [0, 0], "approximately: 0.9-1.1: no"),         # lost nothing: the T0 never went down
    (1.0, 0.9, [0, 0], "no degradation: >= 0.95: no"),          # a T1 down cost throughput
    (1.0, 1.0, [0, 2], "steady state: none: no"),               # packets lost after the connection knew
])
def test_what_is_not_figs_10_11(t0, t1, lost, words):
    # the first: a 30 % drop where the paper says "approximately 100 Gb/s" of 800
    verdict, why = sf.switches_shape(t0, t1, lost, LEFT)
    assert verdict == DIFFERENT and why.startswith("different shape:") and words in why


def test_a_run_without_its_phases_is_not_figs_10_11():
    assert sf.switches_shape(None, 1.0, [], LEFT) == (
        DIFFERENT, "different shape: a run did not show a clean, a fault and a clean phase")


def use(retired_s=0.1, backup=True, returns=0, out=0.9) -> dict:
    return {"retired_s": retired_s, "backup_activated": backup, "returns": returns, "out_share": out}


def test_a_lossy_route_retired_with_a_backup_and_the_rate_held_is_figs_12_13():
    verdict, why = sf.path_loss_shape(0.98, {"h0->h2": use(), "h2->h0": dict(use(0.2, out=0.8), evs_retired=[0, 2])})
    assert verdict == SAME
    assert why.startswith("same shape: the lossy route retired with a backup EV activated in every connection: yes; "
                          "it stayed out for the rest of the drop: yes")
    assert "h0->h2 retired 100 ms in, a backup EV activated" in why     # a record without its EVs
    assert ("h2->h0 retired 200 ms in (EVs 0, 2), a backup EV activated, back in use 0 times, out 80% of the "
            "window") in why
    assert why.endswith("the rate held 0.98 of the clean rate (sustained: >= 0.95: yes)")


def test_a_route_that_comes_back_twice_during_the_loss_is_not_figs_12_13():
    # Fig. 13: EV-A goes inactive at the drop and stays so; the lab's route back in use twice, losing again
    verdict, why = sf.path_loss_shape(0.98, {"h0->h2": use(returns=2, out=0.74), "h2->h0": use()})
    assert verdict == DIFFERENT
    assert ("it stayed out for the rest of the drop: no (back in use 2 times across the connections while the "
            "link still dropped packets)") in why


@pytest.mark.parametrize("held, uses, words", [
    (0.98, {"h0->h2": use(), "h2->h0": use(retired_s=None, backup=False)}, "every connection: no"),
    (0.98, {"h0->h2": use(backup=False)}, "every connection: no"),
    (thresholds.PAPER_NO_DEGRADATION - 0.01, {"h0->h2": use()}, "sustained: >= 0.95: no"),
    (0.98, {}, "no connection used the lossy link"),
    (None, {"h0->h2": use()}, "did not show a clean, a lossy and a clean phase"),
])
def test_what_is_not_figs_12_13(held, uses, words):
    verdict, why = sf.path_loss_shape(held, uses)
    assert verdict == DIFFERENT and why.startswith("different shape:") and words in why


def test_the_lab_texts_name_phases_dips_and_losses():
    figures = {"phases": [(0, 156.0), (1, 136.6), (0, 156.7)], "share": 1.003, "capacity_left": 7 / 8,
               "fabric_capacity_left": 7 / 8, "dips": [(1.0, 0.0), (2.0, 0.2)],
               "connections": {"h0->h2": {"lost": 1, "lost_after": 0, "detected_s": 0.0056}}}
    assert sf.switch_text(figures) == (
        "clean 156 Mb/s, fault 137 Mb/s, clean 157 Mb/s: the fault phase kept 1.00 of what 0.875 of the test's "
        "capacity allows (the fabric's cross-rack capacity left: 0.875); dips at the changes 0.0, 0.2 s; "
        "h0->h2 lost 1 data packets there, 0 after detecting it (6 ms in)")
    assert sf.losses_text({}) == "no connection used the routes through it"
