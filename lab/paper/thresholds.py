"""How far a row of `lab/run.py paper` (lab/paper/runner.py) may fall from the paper's shape
(lab/paper/figures.py) and still have it: the lab's reading of the paper's words, defined once.
Each reading is as tight as the words allow: a rule a result the words exclude can pass is too lax,
and every rule has a unit test that builds such a result and sees it rejected
(tests/unit/test_paper_rules.py). The rules themselves are pure functions of the row modules.
"""

from lab.paper.figures import HEAVY_LOSS_MRC_KEEPS, LINK_CHANGE_DIP

PAPER_SHAPE_TOLERANCE = 0.05     # run-to-run noise of one run each: "no degradation" allows this much below
PAPER_LITTLE = 2 * PAPER_SHAPE_TOLERANCE   # "little", "slightly", "approximately": within twice the noise
PAPER_NO_DEGRADATION = 1 - PAPER_SHAPE_TOLERANCE  # Figs. 9c/9d, 11, 12, 18: "no steady-state bandwidth
                                                  # degradation", "sustained line-rate bandwidth", "minimal
                                                  # impact", "no impact on the victim flow": at least this
                                                  # share of the clean rate (what the capacity left allows)
PAPER_LITTLE_IMPACT = 1 - PAPER_LITTLE   # Fig. 16, 0.1 % loss: MRC's "little impact": keeps at least this share
                                         # of its loss-free rate
PAPER_LOSS_POOR = 0.5            # Fig. 16, 0.1 % loss: RoCE "suffers poor performance": keeps at most this share
                                 # of its loss-free rate (half or less: poor, not a little below)
PAPER_LOSS_UNUSABLE = 0.1        # Fig. 16, 1 % loss: RoCE "pretty much unusable": reaches at most this share of
                                 # the intended (line) rate, far under MRC's third
PAPER_LOSS_MRC_KEEPS = HEAVY_LOSS_MRC_KEEPS.value  # Fig. 16: MRC at 1 % NIC loss "only gets around a third of the
                                                  # intended throughput" (typed in lab/paper/figures.py)
# "around a third", two-sided: nearer a third than a quarter or a half, the fractions a reader would
# otherwise name: from halfway between 1/4 and 1/3 to halfway between 1/3 and 1/2 (0.29 to 0.42)
PAPER_AROUND_A_THIRD = ((1 / 4 + 1 / 3) / 2, (1 / 3 + 1 / 2) / 2)
PAPER_APPROXIMATELY = (1 - PAPER_LITTLE, 1 + PAPER_LITTLE)  # Figs. 9a/9b/10: "approximately half", "drops by
                                         # approximately 100 Gb/s", "proportional to the remaining capacity": the
                                         # rate / what the capacity left allows lies in this band
PAPER_TRACKS_CAPACITY = 0.8      # Figs. 9a/9b: a bin below this share of what the capacity left allows is a dip
PAPER_DIP_UNDER_S = LINK_CHANGE_DIP.value  # Fig. 9a: each change of the links up dips MRC's throughput (below
                                           # PAPER_TRACKS_CAPACITY of what is left) for less than this, in s
PAPER_FLAP_OFTEN = 0.5           # section 3, a flap costs "often just one" packet: at least this share of the
                                 # (flap, connection) pairs cost one packet or none
# Fig. 18: MRC "almost perfectly shares the bottleneck link among the incast flows": the senders' rates
# within a tenth of equal (coefficient of variation <= PAPER_LITTLE), Jain's index 1 / (1 + CV^2) at least:
PAPER_ALMOST_PERFECT_JAIN = 1 / (1 + PAPER_LITTLE ** 2)
PAPER_ROCE_VICTIM_DEGRADED = 0.25   # Fig. 18a: RoCE + DCQCN, 1 QP: the victim "degrades by about 25%"
PAPER_ABOUT = PAPER_LITTLE          # "about 25 %": within a tenth of the victim's rate alone of it
# Appendix Fig. 21b/c: with PFC alone the victim reaches "30 to 100Gbps" of 400: at most this share of its rate
# alone; a DCQCN baseline whose victim keeps no more behaves as PFC alone and cannot show Fig. 18's contrast
PAPER_PFC_ONLY_VICTIM = 100 / 400
PAPER_CONFIDENCE = 0.95          # the confidence of an interval a verdict rests on (hash draws, latency runs)


def at_least(a: float, b: float) -> bool:
    """a >= b up to the run-to-run noise the shapes allow (PAPER_SHAPE_TOLERANCE)."""
    return a >= b * (1 - PAPER_SHAPE_TOLERANCE)


def within(x: float, band: tuple[float, float]) -> bool:
    """low <= x <= high."""
    return band[0] <= x <= band[1]
