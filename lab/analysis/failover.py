"""Failover and recovery of each fault as a user sees them: from the senders' route
records, or, for the multi-rail baseline, from routing's withdrawals (docs/metrics.md)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Mapping, Sequence

import numpy as np

from faults.deny import denied_element
from faults.links import FaultError
from lab.analysis import fault_notes as notes
from lab.analysis.connection_counters import connections
from lab.analysis.counters import median_srtt
from lab.analysis.crossing import faulted_element, route_crosses
from lab.analysis.event_record import RunEvent
from lab.analysis.fault_windows import FaultWindow
from lab.analysis.route_records import Route, route_records
from lab.analysis.summary_record import FaultFigures
from mrc_host.denylist import DeniedElement, DenylistError
from mrc_host.routes import ROUTE_SILENCE_S, route_of
from topologies.fabric import FabricSpec
from topologies.names import Switch, T0T1Link


def _quiet_since(silences: tuple, first: float | None, last: float | None, t: float,
                 run_end: float) -> float | None:
    """The last packet before the silence around instant ``t`` (-inf: none sent
    before ``t``); None if the route was busy at ``t``."""
    if first is None or first > t:
        return -math.inf
    for before, after in silences:
        if before <= t < after:
            return before
    if last is not None and last <= t and run_end - last > ROUTE_SILENCE_S:  # silent from ``last`` to the end
        return last
    return None


def _next_after(first: float | None, last: float | None, silences: tuple, t: float,
                busy: float) -> float | None:
    """The first event of a record (its first and last times and its silences) after
    instant ``t``; ``busy`` when no silence covers ``t``; None if none came after it."""
    if last is None or last <= t:
        return None
    if first > t:
        return first
    for before, after in silences:
        if before <= t < after:
            return after
    return busy


def _first_ack_after(route: Route, t: float) -> float | None:
    """The first ack on ``route`` after instant ``t``; None if none came. Acks that
    never paused across t: the next came within the silence threshold (its bound)."""
    return _next_after(route.first_acked, route.last_acked, route.ack_silences, t, t + ROUTE_SILENCE_S)


def _first_send_after(route: Route, t: float) -> float | None:
    """The first packet sent on ``route`` after instant ``t`` (``t`` itself when
    it was busy then); None if none was."""
    return _next_after(route.first_sent, route.last_sent, route.send_silences, t, t)


def _idle_within(route: Route, a: float, b: float) -> float:
    """How long, within [a, b], the route's connection had nothing to send."""
    return sum(max(0.0, min(b, end) - max(a, start)) for start, end in route.idle_spans)


def _first_drop_sent(route: Route, start: float, last: float) -> float | None:
    """When the first packet dropped on ``route`` between ``start`` and ``last`` was
    sent (a span that began before ``start`` counts from ``start``); None if none was."""
    firsts = [max(a, start) for a, b, _n in route.drop_spans if b >= start and a <= last]
    return min(firsts, default=None)


def _drops_between(route: Route, a: float, b: float) -> int | None:
    """Packets dropped on ``route`` in its drop spans that meet [a, b]; None when one of
    them has no count (a record from before spans held one)."""
    counts = [n for first, last, n in route.drop_spans if last >= a and first <= b]
    return None if None in counts else sum(counts)


def _sent_between(route: Route, a: float, b: float) -> bool:
    """Did ``route`` carry a packet in the open interval (a, b)?"""
    if route.first_sent is None or route.last_sent <= a or route.first_sent >= b:
        return False
    if route.first_sent > a or route.last_sent < b:
        return True
    return not any(before <= a and after >= b for before, after in route.send_silences)


def in_rtts(seconds: float | None, rtt: float | None) -> float | None:
    """``seconds`` in round-trip times; None when either is undefined."""
    return None if seconds is None or not rtt else seconds / rtt


def _fault_record(window: FaultWindow, basis: str | None) -> FaultFigures:
    return FaultFigures(fault=window.fault, target=window.target, start=window.start, end=window.end, basis=basis)


def _stopped_routes(routes: Sequence[Route], window: FaultWindow, horizon: float, run_end: float,
                    crosses: Callable[[FaultWindow, Route], bool]) -> tuple[list, int]:
    """([(route, its last packet before the silence that outlasts the fault)], routes that kept sending)."""
    by_connection: dict[tuple, list[Route]] = {}
    for route in routes:
        by_connection.setdefault((route.host, route.peer), []).append(route)
    stopped, kept = [], 0
    for route in routes:
        if not crosses(window, route):
            continue
        quiet = _quiet_since(route.send_silences, route.first_sent, route.last_sent, horizon, run_end)
        if quiet is None:
            kept += 1
        # Its connection must have used another route meanwhile: a silence of the
        # whole connection is the job pausing (between iterations), not a failover.
        # Its last packet may precede the fault by less than a gap between two of its
        # packets (the element failed before the next was due, which a mapper's denial
        # or a NIC's port event then kept off it): out of use from the fault's start.
        elif quiet >= window.start - ROUTE_SILENCE_S and any(
                _sent_between(other, quiet + ROUTE_SILENCE_S, horizon)
                for other in by_connection[(route.host, route.peer)] if other is not route):
            stopped.append((route, max(quiet, window.start)))
    return stopped, kept


def _struck(routes: Sequence[Route], window: FaultWindow, horizon: float,
            crosses: Callable[[FaultWindow, Route], bool]) -> dict[tuple, list[Route]]:
    """{(host, peer): its routes through the faulted element that carried data from just
    before the fault (ROUTE_SILENCE_S: a packet then may still sit in the element's queue)}."""
    struck: dict[tuple, list[Route]] = {}
    for route in routes:
        if crosses(window, route) and _sent_between(route, window.start - ROUTE_SILENCE_S, horizon):
            struck.setdefault((route.host, route.peer), []).append(route)
    return struck


def _packets_lost(routes: Sequence[Route], window: FaultWindow, horizon: float,
                  crosses: Callable[[FaultWindow, Route], bool]) -> list[int] | None:
    """The DATA packets the fault cost each connection it struck (``_struck``), in the order of
    (host, peer): dropped on its routes through the element, sent from just before the fault
    to the repair. None when a record has no drop counts."""
    since = window.start - ROUTE_SILENCE_S
    costs = []
    for _conn, struck in sorted(_struck(routes, window, horizon, crosses).items()):
        counts = [_drops_between(route, since, horizon) for route in struck]
        if None in counts:
            return None
        costs.append(sum(counts))
    return costs


LEFT_USE = ("SUSPECT", "ASSUMED_BAD", "DENIED")


def detection_delays(routes: Sequence[Route], events: Sequence[RunEvent], window: FaultWindow, spines: int | None,
                     crosses: Callable[[FaultWindow, Route], bool]) -> list[float]:
    """For each connection the fault cost a packet: from the first packet it lost there (sent
    at or after the fault) to the first time one of its routes through the element left use
    (SUSPECT, retired or denied). With the gap between two packets on a route, this says how
    many packets the fault could take: about 1 + this / the gap."""
    sending = [r for r in routes if r.last_sent is not None]
    if not sending:
        return []
    horizon = min(window.stop, max(r.last_sent for r in sending))
    left: dict[tuple, list[tuple]] = {}
    for e in events:
        if e.kind == "path_state" and e.new in LEFT_USE:
            left.setdefault((str(e.host), str(e.peer)), []).append(e)
    delays = []
    for conn, struck in _struck(sending, window, horizon, crosses).items():
        firsts = [f for route in struck if (f := _first_drop_sent(route, window.start, horizon)) is not None]
        if not firsts:
            continue
        first = min(firsts)
        same_rack = any(route.t1 is None for route in struck)
        keys = {(route.plane, route.t1) for route in struck}
        marks = [e.t for e in left.get(conn, ()) if e.t >= first
                 and route_of(e.ev, e.plane, spines, same_rack) in keys]
        if marks:
            delays.append(min(marks) - first)
    return delays


def mapper_repair(events: Sequence[RunEvent], window: FaultWindow, transport: str,
                  fabric: FabricSpec | None) -> float | None:
    """Repair -> the Clustermapper lifting its denial of the faulted element (the agents can use
    it again after their next look at the denylist); None when it denied nothing or never lifted it."""
    if window.end is None or fabric is None:
        return None
    try:
        # the entry a denial of the fault's target would be (faults/deny.py)
        wanted = denied_element(fabric, window.target, 0.0).key
    except FaultError:
        return None   # a target the mapper cannot deny (the datapath, every host)
    lifts = [e.t for e in events if e.kind == "mapper_undeny" and e.transport == transport
             and e.t >= window.end and _denied_key(e.element) == wanted]
    return min(lifts) - window.end if lifts else None


def _denied_key(element) -> tuple | None:
    """A mapper event's element as its denylist key; None when it names none."""
    try:
        return DeniedElement.from_dict(element).key
    except DenylistError:
        return None


def route_failover_recovery(routes: Sequence[Route], window: FaultWindow, rtt: float | None = None,
                            crosses: Callable[[FaultWindow, Route], bool] = route_crosses,
                            others: Sequence[FaultWindow] = ()) -> FaultFigures:
    """Failover and recovery of one fault from the senders' route records (docs/metrics.md).

    failover_s: fault start -> the last DATA packet sent on a crossing route that
        then stayed silent for the rest of the fault (``routes_failed`` of them;
        ``routes_kept_sending`` crossing routes went on carrying data).
    failover_busy_s: the same, less the time each route's connection had nothing
        to send between the fault and that last packet (the job between two
        iterations: no packet went out to show the route dead then).
    failover_after_loss_s: the first packet dropped on a failed route (sent at
        or after the fault) -> its last packet, less the time its connection had
        nothing to send in between, the latest over the routes that dropped one;
        None if none did.
    recovery_s: repair -> the first ack on each failed route after it, the
        latest; None when the fault never ended or ``routes_unrecovered`` > 0.
        A failed route that another fault of ``others`` still takes down at
        this repair is left out (``routes_still_down``): its recovery is that
        fault's.
    recovery_busy_s: the same, less the time each route's connection had
        nothing to send between the repair and the route's first packet after
        it (the job between two iterations: no route could carry data then).
    rtt: the run's median smoothed RTT, for the ``*_rtts`` figures.
    """
    out = _fault_record(window, "routes")
    sending = [r for r in routes if r.last_sent is not None]
    run_end = max((r.last_sent for r in sending), default=None)
    if run_end is None or window.start >= run_end:
        out.note = notes.NO_DATA
        return out
    horizon = min(window.stop, run_end)
    out.packets_lost = _packets_lost(sending, window, horizon, crosses)
    stopped, out.routes_kept_sending = _stopped_routes(sending, window, horizon, run_end, crosses)
    out.routes_failed = len(stopped)
    if not stopped:
        out.note = notes.KEPT_SENDING if out.routes_kept_sending else notes.NOT_CROSSED
        return out
    out.failover_s = max(quiet for _route, quiet in stopped) - window.start
    out.failover_busy_s = max(quiet - window.start - _idle_within(route, window.start, quiet)
                                 for route, quiet in stopped)
    after_loss = [quiet - first - _idle_within(route, first, quiet) for route, quiet in stopped
                  if (first := _first_drop_sent(route, window.start, quiet)) is not None]
    out.failover_after_loss_s = max(after_loss, default=None)
    if window.end is not None and window.end < run_end:
        _route_recovery(out, [route for route, _quiet in stopped], window, crosses, others)
    elif window.end is not None:
        out.note = notes.AFTER_THE_END
    out.failover_rtts, out.recovery_rtts = in_rtts(out.failover_s, rtt), in_rtts(out.recovery_s, rtt)
    out.failover_busy_rtts = in_rtts(out.failover_busy_s, rtt)
    out.recovery_busy_rtts = in_rtts(out.recovery_busy_s, rtt)
    out.failover_after_loss_rtts = in_rtts(out.failover_after_loss_s, rtt)
    return out


def _route_recovery(out: FaultFigures, failed: list[Route], window: FaultWindow,
                    crosses: Callable[[FaultWindow, Route], bool], others: Sequence[FaultWindow]) -> None:
    """Fill ``out``'s recovery figures from the failed routes' first acks after the repair
    (route_failover_recovery); a route another fault of ``others`` still takes down is left out."""
    down = [w for w in others if w is not window and w.start <= window.end < w.stop]
    back = [route for route in failed if not any(crosses(w, route) for w in down)]
    out.routes_still_down = len(failed) - len(back)
    if not back:
        out.note = notes.STILL_DOWN
    acks = [_first_ack_after(route, window.end) for route in back]
    out.routes_unrecovered = sum(a is None for a in acks)
    if acks and not out.routes_unrecovered:
        out.recovery_s = max(acks) - window.end
        # less the time its connection had nothing to send before the route's first packet
        out.recovery_busy_s = max(
            ack - window.end - _idle_within(route, window.end, _first_send_after(route, window.end) or ack)
            for route, ack in zip(back, acks))


# ---- failover and recovery of routes that routing moves (the multi-rail baseline) ----------------

ROUTING_KINDS = ("route_withdrawn", "route_restored")


def _link_of(link_name, element) -> bool:
    """Is the T0-T1 link ``link_name`` the element, or one of its switch's links?"""
    link = faulted_element(str(link_name))
    return isinstance(link, T0T1Link) and (link == element or element in (link.t0, link.t1))


def routing_failover_recovery(events: Sequence[RunEvent], window: FaultWindow, transport: str,
                              rtt: float | None = None) -> FaultFigures:
    """Failover and recovery of one fault for a transport whose paths routing moves.

    The baseline's senders keep their path: its packets leave the failed
    element when routing withdraws the element's links (after its
    convergence delay) and return when it restores them (after the hold-down).
    failover_s: fault start -> the last withdrawal of a link of the element
        (``routes_failed`` = links withdrawn); recovery_s: repair -> the last
        restore of those links. None, with a note, when routing withdrew none.
    """
    out = _fault_record(window, "routing")
    element = faulted_element(window.target)
    if not isinstance(element, (T0T1Link, Switch)):
        out.note = notes.NOT_T0T1
        return out
    moves = sorted((e for e in events if e.kind in ROUTING_KINDS and e.transport == transport
                    and _link_of(e.target, element)), key=lambda e: e.t)
    withdrawn: dict[str, float] = {}
    for e in moves:
        if e.kind == "route_withdrawn" and window.start <= e.t <= window.stop:
            withdrawn.setdefault(e.target, e.t)
    out.routes_failed = len(withdrawn)
    if not withdrawn:
        out.note = notes.NO_WITHDRAWAL
        return out
    out.failover_s = max(withdrawn.values()) - window.start
    if window.end is not None:
        restored: dict[str, float] = {}
        for e in moves:
            if e.kind == "route_restored" and e.t >= window.end and e.target in withdrawn:
                restored.setdefault(e.target, e.t)
        out.routes_unrecovered = len(withdrawn) - len(restored)
        if not out.routes_unrecovered:
            out.recovery_s = max(restored.values()) - window.end
    out.failover_rtts, out.recovery_rtts = in_rtts(out.failover_s, rtt), in_rtts(out.recovery_s, rtt)
    out.recovery_busy_rtts = in_rtts(out.recovery_busy_s, rtt)
    return out


def fault_figures(transport: str, events: Sequence[RunEvent], windows: Sequence[FaultWindow],
                  counters: Mapping, fabric: FabricSpec | None) -> tuple[list[FaultFigures], int]:
    """(failover and recovery of each fault, route records dropped as unreadable).

    From the senders' route records when the stats hold them; else, for a
    transport whose paths routing moves (the multi-rail baseline's rails),
    from routing's withdrawals; else undefined, with the reason.
    """
    rtt = median_srtt(counters)
    routes, dropped = route_records(counters)
    spines, hpr = (fabric.spines, fabric.hosts_per_rack) if fabric else (None, None)
    if routes:
        def crosses(w, r):
            return route_crosses(w, r, spines=spines, hosts_per_rack=hpr)
        figures = [route_failover_recovery(routes, w, rtt, crosses, windows) for w in windows]
        for figure, w in zip(figures, windows):
            delays = detection_delays(routes, events, w, spines, crosses)
            figure.detection_s = float(np.median(delays)) if delays else None
            figure.mapper_repair_s = mapper_repair(events, w, transport, fabric)
        return figures, dropped
    if _has_rails(counters):
        return [routing_failover_recovery(events, w, transport, rtt) for w in windows], dropped
    return [replace(_fault_record(w, None), note=notes.NO_RECORDS) for w in windows], dropped


def _has_rails(counters: Mapping) -> bool:
    return any(conn.rails for conn in connections(counters))
