"""A known-wrong answer to exercise 08: the reference's localisation and denial, but a plausible wrong
model of the agents without the mapper: every dead route is retired (ASSUMED_BAD), the plane floor
(mrc_host/path_health.py: no plane's last route retired on timeouts alone) forgotten. Right when one
route per plane dies (a link, a T1), wrong when a T0's uplinks all go gray."""

# the grader (and the judges' unit tests) have imported exercises/grading.py before loading an answer
from grading import ROOT, load_module

_reference = load_module(ROOT / "exercises" / "solutions" / "08-clustermapper" / "answer.py", "ex08_reference")

gray_links = _reference.gray_links
routes_denied = _reference.routes_denied
FIRST_TO_ACT = _reference.FIRST_TO_ACT


def state_without_mapper(links: list, fabric: dict) -> str:
    return "ASSUMED_BAD"


REASONING = """A dead route is retired."""
