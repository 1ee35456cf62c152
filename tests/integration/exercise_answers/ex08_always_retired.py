"""A known-wrong answer to exercise 08: the reference's localisation and denial, but a plausible wrong
model of the agents without the mapper: every dead route is retired (ASSUMED_BAD), the plane floor
(mrc_host/path_health.py: no plane's last route retired on timeouts alone) forgotten. Right when one
route per plane dies (a link, a T1), wrong when a T0's uplinks all go gray."""

import importlib.util
from pathlib import Path

_REFERENCE = Path(__file__).resolve().parents[3] / "exercises" / "solutions" / "08-clustermapper" / "answer.py"
_spec = importlib.util.spec_from_file_location("ex08_reference", _REFERENCE)
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)

gray_links = _reference.gray_links
routes_denied = _reference.routes_denied
FIRST_TO_ACT = _reference.FIRST_TO_ACT


def state_without_mapper(links: list, fabric: dict) -> str:
    return "ASSUMED_BAD"


REASONING = """A dead route is retired."""
