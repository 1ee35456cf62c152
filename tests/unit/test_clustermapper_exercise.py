"""Exercise 08's judge without a fabric: a measurement shaped as its grader writes one (one gray element
of each kind, the mapper's records and the agents' route moves as measured) is PASSed by the reference
and FAILed by each known-wrong answer where its model is wrong (a denied rack's peer forgotten matters
only when one rack's T0 holds every gray link)."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"
ANSWERS = ROOT / "tests" / "integration" / "exercise_answers"
sys.path.insert(0, str(EXERCISES))
import grading  # noqa: E402

_spec = importlib.util.spec_from_file_location("grader_08", EXERCISES / "08-clustermapper" / "grade.py")
g = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(g)
FABRIC = grading.SMALL_FABRIC
START = 2.0
PLANE = 0   # not the copied run's plane 1


def deny(kind: str, plane: int, rack, t1) -> dict:
    return {"kind": "mapper_deny", "t": START + 0.8, "host": 0, "source": "mapper:h0",
            "element": {"kind": kind, "plane": plane, "rack": rack, "t1": t1, "host": None}}


def measurement(kind: str) -> dict:
    """What the grader measures for a gray element of `kind` on plane PLANE (rack 0, T1 1): the denials
    localise gives, and the route moves the reference runs showed (SUSPECT first, then DENIED with the
    mapper; without it ASSUMED_BAD, or SUSPECT held by the plane floor when a T0's uplinks all fail)."""
    hidden = {"kind": kind, "plane": PLANE, "rack": 0, "spine": 1, "start": START}
    links = g.gray(FABRIC, hidden)
    spines = sorted({int(name[-1]) for name in links})
    records = ([deny("t1", PLANE, None, 1)] if kind == "t1" else [deny("t0t1_link", PLANE, 0, s) for s in spines])
    routes = [(h, PLANE, s) for h in range(2) for s in spines]
    held = "SUSPECT" if kind == "t0" else "ASSUMED_BAD"
    on = [[START + 0.01, *r, "SUSPECT"] for r in routes] + [[START + 0.8, *r, "DENIED"] for r in routes]
    off = [[START + 0.01, *r, "SUSPECT"] for r in routes] + ([[START + 0.1, *r, held] for r in routes]
                                                              if held != "SUSPECT" else [])
    runs = {g.LABELS[True]: {"records": records, "moves": on, "durations": [0.1], "ok": True, "error": None},
            g.LABELS[False]: {"records": [], "moves": off, "durations": [0.1], "ok": True, "error": None}}
    return {"links": links, "fabric": g.fabric_of(FABRIC), "runs": runs, "hidden": hidden}


def verdict(answer_path: Path, kind: str) -> int:
    checks, _ = g.judge(grading.load_module(answer_path), measurement(kind))
    return grading.verdict_of(checks)


@pytest.mark.parametrize("kind", g.KINDS)
def test_the_reference_passes_every_kind_of_gray_element(kind):
    assert verdict(EXERCISES / "solutions" / "08-clustermapper" / "answer.py", kind) == 0


@pytest.mark.parametrize("answer, wrong_on", [("ex08_copied_run.py", g.KINDS), ("ex08_always_retired.py", ("t0",)),
                                              ("ex08_own_rack_only.py", ("link", "t0"))])
def test_each_wrong_answer_fails_where_its_model_is_wrong(answer, wrong_on):
    for kind in g.KINDS:
        assert verdict(ANSWERS / answer, kind) == (1 if kind in wrong_on else 0), kind


def test_the_starting_file_answers_nothing():
    assert len(g.missing(grading.load_module(EXERCISES / "08-clustermapper" / "answer.py"))) == 4
