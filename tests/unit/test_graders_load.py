"""Every exercise grader loads (its module-level fabric and settings are built) without a lab:
a grader that fails at import fails its students before any check, and only the long integration
tests would say so otherwise."""

import importlib.util
import sys
from pathlib import Path

import pytest

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"


@pytest.mark.parametrize("grader", sorted(EXERCISES.glob("*/grade.py")), ids=lambda p: p.parent.name)
def test_every_grader_module_loads(grader, monkeypatch):
    monkeypatch.setenv("MRCLAB_LOCK_WAIT", "0")           # graders default it for themselves; not for the tests
    monkeypatch.syspath_prepend(str(grader.parent))      # a grader imports its folder's own helpers
    monkeypatch.syspath_prepend(str(EXERCISES))
    spec = importlib.util.spec_from_file_location(f"grader_{grader.parent.name.replace('-', '_')}", grader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)                       # runs nothing: main() is behind __main__
    assert callable(module.EXERCISE.measure) and callable(module.EXERCISE.judge)   # grade(EXERCISE) runs it
    sys.modules.pop(spec.name, None)
