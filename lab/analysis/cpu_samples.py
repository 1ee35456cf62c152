"""The fidelity monitor's samples (FidelitySample, lab/analysis/fidelity_sample.py): was
the run CPU-bound, and the busiest plane's rate."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from lab.analysis.fidelity_sample import FidelitySample


def cpu_totals(samples: Sequence[FidelitySample]) -> list[float]:
    """Total CPU use (%) of each sample: the mean over its cores (100 = every core busy); over
    several servers the busiest server's (any one saturated bounds the emulation)."""
    return [max([float(np.mean(cores)) for cores in (s.cpu_per_core, *s.server_cpu.values()) if cores] or [0.0])
            for s in samples]


CPU_BOUND_THRESHOLD = 85.0  # % of every core, mean over cores
CPU_BOUND_SHARE = 0.2       # of the samples


def cpu_bound(samples: Sequence[FidelitySample], threshold: float = CPU_BOUND_THRESHOLD,
              share: float = CPU_BOUND_SHARE) -> bool:
    """True if total CPU (mean over cores) was >= ``threshold`` % in >= ``share`` of the samples.

    Why: the emulated fabric, the switches' datapath and the Python agents
    share the same cores; a run that saturated them for a fifth of its time
    measured the CPU, not the transport. 85 %, not 100 %: ovs-vswitchd is
    one thread, so the datapath saturates before both cores do (measured by
    the scale sweep: 9 hosts ran at a median 85 % and reached only 0.69
    efficiency, 4 hosts at 67 % reach 0.92). No samples: False.
    """
    totals = cpu_totals(samples)
    if not totals:
        return False
    busy = sum(1 for t in totals if t >= threshold)
    return busy / len(totals) >= share


def samples_in_window(samples: Sequence[FidelitySample], start: float, end: float) -> list[FidelitySample]:
    """The samples that measured mostly [start, end] (seconds on the samples' own t scale).

    Why: a sample holds the CPU use of the interval before its t; the first
    one of a job covers the agents and workers starting, which pegs both cores
    for a few hundred ms whatever the transport does, and the last ones cover
    the teardown. A sample counts when the middle of its interval lies in the
    window. The interval is the samples' spacing; fewer than two samples, or
    none inside: all of them (a verdict on nothing would be no verdict)."""
    ts = [float(s.t) for s in samples]
    if len(ts) < 2:
        return list(samples)
    half = float(np.median(np.diff(ts))) / 2
    inside = [s for s, t in zip(samples, ts) if start <= t - half <= end]
    return inside or list(samples)


def peak_plane_mbps(samples: Sequence[FidelitySample]) -> float | None:
    """Highest fabric rate seen on any one plane (Mb/s), to compare with the link rate."""
    rates = [b for s in samples for b in s.plane_bps]
    return max(rates) / 1e6 if rates else None
