"""Making an injector for a fault event, and checking that the fabric is healthy again.

    inj = make_injector(session, FaultEvent(at=2, kind="link_flap", target="t0p0r0-t1p0s1"))
    inj.start()    # returns once the fault is verified in effect
    inj.repair()   # idempotent; returns once the repair is verified

Every start() and repair() checks its effect (link state seen by the kernel
at both ends, switch tables, port-program config, processes, traffic) and
raises FaultError when it did not take effect. Each kind's injector is in
its own module (faults/catalog.py lists them). See docs/faults.md.
"""

from __future__ import annotations

from faults.catalog import FAULT_KINDS
from faults.injector import Injector
from faults.links import FaultError, dataplane_step, resolve_link, wait_operstate
from faults.model import FaultEvent
from faults.port_faults import port_faults_left
from topologies.routing import connected_since

__all__ = ["FaultError", "make_injector", "fabric_healthy"]


def make_injector(session, event: FaultEvent) -> Injector:
    kind = FAULT_KINDS.get(event.kind)
    if kind is None:
        raise FaultError(f"unknown fault kind {event.kind!r}; known: {', '.join(FAULT_KINDS)}")
    if kind.injector is None:
        raise FaultError(f"fault kind {event.kind} has no injector: the scenario loader expands it into "
                         "the faults it stands for (its FaultKind.expand); inject those")
    refused = session.dataplane.refusal([event.kind])
    if refused:
        raise FaultError(refused)
    return kind.injector(session, event.target, event.params)


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
    faulty = port_faults_left(ends)
    if faulty:
        raise FaultError(f"healthy fabric: port faults left on {faulty}")
    with dataplane_step():
        session.dataplane.tables_complete(fabric, timeout)
