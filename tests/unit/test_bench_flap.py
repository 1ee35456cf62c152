"""The bench's flap step: its rows, judged on a synthetic summary (no lab run)."""

from lab.scenario.record import Scenario
from lab.analysis.summary_record import summary_from_dict
from lab.runners import bench


def flap_figures(monkeypatch, mrc, baseline_p100=6.0, clean_p100=0.35):
    summary = summary_from_dict({"mrc": {"verified": True, "faults": [], "srtt_median_s": 0.02,
                                         "route_gap_median_s": 0.013, "clean_median_s": 0.33, **mrc},
                                 "baseline": {"p100_s": baseline_p100, "verified": True}})
    monkeypatch.setattr(bench, "_run", lambda *a, **k: bench.BenchRun("", summary, Scenario(name="flap")))
    b = bench.Bench(quick=True, root=None)
    b.clean = bench.BenchRun("", summary_from_dict({"mrc": {"p100_s": clean_p100}}), None)
    return {f.name.split(" (")[0]: f for f in b.flap_step()}


def flap(lost, cost):
    return {"fault": "link_flap", "packets_lost": lost, "iteration_cost_s": cost, "detection_s": 0.006,
            "failover_s": 0.01, "failover_after_loss_s": 0.005, "recovery_s": 0.03, "recovery_busy_s": 0.02,
            "routes_unrecovered": 0, "routes_kept_sending": 0}


def test_the_flap_step_judges_packets_iteration_cost_p100_and_the_baseline(monkeypatch):
    rows = flap_figures(monkeypatch, {"p100_s": 0.40, "faults": [flap([1, 0], 0.04), flap([1], 0.05)]})
    assert rows["flap: MRC P100 / clean P100"].ok                       # 1.14 <= 1.2
    assert rows["flap: DATA packets a flap cost each connection it struck"].ok
    assert rows["flap: the iteration a flap strikes less the run's fault-free median"].ok   # 2.2 RTTs
    assert rows["flap: baseline P100 / MRC P100"].ok                    # 6 s >= the 5 s convergence delay
    assert rows["failover, link down, from the first packet lost on a failed route to its last DATA"].ok
    rows = flap_figures(monkeypatch, {"p100_s": 0.45, "faults": [flap([2, 2], 0.08)]})
    assert rows["flap: MRC P100 / clean P100"].ok is False              # 1.29
    assert rows["flap: DATA packets a flap cost each connection it struck"].ok is False
    assert rows["flap: the iteration a flap strikes less the run's fault-free median"].ok is False   # 4 RTTs
