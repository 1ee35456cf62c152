"""Fig. 16's dashed lines on the lab: random loss at every NIC under the interleaved all-reduce (a row
of `lab/run.py paper` per loss level; lab/paper/runner.py runs the experiments). Pure: the rules and
the texts.

The paper: "MRC is more resilient - with large message sizes it can retransmit fast enough that 0.1%
loss has little impact", while "RoCE was not designed to be resilient to packet loss and, as
expected, it suffers poor performance"; "At 1% loss RoCE is pretty much ususable and even MRC only
gets around a third of the intended throughput". The lightest level is judged on the share of each
transport's own loss-free rate it keeps, MRC and RoCE each by its own words; 1 % on the share of the
intended (line) rate each reaches, MRC's "around a third" as a two-sided band.
"""

from __future__ import annotations

from typing import Mapping

from lab.analysis.summary_record import TransportSummary
from lab.paper import thresholds
from lab.paper.collisions import run_text
from lab.paper.settings import MRC, NIC_LOSS_LEVELS, ROCE_QPS, roce_label
from lab.paper.verdict import DIFFERENT, SAME, Judged, combined, judged


def loss_shape(p: float, kept: dict[str, float | None], lossy: dict[str, float | None],
               recovery: Mapping[str, str] | None = None) -> Judged:
    """Fig. 16 at loss level `p`: the paper's 0.1 % is the lightest level, its 1 % the other.
    kept: label -> share of its loss-free efficiency kept under the loss (None: no loss-free figure);
    lossy: label -> efficiency under the loss (None: no iteration finished); recovery: label -> what
    its run resent and why (loss_text's), the mechanism a "different shape" names."""
    if p <= min(NIC_LOSS_LEVELS):
        return light_loss_shape(kept, recovery)
    return heavy_loss_shape(lossy, recovery)


def roce_runs(runs: Mapping) -> list[str]:
    """The RoCE-like runs among a row's, fewest queue pairs first."""
    return [roce_label(q) for q in ROCE_QPS if roce_label(q) in runs]


def qps_of(label: str) -> str:
    """The queue pairs a RoCE-like run's label names ("1 QP"; settings.roce_label)."""
    return label.rsplit(", ", 1)[-1]


def mechanism(labels: list[str], recovery: Mapping[str, str] | None) -> str:
    """What the runs of `labels` resent under the loss and loss-free, as their lab cells say it."""
    known = [f"{label if label == MRC else qps_of(label)} {recovery[label]}" for label in labels
             if recovery and label in recovery]
    return f" ({'; '.join(known)})" if known else ""


def light_loss_shape(kept: dict[str, float | None], recovery: Mapping[str, str] | None = None) -> Judged:
    """Fig. 16 at 0.1 %, each transport by the paper's words: MRC "little impact" (keeps at least
    PAPER_LITTLE_IMPACT of its loss-free rate), RoCE "suffers poor performance" (every RoCE-like run keeps
    at most PAPER_LOSS_POOR of its own)."""
    roce = roce_runs(kept)
    if kept.get(MRC) is None or not roce or any(kept[label] is None for label in roce):
        return judged(DIFFERENT, "a loss-free run finished no iteration: nothing to keep a share of")
    little, poor = thresholds.PAPER_LITTLE_IMPACT, thresholds.PAPER_LOSS_POOR
    mrc_ok = kept[MRC] >= little
    roce_ok = all(kept[label] <= poor for label in roce)
    verdict = combined([SAME if mrc_ok else DIFFERENT, SAME if roce_ok else DIFFERENT])
    return judged(verdict, f"MRC kept {kept[MRC]:.2f} of its loss-free rate (\"little impact\": >= {little:g}: "
                           f"{'yes' if mrc_ok else 'no'}){'' if mrc_ok else mechanism([MRC], recovery)}; RoCE-like "
                           "kept " + ", ".join(f"{kept[label]:.2f} ({qps_of(label)})" for label in roce)
                  + f" (\"suffers poor performance\": <= {poor:g}: {'yes' if roce_ok else 'no'})"
                  + ("" if roce_ok else mechanism(roce, recovery)))


def heavy_loss_shape(lossy: dict[str, float | None], recovery: Mapping[str, str] | None = None) -> Judged:
    """Fig. 16 at 1 %, in the paper's denominator, the intended throughput (the line rate the job asked
    for, which an efficiency is a share of): RoCE "pretty much unusable" (every RoCE-like run reaches at
    most PAPER_LOSS_UNUSABLE of it), MRC "only gets around a third" (inside PAPER_AROUND_A_THIRD: 0.80 is
    not a third, nor is 0.2), and MRC above every baseline. A run that finished no iteration under the
    loss reached nothing."""
    reached = {label: eff or 0.0 for label, eff in lossy.items()}
    roce = roce_runs(reached)
    if MRC not in reached or not roce:
        return judged(DIFFERENT, "MRC or the RoCE-like baseline did not run under the loss")
    unusable = all(reached[label] <= thresholds.PAPER_LOSS_UNUSABLE for label in roce)
    low, high = thresholds.PAPER_AROUND_A_THIRD
    third = thresholds.within(reached[MRC], thresholds.PAPER_AROUND_A_THIRD)
    others = {label: eff for label, eff in reached.items() if label != MRC}
    best = max(others, key=others.get)
    above = reached[MRC] > others[best]
    verdict = combined(SAME if part else DIFFERENT for part in (unusable, third, above))
    roce_text = ", ".join(f"{reached[label]:.2f} ({qps_of(label)})" for label in roce)
    return judged(verdict, f"of the intended (line) rate, RoCE-like reached {roce_text} (\"pretty much unusable\": "
                           f"<= {thresholds.PAPER_LOSS_UNUSABLE:g}: {'yes' if unusable else 'no'})"
                           f"{'' if unusable else mechanism(roce, recovery)}; MRC {reached[MRC]:.2f} (\"only around "
                           f"a third\": {low:.2f}-{high:.2f}, nearer 1/3 than 1/4 or 1/2: {'yes' if third else 'no'})"
                           f"{'' if third else mechanism([MRC], recovery)}; MRC {'above' if above else 'not above'} "
                           f"every baseline (best: {best}, {others[best]:.2f})")


def kept(loaded: float | None, loss_free: float | None) -> float | None:
    """Share of the loss-free efficiency kept under loss; a lossy run with no iteration keeps 0."""
    if not loss_free:
        return None
    return (loaded or 0.0) / loss_free


def recovery_text(lossy: TransportSummary, loss_free: TransportSummary) -> str:
    """What a run resent under the loss against loss-free, and what the loss-free one lost to its own
    queues (trims) and timeouts."""
    return (f"resent {lossy.retransmits} packets, {loss_free.retransmits} loss-free (after "
            f"{loss_free.trims} trims, {loss_free.timeouts} timeouts)")


def loss_text(share: float | None, efficiency: float | None,
              lossy: TransportSummary | None = None, loss_free: TransportSummary | None = None) -> str:
    """A run under loss: its efficiency (the share of the intended, line, rate it reached) and the share
    of its own loss-free efficiency it kept; then, given both runs, what each resent, and what the
    loss-free one lost to its own queues (trims) and timeouts: a baseline already resending far more
    loss-free than the loss adds has little left to lose to it (docs/paper.md)."""
    kept_text = "no loss-free figure" if share is None else f"kept {share:.2f} of its loss-free rate"
    text = f"{run_text(efficiency)} ({kept_text})"
    if lossy is not None and loss_free is not None:
        text += f"; {recovery_text(lossy, loss_free)}"
    return text
