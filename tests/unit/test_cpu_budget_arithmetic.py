"""The CPU budget's arithmetic and process kinds (lab/runners/cpu_budget.py)."""

import os

import pytest

from lab.runners import cpu_budget
from lab.runners.cpu_budget import CLOCK_TICKS, CORES, CpuSnapshot, budget, process_kind, snapshot


def test_process_kinds_by_command_line():
    python = "/work/.venv/bin/python -m"
    assert process_kind(f"{python} lab.inhost.jobworker /tmp/x.json", 10, runner=1) == "agents"
    assert process_kind(f"{python} lab.inhost.mapper --fabric f --host 0", 10, runner=1) == "mappers"
    assert process_kind(f"{python} topologies.srv6.routing --fabric f", 10, runner=1) == "routing"
    assert process_kind(f"{python} topologies.openflow.controller --port 16653", 10, runner=1) == "routing"
    assert process_kind(f"{python} lab.inhost.heartbeat --port 5202", 10, runner=1) == "monitor"
    assert process_kind("ksoftirqd/1", 10, runner=1) == "softirq threads"
    assert process_kind("ovs-vswitchd unix:/var/run/openvswitch/db.sock", 10, runner=1) == "datapath"
    assert process_kind("bash", 10, runner=1) == "other"
    assert process_kind(f"{python} lab.inhost.jobworker x", 10, runner=10) == "runner"


def _machine(busy, softirq=0, idle=0):
    return {"user": busy - softirq, "nice": 0, "system": 0, "idle": idle, "iowait": 0, "irq": 0,
            "softirq": softirq, "steal": 0}


def test_a_window_charges_each_kind_its_own_ticks():
    t = CLOCK_TICKS
    before = CpuSnapshot(100.0, _machine(0), {5: ("agents", 1 * t, 0), 6: ("mappers", 0, 0), 7: ("other", 0, 0)})
    after = CpuSnapshot(102.0, _machine(3 * t, softirq=t, idle=(2 * CORES - 3) * t),
                        {5: ("agents", 2 * t, t), 6: ("mappers", 0, t // 2), 8: ("agents", t, 0),
                         7: ("runner", 5 * t, 0)})   # pid 7 reused by another kind: counted from zero
    b = budget(before, after)
    agents = b["kinds"]["agents"]
    assert b["window_s"] == pytest.approx(2.0) and b["cores"] == CORES
    assert agents["processes"] == 2 and agents["user_s"] == pytest.approx(2.0) and agents["system_s"] == pytest.approx(1.0)
    assert agents["share"] == pytest.approx(3.0 / (2.0 * CORES))
    assert b["kinds"]["mappers"]["cpu_s"] == pytest.approx(0.5, abs=1 / t)
    assert b["kinds"]["runner"]["cpu_s"] == pytest.approx(5.0) and b["kinds"]["other"]["processes"] == 0
    assert b["machine"]["busy_s"] == pytest.approx(3.0) and b["machine"]["softirq_s"] == pytest.approx(1.0)
    assert b["machine"]["busy_share"] == pytest.approx(3.0 / (2.0 * CORES))


def test_a_real_snapshot_finds_this_process_as_the_runner():
    snap = snapshot()
    assert snap.processes[os.getpid()][0] == "runner"
    assert set(snap.machine) == set(cpu_budget.MACHINE_FIELDS) and snap.machine["idle"] > 0
    burn = snapshot()
    sum(i * i for i in range(300_000))   # some user time of our own
    after = snapshot()
    assert budget(burn, after)["kinds"]["runner"]["processes"] == 1
