"""Iteration times: percentiles, the clean median, stalls, what a fault cost an iteration
(definitions: docs/metrics.md)."""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from faults.catalog import kinds_where
from lab.analysis.fault_windows import FaultWindow
from lab.analysis.iteration_record import Iteration

DEFAULT_STALL_FACTOR = 2.0


def durations(iterations: Iterable[Iteration]) -> np.ndarray:
    """Durations (s) of the iterations, in the order given."""
    return np.array([float(it.duration) for it in iterations], dtype=float)


def percentiles(values: Sequence[float]) -> dict:
    """P50, P99, P100 (max) of ``values`` (numpy linear); None for no values."""
    if len(values) == 0:
        return {"p50_s": None, "p99_s": None, "p100_s": None}
    p50, p99, p100 = np.percentile(np.asarray(values, dtype=float), [50, 99, 100])
    return {"p50_s": float(p50), "p99_s": float(p99), "p100_s": float(p100)}


def clean_median(iterations: Sequence[Iteration], windows: Sequence[FaultWindow]) -> tuple[float | None, bool]:
    """(median duration of iterations overlapping no fault window, fell_back).

    Falls back to the median of all iterations (fell_back True) when every
    iteration overlaps a fault; (None, False) when there are no iterations.
    """
    if not iterations:
        return None, False
    _hit, clean = split_by_faults(iterations, windows)
    if clean:
        return float(np.median(clean)), False
    return float(np.median(durations(iterations))), True


def split_by_faults(iterations: Sequence[Iteration], windows: Sequence[FaultWindow]) -> tuple[list, list]:
    """(durations of the iterations overlapping a fault window, of those overlapping none).
    A busy machine's pauses are the conditions of the whole run, not a fault of the
    fabric: they split nothing, so the clean iterations ran under the same load."""
    pauses = kinds_where(lambda kind: kind.pauses_a_process)
    windows = [w for w in windows if w.fault not in pauses]
    hit, clean = [], []
    for it in iterations:
        (hit if any(w.overlaps(it.start, it.end) for w in windows) else clean).append(it.duration)
    return hit, clean


def iteration_cost(iterations: Sequence[Iteration], window: FaultWindow, reference: float | None) -> float | None:
    """What the fault cost the iteration it struck: that iteration (the one under way at the
    fault, else the next to start) less ``reference`` (the run's fault-free median); None when
    no iteration ran after the fault or there is no reference."""
    struck = next((it for it in sorted(iterations, key=lambda it: it.start) if it.end > window.start), None)
    if struck is None or reference is None:
        return None
    return struck.duration - reference


def stalls(iterations: Sequence[Iteration], reference: float | None, k: float = DEFAULT_STALL_FACTOR) -> list[int]:
    """Iteration numbers whose duration exceeds k x reference (the clean median)."""
    if reference is None:
        return []
    return [int(it.iteration) for it in iterations if it.duration > k * reference]
