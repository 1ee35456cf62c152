"""Which fault kinds each data plane runs (its refused_kinds, topologies/dataplane.py):
the one-line refusal, in a scenario file and from make_injector (no root)."""

from types import SimpleNamespace

import pytest

from faults.catalog import FAULT_KINDS
from faults.injectors import FaultError, make_injector
from faults.model import FaultEvent
from lab.scenario.load import ScenarioError, load_scenario
from topologies.dataplanes import DATAPLANE_TYPES, dataplane_for
from topologies.fabric import DATAPLANE_SPANS_SERVERS, DATAPLANES, FabricSpec

HEAD = "description: t\njob: {iterations: 5, max_seconds: 45}\n"
PAUSE = "{at: 2, kind: datapath_pause, target: datapath, duration: 5, params: {pause_ms: 30, period_ms: 100}}"


def test_every_data_plane_has_its_refusals_and_they_name_known_kinds():
    assert set(DATAPLANE_TYPES) == set(DATAPLANES)
    for dataplane in DATAPLANE_TYPES.values():
        assert set(dataplane.refused_kinds) <= set(FAULT_KINDS)


def test_the_fabric_knows_which_data_planes_span_servers_as_their_classes_do():
    assert {name: cls.server_side() is not None for name, cls in DATAPLANE_TYPES.items()} == DATAPLANE_SPANS_SERVERS


def test_srv6_refuses_the_datapath_pause_alone_and_says_why():
    srv6, openflow = (dataplane_for(FabricSpec(dataplane=name)) for name in ("srv6", "openflow"))
    assert srv6.refusal(["link_flap", "switch_reboot", "blackhole", "loss", "incast", "deny",
                         "agent_pause", "controller_kill", "plane_down"]) is None
    message = srv6.refusal(["link_flap", "datapath_pause"])
    assert message.startswith("fault kind datapath_pause does not run on the srv6 data plane")
    assert "no datapath process" in message and "\n" not in message
    assert openflow.refusal(list(FAULT_KINDS)) is None


@pytest.mark.parametrize("dataplane, refused", [("srv6", True), ("openflow", False)])
def test_a_scenario_file_with_a_refused_kind_fails_to_load_naming_the_entry(tmp_path, dataplane, refused):
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + f"fabric: {{dataplane: {dataplane}}}\nfaults:\n  - {PAUSE}\n")
    if not refused:
        assert [e.kind for e in load_scenario(str(path)).faults] == ["datapath_pause"]
        return
    with pytest.raises(ScenarioError) as err:
        load_scenario(str(path))
    assert "faults[0].kind" in str(err.value) and "no datapath process" in str(err.value)
    assert "\n" not in str(err.value)


def test_make_injector_refuses_a_kind_the_sessions_data_plane_cannot_run():
    spec = FabricSpec(dataplane="srv6")
    session = SimpleNamespace(spec=spec, dataplane=dataplane_for(spec))
    with pytest.raises(FaultError, match="does not run on the srv6 data plane"):
        make_injector(session, FaultEvent(at=0, kind="datapath_pause", target="datapath",
                                          params={"pause_ms": 10, "period_ms": 100}))
