"""The data planes by name, and the one a FabricSpec names (topologies/dataplane.py)."""

from __future__ import annotations

from topologies.dataplane import DataPlane
from topologies.fabric import FabricSpec
from topologies.openflow.dataplane import OpenFlowDataPlane
from topologies.srv6.dataplane import Srv6DataPlane

DATAPLANE_TYPES: dict[str, type[DataPlane]] = {cls.name: cls for cls in (OpenFlowDataPlane, Srv6DataPlane)}


def dataplane_for(spec: FabricSpec) -> DataPlane:
    """The data plane `spec.dataplane` names, for this fabric."""
    return DATAPLANE_TYPES[spec.dataplane](spec)
