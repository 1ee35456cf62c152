"""Every fault kind: importing this module registers them all (faults/kind.py).

A new kind is one module defining its injector and its FaultKind, and one line here.
"""

from __future__ import annotations

from typing import Callable

from faults import link_down, switch_reboot, port_faults, controller_kill, incast_fault, pause, deny  # noqa: I001 (registration order)
from faults.kind import REGISTRY, FaultKind

# the modules that define the kinds (importing them registers them)
KIND_MODULES = (link_down, switch_reboot, port_faults, controller_kill, incast_fault, pause, deny)

FAULT_KINDS = REGISTRY   # name -> FaultKind, every kind registered


def fault_kind(name: str) -> FaultKind | None:
    return FAULT_KINDS.get(name)


def kinds_where(holds: Callable[[FaultKind], bool]) -> frozenset[str]:
    """The names of the kinds for which `holds(kind)`, e.g. `lambda kind: kind.cuts_routes`."""
    return frozenset(name for name, kind in FAULT_KINDS.items() if holds(kind))
