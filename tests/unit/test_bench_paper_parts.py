"""No part takes the others down, and every part runs on the data plane asked for: `bench` and
`paper` (lab/cli.py) run their steps through run_steps (lab/runners/bench.py), where a step that
raises becomes a "not run" row and the steps after it still run, the table and the json are
written and the command exits 1; Ctrl-C still stops the whole command. The lab is stubbed:
each fabric a step asks for is recorded with the data plane it names."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from faults.injectors import FaultError
from lab.analysis.summary_record import TransportSummary
from lab.cli import app
from lab.paper import ev_balance, point_to_point, rows as paper_rows, runner, settings, startup, switch_rows, t0t1_links
from lab.paper.row import PaperRow
from lab.runners import bench
from lab.runners.bench import Figure, NotRun, StepFailure, run_steps
from lab.runners.job import JobError
from topologies.build import BuildError

NO_FABRIC = "stub: no fabric here"


def figure(name: str) -> Figure:
    return Figure(name, "1", "1", True)


def steps_of(*outcomes) -> list:
    """One step per outcome: a name yields its figure, an exception is raised after the figures before it."""
    def step(outcome):
        def run():
            for item in outcome:
                if isinstance(item, BaseException):
                    raise item
                yield figure(item)
        return run
    return [(f"s{k}", step(outcome)) for k, outcome in enumerate(outcomes)]


# ---- run_steps ------------------------------------------------------------------------------------
def test_a_failing_step_keeps_its_rows_ends_in_a_not_run_row_and_the_next_steps_run():
    said = []
    rows = run_steps("bench", steps_of(["a"], ["b", BuildError("lwt encapsulation type not supported")], ["c"]),
                     said.append, bench.not_run_figure)
    assert [r.name for r in rows] == ["a", "b", "s1 step", "c"]
    failed = rows[2]
    assert failed.ok is False and failed.not_run == "lwt encapsulation type not supported"
    assert failed.value == "not run: lwt encapsulation type not supported"
    assert "BuildError" in failed.raw["traceback"]
    assert "bench: s1 not run: lwt encapsulation type not supported" in said and "bench: s2..." in said


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), KeyboardInterrupt("signal 15")])
def test_ctrl_c_and_sigterm_stop_every_step(stop):
    ran = []
    steps = steps_of(["a"], [stop]) + [("s2", lambda: ran.append("s2") or iter(()))]
    with pytest.raises(KeyboardInterrupt):
        run_steps("bench", steps, lambda text: None, bench.not_run_figure)
    assert ran == []


@pytest.mark.parametrize("exc, reason, traced", [
    (BuildError("configuring t0p0r0 failed:\nRTNETLINK answers: ..."), "configuring t0p0r0 failed:", True),
    (JobError("h1 exited 1"), "h1 exited 1", True),
    (KeyError("mrc"), "KeyError: 'mrc'", True),            # a Python error is named by its type
    (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero", True),
    (NotRun("needs the clean step's run, which did not finish"), "needs the clean step's run, which did not finish",
     False),                                                 # a statement, not an error: no traceback
    (FaultError(""), "no message", True),
])
def test_the_reason_is_one_line(exc, reason, traced):
    try:
        raise exc
    except Exception as raised:
        failure = StepFailure.of(raised)
    assert failure.reason == reason and "\n" not in failure.reason
    assert bool(failure.traceback) is traced


# ---- bench ------------------------------------------------------------------------------------------
def invoke(args: list[str], tmp_path) -> tuple:
    out = tmp_path / "out.json"
    done = CliRunner().invoke(app, [*args, "--results", str(tmp_path / "results"), "--json", str(out)])
    return done, (json.loads(out.read_text()) if out.exists() else None)


def test_bench_writes_every_row_and_the_json_and_exits_1_when_a_step_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(bench.Bench, "steps", lambda self: steps_of(["a"], [FaultError("no such link")], ["c"]))
    done, data = invoke(["bench", "--quick"], tmp_path)
    assert done.exit_code == 1, done.output
    assert [f["name"] for f in data["figures"]] == ["a", "s1 step", "c"]
    assert data["figures"][1]["not_run"] == "no such link" and data["figures"][1]["ok"] is False
    assert "MRC lab headline figures" in done.output and "not run" in done.output
    (run,) = (tmp_path / "results").iterdir()
    assert json.loads((run / "bench.json").read_text()) == data
    assert "| s1 step | not run: no such link | - | not run |" in (run / "bench.md").read_text()


def test_bench_exits_0_when_every_step_ran_and_passed(tmp_path, monkeypatch):
    monkeypatch.setattr(bench.Bench, "steps", lambda self: steps_of(["a"], ["b"]))
    done, data = invoke(["bench", "--quick"], tmp_path)
    assert done.exit_code == 0 and [f["not_run"] for f in data["figures"]] == ["", ""]


def test_ctrl_c_stops_the_bench_as_before_and_writes_nothing(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(bench.Bench, "steps", lambda self: steps_of(["a"], [KeyboardInterrupt()])
                        + [("s2", lambda: ran.append("s2") or iter(()))])
    done, data = invoke(["bench", "--quick"], tmp_path)
    assert done.exit_code == 130, done.output     # typer's answer to Ctrl-C, as before the steps were guarded
    assert ran == [] and "bench: s2" not in done.output and data is None
    assert not list((tmp_path / "results").glob("*/bench.json"))


class Recorder:
    """Stands in for the lab: every fabric asked for is recorded under the step that asked (from the
    `command: step...` line run_steps says), then refused as a fabric that cannot be built."""

    def __init__(self, command: str, steps: list[str]):
        self.command, self.steps, self.step, self.asked = command, steps, None, {}

    def say(self, text: str) -> None:
        starts = [name for name in self.steps if text == f"{self.command}: {name}..."]
        self.step = starts[0] if starts else self.step

    def fabric(self, spec) -> None:
        self.asked.setdefault(self.step, []).append(spec.dataplane)
        raise BuildError(NO_FABRIC)

    def session(self, spec, *args, **kwargs):
        self.fabric(spec)

    def experiment(self, scenario, *args, **kwargs):
        self.fabric(scenario.fabric)

    def experiments(self, scenarios, *args, **kwargs):
        self.fabric(scenarios[0].fabric)


BENCH_STEPS = [name for name, _ in bench.Bench(False, None).steps()]


def bench_stubbed(monkeypatch, recorder: Recorder) -> None:
    monkeypatch.setattr(bench, "lab_session", recorder.session)
    monkeypatch.setattr(bench, "run_experiment", recorder.experiment)
    monkeypatch.setattr(bench, "agent_step", lambda quick: iter([figure("agent data packets/s")]))


@pytest.mark.parametrize("quick", [True, False])
def test_every_bench_step_with_a_fabric_asks_for_the_data_plane_asked_for(tmp_path, monkeypatch, quick):
    recorder = Recorder("bench", BENCH_STEPS)
    bench_stubbed(monkeypatch, recorder)
    passes = bench.Bench(quick, tmp_path, recorder.say, dataplane="openflow")
    passes.clean = bench.BenchRun("", {"mrc": TransportSummary(p50_s=0.3, p100_s=0.4)}, None)   # the fault steps' reference
    figures = passes.run()
    fabric_steps = [name for name, _ in passes.steps() if name not in bench.NO_FABRIC_STEPS]
    assert "cc" in fabric_steps and recorder.asked == {name: ["openflow"] for name in fabric_steps}
    assert [f.name for f in figures if f.not_run] == [f"{name} step" for name in fabric_steps]
    assert all(f.not_run == NO_FABRIC for f in figures if f.not_run)


def test_a_fault_step_without_the_clean_run_says_so_and_runs_nothing(tmp_path, monkeypatch):
    recorder = Recorder("bench", BENCH_STEPS)
    bench_stubbed(monkeypatch, recorder)
    figures = bench.Bench(True, tmp_path, recorder.say, dataplane="openflow").run()
    why = {f.name: f.not_run for f in figures if f.not_run}
    assert why["clean step"] == NO_FABRIC
    assert why["flap step"] == why["gray-failure step"] == "needs the clean step's run, which did not finish"
    assert "flap" not in recorder.asked and recorder.asked["cc"] == ["openflow"]


def test_bench_on_openflow_builds_no_srv6_fabric_and_still_reports(tmp_path, monkeypatch):
    recorder = Recorder("bench", BENCH_STEPS)
    bench_stubbed(monkeypatch, recorder)
    monkeypatch.setattr("lab.cli.console.print", lambda text, **kw: recorder.say(str(text)))
    done, data = invoke(["bench", "--quick", "--dataplane", "openflow"], tmp_path)
    assert done.exit_code == 1
    assert set(recorder.asked) >= {"fabric", "clean", "incast", "cc"}
    assert {plane for planes in recorder.asked.values() for plane in planes} == {"openflow"}
    assert data["dataplane"] == "openflow" and data["figures"][0]["not_run"] == NO_FABRIC


def test_the_cc_rows_name_their_data_plane(tmp_path):
    clean = {cc: bench.BenchRun(str(tmp_path), {"mrc": TransportSummary(efficiency=0.9)}, None)
             for cc in bench.CC_COMPARED}
    (tmp_path / "counters.json").write_text(json.dumps({"mrc": {}}))
    run = SimpleNamespace(ratio=1.0, rtos=0, jain=1.0, verified=True, senders=["h1"], bytes_per_sender=1 << 20,
                          unexplained=0, victim_ratio=1.0, alone=None, incast=None, as_dict=lambda: {})
    names = [f.name for f in bench.cc_figures(clean, {cc: run for cc in clean}, {cc: run for cc in clean}, "openflow")]
    assert "openflow, MRC" in names[0] and "openflow, MRC" in names[1]


@pytest.mark.parametrize("args, planes", [(["--scale"], ["srv6", "openflow"]),
                                          (["--scale", "--dataplane", "openflow"], ["openflow"]),
                                          (["--scale", "--dataplane", "srv6"], ["srv6"])])
def test_the_scale_sweeps_only_the_data_plane_asked_for(tmp_path, monkeypatch, args, planes):
    monkeypatch.setenv("MRCLAB_PLAN_ONLY", "1")
    done, data = invoke(["bench", *args], tmp_path)
    assert done.exit_code == 0, done.output
    swept = list(dict.fromkeys(line.split(":")[0] for line in data["plan"] if " hosts/" in line))
    assert swept == planes
    assert any("default fabric check" in line for line in data["plan"]) is (len(planes) > 1)


@pytest.mark.parametrize("args", [["bench", "--scale", "--dataplane", "srv6", "--update-readme"],
                                  ["bench", "--quick", "--dataplane", "openflow", "--update-readme"],
                                  ["paper", "--quick", "--dataplane", "openflow", "--update-readme"]])
def test_update_readme_keeps_the_pages_to_what_they_describe(tmp_path, monkeypatch, args):
    monkeypatch.setenv("MRCLAB_PLAN_ONLY", "1")
    done, _ = invoke(args, tmp_path)
    assert done.exit_code == 2 and "--update-readme writes" in done.output


# ---- paper ------------------------------------------------------------------------------------------
def paper_stubbed(monkeypatch, recorder: Recorder) -> None:
    for module in (runner, switch_rows, startup, point_to_point, t0t1_links, ev_balance):
        monkeypatch.setattr(module, "lab_session", recorder.session)
    monkeypatch.setattr(runner, "run_experiment", recorder.experiment)
    monkeypatch.setattr(runner, "run_experiments", recorder.experiments)


def kinds() -> dict[str, str]:
    """title -> kind of every row."""
    return {title: kind for kind, _, title in settings.row_titles()}


def test_every_paper_row_runs_on_the_data_plane_asked_for_or_says_why_not(tmp_path, monkeypatch):
    recorder = Recorder("paper", list(kinds()))
    paper_stubbed(monkeypatch, recorder)
    rows = runner.Paper(quick=True, root=tmp_path, say=recorder.say, dataplane="openflow").run()
    assert [r.figure for r in rows] == list(kinds())
    assert all(r.dataplane == "openflow" and r.not_run for r in rows)
    needs_srv6 = {title for title, kind in kinds().items() if settings.unmet_needs(kind, "openflow")}
    assert {kinds()[t] for t in needs_srv6} == {"collisions", "loss", "incast", "sizes"}
    for row in rows:
        if row.figure in needs_srv6:
            assert row.not_run.startswith("needs the srv6 data plane: for the RoCE-like baseline, openflow does not")
            assert row.figure not in recorder.asked and "traceback" not in row.raw
        else:   # it asked for its fabric on openflow, which the stub refused
            assert recorder.asked[row.figure] == ["openflow"] and row.not_run == NO_FABRIC, row.figure


def test_on_srv6_every_paper_row_asks_for_srv6(tmp_path, monkeypatch):
    recorder = Recorder("paper", list(kinds()))
    paper_stubbed(monkeypatch, recorder)
    rows = runner.Paper(quick=True, root=tmp_path, say=recorder.say).run()
    assert recorder.asked == {title: ["srv6"] for title in kinds()}
    assert all(r.not_run == NO_FABRIC and r.dataplane == "srv6" for r in rows)


def made_row(title: str) -> PaperRow:
    return PaperRow(title, "claim", {"MRC": "efficiency 0.9"}, True, "yes", True, "yes", {"k": 1})


def test_paper_writes_every_row_and_the_json_and_exits_1_when_a_row_fails(tmp_path, monkeypatch):
    failing = settings.links_title()

    def makers(self):
        def make(kind):
            def row(what):
                title = next(t for k, w, t in settings.row_titles() if (k, w) == (kind, what))
                if title == failing:
                    raise JobError("h0 exited 1: Traceback ...")
                yield made_row(title)
            return row
        return {kind: make(kind) for kind in {k for k, _, _ in settings.row_titles()}}

    monkeypatch.setattr(runner.Paper, "row_makers", makers)
    done, data = invoke(["paper", "--quick", "--dataplane", "openflow"], tmp_path)
    assert done.exit_code == 1, done.output
    saved = {r["figure"]: r for r in data["rows"]}
    assert list(saved) == list(kinds()) and data["dataplane"] == "openflow"
    assert saved[failing]["not_run"] == "h0 exited 1: Traceback ..." and saved[failing]["lab"] == {}
    ran = [r for r in data["rows"] if not r["not_run"]]
    assert {kinds()[r["figure"]] for r in ran} == {"links", "flaps", "switches", "silent_switch", "path_loss", "p2p",
                                                   "startup", "t0t1_links", "ev_balance"} - {"links"}
    assert all(r["dataplane"] == "openflow" and r["raw"] == {"k": 1} for r in ran)
    (run,) = (tmp_path / "results").iterdir()
    md = (run / "paper.md").read_text()
    assert md.startswith("`lab/run.py paper --quick --dataplane openflow` on ")
    assert f"| {failing} |" in md and "not run on openflow: h0 exited 1: Traceback ... | not run | not run |" in md
    assert "| on openflow: MRC: efficiency 0.9 |" in md
    assert "The MRC paper's experiments on the lab" in done.output


def test_a_paper_run_read_back_draws_only_the_rows_that_ran(tmp_path):
    rows = [made_row(settings.links_title()),
            PaperRow.not_ran(settings.incast_title(), "claim", "openflow", "needs the srv6 data plane: ...")]
    (tmp_path / "paper.json").write_text(json.dumps(runner.to_json(rows, {"quick": True, "dataplane": "openflow"})))
    run = paper_rows.read(tmp_path)
    assert run.found("links") and run.found("incast") == []
    assert [r.figure for r in run.not_run()] == [settings.incast_title()]
    assert settings.incast_title() not in run.missing()
    assert run.command == "sudo python lab/run.py paper --quick --dataplane openflow"


def test_the_paper_plan_names_the_rows_that_cannot_run_and_why():
    on_srv6, on_openflow = runner.plan(quick=True), runner.plan(quick=True, dataplane="openflow")
    assert on_srv6 == [line for lines in runner.planned(quick=True).values() for line in lines]
    assert not any("paper-" in line for line in on_openflow)     # no collisions or loss experiment
    skipped = [line for line in on_openflow if "not run on openflow" in line]
    assert [line.split(" rows")[0] for line in skipped] == ["collisions", "loss", "incast", "sizes"]
    assert runner.planned(quick=True)["links"][0] in on_openflow
