"""The pure parts of `lab/run.py paper` (lab/paper/): shape judgements, trust from a
summary, row formatting, the scenarios it writes, and the command's bad arguments."""

import json
import statistics
from dataclasses import replace

import pytest
import yaml
from typer.testing import CliRunner

from lab.analysis.summary_record import TransportSummary
from lab.scenario.load import load_scenario
from lab.paper import figures as paper_figures
from lab.paper import ev_balance, flaps, links, loss, point_to_point, runner, settings, sizes, startup, t0t1_links
from lab.paper.row import PaperRow
from lab.paper.run_part import ExperimentRun, PairFigures, RunVerdict, efficiency_in
from lab.paper.runner import Setup
from lab.paper.settings import MRC, MULTI_RAIL, roce_label
from lab.paper.verdict import SAME, UNRESOLVABLE

GOOD = RunVerdict(verified=True, cpu_bound=False, unexplained_loss=0)


# ---- trust ----------------------------------------------------------------------------------------
def test_every_good_run_is_trusted():
    ok, why = runner.trust({MRC: GOOD, roce_label(1): GOOD})
    assert ok and why.startswith("yes")


@pytest.mark.parametrize("bad, words", [({"verified": False}, "not verified"), ({"cpu_bound": True}, "CPU-bound"),
                                        ({"unexplained_loss": 3}, "unexplained loss")])
def test_the_untrusted_run_is_named(bad, words):
    ok, why = runner.trust({MRC: GOOD, roce_label(16): replace(GOOD, **bad)})
    assert not ok and why == f"no: {words}: {roce_label(16)}"


def test_runs_are_grouped_by_problem():
    ok, why = runner.trust({MRC: replace(GOOD, cpu_bound=True),
                            MULTI_RAIL: replace(GOOD, cpu_bound=True, verified=False)})
    assert not ok and why == f"no: CPU-bound: {MRC}, {MULTI_RAIL}; not verified: {MULTI_RAIL}"


def test_no_run_is_not_trusted():
    assert runner.trust({}) == (False, "no run")


# ---- shapes ---------------------------------------------------------------------------------------
R1, R16 = roce_label(1), roce_label(16)


def test_a_run_under_loss_names_both_shares():
    assert loss.loss_text(0.76, 0.724) == "efficiency 0.724 (kept 0.76 of its loss-free rate)"
    assert loss.loss_text(None, None) == "no iteration finished (no loss-free figure)"


def test_a_run_under_loss_names_what_it_and_its_loss_free_run_resent():
    lossy = TransportSummary(retransmits=5195, trims=3266, timeouts=121)
    free = TransportSummary(retransmits=5356, trims=3523, timeouts=126)
    assert loss.loss_text(0.99, 0.382, lossy, free) == (
        "efficiency 0.382 (kept 0.99 of its loss-free rate); resent 5195 packets, 5356 loss-free "
        "(after 3523 trims, 126 timeouts)")


def test_the_full_pass_runs_16_qps_under_loss_and_the_incast_row_runs_roce():
    quick, full = runner.plan(quick=True), runner.plan(quick=False)
    lossy_16 = Setup("allreduce", single_plane=True, qps=16, nic_loss=settings.NIC_LOSS_LEVELS[-1]).name
    assert lossy_16 in full and lossy_16 not in quick
    assert any("incast with a victim" in step and "RoCE-like + DCQCN with 1, 8 QPs" in step for step in full)
    assert ("T0-T1 flap cost (8 flaps of 1 s, one per plane, under MRC streams between host 0 and every other "
            "host)") in full
    for step in ("T0-T1 links down (one per plane, of rack 0, one by one then together; 2 s phases, under an "
                 "MRC bandwidth test)",
                 "a T0, then a T1, of one plane down (2 s phases, under an MRC bandwidth test)",
                 "one T0-T1 link dropping 20% (4 s phases, under an MRC bandwidth test)",
                 "a T1 silent, then rebooted (2 s phases, under a bandwidth test: MRC, then the multi-rail baseline)",
                 "a job starting with T0-T1 links down (an all-reduce of 30 iterations without the mappers' "
                 "denylist, then one with it)", "two flows forced onto one EV (8 s of two streams on one plane)"):
        assert step in full
    roce, multi = settings.INCAST_ROCE_FABRIC, settings.INCAST_FABRIC
    assert roce.planes == 1 and roce.planes * roce.link_mbps == multi.planes * multi.link_mbps
    assert roce.evs_per_plane >= max(settings.INCAST_ROCE_QPS) and roce.hosts == multi.hosts


def test_kept_share():
    assert loss.kept(0.4, 0.8) == 0.5
    assert loss.kept(None, 0.8) == 0.0       # a lossy run with no iteration kept nothing
    assert loss.kept(0.4, None) is None


# ---- rows and scenarios ---------------------------------------------------------------------------
def row(**over) -> PaperRow:
    base = dict(figure="Fig. 16: ECMP collisions", paper=paper_figures.claim("collisions", "allreduce").result,
                lab={MRC: "efficiency 0.850", roce_label(1): "efficiency 0.450"}, verdict=SAME,
                shape_reason="same shape: a | b", trusted=False, trust_reason="no: MRC: CPU-bound")
    return PaperRow(**{**base, **over})


def test_markdown_row_names_every_run_and_keeps_the_table_shape():
    md = runner.markdown([row()], "header")
    lines = md.splitlines()
    assert lines[0] == "header" and lines[2].count("|") == len(runner.COLUMNS) + 1
    body = lines[4]
    assert body.count("|") == len(runner.COLUMNS) + 1, "a | inside a cell must not split it"
    assert f"{MRC}: efficiency 0.850; {roce_label(1)}: efficiency 0.450" in body
    assert "no: MRC: CPU-bound" in body


def test_json_has_every_row():
    data = runner.to_json([row(), row(figure="Fig. 18")], {"quick": True})
    assert data["quick"] and [r["figure"] for r in json.loads(json.dumps(data))["rows"]][1] == "Fig. 18"


def test_roce_label_names_plane_rate_and_queue_pairs():
    assert roce_label(1) == "RoCE-like, 1 plane x 80 Mb/s, 1 QP"
    assert roce_label(16) == "RoCE-like, 1 plane x 80 Mb/s, 16 QPs"
    assert roce_label(8, 20, "dcqcn") == "RoCE-like + DCQCN, 1 plane x 20 Mb/s, 8 QPs"


@pytest.mark.parametrize("setup", [Setup("allreduce"), Setup("alltoall", single_plane=True, qps=16),
                                   Setup("allreduce", single_plane=True, nic_loss=0.01)])
def test_every_scenario_written_loads(setup, tmp_path):
    path = tmp_path / f"{setup.name}.yaml"
    path.write_text(yaml.safe_dump(runner.scenario_data(setup, quick=True)))
    scenario = load_scenario(path)
    assert scenario.fabric.dataplane == "srv6" and scenario.job.placement == "interleaved"
    capacity = scenario.fabric.planes * scenario.fabric.link_mbps
    assert capacity == settings.ROCE_LINK_MBPS, "MRC and the RoCE-like baseline get the same aggregate rate"
    assert set(setup.labels()) == set(scenario.transports)
    assert [f.kind for f in scenario.faults] == (["nic_loss"] if setup.nic_loss else [])
    # MRC runs the paper's NSCC; the RoCE-like baseline gets its queue pairs and nothing else
    assert scenario.transport_params == ({"qps": setup.qps} if setup.single_plane else settings.MRC_PARAMS)


def test_setups_have_distinct_names_and_the_plan_lists_each_once():
    names = runner.plan(quick=True)
    assert len(names) == len(set(names)) >= 5
    assert Setup("allreduce").labels() == {"mrc": MRC, "baseline": MULTI_RAIL}


# ---- the command ----------------------------------------------------------------------------------
def test_plan_only_stops_before_the_lab(tmp_path, monkeypatch):
    from lab.cli import app

    monkeypatch.setenv("MRCLAB_PLAN_ONLY", "1")
    out = tmp_path / "plan.json"
    done = CliRunner().invoke(app, ["paper", "--quick", "--results", str(tmp_path / "r"), "--json", str(out)])
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text())["plan"] == runner.plan(quick=True)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args", [["paper", "--quick", "extra"], ["paper", "--iterations", "3"]])
def test_bad_arguments_are_one_clear_error(args):
    from lab.cli import app

    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2 and "Traceback" not in done.output


# ---- NIC links down (Figs. 9a/9b) -----------------------------------------------------------------
def log(*events):
    return [{"t": t, "kind": f"fault_{kind}"} for t, kind in events]


def test_links_down_per_bin_follows_the_log_not_the_plan():
    # two links planned together at 1.0 s, applied at 1.05 and 1.25 s, repaired at 2.1 and 2.3 s
    fault_log = log((1.05, "start"), (1.25, "start"), (2.1, "end"), (2.3, "end"))
    down = links.links_down_per_bin(fault_log, bins=15, bin_s=0.2)
    assert down == [0, 0, 0, 0, 0, None, None, 2, 2, 2, None, None, 0, 0, 0]


def test_a_slow_repair_is_a_transition_not_a_phase():
    # four links repaired one after another over 0.8 s: a 2-bin run of "2 down" on the way back
    fault_log = log(*[(1.05, "start")] * 4, (2.05, "end"), (2.3, "end"), (2.85, "end"), (3.0, "end"))
    run = {"bin_s": 0.2, "fault_log": fault_log, "flows": [{"mbps": [80.0] * 20}]}
    assert [d for d, _ in links.run_phases(run, phase_s=1.0)] == [0, 4, 0]
    assert [d for d, _ in links.run_phases(run, phase_s=None)] == [0, 4, 2, 0], "unknown phase length: every steady run"


def test_phases_and_capacity_shares():
    series = [80, 80, 999, 40, 42, 999, 80]
    down = [0, 0, None, 4, 4, None, 0]
    measured = links.phases(series, down)
    assert measured == [(0, 80.0), (4, 41.0), (0, 80.0)]
    assert links.capacity_shares(measured, planes=8) == [1.0, 41 / 40, 1.0]
    assert links.capacity_shares([(1, 70.0)], planes=8) == [], "no clean phase first: nothing to compare with"




def test_dips_are_the_bins_below_what_the_capacity_left_allows_around_each_change():
    # 2 planes, clean 40 Mb/s: a link goes down at 1.05 s (the rate stalls for 2 bins, then 20 Mb/s),
    # and comes back at 2.05 s (back to 40 at once)
    series = [40, 40, 40, 40, 40, 0, 0, 20, 20, 20, 40, 40, 40]
    fault_log = log((1.05, "start"), (2.05, "end"))
    assert links.most_down_per_bin(fault_log, len(series), 0.2) == [0] * 5 + [1] * 6 + [0] * 2
    assert links.dips(series, fault_log, 0.2, clean=40.0, planes=2) == [(1.05, pytest.approx(0.4)), (2.05, 0.0)]


def test_a_change_late_in_a_bin_dips_the_next():
    series = [40, 40, 40, 40, 40, 39, 0, 0, 0, 0, 0, 20]
    fault_log = log((1.19, "start"))
    assert links.dips(series, fault_log, 0.2, clean=40.0, planes=2) == [(1.19, pytest.approx(1.0))]


def test_changes_in_one_bin_are_one_dip_and_a_run_without_a_clean_phase_has_none():
    series = [80, 80, 80, 80, 80, 60, 40, 40]
    fault_log = log((1.02, "start"), (1.1, "start"))          # two links "together", 80 ms apart
    assert links.dips(series, fault_log, 0.2, clean=80.0, planes=4) == [(1.02, 0.0)]
    run = {"bin_s": 0.2, "fault_log": fault_log, "flows": [{"mbps": [0.0] * 8}]}
    assert links.run_dips(run, phase_s=1.0, planes=4) == []


def test_link_timelines_take_down_one_more_link_each_phase_then_restore_one_at_a_time():
    faults, count = links.link_timelines(1.0)[links.ONE_BY_ONE]
    assert count == 2 * settings.LINKS_DOWN + 1
    assert [(f.at, f.target, f.at + f.duration) for f in faults] == [
        (1.0, "h0-eth0", 8.0), (2.0, "h0-eth1", 7.0), (3.0, "h0-eth2", 6.0), (4.0, "h0-eth3", 5.0)]
    together, _ = links.link_timelines(1.0)[links.TOGETHER]
    assert {f.at for f in together} == {1.0} and len(together) == settings.LINKS_DOWN


def test_the_planned_one_by_one_phases_are_measured_down_and_back():
    faults, count = links.link_timelines(1.0)[links.ONE_BY_ONE]
    fault_log = [e for f in faults for e in log((f.at + 0.05, "start"), (f.at + f.duration + 0.05, "end"))]
    run = {"bin_s": 0.2, "fault_log": fault_log, "flows": [{"mbps": [80.0] * 50}]}
    assert [d for d, _ in links.run_phases(run, phase_s=1.0)] == [0, 1, 2, 3, 4, 3, 2, 1, 0]
    assert len(links.run_dips(run, phase_s=1.0, planes=8)) == 2 * settings.LINKS_DOWN


def test_unwritable_results_directory_is_refused_before_the_lab(tmp_path):
    from lab.cli import app

    blocker = tmp_path / "file"
    blocker.write_text("")
    done = CliRunner().invoke(app, ["paper", "--quick", "--results", str(blocker / "r")])
    assert done.exit_code == 2 and "cannot write results under" in done.output and "Traceback" not in done.output


# ---- T0-T1 flap cost (section 3) ------------------------------------------------------------------
def test_the_flaps_take_one_route_per_plane_in_turn():
    faults = flaps.flap_timeline(settings.LINKS_FABRIC, 4, 1.0)
    assert [(f.at, f.duration, f.target) for f in faults] == [
        (1.0, 1.0, "t0p0r0-t1p0s0"), (3.0, 1.0, "t0p1r0-t1p1s1"), (5.0, 1.0, "t0p2r0-t1p2s0"), (7.0, 1.0, "t0p3r0-t1p3s1")]
    assert [flaps.flapped_route(f) for f in faults] == [(0, 0), (1, 1), (2, 0), (3, 1)]
    with pytest.raises(ValueError, match="one per plane"):
        flaps.flap_timeline(settings.LINKS_FABRIC, settings.LINKS_FABRIC.planes + 1, 1.0)


def routes(**dropped):
    """Route records of one connection: dropped packets by "p<plane>t<t1>"."""
    return [{"plane": int(k[1]), "t1": int(k[3]), "dropped": n} for k, n in dropped.items()]


def test_flap_costs_are_read_from_each_connections_flapped_routes():
    stats = {"h0": {"peers": {"h2": {"routes": routes(p0t0=2, p0t1=0, p1t1=1, p1t0=1)}}},
             "h2": {"peers": {"h0": {"routes": routes(p0t0=3, p1t1=0)}}}}
    costs, elsewhere = flaps.flap_costs(stats, [("h0", "h2"), ("h2", "h0")], [(0, 0), (1, 1)])
    assert costs == [2, 3, 1, 0], "flap by flap, each connection"
    assert elsewhere == 1, "a drop on a route no flap touched is counted apart"
    assert flaps.flap_costs({}, [("h0", "h2"), ("h2", "h0")], [(0, 0)]) == ([0, 0], 0)


def test_host_0_carries_a_connection_to_every_other_host_and_those_across_the_t1s_are_counted():
    flows = flaps.flap_flows(settings.LINKS_FABRIC)
    assert [(f.src, f.dst) for f in flows] == [(0, 1), (1, 0), (0, 2), (2, 0), (0, 3), (3, 0)]
    # h1 shares host 0's rack and NIC but crosses no T0-T1 link: a flap cannot cost it a packet
    assert flaps.flapped_connections(settings.LINKS_FABRIC, flows) == [("h0", "h2"), ("h2", "h0"), ("h0", "h3"),
                                                                       ("h3", "h0")]
    text = flaps.flap_text([1, 0], 0, None, 3, [("h0", "h2"), ("h2", "h0")])
    assert text.startswith("host 0 with 3 connections (one to each other host, each a share of its NIC), 2 crossing "
                           "the flapped links (h0->h2, h2->h0): data packets lost per flap and connection 1, 0")


def test_flaps_detected_slower_than_a_routes_packets_name_the_connections_per_host():
    verdict, why = flaps.flap_shape([2, 2, 1, 2], [0.03, 0.02], 0.013, per_host=3)
    assert verdict == UNRESOLVABLE and "3 connections per host put their packets on each route that closely" in why


def test_flap_detection_reads_each_flaps_detection_against_the_route_gap():
    from types import SimpleNamespace

    t0 = 0.0      # route times on the run's clock, as the bandwidth runner keeps them
    route = {"plane": 0, "t1": 0, "state": "GOOD", "sent": 201, "acked": 200, "dropped": 1,
             "first_sent": t0 + 0.0, "last_sent": t0 + 4.0, "first_acked": t0 + 0.01, "last_acked": t0 + 4.01,
             "send_silences": [[t0 + 1.004, t0 + 2.1]], "ack_silences": [[t0 + 1.0, t0 + 2.11]],
             "drop_spans": [[t0 + 1.004, t0 + 1.004, 1]]}
    other = {**route, "t1": 1, "dropped": 0, "send_silences": [], "ack_silences": [], "drop_spans": []}
    stats = {"h0": {"peers": {"h2": {"routes": [route, other]}}}}
    run = SimpleNamespace(transport="mrc", stats=stats, fault_log=[
        {"t": 1.0, "kind": "fault_start", "fault": "link_flap", "target": "t0p0r0-t1p0s0", "transport": "mrc"},
        {"t": 2.0, "kind": "fault_end", "fault": "link_flap", "target": "t0p0r0-t1p0s0", "transport": "mrc"}],
        path_events=[{"t": 1.01, "time": t0 + 1.01, "host": "h0", "peer": "h2", "plane": 0, "ev": 0,
                      "old": "GOOD", "new": "SUSPECT", "reason": "overdue"}])
    why = flaps.flap_detection(run, settings.LINKS_FABRIC)
    assert why["detection_s"] == [pytest.approx(0.006)]
    assert why["route_gap_s"] == pytest.approx(((4.0 - 1.096) / 199 + 4.0 / 200) / 2)   # the median of two routes
    assert flaps.flap_detection(run, settings.LINKS_FABRIC, [("h0", "h9")])["route_gap_s"] is None   # none named
    assert flaps.flap_detection(run, settings.LINKS_FABRIC, [("h0", "h2")]) == why
    text = flaps.flap_text([1, 0], 0, why)
    assert text.endswith("first loss to its route out of use, flap by flap: 6 ms (a route's packets 17 ms apart)")


def test_an_experiment_runs_raw_record_is_its_summary_with_the_results_path():
    run = ExperimentRun(TransportSummary(transport="mrc", efficiency=0.8, verified=True, unexplained_loss=2), "r/x")
    raw = json.loads(json.dumps(run.to_dict()))
    assert raw == {**TransportSummary(transport="mrc", efficiency=0.8, verified=True, unexplained_loss=2).to_dict(),
                   "results": "r/x"}
    assert efficiency_in(raw) == 0.8 and run.verdict() == RunVerdict(True, False, 2)
    assert run.verdict().problems() == ["unexplained loss"]


def test_a_links_run_names_each_phase_and_each_dip():
    text = links.links_text([(0, 80.0), (1, 70.0)], [1.0, 1.0], [(1.05, 0.0), (2.05, 0.2)])
    assert text == "0 down 80 Mb/s (1.00), 1 down 70 Mb/s (1.00); dips at the changes 0.0, 0.2 s"


# ---- section 5.2.1, point-to-point --------------------------------------------------------------------
def pair(latency_s, bandwidth_share, fabric_us=(20, 21, 22, 23, 24), message_ms=None):
    """A pair's figures with these fabric one-way samples (us) and message samples (ms; around
    latency_s by default)."""
    messages = message_ms or ((None,) if latency_s is None else
                              tuple(1000 * latency_s + d for d in (-0.2, -0.1, 0.0, 0.1, 0.2)))
    return PairFigures(latency_s, bandwidth_share, verified=True, cpu_bound=False, unexplained_loss=0,
                       fabric_latency_s=statistics.median(fabric_us) / 1e6 if fabric_us else None,
                       latency_samples_s=tuple(m / 1000 for m in messages if m is not None),
                       fabric_samples_s=tuple(t / 1e6 for t in fabric_us))


def test_one_way_latency_is_half_the_median_two_rank_iteration():
    assert point_to_point.one_way_latency([0.010, 0.008, 0.030]) == 0.005
    assert point_to_point.one_way_latency([]) is None


def test_ping_times_are_read_from_each_reply():
    out = ("PING fd00::2 56 data bytes\n64 bytes from fd00::2: icmp_seq=1 ttl=62 time=0.061 ms\n"
           "64 bytes from fd00::2: icmp_seq=2 ttl=62 time=0.048 ms\n\n--- fd00::2 ping statistics ---\n"
           "rtt min/avg/max/mdev = 0.048/0.054/0.061/0.006 ms\n")
    assert point_to_point.ping_times(out) == [0.061e-3, 0.048e-3]


def test_a_difference_of_medians_comes_with_its_interval():
    diff, low, high = point_to_point.median_difference((30, 31, 32, 33, 34), (20, 21, 22, 23, 24))
    assert diff == 10 and 6 <= low <= 10 <= high <= 14
    assert point_to_point.median_difference((), (1, 2)) is None
    # the same samples read the same (a seeded bootstrap)
    assert point_to_point.median_difference((3, 1, 2), (1, 1, 2)) == point_to_point.median_difference((3, 1, 2),
                                                                                                     (1, 1, 2))


def test_a_pair_reads_as_the_paper_words_it():
    assert point_to_point.pair_text(pair(0.00412, 0.934)) == ("one-way latency 4.12 ms (the fabric's alone "
                                                              "22 us), bandwidth 0.93 of the NIC's capacity")
    assert point_to_point.pair_text(pair(None, None, fabric_us=())) == "no message completed, no bandwidth figure"


# ---- Fig. 4, a job that starts with links down ------------------------------------------------------------
def test_the_failed_links_routes_are_their_plane_and_t1():
    assert startup.failed_routes() == {(0, 0), (1, 1)}


def test_startup_losses_count_each_connection_on_the_failed_routes_and_the_rest_apart():
    route = {"plane": 0, "t1": 0, "dropped": 3, "sent": 10, "acked": 7}
    stats = {"h0": {"peers": {"h2": {"routes": [route, dict(route, plane=0, t1=1, dropped=1)]}}},
             "h2": {"peers": {"h0": {"routes": [dict(route, plane=1, t1=1, dropped=2)]}}}}
    lost, elsewhere = startup.losses(stats, startup.failed_routes())
    assert lost == {"h0->h2": 3, "h2->h0": 2} and elsewhere == 1


# ---- Figs. 9c/9d, T0-T1 links down ----------------------------------------------------------------------
def test_t0t1_links_go_down_one_per_plane_one_by_one_then_come_back_together():
    spec = settings.LINKS_FABRIC
    plans = t0t1_links.timelines(1.0, spec)
    one, n_one = plans[t0t1_links.ONE_BY_ONE]
    assert n_one == spec.planes + 2 and [f.target for f in one] == [f"t0p{p}r0-t1p{p}s0" for p in range(spec.planes)]
    assert {f.at + f.duration for f in one} == {spec.planes + 1.0}          # all back together
    together, n_together = plans[t0t1_links.TOGETHER]
    assert n_together == 3 and {(f.at, f.duration) for f in together} == {(1.0, 2.0)}


def test_t0t1_links_shares_are_of_the_clean_phase():
    assert t0t1_links.shares([(0, 40.0), (1, 39.0), (2, 20.0)]) == [1.0, 0.975, 0.5]
    assert t0t1_links.shares([(1, 40.0)]) == []        # no clean phase first: nothing to divide by


# ---- Fig. 16's x axis, message sizes ------------------------------------------------------------------
R1 = roce_label(1)


def test_a_size_setup_is_named_by_its_size_unless_it_is_the_collisions_rows():
    assert Setup("allreduce", buffer_mb=settings.BUFFER_MB) == Setup("allreduce")
    assert Setup("allreduce", single_plane=True, buffer_mb=8).name == "paper-allreduce-roce-1qp-8mb"
    assert runner.scenario_data(Setup("allreduce", buffer_mb=0.03125), True)["job"]["buffer_mb"] == 0.03125


def test_the_smallest_size_has_the_papers_packets_per_ring_step():
    # the paper's smallest point: 4 MB over 64 ranks in 4 KB packets, 16 packets per rank per step; the lab's:
    # 16 of its jobs' 8 KB packets for each of its 4 ranks
    smallest = min(settings.MESSAGE_SIZES_MB)
    assert smallest == settings.SMALLEST_SIZE_MB == 0.5
    assert sizes.packets_per_step(smallest) >= sizes.PAPER_SMALLEST_PACKETS == 16
    assert sizes.packets_per_step(smallest / 2) < sizes.PAPER_SMALLEST_PACKETS


@pytest.mark.parametrize("quick", [True, False])
def test_a_small_size_job_moves_the_bytes_of_the_collisions_rows_job(quick):
    """A small job of the pass's iterations ends before the fidelity monitor's first steady sample."""
    job = lambda mb: runner.scenario_data(Setup("allreduce", buffer_mb=mb), quick)["job"]
    iterations = settings.PASSES[quick].iterations
    assert job(settings.BUFFER_MB)["iterations"] == iterations
    for mb in (0.03125, settings.SMALLEST_SIZE_MB):
        small = job(mb)
        assert small["iterations"] * small["buffer_mb"] == iterations * settings.BUFFER_MB
    assert job(8)["iterations"] == iterations     # never fewer than the pass's


# ---- Fig. 14, two flows on one EV --------------------------------------------------------------------
def test_a_flow_moved_when_its_backup_ev_became_active():
    assert ev_balance.moved_at({0: [(0.0, True), (0.3, False)], 1: [(0.0, False), (0.3, True)]}) == 0.3
    assert ev_balance.moved_at({0: [(0.0, True), (0.3, False), (0.5, True)]}) is None   # EV-B never active
    assert ev_balance.moved_at({1: [(0.0, False)]}) is None


def test_a_rate_after_the_move_is_a_share_of_the_nic_over_the_bins_from_then_on():
    assert ev_balance.rate_after([5.0, 5.0, 9.0, 10.0], 0.2, 0.4, 10.0) == 0.95
    assert ev_balance.rate_after([5.0], 0.2, None, 10.0) is None




def test_the_nic_links_rows_pair_is_t0_local_as_the_papers():
    spec = settings.LINKS_FABRIC
    a, b = links.links_pair(spec)
    assert a == 0 and b != 0 and spec.rack_of(a) == spec.rack_of(b)
    with pytest.raises(ValueError, match="two hosts in a rack"):
        links.links_pair(replace(spec, hosts_per_rack=1))
