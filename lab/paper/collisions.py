"""The ECMP-collisions rows of `lab/run.py paper` (Figs. 16 and 17): judged over several hash outcomes.

Which flows of the RoCE-like baseline collide is one hash outcome: the switches' hash seeds are
fixed per router, and a queue pair's UDP source port is a stable hash of its connection. The
row runs the 1-QP job over PASSES' `hash_outcomes` outcomes, re-drawing the queue pairs' source
ports (the transport parameter qp_port_salt), judges the figure's claim on their mean, and
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
from lab.paper.thresholds import at_least
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
                     expected: dict[int, float] | None = None) -> tuple[bool, str]:
    """The collisions row of `collective` judged against its own figure's claim, on the mean of the
    1-QP hash outcomes `roce1` (efficiencies); `expected`: qps -> expectation, printed beside."""
    if None in (mrc, roce16, mean(roce1)):
        return False, "no: a run finished no iteration"
    return COLLISION_CLAIMS[collective](mrc, list(roce1), roce16, expected or {})


def allreduce_collisions(mrc: float, roce1: list[float], roce16: float,
                         expected: dict[int, float]) -> tuple[bool, str]:
    """Fig. 16: more QPs help (16 QPs beat 1 QP's mean over its hash outcomes), and MRC with one
    connection is at least RoCE with 16 QPs. RoCE 1 QP's "~half" is printed beside its outcomes and
    their expectation on this fabric, not judged: it is the paper's average over a large cluster."""
    m1 = mean(roce1)
    facts = [f"16 QPs {'beat' if roce16 > m1 else 'did not beat'} 1 QP's mean ({roce16:.2f} vs {m1:.2f})",
             f"MRC {'>=' if at_least(mrc, roce16) else '<'} 16 QPs ({mrc:.2f} vs {roce16:.2f})"]
    same = roce16 > m1 and at_least(mrc, roce16)
    sixteen = "16 QPs: one outcome (they use every EV of the plane: no port to re-draw)"
    if 16 in expected:
        sixteen += f", fair shares would give {expected[16]:.2f} in expectation"
    return same, (f"{'yes' if same else 'no'}: {'; '.join(facts)}; 1 QP {outcomes_text(roce1, expected.get(1))} "
                  f"(paper: {ROCE_1QP_SHARE.words}, over a large cluster; not judged); {sixteen}")


def alltoall_collisions(mrc: float, roce1: list[float], roce16: float,
                        expected: dict[int, float]) -> tuple[bool, str]:
    """Fig. 17: ECMP collisions matter less in an all-to-all; RoCE with 16 QPs is slightly worse than
    with 1 QP. Same shape when 16 QPs are no better than 1 QP's mean (within the run-to-run noise)."""
    m1 = mean(roce1)
    same = at_least(m1, roce16)
    how = "worse than" if roce16 < m1 else ("within noise of" if same else "better than")
    ratio = f", x{roce16 / m1:.2f}" if m1 else ""
    return same, (f"{'yes' if same else 'no'}: 16 QPs {how} 1 QP's mean ({roce16:.2f} vs {m1:.2f}{ratio}; "
                  f"paper: {ALLTOALL_16QP_VS_1QP.words}); 1 QP {outcomes_text(roce1, expected.get(1))}; "
                  f"MRC reached {mrc:.2f}")


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
    same, why = collisions_shape(collective, eff[MRC], each, eff[roce_label(16)], expected)
    lab = {label: run_text(v) for label, v in eff.items()}
    lab[label1] = f"efficiency {outcomes_text(each, expected.get(REDRAWN_QPS))}"
    raw = {"runs": {label: run.to_dict() for label, run in runs.items()},
           "outcomes": {label1: [run.to_dict() for run in outcomes]},
           "expected": {roce_label(qps): asdict(ExpectedEfficiency(e.mean, e.how(), sorted(e.distribution.items())))
                        for qps, e in models.items()}}
    return PaperRow(collisions_title(collective), claim("collisions", collective).result, lab, same, why,
                    *trusted, raw)


def run_text(v: float | None) -> str:
    return "no iteration finished" if v is None else f"efficiency {v:.3f}"
