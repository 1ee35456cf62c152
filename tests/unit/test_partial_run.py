"""An interrupted run keeps what it measured: run_experiment writes the iterations completed,
marked partial in config.json, and says how far it came; the report and the notebooks say
that the run is partial. (tests/integration/test_run_command.py interrupts a real run.)"""

import io

import pytest
from rich.console import Console

from lab.scenario.record import JobSettings, Scenario
from lab.analysis import report
from lab.analysis.partial import PARTIAL, partial_entry, partial_line
from lab.analysis.run_config import RunConfig
from lab.analysis.results import load
from lab.jupyter import notebook_support as nbs
from lab.runners import experiment
from tests.unit.test_results import iterations
from topologies.fabric import FabricSpec

SCENARIO = Scenario(name="cut-short", fabric=FabricSpec(planes=2), transports=("mrc", "baseline"),
                    job=JobSettings(iterations=20))


def interrupted_after(measured: list):
    """A stand-in for the lab: the transports' jobs measure `measured`, then Ctrl-C."""
    def run_transports(scenario, records, heartbeats, timings, progress, shared=None, config=None):
        timings.update(build_s=1.0, teardown_s=2.0)
        records.iterations += measured
        raise KeyboardInterrupt
    return run_transports


def test_an_interrupted_run_writes_what_it_measured_marked_partial(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "_run_transports", interrupted_after(iterations("mrc", [0.1] * 7)))
    with pytest.raises(experiment.RunInterrupted) as stop:
        experiment.run_experiment(SCENARIO, tmp_path)
    path = stop.value.path
    assert path.parent == tmp_path
    assert stop.value.line == (f"interrupted after 7 of 20 mrc iterations, 0 of 20 baseline iterations; "
                               f"partial results in {path}")
    rec = load(path)
    assert rec.problems == []
    assert len(rec.iterations) == 7
    assert rec.config.partial == {"interrupted": True, "iterations_planned": 20,
                                   "iterations_done": [{"transport": "mrc", "iterations": 7},
                                                       {"transport": "baseline", "iterations": 0}]}
    assert rec.config.to_dict()["timings"] == {"build_s": 1.0, "teardown_s": 2.0}
    assert rec.summary["mrc"].iterations == 7
    assert (path / "iteration_timeline.png").exists()


def test_an_interruption_is_a_keyboard_interrupt_for_callers_that_keep_nothing(tmp_path, monkeypatch):
    # a benchmark calling run_experiment stops on Ctrl-C as before
    monkeypatch.setattr(experiment, "_run_transports", interrupted_after(iterations("mrc", [0.1] * 2)))
    with pytest.raises(KeyboardInterrupt):
        experiment.run_experiment(SCENARIO, tmp_path)


def test_interrupted_before_the_first_iteration_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "_run_transports", interrupted_after([]))
    with pytest.raises(experiment.RunInterrupted) as stop:
        experiment.run_experiment(SCENARIO, tmp_path / "results")
    assert stop.value.path is None
    assert stop.value.line == "interrupted before any iteration was measured; no results written"
    assert not (tmp_path / "results").exists()


def test_partial_line_of_a_whole_run_and_of_a_damaged_entry():
    assert partial_line(RunConfig.from_dict({"fabric": {}})) is None
    assert partial_line(RunConfig.from_dict({PARTIAL: "yes"})) == "interrupted"
    entry = partial_entry(iterations("mrc", [0.1] * 20) + iterations("baseline", [0.1] * 3), ("mrc", "baseline"), 20)
    assert partial_line(RunConfig.from_dict({PARTIAL: entry})) == "interrupted after 20 of 20 mrc iterations, 3 of 20 baseline iterations"


@pytest.fixture
def partial_run(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "_run_transports", interrupted_after(iterations("mrc", [0.1] * 7)))
    with pytest.raises(experiment.RunInterrupted) as stop:
        experiment.run_experiment(SCENARIO, tmp_path)
    return stop.value.path


def test_the_report_says_a_run_is_partial(partial_run):
    out = io.StringIO()
    rec = report.print_run(partial_run, Console(file=out, width=200))
    assert ("partial run: interrupted after 7 of 20 mrc iterations, 0 of 20 baseline iterations; "
            "its figures cover what it completed") in out.getvalue()
    assert rec.problems == []


def test_a_notebook_says_a_run_is_partial(partial_run, capsys):
    nbs.read_run(partial_run)
    assert f"{partial_run}: partial run, interrupted after 7 of 20 mrc iterations" in capsys.readouterr().out
