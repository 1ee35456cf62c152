"""The typed record of fidelity.json: one FidelitySample per look of the fidelity monitor
(lab/live/fidelity.py FidelityMonitor), fidelity.json holding a list per transport.

``to_dict()`` gives the JSON the file holds; ``from_dict()`` reads one back, a key it
lacks taking the default below (no cores, no planes: a sample that measured nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from lab.analysis.known_fields import known_fields


@dataclass(frozen=True)
class FidelitySample:
    """The machine's CPU use and the fabric's rate per plane over the interval before ``t``."""

    t: float                                           # s on the run's clock (the job's start: 0)
    cpu_per_core: list = field(default_factory=list)   # % busy per core
    plane_bps: list = field(default_factory=list)      # bits/s into the hosts, per plane
    server_cpu: dict = field(default_factory=dict)     # over several servers: each other's % busy per core

    @classmethod
    def from_dict(cls, data: Mapping) -> "FidelitySample":
        return cls(**known_fields(cls, data))

    def to_dict(self) -> dict:
        out = {"t": self.t, "cpu_per_core": self.cpu_per_core, "plane_bps": self.plane_bps}
        return out | ({"server_cpu": self.server_cpu} if self.server_cpu else {})
