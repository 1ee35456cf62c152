"""Choosing the data plane: FabricSpec.dataplane, the scenario key fabric.dataplane,
and `run --dataplane` (the override, and what srv6 refuses before building anything)."""

import pytest
import typer

from faults.scenario import ScenarioError, load_scenario
from lab.cli import SRV6_FAULT_KINDS, load_run
from topologies.fabric import DATAPLANES, DEFAULT_FABRIC, FabricError, FabricSpec


def test_openflow_is_the_default_and_srv6_the_other():
    assert DEFAULT_FABRIC.dataplane == "openflow" and DATAPLANES == ("openflow", "srv6")
    with pytest.raises(FabricError, match="dataplane must be one of openflow, srv6, got 'ovs'"):
        FabricSpec(dataplane="ovs")


def test_dataplane_round_trips_and_older_records_were_openflow():
    spec = FabricSpec(planes=2, dataplane="srv6")
    assert FabricSpec.from_dict(spec.to_dict()) == spec
    older = {k: v for k, v in DEFAULT_FABRIC.to_dict().items() if k != "dataplane"}
    assert FabricSpec.from_dict(older).dataplane == "openflow"


def test_scenario_key(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("description: x\nfabric: {planes: 2, dataplane: srv6}\ntransports: [mrc]\n")
    scenario = load_scenario(path)
    assert scenario.fabric.dataplane == "srv6" and scenario.to_dict()["fabric"]["dataplane"] == "srv6"
    path.write_text("description: x\nfabric: {dataplane: ovs}\n")
    with pytest.raises(ScenarioError, match=r"fabric\.dataplane"):
        load_scenario(path)


def test_run_override_and_what_srv6_refuses(capsys):
    assert load_run("clean", None, None, None, None).fabric.dataplane == "openflow"
    assert load_run("clean", None, None, None, None, dataplane="srv6").fabric.dataplane == "srv6"
    assert load_run("controller-crash", None, None, None, None, dataplane="srv6").faults
    assert SRV6_FAULT_KINDS == ("controller_kill",)
    with pytest.raises(typer.Exit) as refused:
        load_run("flap", None, None, None, None, dataplane="srv6")
    assert refused.value.exit_code == 2
    assert "link_flap are not wired to the srv6 data plane" in " ".join(capsys.readouterr().out.split())
