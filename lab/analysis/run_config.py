"""The run's config (config.json, a Scenario's to_dict()): what the analysis reads of it."""

from __future__ import annotations

from typing import Mapping

from lab.analysis.collective_bandwidth import BUS_FACTORS, DEFAULT_COLLECTIVE
from lab.analysis.iterations import DEFAULT_STALL_FACTOR
from topologies.fabric import FabricSpec
from topologies.names import FabricError


class ConfigError(ValueError):
    """A run config that lacks what the analysis needs; the message names the key."""


def run_fabric(config: Mapping) -> FabricSpec:
    """The FabricSpec a run used, read back from its config's "fabric" block (FabricSpec.to_dict())."""
    block = config.get("fabric")
    if not isinstance(block, Mapping):
        raise ConfigError("config: no fabric block (FabricSpec.to_dict())")
    try:  # from_dict refuses a missing key: a default would give figures of another fabric
        return FabricSpec.from_dict(dict(block))
    except FabricError as exc:
        raise ConfigError(f"config: {exc}") from None


def run_buffer_bytes(config: Mapping) -> int:
    """The buffer per rank (bytes) a run's collective used: its config's job.buffer_bytes."""
    job = config.get("job")
    if not isinstance(job, Mapping) or "buffer_bytes" not in job:
        raise ConfigError("config: job.buffer_bytes is missing")
    return int(job["buffer_bytes"])


def run_collective(config: Mapping) -> str:
    """The collective a run's job ran: its config's job.collective (none: the ring all-reduce)."""
    job = config.get("job")
    collective = job.get("collective", DEFAULT_COLLECTIVE) if isinstance(job, Mapping) else DEFAULT_COLLECTIVE
    if collective not in BUS_FACTORS:
        raise ConfigError(f"config: job.collective {collective!r} is not one of {', '.join(BUS_FACTORS)}")
    return collective


def run_stall_factor(config: Mapping) -> float:
    """The run's stall factor k; a config without one (or null) means the default."""
    value = config.get("stall_factor")
    return DEFAULT_STALL_FACTOR if value is None else float(value)
