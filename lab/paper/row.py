"""One row of a `lab/run.py paper` run: the paper's figure beside the lab's, with the
verdicts (lab/paper/runner.py makes it; paper.json holds it; lab/paper/rows.py reads it back).
The shape verdict is one of lab/paper/verdict.py's three ("same shape", "different shape", "not
resolvable here"), or "not run"; a row saved when it was a bool (same_shape) reads as one of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from lab.analysis.known_fields import known_fields
from lab.paper.verdict import NOT_RUN, SAME, from_same_shape

# the data plane of a row written before rows named theirs: every row then ran on srv6
OLDER_ROWS_DATAPLANE = "srv6"


@dataclass
class PaperRow:
    figure: str
    paper: str
    lab: dict                 # run label -> the lab's result for it
    verdict: str              # lab/paper/verdict.py: same shape, different shape, not resolvable here; or not run
    shape_reason: str
    trusted: bool
    trust_reason: str
    raw: dict = field(default_factory=dict)   # what the runner measured, the kind's own record
    dataplane: str = ""       # the data plane its runs ran on (or were to run on)
    not_run: str = ""         # why the row's runs did not run or finish (empty: they did)

    @classmethod
    def from_dict(cls, data: Mapping) -> "PaperRow":
        """A row as paper.json holds it; a field a row of another version lacks reads as
        nothing said (an empty text, no figures), but its data plane, srv6's, and its verdict:
        a row saved with a bool same_shape reads True as "same shape", False as "different
        shape" (lab/paper/verdict.py from_same_shape), one with neither as "different shape"."""
        empty = {"figure": "", "paper": "", "lab": {}, "shape_reason": "",
                 "trusted": False, "trust_reason": "", "raw": {}, "dataplane": OLDER_ROWS_DATAPLANE, "not_run": ""}
        fields = {**empty, **known_fields(cls, data)}
        if "verdict" not in fields:
            fields["verdict"] = from_same_shape(data["same_shape"] if "same_shape" in data else None, fields["not_run"])
        return cls(**fields)

    @property
    def same(self) -> bool:
        """Whether the row shows the paper's shape."""
        return self.verdict == SAME

    @classmethod
    def not_ran(cls, figure: str, paper: str, dataplane: str, reason: str, raw: dict | None = None) -> "PaperRow":
        """The row of `figure` whose runs did not run or finish on `dataplane`, and why (one line):
        no verdict but "not run" (its lab result says why)."""
        return cls(figure, paper, {}, NOT_RUN, NOT_RUN, False, NOT_RUN, raw or {}, dataplane, reason)
