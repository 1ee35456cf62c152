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

The paper's latency is the transport's own (ib_write_lat), so the row judges MRC's message latency,
with a 95 % interval across runs (lab/paper/verdict.py difference_interval), against what the
extra hops cost the fabric (kernel pings, their difference's interval a bootstrap of the two
medians): the agents' wakeups vary by hundreds of microseconds from run to run, a router hop
costs a few, and where the hop is lost in that noise the verdict is "not resolvable here", with
both numbers. The row runs one latency job per pair today, so it says so.
"""

from __future__ import annotations

import re
import statistics
import subprocess
from dataclasses import asdict, replace
from typing import Callable, Iterator

import numpy as np

from lab.paper import thresholds
from lab.paper.figures import P2P_BANDWIDTH, claim
from lab.paper.row import PaperRow
from lab.paper.run_part import PairFigures, trust
from lab.paper.settings import DATAPLANE, LINKS_FABRIC, MRC, MRC_PARAMS, PASSES, p2p_title
from lab.paper.verdict import DIFFERENT, SAME, UNRESOLVABLE, Judged, combined, difference_interval, judged
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
P2P_PAPER_HOPS_S = 6.54e-6 - 5.09e-6   # what the paper's extra switch hops cost ib_write_lat
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


def latency_runs(f: PairFigures) -> list[float]:
    """The pair's MRC message latency, one median (s, one-way) per run: its latency_runs_s, or its one
    run's (the row runs one latency job per pair today)."""
    if f.latency_runs_s:
        return [float(x) for x in f.latency_runs_s]
    return [] if f.latency_s is None else [f.latency_s]


def hop_cost(local: PairFigures, cross: PairFigures) -> tuple[float, float, float] | None:
    """What the extra switch hops cost on the lab's fabric, kernel pings cross-T1 less T0-local (s, with
    its 95 % interval); None without pings."""
    return median_difference(cross.fabric_samples_s, local.fabric_samples_s)


def latency_part(local: PairFigures, cross: PairFigures) -> tuple[str, str]:
    """"cross-T1 communication exhibits a higher latency" (6.54 against 5.09 us, "attributable to extra
    switch hops"), judged on MRC's own message latency with a 95 % interval across runs. Not resolvable
    here when there are fewer than two runs per pair (an interval over one run's samples leaves out
    what differs from one run to the next: the agents' wakeups, hundreds of microseconds) or when the
    interval is wider than what the hops cost on the fabric (PAPER's 1.45 us without pings): the hop is
    lost in the agents' noise. Otherwise higher is the shape, lower or level a different one."""
    hops = hop_cost(local, cross)
    hop_s = hops[0] if hops else P2P_PAPER_HOPS_S
    hop_text = (f"the extra hops cost the fabric {difference_text(hops)} (kernel pings, no agent)" if hops else
                f"no ping measured the hops (the paper's +{1e6 * P2P_PAPER_HOPS_S:.2f} us stands in)")
    runs_local, runs_cross = latency_runs(local), latency_runs(cross)
    across = difference_interval(runs_cross, runs_local)
    if across is None:
        within = median_difference(cross.latency_samples_s, local.latency_samples_s)
        one_run = "" if within is None else f", {difference_text(within)} within one run's samples"
        return UNRESOLVABLE, (f"MRC's message latency cross-T1 {1000 * cross.latency_s:.2f} ms against T0-local "
                              f"{1000 * local.latency_s:.2f} ms{one_run}, one run per pair: no interval across "
                              f"runs; {hop_text}, so a router hop is lost in the agents' noise")
    d, low, high = across
    text = f"MRC's message latency cross-T1 less T0-local {difference_text(across)} across runs; {hop_text}"
    if (high - low) / 2 >= hop_s:
        return UNRESOLVABLE, f"{text}: the interval is wider than a hop costs, which is lost in the agents' noise"
    return (SAME if low > 0 else DIFFERENT), f"{text}: {'higher' if low > 0 else 'not higher'} cross-T1"


def p2p_shape(local: PairFigures, cross: PairFigures) -> Judged:
    """Section 5.2.1: cross-T1 latency is higher than T0-local (latency_part: MRC's own, not the
    fabric's), and bandwidth "approximately 770 Gb/s, corresponding to 96% of the theoretical peak"
    both ways ("not constrained by whether traffic remains within a single T0"): each pair at least
    the paper's 96 % of the NIC's capacity up to the run-to-run noise, and the two within it of each
    other."""
    if None in (local.latency_s, cross.latency_s, local.bandwidth_share, cross.bandwidth_share):
        return judged(DIFFERENT, "a pair measured nothing")
    latency, latency_text = latency_part(local, cross)
    tol = 1 - thresholds.PAPER_SHAPE_TOLERANCE
    peak = P2P_BANDWIDTH.value
    near_peak = all(thresholds.at_least(share, peak) for share in (local.bandwidth_share, cross.bandwidth_share))
    same_bw = min(local.bandwidth_share, cross.bandwidth_share) >= max(local.bandwidth_share,
                                                                       cross.bandwidth_share) * tol
    bandwidth = SAME if near_peak and same_bw else DIFFERENT
    return judged(combined([latency, bandwidth]),
                  f"{latency_text}; bandwidth cross-T1 {cross.bandwidth_share:.2f}, T0-local "
                  f"{local.bandwidth_share:.2f} of the NIC's capacity (paper: ~{peak:.0%} both: "
                  f"{'yes' if near_peak else 'no'}; {'the same' if same_bw else 'not the same'} within "
                  f"{thresholds.PAPER_SHAPE_TOLERANCE:.0%})")


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
    verdict, why = p2p_shape(figures["T0-local"], figures["cross-T1"])
    ok, trust_why = trust({f"{MRC}, {where}": f.verdict() for where, f in figures.items()})
    yield PaperRow(p2p_title(), claim("p2p").result, {f"{MRC}, {where}": pair_text(f) for where, f in figures.items()},
                   verdict, why, ok, trust_why, {where: asdict(f) for where, f in figures.items()})
