"""`incast`: background UDP from other hosts toward one host (the senders run faults/incast.py)."""

from __future__ import annotations

import subprocess
import sys

from pydantic import Field

from faults.incast import incast_senders
from faults.injector import Injector
from faults.kind import FaultKind, ParamsProblem, StrictParams, register
from faults.links import FaultError, fabric_element
from mrc_host.wire import BASELINE_PORT, MRC_PORT
from topologies.system.child_process import end_processes
from topologies.system.commands import run_command
from topologies.fabric import IP_UDP_HEADER_BYTES, LAB_PAYLOAD_SIZE, FabricSpec
from topologies.names import Host
from topologies.project import PROJECT_ROOT
from topologies.system.waiting import wait_until

INCAST_PORT = 5201  # neither MRC_PORT nor BASELINE_PORT: background traffic, not a lab transport
assert INCAST_PORT not in (MRC_PORT, BASELINE_PORT)


def nic_rx_bytes(session, h: int) -> int:
    """Bytes host h's NIC ports received, all planes (its namespace's counters)."""
    spec = session.spec
    out = run_command(["nsenter", f"--net=/proc/{session.fabric.host(h).pid}/ns/net", "cat", "/proc/net/dev"],
                      timeout=10, check=False, error=FaultError).stdout
    names = {spec.host_intf(h, p) for p in range(spec.planes)}
    total = 0
    for line in out.splitlines():
        if ":" in line and line.split(":")[0].strip() in names:
            total += int(line.split(":")[1].split()[0])
    return total


class Incast(Injector):
    """Background UDP toward host 'h<H>' from `senders` other hosts (other
    racks first), each at `rate` (default 1.0) of its link rate on every
    plane, until repair or until it sent `bytes` (default: no limit).
    Not a lab transport: port INCAST_PORT, classified 'other' by the port
    program, so its drops are the port program's queue drops (counted)."""

    kind = "incast"
    ARRIVAL_TIMEOUT_S = 3.0

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        spec = self.spec
        self.victim = fabric_element(spec, target, Host, what="incast target").index
        n = self.params.get("senders", spec.hosts - 1)
        if not isinstance(n, int) or not 1 <= n <= spec.hosts - 1:
            raise FaultError(f"{self}: params.senders must be in [1, {spec.hosts - 1}], got {n!r}")
        self.senders = incast_senders(spec, self.victim, n)
        self.bytes = self.params.get("bytes")
        self.rate = float(self.params.get("rate", 1.0))
        self.procs: list[subprocess.Popen] = []

    def _popen(self, h: int, args: list[str]) -> subprocess.Popen:
        # the tag makes lab.plumbing.cleanup find these processes after a crash
        return self.session.fabric.host(h).popen(
            [sys.executable, "-m", "faults.incast", *args, "--tag", "mrclab-incast"],
            cwd=str(PROJECT_ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def start(self) -> None:
        self.active = True
        spec = self.spec
        before = nic_rx_bytes(self.session, self.victim)
        # the victim's plain addresses, forwarded by destination and ECMP hash as background traffic
        dataplane = self.session.dataplane
        victim_ips = dataplane.host_addresses(self.victim, transport="background")
        self.procs.append(self._popen(self.victim, ["sink", "--port", str(INCAST_PORT), *victim_ips]))
        for h in self.senders:
            args = ["send", "--port", str(INCAST_PORT), "--rate-bps", str(int(spec.link_bps * self.rate)),
                    "--payload", str(min(LAB_PAYLOAD_SIZE,
                                         spec.mtu - IP_UDP_HEADER_BYTES - dataplane.extra_header_bytes))]
            if self.bytes:
                args += ["--bytes", str(int(self.bytes))]
            self.procs.append(self._popen(h, args + victim_ips))

        def arrived_or_dead():
            """True once traffic arrives; before that, the senders that died (if any: the wait ends)."""
            if nic_rx_bytes(self.session, self.victim) - before >= 2 * spec.mtu:
                return True
            return [p for p in self.procs if p.poll() is not None and p.returncode != 0]

        outcome = wait_until(arrived_or_dead, self.ARRIVAL_TIMEOUT_S, interval=0.05)
        if outcome is not True:
            err = outcome[0].stderr.read().decode()[-400:] if outcome else ""
            self.repair()
            raise FaultError(f"{self}: no incast traffic reached {self.target} within "
                             f"{self.ARRIVAL_TIMEOUT_S:.0f} s {err}")

    def repair(self) -> None:
        alive = end_processes(self.procs)
        if alive:
            raise FaultError(f"{self}: processes {alive} did not stop")
        self.procs = []
        self.active = False


class IncastParams(StrictParams):
    senders: int = Field(ge=1)  # the injector picks them, other racks first
    bytes: int = Field(ge=1)  # sent by each sender per burst


def _enough_hosts(spec: FabricSpec, params: dict) -> None:
    if params["senders"] >= spec.hosts:
        raise ParamsProblem(f"{params['senders']} senders and a target need {params['senders'] + 1} hosts; "
                            f"the fabric has {spec.hosts}", field="senders")


INCAST = register(FaultKind(
    "incast", "UDP toward a host from params.senders other hosts at their link rate, params.bytes each",
    targets=("host",), injector=Incast, params=IncastParams, check_params=_enough_hosts))
