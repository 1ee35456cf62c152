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


EVERY_ROW = None   # the key of a kind whose rows all make one claim

# kind of row (lab/paper/settings.py row_titles) -> what its row varies -> the claim it is set beside.
# The collisions rows make two claims, one per figure: Fig. 16's all-reduce is collision-sensitive,
# Fig. 17's all-to-all much less so (there 16 QPs do slightly worse than 1).
PAPER = {
    "collisions": {
        "allreduce": PaperClaim("Fig. 16", "all-reduce: RoCE with 1 QP reaches ~half the possible throughput "
                                           "(ECMP collisions); QP scaling helps, \"very little gain beyond 8 "
                                           "QPs\"; one MRC QP \"achieves better performance than 16 QPs\""),
        "alltoall": PaperClaim("Fig. 17", "all-to-all: ECMP collisions matter less; RoCE with 16 QPs is "
                                          "slightly worse than with 1 QP"),
    },
    "loss": {EVERY_ROW: PaperClaim("Fig. 16", "random loss at every NIC: at 0.1 % MRC retransmits fast enough "
                                              "that the loss \"has little impact\" while RoCE \"suffers poor "
                                              "performance\"; at 1 % \"RoCE is pretty much unusable and even MRC "
                                              "only gets around a third of the intended throughput\"")},
    "links": {EVERY_ROW: PaperClaim("Fig. 9a/9b", "NIC links taken down one by one, then restored one by one: "
                                                  "MRC's throughput follows the capacity left (\"approximately half "
                                                  "the nominal bandwidth\" with four of eight down); each change "
                                                  "dips it for under a second, no stall")},
    "incast": {EVERY_ROW: PaperClaim("Fig. 18", "7-to-1 incast beside a victim flow: MRC \"almost perfectly shares "
                                                "the bottleneck link among the incast flows and has no impact on "
                                                "the victim flow\"; RoCE with DCQCN degrades the victim \"by about "
                                                "25%\" with 1 QP, and with 8 QPs \"the average impact on the "
                                                "victim flow is smaller\"")},
    "p2p": {EVERY_ROW: PaperClaim("section 5.2.1", "point-to-point: cross-T1 latency is higher than T0-local "
                                                   "(6.54 against 5.09 us, the extra switch hops); bandwidth ~96 % "
                                                   "of the peak either way, not constrained by whether traffic "
                                                   "stays within a single T0")},
    "sizes": {EVERY_ROW: PaperClaim("Fig. 16", "message size: for small messages the all-reduce is latency-bound "
                                               "and there is little difference between RoCE and MRC; for larger "
                                               "ones it becomes increasingly bandwidth-bound, where RoCE with 1 QP "
                                               "suffers from ECMP collisions")},
    "ev_balance": {EVERY_ROW: PaperClaim("Fig. 14", "two flows on one EV: upon detecting the congestion via ECN, "
                                                    "MRC moves one flow to another EV while the other stays; both "
                                                    "sustain near-peak bandwidth")},
    "t0t1_links": {EVERY_ROW: PaperClaim("Figs. 9c/9d", "T0-T1 links taken down one after another, then several "
                                                        "flapped together, under a cross-T1 bandwidth test: minimal "
                                                        "impact on overall throughput even as active links are "
                                                        "removed; negligible impact when they flap")},
    "startup": {EVERY_ROW: PaperClaim("Fig. 4", "a job starts without a denylist while links are down: its QPs "
                                                "lose packets on the dead paths and swap those EVs for backups; "
                                                "even in the first minute less than 5 packets per QP are lost")},
    "flaps": {EVERY_ROW: PaperClaim("section 3", "a T0-T1 link flap costs a connection very few packets, "
                                                 "often just one")},
    "switches": {EVERY_ROW: PaperClaim("Figs. 10/11", "a T0 switch down: \"the steady-state bandwidth drops by "
                                                      "approximately 100 Gb/s\" (one 100 Gb/s plane of eight), "
                                                      "\"proportional to the remaining available network "
                                                      "capacity\"; a T1 switch down: \"no steady-state bandwidth "
                                                      "degradation is observed despite the failure\"")},
    "silent_switch": {EVERY_ROW: PaperClaim("Fig. 8", "a T1 that \"stopped forwarding packets, though it remained "
                                                      "up\", then rebooted: job throughput \"dips when the switch "
                                                      "initially failed, as many QPs lost packets, but they quickly "
                                                      "mapped out the bad path and throughput was largely unaffected "
                                                      "afterwards. When the switch actually rebooted, there was no "
                                                      "impact\"")},
    "path_loss": {EVERY_ROW: PaperClaim("Figs. 12/13", "an EV dropping 20 % of its packets: \"its status "
                                                       "transitions immediately to inactive, and EV-B is activated "
                                                       "as a replacement\" (it stays inactive through the drop), "
                                                       "with \"sustained line-rate bandwidth\"")},
}


def claim(kind: str, what: object = EVERY_ROW) -> PaperClaim:
    """The claim the row of `kind` that varies `what` is set beside."""
    claims = PAPER[kind]
    return claims[what] if what in claims else claims[EVERY_ROW]


def figures(kind: str) -> str:
    """The paper's figures a kind of row is set beside, for a heading ("Fig. 16, Fig. 17")."""
    return ", ".join(dict.fromkeys(c.figure for c in PAPER[kind].values()))


@dataclass(frozen=True)
class Shape:
    """A shape the paper states, as the value its words stand for."""
    figure: str    # the paper's figure: the source
    words: str     # the paper's own words
    value: float   # what the words stand for on the lab's axis (a reading of a shape, not a measurement)
    note: str      # what the value is a share of


ROCE_1QP_SHARE = Shape("Fig. 16", "~half", 1 / 2,
                       "all-reduce, RoCE with 1 QP: share of the possible throughput ECMP collisions leave it")
ALLTOALL_16QP_VS_1QP = Shape("Fig. 17", "slightly worse", 1.0,
                             "all-to-all, RoCE with 16 QPs' efficiency / with 1 QP's: the paper's sits "
                             "slightly below this")
LIGHT_LOSS_MRC_KEEPS = Shape("Fig. 16", "little impact", 1.0,
                             "MRC at 0.1 % loss at every NIC: share of its loss-free throughput kept")
HEAVY_LOSS_MRC_KEEPS = Shape("Fig. 16", "around a third", 1 / 3,
                             "MRC at 1 % loss at every NIC: share of the intended throughput (the line rate the "
                             "job asked for) it reaches")
HEAVY_LOSS_ROCE_KEEPS = Shape("Fig. 16", "unusable", 0.0,
                              "RoCE at 1 % loss at every NIC: share of the intended throughput it reaches")
LINKS_FOLLOW_CAPACITY = Shape("Fig. 9a/9b", "follows the capacity left", 1.0,
                              "MRC's throughput with NIC links down / (its clean throughput x the capacity left)")
LINK_CHANGE_DIP = Shape("Fig. 9a/9b", "under a second", 1.0,
                        "seconds MRC's throughput stays below what the capacity left allows, around one change "
                        "of the links up")
VICTIM_KEEPS = Shape("Fig. 18", "no impact on the victim flow", 1.0,
                     "the victim flow's rate beside the incast / its rate alone")
INCAST_FAIRNESS = Shape("Fig. 18", "almost perfectly shares", 1.0,
                        "Jain's index over the incast senders' rates (1: equal shares)")
FLAP_COST = Shape("section 3", "very few packets, often just one", 1.0,
                  "data packets one T0-T1 link flap made a connection lose")
P2P_LATENCY_RATIO = Shape("section 5.2.1", "6.54 against 5.09 us", 5.09 / 6.54,
                          "T0-local one-way latency / cross-T1's (ib_write_lat, 2 B)")
P2P_BANDWIDTH = Shape("section 5.2.1", "~96 % of the peak", 0.96,
                      "bandwidth / the NIC's capacity, T0-local and cross-T1 alike (ib_write_bw, 32 KB)")
T0_DOWN_LEFT = Shape("Figs. 10/11", "drops by approximately 100 Gb/s", 7 / 8,
                     "MRC's throughput with one plane's T0 of a host's rack down / its clean throughput: one "
                     "plane of eight lost")
T1_DOWN_KEEPS = Shape("Figs. 10/11", "no steady-state bandwidth degradation", 1.0,
                      "MRC's throughput with one T1 down / its clean throughput")
SILENT_T1_KEEPS = Shape("Fig. 8", "largely unaffected afterwards", 1.0,
                        "MRC's throughput once it mapped out a T1 that forwards nothing with its links up / its "
                        "clean throughput")
REBOOTED_T1_KEEPS = Shape("Fig. 8", "no impact", 1.0,
                          "MRC's throughput while that T1 reboots / its clean throughput")
PATH_LOSS_KEEPS = Shape("Figs. 12/13", "sustained line-rate bandwidth", 1.0,
                        "MRC's throughput while one T0-T1 link drops 20 % of its packets / its clean throughput")
LOSSY_EV_OUT = Shape("Figs. 12/13", "transitions immediately to inactive", 1.0,
                     "share of the drop's window in which the lossy route's EVs (the paper's EV-A) are out of use")
STARTUP_LOSS = Shape("Fig. 4", "less than 5 packets per QP", 5 / 5,
                     "data packets a QP lost to the links down at its start, over 5 (the paper's bound)")
T0T1_LINKS_KEEP = Shape("Figs. 9c/9d", "minimal impact on overall throughput", 1.0,
                        "MRC's throughput with T0-T1 links of one rack down / its clean throughput")
SMALL_MESSAGE_GAP = Shape("Fig. 16", "little difference between RoCE and MRC", 1.0,
                          "RoCE with 1 QP's all-reduce throughput / MRC's, at the smallest message size")
EV_BALANCE_KEEPS = Shape("Fig. 14", "near-peak bandwidth", 1.0,
                         "each flow's rate after one of them moved to another EV / its NIC's rate")
