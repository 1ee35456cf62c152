"""One experiment: the same job with MRC and with the baseline, one after the
other on one fabric, each with the fidelity monitor and the conservation
audit; then the results directory, plots and summary.

(The fault timeline joins here with the fault-scenario work; until then an
experiment runs without faults.)
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from lab import audit, metrics, plots
from lab.fidelity import FidelityMonitor
from lab.job import JobSpec, run_job
from lab.results import Records, ResultsDir
from lab.session import lab_session
from topologies.fabric import DEFAULT_FABRIC, FabricSpec

DRAIN_S = 0.5  # let in-flight packets land before the closing audit snapshot


@dataclass
class Experiment:
    name: str = "clean"
    fabric: FabricSpec = DEFAULT_FABRIC
    transports: tuple = ("mrc", "baseline")
    iterations: int = 30
    buffer_bytes: int = 2 << 20
    seed: int = 1
    stall_factor: float = 2.0
    trimming: bool = True
    params: dict = field(default_factory=dict)

    def config(self) -> dict:
        d = asdict(self)
        d["fabric"] = self.fabric.to_dict()
        d.update(ranks=self.fabric.hosts, planes=self.fabric.planes, link_mbps=self.fabric.link_mbps,
                 spines=self.fabric.spines, hosts_per_rack=self.fabric.hosts_per_rack)
        return d


def run_experiment(exp: Experiment, results_root: Path,
                   progress: Callable[[str, int, int], None] | None = None) -> tuple[Path, dict]:
    records = Records(config=exp.config(), counters={}, fidelity={}, conservation={})
    with lab_session(exp.fabric, trimming=exp.trimming) as session:
        for transport in exp.transports:
            job = JobSpec(transport=transport, iterations=exp.iterations, buffer_bytes=exp.buffer_bytes,
                          seed=exp.seed, params=exp.params)
            before = audit.snapshot(exp.fabric)
            t0 = time.monotonic()

            def tick(k: int, _now: float, transport=transport) -> None:
                if progress:
                    progress(transport, k + 1, exp.iterations)

            with FidelityMonitor(exp.fabric, t0) as monitor:
                result = run_job(session, job, on_iteration=tick, t0=t0)
            time.sleep(DRAIN_S)
            records.conservation[transport] = audit.conservation(before, audit.snapshot(exp.fabric))
            records.iterations += result.iterations
            records.events += [{"t": 0.0, "kind": "phase", "transport": transport, "phase": "start"}]
            records.events += result.path_events
            if result.error:
                records.events.append({"t": round(time.monotonic() - t0, 6), "kind": "error",
                                       "transport": transport, "message": result.error})
            records.counters[transport] = result.stats
            records.fidelity[transport] = monitor.samples
    records.summary = metrics.summarize(records.iterations, records.events, records.counters,
                                        records.fidelity, records.conservation, records.config)
    out = ResultsDir.create(name=exp.name, root=results_root)
    out.write_all(records)
    plots.plot_all(out.path)
    return out.path, records.summary
