"""Fig. 16's x axis, the message size: the interleaved ring all-reduce of the ECMP-collisions row
at several buffer sizes, MRC against the RoCE-like baseline with 1 and 16 QPs (a row of
`lab/run.py paper`; the runner, lab/paper/runner.py, runs each size's experiments, the 2 MB
ones shared with the collisions row). Pure: the row's judgement and text.

The paper: "For small message sizes, the collective is latency-bound, and there is little
difference between RoCE and MRC. For larger message sizes we become increasing[ly]
bandwidth-bound", where RoCE with 1 QP suffers from ECMP collisions.
"""

from __future__ import annotations

from lab.paper import thresholds
from lab.paper.settings import MRC, roce_label

# "little difference" at the smallest size: the lesser of MRC's and RoCE-like 1 QP's efficiencies at least
# this share of the greater
PAPER_LITTLE_DIFFERENCE = 1 - 2 * thresholds.PAPER_SHAPE_TOLERANCE


def advantage(eff: dict[str, float | None]) -> float | None:
    """MRC's efficiency over RoCE-like 1 QP's at one size (None: either finished no iteration)."""
    mrc, roce = (eff[label] if label in eff else None for label in (MRC, roce_label(1)))
    return mrc / roce if mrc and roce else None


def sizes_shape(by_size: dict[float, dict[str, float | None]]) -> tuple[bool, str]:
    """by_size: buffer MB -> run label -> efficiency. Same shape: at the smallest size RoCE-like 1 QP
    is within PAPER_LITTLE_DIFFERENCE of MRC ("little difference"), and MRC's advantage over it grows
    from the smallest size to the largest ("increasingly bandwidth-bound", where collisions cost)."""
    sizes = sorted(by_size)
    ratios = {mb: advantage(by_size[mb]) for mb in sizes}
    if len(sizes) < 2 or None in ratios.values():
        return False, "no: a size finished no iteration, or fewer than two sizes ran"
    small, large = ratios[sizes[0]], ratios[sizes[-1]]
    little = min(small, 1 / small) >= PAPER_LITTLE_DIFFERENCE    # either way round
    grows = large > small
    same = little and grows
    text = ", ".join(f"{mb:g} MB x{ratios[mb]:.2f}" for mb in sizes)
    return same, (f"{'yes' if same else 'no'}: MRC's efficiency over RoCE-like 1 QP's by size: {text}; at "
                  f"{sizes[0]:g} MB RoCE-like reached {1 / small:.2f} of MRC (little difference: >= "
                  f"{PAPER_LITTLE_DIFFERENCE:g}: {'yes' if little else 'no'}); the gap "
                  f"{'grows' if grows else 'does not grow'} with the size")


def sizes_text(by_size: dict[float, dict[str, float | None]], label: str) -> str:
    """One run label's efficiency at each size."""
    values = {mb: by_size[mb][label] if label in by_size[mb] else None for mb in sorted(by_size)}
    return ", ".join(f"{mb:g} MB " + ("-" if v is None else f"{v:.3f}") for mb, v in values.items())
