"""The `deny` scenario fault: scenario files, its denylist entries, coexistence with the mappers' (no root)."""

import textwrap
from types import SimpleNamespace

import pytest

from faults.deny import Deny
from faults.catalog import FAULT_KINDS
from faults.injectors import FaultError, make_injector
from faults.model import FaultEvent
from lab.scenario.load import ScenarioError, load_scenario
from mrc_host.denylist import DeniedElement, DenylistFile, denylist_path, edit_denylist
from topologies.dataplanes import dataplane_for
from topologies.fabric import DEFAULT_FABRIC


def session(tmp_path):
    return SimpleNamespace(spec=DEFAULT_FABRIC, dataplane=dataplane_for(DEFAULT_FABRIC), workdir=tmp_path)


def listed(tmp_path):
    reader = DenylistFile(denylist_path(tmp_path))
    reader.poll()
    return {(e.key, e.source) for e in reader.elements}


def test_deny_is_a_registered_fault_kind():
    assert FAULT_KINDS["deny"].injector is Deny


@pytest.mark.parametrize("target, key", [
    ("t0p3r1-t1p3s0", ("t0t1_link", 3, 1, 0, None)),
    ("t1p2s1", ("t1", 2, None, 1, None)),
    ("t0p4r0", ("t0", 4, 0, None, None)),
    ("h3-eth5", ("nic_port", 5, None, None, 3)),
])
def test_each_target_denies_its_element_until_repair(tmp_path, target, key):
    fault = make_injector(session(tmp_path), FaultEvent(1.0, "deny", target, 2.0))
    fault.start()
    assert listed(tmp_path) == {(key, "scenario")} and fault.active
    fault.repair()
    assert listed(tmp_path) == set() and not fault.active


def test_deny_keeps_the_mappers_entries_and_they_keep_its_own(tmp_path):
    mapper = DeniedElement("t1", plane=0, t1=0, source="mapper:h1", since=3.0)
    edit_denylist(denylist_path(tmp_path), lambda now: now + [mapper])
    fault = make_injector(session(tmp_path), FaultEvent(1.0, "deny", "t0p0r0-t1p0s0", 2.0))
    fault.start()
    # a mapper merge replaces only the mapper entries
    edit_denylist(denylist_path(tmp_path), lambda now: [e for e in now if e.source == "scenario"])
    assert listed(tmp_path) == {(("t0t1_link", 0, 0, 0, None), "scenario")}
    edit_denylist(denylist_path(tmp_path), lambda now: now + [mapper])
    fault.repair()
    assert listed(tmp_path) == {(mapper.key, "mapper:h1")}


@pytest.mark.parametrize("target", ["plane1", "h1", "t1p9s0", "controller"])
def test_a_target_that_is_no_element_is_refused_before_the_job(tmp_path, target):
    with pytest.raises(FaultError, match="deny"):
        make_injector(session(tmp_path), FaultEvent(1.0, "deny", target, 2.0))


def write(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_scenario_files_take_deny_beside_a_fault_on_the_same_element(tmp_path):
    s = load_scenario(write(tmp_path, """
        description: d
        faults:
          - {at: 2, kind: deny, target: t0p1r0-t1p1s1, duration: 3}
          - {at: 3, kind: link_flap, target: t0p1r0-t1p1s1, duration: 1}
          - {at: 2, kind: deny, target: t1p0s0, duration: 1}
        """))
    assert [(e.at, e.kind, e.target) for e in s.faults] == [
        (2.0, "deny", "t0p1r0-t1p1s1"), (2.0, "deny", "t1p0s0"), (3.0, "link_flap", "t0p1r0-t1p1s1")]


@pytest.mark.parametrize("fault, words", [
    ("{at: 2, kind: deny, target: plane1}", "deny takes"),
    ("{at: 2, kind: deny, target: t0p1r0-t1p1s1, params: {p: 1}}", "takes no params"),
])
def test_scenario_files_with_a_bad_deny_get_one_line(tmp_path, fault, words):
    with pytest.raises(ScenarioError, match=words) as info:
        load_scenario(write(tmp_path, f"description: d\nfaults:\n  - {fault}\n"))
    assert "\n" not in str(info.value)


def test_two_denies_of_one_element_may_not_overlap(tmp_path):
    with pytest.raises(ScenarioError, match="overlaps"):
        load_scenario(write(tmp_path, """
            description: d
            faults:
              - {at: 2, kind: deny, target: t1p0s0, duration: 3}
              - {at: 3, kind: deny, target: t1p0s0, duration: 1}
            """))
