"""What the Clustermapper's probes (lab/inhost/mapper.py) are on every data
plane: their targets, what they carry, and the surface a data plane's prober
offers the mapper (topologies/openflow/mapper_probes.py,
topologies/srv6/mapper_probes.py)."""

from __future__ import annotations

import socket
import struct
from typing import Iterator, NamedTuple, Protocol

from topologies.fabric import FabricSpec

MAGIC = b"MRCMAP1"
PAYLOAD = struct.Struct("!7sHI")  # magic, host, sequence number
SOL_PACKET = 263  # linux/socket.h (Python does not export it)
PACKET_QDISC_BYPASS = 20  # linux/if_packet.h


class Target(NamedTuple):
    """What one probe proves: t1 None = the T0 hop of `plane`, else the path via that T1."""

    plane: int
    t1: int | None = None

    @property
    def probe(self) -> str:
        return "t0" if self.t1 is None else "t1"


def targets(spec: FabricSpec) -> list[Target]:
    """Every target of one host, plane by plane: the T0 hop, then each T1."""
    return [Target(p, t1) for p in range(spec.planes) for t1 in (None, *range(spec.spines))]


def mac_bytes(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


class MapperProbes(Protocol):
    """One host's probes: `socks` maps each plane to the socket its replies arrive on;
    a reply's evidence (what `proves` checks) is what the data plane marks on its path."""

    socks: dict[int, socket.socket]

    def send(self, target: Target, seq: int) -> None: ...

    def replies(self, plane: int) -> Iterator[tuple[int, object]]: ...

    def proves(self, target: Target, plane: int, evidence) -> bool: ...

    def close(self) -> None: ...
