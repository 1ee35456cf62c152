"""Which server each node of a fabric runs on, for the fabric spread over several servers
(docs/cluster.md). A pure description, as topologies/fabric.py is: nothing here builds.

    placement = place_planes(spec, ["localhost", "198.18.1.2"])
    placement.server_of("t0p5r0")      # "198.18.1.2": planes 4-7 on the second server
    placement.server_of("h3")          # "localhost": the hosts stay with the runner
    placement.crossing_cables()        # indices in spec.links of the cables between servers

A plane is a closed Clos: its T0s and T1s connect only to each other and to the hosts' NIC
port of that plane. So whole planes go to a server, in blocks (planes 0-3 on the first of two
servers, 4-7 on the second), and only host-T0 cables cross. The first server is the runner,
with every host.
"""

from __future__ import annotations

from dataclasses import dataclass

from topologies.fabric import FabricSpec, servers_problem
from topologies.names import FabricError, Host, Switch


@dataclass(frozen=True)
class Placement:
    spec: FabricSpec
    servers: tuple[str, ...]        # the runner first

    def server_of_plane(self, plane: int) -> str:
        if not 0 <= plane < self.spec.planes:
            raise FabricError(f"plane {plane} is not in the fabric (planes 0-{self.spec.planes - 1})")
        return self.servers[plane * len(self.servers) // self.spec.planes]

    def planes_of(self, server: str) -> list[int]:
        return [p for p in range(self.spec.planes) if self.server_of_plane(p) == server]

    def server_of(self, name: str) -> str:
        """The server of a host (the runner) or a switch (its plane's), by the lab's name."""
        if Host.match(name) is not None:
            return self.servers[0]
        return self.server_of_plane(Switch.parse(name).plane)

    def switches_of(self, server: str) -> list[str]:
        """The switches (by name) of the server's planes."""
        return [name for name in self.spec.switch_names if self.server_of(name) == server]

    def crossing_cables(self) -> list[int]:
        """Indices in spec.links of the cables whose ends are on different servers."""
        return [i for i, link in enumerate(self.spec.links)
                if self.server_of(link.a) != self.server_of(link.b)]


def place_planes(spec: FabricSpec, servers: list[str] | tuple[str, ...]) -> Placement:
    """Planes in blocks over `servers` (the runner first); FabricError on a list it cannot use."""
    servers = tuple(servers)
    problem = servers_problem(servers, spec.planes, spec.dataplane, spec.lossless)
    if problem or not servers:
        raise FabricError(problem or f"servers must be names or addresses, the runner first, got {list(servers)!r}")
    return Placement(spec, servers)


def placement_of(spec: FabricSpec) -> Placement | None:
    """The placement spec.servers gives; None when the fabric is on this server alone."""
    return place_planes(spec, spec.servers) if len(spec.servers) > 1 else None
