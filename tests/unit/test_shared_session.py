"""Several experiments in one lab session (lab/runners/experiment.py run_experiments): they run in
the one session, in order, and scenarios that need another lab are refused before it is built."""

import contextlib
from dataclasses import replace

import pytest

from lab.runners import experiment
from lab.scenario.record import BaselineRouting, Scenario
from topologies.fabric import FabricSpec

ONE_PLANE = FabricSpec(planes=1, link_mbps=80.0, evs_per_plane=16)


def scenario(name: str, **changes) -> Scenario:
    return replace(Scenario(name=name, fabric=ONE_PLANE, transports=("baseline",)), **changes)


def test_the_experiments_share_one_session_in_order(monkeypatch, tmp_path):
    built, ran = [], []

    @contextlib.contextmanager
    def session_of(s):
        built.append(s.name)
        yield f"session for {s.name}"

    monkeypatch.setattr(experiment, "experiment_session", session_of)
    monkeypatch.setattr(experiment, "run_experiment",
                        lambda s, root, session=None: ran.append((s.name, session)) or (tmp_path / s.name, {}))
    runs = [scenario(f"salt{k}", transport_params={"qps": 1, "qp_port_salt": k}) for k in range(3)]
    out = experiment.run_experiments(runs, tmp_path)
    assert built == ["salt0"] and ran == [(f"salt{k}", "session for salt0") for k in range(3)]
    assert [path.name for path, _ in out] == ["salt0", "salt1", "salt2"]
    assert experiment.run_experiments([], tmp_path) == []


@pytest.mark.parametrize("other", [{"fabric": replace(ONE_PLANE, link_mbps=40.0)}, {"trimming": False},
                                   {"baseline_routing": BaselineRouting(convergence_delay_s=1.0)}])
def test_a_scenario_needing_another_lab_is_refused_before_the_session(monkeypatch, tmp_path, other):
    monkeypatch.setattr(experiment, "experiment_session", lambda s: pytest.fail("no session for a refused set"))
    with pytest.raises(ValueError, match="cannot share its session"):
        experiment.run_experiments([scenario("a"), scenario("b", **other)], tmp_path)
