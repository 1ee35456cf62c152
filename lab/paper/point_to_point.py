"""Section 5.2.1 of the MRC paper, point-to-point: message latency and bandwidth between two
hosts under one T0 (T0-local) and between two racks (cross-T1), as the paper's ib_write_lat
and ib_write_bw runs give them (a row of `lab/run.py paper`, lab/paper/runner.py).

Each pair runs on its own two-host fabric of the paper's data plane (one rack of two hosts;
two racks of one), so that the job, which runs on every host of its fabric, is exactly the
pair. Latency: a ring all-reduce of two ranks over TINY_BYTES; each iteration is one message
each way and back (reduce-scatter, then all-gather), so half its median is the one-way time
from posting a write to its completion, ib_write_lat's "divided by two"; its agents take each
datagram as it comes (no interrupt moderation), as ib_write_lat polls. Bandwidth: a
bandwidth test (lab/runners/bandwidth.py) between the two, as a share of one host's NIC
capacity (the paper's 96 % of the theoretical peak).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, replace
from typing import Callable, Iterator

from lab.paper import thresholds
from lab.paper.figures import claim
from lab.paper.row import PaperRow
from lab.paper.run_part import PairFigures, trust
from lab.paper.settings import LINKS_FABRIC, MRC, MRC_PARAMS, PASSES, p2p_title
from lab.plumbing.session import lab_session
from lab.runners.bandwidth import run_bandwidth
from lab.runners.job import JobSpec, run_job
from topologies.fabric import FabricSpec

# two float32: each of the 2 ranks sends one element (4 B) per step, near ib_write_lat's 2 B
TINY_BYTES = 8
PAIRS = {"T0-local": replace(LINKS_FABRIC, racks=1, hosts_per_rack=2),
         "cross-T1": replace(LINKS_FABRIC, racks=2, hosts_per_rack=1)}


def one_way_latency(durations: list[float]) -> float | None:
    """Half the median iteration of the two-rank tiny all-reduce (None: no iteration)."""
    return statistics.median(durations) / 2 if durations else None


def measure_pair(spec: FabricSpec, iterations: int, bandwidth_s: float) -> PairFigures:
    """The pair's latency job, then its bandwidth test, on one build of `spec`."""
    with lab_session(spec) as session:
        # ib_write_lat polls its completion queue: no interrupt moderation in the latency job
        job = run_job(session, JobSpec(collective="allreduce", placement="contiguous", iterations=iterations,
                                       buffer_bytes=TINY_BYTES, params=dict(MRC_PARAMS), moderated=False))
        bw = run_bandwidth(session, bandwidth_s, "mrc", dict(MRC_PARAMS), hosts=(0, 1))
    durations = [it.duration for it in job.iterations]
    mean = statistics.mean(f.mean_mbps for f in bw.flows) if bw.flows else None
    return PairFigures(
        latency_s=one_way_latency(durations),
        bandwidth_share=None if mean is None else mean / bw.capacity_mbps,
        verified=bool(durations) and all(it.verified for it in job.iterations) and not job.error
        and bw.verified and not bw.error,
        cpu_bound=bw.cpu_bound, unexplained_loss=bw.unexplained)


def p2p_shape(local: PairFigures, cross: PairFigures) -> tuple[bool, str]:
    """Section 5.2.1: cross-T1 latency is higher than T0-local (the extra switch hops), and
    bandwidth is the same either way ("not constrained by whether traffic remains within a
    single T0"): cross-T1's at least T0-local's within the run-to-run noise, and the other way."""
    if None in (local.latency_s, cross.latency_s, local.bandwidth_share, cross.bandwidth_share):
        return False, "no: a pair measured nothing"
    higher = cross.latency_s > local.latency_s
    tol = 1 - thresholds.PAPER_SHAPE_TOLERANCE
    same_bw = min(local.bandwidth_share, cross.bandwidth_share) >= max(local.bandwidth_share,
                                                                       cross.bandwidth_share) * tol
    same = higher and same_bw
    extra_us = 1e6 * (cross.latency_s - local.latency_s)
    return same, (f"{'yes' if same else 'no'}: cross-T1 latency x{cross.latency_s / local.latency_s:.2f} of "
                  f"T0-local's, {extra_us:+.0f} us ({'higher' if higher else 'not higher'}; paper: 6.54 vs "
                  f"5.09 us, x1.28, +1.45 us for two more switch hops); "
                  f"bandwidth {cross.bandwidth_share:.2f} vs {local.bandwidth_share:.2f} of the NIC's capacity "
                  f"({'the same' if same_bw else 'not the same'} within {thresholds.PAPER_SHAPE_TOLERANCE:.0%}; "
                  f"paper: ~96 % both)")


def pair_text(f: PairFigures) -> str:
    latency = "no message completed" if f.latency_s is None else f"one-way latency {1000 * f.latency_s:.2f} ms"
    bandwidth = "no bandwidth figure" if f.bandwidth_share is None else \
        f"bandwidth {f.bandwidth_share:.2f} of the NIC's capacity"
    return f"{latency}, {bandwidth}"


def p2p_row(quick: bool, say: Callable[[str], None]) -> Iterator[PaperRow]:
    run = PASSES[quick]
    figures = {}
    for where, spec in PAIRS.items():
        say(f"paper: point-to-point, {where}: {run.p2p_iterations} tiny all-reduces, "
            f"then {run.p2p_bandwidth_s:g} s of bandwidth test...")
        figures[where] = measure_pair(spec, run.p2p_iterations, run.p2p_bandwidth_s)
    same, why = p2p_shape(figures["T0-local"], figures["cross-T1"])
    ok, trust_why = trust({f"{MRC}, {where}": f.verdict() for where, f in figures.items()})
    yield PaperRow(p2p_title(), claim("p2p").result, {f"{MRC}, {where}": pair_text(f) for where, f in figures.items()},
                   same, why, ok, trust_why, {where: asdict(f) for where, f in figures.items()})
