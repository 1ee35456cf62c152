"""The NIC-links-down row (Fig. 9c/9d) in numbers: host 0's link faults of each phase, the
phases found again in a bandwidth run's series and fault log, and each phase's rate against
the capacity it had left. Pure: the runner (lab/paper/runner.py) judges its run with it,
a run read back (lab/paper/rows.py) draws from it.
"""

from __future__ import annotations

import math

from faults.model import FaultEvent
from lab.paper import thresholds
from lab.paper.settings import LINKS_DOWN

ONE_BY_ONE, TOGETHER = "one by one", "together"


def link_timelines(step: float) -> dict:
    """how -> (host 0's link faults, phase count). One by one: phase k has k links down (k = 0..LINKS_DOWN),
    then all back; together: clean, LINKS_DOWN down at once, all back."""
    one_by_one = [FaultEvent(at=step * (k + 1), kind="link_flap", target=f"h0-eth{k}",
                             duration=step * (LINKS_DOWN - k)) for k in range(LINKS_DOWN)]
    together = [FaultEvent(at=step, kind="link_flap", target=f"h0-eth{k}", duration=step) for k in range(LINKS_DOWN)]
    return {ONE_BY_ONE: (one_by_one, LINKS_DOWN + 2), TOGETHER: (together, 3)}


def links_down_per_bin(fault_log: list, bins: int, bin_s: float) -> list[int | None]:
    """Host 0's links down throughout each bin, from the run's fault log (the timeline applies
    simultaneous faults one after another, each `ip` command tens of ms on a busy machine, so the
    log, not the plan, says when); None for a bin in which that number changed."""
    changes = sorted((e["t"], 1 if e["kind"] == "fault_start" else -1) for e in fault_log
                     if e["kind"] in ("fault_start", "fault_end"))
    counts = []
    for k in range(bins):
        start, end = k * bin_s, (k + 1) * bin_s
        changed = any(start <= t < end for t, _ in changes)
        counts.append(None if changed else sum(d for t, d in changes if t < start))
    return counts


def run_phases(run: dict, phase_s: float | None) -> list[tuple[int, float]]:
    """(links down, mean rate of both directions in Mb/s) of each phase of a bandwidth run
    (BandwidthResult.as_dict(), as the row keeps it) whose planned phases last phase_s (None: unknown,
    every steady run of bins is a phase)."""
    series = [sum(bins) for bins in zip(*(f["mbps"] for f in run["flows"]))]   # both directions, per bin
    # faults planned together are applied one after another; on a busy machine that takes several
    # bins, and the counts passed on the way are transitions, not phases
    min_bins = max(1, math.ceil(phase_s / run["bin_s"] / 2)) if phase_s else 1
    return phases(series, links_down_per_bin(run["fault_log"], len(series), run["bin_s"]), min_bins)


def phases(series: list[float], down: list[int | None], min_bins: int = 1) -> list[tuple[int, float]]:
    """(links down, mean rate) of each run of at least min_bins consecutive bins with the same,
    unchanging count."""
    out: list[tuple[int, list[float]]] = []
    for value, d in zip(series, down):
        if d is None:
            out.append((-1, []))        # a change closes the phase
        elif out and out[-1][0] == d:
            out[-1][1].append(value)
        else:
            out.append((d, [value]))
    return [(d, sum(v) / len(v)) for d, v in out if d >= 0 and len(v) >= min_bins]


def capacity_shares(measured: list[tuple[int, float]], planes: int) -> list[float]:
    """Each phase's rate / (the first, clean, phase's rate x the share of capacity left)."""
    if not measured or measured[0][0] != 0 or measured[0][1] <= 0:
        return []
    clean = measured[0][1]
    return [rate / (clean * (planes - d) / planes) for d, rate in measured]


def capacity_shape(shares: dict, planned: dict) -> tuple[bool, str]:
    """Fig. 9c/9d: every planned phase was measured and keeps at least PAPER_TRACKS_CAPACITY of what
    the capacity left allows (shares: how -> capacity_shares; planned: how -> phase count)."""
    short = {how: len(shares.get(how, [])) for how, count in planned.items() if len(shares.get(how, [])) != count}
    if short:
        return False, "no: " + ", ".join(f"{how} measured {n} of {planned[how]} phases" for how, n in short.items())
    worst = {how: min(s) for how, s in shares.items() if s}
    same = all(w >= thresholds.PAPER_TRACKS_CAPACITY for w in worst.values())
    return same, (f"{'yes' if same else 'no'}: the worst phase vs the capacity left: "
                  + ", ".join(f"{how} {w:.2f}" for how, w in worst.items())
                  + f" (follows it: >= {thresholds.PAPER_TRACKS_CAPACITY:g})")
