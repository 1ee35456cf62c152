"""The bench's failover, recovery and flap-cost rows, judged on synthetic summaries (no lab run)."""

from dataclasses import replace

from lab.analysis.summary_record import FaultFigures, TransportSummary, summary_from_dict
from lab.runners import bench_targets as target
from lab.runners.bench import (MAPPER_REPAIR_BOUND_S, Bench, BenchRun, flap_cost_figures, failover_budget,
                               recovery_budget)

RTT, GAP = 0.02, 0.013


def fault(failover, recovery, unrecovered=0, kept=0, kind="link_flap", busy=None, after_loss=None):
    """``busy``: recovery less the connections' idle time (judged); ``after_loss``: failover
    from the first dropped packet (judged); each the wall-clock figure when None."""
    return {"fault": kind, "failover_s": failover, "recovery_s": recovery, "routes_unrecovered": unrecovered,
            "failover_after_loss_s": failover if after_loss is None else after_loss,
            "recovery_busy_s": recovery if busy is None else busy, "routes_kept_sending": kept}


def figures(faults, rtt=RTT, gap=GAP, kinds=("link_flap",)):
    run = BenchRun("", summary_from_dict({"mrc": {"srtt_median_s": rtt, "route_gap_median_s": gap, "faults": faults}}), None)
    return list(Bench(quick=True, root=None)._failover_figures("link down", run, kinds))


def test_budgets_are_rtts_and_route_gaps_and_the_mappers_bound():
    assert failover_budget(RTT, GAP) == target.FAILOVER_RTTS * RTT + target.FAILOVER_ROUTE_GAPS * GAP
    assert recovery_budget(RTT, GAP) == MAPPER_REPAIR_BOUND_S + target.RECOVERY_RTTS * RTT + target.RECOVERY_ROUTE_GAPS * GAP
    assert failover_budget(None, GAP) is None and recovery_budget(RTT, None) is None


def test_medians_against_the_targets_in_ms_rtts_and_route_gaps():
    # RTT 20 ms, gap 13 ms: failover budget 2 x 20 + 13 = 53 ms; recovery 10 (mapper) + 40 + 13 = 63 ms
    failover, recovery = figures([fault(0.02, 0.05), fault(0.03, 0.06), fault(0.09, 0.5),
                                  fault(1.0, 1.0, kind="blackhole")])
    assert failover.ok and "30 ms = 1.5 RTTs = 2.3 route gaps" in failover.value and "3 of 3 faults" in failover.name
    assert failover.target == "median <= 2 RTTs + 1 route gap = 53 ms"
    assert recovery.ok and recovery.target == ("median <= mapper's repair bound 10 ms (probe retry 10 ms x 1 success; "
                                               "the agents wake on the denylist's replacement) + 2 RTTs + 1 route gap = 63 ms, all back")
    failover, recovery = figures([fault(0.054, 0.069)])
    assert failover.ok is False and recovery.ok is False
    assert figures([fault(0.053, 0.068)], gap=0.02)[0].ok                 # a longer gap, a larger budget


def test_recovery_is_judged_on_the_time_with_data_to_send_and_shows_the_wall_clock():
    # wall clock 150 ms, of which the connections had data to send for 60 ms: within 68 ms
    _failover, recovery = figures([fault(0.02, 0.15, busy=0.06)])
    assert recovery.ok and "60 ms = 3.0 RTTs, max 60 ms (wall clock 150 ms, 150 ms)" in recovery.value
    assert "time with data to send" in recovery.name
    assert figures([fault(0.02, 0.07, busy=0.069)])[1].ok is False


def test_failover_is_judged_from_the_first_lost_packet_and_shows_the_fault_instant_figure():
    # 90 ms after the fault, 30 ms after the route's first lost packet
    failover, _recovery = figures([fault(0.09, 0.05, after_loss=0.03)])
    assert failover.ok and "(from the fault instant 90 ms; RTT 20 ms; a route's packets 13 ms apart;" in failover.value
    assert "from the first packet lost" in failover.name
    assert figures([fault(0.03, 0.05, after_loss=0.06)])[0].ok is False
    # a fault whose routes dropped nothing (left before any loss) gives no such figure
    failover, _recovery = figures([fault(0.03, 0.05), {**fault(0.02, 0.05), "failover_after_loss_s": None}])
    assert "1 of 2 faults" in failover.name


def test_unmeasured_or_unrecovered_faults_do_not_pass():
    failover, recovery = figures([fault(0.01, None, unrecovered=2)])
    assert failover.ok and recovery.ok is False and "1 faults with routes never acked again" in recovery.value
    failover, recovery = figures([fault(None, None, kept=3)])
    assert failover.ok is False and recovery.ok is False and "3 routes kept sending" in failover.value
    failover, recovery = figures([], kinds=("link_flap",))           # no such fault in the run: reported
    assert failover.ok is None and recovery.ok is None


def flap(lost, cost=None, detection=None):
    return FaultFigures(fault="link_flap", packets_lost=lost, iteration_cost_s=cost, detection_s=detection)


def test_flap_cost_in_packets_per_struck_connection_and_in_rtts_of_the_struck_iteration():
    mrc = TransportSummary(srtt_median_s=RTT, route_gap_median_s=GAP, clean_median_s=0.3, verified=True)
    packets, iteration = flap_cost_figures(mrc, [flap([1, 0], 0.04, 0.02), flap([1, 3], 0.05, 0.03), flap([], None)])
    assert packets.ok and packets.value.startswith("median 1, max 3; 3 of 4 cost one or none")
    assert "25 ms = 1.9 route gaps" in packets.value and packets.target == "median <= 1, max <= 3"
    assert iteration.ok and iteration.value.startswith("2.2 RTTs = 45 ms, max 50 ms = 2.5 RTTs (2 flaps;")
    assert iteration.value.endswith("the fault-free iterations' own P90 is - above it)")
    assert iteration.target == "median <= 3 RTTs = 60 ms"
    _, iteration = flap_cost_figures(replace(mrc, fault_free_p90_s=0.32), [flap([1], 0.04)])
    assert iteration.value.endswith("own P90 is 1.0 RTTs above it)")
    packets, _ = flap_cost_figures(mrc, [flap([2, 1, 2])])
    assert packets.ok is False                                      # median 2
    packets, _ = flap_cost_figures(mrc, [flap([0, 1, 4])])
    assert packets.ok is False                                      # one flap cost 4
    _, iteration = flap_cost_figures(mrc, [flap([1], 0.061)])
    assert iteration.ok is False                                    # 3.05 RTTs
    packets, iteration = flap_cost_figures(mrc, [])
    assert packets.ok is False and iteration.ok is False            # nothing measured is not a pass
