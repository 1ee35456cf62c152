"""The bench's flap rows, judged on synthetic summaries (no lab run)."""

from faults.scenario_record import Scenario
from lab.runners import bench


def flap_figures(monkeypatch, mrc, baseline_p100=6.0, clean_p100=0.35):
    summary = {"mrc": {"verified": True, "faults": [], "srtt_median_s": 0.02, **mrc},
               "baseline": {"p100_s": baseline_p100, "verified": True}}
    monkeypatch.setattr(bench, "_run", lambda *a, **k: {"summary": summary, "scenario": Scenario(name="flap")})
    b = bench.Bench(quick=True, root=None)
    b.clean = {"summary": {"mrc": {"p100_s": clean_p100}}}
    return {f.name: f for f in b.flap_step()}


def test_a_flap_run_slower_all_through_passes_the_same_run_figure_not_the_cross_run_one(monkeypatch):
    # the flap run's slowest iteration (0.45 s) fell outside every flap; during the flaps 0.43 s
    rows = flap_figures(monkeypatch, {"p100_s": 0.45, "fault_p100_s": 0.43, "fault_free_p100_s": 0.45})
    cross = rows["flap: MRC P100 / clean P100"]
    same = rows["flap: MRC slowest iteration during a flap / slowest during none (same run)"]
    assert cross.ok is False and cross.value.startswith("1.29")
    assert same.ok and same.value == "0.956 (0.430 s / 0.450 s)" and same.target == "<= 1.05"


def test_a_flap_that_costs_its_iteration_fails_the_same_run_figure(monkeypatch):
    rows = flap_figures(monkeypatch, {"p100_s": 0.40, "fault_p100_s": 0.40, "fault_free_p100_s": 0.36})
    assert rows["flap: MRC slowest iteration during a flap / slowest during none (same run)"].ok is False
    assert rows["flap: MRC P100 / clean P100"].ok                       # 1.14 <= 1.2
    # no iteration overlapped a flap (or none stayed clear of them): not met, nothing to compare
    rows = flap_figures(monkeypatch, {"p100_s": 0.40, "fault_p100_s": None, "fault_free_p100_s": 0.40})
    assert rows["flap: MRC slowest iteration during a flap / slowest during none (same run)"].ok is False

