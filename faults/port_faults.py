"""Faults the switch port program makes: `blackhole` (a gray failure: the link up, nothing
through), `switch_blackhole` (a switch that forwards nothing while its links stay up), `loss`
(random drop on a T0-T1 link) and `nic_loss` (random drop at a host's NIC receive)."""

from __future__ import annotations

from pydantic import Field

from faults.injector import Injector
from faults.kind import ALL_HOSTS, FaultKind, StrictParams, register
from faults.links import End, FaultError, fabric_element, operstates, resolve_link, switch_ends
from faults.switch_reboot import links_of_switch
from topologies.port_program import port_program
from topologies.fabric import FabricSpec
from topologies.names import Host, T0T1Link


def port_call(end: End, call: str, *args):
    """port_program.<call>(end's port, *args): here, or through its server's agent."""
    if end.remote is not None:
        return end.remote.port_program(call, end.ifname, *args)
    return getattr(port_program, call)(end.ifname, *args)


def port_faults_left(ends: list[End]) -> dict[str, dict]:
    """The switch ports among `ends` with a drop probability or a black hole set."""
    faulty = {}
    for end in ends:
        if end.switch is not None:
            cfg = port_call(end, "port_cfg")
            blackhole = bool(cfg.flags & port_program.CFG_BLACKHOLE)
            if cfg.drop_prob or blackhole:
                faulty[end.ifname] = {"drop_prob": cfg.drop_prob, "blackhole": blackhole}
    return faulty


def _t0t1_ends(session, target: str, kind: str) -> list[End]:
    fabric_element(session.spec, target, T0T1Link, what=kind)
    return list(resolve_link(session.fabric, target))


class Blackhole(Injector):
    """Both switch ports of a T0-T1 link (``switch_ports``) drop everything; the link stays up."""

    kind = "blackhole"

    def switch_ports(self) -> list[End]:
        return _t0t1_ends(self.session, self.target, self.kind)

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        self.ends = self.switch_ports()

    def _set(self, on: bool) -> None:
        for end in self.ends:
            port_call(end, "set_blackhole", on)
        wrong = [e.ifname for e in self.ends
                 if bool(port_call(e, "port_cfg").flags & port_program.CFG_BLACKHOLE) != on]
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


class SwitchBlackhole(Blackhole):
    """Every port of a switch drops everything it would send; its links stay up, so nothing
    that watches link state (the baseline's routing) sees a fault: the MRC paper's T1 that
    stops forwarding while its links stay up, against one that really reboots."""

    kind = "switch_blackhole"

    def switch_ports(self) -> list[End]:
        return [own for own, _peer in switch_ends(self.session.fabric, self.target)]


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
            port_call(end, "set_drop_probability", p)
        want = port_program._prob_u32(p)
        wrong = [e.ifname for e in self.ends if port_call(e, "port_cfg").drop_prob != want]
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


class LossParams(StrictParams):
    p: float = Field(gt=0, le=1)


def _nic_receives(spec: FabricSpec, target: str) -> tuple[str, ...]:
    """The drop rate of a host's T0 ports, not the host itself: an incast there, or a flap
    of its NIC link, is no overlap."""
    hosts = [spec.host_name(h) for h in range(spec.hosts)] if target == ALL_HOSTS else [target]
    return tuple(f"NIC receive of {host}" for host in hosts)


BLACKHOLE = register(FaultKind(
    "blackhole", "both switch ports of a T0-T1 link drop everything while the link stays up",
    targets=("T0-T1 link",), injector=Blackhole, cuts_routes=True))
SWITCH_BLACKHOLE = register(FaultKind(
    "switch_blackhole", "every port of a switch drops everything while its links stay up (a silent switch)",
    targets=("switch",), injector=SwitchBlackhole, cuts_routes=True,
    resources=lambda spec, switch: (switch, *links_of_switch(spec, switch))))
LOSS = register(FaultKind(
    "loss", "random drop with probability params.p on both switch ports of a T0-T1 link",
    targets=("T0-T1 link",), injector=Loss, params=LossParams))
NIC_LOSS = register(FaultKind(
    "nic_loss", "random drop with probability params.p at every NIC receive of a host, or of every host",
    targets=("host", ALL_HOSTS), injector=NicLoss, params=LossParams, resources=_nic_receives))
