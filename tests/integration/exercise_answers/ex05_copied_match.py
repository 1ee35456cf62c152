"""A known-wrong answer to exercise 05: a right model, but the queue-pair count hard-coded from a run
whose MATCH was 0.85 (19 queue pairs on the grader's fabric), whatever this run's MATCH is."""

# the grader (and the judges' unit tests) have imported exercises/grading.py before loading an answer
from grading import ROOT, load_module

_reference = load_module(ROOT / "exercises" / "solutions" / "05-ecmp-collisions" / "prediction.py", "ex05_reference")

ring_share = _reference.ring_share
expected_share = _reference.expected_share
REASONING = _reference.REASONING


def qps_to_match(match: float, flows_per_t0: int, uplinks: int, t0s: int) -> int:
    return 19
