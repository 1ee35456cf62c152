"""The OpenFlow data plane: Open vSwitch switches whose static tables the
os-ken controller installs (topologies/openflow/), IPv4 hosts, the switches'
hash picking the baseline's T1 per address pair."""

from __future__ import annotations

import socket
from pathlib import Path

from topologies.build import BuildError
from topologies.dataplane import DataPlane, HeartbeatHop, RouteCheck, WorkerRunner
from topologies.openflow import faults
from topologies.openflow.builder import Fabric, build_fabric, kernel_datapath_available, wait_for_tables
from topologies.openflow.control import CONTROLLER_PORT, ControllerProcess
from topologies.openflow.mapper_probes import OpenFlowProbes
from topologies.openflow.route_check import check_paths


class OpenFlowDataPlane(DataPlane):
    name = "openflow"
    route_proof_words = "each arrived with its T1's mark"
    run_line = ("openflow data plane: Open vSwitch switches, static tables from the os-ken controller "
                "(docs/architecture.md)")  # said at a run's start

    @classmethod
    def kernel_offers(cls) -> str:
        module = kernel_datapath_available()
        return f"OVS kernel module {'yes' if module else 'no'}, OVS {'kernel' if module else 'userspace'} datapath"

    # ---- build and control --------------------------------------------------------
    def control_process(self, workdir: Path, convergence_delay: float, hold_down: float) -> ControllerProcess:
        return ControllerProcess(self.spec, CONTROLLER_PORT, workdir, convergence_delay, hold_down)

    def build(self, control, settings, shaping: bool, trimming: bool) -> Fabric:
        """The controller first: the switches connect to it as they start."""
        control.start()
        return build_fabric(self.spec, control.port, settings, shaping=shaping, trimming=trimming)

    # ---- addresses ------------------------------------------------------------------
    def host_addresses(self, host: int, transport: str) -> list[str]:
        return [self.spec.host_ip(host, p) for p in range(self.spec.planes)]

    def heartbeat_hops(self, src: int, dst: int) -> list[HeartbeatHop]:
        """One per plane to dst's address; the switches' hash picks the T1 between
        racks, unknown here ("ev?": any T1)."""
        spec = self.spec
        t1 = "ev?" if spec.rack_of(src) != spec.rack_of(dst) else None
        return [HeartbeatHop(p, t1, spec.host_ip(dst, p)) for p in range(spec.planes)]

    # ---- in the hosts ---------------------------------------------------------------
    def mapper_probes(self, host: int) -> OpenFlowProbes:
        return OpenFlowProbes(self.spec, host)

    def sending_socket(self, host: int, plane: int) -> tuple[socket.socket, str]:
        return socket.socket(socket.AF_INET, socket.SOCK_DGRAM), self.spec.host_ip(host, plane)

    def ev_destination(self, src: int, dst: int, plane: int, ev: int) -> str:
        return self.spec.host_ip(dst, plane)  # the EV rides in the source port: the T0 steers by it

    def receive_socket(self, port: int) -> socket.socket:
        rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rx.bind(("0.0.0.0", port))
        return rx

    # ---- verification ---------------------------------------------------------------
    def check_routes(self, session, run_workers: WorkerRunner, wait: float | None = None) -> RouteCheck:
        return check_paths(session, run_workers, wait)

    # ---- faults ---------------------------------------------------------------------
    def switch_reboot(self, session, switch: str, own: list) -> faults.SwitchReboot:
        return faults.SwitchReboot(session, switch, own)

    def check_tables_kept(self, what: str, timeout: float) -> None:
        """The switches keep their tables while the controller is away (it reinstalls nothing)."""
        try:
            wait_for_tables(self.spec, timeout=timeout)
        except Exception as exc:
            raise BuildError(f"{what}: {exc}") from None

    def bring_up(self, fabric: Fabric, ends: list, what: str) -> None:
        faults.set_up(ends)

    def check_up(self, fabric: Fabric, ends: list, what: str) -> None:
        """Nothing to read back: a switch port set down loses no table entry."""

    def tables_complete(self, fabric: Fabric, timeout: float) -> None:
        faults.tables_complete(self.spec, timeout)
