"""The typed record of iterations.csv: one Iteration per collective iteration a job ran
(lab/runners/job.py makes them; lab/analysis/results.py writes and reads the file)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Iteration:
    """One iteration of one transport's job; times in seconds on the run's clock (the job's start: 0)."""

    transport: str
    iteration: int            # 0-based, in the job's order
    start: float
    end: float
    duration: float           # end - start, rounded as the runner measured it
    verified: bool            # every rank's buffer matched byte for byte
    rank_times: list = field(default_factory=list)   # [start, end] of each rank, in rank order
