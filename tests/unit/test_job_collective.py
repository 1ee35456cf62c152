"""The job's collective and rank placement: ring order, the runner's checks, the
scenario keys and their errors, and the figures each collective gets."""

import pytest

from lab.scenario.load import ScenarioError, load_scenario
from lab.scenario.record import COLLECTIVES, PLACEMENTS, JobSettings, Scenario
from lab.analysis.collective_bandwidth import BUS_FACTORS, bandwidth, bus_factor
from lab.analysis.iteration_record import Iteration
from lab.analysis.run_config import ConfigError, RunConfig
from lab.analysis.summary import summarize_transport
from lab.runners.job import JobError, JobSpec, check_job, job_spec, ring_order
from mrc_host.collectives import COLLECTIVES as COLLECTIVE_CLASSES
from topologies.fabric import DEFAULT_FABRIC, FabricSpec


def crossings(spec: FabricSpec, ring: list[str]) -> int:
    """Ring hops (the closing one too) between hosts of different racks: they cross the T1s."""
    rack = {spec.host_name(h): spec.rack_of(h) for h in range(spec.hosts)}
    return sum(rack[a] != rack[b] for a, b in zip(ring, ring[1:] + ring[:1]))


def test_the_scenario_names_every_collective_there_is_and_each_has_a_bus_factor():
    assert COLLECTIVES == tuple(COLLECTIVE_CLASSES) == tuple(BUS_FACTORS)


def test_the_default_fabric_in_both_placements():
    assert ring_order(DEFAULT_FABRIC, "contiguous") == ["h0", "h1", "h2", "h3"]
    assert ring_order(DEFAULT_FABRIC, "interleaved") == ["h0", "h2", "h1", "h3"]
    assert crossings(DEFAULT_FABRIC, ring_order(DEFAULT_FABRIC, "contiguous")) == 2
    assert crossings(DEFAULT_FABRIC, ring_order(DEFAULT_FABRIC, "interleaved")) == 4


@pytest.mark.parametrize("racks, hosts_per_rack", [(2, 1), (2, 3), (3, 2), (4, 4), (5, 3)])
def test_interleaved_crosses_racks_at_every_hop_contiguous_only_between_racks(racks, hosts_per_rack):
    spec = FabricSpec(racks=racks, hosts_per_rack=hosts_per_rack)
    for placement in PLACEMENTS:
        assert sorted(ring_order(spec, placement)) == sorted(spec.host_names)   # every host, once
    assert crossings(spec, ring_order(spec, "interleaved")) == spec.hosts
    assert crossings(spec, ring_order(spec, "contiguous")) == racks


def test_one_rack_cannot_be_interleaved():
    with pytest.raises(JobError, match="only 1 rack; use contiguous"):
        ring_order(FabricSpec(racks=1, hosts_per_rack=4), "interleaved")


@pytest.mark.parametrize("job, problem", [
    (JobSpec(transport="roce"), "unknown transport 'roce'; choose from mrc, baseline"),
    (JobSpec(collective="allgather"), "unknown collective 'allgather'; choose from allreduce, alltoall"),
    (JobSpec(placement="random"), "unknown placement 'random'; choose from contiguous, interleaved"),
    (JobSpec(collective="alltoall", buffer_bytes=12), "needs at least 16 bytes"),
])
def test_a_job_that_cannot_run_is_refused_before_any_worker_starts(job, problem):
    with pytest.raises(JobError, match=problem):
        check_job(DEFAULT_FABRIC, job)


def test_the_scenario_job_reaches_the_runner():
    scenario = Scenario(name="x", job=JobSettings(collective="alltoall", placement="interleaved"))
    spec = job_spec(scenario, "baseline")
    assert (spec.collective, spec.placement, spec.transport) == ("alltoall", "interleaved", "baseline")
    check_job(scenario.fabric, spec)
    assert JobSpec().collective == "allreduce" and JobSpec().placement == "contiguous"


def load(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return load_scenario(path)


def test_the_keys_load_and_default(tmp_path):
    s = load(tmp_path, "description: d\njob: {collective: alltoall, placement: interleaved}\n")
    assert (s.job.collective, s.job.placement) == ("alltoall", "interleaved")
    assert s.to_dict()["job"]["collective"] == "alltoall" and s.to_dict()["job"]["placement"] == "interleaved"
    s = load(tmp_path, "description: d\n")
    assert (s.job.collective, s.job.placement) == ("allreduce", "contiguous")


@pytest.mark.parametrize("job, field, problem", [
    ("{collective: broadcast}", "job.collective", "input should be 'allreduce' or 'alltoall', got 'broadcast'"),
    ("{placement: random}", "job.placement", "input should be 'contiguous' or 'interleaved', got 'random'"),
    ("{placment: interleaved}", "job.placment", "unknown key; did you mean 'placement'?"),
    ("{collective: [alltoall]}", "job.collective", "input should be 'allreduce' or 'alltoall'"),
])
def test_bad_job_keys_are_one_line_naming_the_field(tmp_path, job, field, problem):
    with pytest.raises(ScenarioError) as info:
        load(tmp_path, f"description: d\njob: {job}\n")
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{tmp_path / 's.yaml'}: {field}: "), message
    assert problem in message, message


def test_interleaved_on_a_one_rack_fabric_is_refused_at_load(tmp_path):
    with pytest.raises(ScenarioError, match=r"job\.placement: interleaved alternates racks: this fabric has 1 rack"):
        load(tmp_path, "description: d\nfabric: {racks: 1, hosts_per_rack: 4}\njob: {placement: interleaved}\n")


# ---- figures -----------------------------------------------------------------------------------

def test_bus_factors_are_nccl_tests():
    assert bus_factor(4) == bus_factor(4, "allreduce") == pytest.approx(1.5)
    assert bus_factor(4, "alltoall") == pytest.approx(0.75)
    assert bus_factor(0, "alltoall") == 0.0


def test_alltoall_bandwidth_and_ideal():
    # 4 ranks x 1 MB, 8 planes of 10 Mb/s: 3/4 of the buffer leaves each rank, 6 Mb at 80 Mb/s
    b = bandwidth(0.15, ranks=4, buffer_bytes=1_000_000, planes=8, link_mbps=10.0, collective="alltoall")
    assert b["ideal_s"] == pytest.approx(0.075)
    assert b["algbw_mbps"] == pytest.approx(8 / 0.15)
    assert b["busbw_mbps"] == pytest.approx(8 / 0.15 * 0.75)
    assert b["efficiency"] == pytest.approx(0.5) and b["ideal_ratio"] == pytest.approx(2.0)


def run_config(collective=None):
    job = {"buffer_bytes": 1_000_000, **({"collective": collective} if collective else {})}
    return RunConfig({"fabric": DEFAULT_FABRIC.to_dict(), "job": job})


def test_the_summary_takes_the_collective_from_the_config():
    its = [Iteration(transport="mrc", iteration=0, start=0.0, end=0.3, duration=0.3, verified=True)]
    reduce = summarize_transport("mrc", its, config=run_config("allreduce"))
    older = summarize_transport("mrc", its, config=run_config())   # a run from before the key
    alltoall = summarize_transport("mrc", its, config=run_config("alltoall"))
    assert reduce.efficiency == older.efficiency == pytest.approx(2 * alltoall.efficiency)
    assert alltoall.ideal_s == pytest.approx(0.075) and reduce.ideal_s == pytest.approx(0.15)


def test_an_unknown_collective_in_a_config_is_named():
    with pytest.raises(ConfigError, match="job.collective 'gather' is not one of allreduce, alltoall"):
        run_config("gather").collective
