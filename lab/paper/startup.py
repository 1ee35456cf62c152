"""Fig. 4 of the MRC paper: a job that starts while T0-T1 links are already down, without a
denylist filled in advance (a row of `lab/run.py paper`, lab/paper/runner.py).

The paper: each QP starts spraying over its whole EV set, some of whose paths are down; their
packets are lost and retransmitted and the EVs swapped for backups, and "even in the first
minute less than 5 packets per QP are lost". The lab takes FAILED_LINKS down before the job's
agents start, runs an MRC all-reduce on the default fabric without the per-host mappers (so no
denylist names the links: the agents find them by losing packets), then once more with the
mappers (the denylist fills as they probe, racing the job's first packets), and counts the data
packets each connection (the lab's QP) lost on the routes through the failed links.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, replace
from typing import Callable, Iterator, Mapping

from faults.links import resolve_link, wait_operstate
from faults.model import FaultEvent
from faults.timeline import FaultTimeline
from lab.live import audit
from lab.analysis.cpu_samples import cpu_bound
from lab.live.fidelity import FidelityMonitor
from lab.analysis.route_records import route_records
from lab.paper.figures import claim
from lab.paper.row import PaperRow
from lab.paper.run_part import StartupRun, trust
from lab.paper.settings import BUFFER_MB, DATAPLANE, LINKS_FABRIC, MRC, MRC_PARAMS, PASSES, PLACEMENT, startup_title
from lab.paper.verdict import DIFFERENT, Judged, judged, shape
from lab.plumbing.session import lab_session
from lab.runners.job import JobSpec, run_job
from lab.scenario.record import buffer_bytes_from_mb
from topologies.names import T0T1Link

# one T0-T1 link on each of two planes, one per rack: every connection of the interleaved ring
# has EVs on routes through one of them, in one direction or the other
FAILED_LINKS = (T0T1Link(plane=0, rack=0, spine=0), T0T1Link(plane=1, rack=1, spine=1))
PAPER_PACKETS_PER_QP = 5       # Fig. 4: "less than 5 packets per QP are lost" in the first minute
WITHOUT, WITH = "no denylist", "with the mappers' denylist"


def failed_routes(links=FAILED_LINKS) -> set[tuple[int, int]]:
    """(plane, T1) of every route through a failed link: on the two-rack fabric every route
    between the racks crosses both racks' links to its T1, in either direction."""
    return {(link.plane, link.spine) for link in links}


def losses(stats: Mapping, routes: set[tuple[int, int]]) -> tuple[dict[str, int], int]:
    """("host->peer" -> data packets lost on `routes`, lost on every other route) from the agents' route
    records."""
    records, _unreadable = route_records(stats)
    lost: dict[str, int] = {}
    elsewhere = 0
    for r in records:
        key = f"{r.host}->{r.peer}"
        lost.setdefault(key, 0)
        if (r.plane, r.t1) in routes:
            lost[key] += r.dropped
        else:
            elsewhere += r.dropped
    return lost, elsewhere


def startup_shape(without: StartupRun) -> Judged:
    """Fig. 4 in the paper's words: without a denylist, every QP (connection) lost fewer than
    PAPER_PACKETS_PER_QP data packets to the links that were down when it started."""
    if not without.lost:
        return judged(DIFFERENT, "no connection measured")
    worst = max(without.lost.values())
    same = worst < PAPER_PACKETS_PER_QP
    return shape(same, f"without a denylist the connections lost "
                       f"{', '.join(str(n) for n in without.lost.values())} data packets to the links down at the "
                       f"start (max {worst}, median {statistics.median(without.lost.values()):g}; paper: less than "
                       f"{PAPER_PACKETS_PER_QP} per QP: {'yes' if same else 'no'})")


def startup_text(run: StartupRun) -> str:
    if not run.lost:
        return "no connection measured"
    return (f"data packets lost per connection on the failed links' routes {', '.join(map(str, run.lost.values()))} "
            f"(max {max(run.lost.values())}); {run.elsewhere} on the other routes; {run.iterations} iterations "
            f"{'verified' if run.verified else 'NOT verified'}")


def measure(session, mappers: bool, iterations: int) -> StartupRun:
    """One MRC all-reduce started with FAILED_LINKS down (as link_flap faults, so the conservation
    audit knows them), its CPU watched; the links back up afterwards."""
    spec = session.spec
    ends = [end for link in FAILED_LINKS for end in resolve_link(session.fabric, str(link))]
    ledger, log = audit.DownLinkLedger(spec), []
    before = audit.snapshot(spec)
    faults = [FaultEvent(at=0, kind="link_flap", target=str(link)) for link in FAILED_LINKS]
    with FaultTimeline(session, faults, transport="mrc", t0=time.monotonic(), log=log, observer=ledger):
        wait_operstate(ends, False, "the links down before the job")
        with FidelityMonitor(spec, time.monotonic()) as monitor:
            result = run_job(session, JobSpec(collective="allreduce", placement=PLACEMENT, iterations=iterations,
                                              buffer_bytes=buffer_bytes_from_mb(BUFFER_MB),
                                              params=dict(MRC_PARAMS), mappers=mappers))
    conservation = audit.conservation(before, audit.settled_snapshot(spec), ledger.marks)
    lost, elsewhere = losses(result.stats, failed_routes())
    verified = bool(result.iterations) and all(it.verified for it in result.iterations) and not result.error
    return StartupRun(lost, elsewhere, verified, len(result.iterations), cpu_bound(monitor.samples),
                      sum(conservation.unexplained_per_link.values()))


def startup_row(quick: bool, say: Callable[[str], None], dataplane: str = DATAPLANE) -> Iterator[PaperRow]:
    iterations = PASSES[quick].iterations
    links = ", ".join(map(str, FAILED_LINKS))
    runs = {}
    with lab_session(replace(LINKS_FABRIC, dataplane=dataplane)) as session:
        for how, mappers in ((WITHOUT, False), (WITH, True)):
            say(f"paper: an all-reduce that starts with {links} down, {how}...")
            runs[how] = measure(session, mappers, iterations)
    verdict, why = startup_shape(runs[WITHOUT])
    ok, trust_why = trust({f"{MRC}, {how}": r.verdict() for how, r in runs.items()})
    lab = {f"{MRC}, {how}": startup_text(r) for how, r in runs.items()}
    yield PaperRow(startup_title(), claim("startup").result, lab, verdict, why, ok, trust_why, {"links": [str(link) for link in FAILED_LINKS],
                                              "runs": {how: asdict(r) for how, r in runs.items()}})
