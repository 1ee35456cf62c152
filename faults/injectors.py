"""Fault injectors: one class per fault kind, acting on a live lab Session.

    inj = make_injector(session, FaultEvent(at=2, kind="link_flap", target="t0p0r0-t1p0s1"))
    inj.start()    # returns once the fault is verified in effect
    inj.repair()   # idempotent; returns once the repair is verified

Every start() and repair() checks its effect (link state seen by the kernel
at both ends, switch tables, port-program config, processes, traffic) and
raises FaultError when it did not take effect. See docs/faults.md.
"""

from __future__ import annotations

import contextlib
import operator
import signal
import socket
import subprocess
import sys
import time

from faults.links import (FaultError, End, fabric_element, operstates, resolve_link, set_admin, switch_ends,
                          wait_operstate)
from faults.deny import Deny
from faults.incast import incast_senders
from faults.injector import Injector
from faults.model import FaultEvent
from faults.pause import ALL_HOSTS, AgentPause, DatapathPause
from topologies.routing import connected_since
from topologies import port_program
from topologies.build import BuildError
from topologies.commands import run_command
from topologies.fabric import IP_UDP_HEADER_BYTES, LAB_PAYLOAD_SIZE
from topologies.names import Host, Plane, T0T1Link
from topologies.project import PROJECT_ROOT
from mrc_host.wire import BASELINE_PORT, MRC_PORT
from topologies.waiting import wait_until

__all__ = ["FaultError", "make_injector", "INJECTORS", "fabric_healthy", "wait_switches_connected"]

TABLE_TIMEOUT_S = 20.0
INCAST_PORT = 5201  # neither MRC_PORT nor BASELINE_PORT: background traffic, not a lab transport
assert INCAST_PORT not in (MRC_PORT, BASELINE_PORT)


@contextlib.contextmanager
def dataplane_step():
    """A data plane's fault step (topologies/dataplane.py): its BuildError, whose message
    names the step, is the fault's FaultError."""
    try:
        yield
    except BuildError as exc:
        raise FaultError(str(exc)) from None


# ---- link state -----------------------------------------------------------------
class _LinksDown(Injector):
    """Links down at both ends for the fault, up on repair.

    A T0-T1 link is set administratively down at both ends. A NIC link only
    at its switch end: the host's NIC sees carrier loss, as with a pulled
    cable (an admin-down host interface would also flush its static ARP
    entries, which the fabric cannot relearn: it carries no ARP)."""

    def links(self) -> list[str]:
        raise NotImplementedError

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        pairs = [resolve_link(session.fabric, link) for link in self.links()]
        self.ends = [end for pair in pairs for end in pair]
        self.admin = [end for end in self.ends if end.switch is not None]

    def start(self) -> None:
        self.active = True
        set_admin(self.admin, up=False)
        self.in_effect = self.now()        # the link carries nothing from here on
        wait_operstate(self.ends, up=False, what=f"{self}: set down")

    def repair(self) -> None:
        dataplane, what = self.session.dataplane, f"{self}: set up"
        with dataplane_step():
            dataplane.bring_up(self.session.fabric, self.admin, what)
        self.in_effect = self.now()        # up at both ends (srv6: with its routes back)
        wait_operstate(self.ends, up=True, what=what)
        with dataplane_step():
            dataplane.check_up(self.session.fabric, self.admin, what)
        self.active = False


class LinkFlap(_LinksDown):
    """'t0p<P>r<R>-t1p<P>s<S>' or 'h<H>-eth<P>' down for the duration."""

    kind = "link_flap"

    def links(self) -> list[str]:
        return [self.target]


class PlaneDown(_LinksDown):
    """'plane<P>': every T0-T1 link of plane P down."""

    kind = "plane_down"

    def links(self) -> list[str]:
        plane = fabric_element(self.spec, self.target, Plane, what=self.kind)
        return [str(link) for link in self.spec.t0_t1_links(plane.index)]


# ---- switch reboot ----------------------------------------------------------------
class SwitchReboot(Injector):
    """A switch reboots: its own ports go down (the peers lose carrier) and its tables
    are wiped; on return its ports come up and its tables are reinstalled. What a
    reboot does to the switch itself is the data plane's (DataPlane.switch_reboot)."""

    kind = "switch_reboot"

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        pairs = switch_ends(session.fabric, target)
        self.own = [own for own, _ in pairs]
        self.all_ends = self.own + [peer for _, peer in pairs]
        self.switch = session.dataplane.switch_reboot(session, target, self.own)

    def start(self) -> None:
        self.active = True
        what = f"{self}: reboot"
        set_admin(self.own, up=False)  # its own ports: the peers see carrier loss
        with dataplane_step():
            self.switch.wipe(what)
        wait_operstate(self.all_ends, up=False, what=what)
        with dataplane_step():
            self.switch.check_wiped(what)

    def repair(self) -> None:
        what = f"{self}: return"
        with dataplane_step():
            self.switch.restore(what)
        wait_operstate(self.all_ends, up=True, what=what)
        with dataplane_step():
            self.switch.check_restored(what)
        self.active = False


# ---- port-program faults (gray failure, random loss) -------------------------------
def _port_call(end: End, call: str, *args):
    """port_program.<call>(end's port, *args): here, or through its server's agent."""
    if end.remote is not None:
        return end.remote.port_program(call, end.ifname, *args)
    return getattr(port_program, call)(end.ifname, *args)


def _t0t1_ends(session, target: str, kind: str) -> list[End]:
    fabric_element(session.spec, target, T0T1Link, what=kind)
    return list(resolve_link(session.fabric, target))


class Blackhole(Injector):
    """Both switch ports of a T0-T1 link drop everything; the link stays up."""

    kind = "blackhole"

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        self.ends = _t0t1_ends(session, target, self.kind)

    def _set(self, on: bool) -> None:
        for end in self.ends:
            _port_call(end, "set_blackhole", on)
        wrong = [e.ifname for e in self.ends
                 if bool(_port_call(e, "port_cfg").flags & port_program.CFG_BLACKHOLE) != on]
        if wrong:
            raise FaultError(f"{self}: black-hole flag not {'set' if on else 'cleared'} on {wrong}")
        down = {n: s for n, s in operstates(self.ends).items() if s != "UP"}
        if down:
            raise FaultError(f"{self}: a gray failure keeps the link up, but {down}")

    def start(self) -> None:
        self.active = True
        self._set(True)

    def repair(self) -> None:
        self._set(False)
        self.active = False


class _PortLoss(Injector):
    """Random drop with probability params.p at the port program of some switch ports
    (``switch_ports``), both data planes; counted as the ports' fault drops."""

    def switch_ports(self) -> list[End]:
        raise NotImplementedError

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        self.ends = self.switch_ports()
        p = self.params.get("p")
        if not isinstance(p, (int, float)) or not 0 < p <= 1:
            raise FaultError(f"{self}: params.p must be a probability in (0, 1], got {p!r}")
        self.p = float(p)

    def _set(self, p: float) -> None:
        for end in self.ends:
            _port_call(end, "set_drop_probability", p)
        want = port_program._prob_u32(p)
        wrong = [e.ifname for e in self.ends if _port_call(e, "port_cfg").drop_prob != want]
        if wrong:
            raise FaultError(f"{self}: drop probability {p} not set on {wrong}")

    def start(self) -> None:
        self.active = True
        self._set(self.p)

    def repair(self) -> None:
        self._set(0.0)
        self.active = False


class Loss(_PortLoss):
    """Random drop with probability p on both switch ports of a T0-T1 link."""

    kind = "loss"

    def switch_ports(self) -> list[End]:
        return _t0t1_ends(self.session, self.target, self.kind)


class NicLoss(_PortLoss):
    """Random drop with probability p at every NIC receive of host 'h<H>', or of every
    host ('hosts'): on the T0 port facing the host on every plane, so whatever the host
    receives, data or ACKs, MRC or baseline, is lost at rate p (the random-loss rows
    of the MRC paper's testbed)."""

    kind = "nic_loss"

    def switch_ports(self) -> list[End]:
        spec = self.spec
        if self.target == ALL_HOSTS:
            hosts = range(spec.hosts)
        else:
            hosts = [fabric_element(spec, self.target, Host, what=self.kind).index]
        # resolve_link gives a NIC link's switch end first
        return [resolve_link(self.session.fabric, spec.host_intf(h, p))[0] for h in hosts for p in range(spec.planes)]


# ---- controller crash ------------------------------------------------------------
def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), 0.3):
            return True
    except OSError:
        return False


def wait_switches_connected(session, since: float, timeout: float, what: str) -> None:
    """Poll the controller's log until every switch (re)connected after `since`
    (OVSDB's is_connected lags by seconds, so it is not used)."""
    def missing() -> list[str]:
        return sorted(set(session.spec.switch_names) - connected_since(session.controller.routing_log, since))

    absent = wait_until(missing, timeout, interval=0.1, done=operator.not_)
    if absent:
        raise FaultError(f"{what}: {len(absent)} switches did not connect to the controller within "
                         f"{timeout:.0f} s (e.g. {absent[:3]})")


class ControllerKill(Injector):
    """SIGKILL the controller; repair restarts it and checks every switch
    reconnects with its full table (kept, not reinstalled: see topologies/openflow/controller.py)."""

    kind = "controller_kill"

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        if target != "controller":
            raise FaultError(f"controller_kill target must be 'controller', got {target!r}")

    def start(self) -> None:
        self.active = True
        ctl = self.session.controller
        if not ctl.running():
            raise FaultError(f"{self}: the controller is not running")
        ctl.proc.send_signal(signal.SIGKILL)
        ctl.proc.wait(timeout=10)
        if ctl.port is not None and _listening(ctl.port):  # srv6's routing process listens on nothing
            raise FaultError(f"{self}: something still listens on 127.0.0.1:{ctl.port}")

    def repair(self) -> None:
        ctl = self.session.controller
        if not ctl.running():
            since = time.monotonic()
            try:
                ctl.start()
            except Exception as exc:
                raise FaultError(f"{self}: restart failed: {exc}") from None
            wait_switches_connected(self.session, since, TABLE_TIMEOUT_S, f"{self}: restart")
        with dataplane_step():
            self.session.dataplane.check_tables_kept(f"{self}: restart", TABLE_TIMEOUT_S)
        self.active = False


# ---- incast ----------------------------------------------------------------------
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
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        alive = [p.pid for p in self.procs if p.poll() is None]
        if alive:
            raise FaultError(f"{self}: processes {alive} did not stop")
        self.procs = []
        self.active = False


INJECTORS = {cls.kind: cls for cls in (LinkFlap, PlaneDown, SwitchReboot, Blackhole, Loss, NicLoss,
                                        ControllerKill, Incast, AgentPause, DatapathPause, Deny)}


def make_injector(session, event: FaultEvent) -> Injector:
    cls = INJECTORS.get(event.kind)
    if cls is None:
        raise FaultError(f"unknown fault kind {event.kind!r}; known: {', '.join(INJECTORS)}")
    refused = session.dataplane.refusal([event.kind])
    if refused:
        raise FaultError(refused)
    return cls(session, event.target, event.params)


def fabric_healthy(session, timeout: float = 10.0) -> None:
    """Raise FaultError unless the fabric is back to its built state: every
    link up, the controller (on srv6 the routing process) running and every switch
    connected, no port-program fault, and every table complete: on OpenFlow each
    switch's flows and every T0 ECMP group with all its uplinks, on srv6 each router's
    static routes and neighbours and every baseline rack route with all its T1s (waits
    up to `timeout` for a routing restore still in its hold-down)."""
    spec, fabric = session.spec, session.fabric
    ends = [e for link in spec.links for e in resolve_link(fabric, str(link.element))]
    wait_operstate(ends, up=True, what="healthy fabric", timeout=timeout)
    if not session.controller.running():
        raise FaultError("healthy fabric: the controller is not running")
    connected = connected_since(session.controller.routing_log, 0.0)
    if set(spec.switch_names) - connected:
        raise FaultError(f"healthy fabric: not connected to the controller: "
                         f"{sorted(set(spec.switch_names) - connected)}")
    faulty = {}
    for e in ends:
        if e.switch is not None:
            cfg = _port_call(e, "port_cfg")
            blackhole = bool(cfg.flags & port_program.CFG_BLACKHOLE)
            if cfg.drop_prob or blackhole:
                faulty[e.ifname] = {"drop_prob": cfg.drop_prob, "blackhole": blackhole}
    if faulty:
        raise FaultError(f"healthy fabric: port faults left on {faulty}")
    with dataplane_step():
        session.dataplane.tables_complete(fabric, timeout)
