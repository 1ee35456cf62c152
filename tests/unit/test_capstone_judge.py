"""Exercise 09's grader without a fabric: the scripts handed recorded jobs (its Replay), the figure the
grader computes from them, the checks of a script's figure.json, and the write-up check. The grader on
the lab: tests/integration/test_exercises.py."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"
ANSWERS = ROOT / "tests" / "integration" / "exercise_answers"
EXERCISE = "09-capstone"

sys.path.insert(0, str(EXERCISES))
import grading  # noqa: E402
from lab.scenario.record import buffer_bytes_from_mb  # noqa: E402


@pytest.fixture(scope="module")
def g():
    spec = importlib.util.spec_from_file_location("grader_09", EXERCISES / EXERCISE / "grade.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def figures_in_tmp(g, tmp_path, monkeypatch):
    # the grader writes each script's figure into a new temporary directory: the test's own here
    monkeypatch.setattr(g.tempfile, "tempdir", str(tmp_path))


def recorded(g, hidden: dict, free_s: float, lossy_s: float) -> dict:
    """An earlier measurement of the reference's two jobs, every iteration `free_s` and `lossy_s`
    (the lossy one's spread so that its median is lossy_s)."""
    job = {"buffer_bytes": buffer_bytes_from_mb(hidden["buffer_mb"]), "iterations": g.ITERATIONS}
    jobs = [{"label": "loss-free", "loss_rate": 0.0, "job": job, "durations": [free_s] * g.ITERATIONS,
             "verified": True, "error": None, "counters": {}},
            {"label": "lossy", "loss_rate": hidden["loss_rate"], "job": job,
             "durations": [lossy_s - 0.01, lossy_s, lossy_s, lossy_s + 0.05], "verified": True, "error": None,
             "counters": {}}]
    return {"jobs": jobs, "fabric": {"ranks": 2, "planes": 2, "link_mbps": 10.0}}


def judged(g, answer: Path, hidden: dict, earlier: dict):
    script = grading.load_module(answer)
    m = g.measure(grading.SMALL_FABRIC, hidden, script, earlier) | {"hidden": hidden}
    return g.judge(script, m)


HIDDEN = {"loss_rate": 0.01, "buffer_mb": 1}


def test_the_reference_passes_on_replayed_jobs_and_the_figure_is_the_records(g):
    checks, figures = judged(g, EXERCISES / "solutions" / EXERCISE / "reproduce.py", HIDDEN,
                             recorded(g, HIDDEN, 0.43, 0.50))
    assert all(ok for _, ok in checks), checks
    lab = g.lab_figures(recorded(g, HIDDEN, 0.43, 0.50) | {"hidden": HIDDEN})
    # 1 MiB over 2 ranks (bus factor 1) in 0.43 s against 2 x 10 Mb/s
    assert lab["loss_free_efficiency"] == pytest.approx(2**20 * 8 / 0.43 / 1e6 / 20)
    assert lab["kept"] == pytest.approx(0.43 / 0.50) and lab["verdict"] == "different shape"
    assert g.lab_figures(recorded(g, HIDDEN, 0.43, 0.45) | {"hidden": HIDDEN})["verdict"] == "same shape"


@pytest.mark.parametrize("answer, failed", [("ex09_copied_figure.py", "loss_free_efficiency"),
                                            ("ex09_wrong_unit.py", "lossy_efficiency")])
def test_a_figure_not_from_the_jobs_fails(g, answer, failed):
    checks, _ = judged(g, ANSWERS / answer, HIDDEN, recorded(g, HIDDEN, 0.43, 0.50))
    assert not dict(checks)[f"figure.json's {failed} is the lab's (the recorded jobs' figure)"]


def test_a_script_that_asks_for_other_jobs_than_recorded_is_told_to_run_again(g):
    other = {"loss_rate": 0.02, "buffer_mb": 1}   # the reference asks for 2 % loss, 1 % was recorded
    checks, figures = judged(g, EXERCISES / "solutions" / EXERCISE / "reproduce.py", other,
                             recorded(g, HIDDEN, 0.43, 0.50))
    assert not all(ok for _, ok in checks)
    assert any("grade without --measured" in line for line in figures)


def test_the_starting_file_waits_for_the_write_up_and_the_template_is_not_one(g, tmp_path):
    starting = grading.load_module(EXERCISES / EXERCISE / "reproduce.py")
    assert any("not written yet" in problem for problem in g.missing(starting))
    filled = tmp_path / "writeup.md"
    filled.write_text((EXERCISES / "solutions" / EXERCISE / "writeup.md").read_text())
    assert g.unfilled(filled) == []
    filled.write_text((EXERCISES / EXERCISE / "writeup.md").read_text().replace("## The setup", "## Setup"))
    assert any("no '## The setup' section" in problem for problem in g.unfilled(filled))


def test_the_hidden_parameters_repeat_with_the_seed_and_vary(g):
    draws = {json.dumps(g.draw(grading.hidden_rng(EXERCISE, seed), grading.SMALL_FABRIC), sort_keys=True)
             for seed in range(40)}
    assert len(draws) == len(g.LOSS_RATES) * len(g.BUFFERS_MB)
