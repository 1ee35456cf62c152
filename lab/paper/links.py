"""The NIC-links-down row (Figs. 9a/9b) in numbers: host 0's link faults of each phase, the
phases found again in a bandwidth run's series and fault log, each phase's rate against
the capacity it had left, and how long the rate dipped around each change of the links up.
Pure: the runner (lab/paper/runner.py) judges its run with it, a run read back
(lab/paper/rows.py) draws from it.
"""

from __future__ import annotations

import math
from typing import Callable

from faults.model import FaultEvent
from lab.paper import thresholds
from lab.paper.settings import LINKS_DOWN
from lab.paper.verdict import DIFFERENT, Judged, judged, shape
from topologies.fabric import FabricSpec

ONE_BY_ONE, TOGETHER = "one by one", "together"


def link_timelines(step: float) -> dict:
    """how -> (host 0's link faults, phase count). One by one, as Fig. 9a: phase k has k links down
    (k = 0..LINKS_DOWN), then the last one down comes back first, a phase each, back to none;
    together (the lab's own): clean, LINKS_DOWN down at once, all back."""
    one_by_one = [FaultEvent(at=step * (k + 1), kind="link_flap", target=f"h0-eth{k}",
                             duration=step * (2 * (LINKS_DOWN - k) - 1)) for k in range(LINKS_DOWN)]
    together = [FaultEvent(at=step, kind="link_flap", target=f"h0-eth{k}", duration=step) for k in range(LINKS_DOWN)]
    return {ONE_BY_ONE: (one_by_one, 2 * LINKS_DOWN + 1), TOGETHER: (together, 3)}


def links_pair(spec: FabricSpec) -> tuple[int, int]:
    """The bandwidth test's hosts: host 0 and the next host of its rack, T0-local, as the paper's Figs. 9a/9b
    ran ib_write_bw "between two T0-local NICs" (host 0's NIC links are the ones that go down)."""
    if spec.hosts_per_rack < 2:
        raise ValueError("a T0-local pair needs two hosts in a rack; the fabric has one")
    return 0, 1


def links_down_per_bin(fault_log: list, bins: int, bin_s: float) -> list[int | None]:
    """Host 0's links down throughout each bin, from the run's fault log (the timeline applies
    simultaneous faults one after another, each `ip` command tens of ms on a busy machine, so the
    log, not the plan, says when); None for a bin in which that number changed."""
    return [None if changed else down for down, changed, _ in _bin_walk(fault_log, bins, bin_s)]


def _bin_walk(fault_log: list, bins: int, bin_s: float) -> list[tuple[int, bool, int]]:
    """(links down as the bin starts, whether that number changed in it, the most down at any moment
    of it) for each bin, from the run's fault log."""
    steps = changes(fault_log)
    walked = []
    for k in range(bins):
        start, end = k * bin_s, (k + 1) * bin_s
        down = sum(d for t, d in steps if t < start)
        changed, peak, now = False, down, down
        for t, d in steps:
            if start <= t < end:
                changed, now = True, now + d
                peak = max(peak, now)
        walked.append((down, changed, peak))
    return walked


def run_phases(run: dict, phase_s: float | None) -> list[tuple[int, float]]:
    """(links down, mean rate of both directions in Mb/s) of each phase of a bandwidth run
    (BandwidthResult.as_dict(), as the row keeps it) whose planned phases last phase_s (None: unknown,
    every steady run of bins is a phase)."""
    series = both_directions(run)
    # faults planned together are applied one after another; on a busy machine that takes several
    # bins, and the counts passed on the way are transitions, not phases
    min_bins = max(1, math.ceil(phase_s / run["bin_s"] / 2)) if phase_s else 1
    return phases(series, links_down_per_bin(run["fault_log"], len(series), run["bin_s"]), min_bins)


def both_directions(run: dict) -> list[float]:
    """A bandwidth run's rate per bin, both directions together, in Mb/s."""
    return [sum(bins) for bins in zip(*(f["mbps"] for f in run["flows"]))]


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


def changes(fault_log: list) -> list[tuple[float, int]]:
    """(time, +1 for a link down, -1 for one up) of every change in a run's fault log, in order."""
    return sorted((e["t"], 1 if e["kind"] == "fault_start" else -1) for e in fault_log
                  if e["kind"] in ("fault_start", "fault_end"))


def most_down_per_bin(fault_log: list, bins: int, bin_s: float) -> list[int]:
    """The most links down at any moment of each bin."""
    return [peak for _, _, peak in _bin_walk(fault_log, bins, bin_s)]


def dips(series: list[float], fault_log: list, bin_s: float, clean: float, planes: int,
         left: Callable[[int], float] | None = None) -> list[tuple[float, float]]:
    """(time of the change, seconds the rate stayed below PAPER_TRACKS_CAPACITY of what the capacity
    left allows) around each bin in which the links up changed: the run of such bins that starts in
    that bin or the next (a change late in a bin shows in the next). Measured in whole bins: 0 means
    no bin fell below. left(links down): the share of capacity left (default: host 0's NIC links,
    one plane each, (planes - down) / planes)."""
    most = most_down_per_bin(fault_log, len(series), bin_s)
    share_left = left or (lambda down: (planes - down) / planes)
    low = [rate < thresholds.PAPER_TRACKS_CAPACITY * clean * share_left(down) for rate, down in zip(series, most)]
    first_in_bin = {}
    for t, _ in changes(fault_log):
        first_in_bin.setdefault(int(t // bin_s), t)
    return [(t, low_run(low, k) * bin_s) for k, t in first_in_bin.items()]


def low_run(low: list[bool], k: int) -> int:
    """How many low bins run on from bin k, or from bin k + 1 if k is not low (a change late in
    a bin shows in the next)."""
    start = next((j for j in (k, k + 1) if j < len(low) and low[j]), None)
    length = 0
    while start is not None and start + length < len(low) and low[start + length]:
        length += 1
    return length


def run_dips(run: dict, phase_s: float | None, planes: int) -> list[tuple[float, float]]:
    """dips() of a bandwidth run as the row keeps it, against its first, clean, phase's rate
    ([] without one)."""
    measured = run_phases(run, phase_s)
    if not measured or measured[0][0] != 0 or measured[0][1] <= 0:
        return []
    return dips(both_directions(run), run["fault_log"], run["bin_s"], measured[0][1], planes)


def capacity_shape(shares: dict, planned: dict, dipped: dict) -> Judged:
    """Figs. 9a/9b: "throughput decreases as links are taken offline one at a time and recovers as they
    are restored", "approximately half the nominal bandwidth when all four links are taken down": every
    planned phase was measured and its rate lies within PAPER_APPROXIMATELY of what the capacity left
    allows (a rate that does not drop with the links is not the paper's any more than one that drops
    too far), and no change of the links up dipped the rate below PAPER_TRACKS_CAPACITY of that for
    PAPER_DIP_UNDER_S or longer ("a brief interruption of less than a second"). shares: how ->
    capacity_shares; planned: how -> phase count; dipped: how -> dips."""
    short = {how: len(shares.get(how, [])) for how, count in planned.items() if len(shares.get(how, [])) != count}
    if short:
        return judged(DIFFERENT, ", ".join(f"{how} measured {n} of {planned[how]} phases" for how, n in short.items()))
    band = thresholds.PAPER_APPROXIMATELY
    worst = {how: (min(s), max(s)) for how, s in shares.items() if s}
    follows = all(thresholds.within(low, band) and thresholds.within(high, band) for low, high in worst.values())
    longest = {how: max((s for _, s in dipped.get(how, [])), default=None) for how in planned}
    measured = None not in longest.values()
    short_dips = measured and all(s < thresholds.PAPER_DIP_UNDER_S for s in longest.values())
    dip_text = ", ".join(f"{how} {'-' if s is None else f'{s:.1f} s'} over {len(dipped.get(how, []))} changes"
                         for how, s in longest.items())
    missing = "" if measured else "; a run has no change measured"
    return shape(follows and short_dips,
                 "each phase's rate against what the capacity left allows: "
                 + ", ".join(f"{how} {low:.2f}-{high:.2f}" for how, (low, high) in worst.items())
                 + f" (follows it, approximately: {band[0]:g}-{band[1]:g}: {'yes' if follows else 'no'}); the longest "
                 f"dip below {thresholds.PAPER_TRACKS_CAPACITY:g} of that around a change, in whole bins: {dip_text} "
                 f"(less than a second: < {thresholds.PAPER_DIP_UNDER_S:g} s: {'yes' if short_dips else 'no'}){missing}")


def links_text(measured: list[tuple[int, float]], shares: list[float], dips: list[tuple[float, float]]) -> str:
    """A links-down run (NIC or T0-T1 links): each phase's links down, rate and share of what the
    capacity left allows; then the dip at each change of the links up."""
    phases = ", ".join(f"{d} down {rate:.0f} Mb/s ({x:.2f})" for (d, rate), x in zip(measured, shares))
    return f"{phases}; dips at the changes " + ", ".join(f"{secs:.1f}" for _, secs in dips) + " s"
