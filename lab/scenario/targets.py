"""The target names a scenario's faults may name, checked against the scenario's own fabric.

What each fault kind takes (FaultKind.targets), how each kind of name is written
(TARGET_FORMS: the element kinds of topologies/names.py) and whether a name
exists in the fabric (FabricSpec.why_absent).
"""

from __future__ import annotations

from faults.catalog import FAULT_KINDS
from faults.kind import TARGET_FORMS
from lab.scenario.schema import ALL_T0_T1_LINKS, clip, short_repr
from topologies.fabric import FabricSpec
from topologies.names import Plane


def takes_t0t1_links(kind: str) -> bool:
    return "T0-T1 link" in FAULT_KINDS[kind].targets


def _form_of(name: str) -> str | None:
    """The target form `name` is written in, or None."""
    return next((form for form, kind in TARGET_FORMS.items()
                 if (name == form if kind is None else kind.match(name) is not None)), None)


def _written(form: str) -> str:
    kind = TARGET_FORMS[form]
    return form if kind is None else kind.FORM


def _target_problem(spec: FabricSpec, kind: str, name: str) -> str | None:
    """None if `name` is a target `kind` accepts in this fabric, else why not."""
    accepted = FAULT_KINDS[kind].targets
    form = _form_of(name)
    if form is None:
        forms = " or ".join(f"{form} {_written(form)}" for form in accepted)
        return f"{kind} takes a {forms}, got {short_repr(name)}"
    if form not in accepted:
        return f"{kind} takes a {' or a '.join(accepted)}, not a {form} ({short_repr(name)})"
    reason = spec.why_absent(TARGET_FORMS[form], name) if TARGET_FORMS[form] else None
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
