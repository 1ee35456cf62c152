"""Figs. 9c/9d of the MRC paper: T0-T1 links taken down under a cross-T1 bandwidth test, one
after another and then several flapped together (a row of `lab/run.py paper`,
lab/paper/runner.py). The phase arithmetic is lab/paper/links.py's (a phase is a stretch of
bins with the same links down, from the run's fault log).

The lab takes down T0T1_LINKS links of host 0's rack, one per plane (the link to T1 0):
one by one, a phase each, then all back; and all of them at once for a phase. Each plane
keeps its other T1, and one T0-T1 link carries a host's whole NIC link, so the bandwidth test
between host 0 and a host of the other rack keeps all its capacity: what the paper's figures
show, "minimal impact on overall throughput even as active links are removed". (Across a
whole rack's hosts the fabric does lose capacity: with 2 T1s a plane's rack loses half its
uplinks, with the paper's many T1s a sliver; the test, like the paper's, loads a pair.)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator

from faults.model import FaultEvent
from lab.paper import thresholds
from lab.paper.figures import claim
from lab.paper.links import both_directions, dips, links_text, run_phases
from lab.paper.row import PaperRow
from lab.paper.settings import DATAPLANE, LINKS_FABRIC, MRC, MRC_PARAMS, PASSES, t0t1_links_title
from lab.paper.verdict import DIFFERENT, Judged, judged, shape
from lab.plumbing.session import lab_session
from lab.runners.bandwidth import run_bandwidth
from topologies.fabric import FabricSpec
from topologies.names import T0T1Link

ONE_BY_ONE, TOGETHER = "one by one", "together"


def failed_links(spec: FabricSpec) -> list[T0T1Link]:
    """Host 0's rack's link to T1 0 on every plane."""
    return [T0T1Link(plane, spec.rack_of(0), 0) for plane in range(spec.planes)]


def timelines(step: float, spec: FabricSpec) -> dict[str, tuple[list[FaultEvent], int]]:
    """how -> (the link faults, phase count). One by one, as Fig. 9c: phase k has k links down
    (k = 0..n), then all come back together; together, as Fig. 9d: clean, n down at once (for two
    steps), all back."""
    links = failed_links(spec)
    n = len(links)
    one_by_one = [FaultEvent(at=step * (k + 1), kind="link_flap", target=str(link), duration=step * (n - k))
                  for k, link in enumerate(links)]
    # all down for two steps: the eight flaps are set one after another, which took 0.45 s of a 1 s
    # phase on a quick pass (2026-12-07), leaving the all-down phase fewer bins than run_phases needs
    together = [FaultEvent(at=step, kind="link_flap", target=str(link), duration=2 * step) for link in links]
    return {ONE_BY_ONE: (one_by_one, n + 2), TOGETHER: (together, 3)}


def shares(measured: list[tuple[int, float]]) -> list[float]:
    """Each phase's rate / the first, clean, phase's: the test's capacity is whole throughout."""
    if not measured or measured[0][0] != 0 or measured[0][1] <= 0:
        return []
    return [rate / measured[0][1] for _, rate in measured]


def run_figures(run: dict, step: float) -> tuple[list[tuple[int, float]], list[float], list[tuple[float, float]]]:
    """(each phase's (links down, rate), its share of the clean rate, the dips at the changes) of one run."""
    measured = run_phases(run, step)
    kept = shares(measured)
    dipped = dips(both_directions(run), run["fault_log"], run["bin_s"], measured[0][1], 1, left=lambda _: 1.0) \
        if kept else []
    return measured, kept, dipped


def t0t1_shape(kept: dict[str, list[float]], planned: dict[str, int]) -> Judged:
    """Figs. 9c/9d in the paper's words, "minimal impact on overall throughput" and "negligible impact":
    every planned phase measured, and each kept at least PAPER_NO_DEGRADATION of the clean rate."""
    short = {how: len(kept.get(how, [])) for how, n in planned.items() if len(kept.get(how, [])) != n}
    if short:
        return judged(DIFFERENT, ", ".join(f"{how} measured {n} of {planned[how]} phases" for how, n in short.items()))
    worst = {how: min(s) for how, s in kept.items()}
    same = all(w >= thresholds.PAPER_NO_DEGRADATION for w in worst.values())
    return shape(same, "the worst phase kept " + ", ".join(f"{how} {w:.2f}" for how, w in worst.items())
                 + f" of the clean rate (minimal impact: >= {thresholds.PAPER_NO_DEGRADATION:g}: {'yes' if same else 'no'})")


def t0t1_row(quick: bool, say: Callable[[str], None], streams_trust: Callable,
             dataplane: str = DATAPLANE) -> Iterator[PaperRow]:
    step, spec = PASSES[quick].link_phase_s, replace(LINKS_FABRIC, dataplane=dataplane)
    plans = timelines(step, spec)
    say(f"paper: MRC bandwidth test, {len(failed_links(spec))} T0-T1 links of rack 0 down one by one, "
        "then together...")
    with lab_session(spec) as session:
        # each run goes on two steps past its last repair: the links' routes come back one after another
        runs = {how: run_bandwidth(session, max(f.at + f.duration for f in faults) + 2 * step, "mrc",
                                   dict(MRC_PARAMS), faults=faults)
                for how, (faults, _) in plans.items()}
    records = {how: r.as_dict() for how, r in runs.items()}
    kept, dipped, lab = {}, {}, {}
    for how, record in records.items():
        measured, kept[how], dipped[how] = run_figures(record, step)
        lab[f"{MRC}, {how}"] = links_text(measured, kept[how], dipped[how])
    verdict, why = t0t1_shape(kept, {how: count for how, (_, count) in plans.items()})
    ok, trust_why = streams_trust({f"{MRC}, {how}": r for how, r in runs.items()})
    yield PaperRow(t0t1_links_title(), claim("t0t1_links").result, lab, verdict, why, ok, trust_why,
                   {"shares": kept, "dips": dipped, "links": [str(link) for link in failed_links(spec)],
                    "phase_s": step, "runs": records})
