"""The srv6 data plane: kernel IPv6 routers with static uSID routes, the
sender writing the path into the destination address (topologies/srv6/,
docs/srv6.md); the baseline on plain IPv6 routes with a 5-tuple ECMP hash."""

from __future__ import annotations

import socket
from functools import cached_property
from pathlib import Path

from mrc_host.udp6 import zero_checksums
from topologies.build import BuildError
from topologies.dataplane import DataPlane, HeartbeatHop, RouteCheck, ServerSide, WorkerRunner
from topologies.fabric import FabricSpec
from topologies.cluster.placement import placement_of
from topologies.srv6 import faults
from topologies.srv6.builder import Srv6Fabric, build_srv6_fabric
from topologies.srv6.mapper_probes import Srv6Probes
from topologies.srv6.plan import Srv6Plan
from topologies.srv6.route_proof import check_routes
from topologies.srv6.routing import Srv6RoutingProcess
from topologies.srv6.spread_routing import SpreadRouting
from topologies.srv6.server_side import Srv6ServerSide
from topologies.srv6.un_engine import PROGRAM_NAME as UN_PROGRAM_NAME
from topologies.srv6.un_engine import EbpfEngine, KernelEngine, UnEngine, chosen_engine


class Srv6DataPlane(DataPlane):
    name = "srv6"
    refused_kinds = {"datapath_pause": "the srv6 routers forward in the kernel: there is no datapath process to "
                                       "pause (agent_pause pauses the hosts' agents)"}
    extra_header_bytes = 20  # an IPv6 header is 40 bytes, an IPv4 one 20
    route_proof_words = "proved by each T1's End counter"
    ecmp_hashes_ports = True
    admin_down_skips_nexthop = True
    lossless_capable = True
    tc_programs = (UN_PROGRAM_NAME,)   # the routers' eBPF uN End

    def __init__(self, spec: FabricSpec):
        super().__init__(spec)
        self.plan = Srv6Plan(spec)

    @classmethod
    def kernel_offers(cls) -> str:
        yes = {None: "yes"}
        offers = (f"seg6local {yes.get(KernelEngine().unavailable(), 'no')}, "
                  f"clsact + BPF {yes.get(EbpfEngine().unavailable(), 'no')}")
        try:
            return f"{offers}, routers' uN End: {chosen_engine().name}"
        except BuildError as exc:
            return f"{offers}; {exc}"

    @classmethod
    def server_side(cls) -> ServerSide:
        return Srv6ServerSide()

    @cached_property
    def engine(self) -> UnEngine:
        """Who runs the routers' uN End on this kernel (topologies/srv6/un_engine.py): probed
        when first asked, BuildError in one line where no engine can run."""
        return chosen_engine()

    @property
    def run_line(self) -> str:
        """Said at a run's start: the data plane and its uN engine."""
        return f"srv6 data plane: kernel IPv6 routers, uSID source routing, {self.engine.words} (docs/srv6.md)"

    # ---- build and control --------------------------------------------------------
    def control_process(self, workdir: Path, convergence_delay: float, hold_down: float):
        """Srv6RoutingProcess; over several servers one per server, their logs one (SpreadRouting)."""
        if self.agents:
            return SpreadRouting(self.spec, workdir, convergence_delay, hold_down, self.agents)
        return Srv6RoutingProcess(self.spec, workdir, convergence_delay, hold_down)

    def build(self, control, settings, shaping: bool, trimming: bool) -> Srv6Fabric:
        """The routers first: the routing process watches them, they must exist."""
        fabric = build_srv6_fabric(self.spec, shaping=shaping, trimming=trimming, placement=placement_of(self.spec),
                                   agents=self.agents, engine=self.engine)
        try:
            control.start()
        except BaseException:
            fabric.stop()
            raise
        return fabric

    # ---- addresses ------------------------------------------------------------------
    def host_addresses(self, host: int, transport: str) -> list[str]:
        """MRC's uSID addresses; the baseline's (and background load's) plain ones,
        routed by the fabric's ECMP."""
        address = self.plan.host_address if transport == "mrc" else self.plan.baseline_address
        return [str(address(host, p)) for p in range(self.spec.planes)]

    def route_addresses(self, src: int, dst: int, plane: int) -> list[str]:
        """The addresses of src's routes to dst on `plane`, by T1 (another rack), or dst's own (same rack)."""
        if self.spec.rack_of(src) == self.spec.rack_of(dst):
            return [str(self.plan.route_address(src, dst, plane, None))]
        return [str(self.plan.route_address(src, dst, plane, t1)) for t1 in range(self.spec.spines)]

    def transport_addresses(self, host: int, peers: list[int], transport: str) -> dict:
        """For MRC also each peer's route_addresses (here the sender writes the path into the
        address), carried as the paper's IPv6-in-IPv6 packet (mrc_host/encap.py)."""
        fields = super().transport_addresses(host, peers, transport)
        if transport == "mrc":
            fields["route_addresses"] = {self.spec.host_name(n): [self.route_addresses(host, n, p)
                                                                  for p in range(self.spec.planes)] for n in peers}
            fields["encapsulate"] = True
        return fields

    def heartbeat_hops(self, src: int, dst: int) -> list[HeartbeatHop]:
        """Each plane's uSID route via each T1 (dst's own address within a rack), so the
        heartbeat crosses T0, T1 and T0 as MRC's data does."""
        spec = self.spec
        t1s = range(spec.spines) if spec.rack_of(src) != spec.rack_of(dst) else (None,)
        return [HeartbeatHop(p, t1, str(self.plan.route_address(src, dst, p, t1)))
                for p in range(spec.planes) for t1 in t1s]

    # ---- in the hosts ---------------------------------------------------------------
    def mapper_probes(self, host: int) -> Srv6Probes:
        return Srv6Probes(self.spec, host)

    def sending_socket(self, host: int, plane: int) -> tuple[socket.socket, str]:
        sock = zero_checksums(socket.socket(socket.AF_INET6, socket.SOCK_DGRAM), receive=False)
        return sock, str(self.plan.host_address(host, plane))

    def ev_destination(self, src: int, dst: int, plane: int, ev: int) -> str:
        return str(self.plan.ev_address(src, dst, plane, ev))

    def receive_socket(self, port: int) -> socket.socket:
        rx = zero_checksums(socket.socket(socket.AF_INET6, socket.SOCK_DGRAM), send=False)
        rx.bind(("::", port))
        return rx

    # ---- verification ---------------------------------------------------------------
    def check_routes(self, session, run_workers: WorkerRunner, wait: float | None = None) -> RouteCheck:
        return check_routes(session.fabric, wait)

    # ---- faults ---------------------------------------------------------------------
    def refusal(self, kinds) -> str | None:
        """Also: over several servers the routing is one process per server, none of them
        "the controller" a controller_kill would stop."""
        refused = [super().refusal(kinds)]
        if "controller_kill" in kinds and placement_of(self.spec) is not None:
            refused.append("fault kind controller_kill does not run over several servers: each server runs "
                           "the routing of its own planes (docs/cluster.md)")
        return "; ".join(line for line in refused if line) or None

    def switch_reboot(self, session, switch: str, own: list) -> faults.RouterReboot:
        return faults.RouterReboot(session, switch, own)

    def check_tables_kept(self, what: str, timeout: float) -> None:
        """The routers keep their kernel routes while the routing process is away."""

    def bring_up(self, fabric: Srv6Fabric, ends: list, what: str) -> None:
        """Each router port up with what the kernel deleted when it went down."""
        faults.restore_ports(fabric, ends, what)

    def check_up(self, fabric: Srv6Fabric, ends: list, what: str) -> None:
        faults.check_static(fabric, ends, what)

    def tables_complete(self, fabric: Srv6Fabric, timeout: float) -> None:
        faults.tables_complete(fabric, timeout)
