"""The lossless (PFC-like) mode on a real fabric (root; docs/lossless.md): a RoCE-like
1-QP all-reduce with interleaved ranks, so its flows meet on the T0 uplinks. With the mode
on, no switch port trims or drops DATA for congestion, upstream ports were paused, and the
run records the pauses; the lab leaves nothing behind."""

import json

from lab.scenario.record import JobSettings, Scenario
from topologies.fabric import FabricSpec

LOSSLESS_PLANE = FabricSpec(planes=1, link_mbps=80, evs_per_plane=16, dataplane="srv6", lossless=True)


def test_a_lossless_roce_like_all_reduce_loses_nothing_to_congestion(tmp_path, no_leftovers):
    from lab.runners.experiment import run_experiment

    scenario = Scenario(name="lossless-roce", fabric=LOSSLESS_PLANE, transports=("baseline",),
                        job=JobSettings(collective="allreduce", placement="interleaved", buffer_mb=2,
                                        iterations=3, max_seconds=20),
                        transport_params={"qps": 1})
    path, summary = run_experiment(scenario, tmp_path)
    drops = json.loads((path / "conservation.json").read_text())["baseline"]["named_drops"]
    assert (drops["trimmed"], drops["queue"]) == (0, 0), drops
    assert summary["baseline"].trims == 0 and summary["baseline"].iterations == 3, summary["baseline"]
    events = [json.loads(line) for line in (path / "events.jsonl").read_text().splitlines()]
    (pauses,) = [e for e in events if e["kind"] == "lossless_pauses"]
    assert pauses["error"] is None
    assert sum(pauses["pauses"].values()) > 0 and sum(pauses["pause_s"].values()) > 0, pauses
