"""One row of a `lab/run.py paper` run: the paper's figure beside the lab's, with the
verdicts (lab/paper/runner.py makes it; paper.json holds it; lab/paper/rows.py reads it back)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from lab.analysis.known_fields import known_fields


@dataclass
class PaperRow:
    figure: str
    paper: str
    lab: dict                 # run label -> the lab's result for it
    same_shape: bool
    shape_reason: str
    trusted: bool
    trust_reason: str
    raw: dict = field(default_factory=dict)   # what the runner measured, the kind's own record

    @classmethod
    def from_dict(cls, data: Mapping) -> "PaperRow":
        """A row as paper.json holds it; a field a row of another version lacks reads as
        nothing said (an empty text, no verdict, no figures)."""
        empty = {"figure": "", "paper": "", "lab": {}, "same_shape": False, "shape_reason": "",
                 "trusted": False, "trust_reason": "", "raw": {}}
        return cls(**{**empty, **known_fields(cls, data)})
