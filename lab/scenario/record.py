"""The one run description: a Scenario, frozen, with every default of a run defined here.

A Scenario comes from a YAML file (lab.scenario.load.load_scenario) or is built
in code (tests, benchmarks: `Scenario(name="x", job=JobSettings(iterations=3))`);
the command line changes one by `dataclasses.replace`. Everything below it
(the job runner's JobSpec, the agents' configs, the results' config.json) is
derived from it and holds no defaults of its own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from faults.background_load import BackgroundLoad
from faults.model import FaultEvent
from topologies.routing import DEFAULT_CONVERGENCE_DELAY, DEFAULT_HOLD_DOWN
from mrc_host.transport import TRANSPORTS as TRANSPORT_REGISTRY
from topologies.fabric import DEFAULT_FABRIC, LAB_PAYLOAD_SIZE, FabricSpec

MIB = 1 << 20
TRANSPORTS = tuple(TRANSPORT_REGISTRY)  # the agent's registry: a new transport is runnable at once
# the names of mrc_host/collectives.py's COLLECTIVES, spelled out so that loading a scenario
# (every lab command) does not import numpy; tests/unit/test_job_collective.py keeps them equal
COLLECTIVES = ("allreduce", "alltoall")
# how ranks are placed on hosts (lab.runners.job.ring_order): in host order, or alternating racks
PLACEMENTS = ("contiguous", "interleaved")
DEFAULT_ITERATIONS = 30
DEFAULT_BUFFER_MB = 2.0
DEFAULT_SEED = 1


def buffer_bytes_from_mb(buffer_mb: float) -> int:
    """An all-reduce buffer of `buffer_mb` MiB in whole float32 elements (the buffer is float32)."""
    return int(buffer_mb * MIB) // 4 * 4


@dataclass(frozen=True)
class JobSettings:
    """The synchronous job run once per transport.

    collective: a name in COLLECTIVES: "allreduce" (ring) or "alltoall"
    placement: a name in PLACEMENTS: the rank order (lab.runners.job.ring_order)
    buffer_mb: each rank's buffer, MiB
    iterations: collective iterations to run; the job stops earlier when
        max_seconds have passed since its start (checked before each iteration)
    max_seconds: None = the job runner's own cap (lab.runners.job.JOB_MAX_SECONDS)
    payload_size: DATA payload bytes per packet
    """

    collective: str = "allreduce"
    placement: str = "contiguous"
    buffer_mb: float = DEFAULT_BUFFER_MB
    iterations: int = DEFAULT_ITERATIONS
    max_seconds: float | None = None
    payload_size: int = LAB_PAYLOAD_SIZE

    @property
    def buffer_bytes(self) -> int:
        return buffer_bytes_from_mb(self.buffer_mb)

    def to_dict(self) -> dict:
        # buffer_bytes too: it is what the job ran with, and what the analysis reads
        return {**asdict(self), "buffer_bytes": self.buffer_bytes}


@dataclass(frozen=True)
class BaselineRouting:
    """The baseline's routing emulation: a dead uplink is withdrawn after
    convergence_delay_s (a BGP-like hold time) and restored hold_down_s after repair."""

    convergence_delay_s: float = DEFAULT_CONVERGENCE_DELAY
    hold_down_s: float = DEFAULT_HOLD_DOWN


@dataclass(frozen=True)
class Scenario:
    """One run: the fabric, the job, the transports it is run with and the faults they meet.

    path: the file it was loaded from; None when built in code
    transport_params: overrides of mrc_host.params.TransportParams
    seed: seeds the job's inputs and the expansion of random processes
    stall_factor: None = the report's default (lab.analysis.iterations.DEFAULT_STALL_FACTOR)
    background_load: CPU load started for the run and stopped after it
    faults: concrete events, sorted by time
    link_rate: why the links run at fabric.link_mbps, when `link_mbps: auto` chose it ("" otherwise)
    """

    name: str
    description: str = ""
    path: Path | None = None
    fabric: FabricSpec = DEFAULT_FABRIC
    job: JobSettings = JobSettings()
    transports: tuple[str, ...] = TRANSPORTS
    trimming: bool = True
    transport_params: dict = field(default_factory=dict)
    baseline_routing: BaselineRouting = BaselineRouting()
    seed: int = DEFAULT_SEED
    stall_factor: float | None = None
    background_load: BackgroundLoad = BackgroundLoad()
    faults: list[FaultEvent] = field(default_factory=list)
    link_rate: str = ""

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "path": None if self.path is None else str(self.path),
            "fabric": self.fabric.to_dict(),
            "job": self.job.to_dict(),
            "transports": list(self.transports),
            "trimming": self.trimming,
            "transport_params": dict(self.transport_params),
            "baseline_routing": asdict(self.baseline_routing),
            "seed": self.seed,
            "stall_factor": self.stall_factor,
            "background_load": asdict(self.background_load),
            "faults": [event.to_dict() for event in self.faults],
            "link_rate": self.link_rate,
        }
