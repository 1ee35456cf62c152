"""`switch_reboot`: a switch's ports go down and its tables are wiped; on return, the reverse."""

from __future__ import annotations

from faults.injector import Injector
from faults.kind import FaultKind, register
from faults.links import dataplane_step, set_admin, switch_ends, wait_operstate
from topologies.fabric import FabricSpec
from topologies.names import Switch


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


def links_of_switch(spec: FabricSpec, switch: str) -> list[str]:
    """The link names a switch reboot takes down: its T0-T1 links and, for a T0, its NIC links."""
    return [str(link) for link in spec.links_of(spec.element(switch, Switch))]


def _holds(spec: FabricSpec, switch: str) -> tuple[str, ...]:
    return (switch, *links_of_switch(spec, switch))


def _cut_off(spec: FabricSpec, target: str) -> set[str]:
    """The switch and every neighbour in its plane."""
    switch = spec.element(target, Switch)
    return {target} | {str(s) for s in spec.switches if s.plane == switch.plane and s.tier != switch.tier}


SWITCH_REBOOT = register(FaultKind(
    "switch_reboot", "a T0 or T1 switch reboots: its ports down, its tables wiped, then restored",
    targets=("switch",), injector=SwitchReboot, resources=_holds,
    takes_links_down=True, cuts_routes=True, switches_cut_off=_cut_off))
