"""A known-wrong answer to exercise 05: a right model, but the queue-pair count hard-coded from a run
whose MATCH was 0.85 (19 queue pairs on the grader's fabric), whatever this run's MATCH is."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "ex05_reference", Path(__file__).resolve().parents[3] / "exercises" / "solutions" / "05-ecmp-collisions"
    / "prediction.py")
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)

ring_share = _reference.ring_share
expected_share = _reference.expected_share
REASONING = _reference.REASONING


def qps_to_match(match: float, flows_per_t0: int, uplinks: int, t0s: int) -> int:
    return 19
