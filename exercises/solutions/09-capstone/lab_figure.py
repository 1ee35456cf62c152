"""Exercise 09's figure as the grader computes it from the runs' own records: the efficiency
(busbw / the fabric's line rate, nccl-tests' definition, lab/analysis/collective_bandwidth.py) of
the median iteration of the loss-free runs and of the lossy ones, the share of its loss-free rate
MRC kept, and the paper's verdict on it in its own words (lab/paper/verdict.py)."""

from __future__ import annotations

import statistics

from lab.analysis.collective_bandwidth import bandwidth
from lab.paper.thresholds import PAPER_LITTLE_IMPACT
from lab.paper.verdict import Judged, shape


def efficiency(durations: list[float], *, ranks: int, buffer_bytes: int, planes: int, link_mbps: float) -> float | None:
    """The efficiency of the median of `durations` (None: no iteration finished)."""
    if not durations:
        return None
    return bandwidth(statistics.median(durations), ranks=ranks, buffer_bytes=buffer_bytes, planes=planes,
                     link_mbps=link_mbps)["efficiency"]


def little_impact(kept: float, loss_rate: float) -> Judged:
    """Fig. 16's MRC claim: loss at every NIC "has little impact": MRC keeps at least PAPER_LITTLE_IMPACT
    of its loss-free rate."""
    holds = kept >= PAPER_LITTLE_IMPACT
    return shape(holds, f"MRC kept {kept:.3f} of its loss-free rate at {loss_rate * 100:g} % loss at every NIC "
                        f"(\"little impact\": >= {PAPER_LITTLE_IMPACT:g}: {'yes' if holds else 'no'})")
