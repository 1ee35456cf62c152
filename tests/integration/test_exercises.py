"""Every exercise's grader on the lab (root): the reference solution PASSes, and the starting file and
known-wrong answers FAIL, on each data plane the exercise's README names.

Measure once, judge many: each exercise's reference is graded once per data plane with a fixed seed
into a results directory, and every answer whose judgement needs no run of its own is judged against
that measurement (`grade.py --measured DIR`, no fabric). An answer that is code the agents run (01's
policies, 02's interval) runs again, against the same yardstick where there is one. The wrong answers:

- the starting files (01: plain round robin runs and FAILs; the others FAIL before measuring anything);
- 01: a static policy that never uses odd EVs (right before the congestion moves, wrong after);
- 02: the lab's default interval, 0.02 s, over every drawn budget;
- 03, 05, 06: answers hard-coded from another seed's hidden parameters (tests/integration/exercise_answers/);
- 04: counters copied from another run (the "with trimming" column read for the other);
- 07: another seed's window and queueing delay copied; the queue taken to settle at NSCC's target with
  the windows sharing the bandwidth-delay product (the floor's queue forgotten);
- 08: another seed's run copied; the agents' plane floor forgotten (every dead route ASSUMED_BAD,
  wrong at the reference seed's gray T0); the denylist's routes to or from a rack taken for its own only;
- 09: a script whose figure is copied from another seed's run, and one whose figure is in another unit
  (busbw in Mb/s): scripts that run jobs, handed the reference's recorded jobs again (no fabric).

Exercises 05 and 06 run on srv6 only (their READMEs say why); 01-04 and 07-09 on srv6 and OpenFlow, the
OpenFlow runs covering the reference and, where one costs no run, a wrong answer.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"
ANSWERS = Path(__file__).resolve().parent / "exercise_answers"
SOLUTIONS = {
    "01-path-policy": "policy.py",
    "02-probe-interval": "choice.py",
    "03-baseline-stall": "prediction.py",
    "04-no-trimming": "answers.py",
    "05-ecmp-collisions": "prediction.py",
    "06-switch-down": "prediction.py",
    "07-nscc-incast": "prediction.py",
    "08-clustermapper": "answer.py",
    "09-capstone": "reproduce.py",
}
SEED = 6   # the reference runs' hidden parameters (01: the T1 the static policy avoids is congested first)
BOTH = ("srv6", "openflow")
DATAPLANES = {"01-path-policy": BOTH, "02-probe-interval": BOTH, "03-baseline-stall": BOTH,
              "04-no-trimming": BOTH, "05-ecmp-collisions": ("srv6",), "06-switch-down": ("srv6",),
              "07-nscc-incast": BOTH, "08-clustermapper": BOTH, "09-capstone": BOTH}


def grade(exercise: str, answer: Path, *options: str) -> subprocess.CompletedProcess:
    # the grader takes the lab lock itself; MRCLAB_LOCK_WAIT (tests/conftest.py) makes it queue
    return subprocess.run([sys.executable, str(EXERCISES / exercise / "grade.py"), str(answer), *options],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)


def verdict(r: subprocess.CompletedProcess) -> str | None:
    lines = r.stdout.strip().splitlines()
    return lines[-1] if lines else None


def passes(r):
    assert r.returncode == 0 and verdict(r) == "PASS", r.stdout[-3000:] + r.stderr[-3000:]


def fails(r):
    assert r.returncode == 1 and verdict(r) == "FAIL", r.stdout[-3000:] + r.stderr[-3000:]


def reference(exercise: str) -> Path:
    return EXERCISES / "solutions" / exercise / SOLUTIONS[exercise]


def starting(exercise: str) -> Path:
    return EXERCISES / exercise / SOLUTIONS[exercise]


def test_every_exercise_with_a_grader_has_a_solution():
    graded = sorted(p.parent.name for p in EXERCISES.glob("*/grade.py"))
    assert graded == sorted(SOLUTIONS)
    for name, file in SOLUTIONS.items():
        assert starting(name).is_file(), f"{name} has no starting file {file}"
        assert (EXERCISES / name / "README.md").is_file()


_measured: dict = {}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """(exercise, data plane) -> (the reference's grader run, its results directory, its bundle),
    graded once per module on first use."""
    def get(exercise: str, dataplane: str):
        key = (exercise, dataplane)
        if key not in _measured:
            out = tmp_path_factory.mktemp(f"{exercise}-{dataplane}")
            r = grade(exercise, reference(exercise), "--seed", str(SEED), "--dataplane", dataplane,
                      "--results", str(out / "results"), "--json", str(out / "bundle.json"))
            _measured[key] = (r, out / "results", out / "bundle.json")
        return _measured[key]
    return get


CASES = [(e, d) for e, planes in DATAPLANES.items() for d in planes]


@pytest.mark.parametrize("exercise, dataplane", CASES)
def test_reference_solution_passes(exercise, dataplane, measured):
    r, results, bundle = measured(exercise, dataplane)
    passes(r)
    assert f"seed {SEED}" in r.stdout
    written = json.loads(bundle.read_text())
    assert written["verdict"] == "PASS" and written["seed"] == SEED and written["dataplane"] == dataplane
    assert written["results"] == str(results) and written["commit"] and written["machine"]["cores"]
    assert isinstance(written["cpu_bound"], bool) and written["answer"]["text"]
    assert json.loads((results / "measured.json").read_text())["exercise"] == exercise


# ---- wrong answers judged against the reference's measurement: no fabric of their own --------------

@pytest.mark.parametrize("exercise", sorted(SOLUTIONS))
def test_starting_file_is_not_graded_pass(exercise, measured, tmp_path):
    if exercise == "01-path-policy":   # plain round robin: it runs, against the reference run's round robin
        r, results, _ = measured(exercise, "srv6")
        passes(r)
        fails(grade(exercise, starting(exercise), "--measured", str(results), "--results", str(tmp_path / "r")))
        return
    r = grade(exercise, starting(exercise))   # the others measure nothing and show no figure
    fails(r)
    assert "not filled in" in r.stdout and "seed" not in r.stdout and "results:" not in r.stdout
    assert not any(ch.isdigit() for line in r.stdout.splitlines()[1:] for ch in line), r.stdout


WRONG = {   # exercise -> answers that must FAIL against the reference's measurement
    "03-baseline-stall": ["ex03_copied_band.py", "ex03_stall_is_d.py"],
    "04-no-trimming": ["ex04_copied_counters.py"],
    "05-ecmp-collisions": ["ex05_copied_match.py"],
    "06-switch-down": ["ex06_copied_cases.py"],
    "07-nscc-incast": ["ex07_copied_run.py", "ex07_target_delay.py"],
    "08-clustermapper": ["ex08_copied_run.py", "ex08_always_retired.py", "ex08_own_rack_only.py"],
}


@pytest.mark.parametrize("exercise, dataplane, answer",
                         [(e, d, a) for e, answers in WRONG.items() for a in answers for d in DATAPLANES[e]])
def test_known_wrong_answer_fails(exercise, dataplane, answer, measured):
    r, results, _ = measured(exercise, dataplane)
    passes(r)
    wrong = grade(exercise, ANSWERS / answer, "--measured", str(results))
    fails(wrong)
    assert "no new run" in wrong.stdout


# ---- wrong answers that are code the agents run --------------------------------------------------

@pytest.mark.parametrize("dataplane", BOTH)
def test_a_static_policy_fails_once_the_congestion_moves(dataplane, measured, tmp_path):
    r, results, _ = measured("01-path-policy", dataplane)
    passes(r)
    wrong = grade("01-path-policy", ANSWERS / "static_policy.py", "--measured", str(results),
                  "--results", str(tmp_path / "r"))
    fails(wrong)
    assert "[FAILED] after the move" in wrong.stdout


@pytest.mark.parametrize("dataplane, answer", [(d, a) for d in BOTH for a in ("ex09_copied_figure.py",
                                                                             "ex09_wrong_unit.py")])
def test_a_capstone_figure_not_from_its_own_jobs_fails(dataplane, answer, measured, tmp_path):
    # 09's answers are scripts that run jobs: judged again, they are handed the reference's recorded jobs
    r, results, _ = measured("09-capstone", dataplane)
    passes(r)
    wrong = grade("09-capstone", ANSWERS / answer, "--measured", str(results), "--results", str(tmp_path / "r"))
    fails(wrong)
    assert "your script ran 2 job(s)" in wrong.stdout
    assert "[FAILED] figure.json's lossy_efficiency is the lab's" in wrong.stdout


def test_the_default_probe_interval_fails(tmp_path):
    wrong = grade("02-probe-interval", ANSWERS / "ex02_default_interval.py", "--seed", str(SEED),
                  "--results", str(tmp_path / "r"))
    fails(wrong)
    assert "[FAILED] probe overhead" in wrong.stdout


# ---- the results directory opens in a notebook ---------------------------------------------------

def test_notebook_02_opens_a_graders_results_directory(measured):
    import nbformat
    from nbclient import NotebookClient

    from lab.jupyter.notebook_cmd import NOTEBOOKS, ensure_kernel
    from lab.jupyter.notebook_support import RESULTS_ENV

    r, results, _ = measured("01-path-policy", "srv6")
    passes(r)
    book = nbformat.read(NOTEBOOKS / "02-mrc-vs-baseline.ipynb", as_version=4)
    env = dict(os.environ, **{RESULTS_ENV: str(results)})
    old = os.environ.copy()
    os.environ.update(env)
    try:
        NotebookClient(book, timeout=180, kernel_name=ensure_kernel(),
                       resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    printed = "".join(o.get("text", "") for c in book.cells for o in c.get("outputs", []))
    assert str(results) in printed and "problem(s)" not in printed
    out = results / "notebooks" / "02-mrc-vs-baseline"
    for png in ("iteration_timeline.png", "slowdown.png", "iteration_cdf.png"):
        assert (out / png).is_file() and (out / png).stat().st_size > 1000
