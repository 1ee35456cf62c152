"""A fault kind is one definition (faults/kind.py): the loader, the injector factory, the
audit and the docs read the registry. A toy kind registered here, and nothing else, is
loaded, validated, expanded and injected like a real one."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import Field

from faults.catalog import FAULT_KINDS
from faults.injector import Injector
from faults.injectors import make_injector
from faults.kind import FaultKind, StrictParams, register, unregister
from lab.live.audit import switches_cut_off
from lab.scenario.load import ScenarioError, load_scenario
from topologies.fabric import FabricSpec

ROOT = Path(__file__).resolve().parents[2]


# ---- the toy kind: everything a new kind needs, in one place ------------------------------------
class ToyInjector(Injector):
    kind = "toy_fault"

    def start(self) -> None:
        self.active = True

    def repair(self) -> None:
        self.active = False


class ToyParams(StrictParams):
    strength: int = Field(ge=1, le=3)


TOY = FaultKind("toy_fault", "a toy: a switch feels strange", targets=("switch",), injector=ToyInjector,
                params=ToyParams, resources=lambda spec, target: (f"mood of {target}",),
                switches_cut_off=lambda spec, target: {target}, takes_links_down=True, cuts_routes=True)


@pytest.fixture
def toy():
    register(TOY)
    yield TOY
    unregister(TOY.name)


def scenario(tmp_path, faults: str):
    path = tmp_path / "toy.yaml"
    path.write_text(f"description: a toy\nfabric: {{planes: 2}}\nfaults:\n{faults}")
    return load_scenario(str(path))


def test_a_registered_kind_loads_expands_and_injects(tmp_path, toy):
    loaded = scenario(tmp_path, "  - {at: 1, kind: toy_fault, target: t1p1s0, duration: 2, params: {strength: 2}}\n"
                                "  - {every: 3, until: 9, kind: toy_fault, target: t0p0r1, duration: 1, "
                                "params: {strength: 1}}\n")
    assert [(e.at, e.kind, e.target) for e in loaded.faults] == [
        (0.0, "toy_fault", "t0p0r1"), (1.0, "toy_fault", "t1p1s0"), (3.0, "toy_fault", "t0p0r1"),
        (6.0, "toy_fault", "t0p0r1")]
    session = SimpleNamespace(spec=loaded.fabric, dataplane=SimpleNamespace(refusal=lambda kinds: None))
    injector = make_injector(session, loaded.faults[1])
    assert isinstance(injector, ToyInjector) and injector.params == {"strength": 2}
    assert switches_cut_off(loaded.fabric, "toy_fault", "t1p1s0") == {"t1p1s0"}


@pytest.mark.parametrize("fault, where, problem", [
    ("{at: 1, kind: toy_fault, target: t0p0r0-t1p0s0}", "faults[0].target", "toy_fault takes a switch"),
    ("{at: 1, kind: toy_fault, target: t1p0s0, params: {strength: 7}}", "faults[0].params.strength",
     "less than or equal to 3"),
    ("{at: 1, kind: toy_fault, target: t1p0s0, params: {strength: 1, mood: 1}}", "faults[0].params.mood", "unknown key"),
])
def test_a_registered_kind_is_judged_by_its_own_targets_and_params(tmp_path, toy, fault, where, problem):
    with pytest.raises(ScenarioError) as error:
        scenario(tmp_path, f"  - {fault}\n")
    assert f"{where}: " in str(error.value) and problem in str(error.value)


def test_its_resources_keep_two_faults_of_one_element_apart(tmp_path, toy):
    with pytest.raises(ScenarioError, match="overlaps"):
        scenario(tmp_path, "  - {at: 1, kind: toy_fault, target: t1p0s0, duration: 5, params: {strength: 1}}\n"
                           "  - {at: 2, kind: toy_fault, target: t1p0s0, duration: 1, params: {strength: 1}}\n")


def test_an_unregistered_kind_is_refused_naming_the_registered_ones(tmp_path):
    with pytest.raises(ScenarioError) as error:
        scenario(tmp_path, "  - {at: 1, kind: toy_fault, target: t1p0s0}\n")
    assert "faults[0].kind: input should be 'agent_pause', 'blackhole'," in str(error.value)   # sorted
    assert all(f"'{name}'" in str(error.value) for name in FAULT_KINDS)
    assert "toy_fault" not in str(error.value).split("got")[0]


def test_a_kind_without_an_injector_or_an_expansion_cannot_be_defined():
    with pytest.raises(ValueError, match="exactly one"):
        FaultKind("nothing", "does nothing", targets=("switch",))
    with pytest.raises(ValueError, match="targets"):
        FaultKind("nowhere", "goes nowhere", targets=("galaxy",), injector=ToyInjector)


# ---- the real kinds ---------------------------------------------------------------------------------
def test_plane_down_exists_once_as_the_link_flaps_of_its_plane():
    spec = FabricSpec(planes=2)
    flaps = FAULT_KINDS["plane_down"].expand(spec, "plane1")
    assert {kind for kind, _, _ in flaps} == {"link_flap"}
    assert sorted(target for _, target, _ in flaps) == sorted(str(link) for link in spec.t0_t1_links(1))
    assert FAULT_KINDS["plane_down"].injector is None


def test_every_kind_that_takes_links_down_cuts_routes():
    assert all(kind.cuts_routes for kind in FAULT_KINDS.values() if kind.takes_links_down)


def test_docs_have_one_row_per_registered_kind():
    text = (ROOT / "docs" / "faults.md").read_text()
    table = text[text.index("## Injectors"):text.index("\n## ", text.index("## Injectors") + 1)]
    rows = set(re.findall(r"^\| `(\w+)` \|", table, re.M))
    assert rows == set(FAULT_KINDS)


def test_a_silent_switch_holds_the_switch_and_its_links_as_a_reboot_does():
    spec = FabricSpec(planes=2)
    silent, reboot = FAULT_KINDS["switch_blackhole"], FAULT_KINDS["switch_reboot"]
    assert silent.resources(spec, "t1p1s0") == reboot.resources(spec, "t1p1s0")
    assert silent.cuts_routes and not silent.takes_links_down       # its links stay up
    assert switches_cut_off(spec, "switch_blackhole", "t1p1s0") == set()   # the port program counts its drops
