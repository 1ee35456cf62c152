"""A collective's bandwidth: algbw, busbw, efficiency and the ideal iteration time
(nccl-tests' definitions; docs/metrics.md)."""

from __future__ import annotations

from typing import Callable

BANDWIDTH_FIGURES = ("algbw_mbps", "busbw_mbps", "efficiency", "ideal_s", "ideal_ratio")


# Bus factor of each collective over N ranks, as nccl-tests defines busbw = algbw x factor:
# the share of the buffer that crosses each rank's links, so busbw compares with link rate.
BUS_FACTORS: dict[str, Callable[[int], float]] = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,   # ring: reduce-scatter + all-gather, (N-1)/N each
    "alltoall": lambda n: (n - 1) / n,          # every rank keeps 1/N of its buffer, sends the rest
}
DEFAULT_COLLECTIVE = "allreduce"  # a run's config from before job.collective existed


def bus_factor(ranks: int, collective: str = DEFAULT_COLLECTIVE) -> float:
    """The share of the buffer `collective` moves through each rank (BUS_FACTORS); 0 without ranks."""
    return BUS_FACTORS[collective](ranks) if ranks > 0 else 0.0


def bandwidth(duration_s: float | None, *, ranks: int, buffer_bytes: float, planes: int,
              link_mbps: float, collective: str = DEFAULT_COLLECTIVE) -> dict:
    """algbw/busbw (Mb/s), efficiency, ideal time and ratio for one iteration time.

    ranks N, buffer_bytes S, planes P, link_mbps R, collective (its bus factor):
    see docs/metrics.md. Undefined figures (no duration, zero capacity,
    one rank) are None.
    """
    factor = bus_factor(ranks, collective)
    capacity_mbps = planes * link_mbps
    ideal = factor * buffer_bytes * 8 / (capacity_mbps * 1e6) if capacity_mbps > 0 else None
    out = {**dict.fromkeys(BANDWIDTH_FIGURES), "ideal_s": ideal}
    if duration_s is None or duration_s <= 0:
        return out
    algbw = buffer_bytes * 8 / duration_s / 1e6
    busbw = algbw * factor
    out.update(algbw_mbps=algbw, busbw_mbps=busbw,
               efficiency=busbw / capacity_mbps if capacity_mbps > 0 else None,
               ideal_ratio=duration_s / ideal if ideal else None)
    return out
