"""The job runner: one synchronous all-reduce job over the fabric's agents.

`run_job(session, job)` starts one worker (lab/jobworker.py) per host inside
its namespace, releases iteration k+1 on every rank only when all ranks
finished k (as synchronous training does), and records per iteration and
per rank start/end on CLOCK_MONOTONIC, which every network namespace
shares. It returns the records; writing them out is lab/results.py's job.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from lab.session import Session
from lab.workers import HostWorkers, WorkerError, read_stats  # noqa: F401 (read_stats: API)

TRANSPORTS = ("mrc", "baseline")


class JobError(RuntimeError):
    pass


@dataclass(frozen=True)
class JobSpec:
    """One job.

    transport: "mrc" or "baseline"
    iterations: all-reduce iterations to run (stop early at `max_seconds`)
    buffer_bytes: all-reduce buffer per rank, bytes (float32 elements x 4)
    seed: seed of the inputs (same for both transports: an A/B)
    payload_size: DATA payload bytes per packet (8192: fits the fabric's
        9000-byte jumbo MTU, and halves the emulator's per-packet CPU
        compared with 4096)
    params: transport parameter overrides (mrc_host.params.TransportParams);
        the window defaults to `lab_window(spec, transport)`
    """

    transport: str = "mrc"
    iterations: int = 50
    buffer_bytes: int = 2 << 20
    seed: int = 1
    payload_size: int = 8192
    max_seconds: float = 300.0
    params: dict = field(default_factory=dict)
    policy: str = "round_robin"

    @property
    def count(self) -> int:
        return self.buffer_bytes // 4


@dataclass
class JobResult:
    transport: str
    t0: float  # CLOCK_MONOTONIC at job start; records are relative to it
    iterations: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)  # host -> final agent counters
    path_events: list = field(default_factory=list)
    error: str | None = None


# The emulated NIC hands every packet the window allows to its port's shaper
# at once, where a real NIC's scheduler pulls them at line rate: a window
# above the bandwidth-delay product only queues in the host's shaper (which
# marks no ECN), inflating the RTT the RTO is built on. So each connection's
# window is capped near one BDP: PACKETS_PER_PLANE packets in flight per
# plane it uses. Measured on the default fabric (8 KB payload, 10 Mb/s):
# 3/plane -> MRC efficiency 0.92, no spurious loss, 0 % CPU-saturated
# samples; 4/plane -> 0.91 and 18 %; the old 64..1024 -> 0.76, 160 RTOs.
PACKETS_PER_PLANE = 3


def lab_window(spec, transport: str) -> int:
    """Window (packets) of one connection: MRC sprays over every plane; the
    baseline's window is per rail (one single-path flow per plane)."""
    return PACKETS_PER_PLANE * (spec.planes if transport == "mrc" else 1)


def transport_params(spec, job: JobSpec) -> dict:
    """The job's transport parameters: the lab's window, then the job's overrides."""
    w = lab_window(spec, job.transport)
    return {"cwnd_init": w, "cwnd_max": w, **job.params}


def agent_config(session: Session, host: int, job: JobSpec, ring: list[str], stats_path: str) -> dict:
    spec = session.spec
    i = ring.index(spec.host_name(host))
    # only the ring neighbours: a rank never talks to anyone else (ring
    # position = host id: Workers builds the ring in host order)
    neighbours = {(i - 1) % len(ring), (i + 1) % len(ring)}
    return {
        "host_id": spec.host_name(host),
        "plane_ips": [spec.host_ip(host, p) for p in range(spec.planes)],
        "peers": {spec.host_name(n): [spec.host_ip(n, p) for p in range(spec.planes)]
                  for n in sorted(neighbours)},
        "evs": spec.evs,
        "payload_size": job.payload_size,
        "transport": job.transport,
        "policy": job.policy,
        "params": transport_params(spec, job),
        "stats_path": stats_path,
    }


def start_workers(session: Session, job: JobSpec) -> HostWorkers:
    """One job worker per host, in ring order, each READY."""
    spec = session.spec
    ring = [spec.host_name(h) for h in range(spec.hosts)]
    workers = HostWorkers(session)
    for h in range(spec.hosts):
        name = spec.host_name(h)
        stats_path = session.workdir / f"{job.transport}-{name}.jsonl"
        stats_path.unlink(missing_ok=True)
        workers.start(h, "lab.jobworker", {
            "agent": agent_config(session, h, job, ring, str(stats_path)),
            "job": {"ring": ring, "count": job.count, "seed": job.seed},
        }, session.workdir / f"{job.transport}-{name}.json")
    for name in ring:
        workers.expect(name, "READY")
    return workers


def run_job(session: Session, job: JobSpec, on_iteration: Callable[[int, float], None] | None = None,
            t0: float | None = None, on_ready: Callable[[float], None] | None = None) -> JobResult:
    """Run `job` to the end; `on_iteration(k, now)` is called after each iteration
    (progress bar). t0 (default: the moment every worker is READY) is what the
    records count from; `on_ready(t0)` is called once before the first
    iteration (a deferred fault timeline starts there)."""
    if job.transport not in TRANSPORTS:
        raise JobError(f"unknown transport {job.transport!r}; choose from {', '.join(TRANSPORTS)}")
    try:
        workers = start_workers(session, job)
    except WorkerError as exc:
        raise JobError(str(exc)) from None
    ring = list(workers.procs)
    t0 = time.monotonic() if t0 is None else t0
    result = JobResult(job.transport, t0)
    try:
        if on_ready is not None:
            on_ready(t0)
        for k in range(job.iterations):
            if time.monotonic() - t0 > job.max_seconds:
                break
            started = time.monotonic()
            workers.send(f"ITER {k}")
            ranks, verified = [], True
            for name in ring:
                fields = workers.expect(name, "DONE")
                ranks.append([float(fields[1]) - t0, float(fields[2]) - t0])
                verified &= fields[3] == "1"
            ended = time.monotonic()
            result.iterations.append({
                "transport": job.transport, "iteration": k,
                "start": round(started - t0, 6), "end": round(ended - t0, 6),
                "duration": round(ended - started, 6), "verified": verified, "rank_times": ranks,
            })
            if on_iteration is not None:
                on_iteration(k, ended)
    except WorkerError as exc:
        result.error = str(exc)
    finally:
        stats = workers.stop()
    for name, s in stats.items():
        result.stats[name] = s["counters"]
        for tr in s["transitions"]:
            result.path_events.append({"kind": "path_state", "transport": job.transport, **tr,
                                       "t": round(tr.get("time", t0) - t0, 6)})
    return result
