"""The target names a scenario's faults may name, checked against the scenario's own fabric.

What each fault kind takes (_KIND_TARGETS), how each kind of name is written
(_TARGET_FORMS: the element kinds of topologies/names.py) and whether a name
exists in the fabric (FabricSpec.why_absent); and the link names a fault on
a switch stands for.
"""

from __future__ import annotations

from faults.pause import ALL_HOSTS, DATAPATH
from lab.scenario.schema import ALL_T0_T1_LINKS, PLANE_DOWN, clip, short_repr
from topologies.fabric import FabricSpec
from topologies.names import Host, NicPort, Plane, Switch, T0T1Link

# what a target can be, by the name this module's messages give it: its kind of name
# (topologies/names.py), or None for a target written as the word itself
_TARGET_FORMS = {"T0-T1 link": T0T1Link, "NIC link": NicPort, "switch": Switch, "host": Host,
                 "plane": Plane, "controller": None, ALL_HOSTS: None, DATAPATH: None}

_KIND_TARGETS = {
    "link_flap": ("T0-T1 link", "NIC link"),
    "blackhole": ("T0-T1 link",),
    "loss": ("T0-T1 link",),
    "nic_loss": ("host", ALL_HOSTS),
    "switch_reboot": ("switch",),
    "incast": ("host",),
    "controller_kill": ("controller",),
    "agent_pause": ("host", ALL_HOSTS),
    "datapath_pause": (DATAPATH,),
    "deny": ("T0-T1 link", "NIC link", "switch"),
    PLANE_DOWN: ("plane",),
}


def links_of_switch(spec: FabricSpec, switch: str) -> list[str]:
    """The link names a switch reboot takes down: its T0-T1 links and, for a T0, its NIC links."""
    return [str(link) for link in spec.links_of(spec.element(switch, Switch))]


def _form_of(name: str) -> str | None:
    """The target form `name` is written in, or None."""
    return next((form for form, kind in _TARGET_FORMS.items()
                 if (name == form if kind is None else kind.match(name) is not None)), None)


def _written(form: str) -> str:
    kind = _TARGET_FORMS[form]
    return form if kind is None else kind.FORM


def _target_problem(spec: FabricSpec, kind: str, name: str) -> str | None:
    """None if `name` is a target `kind` accepts in this fabric, else why not."""
    accepted = _KIND_TARGETS[kind]
    form = _form_of(name)
    if form is None:
        forms = " or ".join(f"{form} {_written(form)}" for form in accepted)
        return f"{kind} takes a {forms}, got {short_repr(name)}"
    if form not in accepted:
        return f"{kind} takes a {' or a '.join(accepted)}, not a {form} ({short_repr(name)})"
    reason = spec.why_absent(_TARGET_FORMS[form], name) if _TARGET_FORMS[form] else None
    return f"no {form} {clip(name, 40)}: {reason}" if reason else None


def _target_group_plane(spec: FabricSpec, name: str) -> tuple[bool, int | None]:
    """(is a group, its plane or None for all planes) of a random-process target name."""
    if name == ALL_T0_T1_LINKS:
        return True, None
    plane = name.removeprefix(ALL_T0_T1_LINKS + ":")
    if plane == name or Plane.match(plane) is None:
        return False, None
    reason = spec.why_absent(Plane, plane)
    if reason:
        raise ValueError(f"no plane {clip(plane.removeprefix('plane'), 20)}: {reason}")
    return True, Plane.parse(plane).index
