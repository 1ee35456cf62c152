"""What `lab/run.py paper` runs each row with, and what its rows are called.

The data plane, the fabrics (the multi-plane one, the RoCE-like baseline's single plane,
the incast's), the collectives, loss levels and links, how long a pass runs each
experiment (PASSES), the run labels, and each row's title: the runner
(lab/paper/runner.py) makes the rows, and a run read back (lab/paper/rows.py) finds them
by these titles. docs/paper.md describes each row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lab.paper.figures import claim
from lab.runners.incast_victim import VICTIM_INCAST_FABRIC, VICTIM_INCAST_SENDERS, VICTIM_STREAM_S
from topologies.fabric import DEFAULT_FABRIC

DATAPLANE = "srv6"   # the data plane with a real 5-tuple switch hash for the baseline
# The RoCE-like baseline's own environment: one plane with the default fabric's aggregate rate,
# enough EVs (UDP source ports) for its most queue pairs.
ROCE_LINK_MBPS = DEFAULT_FABRIC.planes * DEFAULT_FABRIC.link_mbps
ROCE_QPS = (1, 16)
# Its fabric's scenario keys; "lossless": True would run it PFC-like (docs/lossless.md): the rows do
# not yet (lab/paper/lossless_ab.py compares the two).
ROCE_FABRIC = {"planes": 1, "link_mbps": ROCE_LINK_MBPS, "evs_per_plane": max(ROCE_QPS)}
# MRC's transport parameters in every row: the lab's defaults (mrc_host/params.py), NSCC among them;
# AIMD would pin each connection's window to one host's BDP, which an all-to-all's 3 connections per
# host overfill 3 times (SRTT 58 ms against NSCC's 18 ms, 29 spurious RTOs; docs/paper.md)
MRC_PARAMS: dict = {}
COLLECTIVES = ("allreduce", "alltoall")   # one ECMP-collisions row each: Fig. 16, Fig. 17
# Every collective's ranks and buffer: interleaved, so every ring hop crosses the T1s.
PLACEMENT = "interleaved"
BUFFER_MB = 2
NIC_LOSS_LEVELS = (0.001, 0.01)
# Fig. 18's incast with a victim flow, on the paper's data plane: the one the bench's cc step
# (lab/runners/bench.py) also compares congestion controls on (lab/runners/incast_victim.py).
INCAST_FABRIC = replace(VICTIM_INCAST_FABRIC, dataplane=DATAPLANE)
# ...and the RoCE-like baseline's single plane for it, at the same aggregate rate, with the paper's 1 and 8 QPs,
# under DCQCN with ECN marked on every hop, as the paper's RoCE fabric ran (docs/paper.md)
INCAST_ROCE_QPS = (1, 8)
INCAST_ROCE_CC = "dcqcn"
INCAST_ROCE_FABRIC = replace(INCAST_FABRIC, planes=1, link_mbps=INCAST_FABRIC.planes * INCAST_FABRIC.link_mbps,
                             evs_per_plane=max(INCAST_ROCE_QPS))
# Figs. 9a/9b: host 0's NIC links taken down one by one, a phase each, and restored one by one; then as
# many flapped together; under a bandwidth test between host 0 and a host in the other rack (default
# fabric). Figs. 9c/9d take T0-T1 links down instead: a row still to add.
LINKS_FABRIC = replace(DEFAULT_FABRIC, dataplane=DATAPLANE)
LINKS_DOWN = 4


@dataclass(frozen=True)
class Pass:
    """How long a pass runs each experiment."""
    iterations: int        # collective iterations per job
    max_seconds: float     # cap on one job
    link_phase_s: float    # each phase of the NIC-links row: a whole number of 200 ms bins, 2 or more
    victim_s: float        # each stream of the incast-with-a-victim row
    flaps: int             # T0-T1 flaps of the flap-cost row, one per plane (at most the planes)
    flap_s: float          # each flap's link is down this long, then up as long before the next


PASSES = {True: Pass(iterations=8, max_seconds=30, link_phase_s=1.0, victim_s=VICTIM_STREAM_S[True], flaps=4, flap_s=1.0),  # --quick
          False: Pass(iterations=30, max_seconds=60, link_phase_s=2.0, victim_s=VICTIM_STREAM_S[False], flaps=8, flap_s=1.0)}

MRC = "MRC"
MULTI_RAIL = "multi-rail baseline"


def roce_label(qps: int, link_mbps: float = ROCE_LINK_MBPS, cc: str = "none") -> str:
    under = "" if cc == "none" else f" + {cc.upper()}"
    return f"RoCE-like{under}, 1 plane x {link_mbps:g} Mb/s, {qps} QP{'s' if qps > 1 else ''}"


def run_name(quick: bool) -> str:
    """The run's results directory is results/<timestamp>-<this>/."""
    return "paper-quick" if quick else "paper"


# ---- the rows' titles: each row's "paper figure" cell, and the key a reader finds the row by ------
def collisions_title(collective: str) -> str:
    return f"{claim('collisions', collective).figure}: ECMP collisions, {collective} (interleaved ranks, no faults)"


def loss_title(p: float) -> str:
    return f"{claim('loss').figure}: random loss {p:.1%} at every NIC, all-reduce"


def links_title() -> str:
    return (f"{claim('links').figure}: {LINKS_DOWN} NIC links of one host down and back one by one, "
            "then together")


def flaps_title() -> str:
    return f"{claim('flaps').figure}: packets a T0-T1 link flap costs a connection"


def incast_title() -> str:
    return (f"{claim('incast').figure}: incast {VICTIM_INCAST_SENDERS}-to-1 beside a victim flow "
            f"({INCAST_FABRIC.planes} planes)")


def row_titles() -> list[tuple[str, object, str]]:
    """(kind, what it varies, title) of every row a full pass makes, in its order; kind is a PAPER key
    (lab/paper/figures.py), and claim(kind, what) the row's claim.
    notebooks/06-paper-vs-lab.ipynb finds a run's rows, and names the missing ones, by these titles."""
    return ([("collisions", c, collisions_title(c)) for c in COLLECTIVES]
            + [("loss", p, loss_title(p)) for p in NIC_LOSS_LEVELS]
            + [("links", None, links_title()), ("incast", None, incast_title()), ("flaps", None, flaps_title())])
