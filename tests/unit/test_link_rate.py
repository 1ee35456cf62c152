"""`link_mbps: auto` (topologies/link_rate.py): the model, the budget file, the loader."""

import json

import pytest

from lab.scenario.load import ScenarioError, load_scenario
from topologies import link_rate
from topologies.link_rate import (MAX_AUTO_MBPS, RATE_STEP_MBPS, TARGET_BUSY, RateBudget, RateError,
                                  auto_link_mbps, load_budget, machine_id, save_budget)

# about what bench/cpu_budget.py measured on the 2-core VM: a quiet host ~0.7 % of a core,
# ~175 us a delivered packet, ~15 packets/s per host, plane and Mb/s in a clean all-reduce
BUDGET = RateBudget(machine=machine_id(), measured="2026-12-02 04:00", cores=2, idle_cores_per_host=0.007,
                    cpu_s_per_packet=175e-6, packets_per_host_plane_mbps=15.0)


def test_the_rate_is_the_largest_step_the_model_keeps_under_the_target():
    for hosts in (4, 9, 16, 32):
        rate, why = auto_link_mbps(BUDGET, hosts, 8)
        assert rate % RATE_STEP_MBPS == 0 and rate <= MAX_AUTO_MBPS
        assert BUDGET.busy_cores(hosts, 8, rate) <= TARGET_BUSY * BUDGET.cores
        if rate < MAX_AUTO_MBPS:   # one step more would not fit
            assert BUDGET.busy_cores(hosts, 8, rate + RATE_STEP_MBPS) > TARGET_BUSY * BUDGET.cores
        assert f"link rate {rate:g} Mb/s, auto" in why and "2026-12-02 04:00" in why
    rates = [auto_link_mbps(BUDGET, hosts, 8)[0] for hosts in (4, 9, 16, 32)]
    assert rates == sorted(rates, reverse=True) and rates[0] == MAX_AUTO_MBPS   # the small fabric: capped
    assert "capped" in auto_link_mbps(BUDGET, 4, 8)[1]


def test_a_fabric_no_rate_fits_is_refused_in_one_line():
    with pytest.raises(RateError, match="no rate >= 0.5 Mb/s fits this machine.*smaller fabric"):
        auto_link_mbps(BUDGET, 400, 8)


def test_the_budget_file_round_trips_and_holds_only_on_its_machine(tmp_path):
    path = tmp_path / "cpu-budget.json"
    with pytest.raises(RateError, match="bench/cpu_budget.py"):
        load_budget(path)
    save_budget(BUDGET, path)
    assert load_budget(path) == BUDGET
    path.write_text(json.dumps({**json.loads(path.read_text()), "machine": "64 cores, elsewhere"}))
    with pytest.raises(RateError, match="another machine.*bench/cpu_budget.py"):
        load_budget(path)
    for garbage in ("{", "[]", json.dumps({"machine": machine_id()}),
                    json.dumps({**BUDGET.__dict__, "cpu_s_per_packet": -1})):
        path.write_text(garbage)
        with pytest.raises(RateError, match="bench/cpu_budget.py"):
            load_budget(path)


def test_a_scenario_asking_for_auto_runs_at_the_budgets_rate_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(link_rate, "BUDGET_PATH", tmp_path / "cpu-budget.json")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("description: x\nfabric: {base: paper, link_mbps: auto}\n")
    with pytest.raises(ScenarioError, match=r"s\.yaml: fabric\.link_mbps: link_mbps auto needs .*bench/cpu_budget.py"):
        load_scenario(scenario)
    save_budget(BUDGET)
    loaded = load_scenario(scenario)
    rate, why = auto_link_mbps(BUDGET, 16, 8)
    assert loaded.fabric.link_mbps == rate < MAX_AUTO_MBPS and loaded.link_rate == why
    assert loaded.to_dict()["link_rate"] == why
    # the command line's override, either way
    assert load_scenario("clean", {"fabric": {"link_mbps": "auto"}}).fabric.link_mbps == MAX_AUTO_MBPS
    slower = load_scenario(scenario, {"fabric": {"link_mbps": 2.5}})
    assert slower.fabric.link_mbps == 2.5 and slower.link_rate == ""
    scenario.write_text("description: x\nfabric: {link_mbps: fast}\n")
    with pytest.raises(ScenarioError, match="fabric.link_mbps: "):
        load_scenario(scenario)


def test_the_scale_table_gives_each_size_its_rate_and_iteration():
    from lab.bench_report import scale_markdown
    row = {"hosts": 16, "switches": 64, "spines": 4, "link_mbps": 3.5, "p50_s": 0.41, "build_s": 4.2,
           "efficiency": 0.91, "cpu_mean_pct": 55.0, "cpu_bound": False, "unexplained_loss": 0, "verified": True,
           "faithful": True}
    refused = {"hosts": 400, "switches": 80, "spines": 4, "link_mbps": None, "error": "link_mbps auto: no rate fits"}
    md = scale_markdown({"dataplane": "srv6", "rows": [row, refused], "largest_faithful": row})
    assert "| 16 | 64 | 4 | 3.5 Mb/s | 0.41 s | 4.2 s | 0.910 | 55 % | no | 0 | yes | yes |" in md
    assert "| 400 | 80 | 4 | - | link_mbps auto: no rate fits |" in md
    assert "Largest faithful fabric: 16 hosts, 64 switches, 4 T1s per plane, at 3.5 Mb/s (efficiency 0.910)." in md


def test_the_calibration_names_the_machine_and_its_unit_costs_in_one_line():
    line = BUDGET.calibration()
    assert BUDGET.machine in line and "2026-12-02 04:00" in line and "\n" not in line
    assert f"{BUDGET.idle_cores_per_host * 100:.2f} % of a core" in line
    assert f"{BUDGET.cpu_s_per_packet * 1e6:.0f} us of the machine" in line
