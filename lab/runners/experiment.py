"""One experiment: a Scenario's job with each of its transports (MRC, then the
baseline), one after the other on one fabric, each under the same fault
timeline (times relative to its own job start), with the fidelity monitor and
the conservation audit; then the results directory, plots and summary.

The Scenario (lab/scenario/record.py) is the whole run description: it
comes from a scenario file (faults/scenarios/, see docs/scenarios.md) or is
built in code (tests, benchmarks); config.json is its to_dict().
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from faults.background_load import background_load
from faults.timeline import FaultTimeline
from lab.scenario.record import Scenario
from lab.live import audit
from lab.analysis import plots
from lab.analysis.fault_windows import fault_windows
from lab.analysis.event_record import EventError, RunEvent
from lab.analysis.iterations import DEFAULT_STALL_FACTOR
from lab.analysis.run_config import RunConfig
from lab.analysis.summary import summarize
from lab.analysis.summary_record import Heartbeat, Summary
from lab.live.fidelity import DatapathHeartbeat, FidelityMonitor, heartbeat_verdict
from lab.analysis.partial import PARTIAL, partial_entry, partial_line
from lab.runners.job import JobInterrupted, job_spec, run_job
from lab.runners.lossless_report import pause_event, pause_line
from lab.runners.progress import ProgressCallback
from lab.analysis.results import Records, ResultsDir
from lab.console import console
from lab.plumbing.session import Session, lab_session
from topologies.routing import read_routing_events


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C or SIGTERM, raised once the lab is torn down: `path` is its
    partial results directory (None: nothing was measured, nothing written) and `line`
    says how far it came. A KeyboardInterrupt, so a caller that does not look for it
    (a benchmark) stops as on any Ctrl-C."""

    def __init__(self, path: Path | None, line: str):
        super().__init__(line)
        self.path, self.line = path, line


def run_experiment(scenario: Scenario, results_root: Path, progress: ProgressCallback | None = None,
                   session: Session | None = None) -> tuple[Path, Summary]:
    """Run every transport of `scenario`, reporting to `progress` (lab.runners.progress) after each iteration,
    in `session` if given (one experiment_session(scenario) made; run_experiments), else in a session of its own.
    Interrupted, it writes what it measured (lab.analysis.partial) and raises RunInterrupted."""
    if scenario.stall_factor is None:  # the report's default, written down so config.json says which
        scenario = replace(scenario, stall_factor=DEFAULT_STALL_FACTOR)
    records = Records(counters={}, fidelity={}, conservation={})
    heartbeats: dict[str, dict] = {}  # transport -> heartbeat_verdict() figures, added to its summary
    timings: dict[str, float] = {}
    config = scenario.to_dict()
    try:
        _run_transports(scenario, records, heartbeats, timings, progress, session, config)
    except KeyboardInterrupt:  # the lab is torn down already (lab_session), or will be (a shared session)
        if not records.iterations:
            raise RunInterrupted(None, "interrupted before any iteration was measured; no results written") from None
        config[PARTIAL] = partial_entry(records.iterations, scenario.transports, scenario.job.iterations)
    records.config = RunConfig.from_dict({**config, "timings": {k: round(v, 3) for k, v in timings.items()}})
    records.events.sort(key=lambda e: (e.transport or "", e.t))
    records.summary = summarize(records.iterations, records.events, records.counters,
                                records.fidelity, records.conservation, records.config)
    for transport, figures in heartbeats.items():
        if transport in records.summary:
            records.summary[transport].heartbeat = Heartbeat(**figures)
    out = ResultsDir.create(name=scenario.name, root=results_root)
    out.write_all(records)
    plots.plot_all(out.path, records)
    if records.config.partial is not None:
        raise RunInterrupted(out.path, f"{partial_line(records.config)}; partial results in {out.path}")
    return out.path, records.summary


def run_experiments(scenarios: list[Scenario], results_root: Path) -> list[tuple[Path, Summary]]:
    """Several experiments one after the other in one lab session (one fabric build): scenarios
    that differ only in what runs on the fabric (transport parameters, job, seed, faults, CPU load)."""
    if not scenarios:
        return []
    first = lab_settings(scenarios[0])
    for scenario in scenarios[1:]:
        if lab_settings(scenario) != first:
            raise ValueError(f"scenario {scenario.name} needs another lab than {scenarios[0].name} "
                             "(fabric, trimming or baseline routing): it cannot share its session")
    with experiment_session(scenarios[0]) as session:
        return [run_experiment(scenario, results_root, session=session) for scenario in scenarios]


def lab_settings(scenario: Scenario) -> tuple:
    """What a scenario's lab session is built with: scenarios alike in these can share one."""
    return scenario.fabric, scenario.trimming, scenario.baseline_routing


def experiment_session(scenario: Scenario):
    """The lab session `scenario` runs in (lab.plumbing.session.lab_session)."""
    routing = scenario.baseline_routing
    return lab_session(scenario.fabric, trimming=scenario.trimming, convergence_delay=routing.convergence_delay_s,
                       hold_down=routing.hold_down_s)


def _run_transports(scenario: Scenario, records: Records, heartbeats: dict, timings: dict,
                    progress: ProgressCallback | None, shared: Session | None = None, config: dict | None = None) -> None:
    """Each transport's job on one fabric (`shared`'s, else a session of its own), into `records` and
    `heartbeats`; the session's timings into `timings` (also when interrupted: they are kept with the
    partial results), and what forwarded (the fabric's datapath, its srv6 uN engine named) into `config`."""
    session = None
    try:
        with (nullcontext(shared) if shared else experiment_session(scenario)) as session, \
                background_load(scenario.background_load):
            if config is not None:
                config["datapath"] = session.fabric.datapath
            for transport in scenario.transports:
                heartbeats[transport] = _run_transport(session, scenario, transport, records, progress)
    finally:
        if session is not None:
            timings.update(session.timings)


def _run_transport(session: Session, scenario: Scenario, transport: str, records: Records,
                   progress: ProgressCallback | None) -> dict:
    """One transport's job under the fault timeline; its records are added to `records`.
    Returns its datapath heartbeat's figures (lab.live.fidelity.heartbeat_verdict)."""
    job = job_spec(scenario, transport)
    before = audit.snapshot(scenario.fabric)
    pauses = session.fabric.pauses   # the lossless mode's controller, if any
    pauses_before = pauses.report() if pauses else None
    fault_log: list = []
    ledger = audit.DownLinkLedger(scenario.fabric)
    # fault times count from the job's start (every worker READY), not
    # from before the workers were started: on a busy machine that can
    # take seconds, and a fault meant for mid-job would hit its start
    timeline = FaultTimeline(session, scenario.faults, transport=transport, t0=None, log=fault_log,
                             observer=ledger)

    def tick(k: int, now: float) -> None:
        if progress:
            progress(transport, k + 1, job.iterations, now - timeline.t0, job.max_seconds)

    # the heartbeat starts after the `before` snapshot and ends before the drain: none of its
    # datagrams is in flight at either audit snapshot
    interruption = None
    with FidelityMonitor(scenario.fabric, time.monotonic()) as monitor, \
            DatapathHeartbeat(session, transport) as heartbeat, timeline:
        try:
            result = run_job(session, job, on_iteration=tick, on_ready=timeline.start)
        except JobInterrupted as stop:   # what was measured is recorded below, then the run stops
            result, interruption = stop.result, stop
    t0 = result.t0
    fault_events = _as_events(fault_log, transport)
    figures, stalls = heartbeat_verdict(heartbeat.directions(fault_windows(fault_events, transport), t0), t0)
    monitor.rebase(t0)
    ended = time.monotonic()
    records.conservation[transport] = audit.conservation(before, audit.settled_snapshot(scenario.fabric),
                                                         ledger.marks)
    records.iterations += result.iterations
    # the producers' event dicts become RunEvents here, where the run's records are assembled
    produced = read_routing_events(session.controller.routing_log, t0, transport, until=ended)
    produced += result.path_events
    produced += [{**stall, "transport": transport} for stall in stalls]
    produced += [{"t": ev.at, "kind": "pause_stats", "fault": ev.kind, "target": ev.target,
                  "transport": transport, **inj.stats()}
                 for ev, inj in timeline.injectors if inj.stats() is not None]
    if pauses:
        produced.append(pause_event(pauses_before, pauses.report(), round(ended - t0, 6), transport))
        console.print(pause_line(produced[-1]), highlight=False)
    if result.error:
        produced.append({"t": round(ended - t0, 6), "kind": "error", "transport": transport,
                         "message": result.error})
    records.events.append(RunEvent(t=0.0, kind="phase", transport=transport, extra={"phase": "start"}))
    records.events += fault_events + _as_events(produced, transport)
    records.counters[transport] = result.stats
    records.fidelity[transport] = monitor.samples
    if interruption is not None:
        raise interruption
    return figures


def _as_events(produced: list[dict], transport: str) -> list[RunEvent]:
    """The producers' event dicts as RunEvents. One that breaks the record's contract (a
    producer's bug) becomes an "error" event naming it: the run's measurements are kept."""
    events = []
    for ev in produced:
        try:
            events.append(RunEvent.from_dict(ev))
        except EventError as exc:
            events.append(RunEvent(t=0.0, kind="error", transport=transport,
                                   extra={"message": f"unusable event {ev!r}: {exc}"}))
    return events
