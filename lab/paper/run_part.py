"""The typed parts of a paper row: what the trust judgement (trust) reads of one run (RunVerdict),
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


def trust(runs: dict[str, RunVerdict]) -> tuple[bool, str]:
    """runs: label -> its RunVerdict. Trusted when every run is; otherwise the reason names the
    runs under each problem."""
    if not runs:
        return False, "no run"
    by_problem: dict[str, list[str]] = {}
    for label, verdict in runs.items():
        for problem in verdict.problems():
            by_problem.setdefault(problem, []).append(label)
    if not by_problem:
        return True, "yes: every run verified, not CPU-bound, no unexplained loss"
    return False, "no: " + "; ".join(f"{problem}: {', '.join(labels)}" for problem, labels in by_problem.items())


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
    sender_mbps: dict = field(default_factory=dict)   # incast sender -> mean Mb/s delivered to the target

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


@dataclass(frozen=True)
class PairFigures:
    """One pair's figures: one-way message latency (s, the median) and bandwidth (share of the
    NIC's capacity); the fabric's own one-way latency (s, half the median kernel ping, no agent
    in the path); each measurement's samples (s, one-way), for the confidence of a difference."""
    latency_s: float | None
    bandwidth_share: float | None
    verified: bool
    cpu_bound: bool
    unexplained_loss: int
    fabric_latency_s: float | None = None
    latency_samples_s: tuple = ()
    fabric_samples_s: tuple = ()
    latency_runs_s: tuple = ()      # each latency run's median one-way latency (s); empty: one run, latency_s

    @classmethod
    def from_dict(cls, data: Mapping) -> "PairFigures":
        return cls(**{"latency_s": None, "bandwidth_share": None, "verified": False, "cpu_bound": False,
                      "unexplained_loss": 0, **known_fields(cls, data)})

    def verdict(self) -> RunVerdict:
        return RunVerdict(self.verified, self.cpu_bound, self.unexplained_loss)


@dataclass(frozen=True)
class SwitchRecord:
    """The switch-down row's raw record (lab/paper/switch_rows.py)."""

    runs: dict = field(default_factory=dict)      # how -> BandwidthResult.as_dict(), the faulted plane's path events
    figures: dict = field(default_factory=dict)   # how -> lab/paper/switch_faults.py switch_figures()
    targets: dict = field(default_factory=dict)   # how -> the switch taken down
    phase_s: float | None = None

    @classmethod
    def from_dict(cls, data: Mapping) -> "SwitchRecord":
        return cls(**known_fields(cls, data))


@dataclass(frozen=True)
class SilentSwitchRecord:
    """The silent-T1 row's raw record (lab/paper/switch_rows.py silent_switch_row)."""

    runs: dict = field(default_factory=dict)      # run label -> BandwidthResult.as_dict(), the plane's path events
    figures: dict = field(default_factory=dict)   # run label -> lab/paper/silent_switch.py silent_figures()
    target: str = ""                              # the T1
    phase_s: float | None = None

    @classmethod
    def from_dict(cls, data: Mapping) -> "SilentSwitchRecord":
        return cls(**known_fields(cls, data))


@dataclass(frozen=True)
class PathLossRecord:
    """The path-loss row's raw record (lab/paper/switch_faults.py path_loss_figures(), and the run)."""

    run: dict = field(default_factory=dict)       # BandwidthResult.as_dict(), the faulted plane's path events
    held: float | None = None
    window: list | None = None
    route: list | None = None                     # [plane, T1] of the lossy link
    use: dict = field(default_factory=dict)       # "host->peer" -> route_use()
    p: float | None = None
    phase_s: float | None = None
    spines: int = LINKS_FABRIC.spines             # the fabric's, which says each EV's route

    @classmethod
    def from_dict(cls, data: Mapping) -> "PathLossRecord":
        return cls(**known_fields(cls, data))


@dataclass(frozen=True)
class StartupRun:
    """One job of the row: data packets each connection lost on the failed links' routes."""
    lost: dict = field(default_factory=dict)   # "host->peer" -> data packets lost on the failed routes
    elsewhere: int = 0                         # lost on every other route (none without other faults)
    verified: bool = False
    iterations: int = 0
    cpu_bound: bool = False
    unexplained_loss: int = 0                  # the conservation audit's, over the job and its faults

    @classmethod
    def from_dict(cls, data: Mapping) -> "StartupRun":
        return cls(**known_fields(cls, data))

    def verdict(self) -> RunVerdict:
        return RunVerdict(self.verified, self.cpu_bound, self.unexplained_loss)
