"""The data planes by name, and the one a FabricSpec names (topologies/dataplane.py): the one
module outside topologies/srv6/ and topologies/openflow/ that imports them."""

from __future__ import annotations

from topologies.dataplane import DataPlane
from topologies.fabric import FabricSpec
from topologies.openflow.dataplane import OpenFlowDataPlane
from topologies.srv6.dataplane import Srv6DataPlane

DATAPLANE_TYPES: dict[str, type[DataPlane]] = {cls.name: cls for cls in (OpenFlowDataPlane, Srv6DataPlane)}
# the tc programs the data planes attach besides the switch port program, by function name
# (lab/plumbing/cleanup.py removes what a killed run left)
DATAPLANE_TC_PROGRAMS: tuple[str, ...] = tuple(name for cls in DATAPLANE_TYPES.values() for name in cls.tc_programs)


def dataplane_for(spec: FabricSpec) -> DataPlane:
    """The data plane `spec.dataplane` names, for this fabric."""
    return DATAPLANE_TYPES[spec.dataplane](spec)
