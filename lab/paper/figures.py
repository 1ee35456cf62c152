"""The MRC paper's published results, typed once: the claim each row of `lab/run.py paper` is set
beside (lab/paper/runner.py) and the values notebooks/06-paper-vs-lab.ipynb draws them as.

The paper text this lab works from states shapes, not measured values ("~half", "~1/3",
"unaffected"). Each Shape keeps the paper's words, the figure they come from (the source) and
the value those words stand for on the lab's axis, so a plot can mark it as the paper's shape,
never as a measurement. How far the lab may fall from a shape and still have it is the lab's
judgement, not the paper's: the PAPER_* thresholds of lab/paper/thresholds.py.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperClaim:
    figure: str    # the paper's figure: the source
    result: str    # what it shows, in words


# One claim per kind of row (lab/paper/settings.py row_titles).
PAPER = {
    "collisions": PaperClaim("Fig. 16/17", "RoCE 1 QP reaches ~half the possible throughput (ECMP collisions); "
                                           "16 QPs help; MRC with 1 connection >= RoCE with 16 QPs"),
    "loss": PaperClaim("Fig. 16", "random loss at every NIC: 0.1 % barely hurts MRC; at 1 % RoCE is unusable "
                                  "while MRC keeps ~1/3 of its throughput"),
    "links": PaperClaim("Fig. 9c/9d", "NIC links taken down one by one, then flapped together: MRC's throughput "
                                      "follows the capacity left, with no stall"),
    "incast": PaperClaim("Fig. 18", "incast beside a victim flow: MRC's victim is unaffected; the incast "
                                    "senders share the target fairly"),
    "flaps": PaperClaim("section 3", "a T0-T1 link flap costs a connection very few packets, often just one"),
}


@dataclass(frozen=True)
class Shape:
    """A shape the paper states, as the value its words stand for."""
    figure: str    # the paper's figure: the source
    words: str     # the paper's own words
    value: float   # what the words stand for on the lab's axis (a reading of a shape, not a measurement)
    note: str      # what the value is a share of


ROCE_1QP_SHARE = Shape("Fig. 16/17", "~half", 1 / 2,
                       "RoCE with 1 QP: share of the possible throughput ECMP collisions leave it")
LIGHT_LOSS_MRC_KEEPS = Shape("Fig. 16", "barely hurts", 1.0,
                             "MRC at 0.1 % loss at every NIC: share of its loss-free throughput kept")
HEAVY_LOSS_MRC_KEEPS = Shape("Fig. 16", "~1/3", 1 / 3,
                             "MRC at 1 % loss at every NIC: share of its loss-free throughput kept")
HEAVY_LOSS_ROCE_KEEPS = Shape("Fig. 16", "unusable", 0.0,
                              "RoCE at 1 % loss at every NIC: share of its loss-free throughput kept")
LINKS_FOLLOW_CAPACITY = Shape("Fig. 9c/9d", "follows the capacity left", 1.0,
                              "MRC's throughput with NIC links down / (its clean throughput x the capacity left)")
VICTIM_KEEPS = Shape("Fig. 18", "unaffected", 1.0,
                     "the victim flow's rate beside the incast / its rate alone")
INCAST_FAIRNESS = Shape("Fig. 18", "share the target fairly", 1.0,
                        "Jain's index over the incast senders' rates (1: equal shares)")
FLAP_COST = Shape("section 3", "very few packets, often just one", 1.0,
                  "data packets one T0-T1 link flap made a connection lose")
