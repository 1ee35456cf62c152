"""Links down: `link_flap` of one link, and `plane_down`, which the loader expands into a
link_flap of every T0-T1 link of the plane (one injector, the flap's)."""

from __future__ import annotations

from faults.injector import Injector
from faults.kind import FaultKind, register
from faults.links import dataplane_step, resolve_link, set_admin, wait_operstate
from topologies.fabric import FabricSpec
from topologies.names import NicPort, Plane, T0T1Link


class LinkFlap(Injector):
    """'t0p<P>r<R>-t1p<P>s<S>' or 'h<H>-eth<P>' down at both ends for the fault, up on repair.

    A T0-T1 link is set administratively down at both ends. A NIC link only
    at its switch end: the host's NIC sees carrier loss, as with a pulled
    cable (an admin-down host interface would also flush its static ARP
    entries, which the fabric cannot relearn: it carries no ARP)."""

    kind = "link_flap"

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        self.ends = list(resolve_link(session.fabric, target))
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


def link_switches(spec: FabricSpec, target: str) -> set[str]:
    """The switches a link's flap takes a port from: a NIC link's T0, a T0-T1 link's two ends."""
    link = spec.element(target, T0T1Link, NicPort)
    if isinstance(link, NicPort):
        return {spec.t0_name(link.plane, spec.rack_of(link.host))}
    return {str(link.t0), str(link.t1)}


def plane_links(spec: FabricSpec, target: str) -> list[tuple[str, str, dict]]:
    plane = spec.element(target, Plane).index
    return [("link_flap", str(link), {"plane_down": plane}) for link in spec.t0_t1_links(plane)]


def plane_switches(spec: FabricSpec, target: str) -> set[str]:
    plane = spec.element(target, Plane).index
    return {str(s) for s in spec.switches if s.plane == plane}


LINK_FLAP = register(FaultKind(
    "link_flap", "a T0-T1 link or a host's NIC link down for the duration",
    targets=("T0-T1 link", "NIC link"), injector=LinkFlap,
    takes_links_down=True, cuts_routes=True, switches_cut_off=link_switches))
PLANE_DOWN = register(FaultKind(
    "plane_down", "every T0-T1 link of a plane down (a link_flap of each)",
    targets=("plane",), expand=plane_links, random_process=False,
    takes_links_down=True, cuts_routes=True, switches_cut_off=plane_switches))
