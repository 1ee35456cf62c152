"""The typed parts of a paper row: what the trust judgement reads of one run (RunVerdict),
one experiment's run of a transport (ExperimentRun), and the figures lab/paper/rows.py
reads back from a row's raw record as paper.json holds it.

A raw record is written as plain JSON (``to_dict()``); reading one back keeps the fields
the record knows and gives a field an older row lacks its default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from lab.analysis.known_fields import known_fields
from lab.analysis.summary_record import TransportSummary
from lab.paper.settings import LINKS_FABRIC


@dataclass(frozen=True)
class RunVerdict:
    """What makes one run trustworthy: verified, not CPU-bound, no unexplained loss."""

    verified: bool
    cpu_bound: bool
    unexplained_loss: int

    def problems(self) -> list[str]:
        """What makes the run untrustworthy (empty: nothing)."""
        return [problem for problem, present in (("not verified", not self.verified), ("CPU-bound", self.cpu_bound),
                                                 ("unexplained loss", bool(self.unexplained_loss))) if present]


@dataclass(frozen=True)
class ExperimentRun:
    """One transport's run of a paper experiment: its summary and the results directory it wrote."""

    summary: TransportSummary
    results: str

    @property
    def efficiency(self) -> float | None:
        return self.summary.efficiency

    def verdict(self) -> RunVerdict:
        return RunVerdict(self.summary.verified, self.summary.cpu_bound, self.summary.unexplained_loss)

    def to_dict(self) -> dict:
        """As a row's raw record holds it: the summary's figures and the results path beside them."""
        return {**self.summary.to_dict(), "results": self.results}


def efficiency_in(part: Mapping) -> float | None:
    """The efficiency of an ExperimentRun as a raw record holds it (None: no iteration finished)."""
    return TransportSummary.from_dict(part).efficiency


@dataclass(frozen=True)
class ExpectedEfficiency:
    """A run's efficiency expected over hash outcomes (lab/paper/ecmp_expectation.py), as a raw record holds it."""

    mean: float | None = None
    how: str = ""                                        # exact, or sampled
    distribution: list = field(default_factory=list)     # [efficiency, probability] of each outcome

    @classmethod
    def from_dict(cls, data: Mapping) -> "ExpectedEfficiency":
        return cls(**known_fields(cls, data))


@dataclass(frozen=True)
class CollisionsRecord:
    """An ECMP-collisions row's raw record (lab/paper/collisions.py); a row written before it ran
    several hash outcomes has its runs only."""

    runs: dict = field(default_factory=dict)       # label -> ExperimentRun.to_dict()
    outcomes: dict = field(default_factory=dict)   # label -> [ExperimentRun.to_dict() of each hash outcome]
    expected: dict = field(default_factory=dict)   # label -> ExpectedEfficiency as a dict

    @classmethod
    def from_dict(cls, data: Mapping) -> "CollisionsRecord":
        return cls(**known_fields(cls, data))


@dataclass(frozen=True)
class LinksRecord:
    """The NIC-links row's raw record; a row written before it kept its plane count ran on
    LINKS_FABRIC, and one written before it kept its phase length has none."""

    runs: dict = field(default_factory=dict)      # how -> BandwidthResult.as_dict()
    planes: int = LINKS_FABRIC.planes
    phase_s: float | None = None

    @classmethod
    def from_dict(cls, data: Mapping) -> "LinksRecord":
        return cls(**known_fields(cls, data))


@dataclass(frozen=True)
class VictimFigures:
    """The figures of one run of the incast-with-a-victim row (VictimIncastResult.as_dict())."""

    victim_ratio: float | None = None
    jain: float | None = None

    @classmethod
    def from_dict(cls, data: Mapping) -> "VictimFigures":
        return cls(**known_fields(cls, data))


@dataclass(frozen=True)
class FlapRecord:
    """The flap row's raw record: data packets lost per flap and connection."""

    costs: list = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Mapping) -> "FlapRecord":
        return cls(**known_fields(cls, data))
