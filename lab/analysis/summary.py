"""The summary of a run (summary.json): every figure of each transport, from the records, as
TransportSummary records (summary_record.py; definitions: docs/metrics.md). Pure: no I/O."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from faults.catalog import kinds_where
from lab.analysis.collective_bandwidth import BANDWIDTH_FIGURES, bandwidth
from lab.analysis.conservation_record import Conservation
from lab.analysis.counters import counter_totals, median_srtt, pick
from lab.analysis.event_record import RunEvent
from lab.analysis.cpu_samples import cpu_bound, cpu_totals, peak_plane_mbps, samples_in_window
from lab.analysis.failover import fault_figures, in_rtts
from lab.analysis.fidelity_sample import FidelitySample
from lab.analysis.iteration_record import Iteration
from lab.analysis.fault_windows import fault_windows
from lab.analysis.iterations import clean_median, durations, iteration_cost, percentiles, split_by_faults, stalls
from lab.analysis.path_retirement import retirements
from lab.analysis.route_records import median_route_gap
from lab.analysis.run_config import RunConfig
from lab.analysis.summary_record import Summary, TransportSummary
from topologies.fabric import FabricSpec


def transports_of(iterations, counters=None, fidelity=None, conservation=None) -> list[str]:
    """Every transport in the records; "mrc" then "baseline" first, the rest sorted."""
    seen = {it.transport for it in iterations}
    for d in (counters, fidelity, conservation):
        seen |= set(d or {})
    first = [t for t in ("mrc", "baseline") if t in seen]
    return first + sorted(seen - set(first))


def _run_bandwidth(median: float | None, config: RunConfig, fabric: FabricSpec | None) -> dict:
    """bandwidth() of the median iteration; every figure undefined without a config."""
    if fabric is None:
        return dict.fromkeys(BANDWIDTH_FIGURES)
    return bandwidth(median, ranks=fabric.hosts, buffer_bytes=config.buffer_bytes, planes=fabric.planes,
                     link_mbps=fabric.link_mbps, collective=config.collective)


def summarize_transport(transport: str, iterations: Sequence[Iteration], events: Sequence[RunEvent] = (),
                        counters: Mapping | None = None, fidelity: Sequence[FidelitySample] = (),
                        conservation: Conservation | None = None, config: RunConfig | None = None) -> TransportSummary:
    """Every figure of one transport (its own iterations, counters, samples, conservation)."""
    config = config or RunConfig()
    counters = counters or {}
    fabric = config.fabric if config else None
    its = sorted(iterations, key=lambda it: it.start)
    windows = fault_windows(events, transport)
    figures = _iteration_figures(its, windows, config.stall_factor)
    # failover and recovery are about fabric elements; a pause is the machine's
    pauses = kinds_where(lambda kind: kind.pauses_a_process)
    fabric_windows = [w for w in windows if w.fault not in pauses]
    faults, routes_dropped = fault_figures(transport, events, fabric_windows, counters, fabric)
    rtt = median_srtt(counters)
    for figure, window in zip(faults, fabric_windows):
        cost = iteration_cost(its, window, figures["clean_median_s"])
        figure.iteration_cost_s, figure.iteration_cost_rtts = cost, in_rtts(cost, rtt)
    totals = counter_totals(counters)
    lost = conservation.unexplained_links if conservation else {}
    failed = sum(1 for it in its if not it.verified)
    return TransportSummary(
        transport=transport,
        **figures,
        **_run_bandwidth(figures["median_s"], config, fabric),
        **_counter_figures(totals),
        srtt_median_s=rtt,
        route_gap_median_s=median_route_gap(counters),
        garbage=pick(totals, "garbage"),
        # No iterations proves nothing: verified only if there were some and all passed.
        verified=bool(its) and failed == 0,
        verify_failures=failed,
        **_cpu_figures(its, fidelity),
        unexplained_loss=sum(lost.values()),
        unexplained_links=lost,
        retirements=retirements(events, transport),
        route_records_dropped=routes_dropped,
        faults=faults,
    )


def _iteration_figures(its: Sequence[Iteration], windows: Sequence, k: float) -> dict:
    """The iteration times' figures: percentiles, medians, stalls (in start order)."""
    d = durations(its)
    clean, fell_back = clean_median(its, windows)
    stalled = stalls(its, clean, k)
    hit, unhit = split_by_faults(its, windows)
    return {
        "iterations": len(its),
        **percentiles(d),
        "median_s": float(np.median(d)) if len(d) else None,
        "clean_median_s": clean,
        "clean_median_fallback": fell_back,
        # the slowest iteration that overlapped a fault, and the slowest that overlapped
        # none: the cost of the faults against this run's own noise (its load, its CPU)
        "fault_p100_s": max(hit, default=None),
        "fault_free_p100_s": max(unhit, default=None),
        # their spread: how much of a struck iteration's excess the run's own noise explains
        "fault_free_p90_s": float(np.percentile(unhit, 90)) if unhit else None,
        "stall_factor": k,
        "stalls": len(stalled),
        "stalled_iterations": stalled,
    }


def _counter_figures(totals: Mapping) -> dict:
    """The agents' counts, summed over hosts (agent and runner spell some differently)."""
    return {
        "retransmits": pick(totals, "retransmits"),
        "trims": pick(totals, "trims", "trims_seen"),
        "timeouts": pick(totals, "timeouts"),
        "tail_losses": pick(totals, "tail_losses"),
        "nacks": pick(totals, "nacks", "nacks_sent"),
        "ecn_echoes": pick(totals, "ecn_echoes"),
        "probes_sent": pick(totals, "probes_sent"),
    }


def _cpu_figures(its: Sequence[Iteration], fidelity: Sequence[FidelitySample]) -> dict:
    """The CPU verdict over the iterations, not the start-up and teardown around them."""
    measured = samples_in_window(fidelity, its[0].start, max(it.end for it in its)) if its else fidelity
    cpu = cpu_totals(measured)
    return {
        "cpu_bound": cpu_bound(measured),
        "cpu_mean_pct": float(np.mean(cpu)) if cpu else None,
        "peak_plane_mbps": peak_plane_mbps(fidelity),
    }


def summarize(iterations: Sequence[Iteration], events: Sequence[RunEvent] = (), counters: Mapping | None = None,
              fidelity: Mapping[str, list[FidelitySample]] | None = None, conservation: Mapping[str, Conservation] | None = None,
              config: RunConfig | None = None) -> Summary:
    """{transport: figures} for every transport in the records (see summarize_transport)."""
    counters, fidelity, conservation = counters or {}, fidelity or {}, conservation or {}
    return {
        t: summarize_transport(
            t, [it for it in iterations if it.transport == t], events,
            counters.get(t), fidelity.get(t) or [], conservation.get(t), config)
        for t in transports_of(iterations, counters, fidelity, conservation)
    }
