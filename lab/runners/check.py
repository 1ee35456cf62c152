"""`check`: prove that every path of a running fabric works as the tables say.

1. Path verification, by the data plane (topologies/dataplane.py check_routes):
   one real packet per (source, destination, plane, T1) path; on OpenFlow each
   must arrive on the destination's NIC port of that plane carrying the
   Ethernet source mark of the T1 it was meant to cross (within a rack: the
   sender's own MAC, no T1 on the way: topologies/openflow/route_check.py); on
   srv6 each route is proved by its T1's own End counter instead
   (topologies/srv6/route_proof.py verify_routes).
2. Conservation pass: every host streams to a host in the next rack,
   sprayed over every plane and T1, at 0.9 of its link rate; packets sent
   must equal packets received (the emulator itself must lose nothing).
   A pass that lost packets while the machine was CPU-bound is repeated at
   half the load (down to a quarter): the verdict is the last pass's, and
   every pass is reported.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from statistics import mean

from lab.analysis.cpu_samples import cpu_bound, cpu_totals
from lab.live.fidelity import FidelityMonitor
from lab.plumbing.session import Session
from topologies.port_program import port_program
from topologies.project import PROJECT_ROOT


CONSERVATION_LOAD = 0.9  # of each host's link rate: near line rate, where an emulator drops first


@dataclass
class CheckResult:
    paths_total: int = 0
    paths_ok: int = 0
    per_plane: dict = field(default_factory=dict)  # plane -> [ok, total]
    failures: list = field(default_factory=list)
    conservation_sent: int = 0
    conservation_received: int = 0
    conservation_blocked: int = 0
    conservation_attempts: list = field(default_factory=list)  # load, sent, received, cpu_bound per pass
    verify_s: float = 0.0
    port_program_ports: tuple = (0, 0)  # switch ports holding the port program, of all switch ports

    @property
    def ok(self) -> bool:
        return (
            self.paths_total > 0
            and self.paths_ok == self.paths_total
            and self.conservation_sent > 0
            and self.conservation_sent == self.conservation_received
            and self.port_program_ports[0] == self.port_program_ports[1]
        )


def run_workers(session: Session, mode: str, extra: list[str], timeout: float) -> list[dict]:
    """Start the worker in every host, release them together, collect results."""
    spec, fabric = session.spec, session.fabric
    go = session.workdir / f"go-{mode}"
    go.unlink(missing_ok=True)
    procs = []
    try:
        for h in range(spec.hosts):
            cmd = [sys.executable, "-m", "lab.inhost.pathprobe", mode, "--fabric",
                   str(session.controller.fabric_file), "--host", str(h), "--go", str(go), *extra]
            procs.append(fabric.host(h).popen(cmd, cwd=str(PROJECT_ROOT), stdout=subprocess.PIPE,
                                               stderr=subprocess.PIPE, text=True))
        for proc in procs:
            line = proc.stdout.readline()
            if line.strip() != "READY":
                raise RuntimeError(f"{mode} worker failed to start: {line}{proc.stderr.read()[-500:]}")
        go.touch()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            if proc.returncode != 0:
                raise RuntimeError(f"{mode} worker failed: {err.strip()[-500:]}")
            results.append(json.loads(out.strip().splitlines()[-1]))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def verify_routes(session: Session, result: CheckResult) -> None:
    """Every (source, destination, plane, T1) route, proved as the data plane proves it."""
    check = session.dataplane.check_routes(session, run_workers)
    result.failures += check.failures
    for plane, (proved, tried) in check.per_plane.items():
        counts = result.per_plane.setdefault(plane, [0, 0])
        counts[0] += proved
        counts[1] += tried
        result.paths_ok += proved
        result.paths_total += tried


def conservation_pass(session: Session, result: CheckResult, seconds: float, payload: int) -> None:
    """Stream at CONSERVATION_LOAD; if packets went missing while the machine
    was CPU-bound (the emulator, not the fabric, could not keep up: other work
    on a laptop or shared VM), say so and measure again at half the load, so
    a busy machine gets a slower verdict instead of a false alarm."""
    load = CONSERVATION_LOAD
    while True:
        with FidelityMonitor(session.spec, time.monotonic()) as monitor:
            results = run_workers(
                session, "stream", ["--seconds", str(seconds), "--payload", str(payload), "--load", str(load)],
                timeout=seconds + 30,
            )
        result.conservation_sent = sum(r["sent"] for r in results)
        result.conservation_received = sum(r["received"] for r in results)
        result.conservation_blocked = sum(r["blocked"] for r in results)
        busy = cpu_bound(monitor.samples)
        result.conservation_attempts.append({
            "load": load, "sent": result.conservation_sent, "received": result.conservation_received,
            "cpu_bound": busy, "cpu_mean_pct": round(mean(cpu_totals(monitor.samples) or [0.0]), 1),
            # the whole machine's CPU per packet delivered: senders, fabric and receivers at
            # one offered load, so two data planes compare by what their fabric costs
            "cpu_us_per_packet": round(1e6 * monitor.busy_core_s / result.conservation_received, 1)
            if result.conservation_received else None})
        lost = result.conservation_sent != result.conservation_received
        if not (lost and busy) or load <= CONSERVATION_LOAD / 4:
            return
        load /= 2


def run_check(session: Session, seconds: float = 3.0, payload: int = 4096) -> CheckResult:
    started = time.monotonic()
    result = CheckResult()
    verify_routes(session, result)
    ports = session.fabric.switch_ports()
    counted = set(port_program.all_counters())
    for agent in session.dataplane.agents.values():   # another server's ports: its own port program's
        counted |= set(agent.call("port_program", call="all_counters"))
    attached = len(set(ports) & counted)
    result.port_program_ports = (attached, len(ports))
    if attached != len(ports):
        result.failures.append(f"the port program is attached to {attached} of {len(ports)} switch ports")
    conservation_pass(session, result, seconds, payload)
    result.verify_s = time.monotonic() - started
    return result
