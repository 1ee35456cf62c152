"""The `deny` fault: an operator denies a fabric element for a while.

Nothing in the fabric changes: the element goes on the run's denylist
(mrc_host/denylist.py) with source "scenario", exactly as the Clustermapper
would put it there, and MRC agents stop using every route that crosses it;
repair takes the entry off again. Targets and what they deny:

    t0p<P>r<R>-t1p<P>s<S>   t0t1_link (P, R, S)
    t1p<P>s<S>              t1 (P, S)
    t0p<P>r<R>              t0 (P, R)
    h<H>-eth<P>             nic_port (P, H)

The denylist lives in the session's state directory (denylist_path), the
file the job runner hands to the agents and the mappers write.
"""

from __future__ import annotations

import time

from faults.injector import Injector
from faults.kind import FaultKind, register
from faults.links import FaultError, fabric_element
from mrc_host.denylist import SCENARIO_SOURCE, DeniedElement, DenylistFile, denylist_path, edit_denylist
from topologies.fabric import FabricSpec
from topologies.names import NicPort, Switch, T0T1Link


def denied_element(spec, target: str, since: float) -> DeniedElement:
    """The denylist entry a `deny` of `target` writes."""
    element = fabric_element(spec, target, T0T1Link, Switch, NicPort, what="deny")
    if isinstance(element, T0T1Link):
        return DeniedElement("t0t1_link", element.plane, rack=element.rack, t1=element.spine, since=since)
    if isinstance(element, NicPort):
        return DeniedElement("nic_port", element.plane, host=element.host, since=since)
    if element.tier == "t0":
        return DeniedElement("t0", element.plane, rack=element.index, since=since)
    return DeniedElement("t1", element.plane, t1=element.index, since=since)


class Deny(Injector):
    """The element on the denylist for the fault's duration."""

    kind = "deny"

    def __init__(self, session, target: str, params: dict | None = None):
        super().__init__(session, target, params)
        self.path = denylist_path(session.workdir)
        self.key = denied_element(session.spec, target, 0.0).key  # a bad target fails here, before the job

    def _ours(self, element: DeniedElement) -> bool:
        return element.source == SCENARIO_SOURCE and element.key == self.key

    def _listed(self) -> bool:
        reader = DenylistFile(self.path)
        reader.poll()
        return any(self._ours(e) for e in reader.elements)

    def start(self) -> None:
        self.active = True
        entry = denied_element(self.session.spec, self.target, time.monotonic())
        edit_denylist(self.path, lambda now: [e for e in now if not self._ours(e)] + [entry])
        if not self._listed():
            raise FaultError(f"{self}: not on the denylist {self.path} after writing it")

    def repair(self) -> None:
        edit_denylist(self.path, lambda now: [e for e in now if not self._ours(e)])
        if self._listed():
            raise FaultError(f"{self}: still on the denylist {self.path} after removing it")
        self.active = False


def _entry(spec: FabricSpec, target: str) -> tuple[str, ...]:
    """A denylist entry, not the element: a deny during a link flap is no overlap."""
    return (f"denylist entry of {target}",)


DENY = register(FaultKind(
    "deny", "the element on the run's denylist (as the Clustermapper would put it) for the duration",
    targets=("T0-T1 link", "NIC link", "switch"), injector=Deny, resources=_entry))
