"""What a fault kind is, in one definition, and the registry of them.

A kind is defined, and registered, in its own module (faults/catalog.py lists the
modules): the targets it takes, its params' model, the fabric elements it holds,
its flags, its injector, its audit hook and the line that documents it. The
scenario loader (schema, targets, expansion), the injector factory, the audit and
the analysis read this record; none of them names a kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from pydantic import BaseModel, ConfigDict

from topologies.fabric import FabricSpec
from topologies.names import Host, NicPort, Plane, Switch, T0T1Link

ALL_HOSTS = "hosts"        # a target: every host (agent_pause, nic_loss)
DATAPATH = "datapath"      # a target: ovs-vswitchd (datapath_pause)
CONTROLLER = "controller"  # a target: the controller (on srv6 the routing process)

# What a target can be, by the name the loader's messages give it: its kind of name
# (topologies/names.py), or None for a target written as the word itself.
TARGET_FORMS = {"T0-T1 link": T0T1Link, "NIC link": NicPort, "switch": Switch, "host": Host,
                "plane": Plane, CONTROLLER: None, ALL_HOSTS: None, DATAPATH: None}


class StrictParams(BaseModel):
    """A kind's params model: strict types, no unknown key, finite numbers (as the scenario schema)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class ParamsProblem(ValueError):
    """What a kind's own params check found: `field` under params, or None for the entry as a whole."""

    def __init__(self, problem: str, field: str | None = None):
        super().__init__(problem)
        self.field = field


def _the_target(spec: FabricSpec, target: str) -> tuple[str, ...]:
    return (target,)


def _no_switch(spec: FabricSpec, target: str) -> set[str]:
    return set()


@dataclass(frozen=True)
class FaultKind:
    """One fault kind. `injector` is the class that runs it on a live fabric, or None for a kind
    the loader expands into others (`expand`)."""

    name: str
    doc: str                           # one sentence; docs/faults.md's Injectors table has a row for it
    targets: tuple[str, ...]           # keys of TARGET_FORMS
    injector: type | None = None       # a faults.injector.Injector subclass
    params: type[StrictParams] | None = None
    # beyond the model: (spec, params) -> raise ParamsProblem (e.g. more incast senders than hosts)
    check_params: Callable[[FabricSpec, dict], None] | None = None
    # the fabric elements the fault holds: two faults sharing one must not overlap in time
    resources: Callable[[FabricSpec, str], tuple[str, ...]] = _the_target
    # an expanded kind: (spec, target) -> the (kind, target, params) it stands for
    expand: Callable[[FabricSpec, str], list[tuple[str, str, dict]]] | None = None
    takes_links_down: bool = False     # links go down (the audit's conservation marks)
    cuts_routes: bool = False          # a route is cut outright (down links, a black hole)
    pauses_a_process: bool = False     # the machine pauses a process: not a fault of the fabric
    seeded: bool = False               # each event's params get a seed of their own random stream
    random_process: bool = True        # may be drawn by a random process (rate_per_min)
    # the audit's hook: the switches that lose a link while the fault lasts
    switches_cut_off: Callable[[FabricSpec, str], set[str]] = field(default=_no_switch)

    def __post_init__(self) -> None:
        unknown = [t for t in self.targets if t not in TARGET_FORMS]
        if unknown or not self.targets:
            raise ValueError(f"fault kind {self.name}: targets {unknown or '()'} are not of {list(TARGET_FORMS)}")
        if (self.injector is None) == (self.expand is None):
            raise ValueError(f"fault kind {self.name}: give an injector or an expansion, exactly one")


# The registry: kind name -> FaultKind, in registration order (faults/catalog.py fills it).
REGISTRY: dict[str, FaultKind] = {}


def register(kind: FaultKind) -> FaultKind:
    if kind.name in REGISTRY and REGISTRY[kind.name] != kind:
        raise ValueError(f"fault kind {kind.name} is registered twice")
    REGISTRY[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Forget a kind (a test's toy kind)."""
    REGISTRY.pop(name, None)
