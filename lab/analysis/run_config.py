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
from collections.abc import Mapping

from lab.analysis.collective_bandwidth import BUS_FACTORS, DEFAULT_COLLECTIVE
from lab.analysis.iterations import DEFAULT_STALL_FACTOR
from topologies.fabric import FabricSpec
from topologies.names import FabricError


PARTIAL = "partial"   # config.json's key of an interrupted run (lab/analysis/partial.py)

# config.json's top-level sections RunConfig reads, and what a config that lacks one means
_ABSENT = {"job": {}, "fabric": None, "stall_factor": None, PARTIAL: None, "timings": {}, "trimming": True}


class ConfigError(ValueError):
    """A run config that lacks what the analysis needs; the message names the key."""


@dataclass(frozen=True)
class RunConfig:
    """config.json of one run; empty (falsy) when the run has none.

    The sections are read once, here at the file boundary (``__post_init__``); the
    properties below only check what a figure needs of them."""

    written: Mapping = field(default_factory=dict)   # the file's content, as written
    _job: Mapping = field(init=False, repr=False, compare=False)
    _fabric: object = field(init=False, repr=False, compare=False)   # the "fabric" block, or None
    _stall_factor: object = field(init=False, repr=False, compare=False)   # as written; None: the default
    partial: Mapping | None = field(init=False, compare=False)   # an interrupted run's entry (lab.analysis.partial)
    build_s: float | None = field(init=False, compare=False)   # timings.build_s; None when not kept
    trimming: bool = field(init=False, compare=False)   # whether the fabric trimmed (no key: it did)

    def __post_init__(self) -> None:
        # each top-level section as written, or what a config without it means
        section = {key: self.written[key] if key in self.written else absent for key, absent in _ABSENT.items()}
        match section["timings"]:
            case {"build_s": int() | float() as seconds}:
                build_s = float(seconds)
            case _:
                build_s = None
        for name, value in (("_job", section["job"] if isinstance(section["job"], Mapping) else {}),
                            ("_fabric", section["fabric"] or None), ("_stall_factor", section["stall_factor"]),
                            ("partial", section[PARTIAL]), ("build_s", build_s),
                            ("trimming", bool(section["trimming"]))):
            object.__setattr__(self, name, value)   # frozen: set once, here

    @classmethod
    def from_dict(cls, data: Mapping) -> "RunConfig":
        return cls(dict(data))

    def to_dict(self) -> dict:
        return dict(self.written)

    def __bool__(self) -> bool:
        return bool(self.written)

    @property
    def has_fabric(self) -> bool:
        """Whether the config holds a fabric block at all (a run before any has none)."""
        return bool(self._fabric)

    @property
    def fabric(self) -> FabricSpec:
        """The FabricSpec the run used, read back from the "fabric" block (FabricSpec.to_dict())."""
        if not isinstance(self._fabric, Mapping):
            raise ConfigError("config: no fabric block (FabricSpec.to_dict())")
        try:  # from_dict refuses a missing key: a default would give figures of another fabric
            return FabricSpec.from_dict(dict(self._fabric))
        except FabricError as exc:
            raise ConfigError(f"config: {exc}") from None

    @property
    def stall_factor(self) -> float:
        """The run's stall factor k; a config without one (or null) means the default."""
        return DEFAULT_STALL_FACTOR if self._stall_factor is None else float(self._stall_factor)

    @property
    def buffer_bytes(self) -> int:
        """The buffer per rank (bytes) the run's collective used: job.buffer_bytes."""
        if "buffer_bytes" not in self._job:
            raise ConfigError("config: job.buffer_bytes is missing")
        return int(self._job["buffer_bytes"])

    @property
    def payload_size(self) -> int:
        """The DATA payload bytes per packet: job.payload_size."""
        if "payload_size" not in self._job:
            raise ConfigError("config: job.payload_size is missing")
        return int(self._job["payload_size"])

    @property
    def collective(self) -> str:
        """The collective the run's job ran: job.collective (none: the ring all-reduce)."""
        collective = self._job["collective"] if "collective" in self._job else DEFAULT_COLLECTIVE
        if collective not in BUS_FACTORS:
            raise ConfigError(f"config: job.collective {collective!r} is not one of {', '.join(BUS_FACTORS)}")
        return collective
