"""One experiment: a Scenario's job with each of its transports (MRC, then the
baseline), one after the other on one fabric, each under the same fault
timeline (times relative to its own job start), with the fidelity monitor and
the conservation audit; then the results directory, plots and summary.

The Scenario (faults/scenario_record.py) is the whole run description: it
comes from a scenario file (faults/scenarios/, see docs/scenarios.md) or is
built in code (tests, benchmarks); config.json is its to_dict().
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from faults.background_load import background_load
from faults.scenario_record import Scenario
from lab.analysis import audit, metrics, plots
from lab.analysis.fidelity import DatapathHeartbeat, FidelityMonitor, heartbeat_verdict
from lab.runners.job import job_spec, run_job
from lab.analysis.results import Records, ResultsDir
from lab.plumbing.session import Session, lab_session


Progress = Callable[[str, int, int, float], None]


def run_experiment(scenario: Scenario, results_root: Path, progress: Progress | None = None) -> tuple[Path, dict]:
    """Run every transport of `scenario`; progress(transport, iterations done, of, seconds since start)."""
    if scenario.stall_factor is None:  # the report's default, written down so config.json says which
        scenario = replace(scenario, stall_factor=metrics.DEFAULT_STALL_FACTOR)
    records = Records(config=scenario.to_dict(), counters={}, fidelity={}, conservation={})
    heartbeats: dict[str, dict] = {}  # transport -> heartbeat_verdict() figures, added to its summary
    routing = scenario.baseline_routing
    with lab_session(scenario.fabric, trimming=scenario.trimming, convergence_delay=routing.convergence_delay_s,
                     hold_down=routing.hold_down_s) as session, background_load(scenario.background_load):
        for transport in scenario.transports:
            heartbeats[transport] = _run_transport(session, scenario, transport, records, progress)
    records.config["timings"] = {k: round(v, 3) for k, v in session.timings.items()}
    records.events.sort(key=lambda e: (e.get("transport", ""), e.get("t", 0.0)))
    records.summary = metrics.summarize(records.iterations, records.events, records.counters,
                                        records.fidelity, records.conservation, records.config)
    for transport, figures in heartbeats.items():
        if transport in records.summary:
            records.summary[transport].update(figures)
    out = ResultsDir.create(name=scenario.name, root=results_root)
    out.write_all(records)
    plots.plot_all(out.path)
    return out.path, records.summary


def _run_transport(session: Session, scenario: Scenario, transport: str, records: Records,
                   progress: Progress | None) -> dict:
    """One transport's job under the fault timeline; its records are added to `records`.
    Returns its datapath heartbeat's figures (lab.analysis.fidelity.heartbeat_verdict)."""
    from topologies.routing import read_routing_events
    from faults.timeline import FaultTimeline

    job = job_spec(scenario, transport)
    before = audit.snapshot(scenario.fabric)
    fault_log: list = []
    ledger = audit.DownLinkLedger(scenario.fabric)
    # fault times count from the job's start (every worker READY), not
    # from before the workers were started: on a busy machine that can
    # take seconds, and a fault meant for mid-job would hit its start
    timeline = FaultTimeline(session, scenario.faults, transport=transport, t0=None, log=fault_log,
                             observer=ledger)

    def tick(k: int, now: float) -> None:
        if progress:
            progress(transport, k + 1, job.iterations, now - timeline.t0)

    # the heartbeat starts after the `before` snapshot and ends before the drain: none of its
    # datagrams is in flight at either audit snapshot
    with FidelityMonitor(scenario.fabric, time.monotonic()) as monitor, \
            DatapathHeartbeat(session, transport) as heartbeat, timeline:
        result = run_job(session, job, on_iteration=tick, on_ready=timeline.start)
    t0 = result.t0
    figures, stalls = heartbeat_verdict(heartbeat.directions(metrics.fault_windows(fault_log, transport), t0), t0)
    monitor.rebase(t0)
    ended = time.monotonic()
    records.conservation[transport] = audit.conservation(before, audit.settled_snapshot(scenario.fabric),
                                                         ledger.marks)
    records.iterations += result.iterations
    records.events.append({"t": 0.0, "kind": "phase", "transport": transport, "phase": "start"})
    records.events += fault_log
    records.events += read_routing_events(session.controller.routing_log, t0, transport, until=ended)
    records.events += result.path_events
    records.events += [{**stall, "transport": transport} for stall in stalls]
    records.events += [{"t": ev.at, "kind": "pause_stats", "fault": ev.kind, "target": ev.target,
                        "transport": transport, **inj.stats()}
                       for ev, inj in timeline.injectors if hasattr(inj, "stats")]
    if result.error:
        records.events.append({"t": round(ended - t0, 6), "kind": "error", "transport": transport,
                               "message": result.error})
    records.counters[transport] = result.stats
    records.fidelity[transport] = monitor.samples
    return figures
