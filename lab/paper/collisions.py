"""The ECMP-collisions rows of `lab/run.py paper` (Figs. 16 and 17): judged over several hash outcomes.

Which flows of the RoCE-like baseline collide is one hash outcome: the switches' hash seeds are
fixed per router, and a queue pair's UDP source port is a stable hash of its connection. The
row runs the 1-QP job over PASSES' `hash_outcomes` outcomes, re-drawing the queue pairs' source
ports (the transport parameter qp_port_salt), judges each part of the figure's claim that compares
with them on the 95 % interval of their mean (not resolvable here when the interval holds the
other side: on a fabric this small single draws range widely, and the verdict would flip), and
prints each outcome beside what fair shares of the links would give on the RoCE-like plane in
expectation (lab/paper/ecmp_expectation.py; the ring all-reduce only). lab/paper/runner.py
runs the experiments; this module judges them and makes the row.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict
from typing import Sequence

from lab.paper.ecmp_expectation import Expectation, expected_ring_efficiency
from lab.paper.figures import ALLTOALL_16QP_VS_1QP, ROCE_1QP_SHARE, claim
from lab.paper.row import PaperRow
from lab.paper.run_part import ExpectedEfficiency, ExperimentRun
from lab.paper.settings import MRC, PLACEMENT, REDRAWN_QPS, ROCE_FABRIC, ROCE_QPS, collisions_title, roce_label
from lab.paper import thresholds
from lab.paper.verdict import DIFFERENT, SAME, UNRESOLVABLE, Judged, combined, judged, mean_interval
from topologies.fabric import FabricSpec

# what each outcome re-draws, as the row and docs/paper.md say it
REDRAWN = "its queue pairs' source ports re-drawn"


def expectations(collective: str) -> dict[int, Expectation]:
    """qps -> the RoCE-like runs' efficiency expected over hash outcomes; the ring all-reduce only
    (the all-to-all's flows are not modelled)."""
    if collective != "allreduce":
        return {}
    spec = FabricSpec(**ROCE_FABRIC)
    return {qps: expected_ring_efficiency(spec, PLACEMENT, qps) for qps in ROCE_QPS}


def mean(outcomes: Sequence[float | None]) -> float | None:
    """The outcomes' mean efficiency; None when one finished no iteration (or there is none)."""
    if not outcomes or None in outcomes:
        return None
    return statistics.fmean(outcomes)


def outcomes_text(outcomes: Sequence[float | None], expected: float | None) -> str:
    """Each outcome's efficiency, their mean, and the expectation beside them."""
    each = ", ".join("no iteration" if v is None else f"{v:.2f}" for v in outcomes)
    m = mean(outcomes)
    text = f"over {len(outcomes)} hash outcomes ({REDRAWN}): {each}; mean {'-' if m is None else f'{m:.2f}'}"
    if expected is not None:
        text += f"; fair shares of the links would give {expected:.2f} in expectation"
    return text


# ---- pure judgements ------------------------------------------------------------------------------
def collisions_shape(collective: str, mrc: float | None, roce1: Sequence[float | None], roce16: float | None,
                     expected: dict[int, float] | None = None) -> Judged:
    """The collisions row of `collective` judged against its own figure's claim; `roce1`: the 1-QP
    efficiencies over the hash draws (a part that compares with them is judged on the 95 % interval of
    their mean, and is not resolvable here when that interval holds the other side: the verdict would
    flip between passes); `expected`: qps -> expectation, printed beside."""
    if None in (mrc, roce16, mean(roce1)):
        return judged(DIFFERENT, "a run finished no iteration")
    return COLLISION_CLAIMS[collective](mrc, list(roce1), roce16, expected or {})


def draws_text(roce1: list[float]) -> str:
    """The 1-QP draws' spread and the 95 % interval of their mean (or why there is none)."""
    interval = mean_interval(roce1)
    spread = f"single 1-QP draws {min(roce1):.2f}-{max(roce1):.2f}"
    if interval is None:
        return f"{spread}: one hash draw, no interval"
    return f"{spread}; {len(roce1)} draws put their mean at {interval[0]:.2f} (95 % interval {interval[1]:.2f}-{interval[2]:.2f})"


def above_draws(x: float, roce1: list[float], what: str) -> tuple[str, str]:
    """(verdict, text) of "x is above the 1-QP runs": SAME when above the 95 % interval of their mean,
    DIFFERENT when below it, UNRESOLVABLE inside it (or with one draw)."""
    interval = mean_interval(roce1)
    if interval is None:
        return UNRESOLVABLE, f"{what} ({x:.2f}) against one 1-QP hash draw ({roce1[0]:.2f}): one draw is not a baseline"
    _, low, high = interval
    if x > high:
        return SAME, f"{what} ({x:.2f}) above it"
    if x < low:
        return DIFFERENT, f"{what} ({x:.2f}) below it"
    return UNRESOLVABLE, f"{what} ({x:.2f}) inside it: {coin_flip()}"


def coin_flip() -> str:
    """Why draws that do not settle a side leave the verdict to the hash."""
    spec = FabricSpec(**ROCE_FABRIC)
    return (f"at {spec.hosts} hosts on {spec.spines} uplinks per rack which 1-QP flows collide is a coin flip, "
            "and these draws do not settle the side (the verdict would flip between passes)")


def allreduce_collisions(mrc: float, roce1: list[float], roce16: float,
                         expected: dict[int, float]) -> Judged:
    """Fig. 16: "one MRC QP spraying across 256 paths achieves better performance than 16 QPs" (MRC above
    16 QPs: a result below them is not the paper's, whatever the noise), and QP scaling "does indeed
    help" (16 QPs above the 1-QP draws' interval). RoCE 1 QP's "~half" is printed beside its draws and
    their expectation on this fabric, not judged: it is the paper's average over a large cluster; "very
    little gain beyond 8 QPs" is not measured (no 8-QP run)."""
    better = mrc > roce16
    helps, helps_text = above_draws(roce16, roce1, "16 QPs")
    verdict = combined([SAME if better else DIFFERENT, helps])
    sixteen = "16 QPs: one outcome (they use every EV of the plane: no port to re-draw)"
    if 16 in expected:
        sixteen += f", fair shares would give {expected[16]:.2f} in expectation"
    return judged(verdict, f"MRC {'above' if better else 'not above'} 16 QPs ({mrc:.2f} vs {roce16:.2f}; paper: "
                           f"better than 16 QPs); {draws_text(roce1)}: {helps_text} (paper: QP scaling helps); 1 QP "
                           f"{outcomes_text(roce1, expected.get(1))} (paper: {ROCE_1QP_SHARE.words}, over a large "
                           f"cluster; not judged); {sixteen}; 8 QPs not run (paper: very little gain beyond 8)")


def alltoall_collisions(mrc: float, roce1: list[float], roce16: float,
                        expected: dict[int, float]) -> Judged:
    """Fig. 17: "16 RoCE QPs per destination actually perform slightly worse than one QP" (16 QPs over
    1 QP's mean in [1 - PAPER_LITTLE, 1): below, by a little), and "for all message sizes MRC outperforms
    RoCE" (MRC above 16 QPs and above the 1-QP draws' interval). Each part that compares with the 1-QP
    draws is judged on the 95 % interval of their mean: the ratio's interval inside the band is the
    shape, outside it not, across its edge not resolvable here."""
    interval = mean_interval(roce1)
    band = (1 - thresholds.PAPER_LITTLE, 1.0)
    m1 = mean(roce1)
    if interval is None or interval[1] <= 0:
        worse, worse_text = UNRESOLVABLE, f"16 QPs / 1 QP x{roce16 / m1:.2f} against {len(roce1)} draw(s): no interval"
    else:
        low, high = roce16 / interval[2], roce16 / interval[1]
        inside = band[0] <= low and high < band[1]
        apart = high < band[0] or low >= band[1]
        worse = SAME if inside else DIFFERENT if apart else UNRESOLVABLE
        worse_text = (f"16 QPs / 1 QP's mean x{roce16 / m1:.2f} (over the interval x{low:.2f}-x{high:.2f}; paper: "
                      f"{ALLTOALL_16QP_VS_1QP.words}, x{band[0]:g} to below x1)"
                      + (f": {coin_flip()}" if worse == UNRESOLVABLE else ""))
    above16 = mrc > roce16
    above1, above1_text = above_draws(mrc, roce1, "MRC")
    verdict = combined([worse, SAME if above16 else DIFFERENT, above1])
    return judged(verdict, f"{draws_text(roce1)}; {worse_text}; MRC {'above' if above16 else 'not above'} 16 QPs "
                           f"({mrc:.2f} vs {roce16:.2f}), {above1_text} (paper: MRC outperforms RoCE)")


COLLISION_CLAIMS = {"allreduce": allreduce_collisions, "alltoall": alltoall_collisions}


# ---- the row --------------------------------------------------------------------------------------
def redrawn_label(k: int) -> str:
    """The trust verdict's name for the RoCE-like run of hash outcome k (k >= 1; 0 is the row's own)."""
    return f"{roce_label(REDRAWN_QPS)}, source ports re-drawn ({k})"


def redrawn_runs(outcomes: list[ExperimentRun]) -> dict[str, ExperimentRun]:
    """The runs of the re-drawn outcomes, by their trust labels (the first is the row's own run)."""
    return {redrawn_label(k): run for k, run in enumerate(outcomes) if k}


def collisions_row(collective: str, runs: dict[str, ExperimentRun], outcomes: list[ExperimentRun],
                   trusted: tuple[bool, str]) -> PaperRow:
    """The row of `collective`: `runs` by label (MRC, the multi-rail baseline, RoCE-like 1 and 16
    QPs, the 1 QP's being outcome 0), `outcomes` the 1-QP runs of every hash outcome, `trusted` the
    trust verdict over all of them."""
    label1 = roce_label(REDRAWN_QPS)
    eff = {label: run.efficiency for label, run in runs.items()}
    each = [run.efficiency for run in outcomes]
    models = expectations(collective)
    expected = {qps: e.mean for qps, e in models.items()}
    verdict, why = collisions_shape(collective, eff[MRC], each, eff[roce_label(16)], expected)
    lab = {label: run_text(v) for label, v in eff.items()}
    lab[label1] = f"efficiency {outcomes_text(each, expected.get(REDRAWN_QPS))}"
    raw = {"runs": {label: run.to_dict() for label, run in runs.items()},
           "outcomes": {label1: [run.to_dict() for run in outcomes]},
           "expected": {roce_label(qps): asdict(ExpectedEfficiency(e.mean, e.how(), sorted(e.distribution.items())))
                        for qps, e in models.items()}}
    return PaperRow(collisions_title(collective), claim("collisions", collective).result, lab, verdict, why,
                    *trusted, raw)


def run_text(v: float | None) -> str:
    return "no iteration finished" if v is None else f"efficiency {v:.3f}"
