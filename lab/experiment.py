"""One experiment: the same job with MRC and with the baseline, one after the
other on one fabric, each under the same fault timeline (times relative to
its own job start), with the fidelity monitor and the conservation audit;
then the results directory, plots and summary.

An Experiment comes from a scenario file (faults/scenarios/, see
docs/scenarios.md) or is built directly (tests, benchmarks).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from faults.model import FaultEvent
from lab import audit, metrics, plots
from lab.fidelity import FidelityMonitor
from lab.job import JobSpec, run_job
from lab.results import Records, ResultsDir
from lab.session import lab_session
from topologies.fabric import DEFAULT_FABRIC, FabricSpec

DRAIN_S = 0.5  # let in-flight packets land before the closing audit snapshot


@dataclass
class Experiment:
    """What one invocation runs.

    max_seconds: each transport's job stops after this long (None: the job
        runner's cap), so a stalled baseline cannot run forever
    payload_size: None = the job runner's default
    convergence_delay / hold_down: the baseline routing emulation (s)
    """

    name: str = "clean"
    description: str = ""
    fabric: FabricSpec = DEFAULT_FABRIC
    transports: tuple = ("mrc", "baseline")
    iterations: int = 30
    buffer_bytes: int = 2 << 20
    max_seconds: float | None = None
    payload_size: int | None = None
    seed: int = 1
    stall_factor: float = metrics.DEFAULT_STALL_FACTOR
    trimming: bool = True
    params: dict = field(default_factory=dict)
    faults: list = field(default_factory=list)  # FaultEvent, sorted by start
    convergence_delay: float = 5.0
    hold_down: float = 2.0

    @classmethod
    def from_scenario(cls, scenario) -> "Experiment":
        """From a faults.scenario.Scenario (already validated)."""
        job = scenario.job
        return cls(
            name=scenario.name, description=scenario.description, fabric=scenario.fabric,
            transports=tuple(scenario.transports), iterations=job.iterations,
            buffer_bytes=job.buffer_bytes, max_seconds=job.max_seconds, payload_size=job.payload_size,
            seed=scenario.seed, stall_factor=scenario.stall_factor or metrics.DEFAULT_STALL_FACTOR,
            trimming=scenario.trimming, params=dict(scenario.transport_params),
            faults=list(scenario.faults),
            convergence_delay=scenario.baseline_routing.convergence_delay_s,
            hold_down=scenario.baseline_routing.hold_down_s,
        )

    def job(self, transport: str) -> JobSpec:
        spec = JobSpec(transport=transport, iterations=self.iterations, buffer_bytes=self.buffer_bytes,
                       seed=self.seed, params=self.params)
        if self.max_seconds is not None:
            spec = replace(spec, max_seconds=self.max_seconds)
        if self.payload_size is not None:
            spec = replace(spec, payload_size=self.payload_size)
        return spec

    def config(self) -> dict:
        d = asdict(self)
        d["fabric"] = self.fabric.to_dict()
        d["faults"] = [f.to_dict() if isinstance(f, FaultEvent) else f for f in self.faults]
        d.update(ranks=self.fabric.hosts, planes=self.fabric.planes, link_mbps=self.fabric.link_mbps,
                 spines=self.fabric.spines, hosts_per_rack=self.fabric.hosts_per_rack,
                 payload_size=self.job("mrc").payload_size)
        return d


def run_experiment(exp: Experiment, results_root: Path,
                   progress: Callable[[str, int, int, float], None] | None = None) -> tuple[Path, dict]:
    """Run every transport of `exp`; progress(transport, iterations done, of, seconds since start)."""
    from faults.routing import read_routing_events
    from faults.timeline import FaultTimeline

    records = Records(config=exp.config(), counters={}, fidelity={}, conservation={})
    with lab_session(exp.fabric, trimming=exp.trimming, convergence_delay=exp.convergence_delay,
                     hold_down=exp.hold_down) as session:
        for transport in exp.transports:
            job = exp.job(transport)
            before = audit.snapshot(exp.fabric)
            fault_log: list = []
            ledger = audit.DownLinkLedger(exp.fabric)
            # fault times count from the job's start (every worker READY), not
            # from before the workers were started: on a busy machine that can
            # take seconds, and a fault meant for mid-job would hit its start
            timeline = FaultTimeline(session, exp.faults, transport=transport, t0=None, log=fault_log,
                                     observer=ledger)

            def tick(k: int, now: float, transport=transport, timeline=timeline) -> None:
                if progress:
                    progress(transport, k + 1, job.iterations, now - timeline.t0)

            with FidelityMonitor(exp.fabric, time.monotonic()) as monitor, timeline:
                result = run_job(session, job, on_iteration=tick, on_ready=timeline.start)
            t0 = result.t0
            monitor.rebase(t0)
            ended = time.monotonic()
            time.sleep(DRAIN_S)
            records.conservation[transport] = audit.conservation(before, audit.snapshot(exp.fabric),
                                                                 ledger.marks)
            records.iterations += result.iterations
            records.events.append({"t": 0.0, "kind": "phase", "transport": transport, "phase": "start"})
            records.events += fault_log
            records.events += read_routing_events(session.controller.routing_log, t0, transport, until=ended)
            records.events += result.path_events
            if result.error:
                records.events.append({"t": round(ended - t0, 6), "kind": "error",
                                       "transport": transport, "message": result.error})
            records.counters[transport] = result.stats
            records.fidelity[transport] = monitor.samples
    records.config["timings"] = {k: round(v, 3) for k, v in session.timings.items()}
    records.events.sort(key=lambda e: (e.get("transport", ""), e.get("t", 0.0)))
    records.summary = metrics.summarize(records.iterations, records.events, records.counters,
                                        records.fidelity, records.conservation, records.config)
    out = ResultsDir.create(name=exp.name, root=results_root)
    out.write_all(records)
    plots.plot_all(out.path)
    return out.path, records.summary
