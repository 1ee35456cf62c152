"""A whole run on a noisy machine: background load, a paused datapath, the verdict in summary.json (root)."""

import json

from faults.background_load import BackgroundLoad
from faults.model import FaultEvent
from lab.scenario.record import JobSettings, Scenario
from topologies.fabric import FabricSpec

SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, dataplane="openflow")


def test_a_run_records_the_stall_and_the_load_in_its_summary(tmp_path, no_leftovers):
    """The whole chain: scenario -> experiment (load, heartbeat, pause) -> summary.json."""
    from lab.runners.experiment import run_experiment

    scenario = Scenario(name="paused-datapath", fabric=SMALL, transports=("mrc",),
                        job=JobSettings(buffer_mb=0.25, iterations=100, max_seconds=4),
                        background_load=BackgroundLoad(busy_loops=1, duty=0.3),
                        faults=[FaultEvent(1.0, "datapath_pause", "datapath", 1.5, {"pause_ms": 300, "period_ms": 1000})])
    path, summary = run_experiment(scenario, tmp_path)
    mrc = summary["mrc"]
    assert mrc.heartbeat.datapath_stalled and mrc.heartbeat.datapath_stalls >= 1, mrc
    events = (path / "events.jsonl").read_text()
    assert '"kind": "datapath_stall"' in events and '"kind": "pause_stats"' in events
    assert json.loads((path / "config.json").read_text())["background_load"] == {"busy_loops": 1, "duty": 0.3}
