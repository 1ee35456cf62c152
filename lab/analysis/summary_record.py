"""The typed records of summary.json: one TransportSummary per transport, with a
FaultFigures per fault and, after a lab run, its datapath Heartbeat figures.

``to_dict()`` gives the JSON summary.json holds; ``from_dict()`` reads one back,
whichever version wrote it: a key it lacks takes the default below (what the
report shows for a figure it cannot find) and a value is kept as the file holds
it, so a figure damaged by hand stays visible (the report prints "?") instead of
stopping the load. Definitions of every figure: docs/metrics.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Mapping

from lab.analysis.iterations import DEFAULT_STALL_FACTOR
from lab.analysis.known_fields import known_fields


@dataclass
class FaultFigures:
    """What one fault cost and how the transport got round it (failover.py fills it)."""

    fault: str = ""
    target: str = ""
    start: float = 0.0
    end: float | None = None
    basis: str | None = None              # "routes" (the senders' records), "routing" (the baseline's)
    failover_s: float | None = None
    failover_rtts: float | None = None
    failover_busy_s: float | None = None
    failover_busy_rtts: float | None = None
    failover_after_loss_s: float | None = None
    failover_after_loss_rtts: float | None = None
    routes_failed: int = 0
    routes_kept_sending: int = 0
    recovery_s: float | None = None
    recovery_rtts: float | None = None
    recovery_busy_s: float | None = None
    recovery_busy_rtts: float | None = None
    routes_unrecovered: int = 0
    routes_still_down: int = 0
    packets_lost: list | None = None      # per connection struck
    detection_s: float | None = None
    mapper_repair_s: float | None = None
    iteration_cost_s: float | None = None
    iteration_cost_rtts: float | None = None
    note: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping) -> "FaultFigures":
        return cls(**known_fields(cls, data))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Heartbeat:
    """The datapath heartbeat's figures of one transport (lab/live/fidelity.py heartbeat_verdict)."""

    heartbeats_sent: int = 0
    heartbeats_lost: int = 0
    heartbeat_delay_median_s: float | None = None
    heartbeat_delay_p99_s: float | None = None
    heartbeat_delay_max_s: float | None = None
    datapath_stalls: int = 0
    datapath_stall_longest_s: float | None = None
    datapath_stalled: bool = False


@dataclass
class TransportSummary:
    """Every figure of one transport's run (summary.summarize_transport computes it)."""

    transport: str = ""
    iterations: int = 0
    p50_s: float | None = None
    p99_s: float | None = None
    p100_s: float | None = None
    median_s: float | None = None
    clean_median_s: float | None = None
    clean_median_fallback: bool = False
    fault_p100_s: float | None = None
    fault_free_p100_s: float | None = None
    fault_free_p90_s: float | None = None
    stall_factor: float = DEFAULT_STALL_FACTOR
    stalls: int = 0
    stalled_iterations: list = field(default_factory=list)
    algbw_mbps: float | None = None
    busbw_mbps: float | None = None
    efficiency: float | None = None
    ideal_s: float | None = None
    ideal_ratio: float | None = None
    retransmits: int = 0
    trims: int = 0
    timeouts: int = 0
    tail_losses: int = 0
    nacks: int = 0
    ecn_echoes: int = 0
    probes_sent: int = 0
    srtt_median_s: float | None = None
    route_gap_median_s: float | None = None
    garbage: int = 0
    verified: bool = False
    verify_failures: int = 0
    cpu_bound: bool = False
    cpu_mean_pct: float | None = None
    peak_plane_mbps: float | None = None
    unexplained_loss: int = 0
    unexplained_links: dict = field(default_factory=dict)
    retirements: int | None = None
    route_records_dropped: int = 0
    faults: list[FaultFigures] = field(default_factory=list)
    heartbeat: Heartbeat | None = None    # a lab run's; none for figures recomputed from files

    @classmethod
    def from_dict(cls, data: Mapping) -> "TransportSummary":
        """One transport's entry of summary.json; a fault entry that is not an object is left out."""
        known = known_fields(cls, data)
        known.pop("heartbeat", None)
        faults = known.get("faults")
        known["faults"] = [FaultFigures.from_dict(f) for f in faults if isinstance(f, Mapping)] \
            if isinstance(faults, list) else []
        beat = known_fields(Heartbeat, data)
        return cls(**known, heartbeat=Heartbeat(**beat) if beat else None)

    def to_dict(self) -> dict:
        """The entry as summary.json holds it: the heartbeat's figures beside the others."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("faults", "heartbeat")}
        out["faults"] = [f.to_dict() for f in self.faults]
        if self.heartbeat is not None:
            out.update(asdict(self.heartbeat))
        return out


Summary = dict[str, TransportSummary]   # transport -> its figures, "mrc" then "baseline" first


def summary_from_dict(data: Mapping) -> Summary:
    """summary.json's object back to records; an entry that is not an object (load() drops
    and names one) counts as a transport with no figures."""
    return {name: TransportSummary.from_dict(entry if isinstance(entry, Mapping) else {})
            for name, entry in data.items()}


def summary_to_dict(summary: Summary) -> dict:
    return {name: entry.to_dict() for name, entry in summary.items()}
