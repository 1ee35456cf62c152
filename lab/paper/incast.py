"""Fig. 18 of the MRC paper on the lab: a 7-to-1 incast beside a victim flow into the target's rack
(a row of `lab/run.py paper`; lab/paper/runner.py runs it). Pure: the rule, in the claim's three
parts, and the texts.

The paper: "MRC (Fig. 18c) almost perfectly shares the bottleneck link among the incast flows and
has no impact on the victim flow"; RoCE with DCQCN, "With a single QP (Fig. 18a), victim-flow
performance still degrades by about 25%. With eight QPs (Fig. 18b), sharing is worse, but the
average impact on the victim flow is smaller". And in the appendix, with PFC alone "the victim
flow only achieving 30 to 100Gbps" of 400. A RoCE-like baseline whose victim keeps no more than
that behaves as PFC alone, whatever its congestion control is called: the third part cannot be
shown with it, and the rule says so.
"""

from __future__ import annotations

from typing import Mapping

from lab.paper import thresholds
from lab.paper.run_part import VictimFigures
from lab.paper.settings import INCAST_ROCE_CC, INCAST_ROCE_FABRIC, INCAST_ROCE_QPS, MRC, roce_label
from lab.paper.verdict import DIFFERENT, SAME, UNRESOLVABLE, Judged, combined, judged


def incast_roce_label(qps: int) -> str:
    """The row's label of its RoCE-like run with `qps` queue pairs."""
    return roce_label(qps, INCAST_ROCE_FABRIC.link_mbps, INCAST_ROCE_CC)


def slowest_share(sender_mbps: Mapping[str, float]) -> str:
    """The slowest incast sender's rate as a share of the senders' mean (the fair share)."""
    rates = list(sender_mbps.values())
    if not rates or not sum(rates):
        return ""
    return f", the slowest sender at {min(rates) / (sum(rates) / len(rates)):.2f} of the fair share"


def sharing_part(mrc: VictimFigures) -> tuple[str, str]:
    """Part 1: MRC "almost perfectly shares the bottleneck link among the incast flows": Jain's index over
    the incast senders at least PAPER_ALMOST_PERFECT_JAIN (their rates within a tenth of equal)."""
    line = thresholds.PAPER_ALMOST_PERFECT_JAIN
    if mrc.jain is None:
        return DIFFERENT, "MRC's incast senders delivered nothing to share"
    ok = mrc.jain >= line
    return (SAME if ok else DIFFERENT,
            f"MRC's Jain over the incast senders {mrc.jain:.3f}{slowest_share(mrc.sender_mbps)} (\"almost "
            f"perfectly shares\": >= {line:.3f}, rates within a tenth of equal: {'yes' if ok else 'no'})")


def victim_part(mrc: VictimFigures) -> tuple[str, str]:
    """Part 2: MRC "has no impact on the victim flow": it keeps at least PAPER_NO_DEGRADATION of its rate alone."""
    line = thresholds.PAPER_NO_DEGRADATION
    if mrc.victim_ratio is None:
        return DIFFERENT, "MRC's victim delivered nothing alone"
    ok = mrc.victim_ratio >= line
    return (SAME if ok else DIFFERENT,
            f"MRC's victim kept {mrc.victim_ratio:.2f} of its rate alone (\"no impact\": >= {line:g}: "
            f"{'yes' if ok else 'no'})")


def roce_part(one: VictimFigures | None, many: VictimFigures | None) -> tuple[str, str]:
    """Part 3: RoCE + DCQCN with 1 QP degrades the victim "by about 25%" (it keeps 0.75 within
    PAPER_ABOUT), with more QPs "the average impact on the victim flow is smaller" (it keeps more).
    Not resolvable here when a RoCE-like victim keeps no more than PFC alone leaves it
    (PAPER_PFC_ONLY_VICTIM): the baseline does not act as DCQCN does."""
    qps = INCAST_ROCE_QPS
    if one is None or many is None or one.victim_ratio is None or many.victim_ratio is None:
        return UNRESOLVABLE, "the RoCE-like victims were not both measured"
    kept = f"RoCE-like + {INCAST_ROCE_CC.upper()}'s victim kept {one.victim_ratio:.2f} ({qps[0]} QP), " \
           f"{many.victim_ratio:.2f} ({qps[-1]} QPs) of its rate alone"
    pfc = thresholds.PAPER_PFC_ONLY_VICTIM
    if min(one.victim_ratio, many.victim_ratio) <= pfc:
        return UNRESOLVABLE, (f"{kept}: no more than PFC alone leaves it (the appendix: 30 to 100 of 400 Gb/s, at "
                              f"most {pfc:g}), so the baseline acts as PFC alone, not as DCQCN (per-QP rates cut by "
                              "CNPs and recovering), and Fig. 18a/b's contrast cannot be shown with it")
    target = 1 - thresholds.PAPER_ROCE_VICTIM_DEGRADED
    about = abs(one.victim_ratio - target) <= thresholds.PAPER_ABOUT
    smaller = many.victim_ratio > one.victim_ratio
    return (SAME if about and smaller else DIFFERENT,
            f"{kept} (1 QP \"degrades by about 25%\": {target - thresholds.PAPER_ABOUT:.2f}-"
            f"{target + thresholds.PAPER_ABOUT:.2f}: {'yes' if about else 'no'}; {qps[-1]} QPs \"smaller\" impact: "
            f"{'yes' if smaller else 'no'})")


def incast_shape(figures: Mapping[str, VictimFigures]) -> Judged:
    """Fig. 18, its three parts judged apart and combined (lab/paper/verdict.py combined):
    figures: run label -> its VictimFigures (MRC's; the RoCE-like ones by incast_roce_label)."""
    mrc = figures.get(MRC)
    if mrc is None:
        return judged(DIFFERENT, "MRC did not run")
    parts = [sharing_part(mrc), victim_part(mrc),
             roce_part(figures.get(incast_roce_label(INCAST_ROCE_QPS[0])),
                       figures.get(incast_roce_label(INCAST_ROCE_QPS[-1])))]
    return judged(combined(v for v, _ in parts), "; ".join(f"({k}) {text}" for k, (_, text) in enumerate(parts, 1)))


def victim_text(r) -> str:
    if r.error or r.victim_ratio is None:
        return f"incomplete: {r.error or 'the victim delivered nothing alone'}"
    jain = "-" if r.jain is None else f"{r.jain:.2f}"
    return (f"victim kept {r.victim_ratio:.2f} ({r.victim_mbps:.1f} of {r.victim_alone_mbps:.1f} Mb/s); "
            f"Jain over the senders {jain}")
