"""What `lab/run.py paper` runs each row with, and what its rows are called.

The data plane (and what a row needs of one), the fabrics (the multi-plane one, the RoCE-like
baseline's single plane, the incast's), the collectives, loss levels and links, how long a pass
runs each experiment (PASSES), the run labels, and each row's title: the runner
(lab/paper/runner.py) makes the rows, and a run read back (lab/paper/rows.py) finds them
by these titles. docs/paper.md describes each row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from lab.paper.figures import claim
from lab.runners.incast_victim import VICTIM_INCAST_FABRIC, VICTIM_STREAM_S
from topologies.dataplanes import DATAPLANE_TYPES
from topologies.fabric import DEFAULT_FABRIC, LAB_PAYLOAD_SIZE

# The rows' data plane unless `paper --dataplane` names another: MRC's packets are the paper's own
# there (IPv6 in IPv6 with a uSID route), and its switches hash the baseline's full 5-tuple.
DATAPLANE = "srv6"
# The RoCE-like baseline's own environment: one plane with the default fabric's aggregate rate,
# enough EVs (UDP source ports) for its most queue pairs.
ROCE_LINK_MBPS = DEFAULT_FABRIC.planes * DEFAULT_FABRIC.link_mbps
ROCE_QPS = (1, 16)
# Its fabric's scenario keys; "lossless": True would run it PFC-like (docs/lossless.md): the rows do
# not yet (lab/paper/lossless_ab.py compares the two).
# Lossless, as the paper's RoCE fabric ran PFC (docs/lossless.md: the lab's pause is PFC-like, not PFC).
ROCE_FABRIC = {"planes": 1, "link_mbps": ROCE_LINK_MBPS, "evs_per_plane": max(ROCE_QPS), "lossless": True}
# MRC's transport parameters in every row: the lab's defaults (mrc_host/params.py), NSCC among them;
# AIMD would pin each connection's window to one host's BDP, which an all-to-all's 3 connections per
# host overfill 3 times (SRTT 58 ms against NSCC's 18 ms, 29 spurious RTOs; docs/paper.md)
MRC_PARAMS: dict = {}
COLLECTIVES = ("allreduce", "alltoall")   # one ECMP-collisions row each: Fig. 16, Fig. 17
# Every collective's ranks and buffer: interleaved, so every ring hop crosses the T1s.
PLACEMENT = "interleaved"
BUFFER_MB = 2
# Fig. 16's x axis: the all-reduce's buffer per rank, MiB, from the paper's smallest point to large. The paper's
# smallest point is 4 MB all-reduced over 64 ranks, a ring step of 64 KiB per rank in 4 KiB packets (Cluster C's
# Pollara NICs): about 16 packets per rank per ring step. The lab's smallest size has as many: 16 packets of a
# job's payload (LAB_PAYLOAD_SIZE, 8 KiB) for each of the default fabric's ranks (a job runs on every host, 4):
# 0.5 MiB per rank, 2 packets per plane a step (32 KiB per rank was one packet a step, for 8 planes).
PAPER_SMALLEST_MB, PAPER_RANKS, PAPER_PACKET_BYTES = 4, 64, 4096
PAPER_SMALLEST_PACKETS = PAPER_SMALLEST_MB * 2**20 / PAPER_RANKS / PAPER_PACKET_BYTES
SMALLEST_SIZE_MB = PAPER_SMALLEST_PACKETS * DEFAULT_FABRIC.hosts * LAB_PAYLOAD_SIZE / 2**20
MESSAGE_SIZES_MB = (SMALLEST_SIZE_MB, BUFFER_MB, 8)
NIC_LOSS_LEVELS = (0.001, 0.01)
# Fig. 18's incast with a victim flow, as the paper ran it: 7 senders in other racks than the target's
# ("cross-spine 7 to 1"), the victim from another rack to an idle host beside the target
# (lab/runners/incast_victim.py); on the paper's Cluster D shape, 4 racks of 4 hosts and 4 T1s, so
# the T1s' downlinks into the target's rack carry twice what the target and the victim can take
# (with 2 T1s they carry exactly that: no headroom), on the default fabric's planes and rate.
INCAST_SENDERS = 7
INCAST_FABRIC = replace(VICTIM_INCAST_FABRIC, planes=DEFAULT_FABRIC.planes, racks=4, spines=4, hosts_per_rack=4,
                        dataplane=DATAPLANE)
# ...and the RoCE-like baseline's single plane for it, at the same aggregate rate, with the paper's 1 and 8 QPs,
# under DCQCN with ECN marked on every hop, as the paper's RoCE fabric ran (docs/paper.md)
INCAST_ROCE_QPS = (1, 8)
INCAST_ROCE_CC = "dcqcn"
INCAST_ROCE_FABRIC = replace(INCAST_FABRIC, planes=1, link_mbps=INCAST_FABRIC.planes * INCAST_FABRIC.link_mbps,
                             evs_per_plane=max(INCAST_ROCE_QPS), lossless=True)
# Figs. 9a/9b: host 0's NIC links taken down one by one, a phase each, and restored one by one; then as
# many flapped together; under a bandwidth test between host 0 and a host in the other rack (default
# fabric). Figs. 9c/9d take T0-T1 links down instead: a row still to add.
LINKS_FABRIC = replace(DEFAULT_FABRIC, dataplane=DATAPLANE)
LINKS_DOWN = 4
# Figs. 10-13, under the same bandwidth test on the same fabric: one plane's T0 of host 0's rack down, then
# one of its T1s (Figs. 10/11); one T0-T1 link of that plane dropping PATH_LOSS_P of its packets (Figs. 12/13,
# the paper's EV dropping 20 %)
FAULTED_PLANE = 0
PATH_LOSS_P = 0.2


# What a kind of row needs of its data plane for the RoCE-like baseline, beyond what every data plane
# gives (topologies/dataplane.py's DataPlane flags), each with its words: the baseline's single plane
# runs lossless (ROCE_FABRIC, INCAST_ROCE_FABRIC), and the collisions are its queue pairs hashed by the
# switches.
LOSSLESS = (lambda plane: plane.lossless_capable, "run its plane lossless (PFC-like)")
PORT_HASH = (lambda plane: plane.ecmp_hashes_ports, "hash its queue pairs by their UDP ports (ECMP over the 5-tuple)")
NEEDS = {"collisions": (PORT_HASH, LOSSLESS), "sizes": (PORT_HASH, LOSSLESS), "loss": (LOSSLESS,),
         "incast": (LOSSLESS,)}


def unmet_needs(kind: str, dataplane: str) -> str | None:
    """Why the rows of `kind` (a PAPER key) cannot run on `dataplane`, in one line; None: they can."""
    needs = NEEDS.get(kind, ())
    missing = [words for has, words in needs if not has(DATAPLANE_TYPES[dataplane])]
    if not missing:
        return None
    able = [name for name, plane in DATAPLANE_TYPES.items() if all(has(plane) for has, _ in needs)]
    return (f"needs the {' or '.join(able)} data plane: for the RoCE-like baseline, {dataplane} does not "
            f"{' or '.join(missing)}")


@dataclass(frozen=True)
class Pass:
    """How long a pass runs each experiment."""
    iterations: int        # collective iterations per job
    max_seconds: float     # cap on one job
    link_phase_s: float    # each phase of the NIC-links row: a whole number of 200 ms bins, 2 or more
    victim_s: float        # each stream of the incast-with-a-victim row
    flaps: int             # T0-T1 flaps of the flap-cost row, one per plane (at most the planes)
    flap_s: float          # each flap's link is down this long, then up as long before the next
    switch_phase_s: float  # the switch-down row: clean, a switch down, back up; a phase each (whole 200 ms bins)
    path_loss_phase_s: float   # the path-loss row: clean, the link dropping packets, clean again; a phase each
    p2p_iterations: int    # tiny two-rank all-reduces of the point-to-point row, per pair
    p2p_bandwidth_s: float  # its bandwidth test, per pair
    hash_outcomes: int     # RoCE-like 1-QP runs of each collisions row, its queue pairs' source ports re-drawn
                           # in each (qp_port_salt 0, 1, ...; salt 0 is the row's own run)


PASSES = {True: Pass(iterations=8, max_seconds=30, link_phase_s=1.0, victim_s=VICTIM_STREAM_S[True], flaps=4,
                     flap_s=1.0, switch_phase_s=1.0, path_loss_phase_s=2.0, p2p_iterations=200,
                     p2p_bandwidth_s=3.0, hash_outcomes=5),  # --quick
          False: Pass(iterations=30, max_seconds=60, link_phase_s=2.0, victim_s=VICTIM_STREAM_S[False], flaps=8,
                      flap_s=1.0, switch_phase_s=2.0, path_loss_phase_s=4.0, p2p_iterations=1000,
                      p2p_bandwidth_s=10.0, hash_outcomes=8)}


def size_iterations(buffer_mb: float, quick: bool) -> int:
    """Iterations of a job at `buffer_mb` per rank: at least the pass's, and as many as move the bytes
    of a BUFFER_MB job. Why: the fidelity monitor samples every 0.5 s, and 8 iterations at 32 KB took
    0.18 s, so only the sample that covered the agents' start-up (both cores busy) judged the job
    and every small job was marked CPU-bound; at 512 iterations (12 s) none was."""
    iterations = PASSES[quick].iterations
    return max(iterations, math.ceil(iterations * BUFFER_MB / buffer_mb))


# Only 1 QP is re-drawn: 16 QPs take every EV of ROCE_FABRIC's plane, so a salt only reorders them
# (the same source ports, the same paths); their one outcome is printed beside its expectation.
REDRAWN_QPS = 1

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


def switches_title() -> str:
    return (f"{claim('switches').figure}: a T0 of host 0's rack, then a T1, of one plane down under a "
            "bandwidth test")


def silent_switch_title() -> str:
    return (f"{claim('silent_switch').figure}: a T1 of one plane silent (up, forwarding nothing), then rebooted, "
            "under a bandwidth test")


def path_loss_title() -> str:
    return f"{claim('path_loss').figure}: one T0-T1 link drops {PATH_LOSS_P:.0%} of its packets under a bandwidth test"


def incast_title() -> str:
    return (f"{claim('incast').figure}: incast {INCAST_SENDERS}-to-1 beside a victim flow "
            f"({INCAST_FABRIC.planes} planes)")


def ev_balance_title() -> str:
    return f"{claim('ev_balance').figure}: two flows forced onto one EV, ECN moves one"


def sizes_title() -> str:
    return f"{claim('sizes').figure}: all-reduce efficiency by message size (interleaved ranks, no faults)"


def t0t1_links_title() -> str:
    return (f"{claim('t0t1_links').figure}: a T0-T1 link of rack 0 on every plane down one by one, "
            "then together")


def startup_title() -> str:
    return f"{claim('startup').figure}: a job that starts with T0-T1 links down, without a denylist"


def p2p_title() -> str:
    return f"{claim('p2p').figure}: point-to-point latency and bandwidth, T0-local and cross-T1"


def row_titles() -> list[tuple[str, object, str]]:
    """(kind, what it varies, title) of every row a full pass makes, in its order; kind is a PAPER key
    (lab/paper/figures.py), and claim(kind, what) the row's claim.
    notebooks/06-paper-vs-lab.ipynb finds a run's rows, and names the missing ones, by these titles."""
    return ([("collisions", c, collisions_title(c)) for c in COLLECTIVES]
            + [("loss", p, loss_title(p)) for p in NIC_LOSS_LEVELS]
            + [("links", None, links_title()), ("incast", None, incast_title()), ("flaps", None, flaps_title()),
               ("switches", None, switches_title()), ("silent_switch", None, silent_switch_title()),
               ("path_loss", None, path_loss_title()),
               ("p2p", None, p2p_title()), ("startup", None, startup_title()),
               ("t0t1_links", None, t0t1_links_title()), ("sizes", None, sizes_title()),
               ("ev_balance", None, ev_balance_title())])
