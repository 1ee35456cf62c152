"""The job runner: one synchronous collective job (ring all-reduce or all-to-all) over the fabric's agents.

`run_job(session, job)` starts one worker (lab/inhost/jobworker.py) per host inside
its namespace, releases iteration k+1 on every rank only when all ranks
finished k (as synchronous training does), and records per iteration and
per rank start/end on CLOCK_MONOTONIC, which every network namespace
shares. It returns the records; lab/analysis/results.py writes them out.
Ranks sit on hosts in the order `ring_order` gives for the job's placement.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from lab.scenario.record import (
    DEFAULT_BUFFER_MB,
    DEFAULT_ITERATIONS,
    DEFAULT_SEED,
    PLACEMENTS,
    TRANSPORTS,
    JobSettings,
    Scenario,
    buffer_bytes_from_mb,
)
from lab.analysis.iteration_record import Iteration
from lab.analysis.route_records import rebase_route_times
from lab.runners.agent_config import agent_config, lab_transport_params
from lab.runners.mappers import Mappers
from lab.plumbing.session import Session
from lab.runners.workers import HostWorkers, WorkerError, read_stats  # noqa: F401 (read_stats: API)
from mrc_host.agent import AgentConfig
from mrc_host.collectives import COLLECTIVES as COLLECTIVE_CLASSES
from mrc_host.collectives import alltoall_chunk
from mrc_host.denylist import denylist_path
from topologies.fabric import LAB_PAYLOAD_SIZE, FabricSpec

JOB_MAX_SECONDS = 300.0  # the runner's cap on one job when its scenario sets no max_seconds


class JobError(RuntimeError):
    pass


class JobInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a job, raised once its workers are stopped; `result` holds
    the iterations completed before it. A KeyboardInterrupt, so a caller that keeps no
    partial results stops as on any Ctrl-C."""

    def __init__(self, result: "JobResult"):
        super().__init__(f"interrupted after {len(result.iterations)} {result.transport} iterations")
        self.result = result


@dataclass(frozen=True)
class JobSpec:
    """One job: what run_job needs, derived from a Scenario by job_spec() (its
    defaults are the Scenario record's, for jobs built in code: tests, exercises).

    transport: "mrc" or "baseline"
    collective: "allreduce" (ring) or "alltoall" (mrc_host.collectives.COLLECTIVES)
    placement: "contiguous" or "interleaved": the rank order (ring_order)
    iterations: collective iterations to run (stop early at `max_seconds`)
    buffer_bytes: buffer per rank, bytes (float32 elements x 4)
    seed: seed of the inputs (same for both transports: an A/B)
    payload_size: DATA payload bytes per packet
    params: transport parameter overrides (mrc_host.params.TransportParams);
        the window defaults to lab.runners.agent_config.lab_window(spec, transport)
    mappers: run the per-host Clustermapper beside an MRC job (feeds the
        denylist); an experiment on the agents' own probing turns it off
    moderated: the agents' interrupt moderation on (AgentConfig.rx_moderation);
        off, they take each datagram as it comes, as a latency test polls its
        completion queue instead of waiting for an interrupt
    """

    transport: str = "mrc"
    collective: str = JobSettings.collective
    placement: str = JobSettings.placement
    iterations: int = DEFAULT_ITERATIONS
    buffer_bytes: int = buffer_bytes_from_mb(DEFAULT_BUFFER_MB)
    seed: int = DEFAULT_SEED
    payload_size: int = LAB_PAYLOAD_SIZE
    max_seconds: float = JOB_MAX_SECONDS
    params: dict = field(default_factory=dict)
    policy: str = AgentConfig.policy
    mappers: bool = True
    moderated: bool = True

    @property
    def count(self) -> int:
        return self.buffer_bytes // 4


def job_spec(scenario: Scenario, transport: str) -> JobSpec:
    """The job `scenario` runs with `transport`."""
    job = scenario.job
    return JobSpec(transport=transport, collective=job.collective, placement=job.placement,
                   iterations=job.iterations, buffer_bytes=job.buffer_bytes,
                   seed=scenario.seed, payload_size=job.payload_size,
                   max_seconds=JOB_MAX_SECONDS if job.max_seconds is None else job.max_seconds,
                   params=dict(scenario.transport_params))


@dataclass
class JobResult:
    transport: str
    t0: float  # CLOCK_MONOTONIC at job start; records are relative to it
    iterations: list = field(default_factory=list)   # Iteration (lab/analysis/iteration_record.py)
    stats: dict = field(default_factory=dict)  # host -> final agent counters
    path_events: list = field(default_factory=list)
    error: str | None = None


def ring_order(spec: FabricSpec, placement: str) -> list[str]:
    """The hosts in rank order (a ring's order: rank r sends to rank r + 1, the last to the first).

    contiguous: host order, so a rack's hosts are neighbours and only the hops
        between racks cross the T1s (2 of the 4 hops on the default fabric)
    interleaved: dealt over the racks in turn (rack 0's first host, rack 1's
        first, ..., rack 0's second, ...), so with 2 racks or more every hop,
        the closing one too, goes from one rack to another and crosses the T1s,
        as NCCL's rings do over many racks
    """
    if placement == "contiguous":
        return list(spec.host_names)
    if placement != "interleaved":
        raise JobError(f"unknown placement {placement!r}; choose from {', '.join(PLACEMENTS)}")
    if spec.racks < 2:
        raise JobError("placement interleaved alternates racks: the fabric has only 1 rack; use contiguous")
    hosts = sorted(range(spec.hosts), key=lambda h: (spec.index_in_rack(h), spec.rack_of(h)))
    return [spec.host_name(h) for h in hosts]


def check_job(spec: FabricSpec, job: JobSpec) -> None:
    """A JobError naming the field, before any worker starts, for a job that cannot run here."""
    if job.transport not in TRANSPORTS:
        raise JobError(f"unknown transport {job.transport!r}; choose from {', '.join(TRANSPORTS)}")
    if job.collective not in COLLECTIVE_CLASSES:
        raise JobError(f"unknown collective {job.collective!r}; choose from {', '.join(COLLECTIVE_CLASSES)}")
    ring_order(spec, job.placement)
    if job.collective == "alltoall" and alltoall_chunk(job.count, spec.hosts) == 0:
        raise JobError(f"buffer_bytes {job.buffer_bytes}: an all-to-all over {spec.hosts} ranks needs "
                       f"at least {4 * spec.hosts} bytes")


def _rank_agent_config(session: Session, host: int, job: JobSpec, ranks: list[str], stats_path: str) -> dict:
    spec = session.spec
    # only the peers the collective talks to: ring neighbours, or every rank for all-to-all
    peers = COLLECTIVE_CLASSES[job.collective].peers(ranks, spec.host_name(host))
    return agent_config(session.dataplane, host, sorted(spec.host_names.index(p) for p in peers),
                        transport=job.transport, payload_size=job.payload_size,
                        params=lab_transport_params(spec, job.transport, job.params), stats_path=stats_path,
                        policy=job.policy, denylist_path=str(denylist_path(session.workdir)),
                        **({} if job.moderated else {"rx_moderation": 0.0}))


def start_workers(session: Session, job: JobSpec) -> HostWorkers:
    """One job worker per host, in host order, each READY."""
    spec = session.spec
    ranks = ring_order(spec, job.placement)
    workers = HostWorkers(session)
    for h in range(spec.hosts):
        name = spec.host_name(h)
        stats_path = session.workdir / f"{job.transport}-{name}.jsonl"
        stats_path.unlink(missing_ok=True)
        workers.start(h, "lab.inhost.jobworker", {
            "agent": _rank_agent_config(session, h, job, ranks, str(stats_path)),
            "job": {"collective": job.collective, "ranks": ranks, "count": job.count, "seed": job.seed},
        }, session.workdir / f"{job.transport}-{name}.json")
    for name in spec.host_names:
        workers.expect(name, "READY")
    return workers


def run_job(session: Session, job: JobSpec, on_iteration: Callable[[int, float], None] | None = None,
            t0: float | None = None, on_ready: Callable[[float], None] | None = None) -> JobResult:
    """Run `job` to the end; `on_iteration(k, now)` is called after each iteration
    (progress bar). t0 (default: the moment every worker is READY) is what the
    records count from; `on_ready(t0)` is called once before the first
    iteration (a deferred fault timeline starts there). Interrupted (Ctrl-C,
    SIGTERM), it stops the workers and raises JobInterrupted with what was measured."""
    check_job(session.spec, job)
    mappers = None
    try:
        if job.transport == "mrc" and job.mappers:
            mappers = Mappers(session)  # MRC's denylist is fed by one Clustermapper per host
        workers = start_workers(session, job)
    except WorkerError as exc:
        if mappers is not None:
            mappers.stop(time.monotonic())
        raise JobError(str(exc)) from None
    hosts = list(workers.procs)   # rank_times are listed in host order, whatever the rank order
    t0 = time.monotonic() if t0 is None else t0
    result = JobResult(job.transport, t0)
    interrupted = False
    try:
        if on_ready is not None:
            on_ready(t0)
        for k in range(job.iterations):
            if time.monotonic() - t0 > job.max_seconds:
                break
            started = time.monotonic()
            workers.send(f"ITER {k}")
            ranks, verified = [], True
            for name in hosts:
                fields = workers.expect(name, "DONE")
                ranks.append([float(fields[1]) - t0, float(fields[2]) - t0])
                verified &= fields[3] == "1"
            ended = time.monotonic()
            result.iterations.append(Iteration(
                transport=job.transport, iteration=k, start=round(started - t0, 6), end=round(ended - t0, 6),
                duration=round(ended - started, 6), verified=verified, rank_times=ranks))
            if on_iteration is not None:
                on_iteration(k, ended)
    except WorkerError as exc:
        result.error = str(exc)
    except KeyboardInterrupt:   # the counters and path events below are still read
        interrupted = True
    finally:
        stats = workers.stop()
        if mappers is not None:  # path-health events too: the mappers' findings and denials
            result.path_events += mappers.stop(t0, job.transport)
    for name, s in stats.items():
        result.stats[name] = rebase_route_times(s["counters"], t0)   # on the path events' clock
        for tr in s["transitions"]:
            result.path_events.append({"kind": "path_state", "transport": job.transport, **tr,
                                       "t": round(tr.get("time", t0) - t0, 6)})
    if interrupted:
        raise JobInterrupted(result)
    return result
