"""The run's config (config.json): a Scenario's to_dict() as the run used it, with the
session's timings, read through ``RunConfig``.

The record keeps the file's content as written (``to_dict()`` gives it back, so a
config written by any version round-trips) and reads, as attributes, what the
analysis and the notebooks need of it. A key the analysis needs that is missing
raises ConfigError naming it when it is asked for, never earlier: a damaged
config still loads, and the figures that do not need it are still computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from lab.analysis.collective_bandwidth import BUS_FACTORS, DEFAULT_COLLECTIVE
from lab.analysis.iterations import DEFAULT_STALL_FACTOR
from lab.analysis.partial import PARTIAL
from topologies.fabric import FabricSpec
from topologies.names import FabricError


class ConfigError(ValueError):
    """A run config that lacks what the analysis needs; the message names the key."""


@dataclass(frozen=True)
class RunConfig:
    """config.json of one run; empty (falsy) when the run has none."""

    written: Mapping = field(default_factory=dict)   # the file's content, as written

    @classmethod
    def from_dict(cls, data: Mapping) -> "RunConfig":
        return cls(dict(data))

    def to_dict(self) -> dict:
        return dict(self.written)

    def __bool__(self) -> bool:
        return bool(self.written)

    def _job(self) -> Mapping:
        job = self.written.get("job")
        return job if isinstance(job, Mapping) else {}

    @property
    def has_fabric(self) -> bool:
        """Whether the config holds a fabric block at all (a run before any has none)."""
        return bool(self.written.get("fabric"))

    @property
    def fabric(self) -> FabricSpec:
        """The FabricSpec the run used, read back from the "fabric" block (FabricSpec.to_dict())."""
        block = self.written.get("fabric")
        if not isinstance(block, Mapping):
            raise ConfigError("config: no fabric block (FabricSpec.to_dict())")
        try:  # from_dict refuses a missing key: a default would give figures of another fabric
            return FabricSpec.from_dict(dict(block))
        except FabricError as exc:
            raise ConfigError(f"config: {exc}") from None

    @property
    def buffer_bytes(self) -> int:
        """The buffer per rank (bytes) the run's collective used: job.buffer_bytes."""
        if "buffer_bytes" not in self._job():
            raise ConfigError("config: job.buffer_bytes is missing")
        return int(self._job()["buffer_bytes"])

    @property
    def payload_size(self) -> int:
        """The DATA payload bytes per packet: job.payload_size."""
        if "payload_size" not in self._job():
            raise ConfigError("config: job.payload_size is missing")
        return int(self._job()["payload_size"])

    @property
    def collective(self) -> str:
        """The collective the run's job ran: job.collective (none: the ring all-reduce)."""
        collective = self._job().get("collective", DEFAULT_COLLECTIVE)
        if collective not in BUS_FACTORS:
            raise ConfigError(f"config: job.collective {collective!r} is not one of {', '.join(BUS_FACTORS)}")
        return collective

    @property
    def stall_factor(self) -> float:
        """The run's stall factor k; a config without one (or null) means the default."""
        value = self.written.get("stall_factor")
        return DEFAULT_STALL_FACTOR if value is None else float(value)

    @property
    def partial(self) -> Mapping | None:
        """An interrupted run's "partial" entry (lab.analysis.partial); None for a whole run."""
        return self.written.get(PARTIAL)

    @property
    def build_s(self) -> float | None:
        """How long the run's session took to build the fabric (timings.build_s); None when the
        config holds no such number (a run written before the timings were kept)."""
        match self.written:
            case {"timings": {"build_s": int() | float() as seconds}}:
                return float(seconds)
        return None

    @property
    def trimming(self) -> bool:
        """Whether the fabric trimmed packets (a config without the key: it did, the default)."""
        return bool(self.written.get("trimming", True))
