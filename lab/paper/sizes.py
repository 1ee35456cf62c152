"""Fig. 16's x axis, the message size: the interleaved ring all-reduce of the ECMP-collisions row
at several buffer sizes, MRC against the RoCE-like baseline with 1 and 16 QPs (a row of
`lab/run.py paper`; the runner, lab/paper/runner.py, runs each size's experiments, the 2 MB
ones shared with the collisions row). Pure: the row's judgement and text.

The paper: "For small message sizes, the collective is latency-bound, and there is little
difference between RoCE and MRC. For larger message sizes we become increasing[ly]
bandwidth-bound", where RoCE with 1 QP suffers from ECMP collisions.
"""

from __future__ import annotations

from typing import Callable

from lab.paper import thresholds
from lab.paper.settings import MRC, PAPER_SMALLEST_PACKETS, roce_label
from lab.paper.verdict import DIFFERENT, SAME, UNRESOLVABLE, Judged, combined, judged
from topologies.fabric import DEFAULT_FABRIC, LAB_PAYLOAD_SIZE

# "little difference" at the smallest size: the lesser of MRC's and RoCE-like 1 QP's efficiencies at least
# this share of the greater
PAPER_LITTLE_DIFFERENCE = 1 - thresholds.PAPER_LITTLE
# The paper's smallest point, about 16 packets per rank per ring step (lab/paper/settings.py, which sizes the
# lab's smallest point to it). A lab point with fewer is smaller than any the paper drew, where its "little
# difference" is not claimed.


def packets_per_step(buffer_mb: float, ranks: int = DEFAULT_FABRIC.hosts, payload: int = LAB_PAYLOAD_SIZE) -> float:
    """DATA packets a rank sends in one ring step of an all-reduce of `buffer_mb` per rank: its chunk
    (the buffer over the ranks) in packets of `payload` bytes (a job's, the scenario default; the
    lab's job runs on every host)."""
    return buffer_mb * 2**20 / ranks / payload


def advantage(eff: dict[str, float | None]) -> float | None:
    """MRC's efficiency over RoCE-like 1 QP's at one size (None: either finished no iteration)."""
    mrc, roce = (eff[label] if label in eff else None for label in (MRC, roce_label(1)))
    return mrc / roce if mrc and roce else None


def sizes_shape(by_size: dict[float, dict[str, float | None]],
                packets: Callable[[float], float] = packets_per_step) -> Judged:
    """by_size: buffer MB -> run label -> efficiency; packets: buffer MB -> packets per rank per ring
    step. Same shape: at the smallest size RoCE-like 1 QP is within PAPER_LITTLE_DIFFERENCE of MRC
    ("little difference"), and MRC's advantage over it grows from the smallest size to the largest
    ("increasingly bandwidth-bound", where collisions cost). The first part is not resolvable here when
    the smallest size's ring step has fewer packets than the paper's smallest point (about 16): there
    a step cannot spread over the planes, and the paper drew no such point. Both parts rest on the
    paper's premise, "for small message sizes, the collective is latency-bound": where MRC's efficiency
    at the smallest size is within PAPER_LITTLE_DIFFERENCE of its efficiency at the largest, the lab's
    smallest point is bandwidth-bound (the lab's links are scaled down, so a step of the paper's packets
    takes far longer than the fixed latency, where the paper's takes about a microsecond), and
    neither part is resolvable here. Both parts rest on one 1-QP hash draw per size (the collisions
    row's draws show their spread)."""
    sizes = sorted(by_size)
    ratios = {mb: advantage(by_size[mb]) for mb in sizes}
    if len(sizes) < 2 or None in ratios.values():
        return judged(DIFFERENT, "a size finished no iteration, or fewer than two sizes ran")
    small, large = ratios[sizes[0]], ratios[sizes[-1]]
    little = min(small, 1 / small) >= PAPER_LITTLE_DIFFERENCE    # either way round
    step = packets(sizes[0])
    in_range = step >= PAPER_SMALLEST_PACKETS
    grows = large > small
    first = (SAME if little else DIFFERENT) if in_range else UNRESOLVABLE
    text = ", ".join(f"{mb:g} MB x{ratios[mb]:.2f}" for mb in sizes)
    where = "" if in_range else (
        f" (not resolvable here: a ring step at {sizes[0]:g} MB is {step:g} packet{'' if step == 1 else 's'} per rank, "
        f"{step / DEFAULT_FABRIC.planes:g} per plane, against the paper's smallest point's about "
        f"{PAPER_SMALLEST_PACKETS:g}: smaller than any size the paper drew)")
    scaled = (f" (a ring step of {step:g} packets per rank, {step / DEFAULT_FABRIC.planes:g} per plane: the paper's "
              f"smallest point has about {PAPER_SMALLEST_PACKETS:g})") if in_range else ""
    mrc_small, mrc_large = by_size[sizes[0]][MRC], by_size[sizes[-1]][MRC]
    if in_range and mrc_small >= PAPER_LITTLE_DIFFERENCE * mrc_large:
        return judged(UNRESOLVABLE, f"MRC's efficiency over RoCE-like 1 QP's by size: {text}; at {sizes[0]:g} MB{scaled} "
                                    f"MRC reached {mrc_small:.2f}, against {mrc_large:.2f} at {sizes[-1]:g} MB (within "
                                    f"{1 - PAPER_LITTLE_DIFFERENCE:.0%}): the lab's smallest point is bandwidth-bound, "
                                    "where the paper's words rest on small messages being latency-bound; RoCE-like "
                                    f"reached {1 / small:.2f} of MRC there, one 1-QP hash draw")
    return judged(combined([first, SAME if grows else DIFFERENT]),
                  f"MRC's efficiency over RoCE-like 1 QP's by size: {text}; at {sizes[0]:g} MB{scaled} RoCE-like reached "
                  f"{1 / small:.2f} of MRC (little difference: >= {PAPER_LITTLE_DIFFERENCE:g}: "
                  f"{'yes' if little else 'no'}){where}; the gap {'grows' if grows else 'does not grow'} with the "
                  "size (one 1-QP hash draw per size)")


def sizes_text(by_size: dict[float, dict[str, float | None]], label: str) -> str:
    """One run label's efficiency at each size."""
    values = {mb: by_size[mb][label] if label in by_size[mb] else None for mb in sorted(by_size)}
    return ", ".join(f"{mb:g} MB " + ("-" if v is None else f"{v:.3f}") for mb, v in values.items())
