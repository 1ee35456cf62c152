"""The target names a scenario's faults may name, checked against the scenario's own fabric.

What each fault kind takes (_KIND_TARGETS), how each kind of name is written
(_TARGET_FORMS) and whether the indexes in a name exist in the fabric; and the
link names a fault on a switch or a plane stands for.
"""

from __future__ import annotations

import re

from faults.scenario_schema import ALL_T0_T1_LINKS, PLANE_DOWN, clip, short_repr
from topologies.fabric import FabricSpec


def _index(group: str) -> str:
    """A named index without leading zeros, so a name that passes is the fabric's own spelling."""
    return rf"(?P<{group}>0|[1-9]\d*)"


# what a target can be: regex (its named indexes are checked against the fabric) and its written form
_TARGET_FORMS = {
    "T0-T1 link": (f"t0p{_index('plane')}r{_index('rack')}-t1p{_index('plane2')}s{_index('spine')}",
                   "t0p<P>r<R>-t1p<P>s<S>"),
    "NIC link": (f"h{_index('host')}-eth{_index('plane')}", "h<H>-eth<P>"),
    "switch": (f"t0p{_index('plane')}r{_index('rack')}|t1p{_index('plane2')}s{_index('spine')}",
               "t0p<P>r<R> or t1p<P>s<S>"),
    "host": (f"h{_index('host')}", "h<H>"),
    "plane": (f"plane{_index('plane')}", "plane<P>"),
    "controller": ("controller", "controller"),
}

_KIND_TARGETS = {
    "link_flap": ("T0-T1 link", "NIC link"),
    "blackhole": ("T0-T1 link",),
    "loss": ("T0-T1 link",),
    "switch_reboot": ("switch",),
    "incast": ("host",),
    "controller_kill": ("controller",),
    PLANE_DOWN: ("plane",),
}


def t0_t1_link_name(spec: FabricSpec, plane: int, rack: int, spine: int) -> str:
    return f"{spec.t0_name(plane, rack)}-{spec.t1_name(plane, spine)}"


def t0_t1_links(spec: FabricSpec, plane: int | None = None) -> list[str]:
    """Every T0-T1 link name of the fabric, or of one plane."""
    planes = range(spec.planes) if plane is None else [plane]
    return [t0_t1_link_name(spec, p, r, s) for p in planes for r in range(spec.racks) for s in range(spec.spines)]


def links_of_switch(spec: FabricSpec, switch: str) -> list[str]:
    """The link names a switch reboot takes down: its T0-T1 links and, for a T0, its NIC links."""
    tier, plane, index = spec.parse_switch(switch)
    if tier == "t1":
        return [t0_t1_link_name(spec, plane, r, index) for r in range(spec.racks)]
    hosts = range(index * spec.hosts_per_rack, (index + 1) * spec.hosts_per_rack)  # those of rack `index`
    return [t0_t1_link_name(spec, plane, index, s) for s in range(spec.spines)] + [
        spec.host_intf(h, plane) for h in hosts
    ]


def _below(text: str, count: int) -> bool:
    """Whether the index written as `text` (digits, no leading zeros) is below `count`;
    compared by length first so a name with thousands of digits is no int() to build."""
    return len(text) < len(str(count)) or (len(text) == len(str(count)) and int(text) < count)


def _out_of_range(spec: FabricSpec, groups: dict) -> str | None:
    """Why indexes parsed from a name do not exist in this fabric, or None if they do."""
    bounds = {
        "plane": (spec.planes, "planes", ""),
        "plane2": (spec.planes, "planes", ""),
        "rack": (spec.racks, "racks", "r"),
        "spine": (spec.spines, "T1s per plane", "s"),
        "host": (spec.hosts, "hosts", "h"),
    }
    for group, text in groups.items():
        if text is None:
            continue
        count, unit, letter = bounds[group]
        if not _below(text, count):
            return f"the fabric has {count} {unit} ({letter}0-{letter}{count - 1})"
    if groups.get("plane") and groups.get("plane2") and groups["plane"] != groups["plane2"]:
        return "a T0 and a T1 are linked only within one plane"
    return None


def _target_problem(spec: FabricSpec, kind: str, name: str) -> str | None:
    """None if `name` is a target `kind` accepts in this fabric, else why not."""
    accepted = _KIND_TARGETS[kind]
    for form, (pattern, _) in _TARGET_FORMS.items():
        match = re.fullmatch(pattern, name)
        if match is None:
            continue
        if form not in accepted:
            return f"{kind} takes a {' or a '.join(accepted)}, not a {form} ({short_repr(name)})"
        reason = _out_of_range(spec, match.groupdict())
        return f"no {form} {clip(name, 40)}: {reason}" if reason else None
    forms = " or ".join(f"{form} {_TARGET_FORMS[form][1]}" for form in accepted)
    return f"{kind} takes a {forms}, got {short_repr(name)}"


def _target_group_plane(spec: FabricSpec, name: str) -> tuple[bool, int | None]:
    """(is a group, its plane or None for all planes) of a random-process target name."""
    if name == ALL_T0_T1_LINKS:
        return True, None
    match = re.fullmatch(re.escape(ALL_T0_T1_LINKS) + f":plane{_index('plane')}", name)
    if match is None:
        return False, None
    if not _below(match.group("plane"), spec.planes):
        raise ValueError(f"no plane {clip(match.group('plane'), 20)}: "
                         f"the fabric has {spec.planes} planes (0-{spec.planes - 1})")
    return True, int(match.group("plane"))
