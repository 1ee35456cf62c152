"""How far a row of `lab/run.py paper` (lab/paper/runner.py) may fall from the paper's shape
(lab/paper/figures.py) and still have it: the lab's judgement, not the paper's, defined once.
The shapes of the MRC paper's results, as numbers the lab's rows are judged against.
"""

from lab.paper.figures import HEAVY_LOSS_MRC_KEEPS, LINK_CHANGE_DIP

PAPER_SHAPE_TOLERANCE = 0.05     # "A >= B" holds when A >= B x (1 - this): run-to-run noise of one run each
PAPER_LOSS_BARELY_HURTS = 0.8    # Fig. 16: MRC at 0.1 % NIC loss keeps at least this share of its loss-free rate
PAPER_LOSS_UNUSABLE = 0.2        # Fig. 16: RoCE-like at 1 % NIC loss reaches at most this share of the intended
                                 # (line) rate ("unusable")
PAPER_LOSS_MRC_KEEPS = HEAVY_LOSS_MRC_KEEPS.value  # Fig. 16: MRC at 1 % NIC loss reaches about this share of the
                                                  # intended rate (the paper's ~1/3, typed in lab/paper/figures.py)
PAPER_VICTIM_UNAFFECTED = 0.9    # Fig. 18: MRC's victim flow keeps at least this share of its rate alone
PAPER_TRACKS_CAPACITY = 0.8      # Fig. 9a/9b: MRC's throughput with NIC links down / (its clean rate x share left)
PAPER_DIP_UNDER_S = LINK_CHANGE_DIP.value  # Fig. 9a: each change of the links up dips MRC's throughput (below
                                           # PAPER_TRACKS_CAPACITY of what is left) for less than this, in s
PAPER_FLAP_OFTEN = 0.5           # section 3, a flap costs "often just one" packet: at least this share of the
                                 # (flap, connection) pairs cost one packet or none
PAPER_NO_DEGRADATION = 1 - PAPER_SHAPE_TOLERANCE  # Figs. 11 and 12, "no steady-state bandwidth degradation",
                                                  # "sustained line-rate bandwidth": MRC's throughput / what the
                                                  # capacity left allows is at least this (run-to-run noise)


def at_least(a: float, b: float) -> bool:
    """a >= b up to the run-to-run noise the shapes allow (PAPER_SHAPE_TOLERANCE)."""
    return a >= b * (1 - PAPER_SHAPE_TOLERANCE)
