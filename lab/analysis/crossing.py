"""Which paths and routes a fault crosses: the fabric element its target names
(topologies/names.py) against a path's plane, T1 and end hosts."""

from __future__ import annotations

from lab.analysis.event_record import RunEvent
from lab.analysis.fault_windows import FaultWindow
from lab.analysis.route_records import EV_LABEL, Route
from topologies.fabric import ev_to_t1
from topologies.names import FabricError, Host, NicPort, Switch, T0T1Link, kind_of


def _host_index(name) -> int | None:
    """An event's host: its id (agents write the number) or its name 'h<H>'."""
    if isinstance(name, int) or (isinstance(name, str) and name.isdecimal()):
        return int(name)
    return Host.parse(name).index if Host.match(name) else None


def faulted_element(target: str) -> T0T1Link | Switch | NicPort | None:
    """The fabric element a fault target names, or None (a host, a plane, the controller)."""
    kind = kind_of(target, (T0T1Link, Switch, NicPort))
    try:
        return kind.parse(target) if kind else None
    except FabricError:  # well formed but unbuildable (planes differ, huge index): names nothing
        return None


def path_crosses(window: FaultWindow, path: RunEvent, *, spines: int | None = None,
                 hosts_per_rack: int | None = None) -> bool:
    """Does the path of a path_state event cross the faulted element?

    Uses, in order: the fault's explicit ``paths`` ((plane, ev) list); else the
    fabric element its target names (topologies/names.py): T1 ``t1p<P>s<S>`` is
    crossed by plane P and the EVs that select T1 S (``ev_to_t1``); T0 ``t0p<P>r<R>`` by
    plane P when the host or the peer is in rack R (a T1 is not crossed
    between two hosts of one rack); NIC port ``h<H>-eth<P>``
    by plane P when H is the host or the peer. Every element named must be
    crossed (a T0-T1 link names both). Without ``spines`` / ``hosts_per_rack``
    only the plane is checked. A target naming no element matches every path.
    """
    plane, ev = int(path.plane), int(path.ev)
    if window.paths is not None:
        return (plane, ev) in window.paths
    ends = {_host_index(path.host), _host_index(path.peer)}
    racks = _racks(ends, hosts_per_rack)
    # Two hosts of one rack meet at their T0: no T1 on their path.
    same_rack = racks is not None and len(racks) == 1 and None not in ends
    t1s = frozenset() if same_rack else None if spines is None else frozenset({ev_to_t1(ev, spines)})
    return _element_crossed(window.target, plane, t1s, ends, racks)


def _racks(ends: set, hosts_per_rack: int | None) -> set | None:
    return {h // hosts_per_rack for h in ends if h is not None} if hosts_per_rack else None


def _element_crossed(target: str, plane: int, t1s: frozenset | None, ends: set, racks: set | None) -> bool:
    """Does a path on ``plane`` through the T1s ``t1s`` (None: unknown, any; empty: none)
    between the hosts ``ends`` (in ``racks``, None: unknown) cross the element ``target`` names?"""
    element = faulted_element(target)
    if isinstance(element, NicPort):
        return plane == element.plane and element.host in ends
    switches = [element.t0, element.t1] if isinstance(element, T0T1Link) else [element] if element else []
    return all(_switch_crossed(switch, plane, t1s, racks) for switch in switches)


def _switch_crossed(switch: Switch, plane: int, t1s: frozenset | None, racks: set | None) -> bool:
    if plane != switch.plane:
        return False
    if switch.tier == "t0":
        return racks is None or switch.index in racks
    return t1s is None or switch.index in t1s


def route_crosses(window: FaultWindow, route: Route, *, spines: int | None = None,
                  hosts_per_rack: int | None = None) -> bool:
    """Does ``route`` cross the faulted element? The rules of ``path_crosses``, with
    the route's own T1 (None: a route within a rack crosses no T1)."""
    t1 = route.t1
    if isinstance(t1, str):   # "ev<N>": its T1 when the fabric is known, else unknown
        t1 = None if spines is None else ev_to_t1(int(EV_LABEL.fullmatch(t1)[1]), spines)
        t1s = None if t1 is None else frozenset({t1})
    else:
        t1s = frozenset() if t1 is None else frozenset({t1})
    if window.paths is not None:   # the fault named its (plane, ev) paths
        return any(p == route.plane and (t1s is None or spines is None or ev_to_t1(ev, spines) in t1s)
                   for p, ev in window.paths)
    ends = {_host_index(route.host), _host_index(route.peer)}
    return _element_crossed(window.target, route.plane, t1s, ends, _racks(ends, hosts_per_rack))
