"""The bench's failover and recovery rows, judged on synthetic summaries (no lab run)."""

import pytest

from faults.scenario_record import Scenario
from lab.runners import bench_targets as target
from lab.runners.bench import Bench


def fault(failover, recovery, unrecovered=0, kept=0, kind="link_flap", busy=None, failover_busy=None,
          after_loss=None):
    """``busy``: recovery less the connections' idle time (judged); ``failover_busy``:
    failover less it; ``after_loss``: failover from the first dropped packet (judged);
    each the wall-clock figure when None."""
    return {"fault": kind, "failover_s": failover, "recovery_s": recovery, "routes_unrecovered": unrecovered,
            "failover_busy_s": failover if failover_busy is None else failover_busy,
            "failover_after_loss_s": failover if after_loss is None else after_loss,
            "recovery_busy_s": recovery if busy is None else busy, "routes_kept_sending": kept}


def figures(faults, rtt=0.02, params=None, kinds=("link_flap",)):
    run = {"summary": {"mrc": {"srtt_median_s": rtt, "route_gap_median_s": 0.013, "faults": faults}},
           "scenario": Scenario(name="x", transport_params=params or {})}
    return list(Bench(quick=True, root=None)._failover_figures("link down", run, kinds))


def test_medians_in_rtts_against_the_targets():
    # RTT 20 ms: failover median 30 ms = 1.5 RTTs (<= 2); recovery budget 3 x 20 + 20 (probe period) = 80 ms
    failover, recovery = figures([fault(0.02, 0.07), fault(0.03, 0.08), fault(0.09, 0.5),
                                  fault(1.0, 1.0, kind="blackhole")])
    assert failover.ok and "30 ms = 1.5 RTTs" in failover.value and "3 of 3 faults" in failover.name
    assert recovery.ok and recovery.target.endswith("probe period 20 ms = 80 ms, all back")
    failover, recovery = figures([fault(0.05, 0.09)])
    assert failover.ok is False and recovery.ok is False
    assert figures([fault(0.05, 0.09)], params={"probe_interval": 0.04})[1].ok   # budget 100 ms
    # the probe period follows the RTT: max(probe_interval, probe_interval_rtts x RTT)
    assert figures([fault(0.05, 0.09)], params={"probe_interval_rtts": 2.0})[1].target.endswith("40 ms = 100 ms, all back")
    assert figures([fault(0.01, 0.09)], rtt=0.03)[1].target.endswith("30 ms = 120 ms, all back")


def test_recovery_is_judged_on_the_time_with_data_to_send_and_shows_the_wall_clock():
    # wall clock 150 ms, of which the connections had data to send for 60 ms: within 80 ms
    _failover, recovery = figures([fault(0.02, 0.15, busy=0.06)])
    assert recovery.ok and "60 ms, 60 ms (wall clock 150 ms, 150 ms)" in recovery.value
    assert "time with data to send" in recovery.name
    assert figures([fault(0.02, 0.07, busy=0.09)])[1].ok is False


def test_failover_is_judged_from_the_first_lost_packet_and_shows_the_fault_instant_figures():
    # 90 ms after the fault, 60 ms of it with data to send, 30 ms after the route's first lost packet
    failover, _recovery = figures([fault(0.09, 0.07, failover_busy=0.06, after_loss=0.03)])
    assert failover.ok and "30 ms = 1.5 RTTs, 30 ms (from the fault instant 90 ms = 4.5 RTTs, with data to " \
        "send 60 ms; RTT 20 ms; a route's packets 13 ms apart;" in failover.value
    assert "from the first packet lost" in failover.name
    assert figures([fault(0.03, 0.07, after_loss=0.05)])[0].ok is False
    # a fault whose routes dropped nothing (left before any loss) gives no such figure
    failover, _recovery = figures([fault(0.03, 0.07), {**fault(0.02, 0.07), "failover_after_loss_s": None}])
    assert "1 of 2 faults" in failover.name


def test_unmeasured_or_unrecovered_faults_do_not_pass():
    failover, recovery = figures([fault(0.01, None, unrecovered=2)])
    assert failover.ok and recovery.ok is False and "1 faults with routes never acked again" in recovery.value
    failover, recovery = figures([fault(None, None, kept=3)])
    assert failover.ok is False and recovery.ok is False and "3 routes kept sending" in failover.value
    failover, recovery = figures([], kinds=("link_flap",))           # no such fault in the run: reported
    assert failover.ok is None and recovery.ok is None


def test_targets_are_the_ones_defined():
    assert (target.FAILOVER_RTTS, target.RECOVERY_RTTS, target.CLEAN_RETIREMENTS) == (2.0, 3.0, 0)
    assert figures([fault(0.04, 0.08)])[0].ok                        # exactly 2 RTTs meets it
    with pytest.raises(ValueError, match="unknown transport parameters"):
        figures([fault(0.01, 0.01)], params={"probe_every": 1})
