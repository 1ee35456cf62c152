"""Section 5.2.1 of the MRC paper, point-to-point: message latency and bandwidth between two
hosts under one T0 (T0-local) and between two racks (cross-T1), as the paper's ib_write_lat
and ib_write_bw runs give them (a row of `lab/run.py paper`, lab/paper/runner.py).

Each pair runs on its own two-host fabric of the pass's data plane (one rack of two hosts;
two racks of one), so that the job, which runs on every host of its fabric, is exactly the
pair. Latency: a ring all-reduce of two ranks over TINY_BYTES; each iteration is one message
each way and back (reduce-scatter, then all-gather), so half its median is the one-way time
from posting a write to its completion, ib_write_lat's "divided by two"; its agents take each
datagram as it comes (no interrupt moderation), as ib_write_lat polls. The fabric's own
latency: kernel pings on one plane from a host to another of its rack and to one of the other
rack, in turns on one build of the four-host fabric, so that the machine's state weighs on
both alike (no agent in the path: what the extra switch hops cost, the paper's reason).
Bandwidth: a bandwidth test (lab/runners/bandwidth.py) between the two, as a share of one
host's NIC capacity (the paper's 96 % of the theoretical peak).

Each latency difference is judged with its 95 % confidence interval (a bootstrap of the two
medians): the agents' wakeups vary by hundreds of microseconds, a router hop costs a few, so
the message latency may not resolve what the fabric's does.
"""

from __future__ import annotations

import re
import statistics
import subprocess
from dataclasses import asdict, replace
from typing import Callable, Iterator

import numpy as np

from lab.paper import thresholds
from lab.paper.figures import claim
from lab.paper.row import PaperRow
from lab.paper.run_part import PairFigures, trust
from lab.paper.settings import DATAPLANE, LINKS_FABRIC, MRC, MRC_PARAMS, PASSES, p2p_title
from lab.plumbing.session import lab_session
from lab.runners.bandwidth import run_bandwidth
from lab.runners.job import JobSpec, run_job
from topologies.system import netns
from topologies.fabric import FabricSpec

# two float32: each of the 2 ranks sends one element (4 B) per step, near ib_write_lat's 2 B
TINY_BYTES = 8
PAIRS = {"T0-local": replace(LINKS_FABRIC, racks=1, hosts_per_rack=2),
         "cross-T1": replace(LINKS_FABRIC, racks=2, hosts_per_rack=1)}
# the fabric's latency: from host 0 of the two-rack, two-host-rack fabric to a host of its own rack
# and to one of the other rack, in PING_TURNS turns
PING_FABRIC = replace(LINKS_FABRIC, racks=2, hosts_per_rack=2)
PING_PEERS = {"T0-local": 1, "cross-T1": 2}
PING_TURNS = 10


PING_INTERVAL_S = 0.002       # root may ping this often; a ping's echo is the kernel's alone
CONFIDENCE = 0.95
RESAMPLES = 2000               # bootstrap resamples of each difference of medians


def one_way_latency(durations: list[float]) -> float | None:
    """Half the median iteration of the two-rank tiny all-reduce (None: no iteration)."""
    return statistics.median(durations) / 2 if durations else None


def ping_times(output: str) -> list[float]:
    """The round-trip times (s) a ping printed, one per reply."""
    return [float(ms) / 1000 for ms in re.findall(r"time=([\d.]+) ms", output)]


def one_way_pings(session, dst_host: int, count: int) -> list[float]:
    """One-way times (s, half each round trip) of `count` kernel pings from host 0 to `dst_host`'s
    plain address on plane 0, in host 0's namespace: the fabric's hops, no agent in the path."""
    dst = session.dataplane.host_addresses(dst_host, "baseline")[0]
    out = subprocess.run([*netns.nsenter(session.fabric.host(0).pid), "ping", "-n",
                          "-c", str(count), "-i", str(PING_INTERVAL_S), "-W", "1", dst],
                         capture_output=True, text=True, timeout=30 + count * PING_INTERVAL_S * 4)
    return [t / 2 for t in ping_times(out.stdout)]


def fabric_latencies(count: int, dataplane: str = DATAPLANE) -> dict[str, list[float]]:
    """{pair: one-way times (s)} of `count` pings each, T0-local and cross-T1 in PING_TURNS turns
    on one build of PING_FABRIC on `dataplane`."""
    samples: dict[str, list[float]] = {where: [] for where in PING_PEERS}
    per_turn = max(1, count // PING_TURNS)
    with lab_session(replace(PING_FABRIC, dataplane=dataplane)) as session:
        for _ in range(PING_TURNS):
            for where, dst in PING_PEERS.items():
                samples[where] += one_way_pings(session, dst, per_turn)
    return samples


def measure_pair(spec: FabricSpec, iterations: int, bandwidth_s: float, fabric: list[float]) -> PairFigures:
    """The pair's latency job, then its bandwidth test, on one build of `spec`; `fabric`: the
    fabric's one-way times for a pair like it (fabric_latencies)."""
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
        cpu_bound=bw.cpu_bound, unexplained_loss=bw.unexplained,
        fabric_latency_s=statistics.median(fabric) if fabric else None,
        latency_samples_s=tuple(d / 2 for d in durations), fabric_samples_s=tuple(fabric))


def median_difference(higher: tuple, lower: tuple) -> tuple[float, float, float] | None:
    """median(higher) - median(lower), with its CONFIDENCE interval from a bootstrap of both
    (seeded: a row reads the same from the same samples); None without samples."""
    if not higher or not lower:
        return None
    rng = np.random.default_rng(0)
    a, b = np.asarray(higher), np.asarray(lower)
    diffs = (np.median(rng.choice(a, (RESAMPLES, a.size)), axis=1)
             - np.median(rng.choice(b, (RESAMPLES, b.size)), axis=1))
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(diffs, [tail, 100 - tail])
    return float(np.median(a) - np.median(b)), float(low), float(high)


def difference_text(diff: tuple[float, float, float]) -> str:
    d, low, high = (1e6 * x for x in diff)
    return f"{d:+.0f} us (95% CI {low:+.0f} to {high:+.0f})"


def p2p_shape(local: PairFigures, cross: PairFigures) -> tuple[bool, str]:
    """Section 5.2.1: cross-T1 latency is higher than T0-local ("the extra switch hops"), and
    bandwidth is the same either way ("not constrained by whether traffic remains within a
    single T0"): cross-T1's at least T0-local's within the run-to-run noise, and the other way.
    "Higher" is the fabric's latency (what the hops cost) above T0-local's with 95 % confidence;
    MRC's message latency is printed with its own interval and said resolved or not."""
    if None in (local.latency_s, cross.latency_s, local.bandwidth_share, cross.bandwidth_share):
        return False, "no: a pair measured nothing"
    fabric = median_difference(cross.fabric_samples_s, local.fabric_samples_s)
    if fabric is None:
        return False, "no: the fabric's latency was not measured (no ping came back)"
    higher = fabric[1] > 0
    message = median_difference(cross.latency_samples_s, local.latency_samples_s)
    if message is None:
        resolved = "no samples"
    else:
        resolved = ("higher" if message[1] > 0 else "lower" if message[2] < 0 else
                    "not resolved: within the agents' noise")
        resolved = f"{difference_text(message)}, {resolved}"
    tol = 1 - thresholds.PAPER_SHAPE_TOLERANCE
    same_bw = min(local.bandwidth_share, cross.bandwidth_share) >= max(local.bandwidth_share,
                                                                       cross.bandwidth_share) * tol
    same = higher and same_bw
    return same, (f"{'yes' if same else 'no'}: the fabric's one-way latency cross-T1 "
                  f"{1e6 * cross.fabric_latency_s:.0f} us against T0-local {1e6 * local.fabric_latency_s:.0f} us, "
                  f"{difference_text(fabric)}, {'higher' if higher else 'not higher'} (paper: 6.54 vs 5.09 us, "
                  f"+1.45 us for two more switch hops); MRC's message latency "
                  f"{1000 * cross.latency_s:.2f} vs {1000 * local.latency_s:.2f} ms, {resolved}; "
                  f"bandwidth {cross.bandwidth_share:.2f} vs {local.bandwidth_share:.2f} of the NIC's capacity "
                  f"({'the same' if same_bw else 'not the same'} within {thresholds.PAPER_SHAPE_TOLERANCE:.0%}; "
                  f"paper: ~96 % both)")


def pair_text(f: PairFigures) -> str:
    latency = "no message completed" if f.latency_s is None else f"one-way latency {1000 * f.latency_s:.2f} ms"
    if f.fabric_latency_s is not None:
        latency += f" (the fabric's alone {1e6 * f.fabric_latency_s:.0f} us)"
    bandwidth = "no bandwidth figure" if f.bandwidth_share is None else \
        f"bandwidth {f.bandwidth_share:.2f} of the NIC's capacity"
    return f"{latency}, {bandwidth}"


def p2p_row(quick: bool, say: Callable[[str], None], dataplane: str = DATAPLANE) -> Iterator[PaperRow]:
    run = PASSES[quick]
    say(f"paper: point-to-point, the fabric's latency: {run.p2p_iterations} pings T0-local and cross-T1, "
        f"in {PING_TURNS} turns...")
    fabric = fabric_latencies(run.p2p_iterations, dataplane)
    figures = {}
    for where, spec in PAIRS.items():
        say(f"paper: point-to-point, {where}: {run.p2p_iterations} tiny all-reduces, "
            f"then {run.p2p_bandwidth_s:g} s of bandwidth test...")
        figures[where] = measure_pair(replace(spec, dataplane=dataplane), run.p2p_iterations, run.p2p_bandwidth_s,
                                      fabric[where])
    same, why = p2p_shape(figures["T0-local"], figures["cross-T1"])
    ok, trust_why = trust({f"{MRC}, {where}": f.verdict() for where, f in figures.items()})
    yield PaperRow(p2p_title(), claim("p2p").result, {f"{MRC}, {where}": pair_text(f) for where, f in figures.items()},
                   same, why, ok, trust_why, {where: asdict(f) for where, f in figures.items()})
