"""Fault injectors: one class per fault kind, acting on a live lab Session.

    inj = make_injector(session, FaultEvent(at=2, kind="link_flap", target="t0p0r0-t1p0s1"))
    inj.start()    # returns once the fault is verified in effect
    inj.repair()   # idempotent; returns once the repair is verified

Every start() and repair() checks its effect (link state seen by the kernel
at both ends, switch tables, port-program config, processes, traffic) and
raises FaultError when it did not take effect. See docs/faults.md.
"""

from __future__ import annotations

import operator
import re
import signal
import socket
import subprocess
import sys
import time

from faults.links import (FaultError, End, fabric_element, operstates, resolve_link, set_admin, switch_ends,
                          wait_operstate, wait_table)
from faults.deny import Deny
from faults.incast import incast_senders
from faults.model import FaultEvent, dataplane_refusal
from faults.pause import ALL_HOSTS, AgentPause, DatapathPause
from faults.routing import connected_since
from topologies import port_program, srv6_builder
from topologies.builder import BuildError, expected_counts, wait_for_tables
from topologies.commands import run_command
from topologies.fabric import IP_UDP_HEADER_BYTES, LAB_PAYLOAD_SIZE
from topologies.names import Host, Plane, Switch, T0T1Link
from topologies.project import PROJECT_ROOT
from topologies.tables import BASELINE_PORT, MRC_PORT
from topologies.waiting import wait_until

__all__ = ["FaultError", "make_injector", "INJECTORS", "fabric_healthy", "ecmp_ports", "ecmp_groups",
           "wait_switches_connected"]

OVS_RECONNECT_MS = 1000  # as Mininet sets it: a switch retries its controller every <= 1 s
TABLE_TIMEOUT_S = 20.0
OVS_COMMAND_TIMEOUT_S = 30.0  # one ovs-vsctl/ovs-ofctl call on a switch
INCAST_PORT = 5201  # neither MRC_PORT nor BASELINE_PORT: background traffic, not a lab transport
assert INCAST_PORT not in (MRC_PORT, BASELINE_PORT)
IPV6_EXTRA_HEADER_BYTES = 20  # an IPv6 header is 40 bytes, an IPv4 one 20


def _run(cmd: list[str], what: str) -> str:
    return run_command(cmd, timeout=OVS_COMMAND_TIMEOUT_S, what=what, error=FaultError).stdout


class Injector:
    kind = ""

    def __init__(self, session, target: str, params: dict | None = None):
        self.session, self.target, self.params = session, target, dict(params or {})
        self.spec = session.spec
        self.active = False
        self.now = time.monotonic          # the clock's now; the timeline gives its own
        # when the last start or repair took effect on the fabric (clock time), if the
        # injector can tell: after its commands, before the checks that verify them
        self.in_effect: float | None = None

    def start(self) -> None:
        raise NotImplementedError

    def repair(self) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self.kind}({self.target})"


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
        if self.spec.dataplane == "srv6":
            restore_ports(self.session.fabric, self.admin, f"{self}: set up")
        else:
            set_admin(self.admin, up=True)
        self.in_effect = self.now()        # up at both ends (srv6: with its routes back)
        wait_operstate(self.ends, up=True, what=f"{self}: set up")
        if self.spec.dataplane == "srv6":
            check_static(self.session.fabric, self.admin, f"{self}: set up")
        self.active = False


def restore_ports(fabric, ends: list[End], what: str) -> None:
    """srv6: each router port up with its neighbour and static routes, which the kernel
    deleted when it was set down (docs/srv6.md, "Faults on srv6")."""
    for end in ends:
        try:
            srv6_builder.restore_port(fabric, Switch.parse(end.switch), end.port)
        except BuildError as exc:
            raise FaultError(f"{what}: {exc}") from None


def check_static(fabric, ends: list[End], what: str) -> None:
    """srv6: FaultError naming what the routers of `ends` lack on those ports, read back
    from the kernel and compared with the plan."""
    by_switch: dict[str, list[int]] = {}
    for end in ends:
        by_switch.setdefault(end.switch, []).append(end.port)
    _raise_problems(what, [p for switch, ports in by_switch.items()
                           for p in srv6_builder.static_problems(fabric, Switch.parse(switch), ports)])


def _raise_problems(what: str, problems: list[str]) -> None:
    if problems:
        raise FaultError(f"{what}: static configuration not back: {'; '.join(problems[:6])}"
                         f"{f' (and {len(problems) - 6} more)' if len(problems) > 6 else ''}")


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
class _Reboot(Injector):
    """A switch's own link ends (``own``) and those with their peers (``all_ends``)."""

    kind = "switch_reboot"

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        pairs = switch_ends(session.fabric, target)
        self.own = [own for own, _ in pairs]
        self.all_ends = self.own + [peer for _, peer in pairs]


class SwitchReboot(_Reboot):
    """All its links down (peers lose carrier), controller connection gone,
    flow table and groups wiped; on repair links up, controller set back,
    and the controller must reinstall the full static table."""

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        self.want = expected_counts(self.spec)[target]

    def start(self) -> None:
        self.active = True
        what = f"{self}: reboot"
        set_admin(self.own, up=False)  # its own ports: the peers see carrier loss
        _run(["ovs-vsctl", "del-controller", self.target], what)
        _run(["ovs-ofctl", "-O", "OpenFlow13", "del-flows", self.target], what)
        _run(["ovs-ofctl", "-O", "OpenFlow13", "del-groups", self.target], what)
        wait_operstate(self.all_ends, up=False, what=what)
        if _run(["ovs-vsctl", "get-controller", self.target], what).strip():
            raise FaultError(f"{what}: controller still configured")
        wait_table(self.spec, self.target, (0, 0), what, timeout=5)

    def repair(self) -> None:
        what = f"{self}: return"
        set_admin(self.own, up=True)
        if not _run(["ovs-vsctl", "get-controller", self.target], what).strip():
            _run(["ovs-vsctl", "set-controller", self.target, _controller_target(self.session),
                  "--", "set", "Controller", self.target, f"max_backoff={OVS_RECONNECT_MS}"], what)
        wait_operstate(self.all_ends, up=True, what=what)
        wait_table(self.spec, self.target, self.want, f"{what}: controller reinstall", TABLE_TIMEOUT_S)
        self.active = False


class Srv6SwitchReboot(_Reboot):
    """srv6: a router reboots. Its ports go down (peers lose carrier) and its tables are
    wiped (routes, End route, neighbours); on return its whole static configuration is
    reinstalled (srv6_builder.restore_router, as the OpenFlow controller reinstalls a
    switch's flows) and read back. The baseline's rack routes are the routing process's:
    it sees the links come back and writes them (checked by fabric_healthy)."""

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        self.switch = Switch.parse(target)

    def start(self) -> None:
        self.active = True
        what, fabric = f"{self}: reboot", self.session.fabric
        set_admin(self.own, up=False)  # its own ports: the peers see carrier loss
        try:
            srv6_builder.flush_router(fabric, self.switch)
            routes, neighbours = srv6_builder.held_static(fabric, self.switch)
        except BuildError as exc:
            raise FaultError(f"{what}: {exc}") from None
        wait_operstate(self.all_ends, up=False, what=what)
        if routes or neighbours:
            raise FaultError(f"{what}: tables not wiped: routes {sorted(routes)[:4]}, neighbours {sorted(neighbours)}")

    def repair(self) -> None:
        what, fabric = f"{self}: return", self.session.fabric
        try:
            srv6_builder.restore_router(fabric, self.switch)
        except BuildError as exc:
            raise FaultError(f"{what}: {exc}") from None
        wait_operstate(self.all_ends, up=True, what=what)
        _raise_problems(what, srv6_builder.static_problems(fabric, self.switch))
        self.active = False


def _controller_target(session) -> str:
    return f"tcp:127.0.0.1:{session.controller.port}"


# ---- port-program faults (gray failure, random loss) -------------------------------
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
            port_program.set_blackhole(end.ifname, on)
        wrong = [e.ifname for e in self.ends
                 if bool(port_program.port_cfg(e.ifname).flags & port_program.CFG_BLACKHOLE) != on]
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
            port_program.set_drop_probability(end.ifname, p)
        want = port_program._prob_u32(p)
        wrong = [e.ifname for e in self.ends if port_program.port_cfg(e.ifname).drop_prob != want]
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
    reconnects with its full table (kept, not reinstalled: see lab/plumbing/controller.py)."""

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
        if ctl.port is not None:  # OpenFlow switches hold tables; srv6 routers keep their kernel routes
            try:
                wait_for_tables(self.spec, timeout=TABLE_TIMEOUT_S)
            except Exception as exc:
                raise FaultError(f"{self}: restart: {exc}") from None
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


def _incast_addresses(session, h: int) -> list[str]:
    """Host h's address on every plane: its IPv4 one, or on srv6 its plain (baseline)
    IPv6 one, which the routers forward by destination and ECMP hash, as background traffic."""
    spec = session.spec
    if spec.dataplane == "srv6":
        return [str(session.fabric.plan.baseline_address(h, p)) for p in range(spec.planes)]
    return [spec.host_ip(h, p) for p in range(spec.planes)]


def _ip_udp_header_bytes(spec) -> int:
    return IP_UDP_HEADER_BYTES + (IPV6_EXTRA_HEADER_BYTES if spec.dataplane == "srv6" else 0)


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
        victim_ips = _incast_addresses(self.session, self.victim)
        self.procs.append(self._popen(self.victim, ["sink", "--port", str(INCAST_PORT), *victim_ips]))
        for h in self.senders:
            args = ["send", "--port", str(INCAST_PORT), "--rate-bps", str(int(spec.link_bps * self.rate)),
                    "--payload", str(min(LAB_PAYLOAD_SIZE, spec.mtu - _ip_udp_header_bytes(spec)))]
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


# Where a data plane needs its own injector for a kind (the rest serve both).
DATAPLANE_INJECTORS = {"srv6": {"switch_reboot": Srv6SwitchReboot}}


def make_injector(session, event: FaultEvent) -> Injector:
    cls = INJECTORS.get(event.kind)
    if cls is None:
        raise FaultError(f"unknown fault kind {event.kind!r}; known: {', '.join(INJECTORS)}")
    dataplane = session.spec.dataplane
    refused = dataplane_refusal(dataplane, [event.kind])
    if refused:
        raise FaultError(refused)
    cls = DATAPLANE_INJECTORS.get(dataplane, {}).get(event.kind, cls)
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
            cfg = port_program.port_cfg(e.ifname)
            blackhole = bool(cfg.flags & port_program.CFG_BLACKHOLE)
            if cfg.drop_prob or blackhole:
                faulty[e.ifname] = {"drop_prob": cfg.drop_prob, "blackhole": blackhole}
    if faulty:
        raise FaultError(f"healthy fabric: port faults left on {faulty}")
    if spec.dataplane == "srv6":
        _srv6_tables_complete(fabric, timeout)
    else:
        _openflow_tables_complete(spec, timeout)


def _openflow_tables_complete(spec, timeout: float) -> None:
    def short_groups() -> dict:
        groups = {t0: ecmp_groups(t0) for t0 in spec.t0_names}
        return {t0: g for t0, g in groups.items() if any(len(ports) != spec.spines for ports in g.values())}

    short = wait_until(short_groups, timeout, interval=0.1, done=operator.not_)
    if short:
        raise FaultError(f"healthy fabric: ECMP groups still short of uplinks after {timeout:.0f} s: {short}")
    try:
        wait_for_tables(spec, timeout=timeout)
    except Exception as exc:
        raise FaultError(f"healthy fabric: {exc}") from None


def _srv6_tables_complete(fabric, timeout: float) -> None:
    def missing() -> list[str]:
        return [problem for switch in fabric.spec.switches for problem in srv6_table_problems(fabric, switch)]

    problems = wait_until(missing, timeout, interval=0.2, done=operator.not_)
    if problems:
        raise FaultError(f"healthy fabric: after {timeout:.0f} s {len(problems)} routes or neighbours are not as "
                         f"built: {'; '.join(problems[:4])}")


def srv6_table_problems(fabric, switch: Switch) -> list[str]:
    """What a router lacks of its built tables: its static configuration, and its
    baseline rack routes with every T1 (the routing process's, nothing withdrawn)."""
    try:
        held = srv6_builder.held_static(fabric, switch)
        problems, (routes, _) = srv6_builder.static_problems(fabric, switch, held=held), held
    except BuildError as exc:
        return [f"{switch}: {exc}"]
    for route in fabric.plan.baseline_rack_routes(switch):
        want = ",".join(sorted(fabric.spec.switch_intf(switch, port) for port in route.ports))
        if routes.get(str(route.prefix)) != want:
            problems.append(f"{switch}: baseline route {route.prefix} on {routes.get(str(route.prefix))}, "
                            f"expected {want}")
    return problems


def ecmp_groups(switch: str) -> dict[int, list[int]]:
    """A T0's ECMP groups as installed in the switch: group id -> bucket output ports."""
    out = _run(["ovs-ofctl", "-O", "OpenFlow13", "dump-groups", switch], f"dump-groups {switch}")
    groups = {}
    for line in out.splitlines():
        m = re.search(r"group_id=(\d+)", line)
        if m:
            groups[int(m.group(1))] = [int(p) for p in re.findall(r"output:(\d+)", line)]
    return groups


def ecmp_ports(switch: str) -> list[int]:
    """Uplink ports present in every ECMP group of a T0 (a port it withdrew
    itself is in none; one withdrawn toward one rack only is missing from one)."""
    groups = list(ecmp_groups(switch).values())
    return sorted(set(groups[0]).intersection(*groups[1:])) if groups else []
