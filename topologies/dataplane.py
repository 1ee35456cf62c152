"""What a data plane is to the rest of the lab: the one type every
data-plane difference goes through.

A FabricSpec names its data plane (`spec.dataplane`); `dataplane_for(spec)`
(topologies/dataplanes.py) gives the object, made once per session and carried
by it (lab/plumbing/session.py). Two implement this interface, one package
each: topologies/openflow/ (Open vSwitch switches, static OpenFlow tables from
the os-ken controller) and topologies/srv6/ (kernel IPv6 routers, uSID source
routes). Each owns how its fabric is built and verified, its control process,
the addresses a transport sends to, its fault steps and the fault kinds it
cannot run, and its header bytes.
"""

from __future__ import annotations

import socket
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from topologies.fabric import FabricError, FabricSpec
from topologies.mapper_probe_wire import MapperProbes
from topologies.names import Switch
from topologies.cluster.node_access import LocalNode, RemoteNode


class ServerRequestError(ValueError):
    """A request to a server agent that its data plane's side refuses: the reply says why, in one line."""


class ServerSide(Protocol):
    """A data plane's part of a server agent (lab/plumbing/server_agent.py) on a server of a
    fabric spread over several: its requests by name, how it finds a node's pid, and the end
    of what its requests started."""

    ops: dict[str, Callable]

    def find_pids(self, names: list[str]) -> dict[str, int]: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...


class Fabric(Protocol):
    """A running fabric, whichever data plane built it."""

    spec: FabricSpec
    datapath: str  # what forwards, as run records name it
    build_s: float
    pauses: object | None   # the lossless mode's pause controller (topologies/port_program/pause_controller.py), if it runs

    def host(self, h: int):
        """Host h's Mininet node (its own network namespace and shell)."""

    def switch_ports(self) -> list[str]:
        """Every switch port's interface name."""

    def access(self, switch: Switch | str) -> LocalNode | RemoteNode:
        """Where commands on `switch`'s ports run: its namespace here (LocalNode, pid None for
        the root namespace), or its server's agent (RemoteNode, topologies/cluster/node_access.py)."""

    def stop(self) -> None:
        """Tear the fabric down; the lab's cleanup removes whatever remains."""


class ControlProcess(Protocol):
    """The process that plays the fabric's routing for the baseline (the os-ken
    controller, or the srv6 routers' routing process): started and stopped by the
    session, its routing log read by faults and analysis."""

    fabric_file: Path
    routing_log: Path
    hold_down: float        # how long routing waits before it restores a link that came back, s
    port: int | None        # the TCP port it listens on (127.0.0.1), None: it listens on nothing
    offsets: dict           # server -> (clock offset s, bound s) of each other server's routing; {} on one

    def start(self, timeout: float = ...) -> None: ...

    def stop(self) -> None: ...

    def running(self) -> bool: ...


class SwitchReboot(Protocol):
    """A switch's own part of its reboot (faults/switch_reboot.py SwitchReboot sets its
    ports down and waits for the links): each step raises BuildError naming `what`."""

    def wipe(self, what: str) -> None:
        """Its tables wiped, as a reboot does."""

    def check_wiped(self, what: str) -> None: ...

    def restore(self, what: str) -> None:
        """Its ports up and its static configuration back (or the controller's to reinstall)."""

    def check_restored(self, what: str) -> None: ...


class Settings(Protocol):
    """Who changes machine-wide settings for a build and puts them back (the session
    passes lab.plumbing.cleanup, which also restores them after a crashed run)."""

    def set_sysctl(self, name: str, value: str) -> None: ...

    def restore_sysctls(self) -> list[str]: ...


@dataclass
class RouteCheck:
    """What a data plane's route verification proved for `check`: per plane
    [routes proved, routes tried], and a line per failure."""

    per_plane: dict[int, list[int]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def count(self, plane: int, proved: bool) -> None:
        counts = self.per_plane.setdefault(plane, [0, 0])
        counts[0] += int(proved)
        counts[1] += 1


@dataclass(frozen=True)
class HeartbeatHop:
    """One route a fidelity heartbeat takes: its plane, its T1 as a route names it
    (an index, None within a rack, "ev?" when the switches pick it), and the address sent to."""

    plane: int
    t1: int | str | None
    address: str


# Runs the in-host path-probe worker in every host: (session, mode, extra args, timeout) -> results.
WorkerRunner = Callable[[object, str, list, float], list]


class DataPlane(ABC):
    """One data plane, for one fabric (`spec`)."""

    name: str = ""
    # The fault kinds this data plane cannot run, each with why.
    refused_kinds: dict[str, str] = {}
    # Bytes of IP + UDP header beyond IPv4's (topologies/fabric.py IP_UDP_HEADER_BYTES).
    extra_header_bytes: int = 0
    # How `check` words its route proof.
    route_proof_words: str = ""
    run_line: str = ""   # what this data plane is, one line at the start of a run
    # the tc programs it attaches besides the switch port program, by function name (cleanup finds them)
    tc_programs: tuple[str, ...] = ()
    # The baseline's ECMP picks a nexthop by the 5-tuple (ports too), not the address pair.
    ecmp_hashes_ports: bool = False
    # A switch skips an ECMP nexthop on a port set administratively down at once, by
    # itself (no routing needed): cutting a T1 off then takes a reboot, not a link fault.
    admin_down_skips_nexthop: bool = False
    # Its fabric can run lossless (spec.lossless): a pause controller holds its ports' queues.
    lossless_capable: bool = False

    def __init__(self, spec: FabricSpec):
        if spec.lossless and not self.lossless_capable:
            raise FabricError(f"lossless does not run on the {self.name} data plane (no pause controller holds "
                              "its ports' queues); use the srv6 data plane")
        self.spec = spec
        # over several servers (spec.servers): each other server's agent, open, set by the
        # session before control_process() and build() (lab/plumbing/servers.py)
        self.agents: dict = {}

    # ---- build and control --------------------------------------------------------
    @abstractmethod
    def control_process(self, workdir: Path, convergence_delay: float, hold_down: float) -> ControlProcess:
        """The process that plays the fabric's routing (not started)."""

    @abstractmethod
    def build(self, control: ControlProcess, settings: Settings, shaping: bool, trimming: bool) -> Fabric:
        """Build the fabric and start `control`, each in the order this data plane needs."""

    # ---- addresses ------------------------------------------------------------------
    @abstractmethod
    def host_addresses(self, host: int, transport: str) -> list[str]:
        """Host `host`'s address on every plane, as `transport` ("mrc" or the baseline's)
        sends to and from it; for anything else (background load) the baseline's."""

    def transport_addresses(self, host: int, peers: list[int], transport: str) -> dict:
        """The AgentConfig fields that say where a host's datagrams go and come from:
        plane_ips and the peers' plane addresses."""
        spec = self.spec
        return {"plane_ips": self.host_addresses(host, transport),
                "peers": {spec.host_name(n): self.host_addresses(n, transport) for n in peers}}

    @abstractmethod
    def heartbeat_hops(self, src: int, dst: int) -> list[HeartbeatHop]:
        """The routes a fidelity heartbeat from src to dst takes in turn."""

    # ---- in the hosts ---------------------------------------------------------------
    @abstractmethod
    def mapper_probes(self, host: int) -> MapperProbes:
        """Host `host`'s Clustermapper prober, its sockets open."""

    @abstractmethod
    def sending_socket(self, host: int, plane: int) -> tuple[socket.socket, str]:
        """An unbound UDP socket of this data plane's family, set up as its routes need,
        and host's address on `plane` to bind it to."""

    @abstractmethod
    def ev_destination(self, src: int, dst: int, plane: int, ev: int) -> str:
        """Where src sends a datagram for dst on (plane, EV)."""

    @abstractmethod
    def receive_socket(self, port: int) -> socket.socket:
        """A UDP socket receiving on `port` at every plane's address."""

    # ---- verification ---------------------------------------------------------------
    @abstractmethod
    def check_routes(self, session, run_workers: WorkerRunner, wait: float | None = None) -> RouteCheck:
        """Every (source, destination, plane, T1) route of the running fabric, proved. `wait`:
        how long to wait for a packet that does not come (None: the data plane's own bound;
        a working route answers at once, so only a broken one costs it)."""

    # ---- the machine ----------------------------------------------------------------
    @classmethod
    def kernel_offers(cls) -> str:
        """What this kernel offers this data plane and what it will use, in a few words
        (setup.sh's last line, lab/kernel_offers.py): probed, never guessed."""
        return ""

    @classmethod
    def server_side(cls) -> ServerSide | None:
        """Its part of a server agent, for a data plane that spans servers; None: one server only."""
        return None

    # ---- faults (faults/*.py's injectors; each step raises BuildError naming what failed) --
    @classmethod
    def refusal(cls, kinds) -> str | None:
        """One line saying which of `kinds` this data plane cannot run and why; None if it runs them all."""
        named = sorted(set(kinds) & set(cls.refused_kinds))
        if not named:
            return None
        return "; ".join(f"fault kind {kind} does not run on the {cls.name} data plane: {cls.refused_kinds[kind]}"
                         for kind in named)

    @abstractmethod
    def switch_reboot(self, session, switch: str, own: list) -> SwitchReboot:
        """What rebooting `switch` (its own link ends `own`) does to the switch itself."""

    @abstractmethod
    def check_tables_kept(self, what: str, timeout: float) -> None:
        """After the control process restarted: BuildError naming `what` unless every
        switch still holds its tables (waits up to `timeout`)."""

    @abstractmethod
    def bring_up(self, fabric: Fabric, ends: list, what: str) -> None:
        """Set switch link ends (faults/links.py End) back up after a link fault, with
        whatever the data plane lost when they went down."""

    @abstractmethod
    def check_up(self, fabric: Fabric, ends: list, what: str) -> None:
        """BuildError naming `what` if a repaired link end lacks its static configuration."""

    @abstractmethod
    def tables_complete(self, fabric: Fabric, timeout: float) -> None:
        """BuildError unless every switch holds its built tables (waits up to `timeout`)."""
