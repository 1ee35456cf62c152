"""docs/machine.md's `bench/cpu_budget.py`, typed as a user types it (root), shortened with its
own options: the three states measured on the default fabric and the CPU per packet."""

import json

from lab.scenario.record import JobSettings
from lab.runners.cpu_budget import KIND_ORDER
from tests.typed import run_typed, tail
from topologies.link_rate import load_budget

CPU_BUDGET = "sudo .venv/bin/python bench/cpu_budget.py"


def test_cpu_budget_command(tmp_path, no_leftovers):
    out, saved = tmp_path / "budget.json", tmp_path / "cpu-budget.json"
    done = run_typed(CPU_BUDGET, "--idle-seconds", "3", "--iterations", "6", "--json", str(out),
                     "--budget", str(saved), timeout=300)
    assert done.returncode == 0, tail(done)
    assert "CPU budget: 4 hosts x 8 planes" in done.stdout and "CPU per delivered packet" in done.stdout
    figures = json.loads(out.read_text())
    budgets = figures["budgets"]
    assert set(budgets) == {"built", "idle", "traffic"} and figures["verified"] is True
    for state, budget in budgets.items():
        assert set(budget["kinds"]) == set(KIND_ORDER) and budget["window_s"] > 0
        assert 0 <= budget["machine"]["busy_share"] <= 1
    kinds = {state: budgets[state]["kinds"] for state in budgets}
    assert kinds["built"]["agents"]["processes"] == 0 and kinds["built"]["routing"]["processes"] == 1
    assert kinds["idle"]["agents"]["processes"] == kinds["traffic"]["agents"]["processes"] == 4
    assert kinds["idle"]["mappers"]["processes"] == 4
    # traffic costs the agents far more than quiet does, and it delivered the all-reduce's packets
    assert kinds["traffic"]["agents"]["share"] > 5 * kinds["idle"]["agents"]["share"]
    # every rank of the 4-rank ring sends 2 (N - 1) / N of its buffer per iteration, each packet placed once
    job = JobSettings()
    per_rank = 2 * 3 / 4 * job.buffer_mb * (1 << 20) / job.payload_size
    assert figures["data_packets"] == 6 * 4 * per_rank and figures["machine_us_per_packet"] > 0
    # what link_mbps auto reads: this machine's, with a rate for each named fabric printed
    budget = load_budget(saved)
    assert budget.cpu_s_per_packet > 0 and budget.packets_per_host_plane_mbps > 0 and budget.idle_cores_per_host > 0
    assert "default fabric: link rate" in done.stdout and "paper fabric:" in done.stdout


AGENT_PROFILE = "sudo .venv/bin/python bench/agent_profile.py"


def test_agent_profile_command(tmp_path, no_leftovers):
    """docs/machine.md's profile of the agents in place: py-spy on every agent over the traffic
    window, the shares by function and the counts per delivered packet."""
    out = tmp_path / "profile.json"
    done = run_typed(AGENT_PROFILE, "--idle-seconds", "1", "--iterations", "4", "--json", str(out), timeout=300)
    assert done.returncode == 0, tail(done)
    assert "the agents' busy time by function" in done.stdout and "per delivered DATA packet: data_sent" in done.stdout
    figures = json.loads(out.read_text())
    assert figures["verified"] is True and figures["samples"] > 0 and figures["agents_user_us_per_packet"] > 0
    # the agents' own code is among the functions sampled, and the shares are of all samples
    assert any("mrc_host/" in f["function"] for f in figures["functions"])
    assert abs(sum(f["self_share"] for f in figures["functions"]) - 1) < 1e-6
    # a delivered packet was sent once at least, and every loop wake made a select
    per = figures["per_packet"]
    assert per["data_sent"] >= 1 and per["send_calls"] >= per["data_sent"] and per["selects"] >= per["wakes"]
